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

export class UringmqError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UringmqError';
    this.code = code;
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
