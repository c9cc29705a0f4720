/**
 * The RecordBatch codec for JavaScript (docs/FORMAT.md). One codec serves the
 * embedded producer, the client, the server and the tests. Encoding leaves the CRC
 * to the caller: the embedded path has the core compute it in the same call that
 * validates the batch (`seal`); `sealBatch` fills it in here for batches that leave
 * the process.
 */
import { crc32c } from '../native';

export const MAGIC = 0x424d5155; // "UQMB"
export const VERSION = 1;
export const HEADER_SIZE = 64;
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

function uvarintSize(v: number): number {
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

function writeUvarint(buf: Buffer, pos: number, v: number): number {
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

/** Normalized record: byte lengths computed once, strings kept as strings. */
interface Prepared {
  key: Bytes | null;
  keyLen: number;
  value: Bytes;
  valueLen: number;
  headers: Array<[string, number, Bytes, number]> | null;
  ts: number;
  bodyLen: number;
}

const byteLen = (b: Bytes): number => (typeof b === 'string' ? Buffer.byteLength(b) : b.length);

function put(buf: Buffer, pos: number, b: Bytes, len: number): number {
  if (typeof b === 'string') buf.write(b, pos, len, 'utf8');
  else buf.set(b, pos);
  return pos + len;
}

/** Encoded size of one record including its length prefix (for size limits). */
export function recordSize(r: RecordInput, tsDelta = 0, offsetDelta = 0): number {
  const p = prepare(r, r.timestamp ?? 0);
  return bodyLen(p, tsDelta, offsetDelta);
}

function prepare(r: RecordInput, ts: number): Prepared {
  const key = r.key ?? null;
  const keyLen = key === null ? 0 : byteLen(key);
  const valueLen = byteLen(r.value);
  let headers: Prepared['headers'] = null;
  if (r.headers) {
    for (const k of Object.keys(r.headers)) {
      const v = r.headers[k]!;
      (headers ??= []).push([k, Buffer.byteLength(k), v, byteLen(v)]);
    }
  }
  return { key, keyLen, value: r.value, valueLen, headers, ts, bodyLen: 0 };
}

function bodyLen(p: Prepared, tsDelta: number, offsetDelta: number): number {
  let n = 1 + uvarintSize(zigzag(tsDelta)) + uvarintSize(offsetDelta);
  n += p.key === null ? 1 : uvarintSize(p.keyLen + 1) + p.keyLen;
  n += uvarintSize(p.valueLen) + p.valueLen;
  const h = p.headers;
  n += uvarintSize(h ? h.length : 0);
  if (h) for (const [, kl, , vl] of h) n += uvarintSize(kl) + kl + uvarintSize(vl) + vl;
  p.bodyLen = n;
  return n + uvarintSize(n);
}

export interface EncodeOptions {
  producerId?: number;
  baseSequence?: number;
  /** Timestamp for records without one (default Date.now()). */
  now?: number;
}

/**
 * Encodes records into one batch with baseOffset 0 and CRC 0 (see sealBatch).
 * Records are assumed validated (see validateRecord in broker/validate.ts).
 */
export function encodeBatch(records: readonly RecordInput[], opts: EncodeOptions = {}): Buffer {
  const n = records.length;
  if (n === 0) throw new RangeError('a batch needs at least one record');
  const now = opts.now ?? Date.now();
  const prepared: Prepared[] = new Array(n);
  const first = records[0]!.timestamp ?? now;
  let maxTs = first;
  let total = HEADER_SIZE;
  for (let i = 0; i < n; i++) {
    const r = records[i]!;
    const ts = r.timestamp ?? now;
    if (ts > maxTs) maxTs = ts;
    const p = prepare(r, ts);
    total += bodyLen(p, ts - first, i);
    prepared[i] = p;
  }
  const buf = Buffer.allocUnsafe(total);
  buf.writeUInt32LE(MAGIC, 0);
  buf.writeUInt32LE(total, 4);
  buf.fill(0, 8, 20); // baseOffset (stamped by the broker) and CRC
  buf[20] = VERSION;
  buf[21] = 0;
  buf.writeUInt16LE(HEADER_SIZE, 22);
  buf.writeUInt32LE(n, 24);
  buf.writeUInt32LE(n - 1, 28);
  writeI64(buf, 32, first);
  writeI64(buf, 40, maxTs);
  writeI64(buf, 48, opts.producerId ?? -1);
  buf.writeInt32LE(opts.baseSequence ?? -1, 56);
  buf.writeUInt32LE(0, 60);
  let pos = HEADER_SIZE;
  for (let i = 0; i < n; i++) {
    const p = prepared[i]!;
    pos = writeUvarint(buf, pos, p.bodyLen);
    buf[pos++] = 0;
    pos = writeUvarint(buf, pos, zigzag(p.ts - first));
    pos = writeUvarint(buf, pos, i);
    if (p.key === null) buf[pos++] = 0;
    else pos = put(buf, writeUvarint(buf, pos, p.keyLen + 1), p.key, p.keyLen);
    pos = put(buf, writeUvarint(buf, pos, p.valueLen), p.value, p.valueLen);
    const h = p.headers;
    if (!h) buf[pos++] = 0;
    else {
      pos = writeUvarint(buf, pos, h.length);
      for (const [k, kl, v, vl] of h) {
        pos = put(buf, writeUvarint(buf, pos, kl), k, kl);
        pos = put(buf, writeUvarint(buf, pos, vl), v, vl);
      }
    }
  }
  if (pos !== total) throw new Error(`uringmq codec bug: wrote ${pos} of ${total} bytes`);
  return buf;
}

/** Computes and stores the CRC32C of an encoded batch (for batches sent over the wire). */
export function sealBatch(batch: Buffer): Buffer {
  batch.writeUInt32LE(crc32c(batch.subarray(CRC_START)), 16);
  return batch;
}

export function readBatchMeta(buf: Buffer, pos = 0): BatchMeta {
  if (buf.length - pos < HEADER_SIZE || buf.readUInt32LE(pos) !== MAGIC) throw new Error(`no batch at byte ${pos}`);
  return {
    length: buf.readUInt32LE(pos + 4),
    baseOffset: readI64(buf, pos + 8),
    recordCount: buf.readUInt32LE(pos + 24),
    firstTimestamp: readI64(buf, pos + 32),
    maxTimestamp: readI64(buf, pos + 40),
    producerId: readI64(buf, pos + 48),
    baseSequence: buf.readInt32LE(pos + 56),
  };
}

class Cursor {
  constructor(readonly buf: Buffer, public pos: number, readonly end: number) {}
  uvarint(): number {
    let result = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new Error('varint runs past the batch');
      const b = this.buf[this.pos++]!;
      result += (b & 0x7f) * mul;
      if (b < 0x80) return result;
      mul *= 128;
    }
    throw new Error('varint too long');
  }
  bytes(n: number): Buffer {
    if (n > this.end - this.pos) throw new Error('field runs past the batch');
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }
}

const unzigzag = (u: number): number => (u % 2 === 0 ? u / 2 : -(u + 1) / 2);

/**
 * Decodes every batch in `buf` (whole batches, back to back, as read from the log).
 * Values are views into `buf`, not copies. Records below `fromOffset` are skipped.
 */
export function decodeBatches(buf: Buffer, fromOffset = 0, out: DecodedRecord[] = []): DecodedRecord[] {
  let pos = 0;
  while (pos < buf.length) {
    const meta = readBatchMeta(buf, pos);
    const end = pos + meta.length;
    if (end > buf.length) throw new Error(`batch at byte ${pos} runs past the buffer`);
    const c = new Cursor(buf, pos + HEADER_SIZE, end);
    for (let i = 0; i < meta.recordCount; i++) {
      const len = c.uvarint();
      const recEnd = c.pos + len;
      c.pos++; // attributes
      const ts = meta.firstTimestamp + unzigzag(c.uvarint());
      const offsetDelta = c.uvarint();
      const keyLen1 = c.uvarint();
      const key = keyLen1 === 0 ? null : c.bytes(keyLen1 - 1);
      const value = c.bytes(c.uvarint());
      const hc = c.uvarint();
      const headers: Record<string, Buffer> = {};
      for (let h = 0; h < hc; h++) {
        const k = c.bytes(c.uvarint()).toString('utf8');
        headers[k] = c.bytes(c.uvarint());
      }
      c.pos = recEnd;
      const offset = meta.baseOffset + offsetDelta;
      if (offset >= fromOffset) out.push({ offset, timestamp: ts, key, value, headers });
    }
    pos = end;
  }
  return out;
}
