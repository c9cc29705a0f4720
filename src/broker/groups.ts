/**
 * Consumer groups with at-least-once delivery and per-message acks, shared by the
 * embedded consumer and the gRPC server.
 *
 * Per (group, topic) the coordinator keeps, for every partition:
 *   committed   every offset below it is acked
 *   next        the next offset never delivered before
 *   acked       acked offsets at or above `committed` (a RangeSet)
 *   inflight    delivered, not yet acked: ranges with a deadline, a delivery count and
 *               the member they went to
 *   redeliver   offsets whose deadline passed or that were nacked, due at `notBefore`
 * committed, next, acked and the delivery counts other than 1 are stored durably in
 * <dir>/groups/<group>/<topic>.offs (coalesced writes, in place: see offsets_file.ts).
 * After a restart every offset in [committed, next) not acked is redelivered with its
 * count carried on (marked as redelivered when one was counted), so a restart neither repeats what was acked
 * nor keeps a poison message from the dead-letter topic.
 * Members share the topic's partitions (round-robin over members sorted by id),
 * rebalanced whenever one joins, leaves, misses its session timeout, or stalls (lets
 * its ack deadline pass without acking anything: its partitions go to the others
 * until it makes progress again). Each member's unacked count is capped by its
 * flow-control window (src/flow, between minWindow and maxUnacked), deliveries are
 * paced by its token bucket and also wait for credit (how many messages the member
 * can buffer), so memory stays bounded on both sides. A slow member's backlog stays
 * in the log: it is read again when the member is ready.
 * A message delivered maxDeliveries times without an ack goes to the dead-letter
 * topic with the reason in its headers.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import type { Waiting } from './waiter_list';
import { UringmqError, invalid, shown, writeError } from '../errors';
import { decodeBatches, readBatchSpan, recordAsBatch, sealBatch, type DecodedRecord } from '../codec/record_batch';
import type { Broker, PartitionState, TopicState } from './broker';
import { RangeSet } from './range_set';
import { fsyncDir, removeWriteTemps } from './topic_store';
import { OFFSETS_SUFFIX, OffsetsFile, maxStateRanges, readOffsetsFile, type GroupSnapshot, type StateRange } from './offsets_file';
import { BufferPool } from '../codec/buffer_pool';
import { MAX_NACK_DELAY_MS, checkFrom, checkNackDelay, positiveInt, validateGroupName, validateOffset, validateTopicName } from './validate';
import { FlowController, resolveFlowOptions, type ConsumerFeedback, type FlowOptions, type FlowSnapshot } from '../flow/controller';

export interface GroupJoinOptions {
  topic: string;
  group: string;
  /** Where a partition without a committed offset starts (default 'latest'). */
  from?: 'earliest' | 'latest' | { offset: number };
  /** A delivered message not acked within this time is redelivered (default 30 s). */
  ackDeadlineMs?: number;
  /** Most messages delivered to this member and not yet acked: the flow-control window's ceiling (default 512). */
  maxUnacked?: number;
  /** Flow-control parameters (docs/FLOW-CONTROL.md). */
  flow?: FlowOptions;
  /** After this many deliveries without an ack a message goes to the DLQ (default 5). */
  maxDeliveries?: number;
  /** Dead-letter topic (default `<topic>.dlq`, created with one partition on first use). */
  deadLetterTopic?: string;
  /** A member silent for this long is removed and its messages redelivered (default 10 s). */
  sessionTimeoutMs?: number;
}

/**
 * The redelivery queue's clock (nack delays, `Redelivery.notBefore`), in ms: the wall
 * clock's reading at the process's start, then monotonic. A step of the wall clock
 * (an hour back) would otherwise hold every delayed message that much longer, or
 * release them all at once. The group's file keeps due times on the wall clock:
 * `snapshot` and `restoreDeliveries` convert with the offset between the two clocks
 * of their moment.
 */
const steadyNow = (): number => performance.timeOrigin + performance.now();

export interface RedeliveredRecord extends DecodedRecord {
  partition: number;
  deliveryCount: number;
}

/** Where a member's messages go: the embedded consumer or a gRPC stream. */
export interface DeliverySink {
  /**
   * True when deliverBatches copies `raw` before it returns (the gRPC stream
   * serializes it): the coordinator then reads into pooled buffers it reuses.
   */
  readonly copiesBatches?: boolean;
  /**
   * Whole batches; only offsets in [from, to) belong to this delivery. Fresh messages,
   * or (deliveryCount > 1) a run redelivered together, each delivered that often.
   */
  deliverBatches(partition: number, raw: Buffer, from: number, to: number, deliveryCount?: number, resets?: number): void;
  /**
   * Redeliveries (deliveryCount > 1), as decoded records of one partition. `resets`
   * (both methods): the partition's commitOffset count when delivered; an ack or nack
   * that names it is ignored once a commitOffset has moved the partition since.
   */
  deliverRecords(records: RedeliveredRecord[], resets?: number): void;
  assign(partitions: number[], generation: number, memberId: string): void;
  /**
   * True while the sink holds as many delivered bytes as it should (a gRPC client that
   * does not read its stream): nothing more is delivered until it is false again, and
   * the sink then calls the member's wake(). Absent: never.
   */
  backlogged?(): boolean;
  /** The member was removed (session timeout, topic deleted, broker closing). */
  end(err?: UringmqError): void;
}

/** Delivered offsets [from, to) of a partition, given back unhanded (see GroupMember.leave). */
export interface Returned {
  partition: number;
  from: number;
  to: number;
  deliveryCount: number;
  /** The partition's commitOffset count when delivered (as for ack): a range from before a move since is ignored. */
  resets?: number;
}

interface Inflight {
  from: number;
  to: number;
  /** performance.now() ms (monotonic): a step of the wall clock must not move it (see GroupMember.lastSeen). */
  deadline: number;
  deliveryCount: number;
  member: GroupMember;
}

interface Redelivery {
  offset: number;
  deliveryCount: number; // deliveries so far
  notBefore: number;
  /** notBefore came from the group's file, maybe from a merged range (partitionRanges): it merges again only with an equal one, so a delay does not grow with each restart */
  restored?: true;
  /** Bound for the dead-letter topic: why, kept by each retry of the move (x-uringmq-reason). */
  deadLetterReason?: string;
  /** The dead-letter topic a waiting move goes to (its member's, who may have left since). */
  deadLetterTopic?: string;
  /** Failed moves of this message so far: its next waits longer. */
  deadLetterAttempts?: number;
}

/**
 * A partition's redeliveries: those due, taken lowest offset first, and those waiting
 * out a nack's delay. A member that leaves or a restart can put a whole window here
 * (up to maxUnacked, a million), and a pass takes at most a few hundred: taking them
 * must not cost the length of the queue each time. The due ones are a min-heap on the
 * offset, not a list in arrival order: a pass sorts what it takes, but with more due
 * than a pass takes, arrival order let a later pass deliver offsets below what an
 * earlier one had (nacks of 900..999 then of 0..599: 0..411 and 900..999, then
 * 413..599), and a consumer is promised offset order within a partition.
 */
class RedeliveryQueue {
  /** Due ones, a binary min-heap on offset (an array sorted ascending is one: a window put back in order costs no sifting). */
  private ready: Redelivery[] = [];
  private delayed: Redelivery[] = [];
  /** The earliest notBefore among the delayed ones: until then none is due. */
  private delayedUntil = Infinity;
  /**
   * Those bound for the dead-letter topic whose move waits (for a free move, or after a
   * failed one), a min-heap on (notBefore, offset). Apart from the due ones: among them
   * they sat at the lowest offsets, and while moves kept failing (or were all under
   * way) every pass took them first and put them back, and the redeliveries above them
   * never went out.
   */
  private dead: Redelivery[] = [];

  get length(): number {
    return this.ready.length + this.delayed.length + this.dead.length;
  }

  push(e: Redelivery, now: number): void {
    if (e.notBefore <= now) this.pushReady(e);
    else {
      this.delayed.push(e);
      if (e.notBefore < this.delayedUntil) this.delayedUntil = e.notBefore;
    }
  }

  /** Whether any is due at `now` (moving those whose delay ran out to the due ones). */
  hasDue(now: number): boolean {
    if (this.delayedUntil <= now) {
      const still: Redelivery[] = [];
      let until = Infinity;
      for (const e of this.delayed) {
        if (e.notBefore <= now) this.pushReady(e);
        else {
          still.push(e);
          if (e.notBefore < until) until = e.notBefore;
        }
      }
      this.delayed = still;
      this.delayedUntil = until;
    }
    return this.ready.length > 0;
  }

  /** Takes up to `max` due ones, lowest offset first. */
  takeDue(now: number, max: number): Redelivery[] {
    if (!this.hasDue(now)) return [];
    const out: Redelivery[] = [];
    while (out.length < max && this.ready.length > 0) out.push(this.popReady());
    return out;
  }

  /** Takes, up to `max`, the due ones that go on from `offset` (the next offset, and so on) with `deliveryCount`. */
  takeRunAfter(offset: number, deliveryCount: number, max: number): Redelivery[] {
    const out: Redelivery[] = [];
    let next = offset + 1;
    while (out.length < max && this.ready.length > 0) {
      const e = this.ready[0]!;
      if (e.offset !== next || e.deliveryCount !== deliveryCount) break;
      out.push(this.popReady());
      next++;
    }
    return out;
  }

  /** Puts taken ones back among the due: by offset, so below what is queued they go first next time. */
  putBack(entries: Redelivery[]): void {
    for (const e of entries) this.pushReady(e);
  }

  /** Keeps only those `keep` accepts. */
  retain(keep: (e: Redelivery) => boolean): void {
    this.ready = heapify(this.ready.filter(keep), byOffset);
    this.delayed = this.delayed.filter(keep);
    this.delayedUntil = this.delayed.reduce((t, e) => Math.min(t, e.notBefore), Infinity);
    this.dead = heapify(this.dead.filter(keep), byDueThenOffset);
  }

  clear(): void {
    this.ready = [];
    this.delayed = [];
    this.delayedUntil = Infinity;
    this.dead = [];
  }

  /** Each one waiting for redelivery (not those for the dead-letter topic), in no particular order. */
  forEach(f: (e: Redelivery) => void): void {
    for (const e of this.ready) f(e);
    for (const e of this.delayed) f(e);
  }

  /** A message for the dead-letter topic whose move waits until e.notBefore. */
  pushDead(e: Redelivery): void {
    heapPush(this.dead, e, byDueThenOffset);
  }

  /** When the first waiting dead-letter move may start (Infinity: none waits). */
  get deadDueAt(): number {
    return this.dead.length > 0 ? this.dead[0]!.notBefore : Infinity;
  }

  /** The waiting dead-letter move due first, if it is due at `now`. */
  takeDeadDue(now: number): Redelivery | undefined {
    if (this.dead.length === 0 || this.dead[0]!.notBefore > now) return undefined;
    return heapPop(this.dead, byDueThenOffset);
  }

  /** Each message waiting for its dead-letter move, in no particular order. */
  forEachDead(f: (e: Redelivery) => void): void {
    for (const e of this.dead) f(e);
  }

  private pushReady(e: Redelivery): void {
    heapPush(this.ready, e, byOffset);
  }

  private popReady(): Redelivery {
    return heapPop(this.ready, byOffset);
  }
}

/** The two orders of RedeliveryQueue's heaps: whether `a` comes before `b`. */
type HeapOrder = (a: Redelivery, b: Redelivery) => boolean;
/** The due ones: lowest offset first. */
const byOffset: HeapOrder = (a, b) => a.offset < b.offset;
/** Whether `offset` of the partition counts as handled for the group (acked, or below its committed offset). */
function handledAlready(ps: PartitionGroupState, offset: number): boolean {
  return offset < ps.committed || ps.acked.has(offset);
}

/** The dead-letter moves waiting: the earliest due first, then the lowest offset. */
const byDueThenOffset: HeapOrder = (a, b) => a.notBefore < b.notBefore || (a.notBefore === b.notBefore && a.offset < b.offset);

/** A binary min-heap in an array, by `before`. */
function heapPush(h: Redelivery[], e: Redelivery, before: HeapOrder): void {
  let i = h.push(e) - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (!before(e, h[parent]!)) break;
    h[i] = h[parent]!;
    i = parent;
  }
  h[i] = e;
}

/** Takes the first of a non-empty heap. */
function heapPop(h: Redelivery[], before: HeapOrder): Redelivery {
  const top = h[0]!;
  const last = h.pop()!;
  if (h.length > 0) {
    h[0] = last;
    siftDown(h, 0, before);
  }
  return top;
}

/** Makes `h` a heap in place (and returns it). */
function heapify(h: Redelivery[], before: HeapOrder): Redelivery[] {
  for (let i = (h.length >> 1) - 1; i >= 0; i--) siftDown(h, i, before);
  return h;
}

function siftDown(h: Redelivery[], i: number, before: HeapOrder): void {
  const e = h[i]!;
  for (;;) {
    let child = 2 * i + 1;
    if (child >= h.length) break;
    if (child + 1 < h.length && before(h[child + 1]!, h[child]!)) child++;
    if (!before(h[child]!, e)) break;
    h[i] = h[child]!;
    i = child;
  }
  h[i] = e;
}

class PartitionGroupState {
  committed = 0;
  next = 0;
  /**
   * No committed offset yet: the group was made by a commitOffset of another partition.
   * The first member's `from` sets it (written as -1, as a partition a file lacks).
   */
  unset = false;
  readonly acked = new RangeSet();
  inflight: Inflight[] = [];
  readonly redeliver = new RedeliveryQueue();
  /** redeliver's length after its last prune of acked entries (see deliverFresh): no second prune until it changes. */
  redeliverPruned = -1;
  owner: GroupMember | null = null;
  /** Bumped by commitOffset (a rewind or skip drops in-flight state): reads under way are stale. */
  resets = 0;
  /** The next read, started while the previous delivery travels (at most one per partition). */
  readAhead: { from: number; raw: Promise<Buffer | null> } | null = null;
  /** Redeliveries taken from `redeliver` while their records are read (by this owner, and a previous one still reading): still unacked, and in the snapshot. Reads begun before the last commitOffset are not here (see there). */
  readonly redelivering = new Set<Redelivery[]>();
  /** An ack may have left fully acked ranges in `inflight`: the sweep drops them (see ack()). */
  inflightAcked = false;
  /**
   * Offsets on their way to the dead-letter topic → deliveries so far: still unacked, and
   * in the snapshot. Moves begun before the last commitOffset are not here (see there).
   */
  readonly deadLettering = new Map<number, number>();
  /** When a failed dead-letter append of this partition was last said (Date.now()): once a minute at most. */
  deadLetterWarnedAt = 0;
  /** When a dead-letter move that failed or was skipped for its own record was last said (Date.now()): once a minute at most. */
  deadLetterRecordWarnedAt = 0;
  /**
   * After a failed dead-letter append (steady clock): no move of this partition starts
   * before deadLetterPausedUntil, and then one at a time until one succeeds, each
   * failure doubling the pause (deadLetterPauseMs, 0 while moves succeed). A dead-letter
   * topic that keeps failing (a full disk, a fenced partition) is tried about once per
   * pause, not once a second for each message bound for it. A move that fails for its
   * own record (removed by retention, or unreadable) says nothing about the dead-letter
   * topic and pauses nothing: the other records move on.
   */
  deadLetterPausedUntil = 0;
  deadLetterPauseMs = 0;
  constructor(readonly index: number) {}
}

const DEFAULTS = { ackDeadlineMs: 30_000, maxUnacked: 512, maxDeliveries: 5, sessionTimeoutMs: 10_000 };
const MIN_READ_BYTES = 64 * 1024;
const MAX_READ_BYTES = 1024 * 1024; // bigger messages cost the client page faults to assemble
const MAX_REDELIVERIES_PER_PASS = 256;

/** Bytes to read for about `bytes` of records, within bounds. */
function readSize(bytes: number): number {
  return Math.min(MAX_READ_BYTES, Math.max(MIN_READ_BYTES, Math.ceil(bytes)));
}
/** Consecutive redeliveries of one count from which they go as whole batches, not decoded records. */
const MIN_BATCHED_REDELIVERY = 32;
/** Moves to the dead-letter topic under way at once per partition (each holds a read batch). */
const MAX_DEAD_LETTER_MOVES = 64;
/** The first wait after a failed dead-letter move (of the message, and of its partition's next moves), doubling with each failure up to the most. */
const DEAD_LETTER_RETRY_MS = 1000;
const DEAD_LETTER_RETRY_MAX_MS = 30_000;
/** The fewest ranges a member's `released` set of a partition holds before acked ones are dropped from it. */
const RELEASED_PRUNE_MIN = 4096;
/**
 * Unacked offsets a partition's state may bring back from the group's file; past it
 * (only a damaged file could hold more) the partition restarts at its committed offset
 * as files without delivery state do. Members hold at most maxUnacked (≤ 1,000,000) each.
 */
const MAX_RESTORED_UNACKED = 1 << 22;
/**
 * Redeliveries a partition holds at most before its fresh messages wait: each is in
 * memory (and each a gap in the acked ranges, and in every snapshot the group writes)
 * until it is due, and a nack's delay frees the member's window for more, so a member
 * nacking with a long delay would otherwise pile them up without bound.
 */
const MAX_WAITING_REDELIVERIES = 65_536;
/** How much later than its nack asked a message may be redelivered after a restart, so that a run of nacks is one range in the file. */
const MERGED_DELAY_SLACK_MS = 1000;

/** A group with no members is dropped from memory after this long (reloaded from its file on the next join). */
const IDLE_GROUP_MS = 60_000;
/** Open offsets files kept at most: one descriptor each, and a process has a limited number. */
const MAX_OPEN_OFFSET_FILES = 128;
/** How often the sweep (deadlines, session timeouts, due redeliveries) runs. */
const SWEEP_MS = 50;

class GroupState {
  readonly members = new Map<string, GroupMember>();
  generation = 0;
  dirty = false;
  /** A flush scheduled (coalescing acks for 20 ms) or running. */
  flushing: Promise<void> | null = null;
  /** The last write of the offsets file: every write goes after it, so two never overlap. */
  writing: Promise<void> = Promise.resolve();
  /** Its topic was deleted, or the group itself (`removed`): nothing may write the offsets file again. */
  deleted = false;
  /** deleteGroup took it out of memory: a join or commit that found it goes to the group made anew. */
  removed = false;
  /** How long the last snapshot took to build, ms: writes are spaced to keep that a small share of the time. */
  snapshotMs = 0;
  /** When the last member left (for dropping idle groups). */
  idleSince = Date.now();
  /** When its offsets file's mtime was last moved while it had members (sweep). */
  touchedAt = Date.now();
  /** Offset writes and dead-letter moves under way: an idle group is kept until they are done. */
  busy = 0;
  /** The dead-letter moves under way: close() waits for them before its last write. */
  readonly moves = new Set<Promise<void>>();
  /** The offsets file, open for writing once the group's first write made it (closed again when the coordinator needs the descriptor). */
  out: OffsetsFile | null = null;
  /** A write through `out` is under way: the file cannot be closed to make room until it ends. */
  outWriting = false;
  /** Dropped from memory (idle) or the broker closed: nothing writes its file from this object again. */
  retired = false;
  /** A write of its file failed and was said (writeFailed): not again until one succeeds. */
  writeWarned = false;
  constructor(
    readonly group: string,
    readonly topic: string,
    readonly parts: PartitionGroupState[],
    readonly file: string,
    /** Where versions before the .offs file kept the same offsets as JSON; removed once the new file exists. */
    readonly legacyFile: string,
  ) {}
}

let memberSeq = 0;

export class GroupMember {
  readonly id: string;
  credits: number;
  /** The most credit the member has held: the size of the buffer it says it has (see refill). */
  private peakCredits: number;
  unacked = 0;
  /**
   * performance.now() ms, as the in-flight deadlines: monotonic. On the wall clock, a
   * step back (NTP, a VM resumed) held every unacked message past its ack deadline and
   * every silent member past its session timeout for as long as the step, and a step
   * forward expired every live member at once and took back what it held.
   */
  lastSeen = performance.now();
  /** last ack, nack or credit (performance.now()): a member that lets its ack deadline pass without any is stalled */
  lastProgress = performance.now();
  stalled = false;
  alive = true;
  partitions: number[] = [];
  /**
   * @internal Per partition: offsets delivered to this member and taken back unacked
   * (deadline, stall, its nack, commitOffset), at or above the committed offset when
   * last pruned. Its late acks of them are taken while nobody else holds them and
   * ignored once someone does; acks of offsets never delivered to it are refused.
   */
  readonly released = new Map<number, RangeSet>();
  /** Per partition: the size `released` may grow to before what was acked since is dropped from it (release()). */
  readonly releasedPruneAt = new Map<number, number>();
  /**
   * @internal Per partition: offsets delivered to this member before a commitOffset
   * rewound or skipped the partition. Its late acks of them are ignored (never
   * applied: the rewind asked for them to be processed again), and not errors.
   */
  readonly voided = new Map<number, RangeSet>();
  /** @internal Per partition: the end of the highest offsets delivered to this member (what a commitOffset voids). */
  readonly deliveredEnd = new Map<number, number>();
  /**
   * @internal Per partition: the partition's `resets` that `released` and `voided` were
   * last brought up to. A member that left before a commitOffset is not among those
   * it updates: its late acks catch up then (catchUpResets).
   */
  readonly resetsSeen = new Map<number, number>();
  /** running estimate, to size reads to the member's allowance */
  bytesPerRecord = 256;
  readonly flow: FlowController;
  private wakeFn: (() => void) | null = null;
  private tokenTimer: NodeJS.Timeout | null = null;
  private idleTimer: NodeJS.Timeout | null = null;
  private readonly wakeBound = (): void => this.wake();
  /** This member's places in its partitions' waiter lists during idle(), reused. */
  private readonly waiting: Waiting[] = [];
  private rr = 0;

  /** @internal */
  constructor(
    private readonly coord: GroupCoordinator,
    /** @internal */ readonly state: GroupState,
    /** @internal */ readonly sink: DeliverySink,
    readonly opts: Required<Omit<GroupJoinOptions, 'from' | 'topic' | 'group' | 'flow'>>,
    flowOpts: FlowOptions | undefined,
    initialCredit: number,
    idHint?: string,
  ) {
    this.id = idHint ?? `${process.pid.toString(36)}-${Date.now().toString(36)}-${(memberSeq++).toString(36)}`;
    this.credits = initialCredit;
    this.peakCredits = initialCredit;
    this.flow = new FlowController(resolveFlowOptions(flowOpts, opts.maxUnacked));
  }

  get group(): string {
    return this.state.group;
  }
  get topic(): string {
    return this.state.topic;
  }

  /** The member can take n more messages. */
  credit(n: number): void {
    if (!Number.isInteger(n) || n < 0) throw invalid('credit must be a non-negative integer');
    this.credits = Math.min(this.credits + n, 1 << 30);
    if (this.credits > this.peakCredits) this.peakCredits = this.credits;
    this.progress();
    // canDeliver(), not credits >= refill: with nothing unacked any credit is enough, and
    // a client that drained and acked its buffer and then asks for one message at a time
    // was sent each only when the pump's idle timeout (1 s) came round.
    if (this.canDeliver()) this.wake();
  }

  heartbeat(): void {
    this.lastSeen = performance.now();
  }

  /** What the consumer measured of itself (processed msgs/s, processing latency). */
  feedback(f: ConsumerFeedback): void {
    this.lastSeen = performance.now();
    this.flow.report(f);
  }

  /** The current flow-control window: most messages unacked at once. */
  get window(): number {
    return this.flow.window;
  }

  get flowState(): FlowSnapshot {
    return this.flow.snapshot;
  }

  /**
   * Deliveries resume only once this many credits and window slots are free (or
   * nothing is unacked): one message acked must not trigger a read for one message.
   * A quarter of the window, and of the most credit the member has held: a client
   * that buffers 10 messages and returns credit as it handles them must not wait
   * for credit it never grants (it would get messages only each time it drained).
   */
  get refill(): number {
    return Math.max(1, Math.min(256, Math.floor(this.window / 4), Math.floor(this.peakCredits / 4)));
  }

  /** @internal `n` more messages went out to it: they take credit, window and tokens. */
  delivered(n: number): void {
    this.unacked += n;
    this.credits -= n;
    this.flow.bucket.take(n);
    this.flow.onDelivered(n);
  }

  /** Messages this member may be sent now: credit, window and tokens. */
  allowance(): number {
    return Math.min(this.credits, this.window - this.unacked, this.flow.bucket.available());
  }

  /** @internal */
  canDeliver(): boolean {
    const w = this.window;
    if (this.credits <= 0 || this.unacked >= w) return false;
    if (this.sink.backlogged?.()) return false; // the sink wakes the member once it drained
    if (!(this.unacked === 0 || (this.credits >= this.refill && w - this.unacked >= this.refill))) return false;
    const need = this.unacked === 0 ? 1 : this.refill;
    if (this.flow.bucket.available() >= need) return true;
    // Paced: come back when the bucket holds enough.
    if (!this.tokenTimer && this.alive) {
      this.tokenTimer = setTimeout(() => {
        this.tokenTimer = null;
        this.wake();
      }, Math.max(1, this.flow.bucket.msUntil(need)));
      this.tokenTimer.unref();
    }
    return false;
  }

  /**
   * Acks [from, to) of a partition. Every offset must be outstanding to this member
   * (delivered to it, not yet acked), already acked (ignored), or delivered to it before
   * and taken back (deadline, stall, nack): taken as an ack while it waits for
   * redelivery, ignored once another member holds it. FAILED_PRECONDITION for anything
   * else (never delivered to it: to another member, or not at all), with nothing applied.
   */
  ack(partition: number, from: number, to: number, resets?: number): void {
    this.progress();
    this.coord.ack(this, partition, from, to, resets);
  }

  /**
   * Throws what ack() would for this range, acking nothing (the member only catches up
   * with commitOffsets since its last ack): a message of several ranges is checked
   * whole first. A range from before a commitOffset moved the partition (`resets`
   * stale), which ack() ignores, is only checked for being a range.
   */
  checkAck(partition: number, from: number, to: number, resets?: number): void {
    this.coord.checkAck(this, partition, from, to, resets);
  }

  /**
   * Returns a message for redelivery after delayMs (counts as a delivery attempt).
   * deliveryCount > 0: that of the delivery nacked; a nack of an earlier one is ignored.
   */
  nack(partition: number, offset: number, delayMs = 0, deliveryCount = 0, resets?: number): void {
    this.progress();
    this.coord.nack(this, partition, offset, delayMs, deliveryCount, resets);
  }

  private progress(): void {
    const now = performance.now();
    this.lastSeen = now;
    this.lastProgress = now;
    if (this.stalled) this.coord.unstall(this);
  }

  /**
   * Leaves the group; unacked messages go back for redelivery at once. `unhanded`: what
   * it was delivered but never handed to its app (a close with them still buffered),
   * redelivered with that delivery not counted; checked first (INVALID_ARGUMENT, and
   * the member stays). Leaving with them is the only way to give them back: a member
   * that stayed would be sent them again at once.
   */
  leave(unhanded?: readonly Returned[]): void {
    if (unhanded && unhanded.length > 0) this.coord.giveBack(this, unhanded);
    this.coord.leave(this);
  }

  /** @internal */
  stopTimers(): void {
    if (this.tokenTimer) clearTimeout(this.tokenTimer);
    this.tokenTimer = null;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  /** @internal */
  wake(): void {
    const f = this.wakeFn;
    this.wakeFn = null;
    f?.();
  }

  /** @internal */
  sleep(): Promise<void> {
    return new Promise((resolve) => (this.wakeFn = resolve));
  }

  /**
   * @internal Sleeps until wake(): new data in one of `parts`, credit, an ack, a
   * rebalance, or `timeoutMs` at most. The waker and the timer are the member's own,
   * reused for every wait: the delivery loop waits once per group-commit cycle when
   * a consumer keeps up, and a fresh closure, timer and race per wait were a good
   * part of the server's garbage at 10k msgs/s.
   */
  async idle(parts: readonly PartitionState[], timeoutMs: number): Promise<void> {
    const waiting = this.waiting;
    for (const ps of parts) waiting.push(ps.dataWaiters.add(this.wakeBound));
    if (this.idleTimer) this.idleTimer.refresh();
    else this.idleTimer = setTimeout(this.wakeBound, timeoutMs);
    try {
      await this.sleep();
    } finally {
      for (let i = 0; i < parts.length; i++) parts[i]!.dataWaiters.remove(waiting[i]!);
      waiting.length = 0;
    }
  }

  /** @internal Where the delivery loop starts its pass over the partitions, rotating so none starves. */
  nextStart(n: number): number {
    this.rr = n === 0 ? 0 : (this.rr + 1) % n;
    return this.rr;
  }
}

export interface GroupDescription {
  group: string;
  generation: number;
  members: Array<{
    memberId: string;
    partitions: number[];
    unacked: number;
    /** flow-control window (most unacked messages at once) */
    window: number;
    /** msgs/s deliveries are paced at; Infinity when not paced */
    tokenRate: number;
    /** processed msgs/s, as the consumer reported it (or as the broker measured acks) */
    reportedRate: number;
    /** processing latency, ms, as reported (or delivery → ack as measured) */
    latencyMs: number;
    /** messages of its partitions not yet acked by the group */
    lag: number;
    /** let its ack deadline pass without acking anything: its partitions went to others */
    stalled: boolean;
  }>;
  committed: number[];
  lag: number[];
}

/**
 * The (group, topic) pairs that have committed offsets in the data directory (an
 * offsets file, or an older version's JSON): what BrokerOptions.maxGroups bounds.
 * Counted at open from the directory, whatever their number; a new pair is added when
 * its first write is about to make its file, and leaves when its files are removed
 * (deleteGroup, retention, deleteTopic).
 */
export class StoredGroups {
  /** Per topic, its groups: a deleted topic's go at once. */
  private readonly byTopic = new Map<string, Set<string>>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  has(group: string, topic: string): boolean {
    return this.byTopic.get(topic)?.has(group) ?? false;
  }

  add(group: string, topic: string): void {
    let groups = this.byTopic.get(topic);
    if (!groups) this.byTopic.set(topic, (groups = new Set()));
    if (groups.has(group)) return;
    groups.add(group);
    this.count++;
  }

  delete(group: string, topic: string): void {
    const groups = this.byTopic.get(topic);
    if (!groups?.delete(group)) return;
    this.count--;
    if (groups.size === 0) this.byTopic.delete(topic);
  }

  /**
   * What `groupsDir` holds: one listing of each group's directory (at open, so the
   * temp files of writes a crash interrupted go first). What cannot be listed
   * counts nothing, with a warning: the broker opens all the same (the groups' own
   * operations report it), and only new groups are counted against maxGroups meanwhile.
   */
  static async scan(groupsDir: string): Promise<StoredGroups> {
    const stored = new StoredGroups();
    let dirs: import('node:fs').Dirent[];
    try {
      dirs = await fs.readdir(groupsDir, { withFileTypes: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
        process.emitWarning(`cannot list ${groupsDir} (${(e as Error).message}): the groups there are not counted against maxGroups in this run`, 'UringmqWarning');
      return stored;
    }
    for (const d of dirs) {
      if (!d.isDirectory()) continue;
      await removeWriteTemps(path.join(groupsDir, d.name)); // offsets files' first writes
      const files = await fs.readdir(path.join(groupsDir, d.name)).catch(() => [] as string[]);
      for (const f of files) {
        const topic = offsetsFileTopic(f);
        if (topic !== null) stored.add(d.name, topic);
      }
    }
    return stored;
  }
}

export class GroupCoordinator {
  private readonly groups = new Map<string, GroupState>();
  private readonly loading = new Map<string, Promise<GroupState>>();
  private readonly timer: NodeJS.Timeout;
  private closed = false;
  /** When the sweep last ran (performance.now()): how late the next one is tells how long the process could not run. */
  private lastSweep = performance.now();
  /** The last sweep came late and expired no session (see sweep): the next one does, late or not. */
  private expiryDeferred = false;
  /** close() has begun: dead-letter moves are no longer started. */
  private closing = false;
  private readonly dlqReady = new Map<string, Promise<void>>();
  /** Messages moved to a dead-letter topic since open (uringmq_dead_letter_moves_total). */
  deadLetterMoves = 0;
  /** Attempts to move one that failed since open, each retried later (uringmq_dead_letter_failures_total). */
  deadLetterFailures = 0;
  /** Dead-letter moves that found their record gone from the log (retention): skipped, as the group skips what retention removed (uringmq_dead_letter_skipped_total). */
  deadLetterSkips = 0;
  /** (group, topic) keys whose committed-offsets file is being removed (expireGroups) or touched (a group leaving memory): load() waits, expireGroups() skips them. */
  private readonly fileBusy = new Map<string, Promise<void>>();
  /**
   * How often a group with members touches its offsets file (set with groupRetentionMs):
   * retention counts from the file's mtime, and after a crash nothing else says the
   * group was in use up to it.
   */
  touchEveryMs = 3_600_000;
  /** @internal How long a group without members stays in memory (tests shorten it). */
  idleGroupMs = IDLE_GROUP_MS;
  /** @internal Redeliveries a partition may have waiting before fresh deliveries pause (tests lower it). */
  maxWaitingRedeliveries = MAX_WAITING_REDELIVERIES;

  /** @internal Resolves once no offsets file is being touched or removed (a group that left memory touches its file after it is gone from describe()). */
  async filesSettled(): Promise<void> {
    while (this.fileBusy.size > 0) await Promise.all(this.fileBusy.values());
  }
  /** @internal How many offsets files stay open for writing at most (tests shorten it). */
  maxOpenOffsetFiles = MAX_OPEN_OFFSET_FILES;
  /** Groups whose offsets file is open, least recently written first. */
  private readonly openFiles = new Set<GroupState>();
  /**
   * Offsets files open or being opened: the count the cap bounds. A slot is taken before
   * the open and given back once the close has finished, so files being opened or
   * closed count too (openFiles alone let many concurrent opens past the cap).
   */
  private fileSlots = 0;
  /** Writers waiting for a slot while every open file is being written: woken when a write ends or a file closes. */
  private slotWaiters: Array<() => void> = [];
  /** read buffers for sinks that copy: reused instead of a fresh external buffer per read */
  private readonly readPool = new BufferPool(16 * 1024 * 1024);
  /** readBatchSpan's answer, reused: the delivery loop is synchronous between the reads and the send. */
  private readonly span = { length: 0, nextOffset: 0 };
  /** wholeBatches' answer, reused likewise. */
  private readonly cut = { pos: 0, to: 0 };

  constructor(private readonly broker: Broker) {
    this.timer = setInterval(() => this.sweep(), SWEEP_MS);
    this.timer.unref();
  }

  private get dir(): string {
    return path.join(this.broker.dir, 'groups');
  }

  /**
   * The checks a join makes before it touches anything, for a caller that wants a bad
   * option refused when the consumer is made rather than at its first iteration.
   */
  checkJoin(opts: GroupJoinOptions): void {
    this.checkedJoinOptions(opts);
  }

  private checkedJoinOptions(opts: GroupJoinOptions) {
    if (opts === null || typeof opts !== 'object') throw invalid('consumer options must be an object');
    const group = validateGroupName(opts.group);
    const t = this.broker.topicState(opts.topic);
    const o = {
      ackDeadlineMs: opts.ackDeadlineMs === undefined ? DEFAULTS.ackDeadlineMs : positiveInt(opts.ackDeadlineMs, 'ackDeadlineMs', 86_400_000),
      maxUnacked: opts.maxUnacked === undefined ? DEFAULTS.maxUnacked : positiveInt(opts.maxUnacked, 'maxUnacked', 1_000_000),
      maxDeliveries: opts.maxDeliveries === undefined ? DEFAULTS.maxDeliveries : positiveInt(opts.maxDeliveries, 'maxDeliveries', 1000),
      // null refused as for the other options (and by the remote client), not taken for the default
      deadLetterTopic: opts.deadLetterTopic === undefined ? `${t.name}.dlq` : opts.deadLetterTopic,
      sessionTimeoutMs: opts.sessionTimeoutMs === undefined ? DEFAULTS.sessionTimeoutMs : positiveInt(opts.sessionTimeoutMs, 'sessionTimeoutMs', 3_600_000),
    };
    if (opts.deadLetterTopic === undefined && o.deadLetterTopic.length > 249)
      throw invalid(`the default dead-letter topic ${t.name}.dlq would be longer than 249 characters: set deadLetterTopic`);
    validateTopicName(o.deadLetterTopic);
    if (o.deadLetterTopic === t.name) throw invalid(`deadLetterTopic must differ from the topic itself (${t.name})`);
    const from = checkFrom(opts.from);
    // Checked before the load: a new group's load writes its starting offsets, so a
    // join refused after it (the member's flow options) left a group at `from` (by
    // default the end), and a later valid consumer from 'earliest' missed the rest.
    resolveFlowOptions(opts.flow, o.maxUnacked);
    return { group, t, o, from };
  }

  /** Joins a group; deliveries start right away through `sink`. */
  async join(opts: GroupJoinOptions, sink: DeliverySink, initialCredit?: number, memberId?: string): Promise<GroupMember> {
    if (this.closing) throw new UringmqError('BROKER_CLOSED', 'broker is closed');
    const { group, t, o, from } = this.checkedJoinOptions(opts);
    let gs = await this.load(group, t.name, from);
    // A deleteGroup in the turns before this one resumed took the group out of memory
    // (its `deleted` would read as its topic's): the load after it waits for the file's
    // removal and makes the group anew. Checked here, in the caller's own turn: a check
    // inside an async helper leaves the same turns open after it.
    for (let again = 0; gs.removed; again++) {
      if (again === 3) throw beingDeleted(group, t.name);
      gs = await this.load(group, t.name, from);
    }
    if (this.closing) throw new UringmqError('BROKER_CLOSED', 'broker is closed');
    // t.deleted: deleteTopic has begun but not reached topicDeleted (which sets
    // gs.deleted) yet. A member made then had a delivery loop whose first look-up of
    // the topic threw outside its try: an unhandled rejection, which ends the process.
    if (gs.deleted || t.deleted) throw new UringmqError('TOPIC_NOT_FOUND', `topic ${t.name} was deleted`);
    // Partitions only a commitOffset of another one put in the group start at this
    // member's `from`, written before anything is delivered (as a new group's, load()).
    let started = false;
    for (const ps of gs.parts) {
      if (!ps.unset) continue;
      const info = this.broker.partitionInfo(t.partitions[ps.index]!);
      const start = from === 'earliest' ? info.startOffset : from === 'latest' ? info.endOffset : from.offset;
      ps.committed = ps.next = Math.min(Math.max(start, info.startOffset), info.endOffset);
      ps.unset = false;
      started = true;
    }
    if (started) {
      gs.dirty = true;
      await this.flush(gs);
      if (this.closing) throw new UringmqError('BROKER_CLOSED', 'broker is closed');
      // deleteGroup found it without members during the write: a member added now would
      // belong to a group whose file is gone, its acks written nowhere.
      if (gs.removed) throw new UringmqError('UNAVAILABLE', `group ${group} on ${t.name} was deleted while this consumer joined it; join again (it starts as a new group)`);
      if (gs.deleted || t.deleted) throw new UringmqError('TOPIC_NOT_FOUND', `topic ${t.name} was deleted`);
    }
    const m = new GroupMember(this, gs, sink, o, opts.flow, initialCredit ?? o.maxUnacked, memberId);
    for (const ps of gs.parts) m.resetsSeen.set(ps.index, ps.resets);
    gs.members.set(m.id, m);
    this.rebalance(gs);
    void this.pump(m);
    return m;
  }

  private key(group: string, topic: string): string {
    return `${group}\u0000${topic}`;
  }

  /** from null (commitOffset): a new group's partitions are left unset (PartitionGroupState.unset). */
  private load(group: string, topic: string, from: GroupJoinOptions['from'] | null): Promise<GroupState> {
    const k = this.key(group, topic);
    const have = this.groups.get(k);
    if (have) return Promise.resolve(have);
    const busy = this.fileBusy.get(k);
    if (busy) return busy.then(() => this.load(group, topic, from));
    let p = this.loading.get(k);
    if (!p) {
      // Once close() has begun no group is loaded: one loaded after it went through the
      // groups would write its file, and keep it open, after the broker had closed.
      if (this.closing) return Promise.reject(new UringmqError('BROKER_CLOSED', 'broker is closed'));
      p = (async () => {
        const { file, legacyFile } = offsetsFiles(path.join(this.dir, group), topic);
        const t = this.broker.topicState(topic);
        const saved = await savedState(file, legacyFile, t.partitions.length);
        const now = steadyNow();
        const wallShift = Date.now() - now;
        // Offsets past where a power cut may have cut the log since the file was
        // written name messages that are gone: new ones have taken their offsets.
        const cut = t.cutsAfter(saved?.run ?? 0, this.broker.run);
        const cutShort: string[] = [];
        /** Partitions the file has no committed offset for (-1) that this load starts at `from`. */
        let started = false;
        const rangesOf = new Map<number, StateRange[]>();
        for (const r of saved?.ranges ?? []) {
          const list = rangesOf.get(r.partition);
          if (list) list.push(r);
          else rangesOf.set(r.partition, [r]);
        }
        const parts = t.partitions.map((ps, i) => {
          const st = new PartitionGroupState(i);
          const info = this.broker.partitionInfo(ps);
          let start: number;
          const s = saved?.committed[i];
          const resumes = saved !== null && typeof s === 'number' && s >= 0;
          const bound = cut[i]!;
          if (resumes && saved.next[i]! > bound) cutShort.push(`${i} at ${bound}`);
          if (resumes) start = Math.min(s, bound);
          else if (from === null) {
            start = info.startOffset;
            st.unset = true;
          } else {
            started = true;
            if (from === 'earliest') start = info.startOffset;
            else if (from === 'latest' || from === undefined) start = info.endOffset;
            else start = from.offset;
          }
          start = Math.min(Math.max(start, info.startOffset), info.endOffset);
          st.committed = st.next = start;
          if (resumes) restoreDeliveries(st, saved.next[i]!, rangesOf.get(i) ?? [], Math.min(info.endOffset, bound), now, wallShift);
          return st;
        });
        if (cutShort.length > 0)
          process.emitWarning(
            `group ${group} on ${topic}: its state names offsets past where a power cut may have cut the log (partition ${cutShort.join(', ')}); ` +
              'what lies past there is delivered again',
            'UringmqWarning',
          );
        const gs = new GroupState(group, topic, parts, file, legacyFile);
        // A group with no file yet is one more in the data directory: refused past
        // maxGroups before its first write, so a client naming ever new groups cannot
        // grow the directory (and what describe and retention go through) without
        // bound. Counted here, with no wait between the check and the count: loads of
        // other new groups cannot all pass the check at once.
        const stored = this.broker.storedGroups;
        let counted = false;
        if (!stored.has(group, topic)) {
          if (!saved && stored.size >= this.broker.maxGroups)
            throw new UringmqError(
              'RESOURCE_EXHAUSTED',
              `group ${group} on topic ${topic} was not created: the broker keeps ${stored.size} groups' committed offsets (a group counts once per topic) and maxGroups is ${this.broker.maxGroups}; ` +
                'delete groups no longer used (deleteGroup; groupRetentionMs removes them in time) or raise maxGroups (nothing was written)',
              { limit: 'maxGroups' },
            );
          stored.add(group, topic);
          counted = true;
        }
        // A new group's starting offsets (or ones cut short) go to disk before anything
        // is delivered: a crash then resumes from them ('latest' stays where it was) and
        // redelivers what was delivered but not acked. Written later (the 20 ms flush), a
        // crash before that write found no file, and 'latest' moved the new group past
        // those messages. Only a written group is dropped from memory once idle (sweep).
        // So are partitions a saved group had no offset for (-1: only a commitOffset of
        // another partition made the group) that this join starts at its `from`: not
        // written, the next load started them at 'latest' again, past what was published
        // meanwhile (or delivered and unacked before a crash).
        if (!saved || cutShort.length > 0 || started) {
          gs.dirty = true;
          try {
            await this.flush(gs);
          } catch (e) {
            await this.closeOffsetsFile(gs);
            // Still in this load's turn (a load of the pair waits for it): no other write
            // of the file can have begun.
            if (counted) await this.forgetIfGone(group, topic);
            throw e;
          }
        }
        this.groups.set(k, gs);
        this.loading.delete(k);
        return gs;
      })();
      p.catch(() => this.loading.delete(k));
      this.loading.set(k, p);
    }
    return p;
  }

  private rebalance(gs: GroupState): void {
    gs.generation++;
    const all = [...gs.members.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
    // Stalled members get nothing while someone else can take their partitions.
    const live = all.filter((m) => !m.stalled);
    const members = live.length ? live : all;
    for (const m of all) if (!members.includes(m)) m.partitions = [];
    for (const m of members) m.partitions = [];
    for (const ps of gs.parts) {
      const owner = members.length ? members[ps.index % members.length]! : null;
      ps.owner = owner;
      owner?.partitions.push(ps.index);
    }
    for (const m of all) {
      m.sink.assign([...m.partitions], gs.generation, m.id);
      m.wake();
    }
  }

  /**
   * A member let its ack deadline pass without acking, nacking or asking for more:
   * its unacked messages go back for redelivery and its partitions to the others.
   */
  private stall(m: GroupMember, now: number): void {
    if (m.stalled || !m.alive) return;
    m.stalled = true;
    const gs = m.state;
    for (const ps of gs.parts) {
      const keep: Inflight[] = [];
      for (const r of ps.inflight) {
        if (r.member !== m) keep.push(r);
        else this.expire(gs, ps, r, now, 'consumer stalled');
      }
      ps.inflight = keep;
    }
    this.rebalance(gs);
  }

  /** @internal The stalled member made progress: it takes part again. */
  unstall(m: GroupMember): void {
    if (!m.stalled || !m.alive) return;
    m.stalled = false;
    this.rebalance(m.state);
  }

  /** @internal */
  leave(m: GroupMember, err?: UringmqError): void {
    if (!m.alive) return;
    m.alive = false;
    m.stopTimers();
    const gs = m.state;
    gs.members.delete(m.id);
    if (gs.members.size === 0) gs.idleSince = Date.now();
    const now = steadyNow();
    // Its unacked messages are redelivered now, to whoever owns the partition next.
    for (const ps of gs.parts) {
      const keep: Inflight[] = [];
      for (const r of ps.inflight) {
        if (r.member !== m) keep.push(r);
        else this.expire(gs, ps, r, now, 'member left');
      }
      ps.inflight = keep;
    }
    m.unacked = 0;
    this.rebalance(gs);
    m.wake();
    m.sink.end(err);
  }

  /** Moves the unacked offsets of an inflight range to redelivery (or the DLQ). */
  private expire(gs: GroupState, ps: PartitionGroupState, r: Inflight, now: number, reason: string): void {
    for (const [a, b] of ps.acked.gapsIn(r.from, r.to)) {
      this.release(r.member, ps, a, b);
      for (let off = a; off < b; off++) {
        if (off < ps.committed) continue;
        r.member.unacked--;
        if (r.deliveryCount >= r.member.opts.maxDeliveries) this.deadLetter(gs, ps, off, r.deliveryCount, r.member.opts.deadLetterTopic, `not acked within the deadline (${reason})`);
        else ps.redeliver.push({ offset: off, deliveryCount: r.deliveryCount, notBefore: now }, now);
      }
    }
    if (r.member.unacked < 0) r.member.unacked = 0;
  }

  /** @internal The checks of ack(), with no effect on what is acked (the member catches up with commitOffsets since its last ack or nack). */
  checkAck(m: GroupMember, partition: number, from: number, to: number, resets?: number): PartitionGroupState {
    const gs = m.state;
    const ps = gs.parts[partition];
    if (!ps) throw invalid(`partition ${partition} does not exist in topic ${gs.topic}`);
    catchUpResets(m, ps);
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < 0 || to <= from)
      throw invalid(`ack range [${from}, ${to}) is not a valid offset range`);
    if (resets !== undefined && resets !== ps.resets) return ps; // ignored by ack(), whatever it names
    const allowed = [m.released.get(partition), m.voided.get(partition)];
    if (to > ps.next) {
      // Past what the group was delivered: refused, unless this member was delivered
      // them before a commitOffset rewound the partition (a late ack: ignored).
      const a = Math.max(from, ps.next);
      const bad = uncovered(allowed, a, to);
      if (bad)
        throw new UringmqError(
          'FAILED_PRECONDITION',
          `ack of [${from}, ${to}) on ${gs.topic}/${partition} by member ${m.id} names offsets [${bad[0]}, ${bad[1]}) never delivered to group ${gs.group} (the next it would be delivered there is ${ps.next})`,
        );
    }
    const bad = notOutstanding(m, ps, allowed, Math.max(from, ps.committed), Math.min(to, ps.next));
    if (bad) throw notDeliveredTo(m, ps, `ack of [${from}, ${to})`, bad);
    return ps;
  }

  /** Notes that member m no longer holds the unacked offsets of [from, to) it was delivered (see GroupMember.released). */
  private release(m: GroupMember, ps: PartitionGroupState, from: number, to: number): void {
    from = Math.max(from, ps.committed);
    if (from >= to) return; // (also for a member that left: an ack from its app after that is not an error)
    pruneReleased(m, ps);
    addRange(m.released, ps.index, from, to);
    // While the committed offset is held back (a message nacked with a long delay at
    // its head), what m was given back and others acked since stays here, a range per
    // offset for a member that nacks every other one: dropped once the set doubles
    // (an ack of an acked offset is a no-op whoever sends it), so what stays is what is
    // still unacked — waiting for redelivery or outstanding, both bounded.
    const set = m.released.get(ps.index)!;
    if (set.rangeCount > (m.releasedPruneAt.get(ps.index) ?? RELEASED_PRUNE_MIN)) {
      const kept = new RangeSet();
      for (const [a, b] of set.ranges()) for (const [x, y] of ps.acked.gapsIn(a, b)) kept.add(x, y);
      if (kept.rangeCount === 0) m.released.delete(ps.index);
      else m.released.set(ps.index, kept);
      m.releasedPruneAt.set(ps.index, Math.max(RELEASED_PRUNE_MIN, 2 * kept.rangeCount));
    }
  }

  /** @internal */
  ack(m: GroupMember, partition: number, from: number, to: number, resets?: number): void {
    const gs = m.state;
    // Delivered before a commitOffset moved the partition: ignored (the move asked for it again).
    if (resets !== undefined && gs.parts[partition] && resets !== gs.parts[partition]!.resets) return;
    const ps = this.checkAck(m, partition, from, to);
    from = Math.max(from, ps.committed);
    to = Math.min(to, ps.next); // past it: late acks of a rewound partition's, ignored (checked above)
    if (from >= to) return;
    // Inflight ranges are disjoint and sorted, so the ones this ack touches are found
    // by binary search: acking stays O(log n) however large the window.
    // checkAck passed, so every unacked offset of [from, to) is outstanding to m (acked
    // here), held by another member after m had it (ignored: that delivery counts), or
    // taken back from m and held by nobody (waiting for redelivery: acked here).
    const inf = ps.inflight;
    let j = firstInflight(inf, from);
    const now = performance.now(); // (deadlines are monotonic)
    const voided = m.voided.get(partition);
    let added = 0;
    let cur = from;
    for (; cur < to; j++) {
      const r = j < inf.length && inf[j]!.from < to ? inf[j]! : null;
      const gapEnd = r ? Math.max(cur, r.from) : to;
      // m's, taken back: nobody holds them. But not those m had before a commitOffset
      // moved the partition (unless it was delivered them again since).
      if (cur < gapEnd) {
        if (!voided) added += ps.acked.add(cur, gapEnd);
        else for (const [x, y] of applicable(voided, m.released.get(partition), cur, gapEnd)) added += ps.acked.add(x, y);
      }
      if (!r) break;
      const a = Math.max(r.from, cur);
      const b = Math.min(r.to, to);
      if (r.member === m) {
        const newly = ps.acked.add(a, b);
        if (newly > 0) {
          added += newly;
          m.unacked = Math.max(0, m.unacked - newly);
          m.flow.onAcked(newly, now - (r.deadline - m.opts.ackDeadlineMs));
        }
      }
      cur = b;
    }
    if (added > 0) {
      this.changed(gs);
      // Ranges now fully acked stay until the sweep drops them all in one pass: a
      // splice per ack costs the length of the array, and after a restart or a
      // member's leave a window comes back as one range per message.
      ps.inflightAcked = true;
    }
    if (m.canDeliver()) m.wake();
    this.advance(gs, ps);
    pruneReleased(m, ps);
  }

  /**
   * Retention removed messages below `start` that the group had not acked; they are
   * gone, so the group's position moves past them: committed and next to `start`,
   * in-flight ranges and redeliveries below it dropped, and their members' unacked
   * counts given back (acks for them could no longer be counted).
   */
  private skipRetained(gs: GroupState, ps: PartitionGroupState, start: number): void {
    dropAckedInflight(ps);
    const keep: Inflight[] = [];
    for (const r of ps.inflight) {
      const cut = Math.min(r.to, start);
      if (cut > r.from) r.member.unacked = Math.max(0, r.member.unacked - unackedIn(ps, r.from, cut));
      if (r.to > start) keep.push(r.from < start ? { ...r, from: start } : r);
    }
    ps.inflight = keep;
    if (ps.redeliver.length) ps.redeliver.retain((e) => e.offset >= start);
    ps.acked.removeBelow(start);
    ps.committed = start;
    if (ps.next < start) ps.next = start;
    this.changed(gs);
    this.advance(gs, ps);
  }

  /** Keeps ps.inflight sorted by offset (redeliveries land below fresh ranges). */
  private insertInflight(ps: PartitionGroupState, r: Inflight): void {
    if (r.to > (r.member.deliveredEnd.get(ps.index) ?? 0)) r.member.deliveredEnd.set(ps.index, r.to);
    const inf = ps.inflight;
    if (inf.length === 0 || inf[inf.length - 1]!.from < r.from) {
      inf.push(r);
      return;
    }
    let lo = 0;
    let hi = inf.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (inf[mid]!.from < r.from) lo = mid + 1;
      else hi = mid;
    }
    inf.splice(lo, 0, r);
  }

  private advance(gs: GroupState, ps: PartitionGroupState): void {
    const f = ps.acked.first();
    if (f && f[0] <= ps.committed && f[1] > ps.committed) {
      ps.committed = f[1];
      ps.acked.removeBelow(ps.committed);
      this.changed(gs);
    }
  }

  /** The group's state on disk is behind: a write follows within 20 ms. */
  private changed(gs: GroupState): void {
    gs.dirty = true;
    this.scheduleFlush(gs);
  }

  /** @internal */
  nack(m: GroupMember, partition: number, offset: number, delayMs: number, deliveryCount = 0, resets?: number): void {
    const gs = m.state;
    const ps = gs.parts[partition];
    if (!ps) throw invalid(`partition ${partition} does not exist in topic ${gs.topic}`);
    validateOffset(offset);
    checkNackDelay(delayMs);
    if (!Number.isInteger(deliveryCount) || deliveryCount < 0) throw invalid(`deliveryCount must be a non-negative integer, got ${String(deliveryCount)}`);
    // Delivered before a commitOffset moved the partition (checked after the form, as
    // checkAck does: a malformed nack is refused whatever epoch it names).
    if (resets !== undefined && resets !== ps.resets) return;
    catchUpResets(m, ps);
    const allowed = [m.released.get(partition), m.voided.get(partition)];
    if (offset >= ps.next) {
      if (!uncovered(allowed, offset, offset + 1)) return; // delivered to m before a commitOffset rewound the partition
      throw new UringmqError('FAILED_PRECONDITION', `nack for offset ${offset} of ${gs.topic}/${partition} by member ${m.id}, which group ${gs.group} was never delivered`);
    }
    if (offset < ps.committed || ps.acked.has(offset)) return; // already acked: nothing to do
    const i = firstInflight(ps.inflight, offset);
    const r = ps.inflight[i];
    if (!r || r.from > offset || r.member !== m) {
      // Not outstanding to m: fine if m had it before (its deadline passed, or it
      // nacked it already: it is queued for redelivery or with another member).
      const bad = notOutstanding(m, ps, allowed, offset, offset + 1);
      if (bad) throw notDeliveredTo(m, ps, `nack of offset ${offset}`, bad);
      return;
    }
    // A late nack of an earlier delivery (its deadline passed, and m has the message
    // again): the delivery m holds now is not the one that failed. Counting this nack
    // against it redelivered a message being processed, or dead-lettered it.
    if (deliveryCount > 0 && deliveryCount < r.deliveryCount) return;
    const pieces: Inflight[] = [];
    if (r.from < offset) pieces.push({ ...r, to: offset });
    if (offset + 1 < r.to) pieces.push({ ...r, from: offset + 1 });
    ps.inflight.splice(i, 1, ...pieces);
    this.release(m, ps, offset, offset + 1);
    r.member.unacked = Math.max(0, r.member.unacked - 1);
    const now = steadyNow();
    if (r.deliveryCount >= r.member.opts.maxDeliveries) this.deadLetter(gs, ps, offset, r.deliveryCount, r.member.opts.deadLetterTopic, 'nacked too many times');
    else {
      ps.redeliver.push({ offset, deliveryCount: r.deliveryCount, notBefore: now + delayMs }, now);
      if (delayMs > 0) this.changed(gs); // the file keeps the delay across a restart
    }
    if (delayMs === 0) ps.owner?.wake();
    // Its window has a free slot now, as after an ack: a member held back by it that
    // nacked for later (or not as the owner) otherwise waited for its idle timeout.
    if (m.canDeliver()) m.wake();
  }

  /**
   * @internal Messages m was delivered but whose app never got them (its consumer closed
   * with them still buffered; m leaves right after, see GroupMember.leave): back for
   * redelivery at once, that delivery not counted —
   * a few quick join/close cycles sent a message to the dead-letter topic unseen. Only
   * what is outstanding to m with the delivery count named is given back; anything else
   * in a range (acked, taken back already, delivered again since) is left alone.
   */
  giveBack(m: GroupMember, returned: readonly Returned[]): void {
    const gs = m.state;
    const byPartition = new Map<number, Map<number, RangeSet>>();
    for (const r of returned) {
      if (!gs.parts[r.partition]) throw invalid(`partition ${r.partition} does not exist in topic ${gs.topic}`);
      if (!Number.isSafeInteger(r.from) || !Number.isSafeInteger(r.to) || r.from < 0 || r.to <= r.from)
        throw invalid(`returned range [${r.from}, ${r.to}) is not a valid offset range`);
      if (!Number.isSafeInteger(r.deliveryCount) || r.deliveryCount < 1) throw invalid(`deliveryCount must be a positive integer, got ${String(r.deliveryCount)}`);
    }
    if (!m.alive) return; // what it held went back when it left
    // Added in offset order: ranges added out of order (a client may send them so)
    // cost a splice each, quadratic in their number.
    const sorted = [...returned].sort((a, b) => a.from - b.from);
    for (const r of sorted) {
      // Delivered before a commitOffset moved the partition: the same offsets may be
      // outstanding to m again, a delivery this range does not speak for (as ack and nack).
      if (r.resets !== undefined && r.resets !== gs.parts[r.partition]!.resets) continue;
      let counts = byPartition.get(r.partition);
      if (!counts) byPartition.set(r.partition, (counts = new Map()));
      let set = counts.get(r.deliveryCount);
      if (!set) counts.set(r.deliveryCount, (set = new RangeSet()));
      set.add(r.from, r.to);
    }
    let changed = false;
    for (const [partition, counts] of byPartition) {
      const ps = gs.parts[partition]!;
      // A partition a rebalance gave another member since: that owner may have been
      // delivered later offsets already, so these come to it after them. Uncounted they
      // came as first deliveries (redelivered false), out of order and unmarked; counted
      // they come marked as the redeliveries they are, as any the owner gets after its own.
      // Except a delivery maxDeliveries allowed as the last: counted, it sent the message
      // to the dead-letter topic at the leave, no app having seen that delivery (with
      // maxDeliveries 1, none at all). It goes back uncounted, as the last allowed again.
      if (ps.owner && ps.owner !== m) {
        for (const n of [...counts.keys()]) if (n < m.opts.maxDeliveries) counts.delete(n);
        if (counts.size === 0) continue;
      }
      const keep: Inflight[] = [];
      let any = false;
      // One pass over the partition's in-flight ranges (sorted, disjoint), each split
      // into what stays as it was and what comes back: the latter stays in flight with
      // this delivery uncounted, and the leave that follows puts all of m's back in
      // offset order (queued here ahead of the rest, they were redelivered out of order).
      for (const r of ps.inflight) {
        const set = r.member === m ? counts.get(r.deliveryCount) : undefined;
        if (!set || set.countIn(r.from, r.to) === 0) {
          keep.push(r);
          continue;
        }
        any = true;
        let cur = r.from;
        for (const [a, b] of set.gapsIn(r.from, r.to)) {
          if (cur < a) keep.push({ ...r, from: cur, to: a, deliveryCount: r.deliveryCount - 1 });
          keep.push({ ...r, from: a, to: b });
          cur = b;
        }
        if (cur < r.to) keep.push({ ...r, from: cur, to: r.to, deliveryCount: r.deliveryCount - 1 });
      }
      if (any) {
        ps.inflight = keep;
        // Counts went down (to none for a first delivery): nothing else may write the
        // file before a restart, which would then count the given-back delivery.
        changed = true;
      }
    }
    if (changed) this.changed(gs);
  }

  /**
   * Moves a message to the dead-letter topic; `reason` goes in its x-uringmq-reason
   * header. The move waits among the partition's dead-letter moves (never among its
   * redeliveries, which it would hold back) and starts from startDeadLetters.
   */
  private deadLetter(gs: GroupState, ps: PartitionGroupState, offset: number, deliveries: number, dlq: string, reason: string): void {
    ps.redeliver.pushDead({ offset, deliveryCount: deliveries, notBefore: 0, deadLetterReason: reason, deadLetterTopic: dlq });
    // Closing: no new move (the broker takes no more appends); the count goes into the
    // last write, and the next open moves the message at once.
    if (this.closing) this.changed(gs);
    else this.startDeadLetters(gs, ps);
  }

  /**
   * Starts the partition's waiting dead-letter moves that are due: at most
   * MAX_DEAD_LETTER_MOVES under way at once (each reads the message's batch), one at a
   * time while its moves keep failing, none during the pause after a failure (see
   * PartitionGroupState.deadLetterPausedUntil). Called when one is queued, when a move
   * ends, and by the sweep.
   */
  private startDeadLetters(gs: GroupState, ps: PartitionGroupState): void {
    if (this.closing || gs.deleted || gs.retired) return;
    const now = steadyNow();
    if (now < ps.deadLetterPausedUntil) return;
    const probing = ps.deadLetterPauseMs > 0;
    const most = probing ? 1 : MAX_DEAD_LETTER_MOVES;
    let later: Redelivery[] | null = null;
    while (ps.deadLettering.size < most) {
      const e = ps.redeliver.takeDeadDue(now);
      if (!e) break;
      if (handledAlready(ps, e.offset)) continue; // acked, or moved by an earlier move of it
      if (ps.deadLettering.has(e.offset)) {
        (later ??= []).push(e); // after the move of it under way, if that one fails
        continue;
      }
      this.startDeadLetter(gs, ps, e, probing);
    }
    if (later) for (const e of later) ps.redeliver.pushDead(e);
  }

  private startDeadLetter(gs: GroupState, ps: PartitionGroupState, e: Redelivery, probe: boolean): void {
    gs.busy++;
    ps.deadLettering.set(e.offset, e.deliveryCount);
    const resets = ps.resets;
    const move: Promise<void> = this.moveToDeadLetter(gs, ps, e, probe).finally(() => {
      // Cancelled by a commitOffset (which emptied deadLettering): the entry of the
      // offset now, if any, is a later move's.
      if (ps.resets === resets) ps.deadLettering.delete(e.offset);
      gs.busy--;
      gs.moves.delete(move);
      ps.owner?.wake();
      this.startDeadLetters(gs, ps);
    });
    gs.moves.add(move);
  }

  private async moveToDeadLetter(gs: GroupState, ps: PartitionGroupState, e: Redelivery, probe: boolean): Promise<void> {
    const { offset, deliveryCount: deliveries } = e;
    const dlq = e.deadLetterTopic!;
    const reason = e.deadLetterReason!;
    const resets = ps.resets;
    // Until the record is read, a failure is the record's own (see recordFailed); from
    // then on (making the dead-letter topic, the append) the dead-letter topic's.
    let read = false;
    try {
      const t = this.broker.topicState(gs.topic);
      const raw = await this.broker.readRaw(t.partitions[ps.index]!, offset, 1);
      // The record as the log holds it (header keys too: decoded, bytes that are not
      // UTF-8 would grow threefold, past the size limits), with the move's headers after its own.
      const batch = recordAsBatch(raw, offset, {
        'x-uringmq-reason': reason,
        'x-uringmq-delivery-count': String(deliveries),
        'x-uringmq-original-topic': gs.topic,
        'x-uringmq-original-partition': String(ps.index),
        'x-uringmq-original-offset': String(offset),
        'x-uringmq-group': gs.group,
      });
      read = true;
      // A commitOffset since cancelled the move: nothing appended (see commitOffset).
      // Acked since (a late ack of the delivery whose deadline sent it here is taken:
      // nobody holds it): handled, so not a dead letter either.
      if (ps.resets !== resets || handledAlready(ps, offset)) return;
      if (!batch) {
        this.skipGone(gs, ps, offset, dlq);
        return;
      }
      await this.ensureTopic(dlq, gs.topic);
      if (ps.resets !== resets || handledAlready(ps, offset)) return;
      // On disk before the message counts as handled, in every durability mode: the
      // group's file (written O_DSYNC) is about to say so.
      await this.broker.publishDeadLetter(dlq, sealBatch(batch));
      this.deadLetterMoves++;
    } catch (err) {
      if (!read && !this.closing && ps.resets === resets && this.recordFailed(gs, ps, e, err)) return;
      if (!this.closing) this.deadLetterFailures++;
      if (ps.resets !== resets) return;
      // Said, not swallowed: a move that keeps failing holds the group's committed
      // offset below it, and the operator needs to know why.
      if (!this.closing && Date.now() - ps.deadLetterWarnedAt >= 60_000) {
        ps.deadLetterWarnedAt = Date.now();
        process.emitWarning(
          `group ${gs.group} on ${gs.topic}/${ps.index}: moving offset ${offset} to ${dlq} failed (${err instanceof Error ? err.message : String(err)}); ` +
            `retried after ${DEAD_LETTER_RETRY_MS / 1000} s, then less often while moves keep failing (up to every ${DEAD_LETTER_RETRY_MAX_MS / 1000} s; said once a minute)`,
          'UringmqWarning',
        );
      }
      // The DLQ write failed: keep the message for another attempt rather than lose it,
      // later each time it fails (created again then, in case it was deleted). The
      // partition's other moves pause too (a full disk or a fenced dead-letter topic
      // fails them all alike): the pause doubles with each failed probe, and not with
      // the failures of moves already under way when it began. Failed because the
      // broker is closing (BROKER_CLOSED): close() waits for this, so the last write of
      // the group's file keeps the count, and the next open moves it at once; dropped
      // here, it came back as never delivered.
      this.dlqReady.delete(dlq);
      const now = steadyNow();
      this.retryDeadLetter(ps, e, now);
      if (!this.closing) {
        if (probe || ps.deadLetterPauseMs === 0) ps.deadLetterPauseMs = ps.deadLetterPauseMs === 0 ? DEAD_LETTER_RETRY_MS : Math.min(DEAD_LETTER_RETRY_MAX_MS, 2 * ps.deadLetterPauseMs);
        ps.deadLetterPausedUntil = Math.max(ps.deadLetterPausedUntil, now + ps.deadLetterPauseMs);
      }
      this.changed(gs);
      return;
    }
    // The dead-letter topic takes appends again: the partition's waiting moves go at
    // full pace. Told by a probe (or with no pause on): a move begun before the pause
    // may have landed just before what failed the others.
    if (probe || ps.deadLetterPauseMs === 0) {
      ps.deadLetterPauseMs = 0;
      ps.deadLetterPausedUntil = 0;
    }
    // Moved: it counts as acked for the group (unless commitOffset rewound or skipped
    // the partition meanwhile: its state starts over, and this move is not part of it;
    // the copy in the dead-letter topic stays, as anything appended).
    if (ps.resets === resets && offset >= ps.committed && offset < ps.next && !ps.acked.has(offset)) {
      ps.acked.add(offset, offset + 1);
      this.changed(gs);
      this.advance(gs, ps);
    }
  }

  /** Queues `e` for another move after its own backoff (1 s, doubling with each failure of it, up to 30 s; at once while closing). */
  private retryDeadLetter(ps: PartitionGroupState, e: Redelivery, now: number): void {
    const attempts = (e.deadLetterAttempts ?? 0) + 1;
    const wait = this.closing ? 0 : Math.min(DEAD_LETTER_RETRY_MAX_MS, DEAD_LETTER_RETRY_MS * 2 ** Math.min(attempts - 1, 16));
    ps.redeliver.pushDead({ offset: e.offset, deliveryCount: e.deliveryCount, notBefore: now + wait, deadLetterReason: e.deadLetterReason, deadLetterTopic: e.deadLetterTopic, deadLetterAttempts: attempts });
  }

  /**
   * A move failed before its append, for its own record: the dead-letter topic is not
   * at fault, so the partition's other moves neither pause nor wait (a probe's failure
   * here tells nothing either: the next one probes). Removed by retention: skipped, as
   * the group skips any message retention removed (skipRetained), and as a Kafka
   * consumer whose position fell below the log's start. Unreadable (an I/O error, a
   * corrupt batch): retried alone, with its own backoff; it holds the group's committed
   * offset below it meanwhile, as a member's delivery that cannot read it does (never
   * counted as handled unseen). False when the failure is not the record's (the source
   * topic deleted meanwhile): the caller's handling stands.
   */
  private recordFailed(gs: GroupState, ps: PartitionGroupState, e: Redelivery, err: unknown): boolean {
    const code = err instanceof UringmqError ? err.code : undefined;
    if (code === 'TOPIC_NOT_FOUND' || code === 'BROKER_CLOSED') return false;
    let start: number;
    try {
      start = this.broker.partitionOffsets(this.broker.topicState(gs.topic).partitions[ps.index]!).startOffset;
    } catch {
      return false; // deleted or closed meanwhile
    }
    const dlq = e.deadLetterTopic!;
    if (e.offset < start) {
      this.skipGone(gs, ps, e.offset, dlq);
      return true;
    }
    this.deadLetterFailures++;
    if (Date.now() - ps.deadLetterRecordWarnedAt >= 60_000) {
      ps.deadLetterRecordWarnedAt = Date.now();
      process.emitWarning(
        `group ${gs.group} on ${gs.topic}/${ps.index}: reading offset ${e.offset} for its move to ${dlq} failed (${err instanceof Error ? err.message : String(err)}); ` +
          `retried alone after ${DEAD_LETTER_RETRY_MS / 1000} s, then less often (up to every ${DEAD_LETTER_RETRY_MAX_MS / 1000} s), the partition's other moves going on (said once a minute)`,
        'UringmqWarning',
      );
    }
    this.retryDeadLetter(ps, e, steadyNow());
    this.changed(gs);
    return true;
  }

  /**
   * The log no longer holds `offset`, bound for `dlq`: nothing to move. Below the log's
   * start (retention), the group moves past every message retention removed; otherwise
   * (a gap in the log) past this one alone. Counted and said.
   */
  private skipGone(gs: GroupState, ps: PartitionGroupState, offset: number, dlq: string): void {
    this.deadLetterSkips++;
    let start = 0;
    try {
      start = this.broker.partitionOffsets(this.broker.topicState(gs.topic).partitions[ps.index]!).startOffset;
    } catch {
      return; // deleted or closed meanwhile: the group's state goes with it
    }
    if (Date.now() - ps.deadLetterRecordWarnedAt >= 60_000) {
      ps.deadLetterRecordWarnedAt = Date.now();
      process.emitWarning(
        `group ${gs.group} on ${gs.topic}/${ps.index}: offset ${offset}, bound for ${dlq}, was ${offset < start ? `removed by retention (the log starts at ${start})` : 'not in the log'} before its move; ` +
          'skipped, as the group skips any message retention removed (uringmq_dead_letter_skipped_total; said once a minute)',
        'UringmqWarning',
      );
    }
    if (ps.committed < start) this.skipRetained(gs, ps, start);
    if (offset >= ps.committed && offset < ps.next && !ps.acked.has(offset)) {
      ps.acked.add(offset, offset + 1);
      this.changed(gs);
      this.advance(gs, ps);
    }
  }

  /** Creates the dead-letter topic `name` if missing, with the retention and segment size of `source` (whose messages it keeps). */
  private ensureTopic(name: string, source: string): Promise<void> {
    let p = this.dlqReady.get(name);
    if (!p) {
      const cfg = this.broker.topicState(source).config;
      p = this.broker.createTopic(name, { partitions: 1, segmentBytes: cfg.segmentBytes, retention: { ...cfg.retention } }).then(
        () => undefined,
        (e: UringmqError) => {
          if (e.code !== 'TOPIC_EXISTS') {
            this.dlqReady.delete(name);
            throw e;
          }
        },
      );
      this.dlqReady.set(name, p);
    }
    return p;
  }

  /** The delivery loop of one member: redeliveries first, then fresh batches. */
  private async pump(m: GroupMember): Promise<void> {
    const gs = m.state;
    let t: TopicState;
    try {
      t = this.broker.topicState(gs.topic);
    } catch (e) {
      // (never rejects: nothing awaits the loop)
      this.leave(m, e instanceof UringmqError ? e : new UringmqError('TOPIC_NOT_FOUND', String(e)));
      return;
    }
    const waitOn: PartitionState[] = [];
    while (m.alive && !this.closed) {
      let delivered = false;
      try {
        // A rebalance assigns a new array: this pass keeps the one it started with.
        const assigned = m.partitions;
        const n = assigned.length;
        const start = m.nextStart(n);
        for (let i = 0; i < n; i++) {
          if (!m.alive || !m.canDeliver()) break;
          const p = assigned[(start + i) % n]!;
          const ps = gs.parts[p]!;
          if (ps.owner !== m) continue;
          const native = t.partitions[p]!;
          if (ps.redeliver.length > 0 && (await this.redeliverDue(m, ps, native))) delivered = true;
          else if (await this.deliverFresh(m, ps, native)) delivered = true;
        }
      } catch (e) {
        const err = e as UringmqError;
        if (!m.alive || this.closed || this.broker.closed) return;
        if (err.code === 'TOPIC_NOT_FOUND') {
          this.leave(m, err);
          return;
        }
        // Retention removed what a read asked for between the offsets it was planned
        // from and the read itself (which waited in the thread pool): the next pass
        // moves the group past it (skipRetained) instead of dropping the member.
        if (err.code === 'OFFSET_OUT_OF_RANGE' && this.retentionPassed(m, t)) continue;
        // A read failed (I/O error, corrupt batch): report it and drop the member;
        // its messages stay in the log for the next one.
        this.leave(m, err instanceof UringmqError ? err : new UringmqError('IO_ERROR', String(e)));
        return;
      }
      if (delivered) continue;
      // Left (or closed) while this pass awaited a read: leave() stopped the timers
      // already, and a sleep now armed a fresh one (a second, holding the process up).
      if (!m.alive || this.closed) break;
      waitOn.length = 0;
      for (const p of m.partitions) {
        const native = t.partitions[p];
        if (native) waitOn.push(native);
      }
      await m.idle(waitOn, 1000);
    }
    m.stopTimers();
  }

  /** Whether retention moved the start of one of `m`'s partitions past the group's committed offset there. */
  private retentionPassed(m: GroupMember, t: TopicState): boolean {
    try {
      return m.partitions.some((p) => this.broker.partitionOffsets(t.partitions[p]!).startOffset > m.state.parts[p]!.committed);
    } catch {
      return false; // deleted or closed: the caller's error stands
    }
  }

  private async deliverFresh(m: GroupMember, ps: PartitionGroupState, native: PartitionState): Promise<boolean> {
    const info = this.broker.partitionOffsets(native);
    if (ps.committed < info.startOffset) this.skipRetained(m.state, ps, info.startOffset);
    if (ps.next >= info.endOffset) return false;
    if (ps.redeliver.length >= this.maxWaitingRedeliveries) {
      // An ack does not take its offset out of the queue (it is skipped when due): a
      // member may ack what it nacked with a delay (the protocol allows it, as the last
      // to hold it), and such entries, due up to a day later, held fresh deliveries
      // back at the cap for as long. Dropped here, once per length of the queue.
      if (ps.redeliver.length !== ps.redeliverPruned) {
        ps.redeliver.retain((e) => e.offset >= ps.committed && !ps.acked.has(e.offset));
        ps.redeliverPruned = ps.redeliver.length;
      }
      if (ps.redeliver.length >= this.maxWaitingRedeliveries) return false; // until some are delivered (the next pass looks again)
    }
    const from = ps.next;
    // Read about as much as the member may take: one large read instead of many
    // small serial ones (each costs a thread-pool round trip), within bounds.
    const want = m.allowance();
    const readBytes = readSize(want * m.bytesPerRecord);
    const ahead = ps.readAhead;
    ps.readAhead = null;
    if (ahead && ahead.from !== from) void ahead.raw.then((b) => b && this.readPool.release(b));
    const raw = (ahead && ahead.from === from ? await ahead.raw : null) ?? this.readCached(m, native, from, readBytes) ?? (await this.read(m, native, from, readBytes));
    const allowance = m.allowance();
    if (!m.alive || ps.owner !== m || ps.next !== from || allowance <= 0 || raw.length === 0) {
      // rebalanced meanwhile, or no room any more
      if (m.sink.copiesBatches) this.readPool.release(raw);
      return false;
    }
    // Whole batches up to the allowance; the last one may be cut by `to`.
    const { pos, to } = this.wholeBatches(raw, from, from + allowance);
    const slice = raw.subarray(0, pos);
    const n = to - from;
    m.bytesPerRecord = Math.max(16, Math.round((m.bytesPerRecord * 3 + pos / Math.max(1, n)) / 4));
    this.insertInflight(ps, { from, to, deadline: performance.now() + m.opts.ackDeadlineMs, deliveryCount: 1, member: m });
    ps.next = to;
    this.changed(m.state);
    m.delivered(n);
    m.sink.deliverBatches(ps.index, slice, from, to, 1, ps.resets);
    if (m.sink.copiesBatches) this.readPool.release(raw); // copied: the buffer is free again
    // Overlap the next (thread-pool) read with this delivery's trip to the consumer.
    if (to < info.endOffset && to - from >= m.refill) {
      const p = this.read(m, native, to, readBytes).catch(() => null); // a failure is retried by the normal path
      ps.readAhead = { from: to, raw: p };
    }
    return true;
  }

  /**
   * The whole batches at the start of `raw` (read from `from`) that hold offsets below
   * `end`: `pos` bytes of them, delivering up to `to` (at most `end`; the last batch
   * may hold more).
   */
  private wholeBatches(raw: Buffer, from: number, end: number): { pos: number; to: number } {
    const cut = this.cut;
    const span = this.span;
    cut.pos = 0;
    cut.to = from;
    while (cut.pos < raw.length && cut.to < end) {
      readBatchSpan(raw, cut.pos, span);
      cut.to = Math.min(span.nextOffset, end); // nextOffset: exclusive
      cut.pos += span.length;
    }
    return cut;
  }

  /**
   * A consumer that keeps up reads from the tail cache: synchronously, without the
   * promise and turn a read costs (one per group-commit cycle for such a consumer).
   * Undefined when the cache does not hold `from`.
   */
  private readCached(m: GroupMember, native: PartitionState, from: number, bytes: number): Buffer | undefined {
    if (!m.sink.copiesBatches) return this.broker.readCached(native, from, bytes);
    const dest = this.readPool.acquire(bytes);
    let r: Buffer | undefined;
    try {
      r = this.broker.readCachedInto(native, from, bytes, dest);
    } catch (e) {
      this.readPool.release(dest);
      throw e;
    }
    if (!r || r.buffer !== dest.buffer) this.readPool.release(dest); // not cached, or did not fit: a buffer of its own
    return r;
  }

  /** Reads for member m: into a pooled buffer when its sink copies what it is given. */
  private async read(m: GroupMember, native: PartitionState, from: number, bytes: number): Promise<Buffer> {
    if (!m.sink.copiesBatches) return this.broker.readRaw(native, from, bytes);
    const dest = this.readPool.acquire(bytes);
    try {
      const r = await this.broker.readRawInto(native, from, bytes, dest);
      if (r.buffer !== dest.buffer) this.readPool.release(dest); // did not fit: a buffer of its own
      return r;
    } catch (e) {
      this.readPool.release(dest);
      throw e;
    }
  }

  private async redeliverDue(m: GroupMember, ps: PartitionGroupState, native: PartitionState): Promise<boolean> {
    if (ps.redeliver.length === 0) return false;
    // A previous owner is still reading redeliveries of this partition (taken before a
    // rebalance gave it to m): they are the lowest due, and go back to the queue when
    // its read ends. Taken now, what is above them went to m first, out of offset
    // order. That read's end wakes m (below); fresh messages go on meanwhile.
    if (ps.redelivering.size > 0) return false;
    const now = steadyNow();
    const allowance = Math.min(m.allowance(), MAX_REDELIVERIES_PER_PASS);
    if (allowance <= 0) return false;
    const taken = ps.redeliver.takeDue(now, allowance);
    if (taken.length === 0) return false;
    // Acked meanwhile (acks leave the queue alone), or delivered as often as this
    // member allows already: after a restart, or by a member that allowed more.
    const due: Redelivery[] = [];
    let progress = false;
    for (const e of taken) {
      if (e.offset < ps.committed || ps.acked.has(e.offset)) progress = true;
      else if (e.deliveryCount < m.opts.maxDeliveries) due.push(e);
      else {
        // Out of the redelivery queue for good: its move waits among the moves.
        this.deadLetter(m.state, ps, e.offset, e.deliveryCount, m.opts.deadLetterTopic, `delivered ${e.deliveryCount} times without an ack`);
        progress = true;
      }
    }
    if (due.length === 0) return progress;
    due.sort((a, b) => a.offset - b.offset);
    // A run of consecutive offsets delivered equally often (a window put back whole,
    // after a restart or a member's leave) goes as whole batches, the way fresh
    // messages do: decoding each record and sending it on its own was 6× slower.
    let run = 1;
    while (run < due.length && due[run]!.offset === due[run - 1]!.offset + 1 && due[run]!.deliveryCount === due[0]!.deliveryCount) run++;
    const batched = run >= MIN_BATCHED_REDELIVERY;
    if (batched && run < due.length) ps.redeliver.putBack(due.splice(run));
    else if (batched) {
      // The run may go on in the queue: as far as the member may take and one read holds.
      const last = due[due.length - 1]!;
      const most = Math.min(m.allowance(), Math.floor(MAX_READ_BYTES / Math.max(16, m.bytesPerRecord))) - due.length;
      if (most > 0) for (const e of ps.redeliver.takeRunAfter(last.offset, last.deliveryCount, most)) due.push(e);
    }
    ps.redelivering.add(due);
    try {
      return await (batched ? this.redeliverRun(m, ps, native, due) : this.redeliver(m, ps, native, due));
    } finally {
      ps.redelivering.delete(due);
      if (ps.owner !== m) ps.owner?.wake(); // it waited for this read (see above)
    }
  }

  /** Redelivers `run` (consecutive offsets, one count) as whole batches. */
  private async redeliverRun(m: GroupMember, ps: PartitionGroupState, native: PartitionState, run: Redelivery[]): Promise<boolean> {
    const from = run[0]!.offset;
    const end = run[run.length - 1]!.offset + 1;
    const count = run[0]!.deliveryCount + 1;
    const info = this.broker.partitionOffsets(native);
    if (ps.committed < info.startOffset) this.skipRetained(m.state, ps, info.startOffset);
    if (ps.committed > from) {
      // Retention took the run's start: the log no longer holds it (a read would fail).
      ps.redeliver.putBack(run.filter((e) => e.offset >= ps.committed));
      return true;
    }
    const resets = ps.resets;
    const readBytes = readSize((end - from) * m.bytesPerRecord * 1.25);
    let raw: Buffer;
    try {
      raw = await this.read(m, native, from, readBytes);
    } catch (e) {
      if (ps.resets === resets) ps.redeliver.putBack(run); // still due, for whoever owns the partition next
      throw e;
    }
    const release = () => m.sink.copiesBatches && this.readPool.release(raw);
    if (ps.resets !== resets) {
      release(); // commitOffset moved the partition while we read: these are void
      return false;
    }
    if (!m.alive || ps.owner !== m || raw.length === 0 || ps.committed > from || ps.acked.countIn(from, end) > 0) {
      // Rebalanced, or acked (or retained) in part while reading: back to the queue,
      // whose next pass leaves out what is acked by now.
      ps.redeliver.putBack(run);
      release();
      return ps.owner === m && m.alive && raw.length > 0;
    }
    // The allowance again: it may have shrunk during the read (a server shutdown drains
    // the member by zeroing its credit). What it cannot take now stays due, uncounted.
    const allowance = m.allowance();
    if (allowance <= 0) {
      ps.redeliver.putBack(run);
      release();
      return false;
    }
    const { pos, to } = this.wholeBatches(raw, from, Math.min(end, from + allowance));
    const n = to - from;
    if (pos > 8 * n * Math.max(m.bytesPerRecord, 128)) {
      // A short run inside large batches: sending the batches would cost far more than
      // the records. Those go alone instead.
      release();
      return this.redeliver(m, ps, native, run);
    }
    if (to < end) ps.redeliver.putBack(run.slice(to - from)); // past what was read: the next pass
    this.insertInflight(ps, { from, to, deadline: performance.now() + m.opts.ackDeadlineMs, deliveryCount: count, member: m });
    this.changed(m.state); // the counts went up
    m.delivered(n);
    m.sink.deliverBatches(ps.index, raw.subarray(0, pos), from, to, count, ps.resets);
    release();
    return true;
  }

  private async redeliver(m: GroupMember, ps: PartitionGroupState, native: PartitionState, due: Redelivery[]): Promise<boolean> {
    due.sort((a, b) => a.offset - b.offset);
    const out: RedeliveredRecord[] = [];
    const info = this.broker.partitionOffsets(native);
    if (ps.committed < info.startOffset) this.skipRetained(m.state, ps, info.startOffset);
    const resets = ps.resets;
    let i = 0;
    try {
      while (i < due.length) {
        const e = due[i]!;
        if (e.offset < ps.committed || ps.acked.has(e.offset)) { // (skipRetained put committed at or past the start)
          i++;
          continue;
        }
        // About as much as the offsets still due span (a window put back whole after a
        // restart spans them densely): decoding a MiB of records for a few is waste.
        const span = due[due.length - 1]!.offset - e.offset + 1;
        const raw = await this.broker.readRaw(native, e.offset, readSize(span * m.bytesPerRecord * 1.25));
        const recs = decodeBatches(raw, e.offset);
        if (recs.length === 0) {
          i++;
          continue;
        }
        const lastRead = recs[recs.length - 1]!.offset;
        const byOffset = new Map(recs.map((r) => [r.offset, r] as const));
        while (i < due.length && due[i]!.offset <= lastRead) {
          const d = due[i++]!;
          const r = byOffset.get(d.offset);
          // (a literal, not a spread: this runs for every redelivered record)
          if (r) out.push({ offset: r.offset, timestamp: r.timestamp, key: r.key, value: r.value, headers: r.headers, partition: ps.index, deliveryCount: d.deliveryCount + 1 }); // acked ones are dropped below
        }
      }
    } catch (e) {
      // A read failed: they stay due, for whoever owns the partition next (putBack
      // orders them by offset among the rest, as redeliverRun's are).
      if (ps.resets === resets) ps.redeliver.putBack(due);
      throw e;
    }
    if (ps.resets !== resets) return false; // commitOffset moved the partition while we read: these are void
    if (!m.alive || ps.owner !== m) {
      // Rebalanced while reading: put them back for the new owner.
      ps.redeliver.putBack(due);
      return false;
    }
    // Acks that landed during the reads above.
    for (let k = out.length - 1; k >= 0; k--) if (out[k]!.offset < ps.committed || ps.acked.has(out[k]!.offset)) out.splice(k, 1);
    if (out.length === 0) return true;
    // The allowance again, as in redeliverRun: what m cannot take now stays due, uncounted.
    const allowance = Math.max(0, m.allowance());
    if (out.length > allowance) {
      const cut = out[allowance]!.offset;
      ps.redeliver.putBack(due.filter((d) => d.offset >= cut));
      out.length = allowance;
      if (allowance === 0) return false;
    }
    const deadline = performance.now() + m.opts.ackDeadlineMs;
    for (const r of out) this.insertInflight(ps, { from: r.offset, to: r.offset + 1, deadline, deliveryCount: r.deliveryCount, member: m });
    this.changed(m.state); // the counts went up
    m.delivered(out.length);
    m.sink.deliverRecords(out, ps.resets);
    return true;
  }

  /** Deadlines, session timeouts, stalls, flow control and due redeliveries; runs every 50 ms. */
  private sweep(): void {
    const now = Date.now();
    const mono = performance.now();
    const steady = steadyNow();
    // A sweep this late ran after the process could not (a long synchronous job, the
    // event loop blocked): no heartbeat (nor ack) could be taken meanwhile, neither an embedded
    // consumer's (its timer is due behind this one) nor a remote one's (waiting on its
    // socket). Blocked past the session timeout, the process expired every member, its
    // own live ones too. So a late sweep expires no session, and the next one, the
    // heartbeats waiting taken in between, does, late or not. (Taking the late time off
    // every member's silence instead let a loop late at every sweep, busy rather than
    // blocked, keep a dead member (50 + late) / 50 times its session timeout.)
    const late = mono - this.lastSweep - SWEEP_MS;
    const deferExpiry = late > SWEEP_MS && !this.expiryDeferred;
    this.expiryDeferred = deferExpiry;
    this.lastSweep = mono;
    for (const [k, gs] of this.groups) {
      if (gs.members.size === 0 && now - gs.idleSince > this.idleGroupMs && !gs.dirty && !gs.flushing && gs.busy === 0 && !this.loading.has(k)) {
        // Nobody consumes it: its committed offsets are on disk, where the next join
        // reads them (what was acked above them is delivered again, at least once).
        this.groups.delete(k);
        gs.retired = true; // a late ack of a message it delivered changes nothing on disk
        const closed = this.closeOffsetsFile(gs); // no write is under way (busy is 0)
        // Retention (expireGroups) counts from the file's mtime, which only commits move:
        // a member connected to a quiet topic for longer must not make it old. Until
        // the touch (and the close) land, a join waits and the expiry skips the group.
        const now = new Date();
        const touched = fs.utimes(gs.file, now, now).then(
          () => undefined,
          () => undefined, // never written: nothing to keep
        );
        this.fileBusy.set(k, Promise.all([closed, touched]).then(() => {
          this.fileBusy.delete(k);
        }));
        continue;
      }
      if (gs.members.size > 0 && now - gs.touchedAt >= this.touchEveryMs && !gs.deleted) {
        gs.touchedAt = now;
        const when = new Date(now);
        void fs.utimes(gs.file, when, when).catch(() => undefined); // never written yet: nothing to keep
      }
      for (const m of [...gs.members.values()]) {
        if (!deferExpiry && mono - m.lastSeen > m.opts.sessionTimeoutMs) {
          this.leave(m, new UringmqError('SESSION_EXPIRED', `member ${m.id} of group ${gs.group} missed its session timeout (${m.opts.sessionTimeoutMs} ms)`));
          continue;
        }
        if (m.flow.tick(m.unacked, mono) && m.canDeliver()) m.wake();
      }
      const stalled = new Set<GroupMember>();
      for (const ps of gs.parts) {
        dropAckedInflight(ps); // before deadlines: an acked range must not make its member look stalled
        // Deadlines, lastSeen and lastProgress are monotonic (mono), and so are due
        // times (steady); `now`, the wall clock, is for the files' times.
        // Not on a late sweep either: acks that came in time may wait on a remote
        // member's socket, taken only after this (see deferExpiry above).
        if (!deferExpiry && ps.inflight.some((r) => r.deadline <= mono)) {
          const keep: Inflight[] = [];
          for (const r of ps.inflight) {
            if (r.deadline > mono) keep.push(r);
            else {
              if (mono - r.member.lastProgress >= r.member.opts.ackDeadlineMs) stalled.add(r.member);
              this.expire(gs, ps, r, steady, `ack deadline ${r.member.opts.ackDeadlineMs} ms`);
            }
          }
          ps.inflight = keep;
        }
      }
      for (const m of stalled) this.stall(m, steady);
      for (const ps of gs.parts) {
        if (ps.redeliver.length && ps.redeliver.hasDue(steady)) ps.owner?.wake();
        // Dead-letter moves whose wait (after a failure) ran out.
        if (ps.redeliver.deadDueAt <= steady && ps.deadLetterPausedUntil <= steady) this.startDeadLetters(gs, ps);
      }
    }
  }

  private scheduleFlush(gs: GroupState): void {
    if (gs.flushing || gs.deleted || gs.retired) return;
    // Every 20 ms; a snapshot that took long to build (a window of hundreds of
    // thousands held unacked) spaces the writes to keep it under a tenth of the time.
    gs.flushing = new Promise<void>((resolve) => setTimeout(resolve, Math.max(20, 10 * gs.snapshotMs)))
      .then(() => this.flush(gs))
      .catch((e: unknown) => this.writeFailed(gs, e)) // still dirty: the next flush retries; acks are redelivered, never lost
      .finally(() => {
        gs.flushing = null;
        if (gs.dirty && !this.closed && !gs.deleted) this.scheduleFlush(gs);
      });
  }

  /**
   * A write of the group's file failed (a full or failing disk): said once until a write
   * succeeds again. Retried silently every 20 ms, a group's acks stayed in memory only
   * for as long as the disk failed, and nothing told the operator why a restart then
   * delivered all of them again.
   */
  private writeFailed(gs: GroupState, e: unknown, atClose = false): void {
    if (gs.deleted) return;
    const what = `group ${gs.group} on ${gs.topic}: ${e instanceof Error ? e.message : String(e)}`;
    // The close's write is the last: said whatever was said before (that the acks were
    // kept and the write retried, which no longer holds).
    if (atClose) {
      process.emitWarning(`${what} at the close: what was acked since the last write is delivered again at the next open`, 'UringmqWarning');
      return;
    }
    if (gs.writeWarned) return;
    gs.writeWarned = true;
    process.emitWarning(
      `${what}; its acks are kept in memory and the write retried ` +
        '(said once until a write succeeds): a restart before then delivers again what was acked since the last write',
      'UringmqWarning',
    );
  }

  /**
   * Writes the committed offsets if they changed. Writes of one group are chained,
   * never concurrent (two at once could interleave in the file system and one could
   * put back an older snapshot), and none happens once its topic is deleted.
   * Rejects (and stays dirty) when the write fails.
   */
  private flush(gs: GroupState): Promise<void> {
    const write = async () => {
      if (!gs.dirty || gs.deleted || gs.retired) return;
      gs.dirty = false;
      const t0 = performance.now();
      const at = steadyNow();
      const snap = snapshot(gs, this.broker.run, at, Date.now() - at);
      gs.snapshotMs = performance.now() - t0;
      try {
        if (gs.out) {
          this.openFiles.delete(gs); // to the most recently written end
          this.openFiles.add(gs);
          await this.writeOpen(gs, gs.out, snap);
        } else {
          await this.takeFileSlot(gs);
          if (gs.deleted) {
            this.freeFileSlot(); // its topic went while this waited for a slot: nothing may write its file again
            return;
          }
          let opened: Awaited<ReturnType<typeof OffsetsFile.open>>;
          try {
            opened = await OffsetsFile.open(gs.file, snap);
          } catch (e) {
            this.freeFileSlot();
            throw e;
          }
          gs.out = opened.file;
          this.openFiles.add(gs);
          // A writer may wait for this slot (it found no open file to close while this
          // opened): a file just created has no write after it to wake that writer.
          this.wakeSlotWaiters();
          if (!opened.created) await this.writeOpen(gs, opened.file, snap);
          await fs.rm(gs.legacyFile, { force: true });
        }
        gs.writeWarned = false;
      } catch (e) {
        gs.dirty = true;
        throw writeError(`cannot write committed offsets ${gs.file}: ${(e as Error).message}`, e);
      }
    };
    gs.busy++;
    const p = gs.writing.then(write).finally(() => gs.busy--);
    gs.writing = p.catch(() => undefined);
    return p;
  }

  /** Writes `snap` through the group's open file, marked as in use meanwhile (takeFileSlot does not close it). */
  private async writeOpen(gs: GroupState, out: OffsetsFile, snap: GroupSnapshot): Promise<void> {
    gs.outWriting = true;
    try {
      await out.write(snap);
    } finally {
      gs.outWriting = false;
      this.wakeSlotWaiters(); // its file may be closed for a waiting writer now
    }
  }

  /**
   * Takes one of the maxOpenOffsetFiles slots for `writer`'s open, closing the least
   * recently written file no write is using (its group's next write opens it again).
   * When every open file is being written it waits for one of those writes to end:
   * skipping them instead (as this did) let 100 groups acking at once hold 31 files
   * open under a cap of 8. Only writers with no file open wait, and a write under way
   * always ends, so the wait does too; a queued commit is delayed, never dropped.
   */
  private async takeFileSlot(writer: GroupState): Promise<void> {
    for (;;) {
      if (this.fileSlots < this.maxOpenOffsetFiles) {
        this.fileSlots++;
        return;
      }
      let victim: GroupState | null = null;
      for (const gs of this.openFiles) {
        if (gs !== writer && !gs.outWriting) {
          victim = gs;
          break;
        }
      }
      if (victim) await this.closeOffsetsFile(victim);
      else await new Promise<void>((resolve) => this.slotWaiters.push(resolve));
    }
  }

  private freeFileSlot(): void {
    this.fileSlots--;
    this.wakeSlotWaiters();
  }

  /** Every waiter looks again (each takes a slot or closes a file, or waits once more). */
  private wakeSlotWaiters(): void {
    if (this.slotWaiters.length === 0) return;
    const waiters = this.slotWaiters;
    this.slotWaiters = [];
    for (const w of waiters) w();
  }

  private async closeOffsetsFile(gs: GroupState): Promise<void> {
    const out = gs.out;
    gs.out = null;
    this.openFiles.delete(gs);
    if (!out) return;
    try {
      await out.close();
    } catch {
      // written durably already: nothing to lose in a failed close
    } finally {
      this.freeFileSlot(); // only now: the descriptor counts until it is closed
    }
  }

  /**
   * Sets a group's committed offset of one partition (rewind or skip). `basedOnRun` (non-zero): the run
   * of the committed offsets the caller started from (committedState()); LOG_TRUNCATED
   * when a power cut may have cut the log below `offset` since (log_cuts.ts): the caller
   * read messages that are gone, and new ones have their offsets.
   */
  async commitOffset(group: string, topic: string, partition: number, offset: number, basedOnRun = 0, memberId?: string): Promise<void> {
    validateGroupName(group);
    const t = this.broker.topicState(topic);
    if (!Number.isInteger(partition) || partition < 0 || partition >= t.partitions.length)
      throw invalid(`partition ${shown(partition)} does not exist in topic ${topic}`);
    validateOffset(offset);
    if (!Number.isInteger(basedOnRun) || basedOnRun < 0) throw invalid(`run must be a non-negative integer, got ${shown(basedOnRun)}`);
    if (basedOnRun > 0) {
      const cut = t.cutsAfter(basedOnRun, this.broker.run)[partition]!;
      if (offset > cut)
        throw new UringmqError(
          'LOG_TRUNCATED',
          `${topic}/${partition}: a power cut may have cut the log at offset ${cut} after run ${basedOnRun} (this is run ${this.broker.run}), below the offset ${offset} being committed; read the committed offsets again`,
        );
    }
    const info = this.broker.partitionInfo(t.partitions[partition]!);
    if (offset > info.endOffset)
      throw new UringmqError('OFFSET_OUT_OF_RANGE', `offset ${offset} is past the end (${info.endOffset}) of ${topic}/${partition}`);
    let gs = await this.load(group, topic, null);
    // As in join(): a deleteGroup in the turns before this one is no deleted topic.
    for (let again = 0; gs.removed; again++) {
      if (again === 3) throw beingDeleted(group, topic);
      gs = await this.load(group, topic, null);
    }
    // deleteTopic began meanwhile: the commit would be answered as done, and dropped
    // with the group's file (the topic's own flag: topicDeleted may not have run yet).
    if (gs.deleted || t.deleted) throw new UringmqError('TOPIC_NOT_FOUND', `topic ${topic} was deleted`);
    const ps = gs.parts[partition]!;
    if (memberId !== undefined && ps.owner?.id !== memberId && !ps.unset) {
      // A member's commit of a partition a rebalance has given to another member since
      // (a fetch consumer's commit on revocation, or one under way when it came): what it
      // processed is acked, as a late ack, but it rewinds nothing and voids none of what
      // the new owner was delivered (their acks count; a rewind would deliver them again).
      this.lateCommit(gs, ps, offset);
      // On disk before it is answered, as any commit: the member counts it done and
      // does not send it again (a crash in the 20 ms until the timed write lost it).
      if (gs.dirty) await this.flush(gs);
      return;
    }
    ps.unset = false;
    dropAckedInflight(ps);
    // What the members were delivered before is void: their late acks of it are
    // ignored, neither errors nor taken (the move asked for those messages again).
    for (const m of gs.members.values()) {
      const r = m.released.get(partition);
      if (!r) continue;
      for (const [a, b] of r.ranges()) addRange(m.voided, partition, a, b);
      m.released.delete(partition);
    }
    for (const r of ps.inflight) {
      r.member.unacked = Math.max(0, r.member.unacked - unackedIn(ps, r.from, r.to));
      const lo = Math.max(r.from, ps.committed);
      if (lo < r.to) for (const [a, b] of ps.acked.gapsIn(lo, r.to)) addRange(r.member.voided, partition, a, b);
    }
    ps.inflight = [];
    ps.redeliver.clear();
    // Dead-letter moves under way are cancelled with the rest of the partition's
    // delivery state: their messages are the group's again, from their first delivery.
    // Out of deadLettering, their old counts are no longer written (a crash then
    // dead-lettered a rewound message again after one delivery), and a move of one of
    // them begins anew when its count says. A cancelled move appends nothing if it has
    // not begun its append (it looks at `resets` before), never counts its message as
    // handled, and leaves the pause after failed appends alone (that is the dead-letter
    // topic's state, not these offsets'); an append already under way may still land,
    // and the dead-letter topic then holds that message (at least once).
    ps.deadLettering.clear();
    // So are redeliveries whose records are being read: the read ends void (it looks at
    // `resets`) and puts nothing back, but until then their old counts were in every
    // snapshot, and a crash after the rewound message's next delivery restored it with
    // the count from before the rewind. Nothing is left for a new owner to wait behind.
    ps.redelivering.clear();
    ps.acked.clear();
    ps.resets++;
    ps.committed = ps.next = offset;
    for (const m of gs.members.values()) catchUpResets(m, ps);
    gs.dirty = true;
    await this.flush(gs);
    ps.owner?.wake();
  }

  /**
   * A former owner processed everything below `offset`: acked where no member holds it
   * (held ones are their holder's to ack), and the partition's next delivery moves past
   * what nobody was delivered yet. Never moves anything back.
   */
  private lateCommit(gs: GroupState, ps: PartitionGroupState, offset: number): void {
    if (offset <= ps.committed) return;
    dropAckedInflight(ps);
    let added = 0;
    let cur = ps.committed;
    const held = ps.inflight.filter((r) => r.to > cur && r.from < offset);
    for (const r of held) {
      if (cur < r.from) added += ps.acked.add(cur, r.from);
      cur = Math.max(cur, r.to);
    }
    if (cur < offset) added += ps.acked.add(cur, offset);
    if (offset > ps.next) ps.next = offset;
    if (added > 0) this.changed(gs);
    this.advance(gs, ps);
  }

  /** Committed offset per partition (-1 where the group has none), and the run they were read in (for commitOffset's check). */
  async committedState(group: string, topic: string): Promise<{ offsets: number[]; run: number }> {
    return { offsets: await this.committedOffsets(group, topic), run: this.broker.run };
  }

  /** Committed offset per partition; -1 where the group has none. */
  async committedOffsets(group: string, topic: string): Promise<number[]> {
    validateGroupName(group);
    const t = this.broker.topicState(topic);
    const gs = this.groups.get(this.key(group, topic));
    if (gs) return gs.parts.map((p) => (p.unset ? -1 : p.committed));
    // An unreadable file is an error here as when the group joins: reading it as "none"
    // would show an operator offsets the group will not go on from.
    const { file, legacyFile } = offsetsFiles(path.join(this.dir, group), topic);
    const saved = await savedState(file, legacyFile, t.partitions.length);
    // As the group's load would take them: not past where a power cut may have cut since.
    const cut = t.cutsAfter(saved?.run ?? 0, this.broker.run);
    return t.partitions.map((_, i) => {
      const c = saved?.committed[i];
      return typeof c === 'number' && c >= 0 ? Math.min(c, cut[i]!) : -1;
    });
  }

  /**
   * Groups of `topic` not in memory (no member since the broker started, or idle past
   * idleGroupMs) that committed on it, with their committed offsets (-1: none there):
   * what metrics report for a group whose consumers are gone. Reads each group's file.
   */
  async savedGroups(topic: string, index?: Map<string, string[]>): Promise<Array<{ group: string; committed: number[] }>> {
    let names: string[];
    if (index) names = index.get(topic) ?? [];
    else {
      let dirs: import('node:fs').Dirent[];
      try {
        dirs = await fs.readdir(this.dir, { withFileTypes: true });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
        throw new UringmqError('IO_ERROR', `cannot list ${this.dir}: ${(e as Error).message}`);
      }
      names = dirs.filter((d) => d.isDirectory()).map((d) => d.name);
    }
    const out: Array<{ group: string; committed: number[] }> = [];
    for (const name of names) {
      if (this.groups.has(this.key(name, topic))) continue;
      let committed: number[];
      try {
        committed = await this.committedOffsets(name, topic); // all -1 without a file
      } catch {
        continue; // an invalid name (a directory not made by a group), the topic gone meanwhile, or a damaged file (joining the group reports it)
      }
      if (committed.some((c) => c >= 0)) out.push({ group: name, committed });
    }
    return out;
  }

  /**
   * @internal Per topic, the groups with a file for it in the data directory: one
   * listing of each group's directory. For describing every topic at once (a metrics
   * scrape), where savedGroups(topic) alone tries every group's files once per topic:
   * topics × groups reads (100 topics of 10 idle groups each took 17 s a scrape).
   */
  async savedGroupIndex(): Promise<Map<string, string[]>> {
    const index = new Map<string, string[]>();
    let dirs: import('node:fs').Dirent[];
    try {
      dirs = await fs.readdir(this.dir, { withFileTypes: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return index;
      throw new UringmqError('IO_ERROR', `cannot list ${this.dir}: ${(e as Error).message}`);
    }
    for (const d of dirs) {
      if (!d.isDirectory()) continue;
      let files: string[];
      try {
        files = await fs.readdir(path.join(this.dir, d.name));
      } catch {
        continue; // removed meanwhile
      }
      const topics = new Set<string>();
      for (const f of files) {
        const topic = offsetsFileTopic(f);
        if (topic !== null) topics.add(topic);
      }
      for (const t of topics) {
        let l = index.get(t);
        if (!l) index.set(t, (l = []));
        l.push(d.name);
      }
    }
    return index;
  }

  /**
   * Removes, per group and topic, the committed offsets of groups that have had no
   * member there (none in memory) for `retentionMs` (the file's mtime: every commit
   * writes it, and a group leaving memory touches it), and group directories left
   * empty; as Kafka's
   * offsets.retention.minutes, so names used once do not keep their files (72 KiB
   * each) forever. A member joining later starts from its `from`. Returns the
   * removed "group/topic" pairs.
   */
  async expireGroups(retentionMs: number, now = Date.now()): Promise<string[]> {
    const removed: string[] = [];
    let dirs: import('node:fs').Dirent[];
    try {
      dirs = await fs.readdir(this.dir, { withFileTypes: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return removed;
      throw new UringmqError('IO_ERROR', `cannot list ${this.dir}: ${(e as Error).message}`);
    }
    for (const d of dirs) {
      if (!d.isDirectory() || this.closed) continue;
      const groupDir = path.join(this.dir, d.name);
      let names: string[];
      try {
        names = await fs.readdir(groupDir);
      } catch {
        continue; // removed meanwhile
      }
      for (const name of names) {
        const topic = offsetsFileTopic(name);
        if (topic === null) continue;
        const k = this.key(d.name, topic);
        const file = path.join(groupDir, name);
        let mtime: number;
        try {
          mtime = (await fs.stat(file)).mtimeMs;
        } catch {
          continue;
        }
        // Checked after the await: a join may have started meanwhile.
        if (now - mtime <= retentionMs || this.groups.has(k) || this.loading.has(k) || this.fileBusy.has(k) || this.closed) continue;
        // The count goes down inside the busy window: a load waits for it, and then makes
        // the group anew, counted again.
        const done = fs
          .rm(file, { force: true })
          .then(() => this.forgetIfGone(d.name, topic))
          .finally(() => this.fileBusy.delete(k));
        this.fileBusy.set(k, done.then(() => undefined, () => undefined));
        try {
          await done;
          removed.push(`${d.name}/${topic}`);
        } catch (e) {
          throw new UringmqError('IO_ERROR', `cannot remove expired committed offsets ${file}: ${(e as Error).message}`);
        }
      }
      await removeIfEmpty(groupDir);
    }
    return removed;
  }

  private forgetIfGone(group: string, topic: string): Promise<void> {
    return forgetIfGone(this.broker.storedGroups, path.join(this.dir, group), group, topic);
  }

  /**
   * Deletes a group's state on `topic` (Kafka's deleteConsumerGroups): its offsets file,
   * durably, and what memory holds of it (unacked and redelivery state). A member
   * joining later starts a new group at its `from`. FAILED_PRECONDITION while the group
   * has members there, GROUP_NOT_FOUND when it has neither members nor a file.
   */
  async deleteGroup(group: string, topic: string): Promise<void> {
    validateGroupName(group);
    this.broker.topicState(topic);
    const k = this.key(group, topic);
    // A load (a join's or commit's first write), a touch of the file as the group left
    // memory, or its expiry, ends first: each decides whether there is a group to delete.
    for (;;) {
      if (this.closing) throw new UringmqError('BROKER_CLOSED', 'broker is closed');
      const pending = this.loading.get(k) ?? this.fileBusy.get(k);
      if (!pending) break;
      await pending.catch(() => undefined);
    }
    // From here to fileBusy.set nothing awaits: a join arriving later waits in load() for
    // the removal and finds no file, so it cannot bring the deleted offsets back.
    this.broker.topicState(topic);
    const gs = this.groups.get(k);
    if (gs && gs.members.size > 0)
      throw new UringmqError(
        'FAILED_PRECONDITION',
        `group ${group} has ${gs.members.size} member${gs.members.size === 1 ? '' : 's'} on topic ${topic}: close its consumers before deleting it`,
      );
    const groupDir = path.join(this.dir, group);
    let done!: () => void;
    this.fileBusy.set(k, new Promise<void>((resolve) => (done = resolve)));
    try {
      if (gs) {
        this.groups.delete(k);
        gs.removed = true;
        gs.deleted = true; // a commit's or late ack's write not begun yet writes nothing
        await gs.writing; // one begun (creating the file, say) ends before the unlink
        await this.closeOffsetsFile(gs);
      }
      // Durable before it is answered: a power cut that lost the unlink would bring
      // the group back with the offsets it was deleted with.
      let removed: boolean;
      try {
        removed = await removeOffsetsFiles(groupDir, topic);
      } finally {
        // A failure may come after an unlink (the sync): what is gone no longer counts.
        await forgetIfGone(this.broker.storedGroups, groupDir, group, topic);
      }
      if (!removed && !gs) throw new UringmqError('GROUP_NOT_FOUND', `group ${group} has no members and no committed offsets on topic ${topic}`);
    } finally {
      this.fileBusy.delete(k);
      done();
    }
  }

  /** `partitions`: the topic's offsets as the caller read them (describeTopic), not read again. */
  describe(topic: string, partitions?: ReadonlyArray<{ startOffset: number; endOffset: number }>): GroupDescription[] {
    const out: GroupDescription[] = [];
    const t = this.broker.topicState(topic);
    let ends = partitions ?? null;
    for (const gs of this.groups.values()) {
      if (gs.topic !== topic) continue;
      ends ??= t.partitions.map((ps) => this.broker.partitionOffsets(ps));
      const offsets = ends;
      // Retention may have moved the log past the committed offset while no member
      // read there (none, or none with room): the group goes on from the log's start,
      // and its lag counts from there, as for a group described from its file.
      const committed = gs.parts.map((p, i) => (p.unset ? -1 : Math.max(p.committed, offsets[i]!.startOffset)));
      out.push({
        group: gs.group,
        generation: gs.generation,
        members: [...gs.members.values()].map((m) => {
          const f = m.flowState;
          return {
            memberId: m.id,
            partitions: [...m.partitions],
            unacked: m.unacked,
            window: m.window,
            tokenRate: f.tokenRate,
            reportedRate: f.reportedRate,
            latencyMs: f.latencyMs,
            lag: m.partitions.reduce((sum, p) => sum + Math.max(0, offsets[p]!.endOffset - committed[p]!), 0),
            stalled: m.stalled,
          };
        }),
        committed,
        lag: committed.map((c, i) => (c < 0 ? 0 : Math.max(0, offsets[i]!.endOffset - c))),
      });
    }
    return out.sort((a, b) => (a.group < b.group ? -1 : 1));
  }

  /**
   * The topic is gone: its groups end, their writes finish and their files close. The
   * broker removes the files (removeGroupOffsets) once the topic's directory is gone:
   * a crash in between must not bring the topic back without its groups' offsets.
   */
  async topicDeleted(topic: string): Promise<void> {
    this.dlqReady.delete(topic); // a dead-letter topic: made again when next needed
    // A group loading meanwhile (its first write under way) ends like the others.
    for (const [k, p] of [...this.loading]) if (k.endsWith(`\u0000${topic}`)) await p.catch(() => undefined);
    for (const [k, gs] of [...this.groups]) {
      if (gs.topic !== topic) continue;
      this.groups.delete(k);
      gs.deleted = true; // before the members leave: nothing they trigger may write the file again
      for (const m of [...gs.members.values()]) this.leave(m, new UringmqError('TOPIC_NOT_FOUND', `topic ${topic} was deleted`));
      await gs.writing; // a write already under way finishes before the file goes
      await this.closeOffsetsFile(gs);
    }
  }

  /** Ends every member and writes committed offsets. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closing = true;
    clearInterval(this.timer);
    // Loads under way (a join's or a commitOffset's, writing a new group's first state)
    // end first, so the groups they add are closed below with the others.
    while (this.loading.size > 0) await Promise.allSettled([...this.loading.values()]);
    for (const gs of this.groups.values()) {
      // When its last member left: now for a group with members, which the close ends.
      const lastLeft = gs.members.size > 0 ? Date.now() : gs.idleSince;
      for (const m of [...gs.members.values()]) {
        m.alive = false;
        m.stopTimers();
        gs.members.delete(m.id);
        m.wake();
        m.sink.end();
      }
      // Dead-letter moves under way end first, each as moved (acked) or back in the
      // redelivery queue with its count: a move that finished after the last write
      // was done again at the next open, one that failed lost its count.
      while (gs.moves.size > 0) await Promise.allSettled([...gs.moves]);
      if (gs.flushing) await gs.flushing;
      await this.flush(gs).catch((e: unknown) => this.writeFailed(gs, e, true)); // best effort: what was not written is redelivered
      gs.retired = true;
      await this.closeOffsetsFile(gs);
      // Retention (expireGroups) counts from the file's mtime, which commits move and a
      // group leaving memory touches (sweep). A close takes every group out of memory:
      // without the touch, the next run would count from the last commit and could
      // expire a group whose member was connected until this close.
      if (!gs.deleted) {
        const when = new Date(lastLeft);
        await fs
          .stat(gs.file)
          .then((st) => (st.mtimeMs < lastLeft ? fs.utimes(gs.file, when, when) : undefined))
          .catch(() => undefined); // never written: nothing to keep
      }
    }
    this.closed = true;
  }
}

/** Where a group (its directory) keeps a topic's committed offsets, and where versions before the .offs file kept them (JSON). */
function offsetsFiles(groupDir: string, topic: string): { file: string; legacyFile: string } {
  return { file: path.join(groupDir, `${topic}${OFFSETS_SUFFIX}`), legacyFile: path.join(groupDir, `${topic}.json`) };
}

/**
 * A group's state for a topic of `count` partitions, from its file, else the committed
 * offsets from an older version's JSON; null when it has none. IO_ERROR when it cannot
 * be read.
 */
async function savedState(file: string, legacyFile: string, count: number): Promise<GroupSnapshot | null> {
  const current = await readOffsetsFile(file);
  // Topics never change their partition count: a file of another count is left from an
  // earlier topic of the name, not this one's (the group's first write replaces it).
  if (current) return current.committed.length === count ? current : null;
  const legacy = await readLegacyOffsets(legacyFile);
  if (!legacy || legacy.length !== count) return null;
  return { committed: legacy, next: [...legacy], ranges: [] };
}

/**
 * Brings back a partition's deliveries from its saved state: every offset in
 * [committed, next) not acked is due for redelivery, with the count it had, now or when
 * its nack's delay runs out. `st.committed` is the saved one moved into the log's bounds;
 * what the log no longer holds (retention, or an end a power cut may have cut: `endOffset`
 * is the lower of the log's end and that cut) is left out.
 */
/** `now` on the redelivery queue's clock (steadyNow), which is `wallShift` ms behind the wall clock the file's due times are on. */
function restoreDeliveries(st: PartitionGroupState, next: number, ranges: readonly StateRange[], endOffset: number, now: number, wallShift: number): void {
  let lo = st.committed;
  const hi = Math.min(next, endOffset);
  if (!(hi > lo) || !Number.isSafeInteger(hi)) return;
  for (const r of ranges) {
    const a = Math.max(r.from, lo);
    const b = Math.min(r.to, hi);
    if (r.deliveries === 0 && !r.givenBack && a < b) st.acked.add(a, b);
  }
  // Acked from the committed offset on (retention moved it up to such a range): it moves on.
  const f = st.acked.first();
  if (f && f[0] <= lo) {
    st.committed = lo = f[1];
    st.acked.removeBelow(lo);
  }
  const unacked = hi - lo - st.acked.countIn(lo, hi);
  if (unacked > MAX_RESTORED_UNACKED) {
    st.acked.clear(); // a file no broker would write: start over at the committed offset
    return;
  }
  const counted = new Map<number, StateRange>();
  for (const r of ranges) {
    if (r.deliveries < 1 && !r.givenBack) continue;
    const a = Math.max(r.from, lo);
    const b = Math.min(r.to, hi);
    if (b - a > unacked) continue; // more than is unacked: not a file a broker wrote
    for (let o = a; o < b; o++) if (!st.acked.has(o)) counted.set(o, r);
  }
  st.next = Math.max(hi, lo);
  for (const [a, b] of st.acked.gapsIn(lo, hi))
    for (let o = a; o < b; o++) {
      const r = counted.get(o);
      // A delay no nack could have set (the clock went back) is cut to the longest one can.
      if (r?.notBefore) st.redeliver.push({ offset: o, deliveryCount: r.deliveries, notBefore: Math.min(r.notBefore - wallShift, now + MAX_NACK_DELAY_MS), restored: true }, now);
      else st.redeliver.push({ offset: o, deliveryCount: r?.deliveries ?? 1, notBefore: now }, now);
    }
}

/**
 * The group's state to write in run `run`: per partition committed and next, its acked
 * ranges, and its unacked offsets delivered more than once, given back with none
 * counted, or waiting out a nack's delay at `now`. A snapshot holds at most
 * maxStateRanges ranges, shared fairly among the partitions; a partition over its share
 * keeps its lowest ranges and writes `next` as the start of the first one left out,
 * so after a restart what lies past it is delivered afresh (at least once; its counts
 * start over) rather than taken as acked.
 */
function snapshot(gs: GroupState, run: number, now: number, wallShift: number): GroupSnapshot {
  const committed = gs.parts.map((ps) => (ps.unset ? -1 : ps.committed));
  const next = gs.parts.map((ps) => (ps.unset ? -1 : ps.next));
  const per = gs.parts.map((ps) => partitionRanges(ps, now, wallShift));
  const cap = maxStateRanges(gs.parts.length);
  if (per.reduce((n, r) => n + r.length, 0) > cap) {
    const quota = fairShares(per.map((r) => r.length), cap);
    per.forEach((r, i) => {
      if (r.length > quota[i]!) {
        next[i] = r[quota[i]!]!.from;
        r.length = quota[i]!;
      }
    });
  }
  return { committed, next, ranges: per.flat(), run };
}

/**
 * One partition's acked ranges and its unacked offsets delivered more than once, given
 * back with none counted (deliveries 0), or waiting out a nack's delay at `now`, in
 * offset order; adjacent ones of one count (and delays less than a second apart, the
 * later kept) merged into one range.
 */
function partitionRanges(ps: PartitionGroupState, now: number, wallShift: number): StateRange[] {
  const counts = new Map<number, { deliveries: number; notBefore: number; restored: boolean }>();
  const note = (offset: number, deliveries: number, notBefore = 0, restored = false): void => {
    const delayed = notBefore > now;
    if ((deliveries === 1 && !delayed) || offset < ps.committed || offset >= ps.next || ps.acked.has(offset)) return;
    const had = counts.get(offset);
    counts.set(offset, {
      deliveries: Math.max(deliveries, had?.deliveries ?? 0),
      notBefore: delayed ? Math.max(notBefore, had?.notBefore ?? 0) : (had?.notBefore ?? 0),
      restored: (delayed && restored) || (had?.restored ?? false),
    });
  };
  ps.redeliver.forEach((e) => note(e.offset, e.deliveryCount, e.notBefore, e.restored));
  // Waiting for a dead-letter move: after a restart it is moved at once (a wait after a failure is no nack's delay).
  ps.redeliver.forEachDead((e) => note(e.offset, e.deliveryCount));
  for (const due of ps.redelivering) for (const e of due) note(e.offset, e.deliveryCount);
  for (const [o, n] of ps.deadLettering) note(o, n);
  const out: Array<StateRange & { restored?: boolean }> = [];
  // In-flight ranges (a run redelivered whole is one) as ranges, less what is acked.
  for (const r of ps.inflight)
    if (r.deliveryCount !== 1)
      for (const [from, to] of ps.acked.gapsIn(Math.max(r.from, ps.committed), Math.min(r.to, ps.next))) out.push(unackedRange(ps.index, from, to, r.deliveryCount));
  for (const [from, to] of ps.acked.ranges()) if (from < ps.next) out.push({ partition: ps.index, from, to: Math.min(to, ps.next), deliveries: 0 });
  // Due times go to the file on the wall clock (0 stays "at once"), rounded up: the
  // shift is read off Date.now(), in whole ms, and must not make a delay shorter.
  for (const [o, c] of counts) out.push(c.notBefore > 0 ? { ...unackedRange(ps.index, o, o + 1, c.deliveries), notBefore: Math.ceil(c.notBefore + wallShift), restored: c.restored } : unackedRange(ps.index, o, o + 1, c.deliveries));
  out.sort((a, b) => a.from - b.from);
  // Adjacent ranges of one count as one (queued redeliveries are one offset each, and
  // so are those in flight as records): the file holds a bounded number of ranges.
  // Delays merge too while all of a range's lie within MERGED_DELAY_SLACK_MS: a
  // message may wait that much past its nack's delay, never more. A due time read
  // back from the file may already be such a merge's: it joins only an equal one.
  const merged: Array<StateRange & { restored?: boolean }> = [];
  let earliest = 0; // the earliest due time in the last merged range
  for (const r of out) {
    const prev = merged[merged.length - 1];
    const due = r.notBefore ?? 0;
    const exact = !!(r.restored || prev?.restored);
    if (prev && prev.to === r.from && prev.deliveries === r.deliveries && prev.givenBack === r.givenBack && closeDelays(prev.notBefore ?? 0, earliest, due, exact)) {
      prev.to = r.to;
      if (due > prev.notBefore!) prev.notBefore = due;
      if (due < earliest) earliest = due;
      if (r.restored) prev.restored = true;
    } else {
      merged.push(r);
      earliest = due;
    }
  }
  return merged; // `restored` is not written: encodeSlot takes the StateRange fields only
}

/** Offsets [from, to) of a partition delivered `deliveries` times and not acked, as the file says it (0: each delivery given back, see GroupMember.leave). */
function unackedRange(partition: number, from: number, to: number, deliveries: number): StateRange {
  return deliveries === 0 ? { partition, from, to, deliveries, givenBack: true } : { partition, from, to, deliveries };
}

/**
 * Whether a range due at `due` (0: at once) may join one whose due times run from
 * `earliest` to `latest`: both at once, or all delayed within MERGED_DELAY_SLACK_MS
 * (`exact`: all equal).
 */
function closeDelays(latest: number, earliest: number, due: number, exact: boolean): boolean {
  if (latest === 0 || due === 0 || exact) return latest === due && earliest === due;
  return Math.max(latest, due) - Math.min(earliest, due) <= MERGED_DELAY_SLACK_MS;
}

/**
 * Offsets of [from, to) not acked yet. Those below the committed offset all are:
 * advance() took them out of `acked` when it moved past them, so countIn alone would
 * count them as unacked (an in-flight range the committed offset has entered stays
 * whole until all of it is acked).
 */
function unackedIn(ps: PartitionGroupState, from: number, to: number): number {
  const lo = Math.max(from, ps.committed);
  return lo < to ? to - lo - ps.acked.countIn(lo, to) : 0;
}

/**
 * Drops the in-flight ranges acks have fully covered (or that lie below the committed
 * offset), which ack() leaves for this one pass over the array.
 */
function dropAckedInflight(ps: PartitionGroupState): void {
  if (!ps.inflightAcked) return;
  ps.inflightAcked = false;
  ps.inflight = ps.inflight.filter((r) => {
    const from = Math.max(r.from, ps.committed);
    return from < r.to && ps.acked.countIn(from, r.to) < r.to - from;
  });
}

/** Index of the first in-flight range (sorted, disjoint) that ends after `offset`. */
function firstInflight(inf: readonly Inflight[], offset: number): number {
  let lo = 0;
  let hi = inf.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (inf[mid]!.to > offset) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** The first part of [from, to) in none of `sets` (undefined ones hold nothing), or null when they hold it all. */
function uncovered(sets: ReadonlyArray<RangeSet | undefined>, from: number, to: number): [number, number] | null {
  if (from >= to) return null;
  let parts: Array<[number, number]> = [[from, to]];
  for (const set of sets) {
    if (!set) continue;
    parts = parts.flatMap(([a, b]) => (set.countIn(a, b) === b - a ? [] : set.gapsIn(a, b)));
    if (parts.length === 0) return null;
  }
  return parts[0]!;
}

/** The parts of [from, to) a member's ack may take as acked: all but those it had before a commitOffset moved the partition (`voided`) and not again since (`released`). */
function applicable(voided: RangeSet, released: RangeSet | undefined, from: number, to: number): Array<[number, number]> {
  if (voided.countIn(from, to) === 0) return [[from, to]];
  const out = voided.gapsIn(from, to);
  // Voided, but taken back from m again since (delivered to it after the move): m's.
  if (released) for (const [a, b] of complement(voided.gapsIn(from, to), from, to)) out.push(...complement(released.gapsIn(a, b), a, b));
  return out;
}

/** The parts of [from, to) outside `gaps` (sorted, disjoint, within it). */
function complement(gaps: ReadonlyArray<[number, number]>, from: number, to: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let cur = from;
  for (const [a, b] of gaps) {
    if (a > cur) out.push([cur, a]);
    cur = b;
  }
  if (cur < to) out.push([cur, to]);
  return out;
}

interface NotOutstanding {
  from: number;
  to: number;
  /** The member they are outstanding to, or null (queued for redelivery, being read or moved to the dead-letter topic). */
  holder: GroupMember | null;
}

/**
 * The first offsets of [from, to) (within [committed, next)) member m may not ack or
 * nack, or null: unacked offsets neither outstanding to m nor in `released` (m's own
 * taken back). Walks the in-flight ranges [from, to) overlaps and the acked ranges in
 * its gaps: ranges, never offsets one by one.
 */
function notOutstanding(m: GroupMember, ps: PartitionGroupState, allowed: ReadonlyArray<RangeSet | undefined>, from: number, to: number): NotOutstanding | null {
  const inf = ps.inflight;
  let cur = from;
  for (let j = firstInflight(inf, from); cur < to; j++) {
    const r = j < inf.length && inf[j]!.from < to ? inf[j]! : null;
    const gapEnd = r ? Math.max(cur, r.from) : to;
    if (cur < gapEnd) {
      const bad = unackedNotIn(ps, allowed, cur, gapEnd);
      if (bad) return { from: bad[0], to: bad[1], holder: null };
    }
    if (!r) break;
    const a = Math.max(r.from, cur);
    const b = Math.min(r.to, to);
    if (r.member !== m) {
      const bad = unackedNotIn(ps, allowed, a, b);
      if (bad) return { from: bad[0], to: bad[1], holder: r.member };
    }
    cur = b;
  }
  return null;
}

/** The first unacked offsets of [from, to) in none of `allowed`, or null. */
function unackedNotIn(ps: PartitionGroupState, allowed: ReadonlyArray<RangeSet | undefined>, from: number, to: number): [number, number] | null {
  if (ps.acked.countIn(from, to) === to - from) return null;
  for (const [a, b] of ps.acked.gapsIn(from, to)) {
    const bad = uncovered(allowed, a, b);
    if (bad) return bad;
  }
  return null;
}

function notDeliveredTo(m: GroupMember, ps: PartitionGroupState, what: string, bad: NotOutstanding): UringmqError {
  const gs = m.state;
  const where = bad.holder
    ? `they are outstanding to member ${bad.holder.id}`
    : 'they are waiting for redelivery or being moved to the dead-letter topic';
  return new UringmqError(
    'FAILED_PRECONDITION',
    `${what} on ${gs.topic}/${ps.index} by member ${m.id} of group ${gs.group} names offsets [${bad.from}, ${bad.to}) never delivered to this member (${where}): a member may ack or nack only messages delivered to it`,
  );
}

/** Adds [from, to) to the partition's set in `map`. */
function addRange(map: Map<number, RangeSet>, partition: number, from: number, to: number): void {
  let set = map.get(partition);
  if (!set) map.set(partition, (set = new RangeSet()));
  set.add(from, to);
}

/**
 * Brings m's `released` and `voided` of a partition up to the commitOffsets since it
 * last acked or nacked there: everything it was delivered before one is void (its
 * late acks ignored, neither taken nor refused), also what `released` no longer
 * holds (pruned once acked) and for a member that had left before the move.
 */
function catchUpResets(m: GroupMember, ps: PartitionGroupState): void {
  if ((m.resetsSeen.get(ps.index) ?? 0) === ps.resets) return;
  m.resetsSeen.set(ps.index, ps.resets);
  m.released.delete(ps.index);
  const end = m.deliveredEnd.get(ps.index) ?? 0;
  if (end > ps.committed) addRange(m.voided, ps.index, ps.committed, end);
}

/** Drops what lies below the committed offset from m's taken-back and voided offsets of the partition. */
function pruneReleased(m: GroupMember, ps: PartitionGroupState): void {
  for (const map of [m.released, m.voided]) {
    const set = map.get(ps.index);
    if (!set) continue;
    const f = set.first();
    if (!f || f[0] >= ps.committed) continue;
    set.removeBelow(ps.committed);
    if (set.rangeCount === 0) map.delete(ps.index);
  }
}

/** Splits `cap` among needs: none gets more than it needs, and the rest is shared evenly. */
function fairShares(needs: number[], cap: number): number[] {
  const order = needs.map((_, i) => i).sort((a, b) => needs[a]! - needs[b]!);
  const quota = needs.map(() => 0);
  let left = cap;
  order.forEach((i, k) => {
    quota[i] = Math.min(needs[i]!, Math.floor(left / (order.length - k)));
    left -= quota[i]!;
  });
  return quota;
}

/** Committed offsets as versions before the .offs file wrote them (JSON); null when that file does not exist. */
async function readLegacyOffsets(file: string): Promise<number[] | null> {
  try {
    const j = JSON.parse(await fs.readFile(file, 'utf8')) as { committed?: unknown };
    return Array.isArray(j.committed) ? j.committed.map((c) => (typeof c === 'number' ? c : -1)) : [];
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new UringmqError('IO_ERROR', `cannot read committed offsets ${file}: ${(e as Error).message}`);
  }
}

/**
 * Removes every group's committed offsets for `topic` under `groupsDir` (the current
 * file and an older version's JSON): when a topic is deleted, and before one is created
 * under a name that may have been used before (a delete that crashed half-way).
 */
export async function removeGroupOffsets(groupsDir: string, topic: string, stored: StoredGroups): Promise<void> {
  let groups: import('node:fs').Dirent[];
  try {
    groups = await fs.readdir(groupsDir, { withFileTypes: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new UringmqError('IO_ERROR', `cannot list ${groupsDir}: ${(e as Error).message}`);
  }
  for (const g of groups) {
    if (!g.isDirectory()) continue;
    // Durable before the caller goes on: createTopic makes a topic of the same name
    // next, and a power cut that kept it and lost the unlink would give the new topic
    // the deleted one's committed offsets.
    try {
      await removeOffsetsFiles(path.join(groupsDir, g.name), topic);
    } finally {
      // A failure may come after an unlink (the sync): what is gone no longer counts.
      await forgetIfGone(stored, path.join(groupsDir, g.name), g.name, topic);
    }
  }
}

/**
 * Removes a group's offsets files for `topic` (the current and an older version's),
 * durably (the directory synced when one was there), and the group's directory if that
 * leaves it empty. Whether there was a file to remove.
 */
async function removeOffsetsFiles(groupDir: string, topic: string): Promise<boolean> {
  const { file: current, legacyFile } = offsetsFiles(groupDir, topic);
  let removed = false;
  for (const file of [current, legacyFile]) {
    try {
      await fs.unlink(file);
      removed = true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw new UringmqError('IO_ERROR', `cannot remove committed offsets ${file}: ${(e as Error).message}`);
    }
  }
  if (removed)
    await fsyncDir(groupDir).catch(async (e: NodeJS.ErrnoException) => {
      // Emptied by the unlink and removed meanwhile (retention's removeIfEmpty after it
      // took another topic's file): what the directory held is gone with it once its
      // removal is durable. (An IO_ERROR here answered a delete that was done, and left
      // the group counted against maxGroups.)
      if (e.code === 'ENOENT') return fsyncDir(path.dirname(groupDir));
      throw e;
    }).catch((e: Error) => {
      throw new UringmqError('IO_ERROR', `cannot sync ${groupDir} after removing committed offsets: ${e.message}`);
    });
  await removeIfEmpty(groupDir); // a group of that topic alone leaves no directory behind
  return removed;
}

/** A join or commit that found its group taken out of memory by deleteGroup, again and again. */
function beingDeleted(group: string, topic: string): UringmqError {
  return new UringmqError('UNAVAILABLE', `group ${group} on ${topic} is being deleted; try again`);
}

/** The topic whose committed offsets a group directory's file `name` holds (the current file or an older version's JSON), else null (a temp file of a write under way). */
function offsetsFileTopic(name: string): string | null {
  return name.endsWith(OFFSETS_SUFFIX) ? name.slice(0, -OFFSETS_SUFFIX.length) : name.endsWith('.json') ? name.slice(0, -'.json'.length) : null;
}

/** Uncounts the pair (StoredGroups) unless one of its files is still there (a removal or a failed create that left one). */
async function forgetIfGone(stored: StoredGroups, groupDir: string, group: string, topic: string): Promise<void> {
  const { file, legacyFile } = offsetsFiles(groupDir, topic);
  for (const f of [file, legacyFile]) if (await exists(f)) return;
  stored.delete(group, topic);
}

/** Whether `file` exists; a file that cannot be looked at (EACCES, EIO) counts as there. */
async function exists(file: string): Promise<boolean> {
  try {
    await fs.lstat(file);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}

/** Removes a group's directory once no topic's offsets are left in it (a group creating one meanwhile makes it again: OffsetsFile.open). */
async function removeIfEmpty(dir: string): Promise<void> {
  try {
    await fs.rmdir(dir);
  } catch {
    // not empty, or gone already
  }
}
