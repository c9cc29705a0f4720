/**
 * The shape of a bench results file (`<name>.json`), written once per run, and the
 * environment it records. The HTML report is rendered from this alone.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { LatencySummary } from './latency';
import type { ProcessStats } from './proc_stats';
import type { ApiPath, Workload } from './workload';

export const RESULTS_VERSION = 1;

export type PhaseKind = 'step' | 'probe' | 'drain' | 'backlog-build' | 'backlog-drain' | 'setup';

export interface Sample {
  /** Seconds since the run started, at the end of this sample. */
  t: number;
  durationSec: number;
  phase: PhaseKind;
  /** Index into `steps` while a step or probe runs. */
  step: number | null;
  api: ApiPath | null;
  targetRate: number | null;
  /** Most of the sample lies in the step's warm-up. */
  warmup: boolean;
  sentPerSec: number;
  publishedPerSec: number;
  consumedPerSec: number;
  publishMBps: number;
  consumeMBps: number;
  failed: number;
  /** Sent and not yet acked, at the end of the sample. */
  outstanding: number;
  /** Acked × consumer groups − consumed, at the end of the sample. */
  lag: number;
  /** send → ack, from the scheduled send time (includes any wait to send). */
  publishLatencyMs: LatencySummary;
  /** send → ack, from the actual send. */
  publishLatencySinceSendMs: LatencySummary;
  /** send → consumer, from the scheduled send time. */
  e2eLatencyMs: LatencySummary;
  /** send → consumer, from the actual send. */
  e2eLatencySinceSendMs: LatencySummary;
  client: ProcessStats;
  broker: ProcessStats | null;
}

export interface StepResult {
  index: number;
  label: string;
  phase: 'step' | 'probe';
  api: ApiPath;
  targetRate: number;
  seconds: number;
  warmupSeconds: number;
  /** Seconds after the warm-up the statistics cover. */
  measuredSeconds: number;
  /** Run time (s) at which the step started, its warm-up ended, and it ended. */
  startT: number;
  warmEndT: number;
  endT: number;
  publishedPerSec: number;
  consumedPerSec: number;
  publishMBps: number;
  consumeMBps: number;
  /** Counts in the measured window (by completion time). */
  sent: number;
  acked: number;
  consumed: number;
  failed: number;
  /** Due by the schedule but never sent (maxOutstanding reached until the step ended). */
  notSent: number;
  publishLatencyMs: LatencySummary;
  publishLatencySinceSendMs: LatencySummary;
  e2eLatencyMs: LatencySummary;
  e2eLatencySinceSendMs: LatencySummary;
  /** [percentile, ms] for the percentile plot, from the scheduled send time. */
  distribution: { publish: Array<[number, number]>; e2e: Array<[number, number]> };
  /** HdrHistogram compressed base64 (µs) of the four latency histograms. */
  histograms: { publish: string; publishSinceSend: string; e2e: string; e2eSinceSend: string };
  /** Max-rate probes: whether the rate was sustained, and why not. */
  ok?: boolean;
  verdict?: string;
}

export interface ComparisonRow {
  api: ApiPath;
  targetRate: number;
  step: number;
  publishedPerSec: number;
  consumedPerSec: number;
  publishP50: number;
  publishP99: number;
  publishP999: number;
  e2eP50: number;
  e2eP99: number;
  e2eP999: number;
  e2eMax: number;
}

export interface BacklogResult {
  messages: number;
  buildSeconds: number;
  buildPerSec: number;
  buildMBps: number;
  drainSeconds: number;
  /** Messages read by all groups together per second while catching up. */
  drainPerSec: number;
  drainMBps: number;
  caughtUp: boolean;
}

export interface Environment {
  date: string;
  hostname: string;
  kernel: string;
  kernelVersion: string;
  cpuModel: string;
  cpuCount: number;
  memoryMb: number;
  node: string;
  v8: string;
  uringmqVersion: string;
  gitCommit: string | null;
  gitDirty: boolean | null;
  ioBackend: string;
  ioBackendNote: string;
  durability: string;
  brokerPlacement: string;
  brokerAddress: string | null;
  brokerPid: number | null;
  dataDir: string | null;
  filesystem: string | null;
}

export interface BenchResults {
  version: number;
  name: string;
  kind: Workload['kind'];
  startedAt: string;
  finishedAt: string;
  durationSec: number;
  command: string[];
  environment: Environment;
  workload: Workload;
  steps: StepResult[];
  maxRate: { sustainableRate: number | null; note: string } | null;
  backlog: BacklogResult | null;
  comparison: ComparisonRow[] | null;
  totals: { sent: number; acked: number; failed: number; consumed: number; expectedConsumed: number; notSent: number; drained: boolean };
  errors: string[];
  samples: Sample[];
  aborted: { reason: string; snapshot: string } | null;
}

/** The directory of uringmq's package.json. */
export function packageRoot(): string {
  let dir = __dirname;
  for (let i = 0; i < 6; i++) {
    const pj = path.join(dir, 'package.json');
    try {
      if ((JSON.parse(fs.readFileSync(pj, 'utf8')) as { name?: string }).name === 'uringmq') return dir;
    } catch {
      // not here
    }
    dir = path.dirname(dir);
  }
  return process.cwd();
}

/** uringmq's version, from its package.json; null when that cannot be read. */
export function packageVersion(root = packageRoot()): string | null {
  try {
    return (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version?: string }).version ?? null;
  } catch {
    return null;
  }
}

const FS_TYPES: Record<number, string> = {
  0xef53: 'ext4',
  0x58465342: 'xfs',
  0x9123683e: 'btrfs',
  0x01021994: 'tmpfs',
  0x794c7630: 'overlayfs',
  0x2fc12fc1: 'zfs',
  0xf2f52010: 'f2fs',
  0x6969: 'nfs',
};

export function filesystemOf(dir: string): string | null {
  try {
    const t = fs.statfsSync(dir).type;
    return FS_TYPES[t] ?? `0x${t.toString(16)}`;
  } catch {
    return null;
  }
}

function git(root: string, args: string[]): string | null {
  if (!fs.existsSync(path.join(root, '.git'))) return null; // an installed package: not our repository
  const r = spawnSync('git', ['-C', root, ...args], { encoding: 'utf8', timeout: 5000 });
  return r.status === 0 ? r.stdout.trim() : null;
}

/** `durability` null: the broker's own setting, unknown here (a running server reached with --server). */
export function environment(broker: { ioBackend: string; ioBackendNote: string; placement: string; address: string | null; pid: number | null; dataDir: string | null }, durability: Workload['durability'] | null): Environment {
  const root = packageRoot();
  const cpus = os.cpus();
  const commit = git(root, ['rev-parse', 'HEAD']);
  const status = commit ? git(root, ['status', '--porcelain', '--untracked-files=no']) : null;
  const version = packageVersion(root) ?? '';
  return {
    date: new Date().toISOString(),
    hostname: os.hostname(),
    kernel: os.release(),
    kernelVersion: os.version(),
    cpuModel: cpus[0]?.model ?? 'unknown',
    cpuCount: cpus.length,
    memoryMb: Math.round(os.totalmem() / 1048576),
    node: process.version,
    v8: process.versions.v8,
    uringmqVersion: version,
    gitCommit: commit,
    gitDirty: status === null ? null : status.length > 0,
    ioBackend: broker.ioBackend,
    ioBackendNote: broker.ioBackendNote,
    durability: durability === null ? "unknown (the running server's own setting)" : typeof durability === 'string' ? durability : `interval ${durability.intervalMs} ms`,
    brokerPlacement: broker.placement,
    brokerAddress: broker.address,
    brokerPid: broker.pid,
    dataDir: broker.dataDir,
    filesystem: broker.dataDir ? filesystemOf(broker.dataDir) : null,
  };
}
