/**
 * bench:grpc's latency floors: open-loop round trips through an echo (a bare stream,
 * a durable echo, TCP), and the ms summaries its table prints.
 */
import * as hdr from 'hdr-histogram-js';
import { openLoop } from '../src/bench/open_loop';

/** Latency in ms; NaN without a sample (printed n/a: 0.00 read as a measured zero). */
export interface Lat {
  p50: number;
  p99: number;
  max: number;
}

/** Latencies in µs, 1 µs to 60 s, 3 significant digits. */
export function histogram(): hdr.Histogram {
  return hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: 3 });
}

export function lat(h: hdr.Histogram): Lat {
  if (h.totalCount === 0) return { p50: NaN, p99: NaN, max: NaN };
  // hdr-histogram gives a bucket's upper bound: a percentile may read above the max by its precision.
  const max = h.maxValue / 1000;
  return { p50: Math.min(max, h.getValueAtPercentile(50) / 1000), p99: Math.min(max, h.getValueAtPercentile(99) / 1000), max };
}

/** "p50 / p99 / max", and how many round trips were never answered, if any. */
export function latCell(l: Lat & { unanswered?: number; sent?: number }): string {
  const ms = (v: number) => (Number.isNaN(v) ? 'n/a' : v.toFixed(2));
  const cell = `${ms(l.p50)} / ${ms(l.p99)} / ${ms(l.max)}`;
  return l.unanswered ? `${cell} (${l.unanswered} of ${l.sent} unanswered, counted as late as the wait)` : cell;
}

/** A floor's round trips: those answered, and those not answered once the wait ended, counted in as late as that wait. */
export interface RoundTripLat extends Lat {
  /** Sent after the warm-up. */
  sent: number;
  unanswered: number;
}

/** One latency floor's transport: sends a frame stamped with its scheduled time, whose echo is reported to `answered`. */
export interface Echo {
  send(scheduled: number): void;
  close(): void;
  /** The first error the transport reported, if any (reported after the schedule, not as an unhandled event). */
  failure(): Error | null;
}

/** What a round trip's window is told: each send, by its scheduled time. */
export interface SendWindow {
  sent(scheduled: number): void;
}

export interface RoundTripOptions<W extends SendWindow> {
  /** Named in a transport's failure. */
  what: string;
  /** msgs/s */
  rate: number;
  /** The measured window, after the warm-up. */
  seconds: number;
  warmupMs: number;
  /** openLoop's precise ticker (a native timerfd) or Node's 1 ms timers. */
  precise: boolean;
  /** How long answers are waited for after the schedule's end (default 200 ms). */
  drainMs?: number;
  /** Made once the schedule's times are known, told of each send (bench:grpc's CPU window). */
  window?: (warmEnd: number, end: number) => W;
  open: (answered: (scheduled: number) => void) => Echo | Promise<Echo>;
}

/**
 * Open-loop round trips through `echo` (the warm-up discarded). An answer later than
 * the wait after the schedule, or none, is not left out of the percentiles (that read
 * a floor with its worst round trips gone as a good one): each counts as late as the
 * time from the schedule's end to the end of the wait, a lower bound, as bench:grpc's
 * end-to-end case counts a message never received.
 */
export async function roundTrips<W extends SendWindow = SendWindow>(o: RoundTripOptions<W>): Promise<{ lat: RoundTripLat; window: W | null }> {
  const h = histogram();
  let warmEnd = Infinity;
  let sent = 0;
  let answered = 0;
  let waited = false;
  const echo = await o.open((scheduled) => {
    if (waited || scheduled < warmEnd) return;
    h.recordValue(Math.max(1, Math.round((performance.now() - scheduled) * 1000)));
    answered++;
  });
  const start = performance.now() + 100;
  warmEnd = start + o.warmupMs;
  const end = warmEnd + o.seconds * 1000;
  const window = o.window ? o.window(warmEnd, end) : null;
  await openLoop({
    rate: o.rate,
    start,
    end,
    precise: o.precise,
    send: (scheduled) => {
      echo.send(scheduled);
      if (scheduled >= warmEnd) sent++;
      window?.sent(scheduled);
    },
  });
  await new Promise((r) => setTimeout(r, o.drainMs ?? 200));
  waited = true;
  const unanswered = Math.max(0, sent - answered);
  if (unanswered > 0) h.recordValueWithCount(Math.max(1, Math.round((performance.now() - end) * 1000)), unanswered);
  echo.close();
  const failure = echo.failure();
  if (failure) throw new Error(`${o.what} round trip: ${failure.message}`);
  return { lat: { ...lat(h), sent, unanswered }, window };
}
