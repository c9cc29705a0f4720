/**
 * The embedded side of consumer groups: `broker.consumer({ topic, group })`. Messages
 * arrive from the GroupCoordinator into a buffer bounded by the member's credit;
 * each one consumed returns one credit. The same ConsumedMessage shape comes out of
 * the remote client, so code moves between embedded and remote unchanged.
 */
import { UringmqError } from '../errors';
import { checkNackDelay } from './validate';
import { decodeEach } from '../codec/record_batch';
import type { Broker, Message } from './broker';
import type { DeliverySink, GroupCoordinator, GroupJoinOptions, GroupMember, RedeliveredRecord, Returned } from './groups';
import { FeedbackMeter } from '../flow/controller';

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
  /** Deliveries as arrays: one await per batch (iterate either this or the consumer, once). */
  batches(): AsyncIterable<ConsumedMessage[]>;
  readonly memberId: string | undefined;
  readonly assignment: readonly number[];
  /**
   * Leaves the group. Resolved, the member is gone (its unacked messages released to
   * the others, the rebalance begun): a deleteGroup or describeTopic right after sees
   * it gone. A remote consumer whose connection is lost, or whose server stays silent
   * for a few seconds, resolves anyway (the server drops the member when it notices).
   */
  close(): Promise<void>;
}

export type GroupConsumerOptions = GroupJoinOptions;

/** Where a message's ack and nack go: a group member in-process, or a gRPC session. */
export interface Acker {
  /**
   * resets: the partition's commitOffset count when delivered (the remote consumer
   * sends it as the wire epoch, resets + 1); an ack or nack naming a stale one is ignored.
   */
  ack(partition: number, offset: number, resets?: number): void;
  /** deliveryCount: of the message nacked (a nack of an earlier delivery is ignored). */
  nack(partition: number, offset: number, delayMs: number, deliveryCount: number, resets?: number): void;
}

/**
 * A delivered message of a group. One object per message, methods on the prototype
 * and one shared Acker: no closures, so less garbage at a million messages a second.
 */
export class GroupMessage implements ConsumedMessage {
  readonly offset: number;
  readonly timestamp: number;
  readonly key: Buffer | null;
  readonly value: Buffer;
  readonly headers: Record<string, Buffer>;
  private done = false;
  constructor(
    private readonly acker: Acker,
    readonly topic: string,
    readonly partition: number,
    offset: number,
    timestamp: number,
    key: Buffer | null,
    value: Buffer,
    headers: Record<string, Buffer>,
    readonly deliveryCount: number,
    /** @internal The partition's commitOffset count when delivered (see Acker); undefined: not checked. */
    readonly resets?: number,
  ) {
    this.offset = offset;
    this.timestamp = timestamp;
    this.key = key;
    this.value = value;
    this.headers = headers;
  }
  get redelivered(): boolean {
    return this.deliveryCount > 1;
  }
  // Marked done only once the ack or nack was taken: a refused one (a bad delay, say)
  // leaves the message to the app's next ack() or nack(), which must not be dropped.
  ack(): void {
    if (this.done) return;
    this.acker.ack(this.partition, this.offset, this.resets);
    this.done = true;
  }
  nack(o?: { delayMs?: number }): void {
    if (this.done) return;
    // Checked here for the remote consumer too, whose acker only sends it.
    const delayMs = checkNackDelay(o?.delayMs ?? 0);
    this.acker.nack(this.partition, this.offset, delayMs, this.deliveryCount, this.resets);
    this.done = true;
  }
}

/**
 * The messages of records [from, to) in raw batches, for one partition. The array is
 * sized up front: grown by push it was a tenth of a consumer's decode time.
 */
export function groupMessages(raw: Buffer, from: number, to: number, acker: Acker, topic: string, partition: number, deliveryCount = 1, resets?: number): GroupMessage[] {
  const out = new Array<GroupMessage>(Math.max(0, to - from));
  let n = 0;
  decodeEach(raw, from, to, (o, ts, k, v, h) => {
    out[n++] = new GroupMessage(acker, topic, partition, o, ts, k, v, h, deliveryCount, resets);
  });
  if (n !== out.length) out.length = n;
  return out;
}

type Chunk = ({ kind: 'batches'; partition: number; raw: Buffer; from: number; to: number; deliveryCount: number } | { kind: 'records'; records: RedeliveredRecord[] }) & { arrived: number; resets?: number };

export class GroupConsumer implements GroupConsumerApi, DeliverySink {
  private readonly chunks: Chunk[] = [];
  private wake: (() => void) | null = null;
  private ended = false;
  private endError: UringmqError | undefined;
  private member: GroupMember | null = null;
  private readonly joined: Promise<GroupMember>;
  private started = false;
  /** close() was called: nothing more is handed to the app. */
  private closing = false;
  private partitions: number[] = [];
  /** Where the message-at-a-time iterator is in the batch it is handing out. */
  private readonly cursor: FlattenCursor<ConsumedMessage> = { batch: [], next: 0 };

  private readonly opts: GroupConsumerOptions;

  /** @internal use broker.consumer({ topic, group }) */
  constructor(private readonly broker: Broker, coord: GroupCoordinator, opts: GroupConsumerOptions) {
    this.opts = ownOptions(opts);
    // A bad option (group name, topic, deadline…) is refused here, when the consumer is
    // made, as the offset consumer's are; join() checks again, after the broker may close.
    coord.checkJoin(this.opts);
    this.joined = coord.join(this.opts, this).then((m) => {
      this.member = m;
      // Heartbeats from the join, not from the first iteration: the member holds its
      // partitions from here, and an app that began iterating later than
      // sessionTimeoutMs after making the consumer (setting up first) found it expired,
      // its buffered deliveries taken back. One made and never iterated is bounded by
      // the ack deadline, as one that stops iterating is. Slow handling keeps it too
      // (as the remote client's own timer does): the session timeout is for consumers
      // that are gone, ack deadlines for slow ones.
      // A third of the session timeout, however short: held to at least 100 ms, a
      // sessionTimeoutMs under about 100 (valid) expelled a live consumer again and again.
      this.beat = setInterval(() => (m.alive && !this.ended ? m.heartbeat() : this.stopBeat()), Math.max(1, Math.floor(m.opts.sessionTimeoutMs / 3)));
      this.beat.unref();
      return m;
    });
    this.joined.catch(() => undefined); // surfaced by the iterator
  }

  private beat: NodeJS.Timeout | null = null;
  private stopBeat(): void {
    if (this.beat) clearInterval(this.beat);
    this.beat = null;
  }

  get memberId(): string | undefined {
    return this.member?.id;
  }

  get assignment(): readonly number[] {
    return this.partitions;
  }

  // ---- DeliverySink (called by the coordinator) ----
  deliverBatches(partition: number, raw: Buffer, from: number, to: number, deliveryCount = 1, resets?: number): void {
    this.chunks.push({ kind: 'batches', partition, raw, from, to, deliveryCount, arrived: performance.now(), resets });
    this.notify();
  }
  deliverRecords(records: RedeliveredRecord[], resets?: number): void {
    this.chunks.push({ kind: 'records', records, arrived: performance.now(), resets });
    this.notify();
  }
  assign(partitions: number[]): void {
    this.partitions = partitions;
  }
  end(err?: UringmqError): void {
    // The member is gone (session expired, topic deleted, a read failed): what it held
    // went back to the group, and to the next owner. Handed out now, the rest of the
    // buffer and of the batch being iterated was processed twice, alongside that owner
    // and out of order (the remote consumer drops them likewise on a broken stream).
    this.chunks.length = 0;
    this.cursor.next = this.cursor.batch.length;
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
    // What was delivered but not yet handed to the app goes back to the group, that
    // delivery not counted: handed out after the close, it was processed twice (its ack
    // ignored); counted, a few quick join/close cycles dead-lettered it unseen.
    this.closing = true;
    const back = this.unhanded();
    const m = await this.joined.catch(() => null);
    back.push(...this.unhanded());
    m?.leave(back);
    this.stopBeat();
    this.ended = true;
    this.notify();
  }

  /** Takes the deliveries the app was not handed: the buffer, and the rest of the batch being iterated. */
  private unhanded(): Returned[] {
    const out = returnedOf(this.cursor);
    for (const c of this.chunks.splice(0)) {
      if (c.kind === 'batches') out.push({ partition: c.partition, from: c.from, to: c.to, deliveryCount: c.deliveryCount, resets: c.resets });
      else for (const r of c.records) out.push({ partition: r.partition, from: r.offset, to: r.offset + 1, deliveryCount: r.deliveryCount, resets: c.resets });
    }
    return out;
  }

  [Symbol.asyncIterator](): AsyncIterator<ConsumedMessage> {
    return closesOnEarlyReturn(flatten(this.batches(), () => this.closing || this.broker.closed, this.cursor), () => this.close());
  }

  /**
   * The same messages, a delivery at a time: one await per batch instead of per
   * message, for consumers that want millions of messages per second. Each message
   * is still acked (or nacked) on its own.
   */
  batches(): AsyncIterable<ConsumedMessage[]> {
    if (this.started) throw new UringmqError('INVALID_ARGUMENT', 'a consumer can be iterated once');
    this.started = true;
    return { [Symbol.asyncIterator]: () => closesOnEarlyReturn(this.run(), () => this.close()) };
  }

  private expand(c: Chunk, acker: Acker): ConsumedMessage[] {
    const topic = this.opts.topic;
    if (c.kind === 'records')
      return c.records.map((r) => new GroupMessage(acker, topic, r.partition, r.offset, r.timestamp, r.key, r.value, r.headers, r.deliveryCount, c.resets));
    return groupMessages(c.raw, c.from, c.to, acker, topic, c.partition, c.deliveryCount, c.resets);
  }

  private async *run(): AsyncGenerator<ConsumedMessage[]> {
    const m = await this.joined;
    const acker: Acker = { ack: (p, o, r) => m.ack(p, o, o + 1, r), nack: (p, o, d, n, r) => m.nack(p, o, d, n, r) };
    // The heartbeat runs from the join (the constructor). The report timer stops itself
    // once the member is gone: close() while the app holds a batch (the generator
    // suspended at its yield) never reaches `finally`.
    const stopTimers = () => {
      clearInterval(report);
    };
    // The same feedback the remote client sends, measured from this iterator.
    const meter = new FeedbackMeter();
    let inApp: number | undefined;
    const report = setInterval(() => {
      if (m.alive) m.feedback(meter.take(inApp ?? this.chunks[0]?.arrived));
      else stopTimers();
    }, m.flow.opts.feedbackIntervalMs);
    report.unref();
    try {
      for (;;) {
        // The broker is closing: what is buffered is not handed out, as after close().
        // The group's last offsets are written during the close, and the acks of
        // messages handed out meanwhile were lost: all of them came again at the next open.
        if (this.broker.closed) return;
        const c = this.chunks.shift();
        if (c) {
          const msgs = this.expand(c, acker);
          if (msgs.length === 0) continue;
          inApp = c.arrived;
          yield msgs;
          inApp = undefined;
          meter.handled(msgs.length, c.arrived);
          m.credit(msgs.length);
          continue;
        }
        if (this.ended || this.broker.closed) {
          if (this.endError) throw this.endError;
          return;
        }
        m.heartbeat();
        let timer: NodeJS.Timeout | undefined;
        await new Promise<void>((resolve) => {
          this.wake = resolve;
          timer = setTimeout(resolve, Math.max(100, Math.floor(m.opts.sessionTimeoutMs / 3))); // keeps the process alive while iterating, like a socket
        });
        // Woken by data first: the timer goes (one left per wait was thousands of live
        // timers at a few thousand messages a second).
        clearTimeout(timer);
      }
    } finally {
      stopTimers();
      this.stopBeat();
      // Left early (a break out of the loop): the rest is given back as close() does.
      m.leave(this.unhanded());
    }
  }
}

/**
 * A consumer's own copy of its options (and of their `from` and `flow` objects): the
 * caller may reuse or change its object once the consumer is made (the same object
 * for the next topic's consumer, say), and the join, which reads them later, and the
 * topic named on each message must not follow. Anything not an object is passed on
 * as is, for the join's checks to refuse.
 */
export function ownOptions<T extends { from?: unknown; flow?: unknown }>(opts: T): T {
  if (opts === null || typeof opts !== 'object') return opts;
  const o = { ...opts };
  if (o.from !== null && typeof o.from === 'object') o.from = { ...o.from };
  if (o.flow !== null && typeof o.flow === 'object') o.flow = { ...o.flow };
  return o;
}

/**
 * `it`, whose return() and throw() close the consumer first. A generator returned
 * before it began never runs its body, nor so its `finally` that leaves the group, and
 * the member stayed in the group for as long as the broker (or client) was open,
 * heartbeating and holding its partitions (Readable.from(consumer) destroyed before it
 * was read; destroyed with an error, it calls throw()). One returned while a next()
 * waits for messages is queued behind that next(), which waited for the next message
 * (on an idle topic, for ever) before the member left: the close ends the wait.
 * Closed whether or not the body began: the close takes back what the app was not
 * handed, as the body's `finally` would, and that `finally`'s own close is then a no-op.
 */
export function closesOnEarlyReturn<T>(it: AsyncGenerator<T>, close: () => Promise<void>): AsyncGenerator<T> {
  const ret = it.return.bind(it);
  const thr = it.throw.bind(it);
  it.return = async (v) => {
    await close();
    return ret(v);
  };
  it.throw = async (e) => {
    await close();
    return thr(e);
  };
  return it;
}

/** The batch flatten() is handing out, and the index of the next message it hands. */
export interface FlattenCursor<T> {
  batch: readonly T[];
  next: number;
}

/**
 * Messages one by one from batches; leaving early, or `stopped()` (a close), ends the
 * underlying iterator. `cursor` shows what of the current batch is not handed out yet.
 */
export async function* flatten<T>(batches: AsyncIterable<T[]>, stopped: () => boolean = () => false, cursor: FlattenCursor<T> = { batch: [], next: 0 }): AsyncGenerator<T> {
  try {
    for await (const b of batches) {
      cursor.batch = b;
      cursor.next = 0;
      while (cursor.next < b.length) {
        if (stopped()) return;
        yield b[cursor.next++]!;
      }
    }
  } finally {
    cursor.batch = [];
    cursor.next = 0;
  }
}

/** The messages of the cursor's batch not handed out yet, as ranges (taken: the cursor is emptied). */
export function returnedOf(cursor: FlattenCursor<ConsumedMessage>): Returned[] {
  const out: Returned[] = [];
  for (let i = cursor.next; i < cursor.batch.length; i++) {
    const msg = cursor.batch[i]!;
    const resets = msg instanceof GroupMessage ? msg.resets : undefined;
    const last = out[out.length - 1];
    if (last && last.partition === msg.partition && last.deliveryCount === msg.deliveryCount && last.resets === resets && last.to === msg.offset) last.to++;
    else out.push({ partition: msg.partition, from: msg.offset, to: msg.offset + 1, deliveryCount: msg.deliveryCount, resets });
  }
  cursor.batch = [];
  cursor.next = 0;
  return out;
}
