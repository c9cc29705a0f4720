/**
 * Latency recording in HdrHistogram (hdr-histogram-js): values in microseconds,
 * 1 µs to 10 min at 3 significant digits; summaries and distributions in ms.
 */
import * as hdr from 'hdr-histogram-js';

export type Histogram = hdr.Histogram;

export interface LatencySummary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
}

const HIGHEST_US = 600_000_000;

export function newHistogram(): Histogram {
  return hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: HIGHEST_US, numberOfSignificantValueDigits: 3 });
}

/** Records a latency given in ms (clamped to the trackable range). */
export function recordMs(h: Histogram, ms: number): void {
  const us = Math.round(ms * 1000);
  h.recordValue(us < 1 ? 1 : us > HIGHEST_US ? HIGHEST_US : us);
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

export function summarize(h: Histogram): LatencySummary {
  if (h.totalCount === 0) return { count: 0, p50: 0, p90: 0, p99: 0, p999: 0, max: 0, mean: 0 };
  // A percentile is reported as its bucket's highest equivalent value: never above the max.
  const ms = (p: number) => round3(Math.min(h.getValueAtPercentile(p), h.maxValue) / 1000);
  return { count: h.totalCount, p50: ms(50), p90: ms(90), p99: ms(99), p999: ms(99.9), max: round3(h.maxValue / 1000), mean: round3(h.mean / 1000) };
}

/** Percentiles for the classic HdrHistogram percentile plot. */
export const DISTRIBUTION_PERCENTILES = [0, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 99.999, 100];

/** [percentile, ms] pairs, up to the resolution the count supports (100 always last). */
export function distribution(h: Histogram): Array<[number, number]> {
  if (h.totalCount === 0) return [];
  const out: Array<[number, number]> = [];
  for (const p of DISTRIBUTION_PERCENTILES) {
    // Beyond 1 - 1/count a percentile is just the max: stop there.
    if (p !== 100 && p > 0 && 100 - p < 100 / h.totalCount) continue;
    out.push([p, round3(Math.min(h.getValueAtPercentile(p), h.maxValue) / 1000)]);
  }
  return out;
}

/** Compact lossless form, for merging or re-analysis (HdrHistogram's compressed base64). */
export function encode(h: Histogram): string {
  return h.totalCount === 0 ? '' : hdr.encodeIntoCompressedBase64(h);
}
