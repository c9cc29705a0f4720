/** Stable error codes. Native errors carry the same strings (native/common/status.h). */
export type ErrorCode =
  | 'TOPIC_NOT_FOUND'
  | 'TOPIC_EXISTS'
  | 'INVALID_TOPIC_NAME'
  | 'INVALID_ARGUMENT'
  | 'RECORD_TOO_LARGE'
  | 'OFFSET_OUT_OF_RANGE'
  | 'CORRUPT_BATCH'
  | 'BROKER_CLOSED'
  | 'DIR_LOCKED'
  | 'IO_ERROR'
  | 'IO_URING_UNAVAILABLE'
  | 'INVALID_GROUP_NAME'
  | 'FAILED_PRECONDITION'
  | 'OUT_OF_ORDER_SEQUENCE'
  | 'LOG_TRUNCATED'
  | 'RESOURCE_EXHAUSTED'
  | 'UNAVAILABLE'
  | 'UNAUTHENTICATED'
  /** A group member stayed silent past its session timeout and was expelled: join again. */
  | 'SESSION_EXPIRED'
  /** deleteGroup: the group has neither members nor committed offsets on the topic. */
  | 'GROUP_NOT_FOUND'
  | 'INTERNAL';

const KNOWN = new Set<string>([
  'TOPIC_NOT_FOUND', 'TOPIC_EXISTS', 'INVALID_TOPIC_NAME', 'INVALID_ARGUMENT', 'RECORD_TOO_LARGE',
  'OFFSET_OUT_OF_RANGE', 'CORRUPT_BATCH', 'BROKER_CLOSED', 'DIR_LOCKED', 'IO_ERROR', 'IO_URING_UNAVAILABLE',
  'INVALID_GROUP_NAME', 'FAILED_PRECONDITION', 'OUT_OF_ORDER_SEQUENCE', 'LOG_TRUNCATED', 'RESOURCE_EXHAUSTED', 'UNAVAILABLE', 'INTERNAL',
  'UNAUTHENTICATED', 'SESSION_EXPIRED', 'GROUP_NOT_FOUND',
]);

export function isErrorCode(s: string): s is ErrorCode {
  return KNOWN.has(s);
}

/**
 * A broker setting that caps what the broker keeps. A RESOURCE_EXHAUSTED past one is
 * not load that passes: it lasts until a topic or group is deleted (or expires) or the
 * setting is raised, so clients do not retry it.
 */
export type LimitSetting = 'maxTopics' | 'maxPartitions' | 'maxGroups';

export class UringmqError extends Error {
  readonly code: ErrorCode;
  /**
   * RESOURCE_EXHAUSTED past a cap of the broker's: the setting's name, a LimitSetting
   * (over gRPC, the `uringmq-limit` trailer). A string: a later broker's new cap is still
   * told from load, and not retried.
   */
  readonly limit?: string;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; limit?: string }) {
    super(message, options);
    this.name = 'UringmqError';
    this.code = code;
    if (options?.limit !== undefined) this.limit = options.limit;
  }
}

/** Turns anything thrown by the addon (Error with a string `code`) into a UringmqError. */
export function fromNative(err: unknown): UringmqError {
  if (err instanceof UringmqError) return err;
  if (err instanceof Error) {
    const code = (err as Error & { code?: unknown }).code;
    if (typeof code === 'string' && KNOWN.has(code)) return new UringmqError(code as ErrorCode, err.message, { cause: err });
    return new UringmqError('IO_ERROR', err.message, { cause: err });
  }
  return new UringmqError('IO_ERROR', String(err));
}

/**
 * A failed write of the broker's own files: RESOURCE_EXHAUSTED when the file system is
 * out of space (or quota), a condition that passes once space is freed (the client
 * retries it), else IO_ERROR.
 */
export function writeError(message: string, cause: unknown): UringmqError {
  const code = (cause as { code?: unknown } | null)?.code;
  const full = code === 'ENOSPC' || code === 'EDQUOT' || (cause instanceof UringmqError && code === 'RESOURCE_EXHAUSTED');
  return new UringmqError(full ? 'RESOURCE_EXHAUSTED' : 'IO_ERROR', message, { cause });
}

export function invalid(message: string): UringmqError {
  return new UringmqError('INVALID_ARGUMENT', message);
}

/**
 * A caller's bad value as an error message shows it: String(v), or JSON.stringify(v)
 * when `json`. A string is quoted either way: shown bare, '5' where a number was
 * wanted read "must be an integer between 1 and 1000000, got 5". Never throws: those do for a BigInt (JSON), an object without a
 * prototype (Object.create(null), querystring.parse's), a view of a detached
 * ArrayBuffer, a revoked Proxy or a throwing toString, and the caller got a TypeError
 * from building the message instead of the INVALID_ARGUMENT it was for.
 */
export function shown(v: unknown, json = false): string {
  try {
    return json || typeof v === 'string' ? String(JSON.stringify(v)) : String(v);
  } catch {
    if (typeof v === 'bigint') return `${v}n`;
    try {
      return Object.prototype.toString.call(v);
    } catch {
      return `a ${typeof v}`;
    }
  }
}
