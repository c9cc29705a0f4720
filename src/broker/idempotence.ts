/**
 * Idempotent producers: a producer id and a per-partition sequence number on each
 * batch let the broker recognise a retried batch (its ack was lost) and answer with
 * the original offsets instead of writing it twice. Like Kafka, the last 5 batches
 * of each producer are remembered per partition. Bounded: at most `maxProducers`
 * producer ids per partition, least recently used dropped first. The table lives in
 * memory: after a broker restart a producer's first batch is accepted as new.
 */
import { UringmqError } from '../errors';
import type { AppendResult } from './broker';

const KEEP_BATCHES = 5;

interface Entry {
  baseSequence: number;
  count: number;
  result: Promise<AppendResult>;
}

export type IdempotenceVerdict =
  | { kind: 'new'; commit: (r: Promise<AppendResult>) => void }
  | { kind: 'duplicate'; result: Promise<AppendResult> | null };

export class IdempotenceTable {
  // Map iteration order is insertion order: re-inserting on use makes it an LRU.
  private readonly producers = new Map<number, Entry[]>();
  constructor(private readonly label: string, private readonly maxProducers = 10_000) {}

  check(producerId: number, baseSequence: number, count: number): IdempotenceVerdict {
    const entries = this.producers.get(producerId);
    if (entries) {
      this.producers.delete(producerId);
      this.producers.set(producerId, entries);
      const same = entries.find((e) => e.baseSequence === baseSequence);
      if (same) {
        if (same.count !== count)
          throw new UringmqError('OUT_OF_ORDER_SEQUENCE', `producer ${producerId} reused sequence ${baseSequence} on ${this.label} for a batch of a different size`);
        return { kind: 'duplicate', result: same.result };
      }
      const last = entries[entries.length - 1]!;
      const expected = last.baseSequence + last.count;
      if (baseSequence < expected) return { kind: 'duplicate', result: null }; // older than we remember
      if (baseSequence > expected)
        throw new UringmqError(
          'OUT_OF_ORDER_SEQUENCE',
          `producer ${producerId} sent sequence ${baseSequence} to ${this.label}, expected ${expected}: a batch in between is missing`,
        );
    }
    return {
      kind: 'new',
      commit: (result) => {
        let list = this.producers.get(producerId);
        if (!list) {
          if (this.producers.size >= this.maxProducers) this.producers.delete(this.producers.keys().next().value!);
          this.producers.set(producerId, (list = []));
        }
        const entry: Entry = { baseSequence, count, result };
        list.push(entry);
        if (list.length > KEEP_BATCHES) list.shift();
        // A failed append was not written: forget it so the retry is accepted.
        result.catch(() => {
          const l = this.producers.get(producerId);
          const i = l ? l.indexOf(entry) : -1;
          if (i >= 0) l!.splice(i, 1);
        });
      },
    };
  }
}
