/**
 * An offset-based reader that follows one partition or all partitions of a topic:
 * `for await (const msg of broker.consumer({ topic, from: 'earliest' }))`. It reads
 * whole batches from the log (tail cache or file) and waits for new data at the end.
 * Consumer groups with acks come with the gRPC layer; this iterator is the base.
 */
import { UringmqError, invalid } from '../errors';
import type { Broker, Message, PartitionState } from './broker';
import { toMessages } from './broker';
import { checkFrom, positiveInt } from './validate';
import { closesOnEarlyReturn } from './group_consumer';

export interface ConsumerOptions {
  topic: string;
  /** One partition; all partitions when omitted. */
  partition?: number;
  /** Where to start (default 'latest'). An offset applies to every partition read. */
  from?: 'earliest' | 'latest' | { offset: number };
  /** Bytes fetched per read (default 1 MiB; at least one whole batch is returned). */
  maxBytes?: number;
}

export class Consumer implements AsyncIterable<Message> {
  private readonly parts: PartitionState[];
  private readonly positions: number[];
  private readonly maxBytes: number;
  private stopped = false;
  private started = false;
  /** Ends the wait for new data under way, if any. */
  private stopWaiting: (() => void) | null = null;

  /** @internal use broker.consumer() */
  constructor(private readonly broker: Broker, opts: ConsumerOptions) {
    if (opts === null || typeof opts !== 'object') throw invalid('consumer options must be an object');
    opts = { ...opts }; // one read of each option, so what is checked is what is used
    const t = broker.topicState(opts.topic);
    this.parts = opts.partition === undefined ? [...t.partitions] : [broker.partitionState(opts.topic, opts.partition)];
    this.maxBytes = opts.maxBytes === undefined ? 1 << 20 : positiveInt(opts.maxBytes, 'maxBytes', 1 << 30);
    const from = checkFrom(opts.from);
    this.positions = this.parts.map((ps) => {
      if (typeof from === 'object') return from.offset;
      const info = broker.partitionInfo(ps);
      return from === 'earliest' ? info.startOffset : info.endOffset;
    });
  }

  /** The next offset this consumer will read, per partition index. */
  position(partition: number): number | undefined {
    const i = this.parts.findIndex((ps) => ps.index === partition);
    return i < 0 ? undefined : this.positions[i];
  }

  /** Ends the iteration (also ended by breaking out of for-await or broker.close()). */
  close(): void {
    this.stopped = true;
    this.stopWaiting?.();
  }

  [Symbol.asyncIterator](): AsyncIterator<Message> {
    if (this.started) throw invalid('a consumer can be iterated once');
    this.started = true;
    // return() or throw() while a next() waits for data was queued behind it, which
    // waited for the next message (on an idle topic, for ever): the close ends the wait.
    return closesOnEarlyReturn(this.run(), async () => this.close());
  }

  private async *run(): AsyncGenerator<Message> {
    const broker = this.broker;
    let next = 0;
    while (!this.stopped && !broker.closed) {
      let progressed = false;
      for (let k = 0; k < this.parts.length && !this.stopped; k++) {
        const i = (next + k) % this.parts.length;
        const ps = this.parts[i]!;
        // Closed while the app held the last message (a `yield` above): the iteration
        // ends, as the loop's condition ends it, rather than fail on the next partition.
        if (broker.closed) return;
        if (ps.topic.deleted) throw new UringmqError('TOPIC_NOT_FOUND', `topic ${ps.topic.name} was deleted`);
        const info = broker.partitionOffsets(ps);
        let pos = this.positions[i]!;
        if (pos < info.startOffset) pos = info.startOffset; // retention removed what we had not read yet
        if (pos >= info.endOffset) continue;
        let raw: Buffer;
        try {
          raw = await broker.readRaw(ps, pos, this.maxBytes);
        } catch (e) {
          if (broker.closed) return;
          // Retention removed `pos` between the offsets read above and the read (which
          // waited in the thread pool): go on from the new start, as documented.
          if (e instanceof UringmqError && e.code === 'OFFSET_OUT_OF_RANGE' && !ps.topic.deleted) {
            const start = broker.partitionOffsets(ps).startOffset;
            if (start > pos) {
              this.positions[i] = start;
              progressed = true;
              continue;
            }
          }
          throw e;
        }
        const msgs = toMessages(raw, ps.topic.name, ps.index, pos);
        for (const m of msgs) {
          this.positions[i] = m.offset + 1;
          yield m;
          if (this.stopped) return;
        }
        if (msgs.length > 0) progressed = true;
        else this.positions[i] = pos;
      }
      next = (next + 1) % this.parts.length;
      if (!progressed && !this.stopped) {
        const w = broker.waitForDataCancellable(this.parts, 1000);
        this.stopWaiting = w.cancel;
        await w.promise;
        this.stopWaiting = null;
      }
    }
  }
}
