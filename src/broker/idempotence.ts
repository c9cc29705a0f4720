/**
 * Idempotent producers: a producer id and a per-partition sequence number on each
 * batch let the broker recognise a retried batch (its ack was lost) and answer with
 * the original offsets instead of writing it twice. The last 64 batches of each
 * producer are remembered per partition: as many as the client's producer keeps in
 * flight by default, so after a lost connection every retried batch gets its offsets
 * back. (Kafka keeps 5 and caps an idempotent producer at 5 in flight.) An older
 * retry is still recognised and not written again, but its offsets are unknown
 * (base offset -1). Sequence numbers run modulo 2^31, as the client numbers them.
 * Bounded: at most `maxProducers` producer ids and `maxEntries` remembered batches
 * per partition, least recently used producers dropped first. The table lives in
 * memory: after a broker restart a producer's first batch is accepted as new.
 */
import { UringmqError } from '../errors';
import type { AppendResult } from './broker';

const KEEP_BATCHES = 64;
const SEQ_MOD = 2 ** 31;

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
  private entries = 0;
  constructor(
    private readonly label: string,
    private readonly maxProducers = 10_000,
    private readonly maxEntries = 65_536,
  ) {}

  check(producerId: number, baseSequence: number, count: number): IdempotenceVerdict {
    const entries = this.producers.get(producerId);
    // (A list emptied by failed appends knows no sequence: the next batch is accepted.)
    if (entries && entries.length > 0) {
      this.producers.delete(producerId);
      this.producers.set(producerId, entries);
      const same = entries.find((e) => e.baseSequence === baseSequence);
      if (same) {
        if (same.count !== count)
          throw new UringmqError('OUT_OF_ORDER_SEQUENCE', `producer ${producerId} reused sequence ${baseSequence} on ${this.label} for a batch of a different size`);
        return { kind: 'duplicate', result: same.result };
      }
      const last = entries[entries.length - 1]!;
      const expected = (last.baseSequence + last.count) % SEQ_MOD;
      // Serial-number comparison: up to 2^30 behind `expected` is an old batch, ahead is a gap.
      const ahead = (baseSequence - expected + SEQ_MOD) % SEQ_MOD;
      if (ahead >= SEQ_MOD / 2) return { kind: 'duplicate', result: null }; // older than we remember
      if (ahead > 0)
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
          if (this.producers.size >= this.maxProducers) this.dropLeastRecent();
          this.producers.set(producerId, (list = []));
        }
        const entry: Entry = { baseSequence, count, result };
        list.push(entry);
        this.entries++;
        if (list.length > KEEP_BATCHES) {
          list.shift();
          this.entries--;
        }
        while (this.entries > this.maxEntries && this.producers.size > 1) this.dropLeastRecent();
        // A failed append was not written: forget it so the retry is accepted.
        result.catch(() => {
          const l = this.producers.get(producerId);
          const i = l ? l.indexOf(entry) : -1;
          if (i >= 0) {
            l!.splice(i, 1);
            this.entries--;
          }
        });
      },
    };
  }

  private dropLeastRecent(): void {
    const [id, list] = this.producers.entries().next().value!;
    this.producers.delete(id);
    this.entries -= list.length;
  }
}
