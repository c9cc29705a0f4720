/**
 * A group's committed offsets for one topic: <dir>/groups/<group>/<topic>.offs.
 *
 * A group that acks writes them every 20 ms, so a write has to be cheap. The file holds
 * two slots, each a whole snapshot with a sequence number and a CRC; a write overwrites
 * the older slot in place through a descriptor opened with O_DSYNC and kept open: one
 * write and the disk's cache flush, no fsync, rename or directory sync. (Writing a temp
 * file and renaming it, as topic.json is written, took nine file-system calls through
 * libuv's pool and two or three journal commits per write.) A write torn by a crash
 * fails its CRC and the other slot, one snapshot older, is read instead: the group
 * redelivers a little more after the crash, never less. The file itself is created
 * whole (temp file, fsync, rename, directory fsync), so it never exists half-made, and
 * its blocks are allocated then: later writes change no metadata the sync has to wait for.
 *
 * Slot layout, little-endian, each slot padded to a multiple of 4096 bytes:
 *   0 magic "UMQO" · 4 version u32 (1) · 8 sequence f64 · 16 count u32 · 20 crc32c u32
 *   24 count × f64 committed offset (-1: none)
 * The CRC covers bytes 8..20 and 24..24 + 8 × count.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { UringmqError } from '../errors';
import { crc32c } from '../native';
import { writeFileDurable } from './topic_store';

const MAGIC = 0x4f514d55; // "UMQO" read as a little-endian u32
const VERSION = 1;
const HEADER = 24;
const BLOCK = 4096;

/** Five characters at most: a topic name (up to 249) plus the suffix must fit the file system's 255-byte names. */
export const OFFSETS_SUFFIX = '.offs';

/** Bytes of one slot for `count` partitions. */
function slotBytes(count: number): number {
  return Math.ceil((HEADER + 8 * count) / BLOCK) * BLOCK;
}

function encodeSlot(sequence: number, offsets: readonly number[]): Buffer {
  const b = Buffer.alloc(slotBytes(offsets.length));
  b.writeUInt32LE(MAGIC, 0);
  b.writeUInt32LE(VERSION, 4);
  b.writeDoubleLE(sequence, 8);
  b.writeUInt32LE(offsets.length, 16);
  offsets.forEach((o, i) => b.writeDoubleLE(o, HEADER + 8 * i));
  b.writeUInt32LE(crc32c(b.subarray(HEADER, HEADER + 8 * offsets.length), crc32c(b.subarray(8, 20))), 20);
  return b;
}

/** A slot's snapshot, or null when it is not a whole, valid one (torn, zeroed, foreign). */
function decodeSlot(b: Buffer): { sequence: number; offsets: number[] } | null {
  if (b.length < HEADER || b.readUInt32LE(0) !== MAGIC || b.readUInt32LE(4) !== VERSION) return null;
  const count = b.readUInt32LE(16);
  if (HEADER + 8 * count > b.length) return null;
  if (crc32c(b.subarray(HEADER, HEADER + 8 * count), crc32c(b.subarray(8, 20))) !== b.readUInt32LE(20)) return null;
  const offsets: number[] = [];
  for (let i = 0; i < count; i++) offsets.push(b.readDoubleLE(HEADER + 8 * i));
  return { sequence: b.readDoubleLE(8), offsets };
}

/**
 * The newest valid snapshot of an offsets file and its sequence number; null when the
 * file does not exist. IO_ERROR when it exists and neither slot is valid.
 */
export async function readOffsetsFile(file: string): Promise<{ sequence: number; offsets: number[] } | null> {
  let b: Buffer;
  try {
    b = await fs.readFile(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new UringmqError('IO_ERROR', `cannot read committed offsets ${file}: ${(e as Error).message}`);
  }
  const half = b.length / 2;
  const slots = Number.isInteger(half) && half % BLOCK === 0 && half > 0 ? [decodeSlot(b.subarray(0, half)), decodeSlot(b.subarray(half))] : [];
  let best: { sequence: number; offsets: number[] } | null = null;
  for (const s of slots) if (s && (!best || s.sequence > best.sequence)) best = s;
  if (!best) throw new UringmqError('IO_ERROR', `corrupt committed offsets ${file}: no valid snapshot in its ${b.length} bytes`);
  return best;
}

/** Writes snapshots of one group's committed offsets for one topic; one write at a time (the caller chains them). */
export class OffsetsFile {
  private constructor(
    readonly file: string,
    private fh: fs.FileHandle,
    private sequence: number,
    private readonly slot: number,
  ) {}

  /**
   * Opens `file` for writing; when it does not exist, or holds another partition count
   * (left from an earlier topic of the name: a topic's count never changes), creates it
   * afresh holding `initial` (`created` says so). Its count is `initial.length`.
   */
  static async open(file: string, initial: readonly number[]): Promise<{ file: OffsetsFile; created: boolean }> {
    const count = initial.length;
    let have = await readOffsetsFile(file);
    if (have && have.offsets.length !== count) have = null;
    const created = !have;
    if (!have) {
      await fs.mkdir(path.dirname(file), { recursive: true });
      // Slot 1 starts zeroed (invalid): the file's first in-place write goes there.
      await writeFileDurable(file, Buffer.concat([encodeSlot(1, initial), Buffer.alloc(slotBytes(count))]));
      have = { sequence: 1, offsets: [...initial] };
    }
    const fh = await fs.open(file, fs.constants.O_WRONLY | fs.constants.O_DSYNC);
    return { file: new OffsetsFile(file, fh, have.sequence, slotBytes(count)), created };
  }

  /** Makes `offsets` the file's newest snapshot, durably, overwriting the older slot. */
  async write(offsets: readonly number[]): Promise<void> {
    const next = this.sequence + 1;
    const b = encodeSlot(next, offsets);
    if (b.length !== this.slot) throw new UringmqError('INTERNAL', `committed offsets ${this.file}: ${offsets.length} partitions do not fit its slots`);
    // Sequence n lives in slot (n + 1) % 2: the file is created with 1 in slot 0.
    const { bytesWritten } = await this.fh.write(b, 0, b.length, ((next + 1) % 2) * this.slot);
    if (bytesWritten !== b.length) throw new UringmqError('IO_ERROR', `short write of committed offsets ${this.file}: ${bytesWritten} of ${b.length} bytes`);
    this.sequence = next;
  }

  async close(): Promise<void> {
    await this.fh.close();
  }
}
