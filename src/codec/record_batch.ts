/**
 * The RecordBatch codec for JavaScript (docs/FORMAT.md). One codec serves the
 * embedded producer, the client, the server and the tests. Encoding leaves the CRC
 * to the caller: the embedded path has the core compute it in the same call that
 * validates the batch (`seal`); `sealBatch` fills it in here for batches that leave
 * the process.
 */
// The module's own binding: in Node 20 the global `Buffer` is an accessor, and a getter
// call per record showed in consumer profiles.
import { Buffer } from 'node:buffer';
import { UringmqError, invalid, shown } from '../errors';
import { crc32c } from '../native';

export const MAGIC = 0x424d5155; // "UQMB"
export const VERSION = 1;
export const HEADER_SIZE = 64;
/** The smallest maxBatchBytes a broker takes (Broker.open): a batch no larger fits in any. */
export const MIN_MAX_BATCH_BYTES = 4096;
export const CRC_START = 20;

export type Bytes = Buffer | string;

export interface RecordInput {
  key?: Bytes | null;
  value: Bytes;
  headers?: Record<string, Bytes>;
  /** Milliseconds since the epoch; defaults to now. */
  timestamp?: number;
}

export interface DecodedRecord {
  offset: number;
  timestamp: number;
  key: Buffer | null;
  value: Buffer;
  headers: Record<string, Buffer>;
}

export interface BatchMeta {
  baseOffset: number;
  recordCount: number;
  firstTimestamp: number;
  maxTimestamp: number;
  producerId: number;
  baseSequence: number;
  length: number;
}

const TWO32 = 0x1_0000_0000;

/** Bytes an unsigned LEB128 varint of v takes. */
export function uvarintSize(v: number): number {
  if (v < 0x80) return 1;
  if (v < 0x4000) return 2;
  if (v < 0x20_0000) return 3;
  if (v < 0x1000_0000) return 4;
  let n = 4;
  v = Math.floor(v / 0x1000_0000);
  while (v > 0) {
    n++;
    v = Math.floor(v / 128);
  }
  return n;
}

/** Writes v as an unsigned LEB128 varint at pos; returns the position after it. */
export function writeUvarint(buf: Buffer, pos: number, v: number): number {
  if (v < 0x80) {
    buf[pos] = v;
    return pos + 1;
  }
  while (v >= 0x80) {
    buf[pos++] = (v % 128) | 0x80;
    v = Math.floor(v / 128);
  }
  buf[pos++] = v;
  return pos;
}

const zigzag = (v: number): number => (v >= 0 ? v * 2 : -v * 2 - 1);

function writeI64(buf: Buffer, pos: number, v: number): void {
  const hi = Math.floor(v / TWO32);
  buf.writeUInt32LE(v - hi * TWO32, pos);
  buf.writeInt32LE(hi, pos + 4);
}

function readI64(buf: Buffer, pos: number): number {
  return buf.readInt32LE(pos + 4) * TWO32 + buf.readUInt32LE(pos);
}

/**
 * Uint8Array.prototype.set, called directly: `buf.set(v, pos)` on a Buffer compiled to a
 * generic property lookup (a call to V8's LoadIC) per record, ~10% of encodeBatch's
 * samples in perf; the direct call has none.
 */
const setBytes = Uint8Array.prototype.set;

/**
 * Writes `b`, sized at `len` bytes; -1 when it no longer is (RECORD_PROBLEM.changed).
 * No bytes, no set(): it throws a TypeError for a view of a detached ArrayBuffer (which
 * has none), and a send()'s failed encoding fails every record batched with it.
 */
function put(buf: Buffer, pos: number, b: Bytes, len: number): number {
  if (typeof b === 'string') {
    if (buf.write(b, pos, len, 'utf8') !== len) return -1;
  } else if ((b as unknown) instanceof U8 && b.length === len) {
    if (len > 0) setBytes.call(buf, b, pos);
  } else return -1;
  return pos + len;
}

/**
 * An upper bound on one record's encoded size, length prefix included (exact but
 * for the timestamp and offset deltas, counted at their largest). For size limits
 * and for cutting batches; allocation-free.
 */
export function recordSize(r: RecordInput): number {
  const key = r.key;
  const kl = key === undefined || key === null ? -1 : bytesLen(key);
  const vl = bytesLen(r.value);
  let n = 1 + 10 + 5 + (kl < 0 ? 1 : uvarintSize(kl + 1) + kl) + uvarintSize(vl) + vl;
  n += r.headers ? headersSize(r.headers, NO_OPTS, 0) : 1;
  return n + uvarintSize(n);
}

// Scratch space for encodeBatch's two passes, kept between calls up to
// SCRATCH_KEEP records (1.25 MiB); a larger batch gets arrays of its own that go with
// it, so one huge sendBatch does not pin hundreds of MiB for the process's life.
const SCRATCH_KEEP = 65536;
let scratchBody = new Int32Array(1024);
let scratchKey = new Int32Array(1024);
let scratchValue = new Int32Array(1024);
let scratchTs = new Float64Array(1024);

export interface EncodeOptions {
  producerId?: number;
  baseSequence?: number;
  /** Timestamp for records without one (default Date.now()). */
  now?: number;
  /** Where the batch's bytes come from (default Buffer.allocUnsafe). */
  alloc?: (size: number) => Buffer;
  /** Prefix of shape errors ("sendBatch to t" gives "sendBatch to t, record 3: …"). */
  what?: string;
}

const U8 = Uint8Array;
const isSafeInteger = Number.isSafeInteger;

/** A key, value or header value's encoded length; -1 when it is not bytes or a string. */
function bytesLen(b: unknown): number {
  if (typeof b === 'string') return Buffer.byteLength(b);
  if (b instanceof U8) return b.length;
  return -1;
}

/**
 * Largest record timestamp: two timestamps of one batch then differ by less than
 * 2^52, so the zigzag of their delta (up to twice it) stays an exact JS number.
 * 2^52 ms is about 142,000 years after 1970.
 */
export const MAX_TIMESTAMP = 2 ** 52 - 1;

/** What can be wrong with a record's shape: one wording for the encoder and validateRecord. */
export const RECORD_PROBLEM = {
  notObject: 'a record must be an object with a value',
  value: 'value must be a Buffer or string',
  key: 'key must be a Buffer, string or null',
  timestamp: 'timestamp must be an integer from 0 to 2^52 - 1 (ms since the epoch)',
  headers: 'headers must be an object of Buffer or string values',
  header: (name: string): string => `header ${JSON.stringify(name)} must be a Buffer or string`,
  changed: 'its key, value or headers changed while it was encoded (a getter or Proxy answering differently on each read)',
} as const;

function shapeError(opts: EncodeOptions, i: number, problem: string): Error {
  return invalid(`${typeof opts.what === 'string' ? opts.what : 'record batch'}, record ${i}: ${problem}`);
}

const NO_OPTS: EncodeOptions = {};

/** The encoded size of record i's headers; INVALID_ARGUMENT when they are not an object of bytes. */
function headersSize(h: unknown, opts: EncodeOptions, i: number, sent = false): number {
  if (h === null || typeof h !== 'object' || Array.isArray(h)) throw shapeError(opts, i, RECORD_PROBLEM.headers);
  let n = 0;
  let count = 0;
  for (const k of Object.keys(h)) {
    const v = (h as Record<string, unknown>)[k];
    const vl = bytesLen(v);
    if (vl < 0) throw shapeError(opts, i, RECORD_PROBLEM.header(k));
    if (vl === 0 && sent && typeof v !== 'string' && isDetached(v as Uint8Array)) throw new DetachedSince(i, `header ${JSON.stringify(k)}`);
    const kl = Buffer.byteLength(k);
    n += uvarintSize(kl) + kl + uvarintSize(vl) + vl;
    count++;
  }
  return n + uvarintSize(count);
}

/**
 * Encodes records into one batch with baseOffset 0 and CRC 0 (see sealBatch).
 * Two passes over the records, no per-record allocation. The sizing pass also
 * checks each record's shape (an object whose value, key and header values are
 * Buffers, Uint8Arrays or strings, and whose timestamp is a non-negative integer)
 * and throws INVALID_ARGUMENT naming the record: the checks reuse the loads the
 * sizing needs, where a separate validation pass cost producers ~15% of their
 * throughput.
 */
export function encodeBatch(records: readonly RecordInput[], opts: EncodeOptions = {}): Buffer {
  return encode(records, opts, false);
}

/**
 * A view of a detached ArrayBuffer (its ArrayBuffer transferred: postMessage,
 * structuredClone with `transfer`), which has no bytes left. Only a view of no bytes
 * is looked at further: the common case costs one length check.
 */
export function isDetached(v: Uint8Array): boolean {
  if (v.length !== 0) return false;
  const ab = v.buffer as ArrayBuffer & { detached?: boolean };
  if (ab.byteLength !== 0) return false;
  if (HAS_DETACHED) return ab.detached === true;
  // Node 20 has no ArrayBuffer.prototype.detached: a view of a detached one cannot be made.
  try {
    new U8(ab);
    return false;
  } catch {
    return true;
  }
}
const HAS_DETACHED = 'detached' in ArrayBuffer.prototype;

/**
 * @internal How many of the records' views (values, keys, header values) are detached.
 * A sendBatch held back (the embedded write queue past its high-water mark, or a remote
 * one waiting its turn for buffer room) keeps the caller's records, not an encoded copy:
 * a count grown by the time it is encoded means bytes it had when sendBatch took it are
 * gone, and the batch, written or refused whole, is refused (sendBatchDetachedError)
 * rather than written with them empty. Records of the wrong shape count nothing here:
 * their own validation refuses them. Only the held path pays for this pass.
 */
export function detachedViews(records: readonly RecordInput[]): number {
  let n = 0;
  try {
    for (const r of records) eachDetached(r, () => void n++);
  } catch {
    // A getter or Proxy that throws: the validation that follows says so, typed.
  }
  return n;
}

/** @internal The refusal of a held sendBatch whose records lost bytes meanwhile (detachedViews). */
export function sendBatchDetachedError(topic: string): UringmqError {
  return invalid(
    `sendBatch to ${topic}: a record's value, key or header was detached (its ArrayBuffer transferred) after sendBatch() took it and before the batch was encoded (it waited for room), so its bytes are gone; nothing was written`,
  );
}

/** Thrown by encode() for a sent record whose bytes were detached since (encodeSent). */
class DetachedSince extends Error {
  constructor(
    readonly index: number,
    readonly field: string,
  ) {
    super(`record ${index}: its ${field} was detached`);
  }
}

/**
 * @internal encodeBatch for the records of a producer's send()s, taken earlier
 * (ownRecord took a view detached by then as the empty one it was). A record one of
 * whose views was detached since (its ArrayBuffer transferred while it lingered) has
 * lost its bytes: it is taken out of `records`, and its sender (`senders[i]`, the
 * send() of `records[i]`) out of `senders`, and rejected (its send fails alone, with
 * INVALID_ARGUMENT); the others are encoded. null when none is left. The check is per
 * record and per field, and only for one of no bytes.
 */
export function encodeSent(records: RecordInput[], opts: EncodeOptions, topic: string, senders: { reject(e: Error): void }[]): Buffer | null {
  for (;;) {
    try {
      return encode(records, opts, true);
    } catch (e) {
      if (!(e instanceof DetachedSince)) throw e;
      // All of them at once, from the first found: views of one buffer transferred
      // (a message parsed into many records) lose their bytes together, and a pass
      // over the records and a splice of both arrays per record lost was quadratic
      // (20k records, every other one lost: 2.3 s of blocked event loop).
      let kept = e.index;
      for (let i = e.index; i < records.length; i++) {
        const r = records[i]!;
        const field = i === e.index ? e.field : detachedField(r);
        if (field === null) {
          records[kept] = r;
          senders[kept++] = senders[i]!;
          continue;
        }
        senders[i]!.reject(
          invalid(
            `send to ${topic}: the record's ${field} was detached (its ArrayBuffer transferred) after send() took it and before its batch was encoded, so its bytes are gone; this record was not written (the records batched with it were)`,
          ),
        );
      }
      records.length = kept;
      senders.length = kept;
      if (kept === 0) return null;
    }
  }
}

/** Which of a sent record's fields was detached since its send(), as encode() checks them (key, value, headers), or null. */
function detachedField(r: RecordInput): string | null {
  let first: string | null = null;
  eachDetached(r, (field) => ((first = field), true));
  return first;
}

/**
 * Tells `f` the name of each of a record's fields that is a detached view, in the order
 * encode() checks them (key, value, headers), until it returns true. A record of the
 * wrong shape has none here: encode() says what is wrong with it.
 */
function eachDetached(r: RecordInput, f: (field: string) => boolean | void): void {
  if (r === null || typeof r !== 'object') return;
  const { key, value, headers } = r;
  if (key instanceof U8 && isDetached(key) && f('key')) return;
  if (value instanceof U8 && isDetached(value) && f('value')) return;
  if (headers !== null && typeof headers === 'object' && !Array.isArray(headers))
    for (const k of Object.keys(headers)) {
      const v = (headers as Record<string, unknown>)[k];
      if (v instanceof U8 && isDetached(v) && f(`header ${JSON.stringify(k)}`)) return;
    }
}

/** encodeBatch; `sent`: the records are send()s' (see encodeSent). */
function encode(records: readonly RecordInput[], opts: EncodeOptions, sent: boolean): Buffer {
  if (!Array.isArray(records)) throw invalid('encodeBatch needs an array of records');
  if (opts === null || typeof opts !== 'object') throw invalid('encodeBatch options must be an object');
  const n = records.length;
  if (n === 0) throw invalid('a batch needs at least one record');
  if (opts.producerId !== undefined) checkProducerId(opts.producerId);
  if (opts.baseSequence !== undefined) checkBaseSequence(opts.baseSequence);
  if (opts.now !== undefined && (!isSafeInteger(opts.now) || opts.now < 0 || opts.now > MAX_TIMESTAMP))
    throw invalid(`now must be a timestamp in ms between 0 and ${MAX_TIMESTAMP}, got ${shown(opts.now)}`);
  if (scratchBody.length < n && n <= SCRATCH_KEEP) {
    const cap = Math.min(SCRATCH_KEEP, Math.max(n, scratchBody.length * 2));
    scratchBody = new Int32Array(cap);
    scratchKey = new Int32Array(cap);
    scratchValue = new Int32Array(cap);
    scratchTs = new Float64Array(cap);
  }
  const own = n > scratchBody.length;
  const bodyLens = own ? new Int32Array(n) : scratchBody;
  const keyLens = own ? new Int32Array(n) : scratchKey;
  const valueLens = own ? new Int32Array(n) : scratchValue;
  const tss = own ? new Float64Array(n) : scratchTs;
  const now = opts.now ?? Date.now();
  // The first record's timestamp is the batch's base (records[0] is checked below
  // before this is used: a bad one throws there).
  const r0 = records[0] as RecordInput | null | undefined;
  const t0 = r0 !== null && typeof r0 === 'object' ? r0.timestamp : undefined;
  const first = typeof t0 === 'number' ? t0 : now;
  let maxTs = first;
  let total = HEADER_SIZE;
  // Plain: byte values, no key, no headers, a timestamp within 64 ms of the first (a
  // one-byte delta: a producer's send() stamps each record at its call). Such batches
  // (the common bulk case) take a second pass with no per-field branches.
  let plain = true;
  for (let i = 0; i < n; i++) {
    const r = records[i]!;
    if (r === null || typeof r !== 'object') throw shapeError(opts, i, RECORD_PROBLEM.notObject);
    const t = r.timestamp;
    let ts = now;
    if (t !== undefined) {
      if (typeof t !== 'number' || !isSafeInteger(t) || t < 0 || t > MAX_TIMESTAMP) throw shapeError(opts, i, RECORD_PROBLEM.timestamp);
      ts = t;
    }
    tss[i] = ts;
    if (ts > maxTs) maxTs = ts;
    const key = r.key;
    let kl = -1;
    if (key !== undefined && key !== null) {
      kl = bytesLen(key);
      if (kl < 0) throw shapeError(opts, i, RECORD_PROBLEM.key);
      if (kl === 0 && sent && typeof key !== 'string' && isDetached(key)) throw new DetachedSince(i, 'key');
    }
    const value = r.value;
    const vl = bytesLen(value);
    if (vl < 0) throw shapeError(opts, i, RECORD_PROBLEM.value);
    if (vl === 0 && sent && typeof value !== 'string' && isDetached(value)) throw new DetachedSince(i, 'value');
    keyLens[i] = kl;
    valueLens[i] = vl;
    if (plain && (kl >= 0 || ts - first < -64 || ts - first > 63 || typeof value === 'string' || r.headers !== undefined)) plain = false;
    let body = 1 + uvarintSize(zigzag(ts - first)) + uvarintSize(i) + (kl < 0 ? 1 : uvarintSize(kl + 1) + kl) + uvarintSize(vl) + vl;
    const h = r.headers;
    body += h === undefined ? 1 : headersSize(h, opts, i, sent);
    bodyLens[i] = body;
    total += body + uvarintSize(body);
  }
  const buf = opts.alloc ? opts.alloc(total) : Buffer.allocUnsafe(total);
  // Else a TypeError or RangeError from the first write into it.
  if (opts.alloc && (!Buffer.isBuffer(buf) || buf.length !== total)) throw invalid(`encodeBatch: alloc(${total}) must return a Buffer of ${total} bytes`);
  writeBatchHeader(buf, total, n, first, maxTs, opts.producerId ?? -1, opts.baseSequence ?? -1);
  let pos = HEADER_SIZE;
  if (plain) {
    for (let i = 0; i < n; i++) {
      const body = bodyLens[i]!;
      if (body < 0x80) buf[pos++] = body;
      else pos = writeUvarint(buf, pos, body);
      buf[pos++] = 0; // attributes
      buf[pos++] = zigzag(tss[i]! - first); // timestamp delta, one byte
      if (i < 0x80) buf[pos++] = i;
      else pos = writeUvarint(buf, pos, i);
      buf[pos++] = 0; // no key
      const vl = valueLens[i]!;
      if (vl < 0x80) buf[pos++] = vl;
      else pos = writeUvarint(buf, pos, vl);
      // Read again: a getter's shorter answer would have left vl - length bytes of the
      // pooled buffer's old contents (another batch's records) in this record.
      const value = records[i]!.value as Uint8Array;
      if (value.length !== vl) throw shapeError(opts, i, RECORD_PROBLEM.changed);
      if (vl > 0) setBytes.call(buf, value, pos); // see put()
      pos += vl;
      buf[pos++] = 0; // no headers
    }
    if (pos !== total) throw new Error(`uringmq codec bug: wrote ${pos} of ${total} bytes`);
    return buf;
  }
  for (let i = 0; i < n; i++) {
    const r = records[i]!;
    // One-byte varints inline: the common case, and a call per field showed in profiles.
    const body = bodyLens[i]!;
    if (body < 0x80) buf[pos++] = body;
    else pos = writeUvarint(buf, pos, body);
    buf[pos++] = 0;
    const tsz = zigzag(tss[i]! - first);
    if (tsz < 0x80) buf[pos++] = tsz;
    else pos = writeUvarint(buf, pos, tsz);
    if (i < 0x80) buf[pos++] = i;
    else pos = writeUvarint(buf, pos, i);
    const kl = keyLens[i]!;
    if (kl < 0) buf[pos++] = 0;
    else if ((pos = put(buf, writeUvarint(buf, pos, kl + 1), r.key!, kl)) < 0) throw shapeError(opts, i, RECORD_PROBLEM.changed);
    const vl = valueLens[i]!;
    const value = r.value;
    if (vl < 0x80) buf[pos++] = vl;
    else pos = writeUvarint(buf, pos, vl);
    // Read again, as the key and headers are: see the plain loop.
    if (typeof value === 'string') {
      if (buf.write(value, pos, vl, 'utf8') !== vl) throw shapeError(opts, i, RECORD_PROBLEM.changed);
    } else if ((value as unknown) instanceof U8 && value.length === vl) {
      if (vl > 0) setBytes.call(buf, value, pos); // see put()
    } else throw shapeError(opts, i, RECORD_PROBLEM.changed);
    pos += vl;
    const h = r.headers;
    if (h === undefined) buf[pos++] = 0;
    else {
      const keys = Object.keys(h);
      pos = writeUvarint(buf, pos, keys.length);
      for (const k of keys) {
        const v = h[k]!;
        const hk = Buffer.byteLength(k);
        const hv = bytesLen(v);
        pos = put(buf, writeUvarint(buf, pos, hk), k, hk);
        if (hv < 0 || (pos = put(buf, writeUvarint(buf, pos, hv), v, hv)) < 0) throw shapeError(opts, i, RECORD_PROBLEM.changed);
      }
    }
  }
  if (pos !== total) throw new Error(`uringmq codec bug: wrote ${pos} of ${total} bytes`);
  return buf;
}

/**
 * The largest producer id: the broker keys its idempotence table by a JS number, so a
 * larger id would share a key with its neighbours and one producer's batches would be
 * taken for another's retries.
 */
export const MAX_PRODUCER_ID = Number.MAX_SAFE_INTEGER;

function producerIdError(got: string) {
  return invalid(`producer id ${got} is out of range: an idempotent producer's id is 1 to ${MAX_PRODUCER_ID} (2^53-1), 0 or -1 for none (docs/FORMAT.md)`);
}

function checkProducerId(id: number): void {
  if (!Number.isSafeInteger(id) || id < -1) throw producerIdError(shown(id));
}

/** A batch header's base sequence: -1 (none) or 0..2^31-1; NaN or 1.5 would be written as 0 or 1. */
function checkBaseSequence(seq: number): void {
  if (!Number.isInteger(seq) || seq < -1 || seq > 0x7fff_ffff) throw invalid(`baseSequence must be an integer from -1 to ${0x7fff_ffff}, got ${shown(seq)}`);
}

/**
 * Refuses (INVALID_ARGUMENT) a batch whose header's producer id is outside
 * -1..MAX_PRODUCER_ID. Judged on the raw high 32 bits: readBatchMeta's number rounds
 * ids past 2^53, so 2^53+1 would read as 2^53.
 */
export function checkBatchProducerId(buf: Buffer, pos = 0): void {
  const hi = buf.readInt32LE(pos + 52);
  const lo = buf.readUInt32LE(pos + 48);
  if ((hi >= 0 && hi < 0x20_0000) || (hi === -1 && lo === 0xffff_ffff)) return;
  throw producerIdError((BigInt(hi) * 2n ** 32n + BigInt(lo)).toString());
}

/** Sets an encoded batch's producer id and base sequence (before sealBatch: the CRC covers them). */
export function stampProducer(batch: Buffer, producerId: number, baseSequence: number): void {
  checkProducerId(producerId);
  checkBaseSequence(baseSequence);
  writeI64(batch, 48, producerId);
  batch.writeInt32LE(baseSequence, 56);
}

/** Computes and stores the CRC32C of an encoded batch (for batches sent over the wire). */
export function sealBatch(batch: Buffer): Buffer {
  if (!Buffer.isBuffer(batch)) throw invalid('sealBatch needs the Buffer encodeBatch returned');
  batchLengthAt(batch, 0);
  batch.writeUInt32LE(crc32c(batch.subarray(CRC_START)), 16);
  return batch;
}

/** INVALID_ARGUMENT for what is not a Buffer and a position in it (the exported readers' arguments). */
function checkBufferAt(buf: unknown, pos: unknown, what: string): void {
  if (!Buffer.isBuffer(buf)) throw invalid(`${what} needs a Buffer`);
  if (typeof pos !== 'number' || !isSafeInteger(pos) || pos < 0) throw invalid(`${what}: a position must be a non-negative integer, got ${shown(pos)}`);
}

export function readBatchMeta(buf: Buffer, pos = 0): BatchMeta {
  checkBufferAt(buf, pos, 'readBatchMeta');
  return {
    length: batchLengthAt(buf, pos),
    baseOffset: readI64(buf, pos + 8),
    recordCount: buf.readUInt32LE(pos + 24),
    firstTimestamp: readI64(buf, pos + 32),
    maxTimestamp: readI64(buf, pos + 40),
    producerId: readI64(buf, pos + 48),
    baseSequence: buf.readInt32LE(pos + 56),
  };
}

/** The length of the batch at `pos`, checked: a batch is there, and no shorter than its header. */
function batchLengthAt(buf: Buffer, pos: number): number {
  // CORRUPT_BATCH, as for a record that does not decode: the decoders' loops come here.
  if (buf.length - pos < HEADER_SIZE || buf.readUInt32LE(pos) !== MAGIC) throw corrupt(`no batch at byte ${pos}`);
  const length = buf.readUInt32LE(pos + 4);
  // Loops over batches advance by it: a smaller one would never move on.
  if (length < HEADER_SIZE) throw corrupt(`the batch at byte ${pos} claims ${length} bytes, less than its ${HEADER_SIZE}-byte header`);
  return length;
}

/**
 * The length in bytes of the batch at `pos` and the offset after its last record, as
 * readBatchMeta reads them (and with its checks), written into `out` instead of a new
 * object: the delivery loop walks every batch it sends.
 */
export function readBatchSpan(buf: Buffer, pos: number, out: { length: number; nextOffset: number }): void {
  out.length = batchLengthAt(buf, pos);
  out.nextOffset = readI64(buf, pos + 8) + buf.readUInt32LE(pos + 24);
}

/**
 * The encoded size (length prefix included) of the largest record of the batch at the
 * start of `buf`, from the records' length fields alone; -1 when the framing does not
 * hold together (the core refuses such a batch as CORRUPT_BATCH).
 */
export function largestRecordBytes(buf: Buffer): number {
  const end = Math.min(buf.length, buf.readUInt32LE(4));
  const count = buf.readUInt32LE(24);
  const c = new Cursor(buf, HEADER_SIZE, end);
  let largest = 0;
  try {
    for (let i = 0; i < count; i++) {
      const start = c.pos;
      const len = c.uvarint();
      if (len > end - c.pos) return -1;
      c.pos += len;
      if (c.pos - start > largest) largest = c.pos - start;
    }
  } catch {
    return -1;
  }
  return largest;
}

/** The key of the first record of a batch (null when it has none), without decoding the rest. */
export function firstRecordKey(buf: Buffer): Buffer | null {
  const c = new Cursor(buf, HEADER_SIZE, buf.length);
  c.uvarint(); // length
  c.pos++; // attributes
  c.uvarint(); // timestampDelta
  c.uvarint(); // offsetDelta
  const keyLen1 = c.uvarint();
  return keyLen1 === 0 ? null : c.bytes(keyLen1 - 1);
}

type ViewCtor = new (ab: ArrayBufferLike, offset: number, length: number) => Buffer;

/**
 * A Buffer view of `length` bytes at `offset` of an ArrayBuffer, made with the class
 * Node gives as Buffer's species (its Buffer implementation class): 33 ns, against
 * 44 ns for Buffer.from(ab, offset, length), which first type-checks through a C++
 * call, and 90 ns for buf.subarray() (Node 20). Decoders make one per value. If a
 * Node version's species did not make Buffers, Buffer.from stands in.
 */
const viewOf: (ab: ArrayBufferLike, offset: number, length: number) => Buffer = (() => {
  const Species = (Buffer as unknown as { [Symbol.species]?: ViewCtor })[Symbol.species];
  try {
    if (typeof Species === 'function' && Species !== (Buffer as unknown) && Buffer.isBuffer(new Species(new ArrayBuffer(2), 1, 1)))
      return (ab, offset, length) => new Species(ab, offset, length);
  } catch {
    // fall through
  }
  return (ab, offset, length) => Buffer.from(ab, offset, length);
})();

class Cursor {
  private readonly ab: ArrayBufferLike;
  private readonly base: number;
  constructor(readonly buf: Buffer, public pos: number, readonly end: number) {
    this.ab = buf.buffer;
    this.base = buf.byteOffset;
  }
  uvarint(): number {
    let result = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw corrupt('varint runs past the batch');
      const b = this.buf[this.pos++]!;
      if (i === 9 && b > 1) throw corrupt('varint past 64 bits');
      result += (b & 0x7f) * mul;
      if (b < 0x80) return result;
      mul *= 128;
    }
    throw corrupt('varint too long');
  }
  bytes(n: number): Buffer {
    if (n < 0 || n > this.end - this.pos) throw corrupt('field runs past the batch');
    const b = viewOf(this.ab, this.base + this.pos, n);
    this.pos += n;
    return b;
  }
}

const NO_HEADERS: Record<string, Buffer> = Object.freeze({}) as Record<string, Buffer>;

/** A batch read back that does not decode: CORRUPT_BATCH, whoever reads it. */
function corrupt(message: string): UringmqError {
  return new UringmqError('CORRUPT_BATCH', message);
}

const unzigzag = (u: number): number => (u % 2 === 0 ? u / 2 : -(u + 1) / 2);

/** The batch header (docs/FORMAT.md) of a batch of `count` records: base offset and CRC 0, stamped later (broker, sealBatch). */
function writeBatchHeader(buf: Buffer, total: number, count: number, firstTs: number, maxTs: number, producerId: number, baseSequence: number): void {
  buf.writeUInt32LE(MAGIC, 0);
  buf.writeUInt32LE(total, 4);
  buf.fill(0, 8, 20); // baseOffset (stamped by the broker) and CRC
  buf[20] = VERSION;
  buf[21] = 0;
  buf.writeUInt16LE(HEADER_SIZE, 22);
  buf.writeUInt32LE(count, 24);
  buf.writeUInt32LE(count - 1, 28);
  writeI64(buf, 32, firstTs);
  writeI64(buf, 40, maxTs);
  writeI64(buf, 48, producerId);
  buf.writeInt32LE(baseSequence, 56);
  buf.writeUInt32LE(0, 60);
}

/**
 * The record at `offset` of the batches in `buf` as a batch of its own (CRC not set:
 * see sealBatch), with its timestamp, and its key, value and headers as the log holds
 * them, byte for byte, then the `extra` headers (a decoder keeps the last of two with
 * one key). Re-encoding a decoded record would not do: decoding makes header keys
 * strings, and key bytes that are not UTF-8 become U+FFFD, three bytes each, so such a
 * record could grow past the size limits the log took it within. Null when `buf` holds
 * no record at `offset`. For the dead-letter moves.
 */
export function recordAsBatch(buf: Buffer, offset: number, extra: Record<string, string>): Buffer | null {
  let pos = 0;
  while (pos < buf.length) {
    const meta = readBatchMeta(buf, pos);
    const end = pos + meta.length;
    if (end > buf.length) throw corrupt(`batch at byte ${pos} runs past the buffer`);
    if (offset < meta.baseOffset) return null;
    if (offset >= meta.baseOffset + meta.recordCount) {
      pos = end;
      continue;
    }
    const c = new Cursor(buf, pos + HEADER_SIZE, end);
    for (let i = meta.baseOffset; i < offset; i++) {
      const len = c.uvarint();
      c.pos += len;
    }
    const len = c.uvarint();
    const recEnd = c.pos + len;
    if (recEnd > end) throw corrupt('record runs past the batch');
    c.pos++; // attributes
    const ts = meta.firstTimestamp + unzigzag(c.uvarint());
    c.uvarint(); // offsetDelta
    const keyAt = c.pos;
    const keyLen1 = c.uvarint();
    if (keyLen1 > 0) c.bytes(keyLen1 - 1);
    c.bytes(c.uvarint()); // the value
    const keyAndValue = buf.subarray(keyAt, c.pos);
    const headerCount = c.uvarint();
    if (c.pos > recEnd) throw corrupt('record fields run past its length');
    const headers = buf.subarray(c.pos, recEnd);
    const names = Object.keys(extra);
    let extraBytes = 0;
    for (const k of names) {
      const kl = Buffer.byteLength(k);
      const vl = Buffer.byteLength(extra[k]!);
      extraBytes += uvarintSize(kl) + kl + uvarintSize(vl) + vl;
    }
    // attributes, timestamp delta and offset delta (0 each), then the fields
    const body = 3 + keyAndValue.length + uvarintSize(headerCount + names.length) + headers.length + extraBytes;
    const total = HEADER_SIZE + uvarintSize(body) + body;
    const out = Buffer.allocUnsafe(total);
    writeBatchHeader(out, total, 1, ts, ts, -1, -1);
    let p = writeUvarint(out, HEADER_SIZE, body);
    out[p++] = 0;
    out[p++] = 0;
    out[p++] = 0;
    p += keyAndValue.copy(out, p);
    p = writeUvarint(out, p, headerCount + names.length);
    p += headers.copy(out, p);
    for (const k of names) {
      const v = extra[k]!;
      const kl = Buffer.byteLength(k);
      const vl = Buffer.byteLength(v);
      p = put(out, writeUvarint(out, p, kl), k, kl);
      p = put(out, writeUvarint(out, p, vl), v, vl);
    }
    if (p !== total) throw new Error(`uringmq codec bug: wrote ${p} of ${total} bytes`);
    return out;
  }
  return null;
}

/**
 * Decodes every batch in `buf` (whole batches, back to back, as read from the log).
 * Values are views into `buf`, not copies. Records below `fromOffset` are skipped.
 */
export function decodeBatches(buf: Buffer, fromOffset = 0, out: DecodedRecord[] = []): DecodedRecord[] {
  checkBufferAt(buf, 0, 'decodeBatches');
  if (typeof fromOffset !== 'number' || !isSafeInteger(fromOffset) || fromOffset < 0) throw invalid(`decodeBatches: fromOffset must be a non-negative integer, got ${shown(fromOffset)}`);
  if (!Array.isArray(out)) throw invalid('decodeBatches: out must be an array');
  decodeEach(buf, fromOffset, Number.MAX_SAFE_INTEGER, (offset, timestamp, key, value, headers) => {
    out.push({ offset, timestamp, key, value, headers });
  });
  return out;
}

/**
 * Calls `fn` for every record with fromOffset <= offset < toOffset, without building
 * intermediate objects (consumers make their message objects directly). Records past
 * toOffset end the walk.
 */
export function decodeEach(
  buf: Buffer,
  fromOffset: number,
  toOffset: number,
  fn: (offset: number, timestamp: number, key: Buffer | null, value: Buffer, headers: Record<string, Buffer>) => void,
): void {
  const ab = buf.buffer;
  const bo = buf.byteOffset;
  let pos = 0;
  while (pos < buf.length) {
    const meta = readBatchMeta(buf, pos);
    const end = pos + meta.length;
    if (end > buf.length) throw corrupt(`batch at byte ${pos} runs past the buffer`);
    if (meta.baseOffset >= toOffset) return;
    if (meta.baseOffset + meta.recordCount <= fromOffset) {
      pos = end; // wholly before the range: skip without decoding
      continue;
    }
    const c = new Cursor(buf, pos + HEADER_SIZE, end);
    const base = meta.baseOffset;
    const firstTs = meta.firstTimestamp;
    const count = meta.recordCount;
    let i = 0;
    if (base < fromOffset) {
      // Skip to the first wanted record by its length prefix alone.
      for (; i < count && base + i < fromOffset; i++) {
        const len = c.uvarint();
        c.pos += len;
      }
    }
    for (; i < count; i++) {
      const offset = base + i;
      if (offset >= toOffset) return;
      // One-byte varints inline (the common case for lengths under 128 and small
      // deltas): a call per field was a fifth of a consumer's decode time.
      let p = c.pos;
      if (p + 7 > end) throw corrupt('record runs past the batch'); // 7: the smallest record
      let len = buf[p]!;
      if (len < 0x80) p++;
      else {
        c.pos = p;
        len = c.uvarint();
        p = c.pos;
      }
      const recEnd = p + len;
      if (recEnd > end) throw corrupt('record runs past the batch');
      p++; // attributes
      let tsz = buf[p]!;
      if (tsz < 0x80) p++;
      else {
        c.pos = p;
        tsz = c.uvarint();
        p = c.pos;
      }
      if (buf[p]! < 0x80) p++; // offsetDelta (the core checked it equals i)
      else {
        c.pos = p;
        c.uvarint();
        p = c.pos;
      }
      let key: Buffer | null = null;
      if (buf[p] === 0) p++;
      else {
        // Any encoding of the length, not only the shortest: the core accepts them all
        // (0 written as 80 00 is "no key" too).
        c.pos = p;
        const keyLen1 = c.uvarint();
        if (keyLen1 > 0) key = c.bytes(keyLen1 - 1);
        p = c.pos;
      }
      let vl = buf[p]!;
      if (vl < 0x80) p++;
      else {
        c.pos = p;
        vl = c.uvarint();
        p = c.pos;
      }
      if (p + vl > recEnd) throw corrupt('value runs past its record');
      const value = viewOf(ab, bo + p, vl);
      p += vl;
      // Most records have no headers: share one frozen empty object instead of
      // allocating one per record.
      let headers: Record<string, Buffer> = NO_HEADERS;
      if (buf[p] === 0) p++;
      else {
        c.pos = p;
        const hc = c.uvarint();
        headers = {};
        for (let h = 0; h < hc; h++) {
          const k = c.bytes(c.uvarint()).toString('utf8');
          // defineProperty: a header named __proto__ is a header, not the object's prototype.
          if (k === '__proto__') Object.defineProperty(headers, k, { value: c.bytes(c.uvarint()), enumerable: true, writable: true, configurable: true });
          else headers[k] = c.bytes(c.uvarint());
        }
        p = c.pos;
      }
      if (p > recEnd) throw corrupt('record fields run past its length');
      c.pos = recEnd;
      fn(offset, firstTs + unzigzag(tsz), key, value, headers);
    }
    pos = end;
  }
}
