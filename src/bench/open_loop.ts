/**
 * Open-loop sending: message i is due at start + i/rate whatever happened to the
 * messages before it, so a stall in the broker shows up as latency (measured from
 * the scheduled time) instead of as fewer sends — no coordinated omission.
 *
 * Each tick sends everything due, stamped with its scheduled time, then sleeps until
 * the next is due rather than spinning: on a 2-core machine a spinning sender steals
 * the CPU the broker and consumers need. Timer slack (~1 ms) counts as latency from
 * the schedule; latency from the actual send excludes it.
 */
import { createTicker } from '../native';

export interface OpenLoopOptions {
  /** msgs/s */
  rate: number;
  /** performance.now() times */
  start: number;
  end: number;
  send: (scheduled: number) => void;
  /** False while too many messages are outstanding: due messages wait (and keep their scheduled time). */
  canSend?: () => boolean;
  /** True: stop now (circuit breaker, interrupt). */
  stopped?: () => boolean;
  /**
   * Wake on each due time (a native timerfd, to the microsecond) instead of Node's
   * 1 ms timers, which make a message wait up to a tick before it is sent: ~1 ms at
   * p99 of latency measured from the schedule. Costs a wake-up of the event loop per
   * due message (the loop polls the timerfd itself: no thread), at most one per 50 µs.
   */
  precise?: boolean;
}

export interface OpenLoopResult {
  /** Messages due by `end`. */
  due: number;
  sent: number;
}

/**
 * Messages due in [start, end). `end - start` can come out a hair under the span it
 * was made from (start + 300 - start is 299.99999999997 for some starts), which
 * floor() would turn into one message fewer: the tolerance is far below one message
 * and far above that rounding.
 */
function scheduledCount(start: number, end: number, perMs: number): number {
  return Math.max(0, Math.floor((end - start) * perMs + 1e-6));
}

export function openLoop(o: OpenLoopOptions): Promise<OpenLoopResult> {
  if (o.precise) return preciseOpenLoop(o);
  const perMs = o.rate / 1000;
  const total = scheduledCount(o.start, o.end, perMs);
  const canSend = o.canSend ?? (() => true);
  const stopped = o.stopped ?? (() => false);
  let sent = 0;
  return new Promise((resolve) => {
    const tick = () => {
      const now = performance.now();
      if (stopped()) return resolve({ due: Math.min(total, Math.floor((Math.min(now, o.end) - o.start) * perMs)), sent });
      const due = Math.min(Math.floor((Math.min(now, o.end) - o.start) * perMs) + (now >= o.start ? 1 : 0), total);
      let blocked = false;
      for (; sent < due; sent++) {
        if (!canSend()) {
          blocked = true;
          break;
        }
        o.send(o.start + sent / perMs);
      }
      if (now >= o.end) return resolve({ due: total, sent });
      const wait = blocked ? 1 : Math.max(0, o.start + (sent + 1) / perMs - performance.now() - 0.5);
      setTimeout(tick, Math.min(wait, Math.max(0, o.end - now)));
    };
    const first = o.start - performance.now();
    if (first > 0) setTimeout(tick, first);
    else tick();
  });
}

/** Precise ticks no closer than this: past 20k msgs/s each tick sends several. */
const MIN_TICK_NS = 50_000;

/** openLoop woken by a native timerfd ticker (see `precise`). */
function preciseOpenLoop(o: OpenLoopOptions): Promise<OpenLoopResult> {
  const perMs = o.rate / 1000;
  const total = scheduledCount(o.start, o.end, perMs);
  const canSend = o.canSend ?? (() => true);
  const stopped = o.stopped ?? (() => false);
  let sent = 0;
  return new Promise((resolve) => {
    let finished = false;
    let retry: NodeJS.Timeout | null = null;
    let endTimer: NodeJS.Timeout | null = null;
    const finish = (r: OpenLoopResult) => {
      if (finished) return;
      finished = true;
      if (retry) clearTimeout(retry);
      if (endTimer) clearTimeout(endTimer);
      ticker.stop();
      resolve(r);
    };
    const tick = () => {
      if (finished) return;
      const now = performance.now();
      if (stopped()) return finish({ due: Math.min(total, Math.floor((Math.min(now, o.end) - o.start) * perMs)), sent });
      const due = Math.min(Math.floor((Math.min(now, o.end) - o.start) * perMs) + (now >= o.start ? 1 : 0), total);
      for (; sent < due; sent++) {
        if (!canSend()) {
          // Held back past the end: the step is over, and what is left is not sent
          // (retrying on would run the step on, unsampled, until the target let it go).
          if (now >= o.end) return finish({ due: total, sent });
          retry ??= setTimeout(() => {
            retry = null;
            tick();
          }, 1);
          return;
        }
        o.send(o.start + sent / perMs);
      }
      if (sent >= total || now >= o.end) finish({ due: total, sent });
    };
    // A ticker error (the timerfd failed) ends the schedule where it stands.
    const ticker = createTicker((err) => (err ? finish({ due: Math.min(total, Math.floor((performance.now() - o.start) * perMs)), sent }) : tick()));
    const firstNs = Number(process.hrtime.bigint()) + (o.start - performance.now()) * 1e6; // both clocks are CLOCK_MONOTONIC
    ticker.start(Math.max(1, firstNs), Math.max(MIN_TICK_NS, 1e9 / o.rate));
    // The end of the schedule even if a tick is late.
    endTimer = setTimeout(() => tick(), Math.max(0, o.end - performance.now()) + 5);
  });
}
