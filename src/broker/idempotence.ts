/**
 * Idempotent producers: a producer id and a per-partition sequence number on each
 * batch let the broker recognise a retried batch (its ack was lost) and answer with
 * the original offsets instead of writing it twice. The last 64 batches of each
 * producer are remembered per partition: as many as the client's producer keeps in
 * flight by default, so after a lost connection every retried batch gets its offsets
 * back. (Kafka keeps 5 and caps an idempotent producer at 5 in flight.) An older
 * retry is still recognised and not written again, but its offsets are unknown
 * (base offset -1). Sequence numbers run modulo 2^31, as the client numbers them.
 * Bounded: at most `maxProducers` producer ids and `maxEntries` remembered batches
 * per partition, and the partition's share of the broker's maxProducerStateBatches,
 * least recently used producers dropped first. The table lives in
 * memory and in a snapshot file (producer_snapshot.ts) written at close and as the
 * partition grows; a broker that opens a partition refills it from the snapshot and
 * from the idempotent batches of the log after it (restore()), whose headers hold
 * producer id, sequence and offsets: a retry of a batch that reached the disk before
 * a crash, its ack lost with the connection, is then still recognised. Without a
 * snapshot the newest producerStateScanBytes of the log are read. (Kafka rebuilds its
 * producer state from snapshots and the log the same way.)
 *
 * The core verifies a batch (CRC, record structure) on its I/O thread, after check()
 * has let it through, so a producer's later batches are taken, pipelined, before an
 * earlier one is known to be sound. One that then fails leaves a hole: while nothing
 * after it was taken the producer may send it again (it is its expected sequence once
 * more), but once a later batch was, it can no longer be written in order, and its
 * retry is refused with OUT_OF_ORDER_SEQUENCE, never answered as a duplicate: a
 * duplicate answer says the batch is in the log. Holes outlive the window of 64 (as
 * few as there are failures, merged past KEEP_BATCHES), so an old retry answered as a
 * duplicate was written. Snapshots keep them (baseOffset -1), and an open also finds
 * them as gaps between a producer's batches in the log; a hole older than what an
 * open reads back, or before a producer's first batch read back after a crash, is
 * forgotten.
 */
import { UringmqError } from '../errors';
import type { AppendResult } from './broker';

const KEEP_BATCHES = 64;
/** Batches of one producer kept past its window while their appends are under way (see leftInFlight). */
const MAX_LEFT_IN_FLIGHT = 4096;
const SEQ_MOD = 2 ** 31;
/** The result of what is not in the log: a hole, or a marker entry (count 0: see failed()). */
const NOT_WRITTEN: AppendResult = { baseOffset: -1, count: 0 };

export interface Entry {
  baseSequence: number;
  count: number;
  /** The append's outcome; a plain result for a batch found in the log by restore(). */
  result: Promise<AppendResult> | AppendResult;
  /** Its append failed (failed()): it is not in the log. */
  failed?: boolean;
  /** A hole merged from two (addHole): written batches may lie inside it. */
  merged?: boolean;
}

/**
 * What check() says of a batch: NEW (write it, then record() it), or a duplicate with
 * the original's result (null: older than remembered, its offsets unknown) and entry
 * (absent for null). A result still a promise may yet fail: the caller then calls
 * failed() with the entry and asks check() again. Or `wait`: a retry of a hole that
 * may yet be written (see lostInOrder); the caller asks again once it settles.
 */
export const NEW = 'new';
export type IdempotenceVerdict =
  | typeof NEW
  | { duplicate: Promise<AppendResult> | AppendResult | null; entry?: Entry }
  /** A retry of a hole whose fate hangs on later batches still under way: check() again once this settles (it never rejects). */
  | { wait: Promise<unknown>; duplicate?: never; entry?: never };

/** The sequence a producer's next batch after `e` starts at. */
const nextSequence = (e: Entry): number => (e.baseSequence + e.count) % SEQ_MOD;

/** True if `seq` lies in the `count` sequences from `base`, modulo 2^31. */
const within = (seq: number, base: number, count: number): boolean => (seq - base + SEQ_MOD) % SEQ_MOD < count;

export class IdempotenceTable {
  // Map iteration order is insertion order: re-inserting on use makes it an LRU.
  private readonly producers = new Map<number, Entry[]>();
  /**
   * Per producer, failed batches older than its window that later batches were taken
   * past (see the file comment); usually none, so kept apart from `producers`.
   */
  private readonly holes = new Map<number, Entry[]>();
  /**
   * Per producer, batches pushed out of its window while their append was still in
   * flight (more than KEEP_BATCHES pipelined): a retry of one waits for its outcome
   * instead of being taken for an old, written batch. Settled ones are pruned as new
   * ones come; at most MAX_LEFT_IN_FLIGHT.
   */
  private readonly leftInFlight = new Map<number, Entry[]>();
  private entries = 0;
  /** The producer checked last: the only one, with one producer per partition, and then no LRU re-insert is needed. */
  private recent = -1;
  /** The default bound on remembered batches per partition, and so on what restore() is given. */
  static readonly MAX_ENTRIES = 65_536;
  /** Batches remembered per producer (and partition). */
  static readonly KEEP_BATCHES = KEEP_BATCHES;
  constructor(
    private readonly label: string,
    private readonly maxProducers = 10_000,
    private readonly maxEntries = IdempotenceTable.MAX_ENTRIES,
    /** The table's share of a bound over many tables (the broker's maxProducerStateBatches), read at each record(): it moves as partitions come and go. */
    private readonly share: () => number = () => Infinity,
  ) {}

  /** Batches remembered (holes and batches kept while in flight aside). */
  get size(): number {
    return this.entries;
  }

  check(producerId: number, baseSequence: number, count: number): IdempotenceVerdict {
    const entries = this.producers.get(producerId);
    if (entries && entries.length > 0) {
      this.touch(producerId, entries);
      let inside: Entry | null = null;
      for (let i = 0; i < entries.length; i++) {
        const e = entries[i]!;
        if (e.failed) {
          // A hole restored from a gap may span several batches.
          if (within(baseSequence, e.baseSequence, e.count)) return this.lostInOrder(producerId, baseSequence, entries.slice(i + 1));
          continue;
        }
        if (e.baseSequence === baseSequence) return this.retryOf(producerId, e, count);
        if (within(baseSequence, e.baseSequence, e.count)) inside = e;
      }
      // Inside a remembered batch but not at its start: not an old batch written before
      // the window (answered as a duplicate below, unwritten), but a batch cut otherwise
      // than the one sent first (or a header's count that lies). Answered as written
      // while that batch was still in flight, its records were lost if it then failed.
      if (inside) throw this.insideBatch(producerId, baseSequence, inside);
      const expected = nextSequence(entries[entries.length - 1]!);
      // Serial-number comparison: up to 2^30 behind `expected` is an old batch, ahead is a gap.
      const ahead = (baseSequence - expected + SEQ_MOD) % SEQ_MOD;
      if (ahead >= SEQ_MOD / 2) {
        // Older than the window: its append may still be under way ...
        const out = this.leftInFlight.get(producerId);
        if (out)
          for (const e of out) {
            if (e.failed || !within(baseSequence, e.baseSequence, e.count)) continue;
            if (e.baseSequence === baseSequence) return this.retryOf(producerId, e, count);
            throw this.insideBatch(producerId, baseSequence, e);
          }
        // ... else it was written, unless it is a hole.
        const holes = this.holes.get(producerId);
        if (holes)
          for (const h of holes)
            if (within(baseSequence, h.baseSequence, h.count)) return this.lostInOrder(producerId, baseSequence, h.merged ? [] : [...(out ?? []), ...entries]);
        return { duplicate: null };
      }
      if (ahead > 0)
        throw new UringmqError(
          'OUT_OF_ORDER_SEQUENCE',
          `producer ${producerId} sent sequence ${baseSequence} to ${this.label}, expected ${expected}: a batch in between is missing`,
        );
    }
    return NEW;
  }

  /**
   * Remembers a batch check() called NEW, with the result of its append. The caller
   * calls failed() if that append fails (no handler per batch here: at 10k batches/s
   * a `catch` each was a measurable part of the garbage).
   */
  record(producerId: number, baseSequence: number, count: number, result: Promise<AppendResult> | AppendResult): Entry {
    let list = this.producers.get(producerId);
    if (!list) {
      if (this.producers.size >= this.maxProducers) this.dropLeastRecent();
      this.producers.set(producerId, (list = []));
      this.recent = producerId;
    } else this.touch(producerId, list);
    const entry: Entry = { baseSequence, count, result };
    list.push(entry);
    this.entries++;
    if (list.length > KEEP_BATCHES) {
      const out = list.shift()!;
      this.entries--;
      if (out.failed) this.addHole(producerId, out);
      else if (out.result instanceof Promise) this.keepInFlight(producerId, out);
    }
    this.trim();
    return entry;
  }

  /**
   * Forgets least recently used producers down to the table's bounds (one producer's
   * window is always kept). record() does it for the table written; the broker does it
   * for every table when their share shrinks, as a table no longer written would
   * otherwise keep what it held under the larger one.
   */
  trim(): void {
    const max = Math.min(this.maxEntries, this.share());
    while (this.entries > max && this.producers.size > 1) this.dropLeastRecent();
  }

  /**
   * Remembers batches the log already holds, oldest first, as [producerId,
   * baseSequence, recordCount, baseOffset] quadruples (NativeEngine.takeProducerBatches):
   * the same bounds apply as to batches recorded while running.
   */
  restore(batches: Float64Array): void {
    for (let i = 0; i + 3 < batches.length; i += 4) {
      const id = batches[i]!;
      const seq = batches[i + 1]!;
      const count = batches[i + 2]!;
      const base = batches[i + 3]!;
      // Sequences missing between two batches of a producer were never written (the
      // broker takes a producer's batches in order): holes, as if their appends failed.
      // This finds holes of a crash's last moments, which no snapshot saw.
      const list = this.producers.get(id);
      const last = list?.[list.length - 1];
      // (Not after a hole: the snapshot puts holes from past the window first, and the
      // written batches between them and the window are no gap. After a marker, yes: it
      // says which sequence came next.)
      if (last && (!last.failed || last.count === 0)) {
        const expected = nextSequence(last);
        const gap = (seq - expected + SEQ_MOD) % SEQ_MOD;
        if (gap > 0 && gap < SEQ_MOD / 2) this.record(id, expected, gap, NOT_WRITTEN).failed = true;
      }
      const e = this.record(id, seq, count, count === 0 ? NOT_WRITTEN : { baseOffset: base, count });
      if (base < 0) e.failed = true; // a hole or a marker the snapshot kept
    }
  }

  /**
   * After restore(): holes with nothing of their producer after them are not holes
   * (a power cut took what followed them, or the snapshot ends there): their batch may
   * be sent again as new, as failed() would have let it. A marker stays: it keeps what
   * the producer expects, and so that its batches before it were written (or holes).
   */
  restored(): void {
    for (const [id, list] of this.producers) {
      while (list.length > 0 && list[list.length - 1]!.failed && list[list.length - 1]!.count > 0) {
        list.pop();
        this.entries--;
      }
      if (list.length === 0) {
        this.producers.delete(id);
        this.holes.delete(id);
        if (this.recent === id) this.recent = -1;
      }
    }
  }

  /**
   * What the table holds once every recorded append has settled, as restore() takes
   * it (least recently used producer first, each producer's holes past its window,
   * then its batches, oldest first), and where the newest of them ends: for a snapshot
   * (producer_snapshot.ts). Holes go with baseOffset -1, markers (failed(), refused())
   * with baseOffset -1 and no records; a batch whose append failed with nothing after
   * it is left out (its retry is new).
   */
  async settled(): Promise<{ batches: Float64Array; end: number }> {
    // First every append recorded so far settles, those past the window too: one that
    // fails meanwhile becomes a hole (or moves its producer's expected sequence back),
    // and the snapshot must say so — a hole left out of it reads, after a restart, as
    // a batch that was written.
    const under: Array<Promise<unknown>> = [];
    const pending = (e: Entry) => !e.failed && e.result instanceof Promise && under.push(e.result.catch(() => null));
    for (const list of this.producers.values()) list.forEach(pending);
    for (const out of this.leftInFlight.values()) out.forEach(pending);
    if (under.length) await Promise.all(under);
    const ids: number[] = [];
    const entries: Entry[] = [];
    for (const [id, list] of this.producers) {
      for (const h of this.holes.get(id) ?? []) {
        ids.push(id);
        entries.push(h);
      }
      // Markers too: a producer whose whole window failed has nothing else here, and
      // forgotten at a restart, a retry of its written batches from before that window
      // (more than KEEP_BATCHES in flight) would be taken as new and written again.
      for (const e of list) {
        ids.push(id);
        entries.push(e);
      }
    }
    // The broker puts each append's result in its entry once it settles, so only the
    // few still under way are awaited (a promise and a handler each for a full table
    // of 65,536 took up to 0.1 s of the event loop).
    const results = entries.map((e) => (e.failed ? NOT_WRITTEN : e.result instanceof Promise ? null : e.result));
    const waiting: number[] = [];
    entries.forEach((e, i) => !e.failed && e.result instanceof Promise && waiting.push(i));
    if (waiting.length) {
      const got = await Promise.all(waiting.map((i) => (entries[i]!.result as Promise<AppendResult>).catch(() => null)));
      waiting.forEach((i, k) => (results[i] = got[k] ?? null));
      // One that failed meanwhile is a hole now, or gone (failed() decides), and so may
      // be a hole taken above, when every batch after it failed meanwhile too: only
      // what still is a hole goes in. One failed() dropped (nothing of its producer
      // after it) may be sent again and written; kept as a hole, a crash after that
      // would make the next open refuse a retry of the written batch as
      // OUT_OF_ORDER_SEQUENCE.
      entries.forEach((e, i) => e.failed && (results[i] = this.isHole(ids[i]!, e) ? NOT_WRITTEN : null));
    }
    const out = new Float64Array(4 * entries.length);
    let n = 0;
    let end = 0;
    results.forEach((r, i) => {
      if (!r) return;
      const at = 4 * n++;
      out[at] = ids[i]!;
      out[at + 1] = entries[i]!.baseSequence;
      out[at + 2] = entries[i]!.count;
      out[at + 3] = r.baseOffset;
      if (r !== NOT_WRITTEN) end = Math.max(end, r.baseOffset + r.count);
    });
    // Trailing holes are dropped at restore (restored()), so a snapshot may keep them.
    return { batches: out.subarray(0, 4 * n), end };
  }

  /** True if `e`, whose append failed, is still a hole of the producer: in its window, or among (or merged into) its holes past it. */
  private isHole(producerId: number, e: Entry): boolean {
    if (!e.failed) return false;
    if (this.producers.get(producerId)?.includes(e)) return true;
    return this.holes.get(producerId)?.some((h) => h === e || within(e.baseSequence, h.baseSequence, h.count)) ?? false;
  }

  /**
   * A recorded batch's append failed. While no later batch of its producer was taken
   * it is dropped, with the failed ones before it back to the last that was not: the
   * producer's expected sequence is the first of them again, and its retry is new.
   * Otherwise it stays, marked, as a hole. Idempotent: the caller of publishBatch that
   * recorded it and a retry waiting on it may both report it.
   */
  failed(producerId: number, entry: Entry): void {
    if (entry.failed) return;
    entry.failed = true;
    const list = this.producers.get(producerId);
    if (!list) return; // the producer was dropped: nothing of it is known
    if (!list.includes(entry)) {
      // Shifted out of the window while in flight: KEEP_BATCHES were taken after it.
      const out = this.leftInFlight.get(producerId);
      const i = out ? out.indexOf(entry) : -1;
      if (i >= 0) out!.splice(i, 1);
      // Every batch taken after it failed too (the window is down to its marker, which
      // it ends at): nothing of the producer was written past it, and it is the
      // expected sequence again.
      const only = list.length === 1 ? list[0]! : null;
      if (only && only.count === 0 && nextSequence(entry) === only.baseSequence) {
        only.baseSequence = entry.baseSequence;
        this.markerPastHoles(producerId, only);
        return;
      }
      this.addHole(producerId, entry);
      return;
    }
    let earliest: Entry | null = null;
    while (list.length > 0 && list[list.length - 1]!.failed) {
      earliest = list.pop()!;
      this.entries--;
    }
    if (list.length === 0 && earliest) {
      // Every remembered batch failed: the producer still expects the first of them,
      // and a retry of an older (written) batch must not be taken as new. A marker of
      // no records keeps that sequence. A marker popped here is put back as it is, not
      // replaced: settled() may hold it while it waits, and keeps only entries still in
      // the list (a new one there left the producer out of the snapshot).
      const marker: Entry = earliest.count === 0 ? earliest : { baseSequence: earliest.baseSequence, count: 0, result: NOT_WRITTEN, failed: true };
      list.push(marker);
      this.entries++;
      this.markerPastHoles(producerId, marker);
    }
  }

  /**
   * A producer's window is down to its marker: holes that end where it starts have
   * nothing written after them either, so the marker moves back over them (their
   * batches may be sent again, in order). Not over a merged hole, which may hold
   * written batches.
   */
  private markerPastHoles(producerId: number, marker: Entry): void {
    const holes = this.holes.get(producerId);
    while (holes && holes.length > 0) {
      const h = holes[holes.length - 1]!;
      if (h.merged || nextSequence(h) !== marker.baseSequence) break;
      holes.pop();
      marker.baseSequence = h.baseSequence;
    }
    if (holes && holes.length === 0) this.holes.delete(producerId);
  }

  /**
   * A batch check() called NEW was refused before it was recorded (the broker's write
   * queue was full), and its producer will send it again. A producer the table knows
   * still expects that sequence. One it does not know gets a marker of it: otherwise a
   * later batch of the producer, sent meanwhile, would be taken as its first, and the
   * retry of this one would then read as an old, written batch (answered as a
   * duplicate, never written). With the marker the later batch is out of order until
   * this one is written.
   */
  refused(producerId: number, baseSequence: number): void {
    const list = this.producers.get(producerId);
    if (list && list.length > 0) return;
    if (!list && this.producers.size >= this.maxProducers) this.dropLeastRecent();
    const marker: Entry = { baseSequence, count: 0, result: NOT_WRITTEN, failed: true };
    if (list) list.push(marker);
    else this.producers.set(producerId, [marker]);
    this.recent = producerId;
    this.entries++;
  }

  private keepInFlight(producerId: number, entry: Entry): void {
    let out = this.leftInFlight.get(producerId);
    if (!out) this.leftInFlight.set(producerId, (out = []));
    else if (out.length >= KEEP_BATCHES) {
      // Settled ones need no keeping: written (their result is in the entry) or failed (a hole now).
      const still = out.filter((e) => !e.failed && e.result instanceof Promise);
      out.length = 0;
      out.push(...still.slice(-(MAX_LEFT_IN_FLIGHT - 1)));
    }
    out.push(entry);
  }

  private addHole(producerId: number, entry: Entry): void {
    if (entry.count === 0) return; // a marker: no sequence of its own
    let holes = this.holes.get(producerId);
    if (!holes) this.holes.set(producerId, (holes = []));
    holes.push(entry);
    if (holes.length > KEEP_BATCHES) {
      // Bounded by merging the two oldest: the written batches between them become
      // refused too (OUT_OF_ORDER_SEQUENCE), never a hole taken for a duplicate.
      const [a, b] = holes.splice(0, 2) as [Entry, Entry];
      const count = (b.baseSequence + b.count - a.baseSequence + SEQ_MOD) % SEQ_MOD;
      holes.unshift({ baseSequence: a.baseSequence, count, result: a.result, failed: true, merged: true });
    }
  }

  /** A retry of the batch `e` holds: its result, or OUT_OF_ORDER_SEQUENCE when the sequence comes back with another size. */
  private retryOf(producerId: number, e: Entry, count: number): IdempotenceVerdict {
    if (e.count !== count)
      throw new UringmqError('OUT_OF_ORDER_SEQUENCE', `producer ${producerId} reused sequence ${e.baseSequence} on ${this.label} for a batch of a different size`);
    return { duplicate: e.result, entry: e };
  }

  private insideBatch(producerId: number, baseSequence: number, e: Entry): UringmqError {
    return new UringmqError(
      'OUT_OF_ORDER_SEQUENCE',
      `producer ${producerId} sent sequence ${baseSequence} to ${this.label}, inside its batch of sequences ${e.baseSequence} to ${(e.baseSequence + e.count - 1) % SEQ_MOD}: a retry must be the same batch, whole`,
    );
  }

  /**
   * A retry of a hole, with the producer's batches taken after it. Refused for good
   * once one of them is written. While none is and some are under way, they may all
   * fail yet, and then the hole is the expected sequence again (failed()): the retry
   * waits for them (a client takes this refusal as final).
   */
  private lostInOrder(producerId: number, baseSequence: number, after: Entry[]): IdempotenceVerdict {
    const settled = (e: Entry) => !(e.result instanceof Promise);
    if (!after.some((e) => !e.failed && settled(e))) {
      const under = after.filter((e) => !e.failed && !settled(e)).map((e) => (e.result as Promise<AppendResult>).catch(() => null));
      if (under.length > 0) return { wait: Promise.all(under) };
    }
    throw new UringmqError(
      'OUT_OF_ORDER_SEQUENCE',
      `producer ${producerId} sent sequence ${baseSequence} to ${this.label} again: its first attempt failed and a later batch of this producer was written after it, so it can no longer be written in order`,
    );
  }

  /** Makes the producer the most recently used (a no-op when it already is). */
  private touch(producerId: number, list: Entry[]): void {
    if (this.recent === producerId) return;
    this.producers.delete(producerId);
    this.producers.set(producerId, list);
    this.recent = producerId;
  }

  private dropLeastRecent(): void {
    const [id, list] = this.producers.entries().next().value!;
    this.producers.delete(id);
    this.holes.delete(id);
    this.leftInFlight.delete(id);
    this.entries -= list.length;
    if (id === this.recent) this.recent = -1;
  }
}
