/** Argument checks shared by the embedded API (and later the gRPC server). */
// The module's own binding: in Node 20 the global `Buffer` is an accessor, and a getter
// call per record showed in consumer profiles.
import { Buffer } from 'node:buffer';
import { UringmqError, invalid, shown } from '../errors';
import { MAX_TIMESTAMP, RECORD_PROBLEM, isDetached, recordSize, type RecordInput } from '../codec/record_batch';

// Module-local copies: global lookups showed up in profiles of the per-record path.
const isBuffer = Buffer.isBuffer;
const U8 = Uint8Array;
const isSafeInteger = Number.isSafeInteger;

const TOPIC_RE = /^[A-Za-z0-9._-]{1,249}$/;

/** Topic names become directory names: only [A-Za-z0-9._-], 1–249 chars, not "." or "..". */
export function validateTopicName(name: unknown): string {
  if (typeof name !== 'string') throw new UringmqError('INVALID_TOPIC_NAME', `topic name must be a string, got ${typeof name}`);
  if (!TOPIC_RE.test(name) || name === '.' || name === '..')
    throw new UringmqError(
      'INVALID_TOPIC_NAME',
      `invalid topic name ${JSON.stringify(name.length > 300 ? name.slice(0, 300) + '…' : name)}: use 1–249 characters from [A-Za-z0-9._-], not "." or ".."`,
    );
  return name;
}

export function validateGroupName(name: unknown): string {
  if (typeof name !== 'string' || !TOPIC_RE.test(name) || name === '.' || name === '..')
    throw new UringmqError(
      'INVALID_GROUP_NAME',
      `invalid group name ${shown(typeof name === 'string' ? name.slice(0, 300) : name, true)}: use 1–249 characters from [A-Za-z0-9._-], not "." or ".."`,
    );
  return name;
}

/** The longest nack delay: a day. */
export const MAX_NACK_DELAY_MS = 86_400_000;

/** A nack's delay in ms: an integer from 0 to MAX_NACK_DELAY_MS, else INVALID_ARGUMENT. */
export function checkNackDelay(delayMs: unknown): number {
  if (typeof delayMs !== 'number' || !Number.isInteger(delayMs) || delayMs < 0 || delayMs > MAX_NACK_DELAY_MS)
    throw invalid(`delayMs must be an integer between 0 and ${MAX_NACK_DELAY_MS}, got ${shown(delayMs)}`);
  return delayMs;
}

export function isBytes(v: unknown): v is Buffer | string {
  return typeof v === 'string' || Buffer.isBuffer(v) || v instanceof Uint8Array;
}

/**
 * Checks one record's shape. The error prefix ("sendBatch to t, record 3") is built
 * only on failure: the per-record cost on the hot path is a few type checks and no
 * allocation.
 */
export function validateRecord(r: unknown, what: string, topic: string, index = -1): RecordInput {
  const problem = recordProblem(r);
  if (problem !== null) throw invalid(`${what} ${topic}${index >= 0 ? `, record ${index}` : ''}: ${problem}`);
  return r as RecordInput;
}

/**
 * A send()'s own copy of the caller's record, each field read once (its headers object
 * copied too, their values kept): the copy is what is checked and encoded, when the
 * batch is cut. A caller that reuses or changes its object meanwhile (one record object
 * filled anew per send) must not change what this send writes, and a getter or Proxy
 * answering differently on a later read must not pass the check with one answer and be
 * encoded with another, failing every send batched with it. Both producers take it.
 */
export function ownRecord(r: unknown): unknown {
  if (r === null || typeof r !== 'object') return r;
  const { value, key, headers, timestamp, partition } = r as Record<string, unknown>;
  let own = headers;
  if (headers !== null && typeof headers === 'object' && !Array.isArray(headers)) {
    const h: Record<string, unknown> = (own = { ...headers });
    // Written to only for a view detached already: an Object.keys array and a keyed
    // store per header, every send, cost 60-75 ns per record of three headers (about
    // four times the copy itself). for-in also lists inherited enumerable keys, which
    // the copy has not: hasOwn, in the rare case.
    for (const k in h) {
      const v = h[k];
      if (v instanceof U8 && v.length === 0 && isDetached(v) && hasOwn(h, k)) h[k] = EMPTY;
    }
  }
  return { value: asSent(value), key: asSent(key), headers: own, timestamp, partition };
}

const hasOwn = Object.hasOwn;

const EMPTY = Buffer.alloc(0);

/**
 * A view detached before send() (its ArrayBuffer transferred) is written as the empty
 * value it is then; one detached later, while its send lingers, fails that send alone
 * (encodeSent). This tells them apart: the first becomes a view of our own.
 */
function asSent(v: unknown): unknown {
  return v instanceof U8 && v.length === 0 && isDetached(v) ? EMPTY : v;
}

/**
 * What is wrong with a record, or null. A Uint8Array that is not a Buffer is taken as
 * it is (the encoder and the partitioner read it as one): the record is the caller's,
 * and viewing it as a Buffer in place threw a TypeError for a frozen record, or one
 * whose value is a getter.
 */
function recordProblem(r: unknown): string | null {
  if (r === null || typeof r !== 'object') return RECORD_PROBLEM.notObject;
  const rec = r as Record<string, unknown>;
  const value = rec.value;
  if (!isBuffer(value) && typeof value !== 'string' && !(value instanceof U8)) return RECORD_PROBLEM.value;
  const key = rec.key;
  if (key !== undefined && key !== null && typeof key !== 'string' && !isBuffer(key) && !(key instanceof U8)) return RECORD_PROBLEM.key;
  const ts = rec.timestamp;
  if (ts !== undefined && !(typeof ts === 'number' && isSafeInteger(ts) && ts >= 0 && ts <= MAX_TIMESTAMP))
    return RECORD_PROBLEM.timestamp;
  const headers = rec.headers;
  if (headers !== undefined) {
    if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) return RECORD_PROBLEM.headers;
    for (const [k, v] of Object.entries(headers as Record<string, unknown>))
      if (!isBytes(v)) return RECORD_PROBLEM.header(k);
  }
  const partition = rec.partition;
  if (partition !== undefined && !(Number.isInteger(partition) && (partition as number) >= 0)) return 'partition must be a non-negative integer';
  return null;
}

export function validateOffset(offset: unknown, what = 'offset'): number {
  if (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0)
    throw invalid(`${what} must be a non-negative safe integer, got ${shown(offset)}`);
  return offset;
}

export function nonNegInt(v: unknown, what: string, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0 || v > max)
    throw invalid(max === Number.MAX_SAFE_INTEGER ? `${what} must be a non-negative integer, got ${shown(v)}` : `${what} must be an integer between 0 and ${max}, got ${shown(v)}`);
  return v;
}

export function positiveInt(v: unknown, what: string, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1 || v > max)
    throw invalid(`${what} must be an integer between 1 and ${max}, got ${shown(v)}`);
  return v;
}

/**
 * A record's encoded size (an upper bound); RECORD_TOO_LARGE past maxRecordBytes.
 * Checked before the record has a place in a batch, so its timestamp and offset deltas
 * count at their largest (up to 13 bytes over what it may take): passing a record
 * whose batch the core would then refuse whole would fail the records sent with it.
 */
export function checkRecordSize(rec: RecordInput, topic: string, maxRecordBytes: number): number {
  const size = recordSize(rec);
  if (size > maxRecordBytes)
    throw new UringmqError(
      'RECORD_TOO_LARGE',
      `record of up to ${size} bytes encoded (its timestamp and offset deltas counted at their largest) for topic ${topic} exceeds maxRecordBytes ${maxRecordBytes}`,
    );
  return size;
}

/**
 * The consumer-group options a client can check without the broker, as join() checks
 * them (groups.ts): the gRPC client sends 0 for "the default" and an offset for any
 * `from` that is not 'earliest' or 'latest', so a bad value sent as it is would be
 * taken as something else instead of refused.
 */
export function checkConsumerOptions(opts: {
  from?: unknown;
  ackDeadlineMs?: unknown;
  maxUnacked?: unknown;
  maxDeliveries?: unknown;
  deadLetterTopic?: unknown;
}): void {
  if (opts.ackDeadlineMs !== undefined) positiveInt(opts.ackDeadlineMs, 'ackDeadlineMs', 86_400_000);
  if (opts.maxUnacked !== undefined) positiveInt(opts.maxUnacked, 'maxUnacked', 1_000_000);
  if (opts.maxDeliveries !== undefined) positiveInt(opts.maxDeliveries, 'maxDeliveries', 1000);
  if (opts.deadLetterTopic !== undefined) validateTopicName(opts.deadLetterTopic);
  checkFrom(opts.from);
}

/** A consumer's `from`, checked: 'earliest', 'latest' (also when left out) or { offset }. */
export function checkFrom(from: unknown): 'earliest' | 'latest' | { offset: number } {
  if (from === undefined || from === 'latest') return 'latest';
  if (from === 'earliest') return from;
  if (from === null || typeof from !== 'object') throw invalid(`from must be 'earliest', 'latest' or { offset }, got ${shown(from, true)}`);
  return { offset: validateOffset((from as { offset?: unknown }).offset, 'from.offset') };
}

/**
 * A group consumer given the other consumers' partition options: `partition` (the
 * offset reader's) or, but for the fetch transport's own consumer, `partitions`.
 * Ignored, they had it read every partition its group assigned it, and ack them for
 * the group, not the ones the caller meant (a caller without the types' check).
 */
export function refusePartitionOptions(opts: object, consumer: 'embedded' | 'subscribe' | 'fetch'): void {
  const { partition, partitions } = opts as { partition?: unknown; partitions?: unknown };
  if (partition !== undefined)
    throw invalid(
      consumer === 'fetch'
        ? `partition (${shown(partition)}) is an option of the offset reader, not of a group consumer: to read chosen partitions, give partitions: [${shown(partition)}]`
        : `partition (${shown(partition)}) is an option of the offset reader, not of a group consumer, which reads the partitions its group assigns it: leave out one or the other`,
    );
  if (partitions !== undefined && consumer !== 'fetch')
    throw invalid(
      `partitions (${shown(partitions, true)}) is an option of the remote client's fetch consumer (transport: 'fetch'), whose application assigns the partitions; a group consumer reads those its group assigns it: ${consumer === 'subscribe' ? "leave it out or set transport: 'fetch'" : 'leave it out'}`,
    );
}

/** The largest delay setTimeout keeps (a longer one fires at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * close()'s options: `timeoutMs`, undefined when left out (close then waits as long as
 * its sends may take). Checked before anything closes, so a bad option leaves the
 * producer open.
 */
export function closeTimeout(opts: unknown): number | undefined {
  if (opts === undefined) return undefined;
  if (opts === null || typeof opts !== 'object') throw invalid('close options must be an object');
  const t = (opts as { timeoutMs?: unknown }).timeoutMs;
  if (t === undefined) return undefined;
  if (typeof t !== 'number' || !Number.isInteger(t) || t < 0 || t > MAX_TIMER_MS)
    throw invalid(`close timeoutMs must be an integer between 0 and ${MAX_TIMER_MS}, got ${shown(t)}; leave it out to wait for every send`);
  return t;
}

/** Whether `p` settles within `ms` (false: the time ran out first); no timer is left behind. */
export async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p.then(() => true, () => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** The error of a send still outstanding when close()'s timeout passed. */
export function closeTimedOut(what: string, timeoutMs: number): UringmqError {
  return new UringmqError(
    'BROKER_CLOSED',
    `${what} closed: close()'s timeout of ${timeoutMs} ms passed before this send was acknowledged; it may or may not have been written`,
  );
}
