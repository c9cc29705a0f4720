/**
 * Reuses the large buffers batches are encoded into. A fresh 1 MiB Buffer per batch
 * costs a page fault per 4 KiB on first touch (15% of the producer's time in perf);
 * a buffer returned after its append completed has its pages mapped already.
 * Bounded: at most `maxBytes` held, per power-of-two size class from 64 KiB up.
 */
const MIN_POOLED = 64 * 1024;

export class BufferPool {
  private readonly free = new Map<number, ArrayBuffer[]>();
  private readonly ours = new WeakSet<ArrayBuffer>();
  private held = 0;

  constructor(private readonly maxBytes = 64 * 1024 * 1024) {}

  /** A Buffer of exactly `size` bytes (contents undefined). */
  acquire(size: number): Buffer {
    if (size < MIN_POOLED) return Buffer.allocUnsafe(size);
    const cls = 2 ** Math.ceil(Math.log2(size));
    const list = this.free.get(cls);
    let ab = list?.pop();
    if (ab) this.held -= cls;
    else {
      ab = new ArrayBuffer(cls);
      this.ours.add(ab);
    }
    return Buffer.from(ab, 0, size);
  }

  /** Gives back a Buffer from acquire(); the caller must not use it afterwards. */
  release(buf: Buffer): void {
    const ab = buf.buffer;
    if (!(ab instanceof ArrayBuffer) || !this.ours.has(ab) || buf.byteOffset !== 0) return;
    const cls = ab.byteLength;
    if (this.held + cls > this.maxBytes) return;
    let list = this.free.get(cls);
    if (!list) this.free.set(cls, (list = []));
    list.push(ab);
    this.held += cls;
  }

  get heldBytes(): number {
    return this.held;
  }
}
