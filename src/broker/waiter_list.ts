/**
 * Who waits for new data on a partition: added and removed once per wait (a tailing
 * consumer waits once per write cycle), woken all at once when data arrives.
 *
 * Why not a Set: see IdTable. A Set that gains and loses an entry per wait rebuilds
 * its table every few waits, and once the Set is old, each obsolete table keeps the
 * waiters it held (fresh closures, their promises and the frames awaiting them)
 * alive through young GCs. Here a removal overwrites its slot with the last waiter
 * and pops the end: nothing removed stays referenced.
 */
export interface Waiting {
  readonly wake: () => void;
  /** Its slot in the list; -1 once removed. */
  index: number;
}

export class WaiterList {
  private readonly items: Waiting[] = [];

  get size(): number {
    return this.items.length;
  }

  add(wake: () => void): Waiting {
    const w: Waiting = { wake, index: this.items.length };
    this.items.push(w);
    return w;
  }

  /** Removes `w` (a no-op when it is gone already), in O(1). */
  remove(w: Waiting): void {
    const i = w.index;
    if (i < 0 || this.items[i] !== w) return;
    const last = this.items.pop()!;
    if (last !== w) {
      this.items[i] = last;
      last.index = i;
    }
    w.index = -1;
  }

  /** Wakes every waiter present now (a woken one usually removes itself meanwhile). */
  wakeAll(): void {
    const n = this.items.length;
    if (n === 1) return this.items[0]!.wake();
    for (const w of this.items.slice(0, n)) w.wake();
  }
}
