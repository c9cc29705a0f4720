/**
 * The circuit breaker of a bench run: stops it when latency stays above a limit for
 * N consecutive samples, or when a process grows past its RSS or handle limit, so an
 * overloaded broker does not run for hours or take the machine down. Tripping
 * writes a diagnostic snapshot and ends the run with BenchAbortedError.
 */
import type { BreakerLimits } from './workload';
import type { Sample } from './results';

export class CircuitBreaker {
  private streak = 0;
  constructor(private readonly limits: BreakerLimits) {}

  /**
   * The reason to stop after this sample, or null. `latencyArmed`: latency counts in
   * this phase (not while building or draining a backlog, not in a max-rate probe,
   * whose own verdict handles latency).
   */
  check(s: Sample, latencyArmed: boolean, consumers: boolean): string | null {
    const l = this.limits;
    for (const [who, p] of [['client', s.client], ['broker', s.broker]] as const) {
      if (!p || (who === 'broker' && p.sameProcess)) continue;
      if (p.rssMb !== null && p.rssMb > l.maxRssMb) return `${who} RSS ${p.rssMb} MiB exceeds the limit of ${l.maxRssMb} MiB (pid ${p.pid})`;
      if (p.activeHandles !== null && p.activeHandles > l.maxHandles) return `${who} has ${p.activeHandles} active handles, over the limit of ${l.maxHandles} (pid ${p.pid})`;
    }
    if (!latencyArmed) return null;
    let worst: { what: string; ms: number } | null = null;
    if (s.publishLatencyMs.count > 0) worst = { what: 'publish', ms: s.publishLatencyMs.p99 };
    if (consumers) {
      if (s.e2eLatencyMs.count > 0) {
        if (!worst || s.e2eLatencyMs.p99 > worst.ms) worst = { what: 'end-to-end', ms: s.e2eLatencyMs.p99 };
      } else if (s.lag > 0) {
        // A consumer that takes nothing at all has unbounded latency, not none.
        worst = { what: `end-to-end (nothing consumed, ${s.lag} messages waiting)`, ms: Infinity };
      }
    }
    if (worst && worst.ms > l.p99Ms) {
      this.streak++;
      if (this.streak >= l.consecutive)
        return `p99 ${worst.what} latency ${Number.isFinite(worst.ms) ? `${worst.ms} ms` : '∞'} above ${l.p99Ms} ms for ${this.streak} consecutive samples`;
    } else this.streak = 0;
    return null;
  }
}

/** The run stopped early; results and the diagnostic snapshot are written. */
export class BenchAbortedError extends Error {
  readonly code = 'BENCH_ABORTED';
  constructor(
    readonly reason: string,
    readonly snapshotPath: string,
    readonly resultsPath: string,
    readonly reportPath: string,
  ) {
    super(`bench stopped: ${reason} (diagnostic snapshot: ${snapshotPath})`);
    this.name = 'BenchAbortedError';
  }
}
