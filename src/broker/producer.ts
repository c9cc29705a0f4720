/**
 * Producer: batches concurrent send() calls per partition (lingerMs, maxBatchBytes)
 * into one RecordBatch and one native append, so the JS↔native boundary is crossed
 * once per batch. sendBatch() appends caller-made batches directly.
 */
import { UringmqError, invalid, shown } from '../errors';
import { detachedViews, encodeBatch, encodeSent, sendBatchDetachedError, type RecordInput } from '../codec/record_batch';
import type { Broker, PartitionState, TopicState } from './broker';
import { StickyPartitioner } from './partitioner';
import { PendingPromises } from './id_table';
import { checkRecordSize, closeTimeout, closeTimedOut, ownRecord, positiveInt, settlesWithin, validateRecord } from './validate';

export interface ProducerOptions {
  /** How long send() waits for more records to share its batch (default 0: the
   *  current event-loop turn). */
  lingerMs?: number;
  /** A batch of send()s is cut when it reaches this many bytes (default 1 MiB).
   *  sendBatch() is one batch whatever this says, up to the broker's maxBatchBytes. */
  maxBatchBytes?: number;
  /** Every send resolves only once its batch is on disk, whatever the broker's
   *  durability mode (default false: as the broker's mode says). For the records that
   *  must survive a power cut on a broker opened with `none` or `{ intervalMs }`; each
   *  of these batches makes the I/O thread sync every file with unsynced writes. */
  sync?: boolean;
}

export interface ProducerRecord extends RecordInput {
  partition?: number;
}

export interface SendResult {
  partition: number;
  offset: number;
}

export interface SendBatchResult {
  partition: number;
  baseOffset: number;
  count: number;
}

/** What embedded and remote producers both offer. */
export interface ProducerApi {
  send(topic: string, record: ProducerRecord): Promise<SendResult>;
  /** One RecordBatch to one partition: all its records are written, with contiguous
   *  offsets, or none. Refused (nothing written) when larger than one request carries. */
  sendBatch(topic: string, records: readonly RecordInput[], opts?: { partition?: number }): Promise<SendBatchResult>;
  flush(): Promise<void>;
  /**
   * Refuses new sends (BROKER_CLOSED), sends what lingers and waits for every send
   * outstanding. `timeoutMs` bounds the wait: past it each send still outstanding is
   * rejected with BROKER_CLOSED (it may or may not have been written) and close
   * resolves. Left out, close waits as long as the sends may take (a remote producer's
   * deliveryTimeoutMs, 120 s by default, per batch).
   */
  close(opts?: { timeoutMs?: number }): Promise<void>;
}

interface Waiter {
  resolve: (r: SendResult) => void;
  reject: (e: Error) => void;
}

class Accumulator {
  records: RecordInput[] = [];
  waiters: Waiter[] = [];
  bytes = 0;
  timer: NodeJS.Timeout | NodeJS.Immediate | null = null;
  constructor(readonly key: string, readonly ps: PartitionState) {}
}

const MiB = 1 << 20;
/** Accumulators a producer keeps between batches before it drops the empty ones. */
const MAX_IDLE_ACCUMULATORS = 1024;
const BATCH_OVERHEAD = 64;

export class Producer implements ProducerApi {
  private readonly lingerMs: number;
  private readonly maxBatchBytes: number;
  /**
   * One accumulator per partition sent to, emptied when its batch is cut rather than
   * removed: a Map that gains and loses an entry per batch keeps its old tables, and
   * the records and promises they held, alive through young GCs (see IdTable). An
   * accumulator of a deleted topic is dropped at the delete (flushTopic), empty ones
   * past MAX_IDLE_ACCUMULATORS when another is needed.
   */
  private readonly accs = new Map<string, Accumulator>();
  /** Accumulators holding records: while any does, the broker flushes this producer at close. */
  private filled = 0;
  /** Sends held back by the write queue's high-water mark, in call order (resumeHeld). */
  private readonly heldSends: Array<(abandoned?: Error) => void> = [];
  /** How many of heldSends, from its head, a flush() waits for: they do not linger once let go (see flush). */
  private heldFlushed = 0;
  /** True while resumeHeld lets go a send a flush() waits for. */
  private lettingFlushedGo = false;
  /** Sends not yet settled: what flush() waits for. */
  private readonly inflight = new PendingPromises();
  // Keyless records rotate through partitions in the topic's own round-robin order.
  private readonly partitioner = new StickyPartitioner((topic, n) => this.broker.topicState(topic).roundRobin++ % n);
  private readonly alloc: (size: number) => Buffer;
  /** ProducerOptions.sync, and the broker's writes are not synced anyway. */
  private readonly sync: boolean;
  /** close() was called: new sends are refused (those held back before it still go). */
  private closing = false;
  /**
   * Rejecters of the sends handed to the broker and not yet settled, one per batch:
   * close()'s timeout rejects them (the appends themselves cannot be called back).
   */
  private readonly rejecters = new Set<(e: Error) => void>();

  /** @internal use broker.producer() */
  constructor(private readonly broker: Broker, opts: ProducerOptions) {
    if (opts === null || typeof opts !== 'object') throw invalid('producer options must be an object');
    opts = { ...opts }; // one read of each option, so what is checked is what is used
    if (opts.lingerMs !== undefined && !(Number.isInteger(opts.lingerMs) && opts.lingerMs >= 0 && opts.lingerMs <= 60_000))
      throw invalid('lingerMs must be an integer between 0 and 60000');
    this.lingerMs = opts.lingerMs ?? 0;
    this.maxBatchBytes = opts.maxBatchBytes === undefined ? Math.min(MiB, broker.maxBatchBytes) : positiveInt(opts.maxBatchBytes, "maxBatchBytes (at most the broker's)", broker.maxBatchBytes);
    if (opts.sync !== undefined && typeof opts.sync !== 'boolean') throw invalid(`producer option sync must be a boolean, got ${shown(opts.sync)}`);
    this.sync = opts.sync === true && broker.durability !== 'sync';
    const pool = broker.batchPool;
    this.alloc = (size) => pool.acquire(size);
  }

  /**
   * Appends one record; resolves with its partition and offset once durable. While
   * the broker's write queue is past its high-water mark, the record waits here
   * (not encoded, not queued) until the disk catches up.
   */
  send(topic: string, record: ProducerRecord): Promise<SendResult> {
    if (this.closing) return Promise.reject(new UringmqError('BROKER_CLOSED', 'producer is closed'));
    // A record without a timestamp gets the time of its send(), as Kafka's producer
    // gives it, not of its batch's cut (up to lingerMs later, or after a hold).
    const at = Date.now();
    if (this.mustHold()) {
      // Held, the record as it is now (checked when it goes on): the caller may reuse
      // its object meanwhile, as sendNow's copy allows once it is in a batch. A view
      // detached from now on fails this send alone, as one in a batch (encodeSent).
      const kept = ownRecord(record) as ProducerRecord;
      return this.held(() => this.sendNow(topic, kept, at, true));
    }
    return this.sendNow(topic, record, at, false);
  }

  /**
   * `owned`: `record` is ownRecord's copy already (a held send's). Not taken again: a
   * view detached while it was held would pass for one detached before send() (written
   * empty, the send resolved) instead of failing this send (encodeSent).
   */
  private sendNow(topic: string, record: ProducerRecord, at: number, owned: boolean): Promise<SendResult> {
    try {
      this.assertOpen();
      const t = this.broker.topicState(topic);
      const own = validateRecord(owned ? record : ownRecord(record), 'send to', topic) as ProducerRecord;
      const size = this.checkSize(own, topic);
      const partition = this.choosePartition(t, own, own.partition);
      const ps = t.partitions[partition]!;
      const key = `${topic}\u0000${partition}`;
      let acc = this.accs.get(key);
      if (acc && acc.records.length > 0 && (acc.bytes + size + BATCH_OVERHEAD > this.maxBatchBytes || acc.ps !== ps)) this.flushAcc(acc);
      if (!acc || acc.ps !== ps) {
        if (this.accs.size >= MAX_IDLE_ACCUMULATORS) this.dropEmpty();
        acc = new Accumulator(key, ps);
        this.accs.set(key, acc);
      }
      if (acc.records.length === 0 && this.filled++ === 0) this.broker.activeProducers.add(this);
      const out = new Promise<SendResult>((resolve, reject) => acc!.waiters.push({ resolve, reject }));
      own.timestamp ??= at;
      acc.records.push(own);
      acc.bytes += size;
      // Closing: close()'s flushAll ran already, and this record (a held send resumed
      // after it) must not linger past it: close waits for it, and its timeout rejects
      // only the appends (rejecters) and held sends, not a record in an accumulator.
      if (acc.bytes + BATCH_OVERHEAD >= this.maxBatchBytes || this.closing) this.flushAcc(acc);
      else if (this.lettingFlushedGo) {
        // A held send a flush() waits for: that flush cut the accumulators before it came,
        // and left to linger it kept flush() waiting lingerMs. It goes at the end of this
        // turn, with the other held sends let go in it (one batch, not one each).
        this.clearTimer(acc);
        const a = acc;
        acc.timer = setImmediate(() => this.flushAcc(a));
      } else if (!acc.timer) {
        const a = acc;
        acc.timer = this.lingerMs > 0 ? setTimeout(() => this.flushAcc(a), this.lingerMs) : setImmediate(() => this.flushAcc(a));
      }
      return out;
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * Appends records to one partition: `partition`, else the first record's key hash,
   * else round-robin, as one RecordBatch: written or not as a whole, with contiguous
   * offsets from baseOffset. A batch past the broker's maxBatchBytes (8 MiB encoded by
   * default) is refused with RECORD_TOO_LARGE before anything is written.
   */
  sendBatch(topic: string, records: readonly RecordInput[], opts: { partition?: number } = {}): Promise<SendBatchResult> {
    if (this.closing) return Promise.reject(new UringmqError('BROKER_CLOSED', 'producer is closed'));
    const at = Date.now(); // the records' default timestamp, as for send()
    if (this.mustHold()) {
      // Held, the caller's records as they are (a copy would double what is held): a
      // view detached meanwhile refuses the batch whole, not written empty.
      const detached = Array.isArray(records) ? detachedViews(records) : 0;
      return this.held(() => (Array.isArray(records) && detachedViews(records) > detached ? Promise.reject(sendBatchDetachedError(topic)) : this.sendBatchNow(topic, records, opts, at)));
    }
    return this.sendBatchNow(topic, records, opts, at);
  }

  private sendBatchNow(topic: string, records: readonly RecordInput[], opts: { partition?: number }, at: number): Promise<SendBatchResult> {
    try {
      this.assertOpen();
      const t = this.broker.topicState(topic);
      if (!Array.isArray(records) || records.length === 0) throw invalid('sendBatch needs a non-empty array of records');
      if (opts === null || typeof opts !== 'object') throw invalid('sendBatch options must be an object');
      const n = records.length;
      // Validated and sized before encoding: an oversize batch is refused without
      // allocating its buffer. recordSize is an upper bound of the encoded size.
      let bytes = BATCH_OVERHEAD;
      for (let i = 0; i < n; i++) bytes += this.checkSize(validateRecord(records[i], 'sendBatch to', topic, i), topic);
      const partition = this.choosePartition(t, records[0]!, opts.partition);
      // A sendBatch is a whole batch: a keyless one moves the sticky partition on, as a cut
      // accumulator does (or every keyless sendBatch went to one partition).
      if (opts.partition === undefined && records[0]!.key == null) this.partitioner.batchCut(topic, partition);
      const limit = this.broker.maxBatchBytes;
      let batch: Buffer | null = null;
      if (bytes > limit) {
        // recordSize overstates a record's varints by at most 16 bytes: only a batch
        // near the limit needs its exact size, and that encoding is then the one used.
        const exact = bytes - 16 * n > limit ? bytes - 16 * n : (batch = encodeBatch(records, { now: at })).length;
        if (exact > limit)
          throw new UringmqError(
            'RECORD_TOO_LARGE',
            `sendBatch of ${n} records (${batch ? '' : 'over '}${exact} bytes encoded) to ${topic}/${partition} exceeds maxBatchBytes ${limit}; nothing was written: send fewer records per call`,
          );
      }
      const ps = t.partitions[partition]!;
      // Records sent earlier to this partition go first, keeping send order.
      const prior = this.accs.get(`${topic}\u0000${partition}`);
      if (prior) this.flushAcc(prior);
      const pooled = batch === null;
      batch ??= encodeBatch(records, { alloc: this.alloc, now: at });
      const appended = this.broker.appendBatch(ps, batch, true, n, pooled, this.sync);
      const p = new Promise<SendBatchResult>((resolve, reject) => {
        this.rejecters.add(reject);
        appended.then(
          (r) => {
            this.rejecters.delete(reject);
            resolve({ partition, baseOffset: r.baseOffset, count: n });
          },
          (e: Error) => {
            this.rejecters.delete(reject);
            reject(e);
          },
        );
      });
      this.track(p);
      return p;
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** Sends everything held back by linger and waits for all sends of this producer. */
  async flush(): Promise<void> {
    this.heldFlushed = this.heldSends.length;
    this.flushAll();
    await this.inflight.settled();
  }

  /**
   * See ProducerApi.close. Nothing here waits on a network, only on the broker's disk:
   * `timeoutMs` bounds a disk that hangs. A send it rejects may still be written, and
   * broker.close() still waits for its append.
   */
  async close(opts?: { timeoutMs?: number }): Promise<void> {
    const timeoutMs = closeTimeout(opts);
    this.closing = true;
    this.flushAll();
    const settled = this.inflight.settled();
    if (timeoutMs === undefined || (await settlesWithin(settled, timeoutMs))) return settled;
    const err = closeTimedOut('producer', timeoutMs);
    for (const reject of [...this.rejecters]) reject(err);
    this.rejecters.clear();
    this.heldFlushed = 0;
    for (const go of this.heldSends.splice(0)) go(err);
  }

  /** @internal */
  flushAll(): void {
    for (const acc of [...this.accs.values()]) this.flushAcc(acc);
  }

  /** @internal */
  flushTopic(topic: string): void {
    for (const acc of [...this.accs.values()])
      if (acc.ps.topic.name === topic) {
        this.flushAcc(acc);
        this.accs.delete(acc.key);
      }
    this.partitioner.forget(topic); // or a producer of short-lived topics keeps an entry for each
  }

  private assertOpen(): void {
    if (this.broker.closed) throw new UringmqError('BROKER_CLOSED', `broker on ${this.broker.dir} is closed`);
  }

  private checkSize(rec: RecordInput, topic: string): number {
    return checkRecordSize(rec, topic, this.broker.maxRecordBytes);
  }

  private choosePartition(t: TopicState, rec: RecordInput, explicit: number | undefined): number {
    return this.partitioner.choose(t.name, t.partitions.length, rec.key, explicit);
  }

  /** Its linger timer (a timeout, or an immediate: lingerMs 0, or a send a flush waits for), cancelled. */
  private clearTimer(acc: Accumulator): void {
    if (!acc.timer) return;
    if ('refresh' in acc.timer) clearTimeout(acc.timer as NodeJS.Timeout);
    else clearImmediate(acc.timer as NodeJS.Immediate);
    acc.timer = null;
  }

  private flushAcc(acc: Accumulator): void {
    this.clearTimer(acc);
    if (acc.records.length === 0) return;
    if (--this.filled === 0) this.broker.activeProducers.delete(this);
    const topic = acc.ps.topic.name;
    this.partitioner.batchCut(topic, acc.ps.index);
    const { waiters, records, ps } = acc;
    acc.records = [];
    acc.waiters = [];
    acc.bytes = 0;
    let batch: Buffer | null;
    try {
      batch = encodeSent(records, { alloc: this.alloc }, topic, waiters);
    } catch (e) {
      for (const w of waiters) w.reject(e as Error);
      return;
    }
    if (batch === null) return;
    const fail = (e: Error): void => {
      for (const w of waiters) w.reject(e);
    };
    this.rejecters.add(fail);
    const p = this.broker.appendBatch(ps, batch, true, records.length, true, this.sync).then(
      (r) => {
        this.rejecters.delete(fail);
        for (let i = 0; i < waiters.length; i++) waiters[i]!.resolve({ partition: ps.index, offset: r.baseOffset + i });
      },
      (e: Error) => {
        this.rejecters.delete(fail);
        fail(e);
      },
    );
    this.track(p);
  }

  /** Drops the accumulators holding no records (a producer that wrote to many partitions over time). */
  private dropEmpty(): void {
    for (const [key, acc] of this.accs) if (acc.records.length === 0) this.accs.delete(key);
  }

  /**
   * Past the write queue's high-water mark a send waits, and so does every send after
   * it while any waits: they go on in call order (a send let through as soon as the
   * mark was no longer passed would overtake those still held, which resume only once
   * the queue is down to half of it).
   */
  private mustHold(): boolean {
    return !this.broker.closed && (this.broker.overHighWater || this.heldSends.length > 0);
  }

  /** A send held back by the write queue's high-water mark; flush() waits for it too. */
  private held<T>(go: () => Promise<T>): Promise<T> {
    const p = new Promise<T>((resolve, reject) => this.heldSends.push((abandoned) => (abandoned ? reject(abandoned) : go().then(resolve, reject))));
    if (this.heldSends.length === 1) this.waitWritable();
    this.track(p);
    return p;
  }

  private waitWritable(): void {
    void this.broker.whenWritable().then(() => this.resumeHeld());
  }

  /** Held sends, in order, while the queue takes them (a send that fills it again makes the rest wait again). */
  private resumeHeld(): void {
    while (this.heldSends.length > 0) {
      if (this.broker.overHighWater && !this.broker.closed) return this.waitWritable();
      const flushed = this.heldFlushed > 0;
      if (flushed) this.heldFlushed--;
      this.lettingFlushedGo = flushed;
      try {
        this.heldSends.shift()!();
      } finally {
        this.lettingFlushedGo = false;
      }
    }
  }

  private track(p: Promise<unknown>): void {
    this.inflight.track(p);
  }
}
