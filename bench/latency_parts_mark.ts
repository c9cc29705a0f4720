/**
 * What bench/latency_parts.ts and its server child agree on: each marked record's
 * value starts with MARK, then its send time (f64, ms), then its sequence number
 * (u32). Both sides record times into Float64Arrays indexed by that number (TimeTable)
 * instead of maps or strings per message: at 10k msgs/s those were the largest
 * source of garbage in either process, and an ever-growing array of young strings
 * made the server's scavenges 2–3 ms instead of ~1 ms (each new element is a slot
 * the scavenger must visit).
 */
export const MARK = Buffer.from('LATENCY-PARTS:');
export const SENT_AT = MARK.length;
export const SEQ_AT = MARK.length + 8;
export const MARKED_BYTES = MARK.length + 12;

/** CLOCK_MONOTONIC in ms (libuv's hrtime): the same clock in every process on the machine. */
export const monoMs = (): number => Number(process.hrtime.bigint()) / 1e6;

/** Times by sequence number, NaN where none was recorded. Bounded: `capacity` messages. */
export class TimeTable {
  readonly times: Float64Array;
  constructor(readonly capacity: number) {
    this.times = new Float64Array(capacity).fill(NaN);
  }
  set(seq: number, t: number): void {
    if (seq < this.capacity) this.times[seq] = t;
  }
  get(seq: number): number {
    return seq < this.capacity ? this.times[seq]! : NaN;
  }
}
