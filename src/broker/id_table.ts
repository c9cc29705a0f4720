/**
 * Values keyed by increasing integer ids (an append's request id, a publish request's
 * sequence): set, get and delete in O(1) without allocating, iteration in id order.
 *
 * Why not a Map: the hot paths add and remove one entry per request, and V8's Map
 * then rebuilds its table every few operations (deleted entries are only reclaimed by
 * a rehash). Once a Map has lived long enough for its table to reach the old
 * generation, every rebuilt table is allocated there too, and each obsolete table
 * keeps pointing at the entries it held and at its successor. Young-generation GCs
 * treat those pointers as live, so every request that happened to be in flight at a
 * rebuild — its promise, closures and buffers — is copied and promoted, and stays
 * until the next full GC. Measured on the gRPC server at 10k msgs/s (bench:grpc's
 * end-to-end case, `--trace-gc-nvp`): ~0.3–0.9 MB promoted per scavenge and 2–5 ms
 * pauses with the Map, ~20 KB surviving and under 1 ms without it. A ring of slots
 * indexed by id is written in place, and a cleared slot holds nothing.
 *
 * Ids are non-negative integers, set in any order; capacity covers the span from the
 * lowest live id to the highest, so it is bounded by what is in flight (ids handed
 * out in increasing order, as both users do), and shrinks back once the table empties.
 */
export class IdTable<T> {
  private slots: Array<T | undefined>;
  private mask: number;
  /** Every live id is in [base, end). */
  private base = 0;
  private end = 0;
  private count = 0;

  constructor(private readonly minCapacity = 16) {
    if (!Number.isInteger(minCapacity) || minCapacity < 1 || (minCapacity & (minCapacity - 1)) !== 0) throw new RangeError('IdTable capacity must be a power of two');
    this.slots = new Array<T | undefined>(minCapacity).fill(undefined);
    this.mask = minCapacity - 1;
  }

  get size(): number {
    return this.count;
  }

  get(id: number): T | undefined {
    return id >= this.base && id < this.end && Number.isInteger(id) ? this.slots[id & this.mask] : undefined;
  }

  /** Sets `id` to `value` (ids are non-negative integers; the span of live ids sets the capacity). */
  set(id: number, value: T): void {
    if (value === undefined) throw new TypeError('IdTable values cannot be undefined');
    if (!Number.isSafeInteger(id) || id < 0) throw new RangeError(`IdTable ids are non-negative integers, got ${id}`);
    if (this.count === 0) {
      this.base = id;
      this.end = id + 1;
    } else {
      const base = Math.min(this.base, id);
      const end = Math.max(this.end, id + 1);
      if (end - base > this.slots.length) this.grow(end - base);
      this.base = base;
      this.end = end;
    }
    const i = id & this.mask; // id mod capacity: ToInt32 keeps the low bits of a safe integer
    if (this.slots[i] === undefined) this.count++;
    this.slots[i] = value;
  }

  /** Removes `id`; true when it was there. */
  delete(id: number): boolean {
    if (id < this.base || id >= this.end || !Number.isInteger(id)) return false;
    const i = id & this.mask;
    if (this.slots[i] === undefined) return false;
    this.slots[i] = undefined;
    this.count--;
    if (this.count === 0) {
      this.base = this.end;
      if (this.slots.length > this.minCapacity * 64) this.reset();
    } else {
      // Keep [base, end) tight around the live ids, so capacity follows what is in flight.
      while (this.slots[this.base & this.mask] === undefined) this.base++;
      while (this.slots[(this.end - 1) & this.mask] === undefined) this.end--;
    }
    return true;
  }

  /** Values in id order. */
  *values(): IterableIterator<T> {
    for (let id = this.base; id < this.end; id++) {
      const v = this.slots[id & this.mask];
      if (v !== undefined) yield v;
    }
  }

  clear(): void {
    this.reset();
    this.base = this.end;
  }

  /** Room for `span` consecutive ids, the live ones (in [base, end)) moved to their new slots. */
  private grow(span: number): void {
    let cap = this.slots.length;
    while (cap < span) cap *= 2;
    const next = new Array<T | undefined>(cap).fill(undefined);
    const mask = cap - 1;
    for (let id = this.base; id < this.end; id++) {
      const v = this.slots[id & this.mask];
      if (v !== undefined) next[id & mask] = v;
    }
    this.slots = next;
    this.mask = mask;
  }

  private reset(): void {
    this.slots = new Array<T | undefined>(this.minCapacity).fill(undefined);
    this.mask = this.minCapacity - 1;
    this.count = 0;
  }
}

/**
 * Promises not yet settled, by the order they began: what a producer's flush() waits
 * for. An IdTable under a counter, for the same reason as above (one comes and goes
 * per batch sent).
 */
export class PendingPromises {
  private readonly table = new IdTable<Promise<unknown>>();
  private next = 0;

  get size(): number {
    return this.table.size;
  }

  /** Holds `p` until it settles, whichever way. */
  track(p: Promise<unknown>): void {
    const id = this.next++;
    const forget = (): unknown => this.table.delete(id);
    this.table.set(id, p.then(forget, forget));
  }

  /** Resolves once every promise tracked, including those tracked meanwhile, has settled. */
  async settled(): Promise<void> {
    while (this.table.size > 0) await Promise.allSettled([...this.table.values()]);
  }
}
