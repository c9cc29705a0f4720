/** Argument checks shared by the embedded API (and later the gRPC server). */
import { UringmqError, invalid } from '../errors';
import type { RecordInput } from '../codec/record_batch';

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

export function isBytes(v: unknown): v is Buffer | string {
  return typeof v === 'string' || Buffer.isBuffer(v) || v instanceof Uint8Array;
}

export function validateRecord(r: unknown, where: string): RecordInput {
  if (r === null || typeof r !== 'object') throw invalid(`${where}: a record must be an object with a value`);
  const rec = r as Record<string, unknown>;
  if (!isBytes(rec.value)) throw invalid(`${where}: value must be a Buffer or string`);
  if (rec.key !== undefined && rec.key !== null && !isBytes(rec.key)) throw invalid(`${where}: key must be a Buffer, string or null`);
  if (rec.timestamp !== undefined && !(Number.isSafeInteger(rec.timestamp) && (rec.timestamp as number) >= 0))
    throw invalid(`${where}: timestamp must be a non-negative integer (ms since the epoch)`);
  if (rec.headers !== undefined) {
    if (rec.headers === null || typeof rec.headers !== 'object' || Array.isArray(rec.headers))
      throw invalid(`${where}: headers must be an object of Buffer or string values`);
    for (const [k, v] of Object.entries(rec.headers as Record<string, unknown>))
      if (!isBytes(v)) throw invalid(`${where}: header ${JSON.stringify(k)} must be a Buffer or string`);
  }
  if (rec.partition !== undefined && !(Number.isInteger(rec.partition) && (rec.partition as number) >= 0))
    throw invalid(`${where}: partition must be a non-negative integer`);
  // Uint8Array that is not a Buffer: view it as one without copying.
  const asBuf = (v: unknown) => (v instanceof Uint8Array && !Buffer.isBuffer(v) ? Buffer.from(v.buffer, v.byteOffset, v.byteLength) : v);
  if (!Buffer.isBuffer(rec.value) && (rec.value as unknown) instanceof Uint8Array) rec.value = asBuf(rec.value);
  if ((rec.key as unknown) instanceof Uint8Array && !Buffer.isBuffer(rec.key)) rec.key = asBuf(rec.key);
  return rec as unknown as RecordInput;
}

export function validateOffset(offset: unknown, what = 'offset'): number {
  if (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0)
    throw invalid(`${what} must be a non-negative safe integer, got ${String(offset)}`);
  return offset;
}

export function positiveInt(v: unknown, what: string, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1 || v > max)
    throw invalid(`${what} must be an integer between 1 and ${max}, got ${String(v)}`);
  return v;
}
