/**
 * Workloads as data: what `uringmq bench` runs, read from a JSON or YAML file and/or
 * flags, checked field by field. Every field has a default, so `{}` is the default
 * stepped workload (100-byte messages, durability sync, 1k → 5k → 10k msgs/s).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { UringmqError } from '../errors';
import type { Durability } from '../broker/broker';

export type BenchKind = 'stepped' | 'max-rate' | 'backlog' | 'comparison';
/** How messages are published: the embedded producer, or over gRPC with the client's
 *  batching producer, one unary Publish per message, or one PublishStream message per record. */
export type ApiPath = 'embedded' | 'grpc-batched' | 'grpc-unary' | 'grpc-stream';
/** Where the broker the tool starts runs (gRPC paths; embedded is always in-process). */
export type BrokerPlacement = 'in-process' | 'child';

export const KINDS: readonly BenchKind[] = ['stepped', 'max-rate', 'backlog', 'comparison'];
export const API_PATHS: readonly ApiPath[] = ['embedded', 'grpc-batched', 'grpc-unary', 'grpc-stream'];
export const PLACEMENTS: readonly BrokerPlacement[] = ['in-process', 'child'];

export interface MaxRateSearch {
  /** First rate tried (msgs/s). */
  startRate: number;
  /** Each passing probe multiplies the rate by this until one fails. */
  factor: number;
  /** Never try more than this. */
  maxRate: number;
  /** Bisection probes between the last pass and the first failure. */
  refineSteps: number;
  stepSeconds: number;
  warmupSeconds: number;
  /** A probe fails when publish or end-to-end p99 (from the scheduled time) exceeds this. */
  p99LimitMs: number;
  /** ... or when achieved publish/consume rates fall below this share of the target. */
  minRatio: number;
}

export interface BacklogMode {
  /** Messages written before any consumer reads (per topic, over all its producers). */
  messages: number;
  /** Publishes outstanding per producer while building (closed loop, as fast as the broker acks). */
  buildWindow: number;
  /** Open-loop publishing rate kept up while the consumers catch up (0 = none). */
  produceRate: number;
  /** Give up catching up after this long. */
  timeoutSeconds: number;
}

export interface BreakerLimits {
  /** Trip when p99 latency (publish or end-to-end, from the scheduled send) exceeds this ... */
  p99Ms: number;
  /** ... for this many consecutive samples. */
  consecutive: number;
  /** Trip when the client's or the broker's RSS exceeds this (MiB). */
  maxRssMb: number;
  /** Trip when the client's or the broker's active handles exceed this. */
  maxHandles: number;
}

export interface Workload {
  name: string;
  description: string;
  kind: BenchKind;
  api: ApiPath;
  broker: BrokerPlacement;
  /** Bytes per message value; at least 16 (the value carries the scheduled and actual send times). */
  messageSize: number;
  topics: number;
  /** Per topic. */
  partitions: number;
  /** In all; producer i publishes to topic i % topics, at rate / producers. */
  producers: number;
  /** Per topic; each reads every message of its topic. 0 = publish only. */
  consumerGroups: number;
  consumersPerGroup: number;
  durability: Durability;
  ioBackend: 'auto' | 'io_uring' | 'thread';
  /** Producer linger for the batching paths (embedded, grpc-batched). */
  lingerMs: number;
  /** Batches in flight per producer on grpc-batched. */
  maxInFlight: number;
  /** Messages sent and not yet acked per producer before the schedule holds back
   *  (held messages keep their scheduled time, so the wait shows as latency). */
  maxOutstanding: number;
  consumerMaxUnacked: number;
  /** An artificially slow consumer: this long per message before the next delivery is taken. */
  consumerDelayMs: number;
  /** Target publish rates in msgs/s (all producers together), one step each. */
  rates: number[];
  stepSeconds: number;
  /** The first seconds of each step, discarded from the step's statistics. */
  warmupSeconds: number;
  sampleSeconds: number;
  /** After the last step: how long consumers get to catch up. */
  drainSeconds: number;
  maxRate: MaxRateSearch;
  backlog: BacklogMode;
  compare: { apis: ApiPath[] };
  breaker: BreakerLimits;
}

export type WorkloadInput = { [K in keyof Workload]?: Workload[K] extends object ? Partial<Workload[K]> | Workload[K] : Workload[K] };

export function defaultWorkload(): Workload {
  return {
    name: 'stepped-grpc-batched-100b-sync',
    description: '',
    kind: 'stepped',
    api: 'grpc-batched',
    broker: 'child',
    messageSize: 100,
    topics: 1,
    partitions: 1,
    producers: 1,
    consumerGroups: 1,
    consumersPerGroup: 1,
    durability: 'sync',
    ioBackend: 'auto',
    lingerMs: 0,
    maxInFlight: 64,
    maxOutstanding: 100_000,
    consumerMaxUnacked: 5000,
    consumerDelayMs: 0,
    rates: [1000, 5000, 10_000],
    stepSeconds: 120,
    warmupSeconds: 30,
    sampleSeconds: 10,
    drainSeconds: 30,
    maxRate: { startRate: 1000, factor: 2, maxRate: 2_000_000, refineSteps: 3, stepSeconds: 20, warmupSeconds: 5, p99LimitMs: 50, minRatio: 0.95 },
    backlog: { messages: 1_000_000, buildWindow: 5000, produceRate: 0, timeoutSeconds: 300 },
    compare: { apis: ['grpc-unary', 'grpc-stream', 'grpc-batched'] },
    breaker: { p99Ms: 200, consecutive: 5, maxRssMb: 4096, maxHandles: 10_000 },
  };
}

const bad = (msg: string) => new UringmqError('INVALID_ARGUMENT', `workload: ${msg}`);

/** Reads a workload file (.json, .yaml/.yml), without applying defaults. */
export function readWorkloadFile(file: string): WorkloadInput {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new UringmqError('INVALID_ARGUMENT', `cannot read workload file ${file}: ${(e as Error).message}`);
  }
  const ext = path.extname(file).toLowerCase();
  let data: unknown;
  try {
    if (ext === '.yaml' || ext === '.yml') {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const yaml = require('js-yaml') as { load(s: string): unknown };
      data = yaml.load(text);
    } else data = JSON.parse(text);
  } catch (e) {
    throw new UringmqError('INVALID_ARGUMENT', `cannot parse workload file ${file}: ${(e as Error).message}`);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw new UringmqError('INVALID_ARGUMENT', `workload file ${file} must hold an object`);
  const w = data as WorkloadInput;
  // Named after its file unless it says otherwise; characters a name may not hold
  // (a space, say) become '-', so a file's own name is never refused.
  if (w.name === undefined) w.name = path.basename(file, path.extname(file)).replace(/[^A-Za-z0-9._-]/g, '-').slice(0, 100) || 'workload';
  return w;
}

/** "10k", "1.5m", 2000 → msgs/s. */
export function parseRate(v: unknown, what = 'rate'): number {
  let n: number;
  if (typeof v === 'number') n = v;
  else if (typeof v === 'string') {
    const m = /^\s*([0-9]*\.?[0-9]+)\s*([kKmM]?)\s*$/.exec(v);
    if (!m) throw bad(`${what} must be a number like 5000, "5k" or "1.5m", got ${JSON.stringify(v)}`);
    n = Number(m[1]) * (m[2] === '' ? 1 : m[2]!.toLowerCase() === 'k' ? 1e3 : 1e6);
  } else throw bad(`${what} must be a number, got ${JSON.stringify(v)}`);
  // Whole messages per second: checked after rounding (0.4 passed as positive and
  // became 0, which the sender's ticker refused with a native error).
  if (!Number.isFinite(n) || Math.round(n) < 1) throw bad(`${what} must be at least 1 msg/s, got ${String(v)}`);
  return Math.round(n);
}

export function parseDurabilityValue(v: unknown): Durability {
  if (v === 'sync' || v === 'none') return v;
  if (typeof v === 'number' || (typeof v === 'string' && /^\d+$/.test(v))) return { intervalMs: posInt(Number(v), 'durability (interval ms)') };
  if (v !== null && typeof v === 'object' && 'intervalMs' in v) return { intervalMs: posInt((v as { intervalMs: unknown }).intervalMs, 'durability.intervalMs') };
  throw bad(`durability must be 'sync', 'none', a sync interval in ms or { intervalMs }, got ${JSON.stringify(v)}`);
}

function posInt(v: unknown, what: string, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0 || v > max) throw bad(`${what} must be a positive integer${max < Number.MAX_SAFE_INTEGER ? ` ≤ ${max}` : ''}, got ${JSON.stringify(v)}`);
  return v;
}
function nonNegInt(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw bad(`${what} must be a non-negative integer, got ${JSON.stringify(v)}`);
  return v;
}
function posNum(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) throw bad(`${what} must be a positive number, got ${JSON.stringify(v)}`);
  return v;
}
function nonNegNum(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw bad(`${what} must be a non-negative number, got ${JSON.stringify(v)}`);
  return v;
}
function oneOf<T extends string>(v: unknown, all: readonly T[], what: string): T {
  if (typeof v !== 'string' || !all.includes(v as T)) throw bad(`${what} must be one of ${all.join(', ')}, got ${JSON.stringify(v)}`);
  return v as T;
}

function sub<T extends object>(dflt: T, given: unknown, what: string, check: Record<keyof T, (v: unknown, what: string) => unknown>): T {
  if (given === undefined) return dflt;
  if (given === null || typeof given !== 'object' || Array.isArray(given)) throw bad(`${what} must be an object`);
  const out = { ...dflt } as Record<string, unknown>;
  for (const [k, v] of Object.entries(given)) {
    if (!(k in check)) throw bad(`unknown setting "${what}.${k}" (known: ${Object.keys(check).join(', ')})`);
    out[k] = (check as Record<string, (v: unknown, w: string) => unknown>)[k]!(v, `${what}.${k}`);
  }
  return out as T;
}

/** Defaults, then `input` (a file's contents), then `overrides` (flags); every field checked. */
export function resolveWorkload(input: WorkloadInput = {}, overrides: WorkloadInput = {}): Workload {
  const w = defaultWorkload();
  for (const src of [input, overrides]) {
    for (const [k, v] of Object.entries(src)) {
      if (v === undefined) continue;
      const r = w as unknown as Record<string, unknown>;
      switch (k as keyof Workload) {
        case 'name':
          if (typeof v !== 'string' || !/^[A-Za-z0-9._-]{1,100}$/.test(v)) throw bad(`name must be 1–100 characters from [A-Za-z0-9._-], got ${JSON.stringify(v)}`);
          r[k] = v;
          break;
        case 'description':
          r[k] = String(v);
          break;
        case 'kind':
          r[k] = oneOf(v, KINDS, k);
          break;
        case 'api':
          r[k] = oneOf(v, API_PATHS, k);
          break;
        case 'broker':
          r[k] = oneOf(v, PLACEMENTS, k);
          break;
        case 'ioBackend':
          r[k] = oneOf(v, ['auto', 'io_uring', 'thread'] as const, k);
          break;
        case 'durability':
          r[k] = parseDurabilityValue(v);
          break;
        case 'messageSize':
          r[k] = posInt(v, k, 1 << 20);
          break;
        case 'topics':
        case 'partitions':
        case 'producers':
        case 'consumersPerGroup':
          r[k] = posInt(v, k, 4096);
          break;
        case 'consumerGroups':
          r[k] = nonNegInt(v, k);
          break;
        case 'lingerMs':
        case 'consumerDelayMs':
          r[k] = nonNegInt(v, k);
          break;
        case 'maxInFlight':
        case 'maxOutstanding':
        case 'consumerMaxUnacked':
          r[k] = posInt(v, k);
          break;
        case 'rates':
          if (!Array.isArray(v) || v.length === 0) throw bad('rates must be a non-empty list of msgs/s');
          r[k] = v.map((x, i) => parseRate(x, `rates[${i}]`));
          break;
        case 'stepSeconds':
        case 'sampleSeconds':
          r[k] = posNum(v, k);
          break;
        case 'warmupSeconds':
        case 'drainSeconds':
          r[k] = nonNegNum(v, k);
          break;
        case 'maxRate':
          w.maxRate = sub(w.maxRate, v, k, {
            startRate: (x, n) => parseRate(x, n),
            factor: (x, n) => {
              const f = posNum(x, n);
              if (f <= 1) throw bad(`${n} must be greater than 1`);
              return f;
            },
            maxRate: (x, n) => parseRate(x, n),
            refineSteps: nonNegInt,
            stepSeconds: posNum,
            warmupSeconds: nonNegNum,
            p99LimitMs: posNum,
            minRatio: (x, n) => {
              const f = posNum(x, n);
              if (f > 1) throw bad(`${n} must be at most 1`);
              return f;
            },
          });
          break;
        case 'backlog':
          w.backlog = sub(w.backlog, v, k, { messages: posInt, buildWindow: posInt, produceRate: (x, n) => (x === 0 ? 0 : parseRate(x, n)), timeoutSeconds: posNum });
          break;
        case 'compare':
          w.compare = sub(w.compare, v, k, {
            apis: (x, n) => {
              if (!Array.isArray(x) || x.length === 0) throw bad(`${n} must be a non-empty list of API paths`);
              return x.map((a, i) => oneOf(a, API_PATHS, `${n}[${i}]`));
            },
          });
          break;
        case 'breaker':
          w.breaker = sub(w.breaker, v, k, { p99Ms: posNum, consecutive: posInt, maxRssMb: posNum, maxHandles: posInt });
          break;
        default:
          throw bad(`unknown setting "${k}" (known: ${Object.keys(w).join(', ')})`);
      }
    }
  }
  if (input.name === undefined && overrides.name === undefined) {
    const d = typeof w.durability === 'string' ? w.durability : `sync${w.durability.intervalMs}ms`;
    w.name = `${w.kind}-${w.kind === 'comparison' ? 'apis' : w.api}-${w.messageSize}b-${d}`;
  }
  if (w.messageSize < 16) throw bad('messageSize must be at least 16 (each message carries its scheduled and actual send times)');
  if (w.warmupSeconds >= w.stepSeconds) throw bad(`warmupSeconds (${w.warmupSeconds}) must be shorter than stepSeconds (${w.stepSeconds})`);
  if (w.maxRate.warmupSeconds >= w.maxRate.stepSeconds) throw bad('maxRate.warmupSeconds must be shorter than maxRate.stepSeconds');
  if (w.maxRate.startRate > w.maxRate.maxRate) throw bad('maxRate.startRate must not exceed maxRate.maxRate');
  if (w.kind === 'comparison' && w.compare.apis.includes('embedded') && w.broker === 'child')
    throw bad("compare.apis can include 'embedded' only with broker: 'in-process' (the embedded path needs the broker in this process)");
  return w;
}
