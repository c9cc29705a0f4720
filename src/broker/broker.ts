/**
 * The embedded broker: topics and partitions over the native log engine. One
 * instance owns one data directory (an exclusive lock) and one I/O thread.
 *
 *   <dir>/.lock                      flock held while open
 *   <dir>/.flush/d/flush             empty; its fdatasync flushes the disk's cache (EngineOptions.flushDir)
 *   <dir>/topics/<name>/topic.json   topic config (atomic writes)
 *   <dir>/topics/<name>/cuts.json    partition ends where a power cut may have cut (log_cuts.ts)
 *   <dir>/topics/<name>/<p>/         segment files of partition p
 *   <dir>/trash/                     topics being deleted (emptied on open)
 */
import { readFileSync } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { UringmqError, fromNative, invalid, shown, writeError } from '../errors';
import { HEADER_SIZE, MAGIC, MIN_MAX_BATCH_BYTES, decodeBatches, firstRecordKey, checkBatchProducerId, largestRecordBytes, readBatchMeta, type DecodedRecord } from '../codec/record_batch';
import { BufferPool } from '../codec/buffer_pool';
import { createEngine, lockDir, type NativeEngine, type NativePartition, type PartitionInfo } from '../native';
import { barrierProblem } from './mount_check';
import { MAX_PARTITIONS, MAX_SEGMENT_BYTES, MIN_SEGMENT_BYTES, fsyncDir, readTopicConfig, removeWriteTemps, writeFileDurable, type TopicConfig } from './topic_store';
import { nonNegInt, positiveInt, refusePartitionOptions, validateGroupName, validateOffset, validateTopicName } from './validate';
import { Producer, type ProducerOptions } from './producer';
import { Consumer, type ConsumerOptions } from './consumer';
import { GroupCoordinator, StoredGroups, removeGroupOffsets, type GroupDescription } from './groups';
import { IdempotenceTable, NEW, type IdempotenceVerdict } from './idempotence';
import { cutsAfter, highestCutRun, readLogCuts, recordLogCut, type LogCut } from './log_cuts';
import { OFFSETS_SUFFIX, readOffsetsFile } from './offsets_file';
import { readProducerSnapshot, removeProducerSnapshot, writeProducerSnapshot, type ProducerSnapshot } from './producer_snapshot';
import { partitionForKey } from './partitioner';
import { IdTable } from './id_table';
import { WaiterList } from './waiter_list';
import { GroupConsumer, type GroupConsumerOptions } from './group_consumer';
import { FetchServer, type FetchServerOptions } from '../fetch/server';
import { topicIncarnation } from '../fetch/protocol';

export type Durability = 'sync' | 'none' | { intervalMs: number };
export type IoBackend = 'io_uring' | 'thread';

/** Broker.logWriteLatency and Broker.logAppendLatency: durations counted in buckets. */
export interface LogLatency {
  count: number;
  sumSeconds: number;
  /** Upper bounds in seconds (16 µs doubling to ~16.8 s); counts has one bucket more, for longer ones. */
  le: readonly number[];
  counts: number[];
}

/** The core's latency buckets' upper bounds in seconds: at most 2^(i+4) µs, as many as it reports (LatencyHistogram::kBuckets). */
let latencyBucketBounds: readonly number[] = [];

function logLatency(w: Float64Array): LogLatency {
  const counts = Array.from(w.subarray(2));
  if (latencyBucketBounds.length !== counts.length - 1) latencyBucketBounds = Array.from({ length: counts.length - 1 }, (_, i) => 2 ** (i + 4) / 1e6);
  return { count: w[0]!, sumSeconds: w[1]!, le: latencyBucketBounds, counts };
}

export interface BrokerOptions {
  /** Data directory; created if missing. */
  dir: string;
  /** 'sync' (default): a send resolves once the data is on disk (fdatasync).
   *  { intervalMs }: resolves after the write; the disk is synced at most every intervalMs.
   *  'none': resolves after the write; synced only when segments roll and on close. */
  durability?: Durability;
  /**
   * Group commit: the shortest time, in µs, from the start of one of the log's write
   * cycles to the start of the next (default 1000; 0 to 100000). Appends that arrive
   * meanwhile share the next cycle, so at high rates of small appends the disk sees
   * fewer, larger writes and (with 'sync') fewer flushes; an append arriving when the
   * disk is idle and the last cycle began longer ago than this is written at once. On a
   * virtual disk each flush costs the host CPU time charged to the VM, and a VM over its
   * quota is stopped (PERFORMANCE-NOTES, 2026-12-05); 0 starts a cycle as soon as the
   * previous one is done. A backlog (a cycle filled to its byte limit) never waits.
   */
  groupCommitUs?: number;
  /**
   * With durability `sync`: how many bytes ahead of each partition's data the log keeps
   * its preallocated space written with zeros (default 2 MiB; 0 to 64 MiB, 0: never).
   * A durable write into preallocated space never written must also record on disk that
   * it now holds data (on ext4 a metadata write, through a journal commit where there is a journal); into
   * zeros it is one write and a flush. The I/O thread zeroes between write cycles (when
   * no append waits, or in the group commit pause), a MiB at a time at most every 20 ms,
   * for partitions written within the last second in cycles of at most 32 KiB on
   * average: the writers a step pays off for. A writer that overtakes the zeros writes
   * as without them. The zeros take no space beyond the preallocation.
   */
  zeroAheadBytes?: number;
  /** 'auto' (default) uses io_uring where the kernel allows it, else a thread doing
   *  pwrite/fdatasync. URINGMQ_IO_BACKEND sets the default. */
  ioBackend?: 'auto' | IoBackend;
  /** Largest encoded record accepted (default 1 MiB; at most maxBatchBytes - 1 KiB). */
  maxRecordBytes?: number;
  /**
   * Largest RecordBatch accepted from any producer: embedded sendBatch, publishBatch,
   * gRPC publishes (default 8 MiB, at most 64 MiB). Larger ones are refused whole
   * with RECORD_TOO_LARGE. A gRPC server delivers a batch as one message, so its
   * maxMessageBytes must exceed this (the default 16 MiB does).
   */
  maxBatchBytes?: number;
  /** Bytes handed to the I/O thread and not yet durable before appends wait (default 256 MiB). */
  maxPendingBytes?: number;
  /**
   * The write queue (bytes accepted and not yet durable) past which producers are
   * held back: embedded producers wait, the gRPC server stops reading publish
   * streams, so clients' windows fill (default 64 MiB). Released at half of it.
   */
  writeHighWaterBytes?: number;
  /** The write queue's hard limit: publishes past it get RESOURCE_EXHAUSTED with a retry hint (default 512 MiB). */
  maxQueuedBytes?: number;
  /** Per-partition in-memory cache of the newest batches, for tailing readers (default 1 MiB). */
  tailCacheBytes?: number;
  /**
   * The most bytes the tail caches hold over all partitions (default 256 MiB; 0 to
   * 2^53 - 1, 0 for no tail cache). The partitions written in the last 10 s share it
   * evenly, each at most tailCacheBytes (rebalanced every second); a partition idle
   * longer gives its cache up. Without it only maxPartitions bounded them: 10,000
   * partitions written once held about 10 GB.
   */
  tailCacheTotalBytes?: number;
  /** false forces buffered writes + fdatasync instead of O_DIRECT (default true). */
  directIo?: boolean;
  /**
   * Appends that would leave the data directory's file system with less free space
   * than this are refused with RESOURCE_EXHAUSTED, nothing of them written (like
   * RabbitMQ's disk free limit): the headroom the broker's own small files and a
   * restart need when the data has filled the disk. Appending resumes by itself once
   * retention, a deleted topic or the operator frees space (default 64 MiB; 0: up to
   * a full disk, which then refuses the same way, but may leave too little to reopen).
   */
  minFreeBytes?: number;
  /**
   * The idempotent-producer table survives restarts, so a producer's retry of a batch
   * written before one is still answered as a duplicate: each partition's table is
   * written to a snapshot at close and whenever this many bytes more were appended
   * (at most once a second), and an open reads the snapshot and the log after it.
   * Without a snapshot (a crash before the first, or a damaged one) the open reads
   * this many of the partition's newest bytes instead: every idempotent batch (its
   * CRC is checked) and the other batches' headers. Default 16 MiB; 0: no snapshots,
   * and tables start empty.
   */
  producerStateScanBytes?: number;
  /**
   * How long a consumer group's committed offsets on a topic are kept once the group
   * has had no member there (counted from when it left memory, a minute after its last
   * member, or its last commit if later; wall-clock time) (default 7 days, as Kafka's
   * offsets.retention.minutes; 0: forever). Then its file is removed (checked every
   * tenth of this, at most hourly), and a member joining later starts from its `from`.
   */
  groupRetentionMs?: number;
  /**
   * The most topics the broker holds (default 10,000; 1 to 1,000,000): each costs open
   * files, memory and directories per partition. A createTopic past it is refused with
   * RESOURCE_EXHAUSTED and nothing written; a deleted topic frees its place. A group's
   * dead-letter topic counts too: while it cannot be made, the messages bound for it
   * stay with the group and the move is retried with backoff (1 s, doubling to 30 s). Topics already in the
   * data directory open whatever their number; only new ones are refused.
   */
  maxTopics?: number;
  /**
   * The most partitions the broker holds, over all its topics (1 to 1,000,000; by
   * default an eighth of the process's open-file limit, at most 10,000: 2,500 at 20,000;
   * Node raises the soft limit to the hard one as it starts, so `ulimit -Hn`). Each partition keeps four files open (its directory, its active
   * segment's log twice and its index) and more while old segments are read, and takes
   * a segment's first space on disk: maxTopics alone (each topic up to 4096 partitions)
   * let one client's creates take every descriptor of the process, after which it could
   * accept no connection and open no file. A createTopic (a dead-letter topic's too)
   * that would pass it is refused with RESOURCE_EXHAUSTED and nothing written; a deleted
   * topic frees its partitions. Partitions already in the data directory all open.
   */
  maxPartitions?: number;
  /**
   * The most idempotent batches the idempotent-producer tables remember over all
   * partitions (default 4,194,304, about 0.5 GB of memory; 1 to 1,000,000,000). Each
   * partition's table keeps its share (this over the partitions held, at most 65,536
   * and at least 64, one producer's window), least recently used producers forgotten
   * first: a retry of a forgotten producer's batch is taken as new and written again.
   * Without it every partition kept 65,536 (about 8 MB of heap), and a client sending
   * batches of a thousand producer ids to a few hundred partitions ran the process out
   * of memory.
   */
  maxProducerStateBatches?: number;
  /**
   * The most consumer groups whose state the broker keeps (default 10,000; 1 to
   * 1,000,000), counted per topic: a group consuming three topics counts three (each is
   * an offsets file of its own, and deleteGroup, retention and deleteTopic remove one
   * topic's). A join or commitOffset that would make one more is refused with
   * RESOURCE_EXHAUSTED and nothing written; groupRetentionMs, deleteGroup and
   * deleteTopic free places. Groups already in the data directory count, whatever
   * their number; only new ones are refused.
   */
  maxGroups?: number;
  /** Test hook: the I/O thread sleeps this long per cycle (a slow disk). */
  testIoDelayMs?: number;
  /** @internal Test hook: the io_uring backend's first submission or wait fails. */
  testUringFault?: 'submit' | 'wait' | 'short-submit-wait';
  /**
   * @internal Test hook: a path for the journal of data writes no flush has covered yet
   * (simulatePowerCut in src/native.ts, native/log/power_cut.h). The environment's
   * URINGMQ_TEST_POWER_CUT sets it for a server child (`uringmq serve`), and
   * URINGMQ_TEST_POWER_CUT_KILL_AFTER the engine's testPowerCutKillAfter: the process
   * kills itself after that many write batches left writes no flush covered yet.
   */
  testPowerCut?: string;
}

export interface TopicOptions {
  partitions?: number;
  /** Each limit left out: none. 0 is a limit: keep no sealed segment (the active one stays). */
  retention?: { maxBytes?: number; maxAgeMs?: number };
  segmentBytes?: number;
}

export interface PartitionDescription {
  partition: number;
  startOffset: number;
  endOffset: number;
  bytes: number;
  segments: number;
  directIo: boolean;
}

export interface TopicDescription {
  name: string;
  /**
   * Consumer groups of this topic: those with members (or in memory), and those with
   * none that have committed offsets on it in the data directory (members empty,
   * generation 0; committed -1 where they never committed, with lag 0 there), until
   * groupRetentionMs removes them.
   */
  groups: GroupDescription[];
  partitions: PartitionDescription[];
  segmentBytes: number;
  /** As created: a limit left out is none; 0 is a limit of 0 (also through the client). */
  retention: { maxBytes?: number; maxAgeMs?: number };
  createdAt: number;
}

export interface Message extends DecodedRecord {
  topic: string;
  partition: number;
}

export interface AppendResult {
  baseOffset: number;
  count: number;
}

export interface PublishResult extends AppendResult {
  partition: number;
  /** The batch was a retry of one already written; offsets are the original ones (-1 if too old to know). */
  duplicate: boolean;
}

/** @internal */
export class TopicState {
  deleted = false;
  roundRobin = 0;
  partitions: PartitionState[] = [];
  /** The partitions' ends at opens that followed a stop which may have lost unsynced tails (log_cuts.ts). */
  cuts: LogCut[] = [];
  constructor(readonly config: TopicConfig, readonly dir: string) {}
  get name(): string {
    return this.config.name;
  }
  /** Per partition, the offset past which state written in run `writtenIn` may name messages lost since (Infinity: none). */
  cutsAfter(writtenIn: number, currentRun: number): number[] {
    return cutsAfter(this.cuts, this.config.partitions, writtenIn, currentRun);
  }
}

/** @internal */
export class PartitionState {
  pending = 0;
  readonly idempotence: IdempotenceTable;
  readonly dataWaiters = new WaiterList();
  idleWaiters: Array<() => void> = [];
  /** Bytes appended since the last producer-state snapshot was taken (or since the open). */
  sinceSnapshot = 0;
  /** No snapshot while running before this time (Date.now()): at most one per snapshotIntervalMs. */
  nextSnapshotAt = 0;
  /** A snapshot being written (one at a time). */
  snapshotting: Promise<void> | null = null;
  /** The last snapshot failed and said so: the failures after it (a full disk retried every interval) stay quiet until one succeeds. */
  snapshotWarned = false;
  /** An append was refused for want of disk space and a warning said so: quiet until an append succeeds. */
  spaceWarned = false;
  /**
   * An append was refused for want of disk space, with this error. Until the core has
   * taken the resume request sent then (in order behind everything sent before it, which
   * the core refuses the same way), new appends are refused with it at once: none is
   * written ahead of the refused batch, so a producer's retries of its batches come in
   * order (an idempotent producer's later batch written first would make the refused
   * one a hole that no retry can fill).
   */
  spaceRefused: UringmqError | null = null;
  /** Its tail cache's bound now (Broker's tail-cache shares): 0 until it is written, and again once it has been idle for tailCacheIdleMs. */
  cacheCap = 0;
  /** Appended to since the last rebalance of the tail caches (Broker.rebalanceTailCaches). */
  written = false;
  /** performance.now() at the last rebalance that found it written. */
  writtenAt = -Infinity;
  constructor(readonly topic: TopicState, readonly index: number, readonly native: NativePartition, share?: () => number) {
    this.idempotence = new IdempotenceTable(`${topic.name}/${index}`, undefined, undefined, share);
  }
  get dir(): string {
    return path.join(this.topic.dir, String(this.index));
  }
  get label(): string {
    return `${this.topic.name}/${this.index}`;
  }
}

let trashSeq = 0;

interface QueuedAppend {
  ps: PartitionState;
  batch: Buffer;
  /** batch came from this.batchPool and goes back to it on completion */
  pooled: boolean;
  seal: boolean;
  /** on disk before it completes, whatever the durability mode */
  sync: boolean;
  /** An append of nothing that ends the partition's refusal for space (see PartitionState.spaceRefused). */
  resume?: boolean;
  count: number;
  resolve: (r: AppendResult) => void;
  reject: (e: Error) => void;
}

const MiB = 1 << 20;
/**
 * Room maxBatchBytes keeps above maxRecordBytes: a batch's header and, for the broker's
 * own dead-letter moves, the x-uringmq-* headers a moved record gains (at most ~800 bytes
 * with 249-character names).
 */
const RECORD_ROOM_BYTES = 1024;
/** With `sync`, an append of nothing: it completes once everything written before it is on disk. */
const EMPTY_BATCH = Buffer.alloc(0);
const DEFAULT_SEGMENT_BYTES = 128 * MiB;
/** Partition opens of one topic in flight at once (see openTopic). */
const PARTITION_OPENS_AT_ONCE = 4;
const NATIVE_MAX_BATCH_BYTES = 64 * MiB;

/** The key of Broker's in-place append, for the gRPC server only (see the method). */
export const PUBLISH_OWNED_BATCH = Symbol('publishOwnedBatch');

export class Broker {
  readonly dir: string;
  readonly durability: Durability;
  readonly maxRecordBytes: number;
  /** The largest RecordBatch accepted (encoded bytes, BrokerOptions.maxBatchBytes). */
  readonly maxBatchBytes: number;
  private readonly engine: NativeEngine;
  private readonly lock: { release(): void };
  private readonly topics = new Map<string, TopicState>();
  /** Appends handed to the engine, by request id (an IdTable: one is added and removed per append). */
  private readonly pending = new IdTable<QueuedAppend>();
  private readonly waiting: QueuedAppend[] = [];
  private pendingBytes = 0;
  private waitingBytes = 0;
  private writableWaiters: Array<() => void> = [];
  /** @internal */
  readonly writeHighWaterBytes: number;
  /** @internal */
  readonly maxQueuedBytes: number;
  private nextId = 1;
  private state: 'open' | 'closing' | 'closed' = 'open';
  private closePromise: Promise<void> | null = null;
  private idleWaiters: Array<() => void> = [];
  private adminChain: Promise<unknown> = Promise.resolve();
  /**
   * The newest createdAt of a topic this broker opened or created. A topic's createdAt
   * is its incarnation (describeTopic, and the fetch plane's check of a fetch that names
   * one): one made again under a deleted topic's name within the same millisecond must
   * still get another, so each new one is past every one seen.
   */
  private lastCreatedAt = 0;
  private readonly maxPendingBytes: number;
  private readonly tailCacheBytes: number;
  /** BrokerOptions.tailCacheTotalBytes. */
  readonly tailCacheTotalBytes: number;
  private readonly directIo: boolean;
  /** Free space appends leave on the data directory's file system (BrokerOptions.minFreeBytes). */
  readonly minFreeBytes: number;
  /** The most topics createTopic makes room for (BrokerOptions.maxTopics). */
  readonly maxTopics: number;
  /** The most partitions, over all topics, createTopic makes room for (BrokerOptions.maxPartitions). */
  readonly maxPartitions: number;
  /** The most idempotent batches the partitions' producer tables remember in all (BrokerOptions.maxProducerStateBatches). */
  readonly maxProducerStateBatches: number;
  /**
   * Partitions held or being opened (counted before their open, so each producer table
   * is refilled within its share): what maxProducerStateBatches is shared among and, as
   * partitionCount, what maxPartitions bounds. Admin calls run one at a time, so between
   * them it equals the partitions of the topics held.
   */
  private partitionsHeld = 0;
  /** A partition's producer table's bound (IdempotenceTable): its share of maxProducerStateBatches, at least a producer's window. */
  private readonly producerStateShare = (): number =>
    Math.min(IdempotenceTable.MAX_ENTRIES, Math.max(IdempotenceTable.KEEP_BATCHES, Math.floor(this.maxProducerStateBatches / Math.max(1, this.partitionsHeld))));
  /**
   * After partitionsHeld grew: every table down to its smaller share. A partition no
   * longer written kept what it held under the larger one, and creates then passed
   * maxProducerStateBatches many times over. Its cost, one pass over the partitions,
   * falls on a create (which already does file I/O for each of its own), not on publishes.
   */
  private trimProducerTables(): void {
    for (const t of this.topics.values()) for (const ps of t.partitions) ps.idempotence.trim();
  }
  /*
   * The tail caches' budget (tailCacheTotalBytes) is shared by the partitions written
   * in the last tailCacheIdleMs, not by every partition held: a broker holding 10,000
   * partitions of which ten are written gives those ten up to tailCacheBytes each, not
   * 1/10,000 of the budget (an idle partition's readers have caught up, or read the
   * file). Like Pulsar's entry cache (one size for the broker, entries evicted by age).
   * The sum of the bounds never passes the budget: a partition's first write takes
   * its share only if the budget has room for it (else it has none until the next
   * rebalance, within a second), and a rebalance shrinks before it grows.
   */
  /** Partitions holding a tail-cache bound or written in the last tailCacheIdleMs: what a rebalance looks at. */
  private readonly cacheCandidates = new Set<PartitionState>();
  /** The sum of the partitions' tail-cache bounds (cacheCap), at most tailCacheTotalBytes. */
  private tailCacheGranted = 0;
  /** Partitions whose bound is above 0. */
  private tailCacheHolders = 0;
  /** @internal A partition unwritten this long gives its tail cache up at the next rebalance (tests shorten it). */
  tailCacheIdleMs = 10_000;
  /** @internal The sum of the partitions' tail-cache bounds now (at most tailCacheTotalBytes). */
  get tailCacheGrantedBytes(): number {
    return this.tailCacheGranted;
  }
  private setCacheCap(ps: PartitionState, n: number): void {
    this.tailCacheGranted += n - ps.cacheCap;
    this.tailCacheHolders += (n > 0 ? 1 : 0) - (ps.cacheCap > 0 ? 1 : 0);
    ps.cacheCap = n;
    this.engine.setTailCacheBytes(ps.native, n);
  }
  /** A partition's first append since the last rebalance (one check per batch on the append path). */
  private markWritten(ps: PartitionState): void {
    ps.written = true;
    if (this.state !== 'open' || ps.topic.deleted) return;
    this.cacheCandidates.add(ps);
    if (ps.cacheCap > 0) return;
    const want = Math.min(this.tailCacheBytes, Math.floor(this.tailCacheTotalBytes / (this.tailCacheHolders + 1)));
    if (want > 0 && this.tailCacheGranted + want <= this.tailCacheTotalBytes) this.setCacheCap(ps, want);
  }
  /**
   * @internal Every second (and after a delete): partitions idle for tailCacheIdleMs
   * give their tail caches up; those written in it share the budget evenly, at most
   * tailCacheBytes each. One pass over those partitions, not over all held.
   */
  rebalanceTailCaches(): void {
    if (this.state !== 'open') return;
    const now = performance.now();
    for (const ps of this.cacheCandidates) {
      if (ps.written) {
        ps.written = false;
        ps.writtenAt = now;
      } else if (now - ps.writtenAt >= this.tailCacheIdleMs) {
        if (ps.cacheCap > 0) this.setCacheCap(ps, 0);
        this.cacheCandidates.delete(ps);
      }
    }
    const share = Math.min(this.tailCacheBytes, Math.floor(this.tailCacheTotalBytes / Math.max(1, this.cacheCandidates.size)));
    for (const ps of this.cacheCandidates) if (ps.cacheCap > share) this.setCacheCap(ps, share);
    for (const ps of this.cacheCandidates) if (ps.cacheCap < share) this.setCacheCap(ps, share);
  }
  /** A deleted topic's partitions: their bounds back to the budget before they close. */
  private releaseTailCaches(t: TopicState): void {
    for (const ps of t.partitions) {
      if (ps.cacheCap > 0) this.setCacheCap(ps, 0);
      this.cacheCandidates.delete(ps);
    }
  }
  /** What the partitions' tail caches hold now, in all, bytes (uringmq_tail_cache_bytes). */
  get tailCachedBytes(): number {
    // Closed, its partitions are too (their caches freed): info() on them throws.
    if (this.state === 'closed') return 0;
    let n = 0;
    // Only a partition with a bound above 0 holds anything, and each is a candidate.
    for (const ps of this.cacheCandidates) if (ps.cacheCap > 0) n += this.engine.info(ps.native).cachedBytes;
    return n;
  }
  /** @internal Idempotent batches the partitions' producer tables remember now, in all. */
  get producerStateBatches(): number {
    let n = 0;
    for (const t of this.topics.values()) for (const ps of t.partitions) n += ps.idempotence.size;
    return n;
  }
  /** The most (group, topic) states the groups keep (BrokerOptions.maxGroups). */
  readonly maxGroups: number;
  /** @internal The (group, topic) pairs with committed offsets in the data directory: what maxGroups bounds. */
  storedGroups = new StoredGroups();
  private readonly producerStateScanBytes: number;
  /** @internal Least time between two producer-state snapshots of a partition while running (tests shorten it). */
  snapshotIntervalMs = 1000;
  /** The last run crashed without `sync`: recovery checks whole last segments, and a power cut may have cut tails (see state.json). */
  private fullScan = false;
  /** @internal This run's number (state.json): increases from one open of the directory to the next. */
  run = 0;
  /** @internal encode buffers, reused once their append completes */
  readonly batchPool = new BufferPool();
  /** @internal producers holding unsent records, flushed by close() */
  readonly activeProducers = new Set<Producer>();

  private constructor(
    opts: Required<
      Pick<
        BrokerOptions,
        'dir' | 'durability' | 'maxRecordBytes' | 'maxBatchBytes' | 'maxPendingBytes' | 'tailCacheBytes' | 'tailCacheTotalBytes' | 'directIo' | 'minFreeBytes' | 'writeHighWaterBytes' | 'maxQueuedBytes' | 'producerStateScanBytes' | 'maxTopics' | 'maxPartitions' | 'maxGroups' | 'maxProducerStateBatches'
      >
    >,
    engine: NativeEngine,
    lock: { release(): void },
  ) {
    this.dir = opts.dir;
    this.writeHighWaterBytes = opts.writeHighWaterBytes;
    this.maxQueuedBytes = opts.maxQueuedBytes;
    this.durability = opts.durability;
    this.maxRecordBytes = opts.maxRecordBytes;
    this.maxBatchBytes = opts.maxBatchBytes;
    this.maxPendingBytes = opts.maxPendingBytes;
    this.tailCacheBytes = opts.tailCacheBytes;
    this.tailCacheTotalBytes = opts.tailCacheTotalBytes;
    this.directIo = opts.directIo;
    this.minFreeBytes = opts.minFreeBytes;
    this.producerStateScanBytes = opts.producerStateScanBytes;
    this.maxTopics = opts.maxTopics;
    this.maxPartitions = opts.maxPartitions;
    this.maxProducerStateBatches = opts.maxProducerStateBatches;
    this.maxGroups = opts.maxGroups;
    this.engine = engine;
    this.lock = lock;
  }

  /**
   * Checks the settings alone, with the errors open() would give, so that a command
   * line can refuse them before it says it opens a data directory (and before it does).
   */
  static checkOptions(opts: BrokerOptions): void {
    checkedOptions(opts);
  }

  /** Opens (creating if needed) the broker in opts.dir and recovers every partition. */
  static async open(opts: BrokerOptions): Promise<Broker> {
    const c = checkedOptions(opts);
    opts = c.opts;
    const { durability, backend, maxBatchBytes, maxRecordBytes, maxPendingBytes, tailCacheBytes, tailCacheTotalBytes, minFreeBytes, groupCommitUs, zeroAheadBytes, producerStateScanBytes, groupRetentionMs, maxQueuedBytes, writeHighWaterBytes, maxTopics, maxPartitions, maxGroups, maxProducerStateBatches } = c;
    const dir = path.resolve(opts.dir);
    await makeDirs(dir).catch((e: Error) => {
      throw new UringmqError('IO_ERROR', `cannot create data directory ${dir}: ${e.message}`);
    });
    const lock = lockDir(dir);
    let engine: NativeEngine | null = null;
    try {
      // Before anything in it is made or changed (but the lock file, which only says who holds it).
      const prev = await readState(dir);
      checkDirFormat(dir, prev);
      await fs.mkdir(path.join(dir, 'topics'), { recursive: true }).catch((e: Error) => {
        throw new UringmqError('IO_ERROR', `cannot create ${path.join(dir, 'topics')}: ${e.message}`);
      });
      let broker: Broker | null = null;
      const testPowerCut = opts.testPowerCut ?? (process.env.URINGMQ_TEST_POWER_CUT || undefined);
      engine = createEngine({
        backend,
        durability: typeof durability === 'string' ? durability : 'interval',
        intervalMs: typeof durability === 'object' ? durability.intervalMs : undefined,
        groupCommitUs,
        zeroAheadBytes,
        flushDir: path.join(dir, '.flush'),
        maxBatchBytes, // the core refuses a larger append whatever path it came by
        testIoDelayMs: opts.testIoDelayMs ?? 0,
        ...(opts.testUringFault ? { testUringFault: opts.testUringFault } : {}),
        ...(testPowerCut ? { testPowerCut, testPowerCutKillAfter: Number(process.env.URINGMQ_TEST_POWER_CUT_KILL_AFTER || 0) } : {}),
        onComplete: (ids, codes, bases, errors) => broker!.onComplete(ids, codes, bases, errors),
      });
      if (engine.flushNote) process.emitWarning(engine.flushNote, 'UringmqWarning');
      const noBarrier = barrierProblem(dir);
      if (noBarrier) process.emitWarning(noBarrier, 'UringmqWarning');
      broker = new Broker(
        {
          dir,
          durability,
          maxRecordBytes,
          maxBatchBytes,
          maxPendingBytes,
          tailCacheBytes,
          tailCacheTotalBytes,
          directIo: opts.directIo ?? true,
          minFreeBytes,
          writeHighWaterBytes,
          maxQueuedBytes,
          producerStateScanBytes,
          maxTopics,
          maxPartitions,
          maxGroups,
          maxProducerStateBatches,
        },
        engine,
        lock,
      );
      await emptyTrash(path.join(dir, 'trash'));
      await removeWriteTemps(dir); // state.json's
      // Made now, while there is room: deleteTopic moves a topic into it, and on a full
      // disk (when deleting a topic is how space is won back) a new directory cannot be made.
      await fs.mkdir(path.join(dir, 'trash')).catch(() => undefined);
      ({ fullScan: broker.fullScan, run: broker.run } = await startRun(dir, durability, prev));
      await broker.loadTopics();
      // Counted whatever their number: maxGroups refuses new groups only, never data there is.
      broker.storedGroups = await StoredGroups.scan(path.join(dir, 'groups'));
      // Recovered and the cuts recorded: only now may a crash of this run be trusted
      // as a `sync` one (until here state.json says the previous run's mode).
      if (broker.fullScan) await writeFileDurable(path.join(dir, STATE_FILE), stateJson({ clean: false, durability, run: broker.run }));
      if (groupRetentionMs > 0) broker.expireGroupsEvery(groupRetentionMs);
      const b = broker;
      b.warningTimer = setInterval(() => {
        b.relayNativeWarnings();
        b.rebalanceTailCaches();
      }, 1000).unref();
      return broker;
    } catch (e) {
      engine?.close();
      lock.release();
      throw fromNative(e);
    }
  }

  private groupExpiryTimer: NodeJS.Timeout | null = null;
  private warningTimer: NodeJS.Timeout | null = null;

  /**
   * What the native threads' background work ran into, which nothing else reports
   * (a retired segment file retention cannot remove, a fetch reply cut off by its
   * file): as process warnings, looked for every second.
   */
  private relayNativeWarnings(): void {
    for (const w of this.engine.takeWarnings?.() ?? []) process.emitWarning(w, 'UringmqWarning');
    for (const s of this.fetchServers) s.warnReadErrors();
  }

  /** Removes groups' committed offsets unused for `retentionMs` (GroupCoordinator.expireGroups), checking every tenth of it, at most hourly. */
  private expireGroupsEvery(retentionMs: number): void {
    const every = Math.max(1000, Math.min(3_600_000, Math.floor(retentionMs / 10)));
    this.groups.touchEveryMs = every;
    const run = () => {
      this.groupExpiryTimer = null;
      if (this.state !== 'open') return;
      this.groups.expireGroups(retentionMs).then(
        () => undefined,
        (e: unknown) => process.emitWarning(`expiring consumer groups' committed offsets: ${e instanceof Error ? e.message : String(e)}`, 'UringmqWarning'),
      ).finally(() => {
        if (this.state === 'open') this.groupExpiryTimer = setTimeout(run, every).unref();
      });
    };
    this.groupExpiryTimer = setTimeout(run, every).unref();
  }

  /** The I/O backend in use. */
  get ioBackend(): IoBackend {
    return this.engine.backend;
  }

  /** Why that backend was chosen (e.g. "io_uring_setup: Operation not permitted"). */
  get ioBackendNote(): string {
    return this.engine.backendNote;
  }

  get closed(): boolean {
    return this.state !== 'open';
  }

  private async loadTopics(): Promise<void> {
    const topicsDir = path.join(this.dir, 'topics');
    const found: Array<{ cfg: TopicConfig; tdir: string }> = [];
    for (const ent of await fs.readdir(topicsDir, { withFileTypes: true })) {
      if (!ent.isDirectory()) continue;
      const tdir = path.join(topicsDir, ent.name);
      await removeWriteTemps(tdir); // topic.json's and cuts.json's
      const cfg = await readTopicConfig(tdir);
      if (!cfg) {
        // A create that crashed before topic.json landed: it never existed, and nothing
        // was ever appended to it (topic.json is what makes it take appends). Records
        // there mean its topic.json was lost some other way: removing the directory
        // would delete a topic's data without a word.
        const held = await recordsIn(tdir);
        if (held) throw new UringmqError('IO_ERROR', `${tdir} has no topic.json but holds records (${held}): its metadata was lost, it is not a create that crashed; restore topic.json ({ "name", "partitions", "segmentBytes", "retention": {} }) or remove the directory`);
        await fs.rm(tdir, { recursive: true, force: true });
        continue;
      }
      if (cfg.name !== ent.name) throw new UringmqError('IO_ERROR', `topic metadata in ${tdir} names "${cfg.name}"`);
      if (topicIncarnation(cfg.createdAt) === 0) await this.giveIncarnation(cfg, tdir);
      // A partition count lowered by hand would hide the partitions above it, records
      // and all, without a word (the count never shrinks otherwise).
      const beyond = await recordsIn(tdir, (name) => /^[0-9]+$/.test(name) && Number(name) >= cfg.partitions);
      if (beyond)
        throw new UringmqError('IO_ERROR', `${path.join(tdir, 'topic.json')} says ${cfg.partitions} partition${cfg.partitions === 1 ? '' : 's'}, but a partition past those holds records (${beyond}): restore the partition count in topic.json, or move that partition's directory out`);
      found.push({ cfg, tdir });
    }
    // All counted before any opens: each partition's producer table is refilled at its
    // open, bounded by its share of maxProducerStateBatches over all of them (counted
    // topic by topic, the first topics' tables took far more than their share).
    this.partitionsHeld = found.reduce((n, f) => n + f.cfg.partitions, 0);
    for (const { cfg, tdir } of found) {
      const t = await this.openTopic(cfg, tdir);
      t.cuts = await readLogCuts(tdir, cfg.partitions);
      // What the previous run served may have been cut here: where the logs end now is
      // the most that state it wrote can be trusted with (log_cuts.ts).
      if (this.fullScan) t.cuts = await recordLogCut(tdir, t.cuts, this.run, t.partitions.map((ps) => this.partitionInfo(ps).endOffset));
    }
  }

  /**
   * A topic.json without a usable createdAt (an older release's, or restored by hand)
   * gets one, written back before the topic opens. Without it the topic has no
   * incarnation: fetches name none and are served from whatever topic has the name, so
   * a consumer positioned in it when it is deleted and made again is handed the new
   * topic's records at its old offsets. Kept in the file, so it is the same after a
   * restart (one made up per run would look like a topic made again at every restart).
   * Where the file cannot be written, the topic opens with none, as before, and a
   * warning says so.
   */
  private async giveIncarnation(cfg: TopicConfig, tdir: string): Promise<void> {
    const createdAt = Math.max(Date.now(), this.lastCreatedAt + 1);
    const file = path.join(tdir, 'topic.json');
    try {
      await writeFileDurable(file, JSON.stringify({ ...cfg, createdAt }, null, 2));
    } catch (e) {
      process.emitWarning(
        `${file} has no usable createdAt and could not be given one (${(e as Error).message}): topic ${cfg.name} has no incarnation in this run, so fetch consumers cannot tell it from a topic made again under its name`,
        'UringmqWarning',
      );
      return;
    }
    cfg.createdAt = createdAt;
    this.lastCreatedAt = createdAt;
  }

  /** Opens a topic's partitions; `register`: make it visible (createTopic does that once topic.json is durable). */
  private async openTopic(cfg: TopicConfig, tdir: string, register = true): Promise<TopicState> {
    const t = new TopicState(cfg, tdir);
    // A few at a time: each open recovers its log and reads its newest bytes on the
    // libuv pool (4 threads by default), so a topic of many partitions opens in a
    // fraction of the time one after another took.
    const opened: Array<PartitionState | undefined> = new Array<PartitionState | undefined>(cfg.partitions);
    const errors: unknown[] = [];
    let next = 0;
    const opener = async (): Promise<void> => {
      while (errors.length === 0 && next < cfg.partitions) {
        const p = next++;
        try {
          opened[p] = await this.openPartition(t, p);
        } catch (e) {
          errors.push(e);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARTITION_OPENS_AT_ONCE, cfg.partitions) }, opener));
    if (errors.length > 0) {
      for (const ps of opened) if (ps) this.engine.closePartition(ps.native);
      throw fromNative(errors[0]);
    }
    t.partitions = opened as PartitionState[];
    if (register) this.topics.set(cfg.name, t);
    return t;
  }

  private async openPartition(t: TopicState, p: number): Promise<PartitionState> {
    const cfg = t.config;
    const pdir = path.join(t.dir, String(p));
    await fs.mkdir(pdir, { recursive: true });
    await removeWriteTemps(pdir); // producer-state snapshots'
    let snap: ProducerSnapshot | null = null;
    if (this.producerStateScanBytes > 0) {
      try {
        snap = await readProducerSnapshot(pdir);
      } catch (e) {
        process.emitWarning(`${cfg.name}/${p}: ${(e as Error).message}; the idempotent-producer table is refilled from the newest part of the log only`, 'UringmqWarning');
      }
    } else await removeProducerSnapshot(pdir); // not kept up to date by this run: a later one must not trust it
    this.lastCreatedAt = Math.max(this.lastCreatedAt, topicIncarnation(cfg.createdAt));
    const native = await this.engine.openPartition(pdir, `${cfg.name}/${p}`, {
      // The fetch plane refuses fetches that name another incarnation than this (0, for
      // a topic.json without a usable createdAt that could not be given one: such
      // fetches name none either).
      incarnation: topicIncarnation(cfg.createdAt),
      segmentBytes: cfg.segmentBytes,
      retentionBytes: cfg.retention.maxBytes ?? -1,
      retentionMs: cfg.retention.maxAgeMs ?? -1,
      tailCacheBytes: this.tailCacheBytes,
      directIo: this.directIo,
      minFreeBytes: this.minFreeBytes,
      fullScan: this.fullScan,
      // After a snapshot: everything since it, up to a bound on what an open reads.
      // Capped: the core takes its options as safe integers, and a bound past 2^53 bytes
      // scans no more than one at it (a large producerStateScanBytes reopened no partition).
      producerScanBytes: snap ? Math.min(this.producerStateScanBytes * SCAN_AFTER_SNAPSHOT_FACTOR, Number.MAX_SAFE_INTEGER) : this.producerStateScanBytes,
      producerScanFrom: snap ? snap.offset : -1,
      producerScanBatches: IdempotenceTable.MAX_ENTRIES,
      producerScanPerProducer: IdempotenceTable.KEEP_BATCHES,
    });
    // Opened with tailCacheBytes as its cache's ceiling; none until it is written (markWritten).
    this.engine.setTailCacheBytes(native, 0);
    const ps = new PartitionState(t, p, native, this.producerStateShare);
    const found = this.engine.takeProducerBatches(native);
    // The snapshot first (older), then what the log holds after it. A batch the
    // snapshot names past the log's end was lost with an unsynced tail: left out. A
    // bad spot in the log after the snapshot drops the snapshot too (as it drops the
    // batches before the spot).
    const { endOffset } = this.partitionOffsets(ps);
    // The scan keeps a producer's newest KEEP_BATCHES only: the batches between the
    // snapshot's last one and them are not in the table, and restore() must not take
    // that gap for a hole (seqs that were written, refused as OUT_OF_ORDER_SEQUENCE).
    if (snap && found.error === undefined) ps.idempotence.restore(batchesBelow(beforeScan(snap.batches, found.batches), endOffset));
    ps.idempotence.restore(found.batches);
    ps.idempotence.restored();
    // A snapshot from past the log's end (a power cut took an unsynced tail) is
    // replaced now: new batches land below its offset, where a later open, reading
    // the log only from there, would miss them.
    if (snap && snap.offset > endOffset) await this.replaceStaleSnapshot(ps);
    if (found.error !== undefined)
      process.emitWarning(
        `${ps.label}: the idempotent-producer table was refilled only from the newest part of the log (${found.error}); ` +
          "retries of producers' batches from before it are taken as new",
        'UringmqWarning',
      );
    return ps;
  }

  /**
   * At open: writes the partition's snapshot afresh, or else removes it; the open
   * fails when neither works (a later open would trust what no longer holds).
   */
  private async replaceStaleSnapshot(ps: PartitionState): Promise<void> {
    try {
      await this.writeSnapshot(ps);
    } catch (e) {
      process.emitWarning(`${ps.label}: ${String((e as Error).message ?? e)}; removing the snapshot instead`, 'UringmqWarning');
      await removeProducerSnapshot(ps.dir);
    }
  }

  /**
   * Writes the partition's producer-state snapshot (producer_snapshot.ts): on close
   * (`closing`), and while running once producerStateScanBytes more were appended, at
   * most once a second (so the log an open reads after a crash stays short).
   */
  private snapshotProducers(ps: PartitionState, closing: boolean): Promise<void> {
    if (ps.snapshotting) return closing ? ps.snapshotting.then(() => this.snapshotProducers(ps, true)) : ps.snapshotting;
    if (ps.topic.deleted) return Promise.resolve();
    ps.nextSnapshotAt = Date.now() + this.snapshotIntervalMs;
    ps.sinceSnapshot = 0;
    const run = this.writeSnapshot(ps)
      .then(() => {
        ps.snapshotWarned = false;
      })
      .catch((e: unknown) => {
        ps.sinceSnapshot = Math.max(ps.sinceSnapshot, 1); // try again (at close at the latest)
        if (ps.topic.deleted || ps.snapshotWarned) return;
        ps.snapshotWarned = true;
        process.emitWarning(`${ps.label}: ${e instanceof Error ? e.message : String(e)} (said once until a snapshot succeeds again)`, 'UringmqWarning');
      })
      .finally(() => {
        ps.snapshotting = null;
      });
    ps.snapshotting = run;
    return run;
  }

  /** Writes the partition's table as it is now (once the appends under way settle). */
  private async writeSnapshot(ps: PartitionState): Promise<void> {
    // Every batch appended from here on lands at or past this end and past every
    // batch already in the table: the snapshot's offset, from which the log is read.
    const { endOffset } = this.partitionOffsets(ps);
    const { batches, end } = await ps.idempotence.settled();
    await writeProducerSnapshot(ps.dir, { offset: Math.max(endOffset, end), batches });
  }

  /** At close: a snapshot of every partition appended to since its last one, a few at a time. */
  private async snapshotAllProducers(): Promise<void> {
    if (this.producerStateScanBytes === 0) return;
    const todo = [...this.topics.values()].flatMap((t) => t.partitions).filter((ps) => ps.sinceSnapshot > 0 || ps.snapshotting);
    for (let i = 0; i < todo.length; i += 16) await Promise.all(todo.slice(i, i + 16).map((ps) => this.snapshotProducers(ps, true)));
  }

  private assertOpen(): void {
    if (this.state !== 'open') throw new UringmqError('BROKER_CLOSED', `broker on ${this.dir} is closed`);
  }

  /** Runs topic admin operations one at a time so creates and deletes never interleave. */
  private admin<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.adminChain.then(fn, fn);
    this.adminChain = run.catch(() => undefined);
    return run;
  }

  async createTopic(name: string, opts: TopicOptions = {}): Promise<TopicDescription> {
    this.assertOpen();
    validateTopicName(name);
    if (opts === null || typeof opts !== 'object') throw invalid('createTopic options must be an object');
    const partitions = opts.partitions === undefined ? 1 : positiveInt(opts.partitions, 'partitions', MAX_PARTITIONS);
    const segmentBytes: unknown = opts.segmentBytes === undefined ? DEFAULT_SEGMENT_BYTES : opts.segmentBytes;
    // One message with both bounds: a value past the top was told "between 1 and 1 GiB".
    if (typeof segmentBytes !== 'number' || !Number.isSafeInteger(segmentBytes) || segmentBytes < MIN_SEGMENT_BYTES || segmentBytes > MAX_SEGMENT_BYTES)
      throw invalid(`segmentBytes must be an integer between ${MIN_SEGMENT_BYTES} and ${MAX_SEGMENT_BYTES}, got ${shown(segmentBytes)}`);
    const retention: TopicConfig['retention'] = {};
    if (opts.retention !== undefined) {
      if (opts.retention === null || typeof opts.retention !== 'object') throw invalid('retention must be an object');
      if (opts.retention.maxBytes !== undefined) retention.maxBytes = nonNegInt(opts.retention.maxBytes, 'retention.maxBytes');
      if (opts.retention.maxAgeMs !== undefined) retention.maxAgeMs = nonNegInt(opts.retention.maxAgeMs, 'retention.maxAgeMs');
    }
    return this.admin(async () => {
      this.assertOpen();
      if (this.topics.has(name)) throw new UringmqError('TOPIC_EXISTS', `topic ${name} already exists`);
      // After TOPIC_EXISTS: a dead-letter topic made already is found, not refused. In
      // this admin turn: deletes, which free places, and other creates cannot interleave.
      if (this.topics.size >= this.maxTopics)
        throw new UringmqError(
          'RESOURCE_EXHAUSTED',
          `topic ${name} was not created: the broker holds ${this.topics.size} topics and maxTopics is ${this.maxTopics}; delete a topic or raise maxTopics (nothing was written)`,
          { limit: 'maxTopics' },
        );
      const held = this.partitionCount;
      if (held + partitions > this.maxPartitions)
        throw new UringmqError(
          'RESOURCE_EXHAUSTED',
          `topic ${name} was not created: its ${partitions} partition${partitions === 1 ? '' : 's'} would make ${held + partitions} and maxPartitions is ${this.maxPartitions} (over all topics); ` +
            'delete a topic or raise maxPartitions (nothing was written)',
          { limit: 'maxPartitions' },
        );
      const tdir = path.join(this.dir, 'topics', name);
      const createdAt = Math.max(Date.now(), this.lastCreatedAt + 1);
      this.lastCreatedAt = createdAt;
      const cfg: TopicConfig = { name, partitions, segmentBytes, retention, createdAt };
      let t: TopicState | null = null;
      let opening = false;
      // A directory of that name with a topic.json is another topic's: on a file system
      // that ignores case (vfat, ext4's casefold) `A` is `a`'s directory, and the removal
      // of a crashed create's leftovers below (or after a failure) would delete its records.
      const other = await readTopicConfig(tdir).catch(() => ({ name: '(a topic.json that cannot be read)' }));
      if (other) throw new UringmqError('TOPIC_EXISTS', `topic ${name} would use the directory ${tdir}, which holds topic ${other.name} (does the data directory's file system ignore case?)`);
      try {
        await fs.rm(tdir, { recursive: true, force: true }); // leftovers of a crashed create
        await removeGroupOffsets(path.join(this.dir, 'groups'), name, this.storedGroups); // ... or of a delete that crashed before removing them
        await fs.mkdir(tdir);
        await fsyncDir(path.dirname(tdir));
        for (let p = 0; p < partitions; p++) await fs.mkdir(path.join(tdir, String(p)));
        this.partitionsHeld += partitions;
        opening = true;
        t = await this.openTopic(cfg, tdir, false);
        // topic.json last: its presence is what makes the topic exist after a crash,
        // so the topic takes appends only once it is durable.
        await writeFileDurable(path.join(tdir, 'topic.json'), JSON.stringify(cfg, null, 2));
      } catch (e) {
        if (opening) this.partitionsHeld -= partitions;
        if (t) for (const ps of t.partitions) this.engine.closePartition(ps.native); // nothing appended: not visible yet
        await fs.rm(tdir, { recursive: true, force: true }).catch(() => undefined);
        throw e instanceof UringmqError ? e : writeError(`creating topic ${name}: ${(e as Error).message}`, e);
      }
      this.topics.set(name, t);
      this.trimProducerTables();
      return this.describe(t);
    });
  }

  /** Partitions of all the topics held: what maxPartitions bounds. */
  get partitionCount(): number {
    return this.partitionsHeld;
  }

  async listTopics(): Promise<string[]> {
    this.assertOpen();
    return [...this.topics.keys()].sort();
  }

  /**
   * The topic's partitions and its groups. `groups: false` leaves groups out (an
   * in-memory answer); with them, each group with no members costs a read of its
   * offsets file.
   */
  async describeTopic(name: string, opts: { groups?: boolean; /** @internal groups.savedGroupIndex(), read once for many topics */ savedGroupIndex?: Map<string, string[]> } = {}): Promise<TopicDescription> {
    this.assertOpen();
    if (opts === null || typeof opts !== 'object') throw invalid('describeTopic options must be an object');
    const d = this.describe(this.topicState(name), opts.groups !== false);
    if (opts.groups === false) return d;
    return this.addSavedGroups(d, opts.savedGroupIndex);
  }

  /**
   * @internal Every topic described (groups in memory only: addSavedGroups adds the
   * others) and what the partitions' tail caches hold (tailCachedBytes), in one turn, for
   * a metrics scrape. Each partition's info is read from the core once for all of it: the
   * scrape read the written partitions' twice (describeTopic, and tailCachedBytes). And
   * the total is of the instant the offsets are: summed over descriptions taken topic by
   * topic, between reads of group files, budget a rebalance moved meanwhile from one
   * partition to another could count twice.
   */
  describeTopics(): { topics: TopicDescription[]; tailCachedBytes: number } {
    this.assertOpen();
    let cached = 0;
    const topics = [...this.topics.keys()].sort().map((name) => {
      const t = this.topics.get(name)!;
      const infos = t.partitions.map((ps) => {
        const i = this.engine.info(ps.native);
        if (ps.cacheCap > 0) cached += i.cachedBytes; // as tailCachedBytes: only a partition with a bound above 0 holds anything
        return i;
      });
      return this.describe(t, true, infos);
    });
    // A topic being deleted is out of this.topics before its partitions give their
    // caches up (releaseTailCaches): what they hold until then is counted, as by
    // tailCachedBytes, read here as nothing else reads them.
    for (const ps of this.cacheCandidates) if (ps.cacheCap > 0 && ps.topic.deleted) cached += this.engine.info(ps.native).cachedBytes;
    return { topics, tailCachedBytes: cached };
  }

  /** @internal describeTopic's groups not in memory, from their files, added to `d` (from describe()). */
  async addSavedGroups(d: TopicDescription, savedGroupIndex?: Map<string, string[]>): Promise<TopicDescription> {
    const name = d.name;
    // Live groups first, then the files of those not in memory when read: a group that
    // leaves memory meanwhile is in both (kept once), one that joins meanwhile shows
    // in the next description.
    const saved = await this.groups.savedGroups(name, savedGroupIndex);
    const live = new Set(d.groups.map((g) => g.group));
    for (const g of saved) {
      if (live.has(g.group)) continue;
      // Retention may have moved the log past an offset committed long ago: the group
      // will read from the log's start, and its lag counts from there.
      const committed = g.committed.map((c, i) => (c < 0 ? -1 : Math.max(c, d.partitions[i]?.startOffset ?? c)));
      d.groups.push({
        group: g.group,
        generation: 0,
        members: [],
        committed,
        lag: committed.map((c, i) => (c < 0 ? 0 : Math.max(0, (d.partitions[i]?.endOffset ?? c) - c))),
      });
    }
    d.groups.sort((a, b) => (a.group < b.group ? -1 : 1));
    return d;
  }

  /** `infos`: the partitions' info, read once for the partitions and the groups' lag. */
  private describe(t: TopicState, groups = true, infos = t.partitions.map((ps) => this.engine.info(ps.native))): TopicDescription {
    return {
      name: t.name,
      groups: groups && this.groupCoordinator ? this.groupCoordinator.describe(t.name, infos) : [],
      segmentBytes: t.config.segmentBytes,
      retention: { ...t.config.retention },
      // As the fetch plane registered it (openPartition): a topic.json whose createdAt is
      // not a positive safe integer (restored by hand: a string, a fraction) and could not
      // be given one (giveIncarnation) reports 0, none. Its raw value would reach gRPC clients as an int64 (2024 for "2024-01-01"),
      // and a FetchConsumer naming that in its fetches would be refused every one of them.
      createdAt: topicIncarnation(t.config.createdAt),
      partitions: t.partitions.map((ps, n) => {
        const i = infos[n]!;
        return { partition: ps.index, startOffset: i.startOffset, endOffset: i.endOffset, bytes: i.bytes, segments: i.segments, directIo: i.directIo };
      }),
    };
  }

  async deleteTopic(name: string): Promise<void> {
    this.assertOpen();
    validateTopicName(name);
    return this.admin(async () => {
      const t = this.topicState(name);
      t.deleted = true;
      this.topics.delete(name);
      this.partitionsHeld -= t.partitions.length;
      for (const p of this.activeProducers) p.flushTopic(name);
      // Its appends still waiting for room fail now: they would never complete, and
      // partitionIdle below would wait for them forever.
      const gone = new UringmqError('TOPIC_NOT_FOUND', `topic ${name} was deleted`);
      for (let i = this.waiting.length - 1; i >= 0; i--) {
        const q = this.waiting[i]!;
        if (q.ps.topic !== t) continue;
        this.waiting.splice(i, 1);
        this.waitingBytes -= q.batch.length;
        this.refuse(q, gone);
      }
      await Promise.all(t.partitions.map((ps) => this.partitionIdle(ps)));
      await Promise.all(t.partitions.map((ps) => ps.snapshotting)); // none lands in the directory after it moved
      this.releaseTailCaches(t);
      for (const ps of t.partitions) {
        this.engine.closePartition(ps.native);
        this.notifyData(ps);
      }
      this.rebalanceTailCaches(); // the others' shares grow back (up to tailCacheBytes)
      await this.groupCoordinator?.topicDeleted(name);
      const trash = path.join(this.dir, 'trash');
      // Not named after the topic: a 249-character name plus a suffix would pass the
      // file system's 255-byte limit.
      const doomed = path.join(trash, `${Date.now()}-${process.pid}-${++trashSeq}`);
      try {
        await fs.mkdir(trash, { recursive: true });
        await fs.rename(t.dir, doomed);
      } catch (e) {
        // Not moved: the topic is still whole on disk, and comes back at the next open.
        // It stays in this run too (its partitions opened again), not missing until then.
        const err = writeError(`deleting topic ${name}: ${(e as Error).message}; the topic is kept`, e);
        try {
          this.partitionsHeld += t.config.partitions; // its tables' share, as at any open
          const again = await this.openTopic(t.config, t.dir).catch((x: unknown) => {
            this.partitionsHeld -= t.config.partitions;
            throw x;
          });
          this.trimProducerTables(); // others may have grown into its share meanwhile
          again.cuts = await readLogCuts(t.dir, t.config.partitions);
        } catch (reopen) {
          err.message += ` (but could not be opened again until the broker reopens: ${(reopen as Error).message})`;
        }
        throw err;
      }
      try {
        await fsyncDir(path.join(this.dir, 'topics'));
        // The groups' offsets only now: had they gone first, a crash before the rename
        // would bring the topic back with its groups starting over from `from`.
        await removeGroupOffsets(path.join(this.dir, 'groups'), name, this.storedGroups);
      } catch (e) {
        throw e instanceof UringmqError ? e : writeError(`deleting topic ${name}: ${(e as Error).message}`, e);
      }
      // The topic is deleted now, whatever becomes of its files: out of topics/, they
      // cannot come back. What cannot be removed (an immutable file, a failing disk)
      // stays in the trash, which a later open empties, and the delete is done.
      await fs.rm(doomed, { recursive: true, force: true }).catch((e: unknown) =>
        process.emitWarning(`deleted topic ${name}: its files in ${doomed} could not all be removed (${(e as Error).message}); a later open removes what is left`, 'UringmqWarning'),
      );
    });
  }

  producer(opts: ProducerOptions = {}): Producer {
    this.assertOpen();
    return new Producer(this, opts);
  }

  /**
   * Without `group`: an offset reader of one or all partitions. With `group`: a
   * member of a consumer group, with per-message ack()/nack() and redelivery.
   */
  consumer(opts: GroupConsumerOptions): GroupConsumer;
  consumer(opts: ConsumerOptions): Consumer;
  consumer(opts: ConsumerOptions | GroupConsumerOptions): Consumer | GroupConsumer {
    this.assertOpen();
    if (opts !== null && typeof opts === 'object' && 'group' in opts && opts.group !== undefined) {
      refusePartitionOptions(opts, 'embedded');
      return new GroupConsumer(this, this.groups, opts as GroupConsumerOptions);
    }
    return new Consumer(this, opts as ConsumerOptions);
  }

  private readonly fetchServers = new Set<FetchServer>();
  /**
   * Starts the native zero-copy fetch plane (docs/FETCH-PROTOCOL.md) for this broker:
   * a TCP listener on its own native thread that answers fetches with batches
   * spliced from the segment files. One per broker; stopped by close().
   */
  async startFetchServer(opts: FetchServerOptions = {}): Promise<FetchServer> {
    this.assertOpen();
    const envBackend = process.env.URINGMQ_IO_BACKEND;
    // The log fell back to threads (or was told to): so does the fetch plane.
    const dflt = this.engine.backend === 'thread' ? 'thread' : envBackend === 'io_uring' ? 'io_uring' : 'auto';
    const s: FetchServer = new FetchServer(this.engine, opts, dflt, () => {
      this.fetchServers.delete(s);
      this.closedFetchReadErrors += s.readErrors;
    });
    this.fetchServers.add(s);
    return s;
  }

  /** Read errors of the fetch servers this broker closed (fetchReadErrors counts them on). */
  private closedFetchReadErrors = 0;

  /**
   * Fetch-plane fetches that failed reading a segment file (an I/O error, a file shorter
   * than the log says): answered IO_ERROR, or cut off after their header went out; over
   * every fetch server of this broker since it opened. A warning names the partition,
   * offset, file and error.
   */
  get fetchReadErrors(): number {
    let n = this.closedFetchReadErrors;
    for (const s of this.fetchServers) n += s.readErrors;
    return n;
  }

  private groupCoordinator: GroupCoordinator | null = null;
  /** Consumer groups of this broker (committed offsets live in <dir>/groups). */
  get groups(): GroupCoordinator {
    this.groupCoordinator ??= new GroupCoordinator(this);
    return this.groupCoordinator;
  }

  /**
   * Sets a group's committed offset of one partition: a rewind, or a skip (past a
   * damaged batch its members stop at with CORRUPT_BATCH, say). Members go on from it;
   * what they were delivered before counts as never delivered. As the client's
   * commitOffset and the gRPC CommitOffset.
   */
  async commitOffset(group: string, topic: string, partition: number, offset: number): Promise<void> {
    this.assertOpen();
    await this.groups.commitOffset(group, topic, partition, offset);
  }

  /**
   * Deletes a consumer group's committed offsets and state on a topic (Kafka's
   * deleteConsumerGroups, Redis's XGROUP DESTROY): a consumer joining it later starts
   * as a new group, where its `from` says. FAILED_PRECONDITION while the group has
   * members on the topic (embedded or remote consumers), GROUP_NOT_FOUND when it has
   * neither members nor committed offsets there. As the client's deleteGroup and the
   * gRPC DeleteGroup.
   */
  async deleteGroup(group: string, topic: string): Promise<void> {
    this.assertOpen();
    validateGroupName(group);
    validateTopicName(topic);
    // With the topic admin: a deleteTopic under way ends first (its groups go with it).
    return this.admin(async () => {
      this.assertOpen();
      await this.groups.deleteGroup(group, topic);
    });
  }

  /** A group's committed offset per partition of a topic; -1 where it has none. */
  async committedOffsets(group: string, topic: string): Promise<number[]> {
    this.assertOpen();
    return this.groups.committedOffsets(group, topic);
  }

  /** Whole batches from `offset`, decoded; up to maxBytes (at least one batch). */
  async read(topic: string, partition: number, offset: number, opts: { maxBytes?: number } = {}): Promise<Message[]> {
    this.assertOpen();
    const ps = this.partitionState(topic, partition);
    validateOffset(offset);
    if (opts === null || typeof opts !== 'object') throw invalid('read options must be an object');
    const maxBytes = opts.maxBytes === undefined ? MiB : positiveInt(opts.maxBytes, 'maxBytes', 1 << 30);
    const raw = await this.readRaw(ps, offset, maxBytes);
    return toMessages(raw, topic, partition, offset);
  }

  /**
   * Appends one RecordBatch built by a client (docs/FORMAT.md, CRC set): the core
   * verifies it. Without `partition` it goes by the first record's key, else
   * round-robin (an idempotent one: producerId % partitions). A batch with a producer
   * id and sequence is deduplicated.
   *
   * The batch is copied (into the batch pool) and the caller's buffer let go now.
   * The I/O thread reads the batch after this returns, from its raw memory: a
   * caller's buffer could be modified meanwhile, or transferred (detached) and freed,
   * which would crash the process. PUBLISH_OWNED_BATCH's `copy: false` is for callers
   * whose buffer nobody else can reach until the promise settles (the gRPC server's
   * plain-records batches, built here). Copying also serves the gRPC server's own
   * batches: they are views of grpc-js's per-message buffers, which would otherwise
   * live until the append is durable, survive young GCs and push the old generation
   * toward a full GC; the pooled copies are reused.
   * (A variant that passed grpc-js's buffer on and copied only batches that must wait
   * was measured in bench:grpc A/B runs on 2026-11-30 and reverted: it saved the main
   * thread ~18 ns per record and cost the GC threads ~27.)
   *
   * `sync` (default false): resolve only once the batch is on disk, whatever the
   * broker's durability mode (with `sync` it always is). Its write cycle syncs every
   * file with unsynced writes, so this is for the occasional batch that must not be
   * lost to a power cut (the broker's dead-letter moves), not for every one.
   */
  publishBatch(topic: string, batch: Buffer, partition?: number, opts: { sync?: boolean } = {}): Promise<PublishResult> {
    // Always a copy: `copy: false` (once an option here) let any caller's buffer be
    // transferred and freed under the I/O thread, a SIGSEGV. Only PUBLISH_OWNED_BATCH skips it.
    const own = opts !== null && typeof opts === 'object' ? { sync: opts.sync } : opts; // not an object: refused there
    return this.publishBatchUpTo(topic, batch, partition, own, this.maxRecordBytes);
  }

  /**
   * publishBatch for a caller that owns `batch` (nobody else can reach it until the
   * promise settles): `copy` false appends it in place. Keyed by a symbol the package
   * does not export (src/index.ts exports Broker only, and its `exports` map no deeper
   * module): a public method let any caller pass `copy: false` and crash the process.
   */
  [PUBLISH_OWNED_BATCH](topic: string, batch: Buffer, partition: number | undefined, opts: { copy: boolean; sync?: boolean }): Promise<PublishResult> {
    return this.publishBatchUpTo(topic, batch, partition, opts, this.maxRecordBytes);
  }

  /**
   * @internal The group coordinator's dead-letter moves: a record the broker took (up to
   * maxRecordBytes) plus the x-uringmq-* headers the move adds, within RECORD_ROOM_BYTES.
   * Held to maxRecordBytes, a record near the limit could never be moved.
   */
  publishDeadLetter(topic: string, batch: Buffer): Promise<PublishResult> {
    return this.publishBatchUpTo(topic, batch, undefined, { copy: false, sync: true }, this.maxRecordBytes + RECORD_ROOM_BYTES);
  }

  private async publishBatchUpTo(topic: string, batch: Buffer, partition: number | undefined, opts: { copy?: boolean; sync?: boolean }, recordLimit: number): Promise<PublishResult> {
    this.assertOpen();
    const t = this.topicState(topic);
    if (!Buffer.isBuffer(batch)) throw new UringmqError('CORRUPT_BATCH', 'a RecordBatch must be a Buffer');
    if (opts === null || typeof opts !== 'object') throw invalid('publishBatch options must be an object');
    if (opts.sync !== undefined && typeof opts.sync !== 'boolean') throw invalid(`publishBatch option sync must be a boolean, got ${shown(opts.sync)}`);
    const sync = opts.sync === true && this.durability !== 'sync';
    const meta = peekBatch(batch);
    const idempotent = meta.producerId > 0 && meta.baseSequence >= 0;
    // An idempotent batch is refused for a full queue only after the table has seen it
    // (below), so a retry of a written batch is still answered, and a refused first
    // batch of a producer the table does not know holds its sequence (refused()).
    if (!idempotent) this.checkQueueRoom(batch.length);
    if (batch.length > this.maxBatchBytes)
      throw new UringmqError('RECORD_TOO_LARGE', `a batch of ${batch.length} bytes for topic ${topic} exceeds maxBatchBytes ${this.maxBatchBytes}; nothing was written`);
    // maxRecordBytes holds for batches built elsewhere too. Only a batch larger than
    // the limit can hold a record past it: smaller ones skip the walk.
    if (batch.length - HEADER_SIZE > recordLimit) {
      const largest = largestRecordBytes(batch);
      if (largest > recordLimit)
        throw new UringmqError('RECORD_TOO_LARGE', `a record of ${largest} bytes in a batch for topic ${topic} exceeds maxRecordBytes ${recordLimit}; nothing was written`);
    }
    let p: number;
    if (partition !== undefined && partition !== null) {
      if (!Number.isInteger(partition) || partition < 0 || partition >= t.partitions.length)
        throw invalid(`partition ${shown(partition)} does not exist in topic ${topic} (${t.partitions.length} partitions)`);
      p = partition;
    } else {
      const key = firstKey(batch);
      // A keyless idempotent batch goes by its producer id, not round-robin: its retry
      // must reach the partition whose table knows it (round-robin wrote it again on the
      // next one), and the producer's sequence numbers are per partition.
      p = key ? partitionForKey(key, t.partitions.length) : idempotent ? meta.producerId % t.partitions.length : t.roundRobin++ % t.partitions.length;
    }
    const ps = t.partitions[p]!;
    let pooled = false;
    if (opts.copy !== false) {
      const own = this.batchPool.acquire(batch.length);
      batch.copy(own);
      batch = own;
      pooled = true;
    }
    if (idempotent) {
      // A retry of a batch whose first attempt is in flight waits for its outcome: a
      // duplicate if it was written; if it failed, the table (told so) decides again:
      // new if nothing of this producer was taken after it, else out of order.
      for (;;) {
        let v: IdempotenceVerdict;
        try {
          v = ps.idempotence.check(meta.producerId, meta.baseSequence, meta.recordCount);
        } catch (e) {
          if (pooled) this.batchPool.release(batch);
          throw e;
        }
        if (v === NEW) break;
        if ('wait' in v) {
          await v.wait;
          continue;
        }
        let r: AppendResult | null;
        try {
          r = await v.duplicate;
        } catch {
          ps.idempotence.failed(meta.producerId, v.entry!);
          continue;
        }
        if (pooled) this.batchPool.release(batch);
        r ??= { baseOffset: -1, count: meta.recordCount };
        // Its first attempt may not have asked for a sync: this one did.
        if (sync) await this.appendBatch(ps, EMPTY_BATCH, false, 0, false, true);
        return { partition: p, baseOffset: r.baseOffset, count: r.count, duplicate: true };
      }
      try {
        this.checkQueueRoom(batch.length);
      } catch (e) {
        if (pooled) this.batchPool.release(batch);
        ps.idempotence.refused(meta.producerId, meta.baseSequence);
        throw e;
      }
      const result = this.appendBatch(ps, batch, false, meta.recordCount, pooled, sync);
      const entry = ps.idempotence.record(meta.producerId, meta.baseSequence, meta.recordCount, result);
      let r: AppendResult;
      try {
        r = await result;
        entry.result = r; // settled: a snapshot takes it as it is (IdempotenceTable.settled)
      } catch (e) {
        // Not written: its retry is new, or out of order once a later batch was taken.
        ps.idempotence.failed(meta.producerId, entry);
        throw e;
      }
      return { partition: p, baseOffset: r.baseOffset, count: r.count, duplicate: false };
    }
    const r = await this.appendBatch(ps, batch, false, meta.recordCount, pooled, sync);
    return { partition: p, baseOffset: r.baseOffset, count: r.count, duplicate: false };
  }

  /** Refuses a batch the write queue has no room for (RESOURCE_EXHAUSTED: the caller retries later). */
  private checkQueueRoom(bytes: number): void {
    const queued = this.queuedBytes;
    if (queued > 0 && queued + bytes > this.maxQueuedBytes)
      throw new UringmqError('RESOURCE_EXHAUSTED', `the write queue is full (${queued} bytes waiting for the disk, limit ${this.maxQueuedBytes}); retry later`);
  }

  /** @internal Sync passes the I/O thread has run (fdatasync of every file with unsynced writes). */
  get syncPasses(): number {
    return this.engine.syncPasses;
  }

  /** Bytes of zeros the log's I/O thread has written ahead of the data (BrokerOptions.zeroAheadBytes). */
  get zeroAheadBytesWritten(): number {
    return this.engine.zeroAheadBytes;
  }

  /**
   * Write cycles whose writes, all over blocks already written (zeros ahead), were made
   * durable by one flush of the disk's cache instead of `O_DSYNC` writes (with sync).
   */
  get cacheFlushes(): number {
    return this.engine.cacheFlushes;
  }

  /**
   * Attempts to remove a retired segment file (or to sync its directory after a
   * removal) that failed, since the broker opened. Each is retried a second later, so
   * this grows by about one a second per partition whose retention is stuck; a warning
   * names the file and the error once.
   */
  get retentionRemoveFailures(): number {
    return this.engine.retentionRemoveFailures ?? 0;
  }

  /**
   * How long the log's write cycles took at the disk, so far (with durability `sync`
   * each cycle is written and flushed before its appends are acknowledged: a slow
   * cycle is a publish latency floor for every message in it or queued behind it).
   * `le` are the buckets' upper bounds in seconds, `counts` the cycles in each (not
   * cumulative), the last bucket those over the last bound. Zeros once closed.
   */
  get logWriteLatency(): LogLatency {
    return logLatency(this.engine.writeLatency());
  }

  /**
   * How long each append spent in the log core, so far: from the moment the core took
   * it until its completion was handed back (waiting for the I/O thread and for the
   * write cycle before it, checking and staging, its own cycle's writes, making it
   * readable), in the buckets of logWriteLatency. Beside that one it tells a slow disk
   * (both long) from an I/O thread that is busy or kept off its CPU (only this one long).
   * Not in it: waiting for room in the core's queue, and the hand-back to JavaScript.
   */
  get logAppendLatency(): LogLatency {
    return logLatency(this.engine.appendLatency());
  }

  /** Bytes accepted for writing and not yet durable (with the I/O thread, or waiting for room there). */
  get queuedBytes(): number {
    return this.pendingBytes + this.waitingBytes;
  }

  /** True while producers should hold back (the write queue is past its high-water mark). */
  get overHighWater(): boolean {
    return this.queuedBytes >= this.writeHighWaterBytes;
  }

  /** Resolves once the write queue is below its high-water mark (at once if it is). */
  whenWritable(): Promise<void> {
    if (!this.overHighWater || this.state !== 'open') return Promise.resolve();
    return new Promise((resolve) => this.writableWaiters.push(resolve));
  }

  private releaseWritable(): void {
    const w = this.writableWaiters;
    this.writableWaiters = [];
    for (const f of w) f();
  }

  // ---- internal surface for Producer and Consumer --------------------------------

  /** @internal */
  topicState(name: string): TopicState {
    if (typeof name !== 'string') throw new UringmqError('INVALID_TOPIC_NAME', 'topic must be a string');
    const t = this.topics.get(name);
    if (t) return t;
    validateTopicName(name); // a name no topic can have is INVALID_TOPIC_NAME, not just missing
    throw new UringmqError('TOPIC_NOT_FOUND', `topic ${name} does not exist`);
  }

  /** @internal */
  partitionState(topic: string, partition: number): PartitionState {
    const t = this.topicState(topic);
    if (!Number.isInteger(partition) || partition < 0 || partition >= t.partitions.length)
      throw invalid(`partition ${shown(partition)} does not exist in topic ${topic} (${t.partitions.length} partitions)`);
    return t.partitions[partition]!;
  }

  /** @internal */
  partitionInfo(ps: PartitionState): PartitionInfo {
    this.assertReadable(ps); // after close or delete the native partition is gone
    return this.engine.info(ps.native);
  }

  private readonly offsetScratch = new Float64Array(2);

  /** @internal Start and end offsets only: cheaper than partitionInfo for loops that poll them per delivery. */
  partitionOffsets(ps: PartitionState): { startOffset: number; endOffset: number } {
    this.assertReadable(ps);
    this.engine.offsets(ps.native, this.offsetScratch);
    return { startOffset: this.offsetScratch[0]!, endOffset: this.offsetScratch[1]! };
  }

  /** @internal raw batches, as on disk */
  async readRaw(ps: PartitionState, offset: number, maxBytes: number): Promise<Buffer> {
    this.assertReadable(ps);
    try {
      // Tailing readers are served from the tail cache without a thread-pool hop.
      return this.engine.readCached(ps.native, offset, maxBytes) ?? (await this.engine.read(ps.native, offset, maxBytes));
    } catch (e) {
      throw this.readFailure(ps, e);
    }
  }

  /**
   * @internal readRaw into `dest` (a pooled buffer): a view of dest, or a new Buffer
   * when the first batch alone is larger than dest.
   */
  async readRawInto(ps: PartitionState, offset: number, maxBytes: number, dest: Buffer): Promise<Buffer> {
    this.assertReadable(ps);
    try {
      const r = this.engine.readCachedInto(ps.native, offset, maxBytes, dest) ?? (await this.engine.readInto(ps.native, offset, maxBytes, dest));
      if (typeof r !== 'number') return r;
      // Detached by code that ran between the read's settling and here (a number comes
      // back only for a dest that had bytes): subarray would throw a TypeError, reported
      // as an I/O error.
      if (r > dest.length || dest.length === 0) throw invalid('readRawInto: the destination buffer was detached (its ArrayBuffer transferred) after the read');
      return dest.subarray(0, r);
    } catch (e) {
      throw this.readFailure(ps, e);
    }
  }

  /** @internal readRaw from the tail cache alone, synchronously; undefined when it does not hold `offset`. */
  readCached(ps: PartitionState, offset: number, maxBytes: number): Buffer | undefined {
    this.assertReadable(ps);
    try {
      return this.engine.readCached(ps.native, offset, maxBytes);
    } catch (e) {
      throw this.readFailure(ps, e);
    }
  }

  /**
   * @internal The tail cache's bytes from `offset` on, synchronously: into `dest`
   * (a view of it) when they fit, else in a buffer of their own; undefined when the
   * cache does not hold them (readRawInto then reads the file).
   */
  readCachedInto(ps: PartitionState, offset: number, maxBytes: number, dest: Buffer): Buffer | undefined {
    this.assertReadable(ps);
    try {
      const r = this.engine.readCachedInto(ps.native, offset, maxBytes, dest);
      return typeof r === 'number' ? dest.subarray(0, r) : r;
    } catch (e) {
      throw this.readFailure(ps, e);
    }
  }

  /**
   * A read that started before deleteTopic or close() can find its segment file
   * moved to the trash (ENOENT when it reopens one): the caller learns what happened
   * to the topic or broker, not an I/O error about a file it never named.
   */
  private readFailure(ps: PartitionState, e: unknown): Error {
    try {
      this.assertReadable(ps);
    } catch (gone) {
      return gone as Error;
    }
    return fromNative(e);
  }

  private assertReadable(ps: PartitionState): void {
    if (this.state === 'closed') throw new UringmqError('BROKER_CLOSED', `broker on ${this.dir} is closed`);
    if (ps.topic.deleted) throw new UringmqError('TOPIC_NOT_FOUND', `topic ${ps.topic.name} was deleted`);
  }

  /** @internal Like waitForData, but the caller can drop its waiters early. */
  waitForDataCancellable(parts: readonly PartitionState[], timeoutMs: number): { promise: Promise<void>; cancel: () => void } {
    let done!: () => void;
    const promise = new Promise<void>((resolve) => {
      done = () => {
        clearTimeout(timer);
        for (let i = 0; i < parts.length; i++) parts[i]!.dataWaiters.remove(waiting[i]!);
        resolve();
      };
    });
    const timer = setTimeout(done, timeoutMs);
    const waiting = parts.map((ps) => ps.dataWaiters.add(done));
    return { promise, cancel: done };
  }

  /** @internal Resolves when any of `parts` gets new data, is deleted, or the broker closes (or after timeoutMs). */
  waitForData(parts: readonly PartitionState[], timeoutMs = 1000): Promise<void> {
    return this.waitForDataCancellable(parts, timeoutMs).promise;
  }

  /**
   * @internal Hands a batch to the engine. `seal`: the batch came from our codec and
   * the core computes its CRC; otherwise the core verifies the CRC it carries.
   */
  appendBatch(ps: PartitionState, batch: Buffer, seal: boolean, count: number, pooled = false, sync = false): Promise<AppendResult> {
    if (!ps.written && batch.length > 0) this.markWritten(ps);
    ps.sinceSnapshot += batch.length;
    if (ps.sinceSnapshot >= this.producerStateScanBytes && this.producerStateScanBytes > 0 && !ps.snapshotting && this.state === 'open' && Date.now() >= ps.nextSnapshotAt)
      void this.snapshotProducers(ps, false);
    return new Promise<AppendResult>((resolve, reject) => {
      if (this.state === 'closed') return reject(new UringmqError('BROKER_CLOSED', `broker on ${this.dir} is closed`));
      if (ps.spaceRefused && batch.length > 0) {
        if (pooled) this.batchPool.release(batch);
        return reject(ps.spaceRefused);
      }
      const q: QueuedAppend = { ps, batch, pooled, seal, sync, count, resolve, reject };
      if (this.waiting.length > 0 || (this.pendingBytes > 0 && this.pendingBytes + batch.length > this.maxPendingBytes) || !this.submit(q)) {
        this.waiting.push(q);
        this.waitingBytes += batch.length;
      }
    });
  }

  /** True when the append was taken (or rejected); false when the ring is full. */
  private submit(q: QueuedAppend): boolean {
    if (q.ps.topic.deleted) {
      this.refuse(q, new UringmqError('TOPIC_NOT_FOUND', `topic ${q.ps.topic.name} was deleted`));
      return true;
    }
    const id = this.nextId++;
    let taken: boolean;
    try {
      taken = this.engine.append(q.ps.native, q.batch, id, q.seal, q.sync, q.resume);
    } catch (e) {
      this.refuse(q, fromNative(e));
      return true;
    }
    if (!taken) return false;
    this.pending.set(id, q);
    this.pendingBytes += q.batch.length;
    q.ps.pending++;
    return true;
  }

  /**
   * The core refused an append of ps for want of space: it refuses every later one it
   * was sent until a resume request reaches it. Those still waiting here are refused
   * now, new ones at once (appendBatch) until the resume is through.
   */
  private refusedForSpace(ps: PartitionState, message: string): void {
    if (!ps.spaceWarned && !ps.topic.deleted) {
      ps.spaceWarned = true; // a producer retrying every 100 ms would otherwise say it ten times a second
      process.emitWarning(`${ps.label}: appends refused: ${message} (said once until an append to it succeeds)`, 'UringmqWarning');
    }
    if (ps.spaceRefused) return; // its resume is on its way
    const err = new UringmqError('RESOURCE_EXHAUSTED', message);
    ps.spaceRefused = err;
    for (let i = this.waiting.length - 1; i >= 0; i--) {
      const q = this.waiting[i]!;
      if (q.ps !== ps || q.batch.length === 0) continue;
      this.waiting.splice(i, 1);
      this.waitingBytes -= q.batch.length;
      this.refuse(q, err);
    }
    const q: QueuedAppend = {
      ps,
      batch: EMPTY_BATCH,
      pooled: false,
      seal: false,
      sync: false,
      resume: true,
      count: 0,
      resolve: () => {
        if (ps.spaceRefused === err) ps.spaceRefused = null;
      },
      reject: () => {
        if (ps.spaceRefused === err) ps.spaceRefused = null; // closed or deleted: nothing to resume
      },
    };
    if (this.waiting.length > 0 || !this.submit(q)) this.waiting.push(q);
  }

  /**
   * An append refused before it reached the I/O thread. It may have waited in
   * `waiting`, where partitionIdle saw it: those checks run again once the caller has
   * taken it off the queue (no completion of this partition will run them).
   */
  private refuse(q: QueuedAppend, e: Error): void {
    if (q.pooled) this.batchPool.release(q.batch);
    q.reject(e);
    const ps = q.ps;
    if (ps.idleWaiters.length)
      queueMicrotask(() => {
        const w = ps.idleWaiters;
        ps.idleWaiters = [];
        for (const f of w) f();
      });
  }

  private drainWaiting(): void {
    while (this.waiting.length > 0) {
      const q = this.waiting[0]!;
      if (this.pendingBytes > 0 && this.pendingBytes + q.batch.length > this.maxPendingBytes) break;
      if (!this.submit(q)) break;
      this.waiting.shift();
      this.waitingBytes -= q.batch.length;
    }
  }

  private onComplete(ids: Float64Array, codes: Int32Array, bases: Float64Array, errors: Array<{ code: string; message: string } | undefined> | null): void {
    const touched = new Set<PartitionState>();
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      const p = this.pending.get(id);
      if (!p) continue;
      this.pending.delete(id);
      this.pendingBytes -= p.batch.length;
      if (p.pooled) this.batchPool.release(p.batch); // the I/O thread is done with it
      const ps = p.ps;
      ps.pending--;
      if (codes[i] === 0) {
        p.resolve({ baseOffset: bases[i]!, count: p.count });
        if (p.count > 0) touched.add(ps); // a sync barrier brings no data
        if (ps.spaceWarned && p.count > 0) ps.spaceWarned = false;
      } else {
        const err = errors?.[i];
        if (err?.code === 'RESOURCE_EXHAUSTED') this.refusedForSpace(ps, err.message);
        p.reject(fromNative(Object.assign(new Error(err?.message ?? 'append failed'), { code: err?.code ?? 'IO_ERROR' })));
      }
      if (ps.pending === 0 && ps.idleWaiters.length > 0) {
        const w = ps.idleWaiters;
        ps.idleWaiters = [];
        for (const f of w) f();
      }
    }
    for (const ps of touched) this.notifyData(ps);
    this.drainWaiting();
    // Hysteresis: producers resume at half the high-water mark, not at every byte under it.
    if (this.writableWaiters.length > 0 && this.queuedBytes < this.writeHighWaterBytes / 2) this.releaseWritable();
    if (this.pending.size === 0 && this.waiting.length === 0 && this.idleWaiters.length > 0) {
      const w = this.idleWaiters;
      this.idleWaiters = [];
      for (const f of w) f();
    }
  }

  private notifyData(ps: PartitionState): void {
    if (ps.dataWaiters.size > 0) ps.dataWaiters.wakeAll();
  }

  private partitionIdle(ps: PartitionState): Promise<void> {
    if (ps.pending === 0 && !this.waiting.some((q) => q.ps === ps)) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => {
        if (ps.pending === 0 && !this.waiting.some((q) => q.ps === ps)) resolve();
        else ps.idleWaiters.push(check);
      };
      ps.idleWaiters.push(check);
    });
  }

  private allIdle(): Promise<void> {
    if (this.pending.size === 0 && this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Stops taking new sends, writes what producers still hold, waits until every
   * pending append has resolved or rejected, stops the I/O thread (syncing the
   * disk) and releases the directory lock.
   */
  close(): Promise<void> {
    if (this.closePromise) return this.closePromise;
    this.state = 'closing';
    this.releaseWritable(); // held-back sends go on, and meet BROKER_CLOSED
    this.closePromise = (async () => {
      if (this.groupExpiryTimer) clearTimeout(this.groupExpiryTimer);
      if (this.warningTimer) clearInterval(this.warningTimer);
      for (const f of [...this.fetchServers]) f.close();
      await this.groupCoordinator?.close();
      for (const p of [...this.activeProducers]) p.flushAll();
      await this.adminChain.catch(() => undefined);
      await this.allIdle();
      await this.snapshotAllProducers();
      this.engine.close(); // the I/O thread syncs what is dirty before it stops
      this.relayNativeWarnings(); // the last of them: the thread has stopped
      // Their files close now, not when the garbage collector gets to the wrappers.
      for (const t of this.topics.values()) for (const ps of t.partitions) this.engine.closePartition(ps.native);
      this.state = 'closed';
      // A clean stop: the next open can trust the indexes. Without this file it checks.
      await writeFileDurable(path.join(this.dir, STATE_FILE), stateJson({ clean: true, durability: this.durability, run: this.run })).catch(() => undefined);
      this.lock.release();
      for (const t of this.topics.values()) for (const ps of t.partitions) this.notifyData(ps);
    })();
    return this.closePromise;
  }
}

const STATE_FILE = 'state.json';

/**
 * The data directory's format: which files it holds and how they are laid out
 * (docs/FORMAT.md, "On disk"). Raised when a release writes something an earlier one
 * would misread (and so overwrite, drop or refuse: an offsets file of an unknown version
 * reads as damaged); a broker refuses a directory of a higher format before changing
 * anything in it. Directories written before the field existed are format 1.
 * 2: a group's offsets file may be version 4 (given-back ranges, offsets_file.ts), which
 * a format-1 release would refuse as damaged, telling its user to remove it.
 */
export const DIR_FORMAT = 2;

function stateJson(o: { clean: boolean; durability: unknown; run: number }): string {
  return JSON.stringify({ format: DIR_FORMAT, ...o });
}

/**
 * mkdir -p by hand: Node's recursive mkdir retries for ever where a file system answers
 * ENOENT for a parent that exists (under /proc it hung `serve --dir /proc/x`).
 */
async function makeDirs(dir: string): Promise<void> {
  try {
    await fs.mkdir(dir);
    return;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') {
      if (!(await fs.stat(dir)).isDirectory()) throw e;
      return;
    }
    if (code !== 'ENOENT' || path.dirname(dir) === dir) throw e;
  }
  await makeDirs(path.dirname(dir));
  await fs.mkdir(dir).catch(async (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EEXIST' || !(await fs.stat(dir)).isDirectory()) throw e;
  });
}

/**
 * The first segment file of a topic directory that holds data ("<partition>/<file>,
 * n bytes"), or null when none does. A segment's first batch starts at its first byte,
 * and a new segment is zeros (its first block is written with them when it is made).
 */
async function recordsIn(tdir: string, partitionDir: (name: string) => boolean = () => true): Promise<string | null> {
  const head = Buffer.alloc(4096);
  for (const part of await fs.readdir(tdir, { withFileTypes: true })) {
    if (!part.isDirectory() || !partitionDir(part.name)) continue;
    for (const f of await fs.readdir(path.join(tdir, part.name))) {
      if (!f.endsWith('.log')) continue;
      const fh = await fs.open(path.join(tdir, part.name, f), 'r');
      try {
        const { bytesRead } = await fh.read(head, 0, head.length, 0);
        if (head.subarray(0, bytesRead).some((x) => x !== 0)) return `${part.name}/${f}, ${(await fh.stat()).size} bytes`;
      } finally {
        await fh.close();
      }
    }
  }
  return null;
}

/**
 * At open: removes what deleteTopic left in the trash. What cannot be removed (an
 * immutable file, a failing disk) stays, with a warning, for a later open: those are
 * topics already deleted, which must not keep the broker from opening.
 */
async function emptyTrash(trash: string): Promise<void> {
  try {
    await fs.rm(trash, { recursive: true, force: true });
  } catch (e) {
    process.emitWarning(`could not empty ${trash} (deleted topics' files: ${(e as Error).message}); what is left stays until a later open removes it`, 'UringmqWarning');
  }
}

/** What state.json says about the last run and the directory; null when there is none yet, or it is torn. */
type DirState = { format?: unknown; clean?: unknown; durability?: unknown; run?: unknown };

async function readState(dir: string): Promise<DirState | null> {
  try {
    return JSON.parse(await fs.readFile(path.join(dir, STATE_FILE), 'utf8')) as DirState;
  } catch {
    return null; // none yet, or torn: startRun() checks
  }
}

/** FAILED_PRECONDITION when state.json says a newer release wrote the directory. */
function checkDirFormat(dir: string, state: DirState | null): void {
  const format = state?.format;
  if (format !== undefined && !(Number.isSafeInteger(format) && (format as number) >= 1))
    throw new UringmqError('FAILED_PRECONDITION', `data directory ${dir}: state.json names an unknown directory format (${JSON.stringify(format)}); nothing in the directory was changed but its lock file`);
  if (typeof format === 'number' && format > DIR_FORMAT)
    throw new UringmqError(
      'FAILED_PRECONDITION',
      `data directory ${dir} was written by a newer uringmq (directory format ${format}; this version reads up to ${DIR_FORMAT}): open it with that release or a later one; nothing in the directory was changed but its lock file`,
    );
}

/**
 * After a crash, an open reads the log written since the partition's last snapshot, up
 * to this many times producerStateScanBytes (1 GiB by default); past that, the newest
 * that much only (the snapshot's entries are then dropped: what lay between is not known).
 */
const SCAN_AFTER_SNAPSHOT_FACTOR = 64;

/**
 * A snapshot's batches less the written ones of producers the log scan after it may have
 * cut short (KEEP_BATCHES of theirs found, or the scan at its bound on entries): older
 * than what the table keeps of them anyway, and between them and the scan's first
 * batch of the producer there may be written batches the scan left out. Holes stay;
 * markers go with the written batches (restore() takes what follows a marker for the
 * producer's next batches, and the batches the scan left out for a gap).
 */
function beforeScan(snap: Float64Array, scan: Float64Array): Float64Array {
  const found = new Map<number, number>();
  for (let i = 0; i + 3 < scan.length; i += 4) found.set(scan[i]!, (found.get(scan[i]!) ?? 0) + 1);
  const all = scan.length / 4 >= IdempotenceTable.MAX_ENTRIES;
  const cut = (id: number) => (all ? found.has(id) : (found.get(id) ?? 0) >= IdempotenceTable.KEEP_BATCHES);
  const out: number[] = [];
  for (let i = 0; i + 3 < snap.length; i += 4)
    if ((snap[i + 3]! < 0 && snap[i + 2]! > 0) || !cut(snap[i]!)) out.push(snap[i]!, snap[i + 1]!, snap[i + 2]!, snap[i + 3]!);
  return out.length === snap.length ? snap : Float64Array.from(out);
}

/** The quadruples of `batches` (as IdempotenceTable.restore() takes them) whose batch ends at or below `end`, and the holes (baseOffset -1). */
function batchesBelow(batches: Float64Array, end: number): Float64Array {
  const out: number[] = [];
  for (let i = 0; i + 3 < batches.length; i += 4)
    if (batches[i + 3]! < 0 || batches[i + 3]! + batches[i + 2]! <= end) out.push(batches[i]!, batches[i + 1]!, batches[i + 2]!, batches[i + 3]!);
  return out.length === batches.length ? batches : Float64Array.from(out);
}

/**
 * From how the previous run on `dir` ended (`prev`: its state.json as the open read it),
 * marks this one as running, under the next run number. `fullScan` when the previous
 * run did not stop cleanly and did not use `sync` (or the directory has topics and no
 * record of its last run): recovery must check whole last segments, and a power cut
 * may have cut tails. Then state.json keeps saying so (the previous run's mode) until
 * the open has done both (see open()): a crash during it leaves the next open the same
 * work.
 */
async function startRun(dir: string, durability: Durability, prev: DirState | null): Promise<{ fullScan: boolean; run: number }> {
  const file = path.join(dir, STATE_FILE);
  const hasTopics = (await fs.readdir(path.join(dir, 'topics'))).length > 0;
  const trusted = prev !== null && (prev.clean === true || prev.durability === 'sync');
  const fullScan = hasTopics && !trusted;
  // Runs count up, at least to the seconds since 1970: should state.json be lost, the
  // next run still comes after the earlier ones, those that left no trace too. Without
  // that record it also comes after every run the cuts and group files name
  // (log_cuts.ts), in case runs had got ahead of the clock. Group files hold it as a u32.
  const prevRun = typeof prev?.run === 'number' && Number.isSafeInteger(prev.run) && prev.run >= 0 ? prev.run : await highestRecordedRun(dir);
  const seconds = Math.floor(Date.now() / 1000);
  const run = Math.min(Math.max(prevRun + 1, seconds < 0xf0000000 ? seconds : 0), 0xffffffff);
  const during = fullScan ? { clean: false, durability: prev?.durability === undefined ? 'unknown' : prev.durability, run } : { clean: false, durability, run };
  await writeFileDurable(file, stateJson(during)).catch((e: unknown) => {
    throw writeError(`cannot write ${file}, which an open records before anything else: ${(e as Error).message}`, e);
  });
  return { fullScan, run };
}

/** The highest run number the topics' cuts and the groups' files name (0: none); what cannot be read is left out. */
async function highestRecordedRun(dir: string): Promise<number> {
  let max = 0;
  const list = (d: string) => fs.readdir(d, { withFileTypes: true }).catch(() => [] as import('node:fs').Dirent[]);
  for (const t of await list(path.join(dir, 'topics'))) if (t.isDirectory()) max = Math.max(max, await highestCutRun(path.join(dir, 'topics', t.name)));
  for (const g of await list(path.join(dir, 'groups'))) {
    if (!g.isDirectory()) continue;
    for (const f of await list(path.join(dir, 'groups', g.name))) {
      if (!f.name.endsWith(OFFSETS_SUFFIX)) continue;
      const run = await readOffsetsFile(path.join(dir, 'groups', g.name, f.name)).then((s) => s?.run ?? 0, () => 0);
      if (run > max) max = run;
    }
  }
  return max;
}

/** Header fields of a client batch, checked enough to route it; the core checks the rest. */
function peekBatch(b: Buffer): { recordCount: number; producerId: number; baseSequence: number } {
  if (!Buffer.isBuffer(b) || b.length < HEADER_SIZE || b.readUInt32LE(0) !== MAGIC || b.readUInt32LE(4) !== b.length)
    throw new UringmqError('CORRUPT_BATCH', `not a RecordBatch: bad magic or batchLength (${Buffer.isBuffer(b) ? b.length : 0} bytes given)`);
  const meta = readBatchMeta(b);
  if (meta.recordCount < 1) throw new UringmqError('CORRUPT_BATCH', 'a RecordBatch needs at least one record');
  checkBatchProducerId(b);
  return meta;
}

/** The key of a batch's first record, or null (for partitioning). */
function firstKey(b: Buffer): Buffer | null {
  try {
    return firstRecordKey(b);
  } catch {
    return null; // the core rejects the batch with the precise reason
  }
}

export function toMessages(raw: Buffer, topic: string, partition: number, fromOffset: number): Message[] {
  let recs: DecodedRecord[];
  try {
    recs = decodeBatches(raw, fromOffset);
  } catch (e) {
    throw new UringmqError('CORRUPT_BATCH', `decoding ${topic}/${partition} from offset ${fromOffset}: ${(e as Error).message}`);
  }
  const out = recs as Message[];
  for (const m of out) {
    m.topic = topic;
    m.partition = partition;
  }
  return out;
}

/** BrokerOptions checked, with their defaults (Broker.open, Broker.checkOptions). */
function checkedOptions(opts: BrokerOptions) {
  if (opts === null || typeof opts !== 'object') throw invalid('Broker.open(options) needs an options object');
  // One read of each option: a getter or Proxy answering differently later must not
  // make what is used differ from what was checked.
  opts = { ...opts };
  if (typeof opts.dir !== 'string' || opts.dir.length === 0) throw invalid('options.dir must be a non-empty string');
  // A NUL cannot be in a path: the mkdir's refusal came back as IO_ERROR, a disk's fault.
  if (opts.dir.includes('\0')) throw invalid('options.dir must not contain a NUL character');
  const durability = parseDurability(opts.durability);
  const envBackend = process.env.URINGMQ_IO_BACKEND;
  const asked: string = opts.ioBackend ?? (envBackend && envBackend !== '' ? envBackend : 'auto');
  if (asked !== 'auto' && asked !== 'io_uring' && asked !== 'thread')
    throw invalid(`ioBackend must be 'auto', 'io_uring' or 'thread', got ${shown(asked, true)}`);
  const backend: 'auto' | 'io_uring' | 'thread' = asked;
  const maxBatchBytes = opts.maxBatchBytes === undefined ? 8 * MiB : positiveInt(opts.maxBatchBytes, 'maxBatchBytes', NATIVE_MAX_BATCH_BYTES);
  if (maxBatchBytes < MIN_MAX_BATCH_BYTES) throw invalid(`maxBatchBytes must be at least ${MIN_MAX_BATCH_BYTES}, got ${maxBatchBytes}`);
  const maxRecordBytes =
    opts.maxRecordBytes === undefined
      ? Math.min(MiB, maxBatchBytes - RECORD_ROOM_BYTES)
      : positiveInt(opts.maxRecordBytes, `maxRecordBytes (at most maxBatchBytes - ${RECORD_ROOM_BYTES})`, maxBatchBytes - RECORD_ROOM_BYTES);
  const maxPendingBytes = opts.maxPendingBytes === undefined ? 256 * MiB : positiveInt(opts.maxPendingBytes, 'maxPendingBytes');
  const tailCacheBytes = opts.tailCacheBytes === undefined ? MiB : nonNegInt(opts.tailCacheBytes, 'tailCacheBytes');
  const tailCacheTotalBytes = opts.tailCacheTotalBytes === undefined ? DEFAULT_TAIL_CACHE_TOTAL_BYTES : nonNegInt(opts.tailCacheTotalBytes, 'tailCacheTotalBytes');
  const minFreeBytes = opts.minFreeBytes === undefined ? 64 * MiB : nonNegInt(opts.minFreeBytes, 'minFreeBytes');
  const groupCommitUs = opts.groupCommitUs === undefined ? DEFAULT_GROUP_COMMIT_US : nonNegInt(opts.groupCommitUs, 'groupCommitUs', MAX_GROUP_COMMIT_US);
  const zeroAheadBytes = opts.zeroAheadBytes === undefined ? DEFAULT_ZERO_AHEAD_BYTES : nonNegInt(opts.zeroAheadBytes, 'zeroAheadBytes', MAX_ZERO_AHEAD_BYTES);
  const producerStateScanBytes = opts.producerStateScanBytes === undefined ? 16 * MiB : nonNegInt(opts.producerStateScanBytes, 'producerStateScanBytes');
  const groupRetentionMs = opts.groupRetentionMs === undefined ? 7 * 86_400_000 : nonNegInt(opts.groupRetentionMs, 'groupRetentionMs');
  const maxQueuedBytes = opts.maxQueuedBytes === undefined ? 512 * MiB : positiveInt(opts.maxQueuedBytes, 'maxQueuedBytes');
  const writeHighWaterBytes =
    opts.writeHighWaterBytes === undefined ? Math.min(64 * MiB, maxQueuedBytes) : positiveInt(opts.writeHighWaterBytes, 'writeHighWaterBytes', maxQueuedBytes);
  const maxTopics = opts.maxTopics === undefined ? DEFAULT_MAX_TOPICS : positiveInt(opts.maxTopics, 'maxTopics', MAX_COUNT_LIMIT);
  const maxPartitions = opts.maxPartitions === undefined ? defaultMaxPartitions() : positiveInt(opts.maxPartitions, 'maxPartitions', MAX_COUNT_LIMIT);
  const maxGroups = opts.maxGroups === undefined ? DEFAULT_MAX_GROUPS : positiveInt(opts.maxGroups, 'maxGroups', MAX_COUNT_LIMIT);
  const maxProducerStateBatches =
    opts.maxProducerStateBatches === undefined ? DEFAULT_MAX_PRODUCER_STATE_BATCHES : positiveInt(opts.maxProducerStateBatches, 'maxProducerStateBatches', MAX_PRODUCER_STATE_BATCHES_LIMIT);
  if (opts.directIo !== undefined && typeof opts.directIo !== 'boolean') throw invalid(`directIo must be a boolean, got ${shown(opts.directIo, true)}`);
  return { opts, durability, backend, maxBatchBytes, maxRecordBytes, maxPendingBytes, tailCacheBytes, tailCacheTotalBytes, minFreeBytes, groupCommitUs, zeroAheadBytes, producerStateScanBytes, groupRetentionMs, maxQueuedBytes, writeHighWaterBytes, maxTopics, maxPartitions, maxGroups, maxProducerStateBatches };
}

function parseDurability(d: unknown): Durability {
  if (d === undefined) return 'sync';
  if (d === 'sync' || d === 'none') return d;
  if (d !== null && typeof d === 'object' && 'intervalMs' in d) {
    const ms = (d as { intervalMs: unknown }).intervalMs;
    return { intervalMs: positiveInt(ms, 'durability.intervalMs', 3_600_000) };
  }
  throw invalid(`durability must be 'sync', 'none' or { intervalMs }, got ${shown(d, true)}`);
}

/** BrokerOptions.tailCacheTotalBytes' default: the whole 1 MiB for up to 256 partitions. */
export const DEFAULT_TAIL_CACHE_TOTAL_BYTES = 256 * MiB;
/** BrokerOptions.maxTopics and maxGroups: their defaults, and the most either may be set to. */
export const DEFAULT_MAX_TOPICS = 10_000;
export const DEFAULT_MAX_GROUPS = 10_000;
const MAX_COUNT_LIMIT = 1_000_000;
/**
 * BrokerOptions.maxProducerStateBatches: its default (about 0.5 GB of the heap, at some
 * 125 bytes a batch remembered: a whole table of 65,536 for up to 64 partitions) and
 * the most it may be set to.
 */
export const DEFAULT_MAX_PRODUCER_STATE_BATCHES = 4 * 1024 * 1024;
const MAX_PRODUCER_STATE_BATCHES_LIMIT = 1_000_000_000;
/**
 * BrokerOptions.maxPartitions without a limit on open files to go by (unlimited, or /proc
 * not readable), and the most its default is whatever the limit.
 */
const FALLBACK_MAX_PARTITIONS = 10_000;

/**
 * BrokerOptions.maxPartitions' default: an eighth of the process's soft limit on open
 * files, at most 10,000. A partition keeps four open, so its partitions take at most
 * half of them; the rest is for old segments being read, connections, offsets files and
 * the fetch plane's pipes. Node raises the soft limit to the hard one as it starts, so
 * this is the hard limit (`ulimit -Hn`), not what `ulimit -n` says in the shell. Capped
 * as where there is no limit: common hard limits (524,288 under systemd, 1,048,576 in
 * containers) gave 65,536 and 131,072 partitions, each with its tail cache and write
 * buffers (about 1.1 MiB) once written, far past the memory of most hosts.
 */
function defaultMaxPartitions(): number {
  let limits: string;
  try {
    limits = readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return FALLBACK_MAX_PARTITIONS;
  }
  return maxPartitionsFor(limits);
}

/** @internal defaultMaxPartitions from the text of /proc/self/limits. */
export function maxPartitionsFor(limits: string): number {
  const soft = /^Max open files\s+(\d+)/m.exec(limits)?.[1];
  if (soft === undefined) return FALLBACK_MAX_PARTITIONS; // "unlimited"
  return Math.min(FALLBACK_MAX_PARTITIONS, Math.max(1, Math.floor(Number(soft) / 8)));
}
/** BrokerOptions.groupCommitUs: its default and its ceiling (the native engine's too). */
export const DEFAULT_GROUP_COMMIT_US = 1000;
const MAX_GROUP_COMMIT_US = 100_000;
/** BrokerOptions.zeroAheadBytes: its default and its ceiling (the native engine's too). */
export const DEFAULT_ZERO_AHEAD_BYTES = 2 * 1024 * 1024;
const MAX_ZERO_AHEAD_BYTES = 64 * 1024 * 1024;
