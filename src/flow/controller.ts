/**
 * Per-consumer flow control: a delivery window (most messages delivered and not yet
 * acked) that adapts between minWindow and maxUnacked, and a token bucket that paces
 * deliveries. Every feedback interval the controller looks at what the consumer
 * reported (processed msgs/s, processing latency) — or, when it reports nothing, at
 * what the broker saw (acks/s, delivery → ack latency) — and recomputes both:
 * shrink fast when the consumer falls behind, grow when it keeps up.
 * The law and every default are in docs/FLOW-CONTROL.md; keep the two in step.
 */
import { invalid, shown } from '../errors';
import { TokenBucket } from './token_bucket';

export interface FlowOptions {
  /** Smallest window (default 16). */
  minWindow?: number;
  /** Least the window grows by in one interval (default 16). */
  windowStep?: number;
  /** Processing latency above which the consumer counts as falling behind (default 100 ms). */
  latencyThresholdMs?: number;
  /** How often the consumer reports and the broker recomputes (default 1000 ms). */
  feedbackIntervalMs?: number;
  /** Lowest token rate, msgs/s (default 1). */
  minRatePerSec?: number;
}

export const FLOW_DEFAULTS = {
  minWindow: 16,
  windowStep: 16,
  latencyThresholdMs: 100,
  feedbackIntervalMs: 1000,
  minRatePerSec: 1,
  /** On congestion the rate is set this much above what the consumer processed. */
  rateHeadroom: 1.25,
  /** Acks below this share of deliveries, with the window full, count as lagging. */
  ackLagShare: 0.5,
  /** The rate doubles only while the consumer processes at least this share of it. */
  tokensUsedShare: 0.8,
} as const;

/** The window's ceiling is the consumer's maxUnacked: one setting, not two. */
export type ResolvedFlowOptions = Required<FlowOptions> & { maxWindow: number };

export function resolveFlowOptions(o: FlowOptions | undefined, maxUnacked: number): ResolvedFlowOptions {
  if (o !== undefined && (o === null || typeof o !== 'object')) throw invalid(`flow must be an object, got ${shown(o)}`);
  const int = (v: unknown, name: string, min: number, max: number, dflt: number): number => {
    if (v === undefined) return dflt;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw invalid(`flow.${name} must be an integer between ${min} and ${max}, got ${shown(v)}`);
    return v;
  };
  const maxWindow = maxUnacked;
  const minWindow = int(o?.minWindow, 'minWindow', 1, 1_000_000, Math.min(FLOW_DEFAULTS.minWindow, maxWindow));
  if (minWindow > maxWindow) throw invalid(`flow.minWindow (${minWindow}) is larger than maxUnacked (${maxWindow})`);
  return {
    minWindow,
    maxWindow,
    windowStep: int(o?.windowStep, 'windowStep', 1, 1_000_000, FLOW_DEFAULTS.windowStep),
    latencyThresholdMs: int(o?.latencyThresholdMs, 'latencyThresholdMs', 1, 3_600_000, FLOW_DEFAULTS.latencyThresholdMs),
    feedbackIntervalMs: int(o?.feedbackIntervalMs, 'feedbackIntervalMs', 50, 60_000, FLOW_DEFAULTS.feedbackIntervalMs),
    minRatePerSec: int(o?.minRatePerSec, 'minRatePerSec', 1, 1_000_000_000, FLOW_DEFAULTS.minRatePerSec),
  };
}

/** What the consumer says about itself on the Subscribe stream (or in-process). */
export interface ConsumerFeedback {
  processedPerSec: number;
  latencyMs: number;
}

export interface FlowSnapshot {
  window: number;
  /** msgs/s; Infinity when deliveries are not paced. */
  tokenRate: number;
  /** the consumer's own report, or the broker's measurement when it sends none */
  reportedRate: number;
  latencyMs: number;
  /** where reportedRate and latencyMs came from */
  source: 'consumer' | 'broker';
  congested: boolean;
}

/** Owned by the JS thread, like the group member it belongs to. */
export class FlowController {
  window: number;
  readonly bucket: TokenBucket;
  private feedback: ConsumerFeedback | null = null;
  private feedbackAt = 0;
  private lastRun: number;
  // Broker-side measurements over the current interval.
  private delivered = 0;
  private acked = 0;
  private ackLatencySum = 0;
  private last: FlowSnapshot;

  constructor(
    readonly opts: ResolvedFlowOptions,
    now = performance.now(),
  ) {
    // Start open: a consumer that keeps up never notices flow control; one that does
    // not is brought down within a few intervals (the window halves each time).
    this.window = opts.maxWindow;
    this.bucket = new TokenBucket(Infinity, opts.maxWindow, now);
    this.lastRun = now;
    this.last = { window: this.window, tokenRate: Infinity, reportedRate: 0, latencyMs: 0, source: 'broker', congested: false };
  }

  get snapshot(): FlowSnapshot {
    return { ...this.last, window: this.window, tokenRate: this.bucket.ratePerSec };
  }

  onDelivered(n: number): void {
    this.delivered += n;
  }

  /** n messages acked, `ageMs` after they were delivered. */
  onAcked(n: number, ageMs: number): void {
    this.acked += n;
    this.ackLatencySum += n * ageMs;
  }

  report(f: ConsumerFeedback, now = performance.now()): void {
    if (!Number.isFinite(f.processedPerSec) || f.processedPerSec < 0 || !Number.isFinite(f.latencyMs) || f.latencyMs < 0)
      throw invalid('feedback needs a finite, non-negative processed rate and latency');
    this.feedback = f;
    this.feedbackAt = now;
  }

  /** Recomputes window and rate once an interval has passed; true when it did. */
  tick(unacked: number, now = performance.now()): boolean {
    const dt = now - this.lastRun;
    if (dt < this.opts.feedbackIntervalMs) return false;
    this.lastRun = now;
    const o = this.opts;
    // The consumer's own numbers when fresh (it sees its queueing and handling);
    // otherwise what the broker measured: acks per second and delivery → ack time.
    const fresh = this.feedback !== null && now - this.feedbackAt <= 2 * o.feedbackIntervalMs;
    const rate = fresh ? this.feedback!.processedPerSec : (this.acked * 1000) / dt;
    const latency = fresh ? this.feedback!.latencyMs : this.acked > 0 ? this.ackLatencySum / this.acked : 0;
    const acksLag = this.delivered > 0 && this.acked < this.delivered * FLOW_DEFAULTS.ackLagShare && unacked >= this.window * 0.9;
    const congested = latency > o.latencyThresholdMs || acksLag;
    let tokenRate = this.bucket.ratePerSec;
    if (congested) {
      // Halve, but never below what the consumer itself gets through in half the
      // latency threshold: a busy consumer (its latency up from its own load, not
      // from our queue) must not be starved into a window far below its rate.
      const keep = Math.ceil((rate * o.latencyThresholdMs) / 2000);
      this.window = Math.min(this.window, Math.max(o.minWindow, Math.floor(this.window / 2), keep));
      // At most halved per interval: a consumer deep in one large delivery can report
      // ~0 processed for an interval without being stuck.
      const floor = tokenRate === Infinity ? 0 : tokenRate / 2;
      tokenRate = Math.max(o.minRatePerSec, rate * FLOW_DEFAULTS.rateHeadroom, floor);
    } else if (latency <= o.latencyThresholdMs / 2) {
      this.window = Math.min(o.maxWindow, this.window + Math.max(o.windowStep, Math.floor(this.window / 2)));
      if (tokenRate !== Infinity) {
        // Pacing ends once the window is fully open again; before that the rate
        // doubles only while the consumer uses most of its tokens (they limit it).
        if (this.window >= o.maxWindow) tokenRate = Infinity;
        else if (rate >= FLOW_DEFAULTS.tokensUsedShare * tokenRate) tokenRate *= 2;
      }
    }
    this.bucket.setRate(tokenRate, Math.max(1, this.window), now);
    this.last = { window: this.window, tokenRate, reportedRate: rate, latencyMs: latency, source: fresh ? 'consumer' : 'broker', congested };
    this.delivered = 0;
    this.acked = 0;
    this.ackLatencySum = 0;
    return true;
  }
}

/**
 * The consumer's side of the feedback: counts what its iterator handed to the app
 * and how long a delivery waited from arrival until the app asked for more. Used
 * by the embedded consumer and the remote client alike.
 */
export class FeedbackMeter {
  private processed = 0;
  private latencySum = 0;
  private since = performance.now();

  /** n messages that arrived at `arrivedAt` were handled by the app by now. */
  handled(n: number, arrivedAt: number, now = performance.now()): void {
    this.processed += n;
    this.latencySum += n * (now - arrivedAt);
  }

  /**
   * The report for the interval since the last call. `oldestWaitingSince`: when the
   * oldest delivery still waiting for the app arrived — a consumer that handles
   * nothing in an interval must not look idle when it is stuck.
   */
  take(oldestWaitingSince?: number, now = performance.now()): ConsumerFeedback {
    const dt = Math.max(1, now - this.since);
    const avg = this.processed > 0 ? this.latencySum / this.processed : 0;
    const f = { processedPerSec: (this.processed * 1000) / dt, latencyMs: Math.max(avg, oldestWaitingSince === undefined ? 0 : now - oldestWaitingSince) };
    this.processed = 0;
    this.latencySum = 0;
    this.since = now;
    return f;
  }
}
