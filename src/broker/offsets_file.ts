/**
 * A group's state for one topic: <dir>/groups/<group>/<topic>.offs. Per partition the
 * committed offset and how far the group was delivered, and between the two which
 * offsets were acked and how often the unacked ones were delivered, so that a restart
 * neither redelivers what was acked above the committed offset, nor resets the count
 * that sends a message to the dead-letter topic, nor cuts short a nack's delay.
 *
 * A group that acks writes it every 20 ms, so a write has to be cheap. The file holds
 * two slots, each a whole snapshot with a sequence number and a CRC; a write overwrites
 * the older slot in place through a descriptor opened with O_DSYNC and kept open: one
 * write and the disk's cache flush, no fsync, rename or directory sync. (Writing a temp
 * file and renaming it, as topic.json is written, took nine file-system calls through
 * libuv's pool and two or three journal commits per write.) A write torn by a crash
 * fails its CRC and the other slot, one snapshot older, is read instead: the group
 * redelivers a little more after the crash, never less. The file itself is created
 * whole (temp file, fsync, rename, directory fsync), so it never exists half-made, and
 * its blocks are allocated then: later writes change no metadata the sync has to wait
 * for. A write covers only the 4 KiB blocks its snapshot fills, usually one.
 *
 * Slot layout, little-endian; a slot holds up to maxStateRanges(count) ranges and is
 * padded to a multiple of 4096 bytes:
 *   0 magic "UMQO" · 4 version u32 (4) · 8 sequence f64 · 16 count u32 · 20 crc32c u32
 *   24 ranges u32 · 28 run u32 (the broker run that wrote it: state.json, log_cuts.ts)
 *   32 count × { committed f64 (-1: none), next f64 }
 *   then ranges × { partition u32, deliveries u32, from f64, to f64, notBefore f64 }
 * `next` is the first offset never delivered. A range lies in [committed, next) of its
 * partition: deliveries 0 means acked; n ≥ 1 means delivered n times and not acked,
 * and due again not before `notBefore` (wall-clock ms; 0: at once) — n = 1 only with a
 * delay (a nack's); 0xffffffff (GIVEN_BACK) means not acked and no delivery counted:
 * each one it had was given back unhanded (a consumer closed with it buffered, see
 * GroupMember.leave), so its next delivery is its first. Every other offset in
 * [committed, next) was delivered once, not acked, and is due at once.
 * The CRC covers bytes 8..20 and 24 to the end of the ranges.
 * Version 3 is version 4 without GIVEN_BACK (such a message read as delivered once, a
 * delivery too many after a restart). Version 2 (24-byte ranges without notBefore, run
 * 0) and version 1 (committed offsets only, 24-byte header, 8 bytes per partition) are
 * still read too; their first write replaces the file with version 4. A reader of
 * version 3 takes a version-4 file for a damaged one: the directory format
 * (DIR_FORMAT, broker.ts) keeps such a release from opening the directory.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { UringmqError } from '../errors';
import { crc32c } from '../native';
import { makeDir, writeFileDurable } from './topic_store';

const MAGIC = 0x4f514d55; // "UMQO" read as a little-endian u32
const VERSION = 4;
/** The deliveries of an unacked range none of whose deliveries counted (version 4 on). */
const GIVEN_BACK = 0xffffffff;
const HEADER = 32;
const PARTITION_BYTES = 16;
const RANGE_BYTES = 32;
const V2_RANGE_BYTES = 24;
const BLOCK = 4096;
const V1_HEADER = 24;

/** Five characters at most: a topic name (up to 249) plus the suffix must fit the file system's 255-byte names. */
export const OFFSETS_SUFFIX = '.offs';

/**
 * An acked range (deliveries 0, not `givenBack`) or an unacked one delivered
 * `deliveries` times and due again at `notBefore` (wall-clock ms; absent or 0: at once),
 * in [committed, next) of its partition. One delivered once and due at once is not
 * written: that is the default.
 */
export interface StateRange {
  partition: number;
  from: number;
  to: number;
  deliveries: number;
  notBefore?: number;
  /** Unacked though deliveries is 0: each delivery it had was given back uncounted. */
  givenBack?: true;
}

/** What a group's file holds for one topic. */
export interface GroupSnapshot {
  /** Per partition; -1: none. */
  committed: number[];
  /** Per partition: the first offset never delivered (at least committed). */
  next: number[];
  /** Sorted by partition, then offset; disjoint. */
  ranges: StateRange[];
  /** The broker run that wrote it (0: unknown, before version 3); see log_cuts.ts. */
  run?: number;
}

/**
 * Ranges a snapshot of `count` partitions may hold: the slot's fixed size. About one
 * 24-byte range per unacked gap; past it the group keeps fewer (see groups.ts).
 */
export function maxStateRanges(count: number): number {
  return 1024 + count;
}

/** Bytes of one slot for `count` partitions. */
function slotBytes(count: number): number {
  return Math.ceil((HEADER + PARTITION_BYTES * count + RANGE_BYTES * maxStateRanges(count)) / BLOCK) * BLOCK;
}

function encodeSlot(sequence: number, s: GroupSnapshot): Buffer {
  const count = s.committed.length;
  if (s.next.length !== count) throw new UringmqError('INTERNAL', `group snapshot of ${count} committed offsets and ${s.next.length} next offsets`);
  if (s.ranges.length > maxStateRanges(count)) throw new UringmqError('INTERNAL', `group snapshot of ${s.ranges.length} ranges; at most ${maxStateRanges(count)} fit`);
  const end = HEADER + PARTITION_BYTES * count + RANGE_BYTES * s.ranges.length;
  const b = Buffer.alloc(Math.ceil(end / BLOCK) * BLOCK);
  b.writeUInt32LE(MAGIC, 0);
  b.writeUInt32LE(VERSION, 4);
  b.writeDoubleLE(sequence, 8);
  b.writeUInt32LE(count, 16);
  b.writeUInt32LE(s.ranges.length, 24);
  b.writeUInt32LE(s.run ?? 0, 28);
  for (let i = 0; i < count; i++) {
    b.writeDoubleLE(s.committed[i]!, HEADER + PARTITION_BYTES * i);
    b.writeDoubleLE(s.next[i]!, HEADER + PARTITION_BYTES * i + 8);
  }
  let pos = HEADER + PARTITION_BYTES * count;
  for (const r of s.ranges) {
    b.writeUInt32LE(r.partition, pos);
    // A count of GIVEN_BACK or more (only one read from a version-3 file could be: the
    // broker dead-letters at maxDeliveries, at most 1000) stays a count, past any limit.
    b.writeUInt32LE(r.givenBack ? GIVEN_BACK : Math.min(r.deliveries, GIVEN_BACK - 1), pos + 4);
    b.writeDoubleLE(r.from, pos + 8);
    b.writeDoubleLE(r.to, pos + 16);
    b.writeDoubleLE(r.notBefore ?? 0, pos + 24);
    pos += RANGE_BYTES;
  }
  b.writeUInt32LE(crc32c(b.subarray(24, end), crc32c(b.subarray(8, 20))), 20);
  return b;
}

/** A slot's snapshot, or null when it is not a whole, valid one (torn, zeroed, foreign). */
function decodeSlot(b: Buffer): ({ sequence: number; version: number } & GroupSnapshot) | null {
  if (b.length < V1_HEADER || b.readUInt32LE(0) !== MAGIC) return null;
  const version = b.readUInt32LE(4);
  const count = b.readUInt32LE(16);
  if (version === 1) {
    if (V1_HEADER + 8 * count > b.length) return null;
    if (crc32c(b.subarray(V1_HEADER, V1_HEADER + 8 * count), crc32c(b.subarray(8, 20))) !== b.readUInt32LE(20)) return null;
    const committed: number[] = [];
    for (let i = 0; i < count; i++) committed.push(b.readDoubleLE(V1_HEADER + 8 * i));
    return { sequence: b.readDoubleLE(8), version, committed, next: [...committed], ranges: [], run: 0 };
  }
  if (version < 2 || version > VERSION || b.length < HEADER) return null;
  const n = b.readUInt32LE(24);
  const rangeBytes = version === 2 ? V2_RANGE_BYTES : RANGE_BYTES;
  const end = HEADER + PARTITION_BYTES * count + rangeBytes * n;
  if (end > b.length) return null;
  if (crc32c(b.subarray(24, end), crc32c(b.subarray(8, 20))) !== b.readUInt32LE(20)) return null;
  const committed: number[] = [];
  const next: number[] = [];
  for (let i = 0; i < count; i++) {
    committed.push(b.readDoubleLE(HEADER + PARTITION_BYTES * i));
    next.push(b.readDoubleLE(HEADER + PARTITION_BYTES * i + 8));
  }
  const ranges: StateRange[] = [];
  for (let pos = HEADER + PARTITION_BYTES * count; pos < end; pos += rangeBytes) {
    const deliveries = b.readUInt32LE(pos + 4);
    const givenBack = version >= 4 && deliveries === GIVEN_BACK;
    const r: StateRange = { partition: b.readUInt32LE(pos), deliveries: givenBack ? 0 : deliveries, from: b.readDoubleLE(pos + 8), to: b.readDoubleLE(pos + 16) };
    if (givenBack) r.givenBack = true;
    const notBefore = version === 2 ? 0 : b.readDoubleLE(pos + 24);
    if (notBefore > 0) r.notBefore = notBefore;
    ranges.push(r);
  }
  return { sequence: b.readDoubleLE(8), version, committed, next, ranges, run: version === 2 ? 0 : b.readUInt32LE(28) };
}

/**
 * The newest valid snapshot of a group's file, its sequence number and format version;
 * null when the file does not exist. IO_ERROR when it exists and neither slot is valid.
 */
export async function readOffsetsFile(file: string): Promise<({ sequence: number; version: number } & GroupSnapshot) | null> {
  let b: Buffer;
  try {
    b = await fs.readFile(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new UringmqError('IO_ERROR', `cannot read committed offsets ${file}: ${(e as Error).message}`);
  }
  // Slot 0 starts the file whatever its length (a file cut short keeps it readable: its
  // CRC says whether it is whole); slot 1 starts halfway, in a file of full length.
  const half = b.length / 2;
  const slots = [decodeSlot(b), Number.isInteger(half) && half % BLOCK === 0 && half > 0 ? decodeSlot(b.subarray(half)) : null];
  let best: ({ sequence: number; version: number } & GroupSnapshot) | null = null;
  for (const s of slots) if (s && (!best || s.sequence > best.sequence)) best = s;
  if (!best)
    throw new UringmqError(
      'IO_ERROR',
      `corrupt committed offsets ${file}: no valid snapshot in its ${b.length} bytes (both copies damaged). ` +
        `The group is refused on this topic rather than restarted from a guess; to go on, remove the file ` +
        `(the group then starts where its consumers' 'from' says) and set its offsets with 'uringmq groups commit' if needed`,
    );
  return best;
}

/** Writes snapshots of one group's state for one topic; one write at a time (the caller chains them). */
export class OffsetsFile {
  private constructor(
    readonly file: string,
    private fh: fs.FileHandle,
    private sequence: number,
    private readonly slot: number,
    private readonly count: number,
  ) {}

  /**
   * Opens `file` for writing; when it does not exist, holds another partition count
   * (left from an earlier topic of the name: a topic's count never changes) or an older
   * format version, creates it afresh holding `initial` (`created` says so). Its count
   * is `initial.committed.length`.
   */
  static async open(file: string, initial: GroupSnapshot): Promise<{ file: OffsetsFile; created: boolean }> {
    const count = initial.committed.length;
    const have = await readOffsetsFile(file);
    let sequence = 1;
    const created = !have || have.committed.length !== count || have.version !== VERSION;
    if (created) {
      // Slot 1 starts zeroed (invalid): the file's first in-place write goes there.
      const first = encodeSlot(1, initial);
      const whole = Buffer.alloc(2 * slotBytes(count));
      first.copy(whole, 0);
      for (let attempt = 1; ; attempt++) {
        await makeDir(path.dirname(file));
        try {
          await writeFileDurable(file, whole);
          break;
        } catch (e) {
          // The group's directory was removed as empty (a topic deleted, offsets
          // expired) between the mkdir and the write: made again.
          if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || attempt === 3) throw e;
        }
      }
    } else sequence = have.sequence;
    const fh = await fs.open(file, fs.constants.O_WRONLY | fs.constants.O_DSYNC);
    return { file: new OffsetsFile(file, fh, sequence, slotBytes(count), count), created };
  }

  /** Makes `s` the file's newest snapshot, durably, overwriting the older slot. */
  async write(s: GroupSnapshot): Promise<void> {
    if (s.committed.length !== this.count) throw new UringmqError('INTERNAL', `group state ${this.file}: ${s.committed.length} partitions do not fit its slots`);
    const next = this.sequence + 1;
    const b = encodeSlot(next, s);
    // Sequence n lives in slot (n + 1) % 2: the file is created with 1 in slot 0.
    const { bytesWritten } = await this.fh.write(b, 0, b.length, ((next + 1) % 2) * this.slot);
    if (bytesWritten !== b.length) throw new UringmqError('IO_ERROR', `short write of committed offsets ${this.file}: ${bytesWritten} of ${b.length} bytes`);
    this.sequence = next;
  }

  async close(): Promise<void> {
    await this.fh.close();
  }
}
