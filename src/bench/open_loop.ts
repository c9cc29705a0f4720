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
import { Worker } from 'node:worker_threads';

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
   * Wake on each due time from a worker thread (Atomics.wait sleeps to the
   * microsecond) instead of Node's 1 ms timers, which make a message wait up to a
   * tick before it is sent: ~1 ms at p99 of latency measured from the schedule.
   * Costs a wake-up of the main thread per due message (a few % of a core at 10k/s).
   */
  precise?: boolean;
}

// Sleeps until each due time and posts its index; the main thread sends what is due.
// At most one wake-up is outstanding (flag[0]): at high rates the main thread is
// woken once per tick it can run, not once per message.
const TICKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { start, perMs, total, flag } = workerData;
const sleeper = new Int32Array(new SharedArrayBuffer(4));
for (let i = 0; i < total; ) {
  const now = performance.timeOrigin + performance.now();
  const due = start + i / perMs;
  if (due > now) { Atomics.wait(sleeper, 0, 0, due - now); continue; }
  i = Math.min(total, Math.floor((now - start) * perMs) + 1);
  if (Atomics.compareExchange(flag, 0, 0, 1) === 0) parentPort.postMessage(i);
}
`;

export interface OpenLoopResult {
  /** Messages due by `end`. */
  due: number;
  sent: number;
}

export function openLoop(o: OpenLoopOptions): Promise<OpenLoopResult> {
  if (o.precise) return preciseOpenLoop(o);
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

/** openLoop woken by a worker thread's microsecond sleeps (see `precise`). */
function preciseOpenLoop(o: OpenLoopOptions): Promise<OpenLoopResult> {
  const perMs = o.rate / 1000;
  const total = Math.max(0, Math.floor((o.end - o.start) * perMs));
  const canSend = o.canSend ?? (() => true);
  const stopped = o.stopped ?? (() => false);
  let sent = 0;
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const ticker = new Worker(TICKER, { eval: true, workerData: { start: performance.timeOrigin + o.start, perMs, total, flag } });
  return new Promise((resolve) => {
    let finished = false;
    let retry: NodeJS.Timeout | null = null;
    let endTimer: NodeJS.Timeout | null = null;
    const finish = (r: OpenLoopResult) => {
      if (finished) return;
      finished = true;
      if (retry) clearTimeout(retry);
      if (endTimer) clearTimeout(endTimer);
      void ticker.terminate();
      resolve(r);
    };
    const tick = () => {
      if (finished) return;
      Atomics.store(flag, 0, 0);
      const now = performance.now();
      if (stopped()) return finish({ due: Math.min(total, Math.floor((Math.min(now, o.end) - o.start) * perMs)), sent });
      const due = Math.min(Math.floor((Math.min(now, o.end) - o.start) * perMs) + (now >= o.start ? 1 : 0), total);
      for (; sent < due; sent++) {
        if (!canSend()) {
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
    ticker.on('message', tick);
    ticker.on('error', () => finish({ due: total, sent }));
    // The end of the schedule even if the last wake-up is lost.
    endTimer = setTimeout(() => tick(), Math.max(0, o.end - performance.now()) + 5);
    ticker.once('exit', () => {
      tick();
      if (!finished) finish({ due: total, sent });
    });
  });
}
