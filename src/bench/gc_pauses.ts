/**
 * V8's garbage-collection pauses of this process, as perf_hooks reports them, kept
 * with wall-clock times so that two processes' pauses can be set against one window
 * (bench:grpc's end-to-end case: its client here, its server in a child process).
 * A young-generation pause stops a main thread for its whole length: at 10k msgs/s a
 * 2 ms scavenge every 300 ms is enough to set a p99.
 */
import { PerformanceObserver, constants, monitorEventLoopDelay, performance, type PerformanceEntry } from 'node:perf_hooks';

/** [start, duration] in ms, start as Unix time; kind 1 young, 2 full (incremental marking and weak callbacks count as full). */
export type GcPause = [start: number, duration: number, kind: 1 | 2];

export interface GcSummary {
  count: number;
  totalMs: number;
  maxMs: number;
  /** Young-generation pauses among them. */
  young: number;
}

/** The most recent pauses kept: hours of a busy process at ~10 per second. */
const MAX_PAUSES = 50_000;

export class GcPauseLog {
  private readonly pauses: GcPause[] = [];

  /** Observes for the rest of the process's life (a bench process's). */
  constructor() {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) this.add(e);
    }).observe({ entryTypes: ['gc'] });
  }

  private add(e: PerformanceEntry): void {
    const kind = (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
    const young = kind === constants.NODE_PERFORMANCE_GC_MINOR;
    this.pauses.push([performance.timeOrigin + e.startTime, e.duration, young ? 1 : 2]);
    if (this.pauses.length > MAX_PAUSES) this.pauses.splice(0, this.pauses.length - MAX_PAUSES);
  }

  /** Pauses that began in [from, to) (Unix ms). */
  between(from: number, to: number): GcPause[] {
    return this.pauses.filter((p) => p[0] >= from && p[0] < to);
  }
}

export function summarize(pauses: readonly GcPause[]): GcSummary {
  let totalMs = 0;
  let maxMs = 0;
  let young = 0;
  for (const [, d, k] of pauses) {
    totalMs += d;
    maxMs = Math.max(maxMs, d);
    if (k === 1) young++;
  }
  return { count: pauses.length, totalMs, maxMs, young };
}

/** "n / total ms / longest ms", or a dash when nothing was measured. */
export function gcCell(s: GcSummary | null): string {
  return s ? `${s.count} / ${s.totalMs.toFixed(1)} / ${s.maxMs.toFixed(2)}` : '—';
}

/** A main thread's event-loop delay in ms since the last reading: p99 and the longest. */
export interface LoopDelay {
  p99: number;
  max: number;
}

/**
 * Event-loop delay of this process's main thread (perf_hooks, 1 ms resolution): each
 * call returns what was seen since the previous one and starts over. A stall of the
 * thread, from GC or anything else, shows as its length.
 */
export function loopDelayMonitor(): () => LoopDelay {
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  return () => {
    const r = { p99: h.percentile(99) / 1e6, max: h.max / 1e6 };
    h.reset();
    return r;
  };
}
