/**
 * A partition's idempotent-producer table on disk: <partition dir>/producers.snap.
 *
 * The broker refills the table (idempotence.ts) when it opens a partition. From the log
 * alone it can read only a window at the end (producerStateScanBytes), so a retry of a
 * batch older than the window would be written again. The snapshot holds the table as
 * it was, and the open reads the log only from the snapshot's offset on: the table
 * comes back whole however far back a producer's last batch lies. (Kafka writes its
 * producer-state snapshots the same way, at segment rolls and on shutdown.) The broker
 * writes one at close, and while it runs once `producerStateScanBytes` more reached
 * the partition (at most once a second), so after a crash the log is read from a
 * snapshot that is that recent.
 *
 * Written whole (temp file, fsync, rename, directory fsync): it never exists half-made.
 * Layout, little-endian:
 *   0 magic "UMQP" · 4 version u32 (1) · 8 offset f64 · 16 count u32 · 20 crc32c u32
 *   24 count × { producerId f64, baseSequence f64, recordCount f64, baseOffset f64 }
 * `offset`: every idempotent batch that starts below it and was in the table is here;
 * the log is read from there. Version 2: an entry with baseOffset -1 is a hole, a
 * batch whose append failed after a later one of its producer was taken (see
 * idempotence.ts): a retry of it must stay refused after a restart. Version 3: an
 * entry with recordCount 0 and baseOffset -1 is a marker, the sequence its producer
 * expects next when every batch the table remembered of it failed (its written ones
 * before them are then known by it alone). Version 1 and 2 files are read as they are. Entries are in the table's order (least recently used
 * producer first, each producer's batches oldest first), so restoring them in order
 * rebuilds the same table. The CRC covers bytes 8..20 and the entries.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { UringmqError, writeError } from '../errors';
import { crc32c } from '../native';
import { fsyncDir, writeFileDurable } from './topic_store';

const MAGIC = 0x50514d55; // "UMQP" read as a little-endian u32
/** Written as 2 while the table holds no marker, so a broker of the release before still reads it. */
const VERSION = 3;
const HEADER = 24;
const ENTRY = 32;

export const PRODUCER_SNAPSHOT_FILE = 'producers.snap';

export interface ProducerSnapshot {
  /** The log is read from this offset on; the entries cover what lies below it. */
  offset: number;
  /** [producerId, baseSequence, recordCount, baseOffset] quadruples, as IdempotenceTable.restore() takes them (baseOffset -1: a hole). */
  batches: Float64Array;
}

function encode(s: ProducerSnapshot): Buffer {
  const n = s.batches.length / 4;
  const b = Buffer.alloc(HEADER + ENTRY * n);
  let markers = false;
  for (let i = 0; i < n && !markers; i++) markers = s.batches[4 * i + 2] === 0;
  b.writeUInt32LE(MAGIC, 0);
  b.writeUInt32LE(markers ? VERSION : 2, 4);
  b.writeDoubleLE(s.offset, 8);
  b.writeUInt32LE(n, 16);
  for (let i = 0; i < 4 * n; i++) b.writeDoubleLE(s.batches[i]!, HEADER + 8 * i);
  b.writeUInt32LE(crc32c(b.subarray(HEADER), crc32c(b.subarray(8, 20))), 20);
  return b;
}

/** Writes the partition's snapshot in `dir`, replacing the one before. */
export async function writeProducerSnapshot(dir: string, s: ProducerSnapshot): Promise<void> {
  const file = path.join(dir, PRODUCER_SNAPSHOT_FILE);
  try {
    await writeFileDurable(file, encode(s));
  } catch (e) {
    throw writeError(`cannot write the producer-state snapshot ${file}: ${(e as Error).message}`, e);
  }
}

/**
 * Removes the partition's snapshot, durably: a run that does not keep it up to date
 * (the table off) must not leave one a later run would trust.
 */
export async function removeProducerSnapshot(dir: string): Promise<void> {
  const file = path.join(dir, PRODUCER_SNAPSHOT_FILE);
  try {
    await fs.rm(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new UringmqError('IO_ERROR', `cannot remove the producer-state snapshot ${file}: ${(e as Error).message}`);
  }
  await fsyncDir(dir);
}

/**
 * The partition's snapshot in `dir`; null when there is none. IO_ERROR when it cannot
 * be read or is not whole (the broker then reads the log's window instead).
 */
export async function readProducerSnapshot(dir: string): Promise<ProducerSnapshot | null> {
  const file = path.join(dir, PRODUCER_SNAPSHOT_FILE);
  let b: Buffer;
  try {
    b = await fs.readFile(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new UringmqError('IO_ERROR', `cannot read the producer-state snapshot ${file}: ${(e as Error).message}`);
  }
  const bad = (why: string) => new UringmqError('IO_ERROR', `corrupt producer-state snapshot ${file}: ${why}`);
  if (b.length < HEADER || b.readUInt32LE(0) !== MAGIC) throw bad('not a snapshot');
  const version = b.readUInt32LE(4);
  if (version < 1 || version > VERSION) throw bad(`version ${version}`);
  const n = b.readUInt32LE(16);
  if (b.length !== HEADER + ENTRY * n) throw bad(`${b.length} bytes for ${n} entries`);
  if (crc32c(b.subarray(HEADER), crc32c(b.subarray(8, 20))) !== b.readUInt32LE(20)) throw bad('CRC mismatch');
  const offset = b.readDoubleLE(8);
  if (!Number.isSafeInteger(offset) || offset < 0) throw bad(`offset ${offset}`);
  const batches = new Float64Array(4 * n);
  for (let i = 0; i < 4 * n; i++) batches[i] = b.readDoubleLE(HEADER + 8 * i);
  for (let i = 0; i < n; i++) {
    const [id, seq, count, base] = batches.subarray(4 * i, 4 * i + 4);
    const hole = version >= 2 && base === -1;
    const marker = version >= 3 && hole && count === 0;
    const ok =
      Number.isSafeInteger(id) && id! > 0 && Number.isInteger(seq) && seq! >= 0 && seq! < 2 ** 31 &&
      Number.isInteger(count) && (count! >= 1 || marker) && (hole ? count! < 2 ** 31 : Number.isSafeInteger(base) && base! >= 0 && base! + count! <= offset);
    if (!ok) throw bad(`entry ${i} is not a batch below offset ${offset}`);
  }
  return { offset, batches };
}
