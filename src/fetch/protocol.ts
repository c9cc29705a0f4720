/**
 * The fetch plane's wire format (docs/FETCH-PROTOCOL.md), for JavaScript clients and
 * tests. The server side is native/fetch/fetch_protocol.h; both must agree byte for
 * byte. All integers little-endian.
 */
import { UringmqError, type ErrorCode } from '../errors';

export const FETCH_MAGIC = 0x46514d55; // bytes "UMQF"
/** The newest version this code speaks; a connection speaks the one its hello agreed on. */
export const FETCH_VERSION = 2;
export const FETCH_MIN_VERSION = 1;
export const MAX_TOKEN_BYTES = 256;
export const CLIENT_HELLO_FIXED = 8;
export const SERVER_HELLO_SIZE = 16;
export const TYPE_FETCH = 1;
/** Version 2: the request names the topic incarnation it expects (8 bytes before the topic). */
export const FLAG_INCARNATION = 0x01;
export const INCARNATION_BYTES = 8;
export const FETCH_FIXED = 32;
export const MAX_TOPIC_BYTES = 249;
export const RESPONSE_HEADER_SIZE = 32;
export const DEFAULT_FETCH_PORT = 50052;

/**
 * An auth token both planes can carry: a gRPC metadata value (printable ASCII, which
 * grpc-js and HTTP/2 insist on) that fits the fetch hello (MAX_TOKEN_BYTES). `empty`:
 * '' is taken (a client's "no token"). The token itself is never put in the message.
 */
export function checkAuthToken(token: unknown, what: string, empty = false): void {
  // No trailing space: HTTP/2 trims it from the metadata value, so the server would
  // compare against a token no gRPC client can send.
  if (typeof token !== 'string' || (!empty && token.length === 0) || token.length > MAX_TOKEN_BYTES || !/^(?:[\x20-\x7e]*[\x21-\x7e])?$/.test(token))
    throw new UringmqError('INVALID_ARGUMENT', `${what} must be a string of ${empty ? 0 : 1} to ${MAX_TOKEN_BYTES} printable ASCII characters, not ending in a space (a gRPC metadata value that fits the fetch plane's hello)`);
}

/** Error codes on the wire, by number. */
export const FETCH_ERRORS = [
  'OK',
  'UNKNOWN_TOPIC_OR_PARTITION',
  'OFFSET_OUT_OF_RANGE',
  'INVALID_REQUEST',
  'UNSUPPORTED_VERSION',
  'AUTH_FAILED',
  'TOO_MANY_CONNECTIONS',
  'IO_ERROR',
  'SHUTTING_DOWN',
  'TOPIC_INCARNATION_MISMATCH',
] as const;
export type FetchErrorName = (typeof FETCH_ERRORS)[number];

/** The UringmqError code a fetch error becomes in the client. */
const TO_CODE: Record<FetchErrorName, ErrorCode> = {
  OK: 'INTERNAL',
  UNKNOWN_TOPIC_OR_PARTITION: 'TOPIC_NOT_FOUND',
  OFFSET_OUT_OF_RANGE: 'OFFSET_OUT_OF_RANGE',
  INVALID_REQUEST: 'INVALID_ARGUMENT',
  UNSUPPORTED_VERSION: 'FAILED_PRECONDITION',
  AUTH_FAILED: 'UNAUTHENTICATED',
  TOO_MANY_CONNECTIONS: 'RESOURCE_EXHAUSTED',
  IO_ERROR: 'IO_ERROR',
  SHUTTING_DOWN: 'UNAVAILABLE',
  // The topic named is gone (deleted, another of that name made since): what the
  // request was positioned in does not exist any more.
  TOPIC_INCARNATION_MISMATCH: 'TOPIC_NOT_FOUND',
};

/**
 * A topic's incarnation as the fetch plane knows it: its createdAt when that is a
 * positive safe integer (every topic the broker creates), else 0 (none: not checked).
 * The broker registers each partition with it, and clients name it in fetches.
 */
export function topicIncarnation(createdAt: unknown): number {
  return typeof createdAt === 'number' && Number.isSafeInteger(createdAt) && createdAt > 0 ? createdAt : 0;
}

export function fetchErrorName(code: number): FetchErrorName | `UNKNOWN_${number}` {
  return FETCH_ERRORS[code] ?? `UNKNOWN_${code}`;
}

export function fetchError(code: number, context: string): UringmqError {
  const name = fetchErrorName(code);
  const ucode = (TO_CODE as Record<string, ErrorCode>)[name] ?? 'INTERNAL';
  return new UringmqError(ucode, `fetch plane: ${name} (${code}) ${context}`);
}

export function encodeHello(token = '', version = FETCH_VERSION): Buffer {
  const t = Buffer.from(token, 'utf8');
  if (t.length > MAX_TOKEN_BYTES) throw new UringmqError('INVALID_ARGUMENT', `the auth token is ${t.length} bytes; at most ${MAX_TOKEN_BYTES}`);
  const b = Buffer.allocUnsafe(CLIENT_HELLO_FIXED + t.length);
  b.writeUInt32LE(FETCH_MAGIC, 0);
  b.writeUInt16LE(version, 4);
  b.writeUInt16LE(t.length, 6);
  t.copy(b, CLIENT_HELLO_FIXED);
  return b;
}

export interface ServerHello {
  version: number;
  error: number;
  maxFetchBytes: number;
  maxWaitMs: number;
}

export function decodeServerHello(b: Buffer): ServerHello {
  if (b.readUInt32LE(0) !== FETCH_MAGIC) throw new UringmqError('UNAVAILABLE', 'fetch plane: the peer does not speak the uringmq fetch protocol');
  return { version: b.readUInt16LE(4), error: b.readUInt16LE(6), maxFetchBytes: b.readUInt32LE(8), maxWaitMs: b.readUInt32LE(12) };
}

export interface FetchRequest {
  correlationId: number;
  topic: string;
  partition: number;
  offset: number;
  maxBytes: number;
  maxWaitMs: number;
  /**
   * The topic incarnation expected (version 2 connections only; 0 or absent: none, the
   * request is a version-1 one). The server answers TOPIC_INCARNATION_MISMATCH when the
   * topic under that name is another.
   */
  incarnation?: number;
}

/** A request field the wire holds as an unsigned 32-bit integer: refused, not wrapped, when it does not fit. */
function u32Field(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0xffff_ffff) throw new UringmqError('INVALID_ARGUMENT', `${what} must be an integer between 0 and 4294967295, got ${String(v)}`);
  return v;
}

export function encodeFetch(r: FetchRequest): Buffer {
  // Each field is checked against what the wire can carry (the server judges the rest,
  // e.g. a negative offset or a max_bytes over its limit, and answers INVALID_REQUEST):
  // written with `>>> 0` or BigInt() unchecked, 2^32 + 1 bytes went out as 1, a partition
  // of -1 as 4294967295, and a fractional offset threw a bare RangeError.
  if (typeof r.topic !== 'string') throw new UringmqError('INVALID_ARGUMENT', `topic must be a string, got ${typeof r.topic}`);
  const t = Buffer.from(r.topic, 'utf8');
  // Past MAX_TOPIC_BYTES (what a topic name can be, and what the server reads), the
  // server takes the request for bad framing and closes the connection: 250..65535
  // bytes fit the length field, and went out.
  if (t.length > MAX_TOPIC_BYTES) throw new UringmqError('INVALID_ARGUMENT', `the topic name is ${t.length} bytes; a topic name has at most ${MAX_TOPIC_BYTES}`);
  u32Field(r.correlationId, 'correlationId');
  u32Field(r.partition, 'partition');
  u32Field(r.maxBytes, 'maxBytes');
  u32Field(r.maxWaitMs, 'maxWaitMs');
  if (!Number.isSafeInteger(r.offset)) throw new UringmqError('INVALID_ARGUMENT', `offset must be a safe integer, got ${String(r.offset)}`);
  const inc = r.incarnation ?? 0;
  if (!Number.isSafeInteger(inc) || inc < 0) throw new UringmqError('INVALID_ARGUMENT', `incarnation must be a non-negative safe integer, got ${String(inc)}`);
  const extra = inc > 0 ? INCARNATION_BYTES : 0;
  const b = Buffer.allocUnsafe(FETCH_FIXED + extra + t.length);
  b.writeUInt32LE(b.length - 4, 0);
  b.writeUInt8(TYPE_FETCH, 4);
  b.writeUInt8(inc > 0 ? FLAG_INCARNATION : 0, 5);
  b.writeUInt16LE(t.length, 6);
  b.writeUInt32LE(r.correlationId, 8);
  b.writeUInt32LE(r.partition, 12);
  b.writeBigInt64LE(BigInt(r.offset), 16);
  b.writeUInt32LE(r.maxBytes, 24);
  b.writeUInt32LE(r.maxWaitMs, 28);
  if (extra) b.writeBigUInt64LE(BigInt(inc), FETCH_FIXED);
  t.copy(b, FETCH_FIXED + extra);
  return b;
}

export interface ResponseHeader {
  correlationId: number;
  error: number;
  /** the partition's readable end (next offset to be written) when answered; -1 if unknown */
  highWatermark: number;
  /** the first offset still in the log; -1 if unknown */
  logStartOffset: number;
  /** bytes of whole RecordBatches that follow */
  length: number;
}

export function decodeResponseHeader(b: Buffer, pos = 0): ResponseHeader {
  return {
    correlationId: b.readUInt32LE(pos),
    error: b.readUInt16LE(pos + 4),
    highWatermark: Number(b.readBigInt64LE(pos + 8)),
    logStartOffset: Number(b.readBigInt64LE(pos + 16)),
    length: b.readUInt32LE(pos + 24),
  };
}
