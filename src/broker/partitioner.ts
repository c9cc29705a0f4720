// The module's own binding: in Node 20 the global `Buffer` is an accessor, and a getter
// call per record showed in consumer profiles.
import { Buffer } from 'node:buffer';
import { invalid, shown } from '../errors';

/**
 * Key → partition. murmur2 as Kafka's default partitioner uses it, so the same key
 * lands on the same partition number in uringmq and in a Kafka client.
 */
export function murmur2(data: Buffer): number {
  const length = data.length;
  const seed = 0x9747b28c;
  const m = 0x5bd1e995;
  const r = 24;
  let h = seed ^ length;
  const length4 = length >> 2;
  for (let i = 0; i < length4; i++) {
    const i4 = i << 2;
    let k = data[i4]! | (data[i4 + 1]! << 8) | (data[i4 + 2]! << 16) | (data[i4 + 3]! << 24);
    k = Math.imul(k, m);
    k ^= k >>> r;
    k = Math.imul(k, m);
    h = Math.imul(h, m);
    h ^= k;
  }
  const rest = length & 3;
  const base = length & ~3;
  if (rest === 3) h ^= data[base + 2]! << 16;
  if (rest >= 2) h ^= data[base + 1]! << 8;
  if (rest >= 1) {
    h ^= data[base]!;
    h = Math.imul(h, m);
  }
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return h | 0;
}

export function partitionForKey(key: Buffer | string, partitions: number): number {
  const b = typeof key === 'string' ? Buffer.from(key) : key;
  return (murmur2(b) & 0x7fffffff) % partitions;
}

/**
 * Partition choice shared by the embedded and remote producers: an explicit
 * partition, else the key's murmur2 hash, else — for keyless records — stick to one
 * partition until its batch is cut, so concurrent sends share batches (Kafka's sticky
 * partitioner). `next(topic, n)` picks the partition to stick to next.
 */
export class StickyPartitioner {
  private readonly sticky = new Map<string, number>();
  constructor(private readonly next: (topic: string, n: number) => number) {}

  choose(topic: string, n: number, key: Buffer | string | null | undefined, explicit: number | undefined): number {
    if (explicit !== undefined) {
      if (!Number.isInteger(explicit) || explicit < 0 || explicit >= n)
        throw invalid(`partition ${shown(explicit)} does not exist in topic ${topic} (${n} partitions)`);
      return explicit;
    }
    if (key !== undefined && key !== null) return partitionForKey(key, n);
    let p = this.sticky.get(topic);
    if (p === undefined || p >= n) {
      p = this.next(topic, n);
      this.sticky.set(topic, p);
    }
    return p;
  }

  /** A batch for (topic, partition) was cut: keyless records move on. */
  batchCut(topic: string, partition: number): void {
    if (this.sticky.get(topic) === partition) this.sticky.delete(topic);
  }

  /** The producer forgot the topic: its sticky partition goes too. */
  forget(topic: string): void {
    this.sticky.delete(topic);
  }
}
