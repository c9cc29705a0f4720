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
}

export interface OpenLoopResult {
  /** Messages due by `end`. */
  due: number;
  sent: number;
}

export function openLoop(o: OpenLoopOptions): Promise<OpenLoopResult> {
  const perMs = o.rate / 1000;
  const total = Math.max(0, Math.floor((o.end - o.start) * perMs));
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
