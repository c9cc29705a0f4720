/**
 * A set of integer offsets stored as sorted, disjoint, non-adjacent half-open
 * ranges [from, to). Acks arrive as ranges and mostly extend the last one, so the
 * set stays a handful of ranges however many messages are acked.
 */
export class RangeSet {
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];

  get rangeCount(): number {
    return this.starts.length;
  }

  /** First range, or undefined. */
  first(): [number, number] | undefined {
    return this.starts.length ? [this.starts[0]!, this.ends[0]!] : undefined;
  }

  /** Index of the first range whose end is > x. */
  private lowerByEnd(x: number): number {
    let lo = 0;
    let hi = this.ends.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.ends[mid]! > x) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  has(x: number): boolean {
    const i = this.lowerByEnd(x);
    return i < this.starts.length && this.starts[i]! <= x;
  }

  /** How many members fall in [from, to). */
  countIn(from: number, to: number): number {
    let n = 0;
    for (let i = this.lowerByEnd(from); i < this.starts.length && this.starts[i]! < to; i++)
      n += Math.min(to, this.ends[i]!) - Math.max(from, this.starts[i]!);
    return n;
  }

  /** Members of [from, to) that are NOT in the set, as ranges. */
  gapsIn(from: number, to: number): Array<[number, number]> {
    const out: Array<[number, number]> = [];
    let cur = from;
    for (let i = this.lowerByEnd(from); i < this.starts.length && this.starts[i]! < to; i++) {
      if (this.starts[i]! > cur) out.push([cur, this.starts[i]!]);
      cur = Math.max(cur, this.ends[i]!);
    }
    if (cur < to) out.push([cur, to]);
    return out;
  }

  /** Adds [from, to); returns how many were not members before. */
  add(from: number, to: number): number {
    if (to <= from) return 0;
    const added = to - from - this.countIn(from, to);
    // ranges touching or overlapping [from, to] merge into one
    let i = this.lowerByEnd(from - 1);
    if (i < this.starts.length && this.ends[i]! < from) i++;
    let j = i;
    let s = from;
    let e = to;
    while (j < this.starts.length && this.starts[j]! <= to) {
      s = Math.min(s, this.starts[j]!);
      e = Math.max(e, this.ends[j]!);
      j++;
    }
    if (j - i === 1) {
      // The common case (an ack extending a range): no splice, no garbage.
      this.starts[i] = s;
      this.ends[i] = e;
    } else if (j === i && i === this.starts.length) {
      this.starts.push(s);
      this.ends.push(e);
    } else {
      this.starts.splice(i, j - i, s);
      this.ends.splice(i, j - i, e);
    }
    return added;
  }

  /** The ranges, in order. */
  ranges(): Array<[number, number]> {
    return this.starts.map((s, i) => [s, this.ends[i]!]);
  }

  /** Drops everything below x. */
  removeBelow(x: number): void {
    let k = 0;
    while (k < this.starts.length && this.ends[k]! <= x) k++;
    if (k) {
      this.starts.splice(0, k);
      this.ends.splice(0, k);
    }
    if (this.starts.length && this.starts[0]! < x) this.starts[0] = x;
  }

  clear(): void {
    this.starts.length = 0;
    this.ends.length = 0;
  }
}
