/** What bench/latency_parts.ts and its server child agree on: a marker, then the send time. */
export const MARK = Buffer.from('LATENCY-PARTS:');

/** CLOCK_MONOTONIC in ms (libuv's hrtime): the same clock in every process on the machine. */
export const monoMs = (): number => Number(process.hrtime.bigint()) / 1e6;
