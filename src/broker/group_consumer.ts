/**
 * The embedded side of consumer groups: `broker.consumer({ topic, group })`. Messages
 * arrive from the GroupCoordinator into a buffer bounded by the member's credit;
 * each one consumed returns one credit. The same ConsumedMessage shape comes out of
 * the remote client, so code moves between embedded and remote unchanged.
 */
import { UringmqError } from '../errors';
import { decodeBatches } from '../codec/record_batch';
import type { Broker, Message } from './broker';
import type { DeliverySink, GroupCoordinator, GroupJoinOptions, GroupMember, RedeliveredRecord } from './groups';

export interface ConsumedMessage extends Message {
  /** 1 on first delivery; more when this message was delivered before without an ack. */
  deliveryCount: number;
  redelivered: boolean;
  /** Marks the message done for the group. */
  ack(): void;
  /** Hands the message back for redelivery, after delayMs (default 0). */
  nack(opts?: { delayMs?: number }): void;
}

/** The consumer both the embedded broker and the remote client return for groups. */
export interface GroupConsumerApi extends AsyncIterable<ConsumedMessage> {
  readonly memberId: string | undefined;
  readonly assignment: readonly number[];
  close(): Promise<void>;
}

export type GroupConsumerOptions = GroupJoinOptions;

type Chunk = { kind: 'batches'; partition: number; raw: Buffer; from: number; to: number } | { kind: 'records'; records: RedeliveredRecord[] };

export class GroupConsumer implements GroupConsumerApi, DeliverySink {
  private readonly chunks: Chunk[] = [];
  private ready: ConsumedMessage[] = [];
  private readyPos = 0;
  private wake: (() => void) | null = null;
  private ended = false;
  private endError: UringmqError | undefined;
  private member: GroupMember | null = null;
  private readonly joined: Promise<GroupMember>;
  private started = false;
  private partitions: number[] = [];

  /** @internal use broker.consumer({ topic, group }) */
  constructor(private readonly broker: Broker, coord: GroupCoordinator, private readonly opts: GroupConsumerOptions) {
    this.joined = coord.join(opts, this).then((m) => (this.member = m));
    this.joined.catch(() => undefined); // surfaced by the iterator
  }

  get memberId(): string | undefined {
    return this.member?.id;
  }

  get assignment(): readonly number[] {
    return this.partitions;
  }

  // ---- DeliverySink (called by the coordinator) ----
  deliverBatches(partition: number, raw: Buffer, from: number, to: number): void {
    this.chunks.push({ kind: 'batches', partition, raw, from, to });
    this.notify();
  }
  deliverRecords(records: RedeliveredRecord[]): void {
    this.chunks.push({ kind: 'records', records });
    this.notify();
  }
  assign(partitions: number[]): void {
    this.partitions = partitions;
  }
  end(err?: UringmqError): void {
    this.ended = true;
    this.endError = err;
    this.notify();
  }

  private notify(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  async close(): Promise<void> {
    const m = await this.joined.catch(() => null);
    m?.leave();
    this.ended = true;
    this.notify();
  }

  [Symbol.asyncIterator](): AsyncIterator<ConsumedMessage> {
    if (this.started) throw new UringmqError('INVALID_ARGUMENT', 'a consumer can be iterated once');
    this.started = true;
    return this.run();
  }

  private expand(c: Chunk, m: GroupMember): ConsumedMessage[] {
    const topic = this.opts.topic;
    const make = (partition: number, r: { offset: number; timestamp: number; key: Buffer | null; value: Buffer; headers: Record<string, Buffer> }, deliveryCount: number): ConsumedMessage => {
      let done = false;
      return {
        topic,
        partition,
        offset: r.offset,
        timestamp: r.timestamp,
        key: r.key,
        value: r.value,
        headers: r.headers,
        deliveryCount,
        redelivered: deliveryCount > 1,
        ack: () => {
          if (done) return;
          done = true;
          m.ack(partition, r.offset, r.offset + 1);
        },
        nack: (o?: { delayMs?: number }) => {
          if (done) return;
          done = true;
          m.nack(partition, r.offset, o?.delayMs ?? 0);
        },
      };
    };
    if (c.kind === 'records') return c.records.map((r) => make(r.partition, r, r.deliveryCount));
    return decodeBatches(c.raw, c.from)
      .filter((r) => r.offset < c.to)
      .map((r) => make(c.partition, r, 1));
  }

  private async *run(): AsyncGenerator<ConsumedMessage> {
    const m = await this.joined;
    try {
      for (;;) {
        if (this.readyPos < this.ready.length) {
          const msg = this.ready[this.readyPos++]!;
          yield msg;
          m.credit(1);
          continue;
        }
        const c = this.chunks.shift();
        if (c) {
          this.ready = this.expand(c, m);
          this.readyPos = 0;
          continue;
        }
        if (this.ended || this.broker.closed) {
          if (this.endError) throw this.endError;
          return;
        }
        m.heartbeat();
        await new Promise<void>((resolve) => {
          this.wake = resolve;
          setTimeout(resolve, Math.max(100, Math.floor(m.opts.sessionTimeoutMs / 3))); // keeps the process alive while iterating, like a socket
        });
      }
    } finally {
      m.leave();
    }
  }
}
