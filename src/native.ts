/**
 * The only module that loads the C++ addon. Everything else imports the typed
 * surface below. Resolution: $URINGMQ_ADDON (an explicit .node path, e.g. the
 * ASan build), else node-gyp-build: prebuilds/linux-x64/*.node, then build/Release.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fromNative, invalid, shown } from './errors';

export interface NativePartition { readonly __brand: 'NativePartition' }

export interface PartitionOptions {
  /** The topic's incarnation (its createdAt; 0: unknown): the fetch plane refuses fetches that name another one. */
  incarnation?: number;
  segmentBytes?: number;
  retentionBytes?: number;
  retentionMs?: number;
  indexIntervalBytes?: number;
  tailCacheBytes?: number;
  preallocateBytes?: number;
  /** Appends never take the file system's free space below this (default 64 MiB). */
  minFreeBytes?: number;
  directIo?: boolean;
  /** Recovery checks the whole last segment, not from its newest index entry on. */
  fullScan?: boolean;
  /** Bytes at the log's end whose idempotent batches takeProducerBatches() returns (default 0: none). */
  producerScanBytes?: number;
  /** Instead of that window: every batch ending after this offset (a producer-state snapshot covers the rest; default -1: none). */
  producerScanFrom?: number;
  /** At most this many of them, the newest (default 65,536)... */
  producerScanBatches?: number;
  /** ...and at most this many of each producer, its newest (default 64). */
  producerScanPerProducer?: number;
}

/** The idempotent batches an open found at the log's end. */
export interface ProducerBatches {
  /** [producerId, baseSequence, recordCount, baseOffset] per batch, oldest first. */
  batches: Float64Array;
  /** Why part of the window was not used (a bad batch, an unreadable file), if so; what is returned is the part after it. */
  error?: string;
}

export interface PartitionInfo {
  startOffset: number;
  endOffset: number;
  bytes: number;
  segments: number;
  directIo: boolean;
  blockSize: number;
  /** What the partition's tail cache holds now, bytes. */
  cachedBytes: number;
}

export type CompletionCallback = (
  ids: Float64Array,
  codes: Int32Array,
  baseOffsets: Float64Array,
  errors: Array<{ code: string; message: string } | undefined> | null,
) => void;

export interface NativeEngine {
  readonly backend: 'io_uring' | 'thread';
  readonly backendNote: string;
  /** Why the flush file (EngineOptions.flushDir) could not be set up, leaving every write O_DSYNC; empty otherwise. */
  readonly flushNote: string;
  readonly pending: number;
  /** Sync passes (fdatasync of every dirty file) the I/O thread has run. */
  readonly syncPasses: number;
  /** Bytes of zeros written ahead of the data (EngineOptions.zeroAheadBytes). */
  readonly zeroAheadBytes: number;
  /** Write cycles made durable by one flush of the disk's cache (EngineOptions.flushDir) instead of RWF_DSYNC writes. */
  readonly cacheFlushes: number;
  /** Removals of retired segment files (or syncs of their directory) that failed; each is retried a second later. Absent from an addon built before it. */
  readonly retentionRemoveFailures?: number;
  /** Warnings of the I/O thread's background work (retention) since the last call, oldest first. Absent from an addon built before it. */
  takeWarnings?(): string[];
  /**
   * The write cycles' disk-write durations so far: [count, sum in seconds, then per
   * bucket the cycles of at most 2^(i+4) µs (not cumulative), the last bucket the
   * longer ones]. Zeros once closed.
   */
  writeLatency(): Float64Array;
  /** Each append's time in the core (Submit to its completion handed back), in the same layout as writeLatency(). */
  appendLatency(): Float64Array;
  openPartition(dir: string, label: string, opts: PartitionOptions): Promise<NativePartition>;
  /**
   * Queues a batch for the I/O thread, which validates it (computing its CRC when
   * `seal`), assigns offsets and reports through onComplete. False when the ring is
   * full (retry after a completion). `batch` must stay alive until its completion.
   * `sync`: complete only once on disk, whatever the durability mode.
   */
  append(p: NativePartition, batch: Uint8Array, id: number, seal: boolean, sync?: boolean, resume?: boolean): boolean;
  read(p: NativePartition, offset: number, maxBytes: number): Promise<Buffer>;
  /** The same from the tail cache, synchronously; undefined when not cached. */
  readCached(p: NativePartition, offset: number, maxBytes: number): Buffer | undefined;
  /**
   * read() into `dest`: the byte count, or a new Buffer when the first batch alone does not fit.
   * The file is read into memory of the core's own and copied into `dest` on this thread once
   * done: a `dest` that is not a Uint8Array (a DataView), or one detached (its ArrayBuffer
   * transferred) before or meanwhile, is INVALID_ARGUMENT;
   * one shrunk meanwhile (a resizable ArrayBuffer) below the answer gets a new Buffer, as a batch too large for it.
   */
  readInto(p: NativePartition, offset: number, maxBytes: number, dest: Buffer): Promise<number | Buffer>;
  /** readCached() into `dest`; undefined when not cached. A `dest` not a Uint8Array, or detached, is INVALID_ARGUMENT. */
  readCachedInto(p: NativePartition, offset: number, maxBytes: number, dest: Buffer): number | Buffer | undefined;
  info(p: NativePartition): PartitionInfo;
  /** The partition's tail cache held to `bytes` from now on (never above its open's tailCacheBytes), trimmed at once. */
  setTailCacheBytes(p: NativePartition, bytes: number): void;
  /** [startOffset, endOffset] into `out` (length >= 2), without building an object. */
  offsets(p: NativePartition, out: Float64Array): void;
  /** What the open's scan found (producerScanBytes); empty after the first call. */
  takeProducerBatches(p: NativePartition): ProducerBatches;
  closePartition(p: NativePartition): void;
  close(): void;
}

export interface EngineOptions {
  backend: 'auto' | 'io_uring' | 'thread';
  durability: 'sync' | 'interval' | 'none';
  intervalMs?: number;
  /** The shortest time between the starts of two write cycles, µs (BrokerOptions.groupCommitUs). */
  groupCommitUs?: number;
  /** How far ahead of the data preallocated space is zeroed, with sync (BrokerOptions.zeroAheadBytes). */
  zeroAheadBytes?: number;
  /**
   * With sync: a directory on the data's file system (created if missing) for an empty
   * file whose fdatasync flushes the disk's write cache. Writes over blocks already
   * written (the tail block, zeros ahead) then go without RWF_DSYNC, made durable by one
   * flush a cycle: no inode write for the segments' timestamps. Unset: RWF_DSYNC always.
   */
  flushDir?: string;
  maxBatchBytes?: number;
  testIoDelayMs?: number;
  /** Test hook: the io_uring backend's first submission or wait for completions fails. */
  testUringFault?: 'submit' | 'wait' | 'short-submit-wait';
  /** Test hook: a journal path; see simulatePowerCut. Needs durability 'sync' or 'interval'. */
  testPowerCut?: string;
  /** Test hook: with testPowerCut, the process SIGKILLs itself after this many write batches left writes unflushed. */
  testPowerCutKillAfter?: number;
  onComplete: CompletionCallback;
}

/** Options of the native fetch listener (docs/FETCH-PROTOCOL.md); see src/fetch/server.ts. */
export interface NativeFetchServerOptions {
  host?: string;
  port?: number;
  backend?: 'auto' | 'io_uring' | 'thread';
  token?: string;
  maxConnections?: number;
  handshakeTimeoutMs?: number;
  idleTimeoutMs?: number;
  sendTimeoutMs?: number;
  maxFetchBytes?: number;
  maxWaitMs?: number;
  memoryPerConnection?: number;
  memoryTotal?: number;
}

export interface FetchServerStats {
  /** open now */
  connections: number;
  accepted: number;
  /** refused at the connection limit or while stopping */
  refused: number;
  /** refused connections kept half-closed now, their client's input read and dropped until it closes (at most 64, for at most 1 s), so the refusal ends with a FIN, not a reset */
  lingering: number;
  requests: number;
  /** malformed requests, refused hellos, out-of-range fields */
  badRequests: number;
  /** connections closed by the handshake, idle or send timeout */
  timeouts: number;
  /** bytes sent file → socket without a copy (splice / sendfile) */
  bytesSpliced: number;
  /** bytes sent from memory (tail cache, partial last block) */
  bytesCopied: number;
  /** long-polls waiting now */
  parked: number;
  /** fetches that failed reading a segment file: answered IO_ERROR (its open or a batch header's read failed), or cut off with the connection closed (the read failed after the reply header went out) */
  readErrors: number;
}

export interface NativeFetchServer {
  readonly port: number;
  readonly backend: 'io_uring' | 'thread' | 'closed';
  readonly backendNote: string;
  /** The last read error counted in stats().readErrors (partition, offset, file, errno text); '' before the first. Absent from an addon built before it. */
  readonly lastReadError?: string;
  stats(): FetchServerStats;
  close(): void;
}

export interface BenchResult {
  bytes: number;
  records: number;
  requests: number;
  seconds: number;
}

interface Addon {
  NativeEngine: new (opts: EngineOptions) => NativeEngine;
  NativeFetchServer: new (engine: NativeEngine, opts: NativeFetchServerOptions) => NativeFetchServer;
  benchSendfile(path: string, dataBytes: number, seconds: number): Promise<BenchResult>;
  benchFetchDrain(opts: { host?: string; port: number; token?: string; topic: string; partition?: number; fromOffset?: number; maxBytes?: number; seconds?: number }): Promise<BenchResult>;
  NativeDirLock: new (dir: string) => { release(): void };
  NativeTicker: new (callback: (err?: Error) => void) => NativeTicker;
  crc32c(bytes: Uint8Array, crc?: number): number;
  validateBatch(bytes: Uint8Array): { recordCount: number; baseOffset: number };
  probeIoUring(): { available: boolean; reason: string };
  /** Absent from an addon built before it. */
  fdHungUp?(fd: number): boolean;
  simulatePowerCut(journal: string, seed: number): PowerCutResult;
}

/** What simulatePowerCut undid. */
export interface PowerCutResult {
  /** Data writes the journal recorded since it was last emptied (everything before was flushed). */
  writes: number;
  /** Of which no flush covered: their old bytes were put back (but for the sectors kept). */
  lostWrites: number;
  sectorsUndone: number;
  /** 512-byte sectors of lost writes a seeded random choice kept, as a disk may persist part of its cache early. */
  sectorsKept: number;
}

function packageRoot(): string {
  let dir = __dirname;
  for (let i = 0; i < 6; i++) {
    const pj = path.join(dir, 'package.json');
    if (fs.existsSync(pj) && (JSON.parse(fs.readFileSync(pj, 'utf8')) as { name?: string }).name === 'uringmq') return dir;
    dir = path.dirname(dir);
  }
  throw new Error(`uringmq: cannot find the package root above ${__dirname}`);
}

function load(): Addon {
  const explicit = process.env.URINGMQ_ADDON;
  if (explicit) return require(path.resolve(explicit)) as Addon;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const nodeGypBuild = require('node-gyp-build') as (dir: string) => Addon;
  return nodeGypBuild(packageRoot());
}

const addon: Addon = load();

/** Constructs the engine; native option errors become UringmqError. */
export function createEngine(opts: EngineOptions): NativeEngine {
  try {
    return new addon.NativeEngine(opts);
  } catch (e) {
    throw fromNative(e);
  }
}

export function lockDir(dir: string): { release(): void } {
  try {
    return new addon.NativeDirLock(dir);
  } catch (e) {
    throw fromNative(e);
  }
}

/** CRC32C of `bytes`, continuing from `crc` (a uint32; 0 to start). Public: bad input is a UringmqError. */
export const crc32c = (bytes: Uint8Array, crc = 0): number => {
  // The core took any number as a crc (-1 as 0xffffffff, 1.5 as 1) and any other value as 0.
  if (typeof crc !== 'number' || !Number.isInteger(crc) || crc < 0 || crc > 0xffffffff) throw invalid(`crc32c: crc must be an integer from 0 to 2^32 - 1, got ${shown(crc)}`);
  try {
    return addon.crc32c(bytes, crc);
  } catch (e) {
    throw fromNative(e);
  }
};
export const validateBatch = (bytes: Uint8Array): { recordCount: number; baseOffset: number } => {
  try {
    return addon.validateBatch(bytes);
  } catch (e) {
    throw fromNative(e);
  }
};
export const probeIoUring = (): { available: boolean; reason: string } => addon.probeIoUring();

/**
 * Test hook: after a SIGKILL of a broker opened with `testPowerCut: journal`, puts the
 * segment files back as a power cut could have left them on a disk with a volatile write
 * cache: every data write no flush covered is undone (seed 0), or, with a seed, a random
 * half of its 512-byte sectors (the disk persisted the rest early). Removes the journal.
 * Call it before the broker's directory is opened again. See native/log/power_cut.h.
 */
export const simulatePowerCut = (journal: string, seed = 0): PowerCutResult => {
  try {
    return addon.simulatePowerCut(journal, seed);
  } catch (e) {
    throw fromNative(e);
  }
};

/**
 * Whether `fd` is hung up (poll(): a pipe with no reader left, a socket whose peer
 * closed, a hung-up terminal), asked without writing to it. null: this addon cannot say.
 */
export const fdHungUp = (fd: number): boolean | null => (addon.fdHungUp ? addon.fdHungUp(fd) : null);

/** Binds the native fetch listener of `engine` and starts its thread. */
export function createFetchServer(engine: NativeEngine, opts: NativeFetchServerOptions): NativeFetchServer {
  try {
    return new addon.NativeFetchServer(engine, opts);
  } catch (e) {
    throw fromNative(e);
  }
}

/** A periodic timer to the microsecond whose ticks run on the creating thread (a timerfd). */
export interface NativeTicker {
  /** First expiry at CLOCK_MONOTONIC `firstNs` (process.hrtime's clock), then every `periodNs`. */
  start(firstNs: number, periodNs: number): void;
  /** For good: a stopped ticker cannot start again. */
  stop(): void;
}

/**
 * Benchmarks' open-loop senders: `callback` runs on this thread at each expiry, from
 * its own event loop, which polls a timerfd (expirations missed while the loop was
 * busy coalesce into one call; an error stops the ticker and is passed to it).
 */
export function createTicker(callback: (err?: Error) => void): NativeTicker {
  return new addon.NativeTicker(callback);
}

/** Benchmarks only (bench/fetch.ts): a bare sendfile loop file → loopback socket → native reader. */
export const benchSendfile = (path: string, dataBytes: number, seconds: number): Promise<BenchResult> => addon.benchSendfile(path, dataBytes, seconds);
/** Benchmarks only: a native fetch-protocol client draining one partition. */
export const benchFetchDrain = (opts: Parameters<Addon['benchFetchDrain']>[0]): Promise<BenchResult> => addon.benchFetchDrain(opts);
