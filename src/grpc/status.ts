/**
 * uringmq error codes ⇄ gRPC status codes. The exact uringmq code also travels in
 * the `uringmq-code` trailer, so a client maps a status back to the same
 * UringmqError code the embedded API would have thrown.
 */
import { Metadata, status, type ServiceError, type StatusObject } from '@grpc/grpc-js';
import { UringmqError, isErrorCode, type ErrorCode } from '../errors';

const TO_GRPC: Record<ErrorCode, status> = {
  TOPIC_NOT_FOUND: status.NOT_FOUND,
  // NOT_FOUND as a topic's: a client that reads only the status sees "not there"; the
  // trailer tells the group from its topic.
  GROUP_NOT_FOUND: status.NOT_FOUND,
  TOPIC_EXISTS: status.ALREADY_EXISTS,
  INVALID_TOPIC_NAME: status.INVALID_ARGUMENT,
  INVALID_GROUP_NAME: status.INVALID_ARGUMENT,
  INVALID_ARGUMENT: status.INVALID_ARGUMENT,
  CORRUPT_BATCH: status.INVALID_ARGUMENT,
  RECORD_TOO_LARGE: status.RESOURCE_EXHAUSTED,
  RESOURCE_EXHAUSTED: status.RESOURCE_EXHAUSTED,
  OFFSET_OUT_OF_RANGE: status.OUT_OF_RANGE,
  FAILED_PRECONDITION: status.FAILED_PRECONDITION,
  OUT_OF_ORDER_SEQUENCE: status.FAILED_PRECONDITION,
  LOG_TRUNCATED: status.FAILED_PRECONDITION,
  // FAILED_PRECONDITION, as before the code existed: a client that reads only the status
  // sees its membership refused; one that reads the trailer knows to join again.
  SESSION_EXPIRED: status.FAILED_PRECONDITION,
  DIR_LOCKED: status.FAILED_PRECONDITION,
  BROKER_CLOSED: status.UNAVAILABLE,
  UNAVAILABLE: status.UNAVAILABLE,
  IO_ERROR: status.INTERNAL,
  IO_URING_UNAVAILABLE: status.INTERNAL,
  INTERNAL: status.INTERNAL,
  UNAUTHENTICATED: status.UNAUTHENTICATED,
};

const FROM_GRPC: Partial<Record<status, ErrorCode>> = {
  [status.NOT_FOUND]: 'TOPIC_NOT_FOUND',
  [status.ALREADY_EXISTS]: 'TOPIC_EXISTS',
  [status.INVALID_ARGUMENT]: 'INVALID_ARGUMENT',
  [status.RESOURCE_EXHAUSTED]: 'RESOURCE_EXHAUSTED',
  [status.OUT_OF_RANGE]: 'OFFSET_OUT_OF_RANGE',
  [status.FAILED_PRECONDITION]: 'FAILED_PRECONDITION',
  [status.UNAVAILABLE]: 'UNAVAILABLE',
  [status.DEADLINE_EXCEEDED]: 'UNAVAILABLE',
  [status.CANCELLED]: 'UNAVAILABLE',
  [status.UNAUTHENTICATED]: 'UNAUTHENTICATED',
  [status.PERMISSION_DENIED]: 'UNAUTHENTICATED',
  // Not a uringmq server (or not this version of the service): retrying cannot help.
  [status.UNIMPLEMENTED]: 'INTERNAL',
  // INTERNAL and UNKNOWN without a uringmq-code trailer stay UNAVAILABLE (retried):
  // grpc-js reports some broken connections that way.
};

export const CODE_TRAILER = 'uringmq-code';
/**
 * Trailer of a RESOURCE_EXHAUSTED past a cap of the broker's (maxTopics, maxPartitions, maxGroups): the
 * setting's name. Such a refusal lasts until an operator frees a place, and a client
 * that took it for load (too many streams, a full write queue, which it retries)
 * retried for ever; the status alone cannot tell them apart, nor should the message,
 * which is for people.
 */
export const LIMIT_TRAILER = 'uringmq-limit';
/**
 * Initial metadata of PublishStream: the largest request the server reads. A request
 * past it ends the whole stream (grpc-js refuses it), so the client learns the limit
 * up front and fails only the batch that is too large.
 */
export const MAX_MESSAGE_HEADER = 'uringmq-max-message-bytes';
/**
 * Initial metadata of PublishStream beside it: the largest RecordBatch the broker takes
 * (BrokerOptions.maxBatchBytes). The broker refuses a larger batch alone, but an
 * idempotent producer's batches sent after it would then fail with it (their sequence
 * has a gap): knowing the limit, the client refuses such a batch before it takes a
 * sequence number.
 */
export const MAX_BATCH_HEADER = 'uringmq-max-batch-bytes';

/**
 * The most UTF-8 bytes of an error's message sent as a status's details. They go in the
 * grpc-message trailer, percent-encoded (up to 3 characters a byte), and a client takes
 * only so much of it: node:http2 fails the whole connection over a header field past
 * 64 KiB (COMPRESSION_ERROR), and a call that got no status, and every later one on its
 * channel, hung.
 */
const MAX_DETAILS_BYTES = 1024;

/** `message`, cut to MAX_DETAILS_BYTES (at most 3 UTF-8 bytes per UTF-16 unit: most are not measured). */
function boundedDetails(message: string): string {
  if (message.length <= MAX_DETAILS_BYTES / 3) return message;
  const b = Buffer.from(message);
  // A character cut in two decodes as U+FFFD: at most 2 bytes more, and 3 for the ellipsis.
  return b.length <= MAX_DETAILS_BYTES ? message : `${b.toString('utf8', 0, MAX_DETAILS_BYTES - 8)}…`;
}

/** A grpc-js error object (for callbacks and call.emit('error')) from any error. */
export function toServiceError(e: unknown): Partial<StatusObject> & { code: status; details: string; metadata: Metadata } {
  const err = e instanceof UringmqError ? e : new UringmqError('INTERNAL', e instanceof Error ? e.message : String(e));
  const metadata = new Metadata();
  metadata.set(CODE_TRAILER, err.code);
  if (err.limit) metadata.set(LIMIT_TRAILER, err.limit);
  return { code: TO_GRPC[err.code] ?? status.INTERNAL, details: boundedDetails(err.message), metadata };
}

export function grpcCodeFor(code: ErrorCode): status {
  return TO_GRPC[code] ?? status.INTERNAL;
}

/** A client's refusal of a message from the server over its maxMessageBytes: its setting, not the server, is to change (not retried). */
export function overClientMax(len: number, max: number, cause?: unknown): UringmqError {
  return new UringmqError('INTERNAL', `the server sent a ${len}-byte message, over this client's maxMessageBytes (${max}): raise maxMessageBytes in connect() to at least the server's`, { cause });
}

/**
 * A UringmqError from a grpc-js client error. `receiveMax`: the client's
 * maxMessageBytes, to tell grpc-js's own refusal of a message over it (RESOURCE_EXHAUSTED,
 * "Received message larger than max (N vs receiveMax)") from the broker's (a full disk,
 * retried): taken for the broker's, a consumer on a grpc-js target reconnected for
 * good, the delivery too large each time. A server's refusal of a request has the same
 * text, with its own limit: never this client's, which sends nothing larger.
 */
export function fromServiceError(e: unknown, receiveMax?: number): UringmqError {
  if (e instanceof UringmqError) return e;
  const se = e as Partial<ServiceError>;
  const trailer = se.metadata?.get?.(CODE_TRAILER)?.[0];
  const tcode = typeof trailer === 'string' ? trailer : trailer ? trailer.toString() : undefined;
  if (receiveMax !== undefined && !tcode && se.code === status.RESOURCE_EXHAUSTED) {
    const m = /^Received message larger than max \((\d+) vs\.? (\d+)\)$/.exec(se.details ?? '');
    if (m && Number(m[2]) === receiveMax) return overClientMax(Number(m[1]), receiveMax, e);
  }
  const code: ErrorCode = tcode && isErrorCode(tcode) ? tcode : (se.code !== undefined && FROM_GRPC[se.code]) || 'UNAVAILABLE';
  if (!tcode && se.code === status.UNAVAILABLE) {
    // grpc-js's own wording for a channel that could not connect, which users saw raw
    // (an "Error: " inside it, an empty "Resolution note:" at its end).
    const m = /^No connection established\. Last error: (?:Error: )?(.*?)\.? Resolution note: ?(.*)$/s.exec(se.details ?? '');
    if (m) return new UringmqError('UNAVAILABLE', `no connection to the server (last error: ${m[1]}${m[2] ? `; ${m[2]}` : ''})`, { cause: e });
  }
  // Any setting's name, not only those this client knows: a later broker's new cap is
  // not retried either.
  const limit = code === 'RESOURCE_EXHAUSTED' ? se.metadata?.get?.(LIMIT_TRAILER)?.[0]?.toString() : undefined;
  return new UringmqError(code, se.details || se.message || 'gRPC call failed', { cause: e, limit: limit && /^[A-Za-z][A-Za-z0-9]{0,63}$/.test(limit) ? limit : undefined });
}
