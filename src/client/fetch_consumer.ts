/**
 * Consuming through the native fetch plane (docs/FETCH-PROTOCOL.md):
 * `client.consumer({ topic, group, transport: 'fetch' })`.
 *
 * The bytes come from the broker's fetch listener, spliced from the segment files
 * without passing through the broker's JavaScript; this client decodes them with the
 * same codec as every other consumer. The group side goes over gRPC: the committed
 * offsets a group resumes from (GetCommittedOffsets) and the positions this consumer
 * has processed (CommitOffset), the same per-group offsets Subscribe members use.
 *
 * What a fetch consumer is, and is not: the broker does not hand out its messages,
 * so it cannot track them. There are no ack deadlines, redeliveries to other members
 * or dead-lettering (those are the Subscribe transport's, whose deliveries the broker
 * makes itself). Delivery is at-least-once by committed positions: this consumer
 * keeps, per partition, the offset below which every message was acked (as the
 * broker does for Subscribe members), commits it every commitIntervalMs and on close,
 * and a restarted consumer resumes from the last commit, so what was not acked comes
 * again. nack() rewinds the partition to that message: it and everything after it
 * are fetched again.
 *
 * Partitions: without `partitions`, the consumer is a member of its group (a Subscribe
 * stream with `assignment_only`: the broker assigns and rebalances partitions among the
 * group's members and watches their heartbeats, but sends no messages on it). When a
 * partition is taken away, this consumer commits what it processed and stops reading
 * it; when one is given, it starts from the group's committed offset. With
 * `partitions`, the application assigns them itself. A group should not be consumed
 * by Subscribe members and fetch consumers at the same time (each CommitOffset resets
 * the group's in-flight state of that partition).
 */
import { setMaxListeners } from 'node:events';
import * as net from 'node:net';
import type * as grpc from '@grpc/grpc-js';
import { checkConnectionStateOption, limitReached, reconnectDelayMs, sessionExpired, tellConnectionState, type ConnectionEvent } from './backoff';
import { LEAVE_WAIT_MS, boundGrpcEnd, endAndAwaitLeave, type GrpcProbe } from './leave';
import { UringmqError, invalid, shown } from '../errors';
import { crc32c } from '../native';
import { HEADER_SIZE, CRC_START } from '../codec/record_batch';
import { closesOnEarlyReturn, groupMessages, ownOptions, type Acker, type ConsumedMessage, type GroupConsumerApi } from '../broker/group_consumer';
import { RangeSet } from '../broker/range_set';
import { checkConsumerOptions, refusePartitionOptions, validateGroupName, validateTopicName } from '../broker/validate';
import { fromServiceError } from '../grpc/status';
import { pb } from '../grpc/proto';
import {
  DEFAULT_FETCH_PORT,
  FETCH_MIN_VERSION,
  FETCH_VERSION,
  RESPONSE_HEADER_SIZE,
  SERVER_HELLO_SIZE,
  decodeResponseHeader,
  decodeServerHello,
  encodeFetch,
  encodeHello,
  fetchError,
  fetchErrorName,
  topicIncarnation,
  type ResponseHeader,
  type ServerHello,
} from '../fetch/protocol';

/**
 * What FetchConsumer needs of the gRPC client (src/client/index.ts). `signal`: aborting
 * it cancels the call (see FetchConsumer.abandon).
 */
export interface FetchClientSide {
  readonly address: string;
  readonly token: string | undefined;
  readonly fetchAddress: string | undefined;
  readonly isClosed: boolean;
  describeTopic(name: string, opts?: { groups?: boolean }, signal?: AbortSignal): Promise<{ createdAt?: number; partitions: Array<{ partition: number; startOffset: number; endOffset: number }> }>;
  committedState(group: string, topic: string, signal?: AbortSignal): Promise<{ offsets: number[]; run: number }>;
  commitOffset(group: string, topic: string, partition: number, offset: number, run?: number, memberId?: string, signal?: AbortSignal): Promise<void>;
  forget(x: { close(): Promise<void> }): void;
  bidi(name: 'subscribe'): grpc.ClientDuplexStream<unknown, unknown>;
  readonly grpcProbe: GrpcProbe;
}

export interface FetchConsumerOptions {
  topic: string;
  group: string;
  transport: 'fetch';
  /** Where a partition without a committed offset starts (default 'latest'). */
  from?: 'earliest' | 'latest' | { offset: number };
  /**
   * The partitions this consumer reads, assigned by the application. Default: the
   * group assigns them (this consumer joins it as a member and follows rebalances).
   */
  partitions?: number[];
  /** host:port of the fetch listener (default: ConnectOptions.fetchAddress, else the server's host and port 50052). */
  fetchAddress?: string;
  /** Bytes per fetch: whole batches, at least one (default 1 MiB; at most what the server allows, its hello says). */
  maxBytes?: number;
  /** How long a fetch at the end of a partition waits for new data (default 500 ms; at most what the server allows). */
  maxWaitMs?: number;
  /** Processed positions are committed this often, and on close (default 1000 ms). */
  commitIntervalMs?: number;
  /** Check every batch's CRC32C (default true): the broker does not, the bytes never pass through it. */
  verifyCrc?: boolean;
  /**
   * Told when the group membership's stream to the server is lost and each reconnect
   * attempt is scheduled, and when one is answered (ConnectionEvent); as
   * RemoteConsumerOptions.onConnectionState.
   */
  onConnectionState?: (ev: ConnectionEvent) => void;
}

const MiB = 1 << 20;
/** Errors FetchConnection.open() throws when a listener answered the handshake with a refusal. */
const ANSWERED = new WeakSet<Error>();
/** UNSUPPORTED_VERSION refusals of FetchConnection.open(): the older version the server speaks, to retry with. */
const FALLBACK = new WeakMap<Error, number>();
/**
 * Errors FetchConnection.fetch() throws when the connection ended in the middle of a
 * reply whose header had come: the server (or something on the way) cut it off, not
 * this side (its stall timer, or close()). A listener does that when it cannot read the
 * segment file it promised the bytes of (docs/FETCH-PROTOCOL.md, "Limits and timeouts").
 * The value: the bytes of the reply that came before it ended (of an OK reply).
 */
const CUT_OFF = new WeakMap<Error, Buffer>();
/**
 * Errors FetchConnection.open() throws when no listener was there to take the connection:
 * it was refused, or closed before the server's hello came, or the hello said
 * SHUTTING_DOWN: a broker down or going down (restarting). Not a refusal a listener that
 * is up answered (TOO_MANY_CONNECTIONS), nor a hello that did not come in time (the
 * connection was taken: the listener is there, slow or stuck).
 */
const LISTENER_DOWN = new WeakSet<Error>();
const RETRYABLE = new Set(['UNAVAILABLE', 'RESOURCE_EXHAUSTED']);
const MEMBERSHIP_RETRYABLE = new Set(['UNAVAILABLE', 'RESOURCE_EXHAUSTED', 'BROKER_CLOSED', 'IO_ERROR', 'INTERNAL']);
/**
 * Failures of the consumer's own gRPC calls (those that take up an assignment, and the
 * periodic commit) that are tried again: a server shutting down answers BROKER_CLOSED,
 * a disk refusing a write for now IO_ERROR, and either passes.
 */
const CALL_RETRYABLE = new Set(['UNAVAILABLE', 'RESOURCE_EXHAUSTED', 'BROKER_CLOSED', 'IO_ERROR']);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function parseHostPort(address: string, what: string): { host: string; port: number } {
  const m = /^\[?([^\]]*?)\]?:(\d+)$/.exec(address);
  if (!m || !m[1]) throw invalid(`${what} must be "host:port", got ${JSON.stringify(address)}`);
  const port = Number(m[2]);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw invalid(`${what} has a bad port: ${JSON.stringify(address)}`);
  return { host: m[1], port };
}

/**
 * One connection to a fetch listener: hello, then one request at a time. Replies are
 * assembled from the socket's chunks with one copy at most (none when a reply
 * arrives in one chunk).
 */
export class FetchConnection {
  private readonly chunks: Buffer[] = [];
  private buffered = 0;
  private waiter: { need: number; resolve: (b: Buffer) => void; reject: (e: Error) => void } | null = null;
  private failure: UringmqError | null = null;
  private corr = 0;
  private busy = false;
  /** The fetch in flight's no-progress timer: restarted by every chunk of its reply that arrives. */
  private stall: NodeJS.Timeout | null = null;
  /** This side ended the connection (close(), or the stall timer): a reply it cuts short was not cut off by the server. */
  private endedHere = false;
  /** The server's hello: its limits. */
  hello!: ServerHello;

  private constructor(private readonly sock: net.Socket, private readonly where: string) {
    sock.setNoDelay(true);
    sock.on('data', (d: Buffer) => {
      this.stall?.refresh();
      this.chunks.push(d);
      this.buffered += d.length;
      const w = this.waiter;
      if (w && this.buffered >= w.need) {
        this.waiter = null;
        w.resolve(this.take(w.need));
      }
    });
    const fail = (e?: Error) => {
      if (this.failure) return;
      this.failure = new UringmqError('UNAVAILABLE', `fetch connection to ${where} ${e ? `failed: ${e.message}` : 'closed by the server'}`);
      const w = this.waiter;
      this.waiter = null;
      w?.reject(this.failure);
    };
    sock.on('error', fail);
    sock.on('close', () => fail());
  }

  /**
   * `signal`: aborting it gives up a connection still on its way (its consumer closed).
   * Says hello with the newest protocol version; a server that does not speak it (a
   * version-1 server) answers UNSUPPORTED_VERSION with the version it speaks, and the
   * connection is made again with that one (which cannot name topic incarnations).
   */
  static async open(host: string, port: number, token = '', timeoutMs = 10_000, signal?: AbortSignal, version = FETCH_VERSION): Promise<FetchConnection> {
    try {
      return await FetchConnection.openAs(host, port, token, timeoutMs, signal, version);
    } catch (e) {
      const older = e instanceof UringmqError ? FALLBACK.get(e) : undefined;
      if (older === undefined) throw e;
      return FetchConnection.openAs(host, port, token, timeoutMs, signal, older);
    }
  }

  private static async openAs(host: string, port: number, token: string, timeoutMs: number, signal: AbortSignal | undefined, version: number): Promise<FetchConnection> {
    const where = `${host}:${port}`;
    const sock = net.connect({ host, port });
    const conn = new FetchConnection(sock, where);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      sock.destroy(new Error(`no handshake within ${timeoutMs} ms`));
    }, timeoutMs);
    const abort = () => sock.destroy(new Error('the consumer closed'));
    if (signal?.aborted) abort();
    else signal?.addEventListener('abort', abort);
    try {
      sock.write(encodeHello(token, version));
      conn.hello = decodeServerHello(await conn.read(SERVER_HELLO_SIZE));
    } catch (e) {
      sock.destroy();
      if (conn.failure && e === conn.failure && !timedOut && !signal?.aborted) LISTENER_DOWN.add(conn.failure); // the socket ended it, not our timer or close
      throw e instanceof UringmqError ? e : new UringmqError('UNAVAILABLE', `cannot reach the fetch listener at ${where}: ${(e as Error).message}`);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', abort);
    }
    if (conn.hello.error !== 0) {
      sock.destroy();
      const e = fetchError(conn.hello.error, `from ${where} at handshake`);
      ANSWERED.add(e);
      if (fetchErrorName(conn.hello.error) === 'SHUTTING_DOWN') LISTENER_DOWN.add(e);
      const theirs = conn.hello.version;
      if (fetchErrorName(conn.hello.error) === 'UNSUPPORTED_VERSION' && theirs >= FETCH_MIN_VERSION && theirs < version) FALLBACK.set(e, theirs);
      throw e;
    }
    // The version agreed: ours, unless a server that took the hello says it speaks an older one.
    conn.version = Math.min(version, conn.hello.version);
    return conn;
  }

  /** The protocol version this connection speaks (2 can name topic incarnations). */
  version = FETCH_MIN_VERSION;

  get closed(): boolean {
    return this.failure !== null;
  }

  private take(n: number): Buffer {
    this.buffered -= n;
    const first = this.chunks[0]!;
    if (first.length >= n) {
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
      return first.subarray(0, n);
    }
    const out = Buffer.allocUnsafe(n);
    let pos = 0;
    while (pos < n) {
      const c = this.chunks[0]!;
      const k = Math.min(c.length, n - pos);
      c.copy(out, pos, 0, k);
      pos += k;
      if (k === c.length) this.chunks.shift();
      else this.chunks[0] = c.subarray(k);
    }
    return out;
  }

  private read(n: number): Promise<Buffer> {
    if (n === 0) return Promise.resolve(Buffer.alloc(0));
    if (this.buffered >= n) return Promise.resolve(this.take(n));
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => (this.waiter = { need: n, resolve, reject }));
  }

  /**
   * One fetch; resolves with the reply header and its whole batches (maybe none).
   * `incarnation` (the topic's createdAt; 0: none): the reply is TOPIC_INCARNATION_MISMATCH
   * when the topic under that name is another one. Not sent on a version-1 connection
   * (the server could not check it): see `version`.
   */
  async fetch(topic: string, partition: number, offset: number, maxBytes: number, maxWaitMs: number, incarnation = 0): Promise<{ header: ResponseHeader; data: Buffer }> {
    if (this.busy) throw new UringmqError('FAILED_PRECONDITION', 'one fetch at a time per connection');
    if (this.failure) throw this.failure;
    // First: a field the request cannot carry is refused (INVALID_ARGUMENT) before the
    // reply timer, which a maxWaitMs that is not a number would have set to fire at once.
    const correlationId = (this.corr + 1) >>> 0;
    const request = encodeFetch({ correlationId, topic, partition, offset, maxBytes, maxWaitMs, incarnation: this.version >= 2 ? incarnation : 0 });
    this.corr = correlationId;
    this.busy = true;
    // A reply that never comes (a server wedged, a network gone silent) must not hang us.
    // (Within setTimeout's range: past 2^31 - 1 ms it fires at once, with a warning.)
    // It bounds the wait for each next chunk, not the whole reply: a big reply over a
    // slow link takes as long as it takes while it arrives (cut off at a fixed time, it
    // was fetched again from the same offset, and cut off again, for ever).
    const limit = Math.min(maxWaitMs + 30_000, 2 ** 31 - 1);
    const timer = setTimeout(() => {
      this.endedHere = true;
      this.sock.destroy(new Error(`no reply, or no more of it, within ${limit} ms`));
    }, limit);
    this.stall = timer;
    try {
      this.sock.write(request);
      const header = decodeResponseHeader(await this.read(RESPONSE_HEADER_SIZE));
      if (header.correlationId !== correlationId)
        throw new UringmqError('INTERNAL', `fetch plane: reply for request ${header.correlationId}, expected ${correlationId}`);
      const data = await this.read(header.length).catch((e: unknown) => {
        const lost = this.failure;
        if (!lost || e !== lost || this.endedHere) throw e;
        // The header promised `length` bytes and the connection ended before them: the
        // server cut the reply off (a segment file it could not read, EIO or shorter than
        // the log says), or the network went. Marked, so that a FetchConsumer can tell a
        // reply cut off again and again at one offset from a connection lost now and then.
        const got = this.buffered;
        const cut = new UringmqError('UNAVAILABLE', `${lost.message}, ${got} of the reply's ${header.length} bytes received`);
        // Kept: the whole batches at their start are records the file was read for,
        // sent before the read that failed (which lies in the first batch not whole).
        CUT_OFF.set(cut, header.error === 0 && got > 0 ? this.take(got) : Buffer.alloc(0));
        throw cut;
      });
      return { header, data };
    } finally {
      clearTimeout(timer);
      this.stall = null;
      this.busy = false;
    }
  }

  close(): void {
    this.endedHere = true;
    this.sock.destroy();
  }
}

/** A fetched chunk of one partition: whole batches, offsets [from, to) are new. */
interface Chunk {
  partition: number;
  raw: Buffer;
  from: number;
  to: number;
  epoch: number;
  /** acks and nacks of its messages: those of the partition's generation when it was fetched */
  acker: Acker;
}

interface PartitionState {
  partition: number;
  /** the next offset to fetch */
  position: number;
  /** every offset below it was acked: what gets committed */
  processed: number;
  /** acked offsets at or above `processed` (acks out of order) */
  acked: RangeSet;
  committed: number;
  /** the broker run `committed` was read in: commits carry it (see restart()) */
  run: number;
  /**
   * The incarnation of the topic (its createdAt; 0: not known) that `position` and
   * `processed` are offsets of. Fetches name it: the fetch plane refuses them once the
   * topic under this name is another, so no record of that one is read at these offsets.
   */
  incarnation: number;
  /** bumped by a seek (nack) and a restart: fetches and chunks of an older epoch are dropped */
  epoch: number;
  /** bumped by a restart: acks and nacks of messages read before it are dropped */
  generation: number;
  /** the acker of this generation, which chunks fetched now hand their messages */
  acker: Acker;
  buffered: number;
  wake: (() => void) | null;
  conn: FetchConnection | null;
  /** given to another member: its pump stops, its chunks and acks are dropped */
  revoked?: boolean;
  /** its fetch connection failed: before fetching again, check that the topic is the one it was reading (verifyTopic) */
  reconnecting?: boolean;
  /** fetches refused in a row for an incarnation the broker still describes (see incarnationChanged) */
  mismatches?: number;
  /** replies from offset `cutAt` cut off in a row after their header came, each on a new connection (see pump) */
  cutOffs?: number;
  cutAt?: number;
}

const PREFETCH = 2; // chunks buffered per partition ahead of the app

/** The bytes of the whole batches at the start of `raw` (what came of a reply cut off). */
function wholeBatchBytes(raw: Buffer): number {
  let pos = 0;
  while (raw.length - pos >= HEADER_SIZE) {
    const len = raw.readUInt32LE(pos + 4);
    if (len < HEADER_SIZE || pos + len > raw.length) break;
    pos += len;
  }
  return pos;
}

/** Fetches of one partition refused in a row for an incarnation the broker keeps describing, before the consumer fails. */
const MAX_INCARNATION_MISMATCHES = 5;
/**
 * Replies from one offset of a partition cut off in a row after their header came (each
 * on a new connection, with no other reply of the partition and no connection attempt
 * that found the listener down between them: see LISTENER_DOWN) before the
 * consumer fails with IO_ERROR: the listener cannot read the segment file there.
 */
const MAX_CUT_OFFS = 5;
/** Between fetches at the end of a partition when no long-poll is allowed (maxWaitMs 0). */
const IDLE_POLL_MS = 100;

export class FetchConsumer implements GroupConsumerApi {
  private readonly opts: FetchConsumerOptions;
  private readonly topic: string;
  private readonly group: string;
  private readonly maxBytes: number;
  private readonly maxWaitMs: number;
  private readonly commitIntervalMs: number;
  private readonly verifyCrc: boolean;
  private readonly host: string;
  private readonly port: number;
  private readonly chunks: Chunk[] = [];
  private readonly parts = new Map<number, PartitionState>();
  private partitions: number[] = [];
  private wake: (() => void) | null = null;
  private fatal: UringmqError | null = null;
  private closed = false;
  /** close()'s work, which a second close() waits for too. */
  private closing: Promise<void> | null = null;
  private started = false;
  private commitTimer: NodeJS.Timeout | null = null;
  private committing: Promise<void> = Promise.resolve();
  /**
   * When the topic whose offsets this consumer holds was created (describeTopic): a
   * topic deleted and made again under the same name has another, and its offsets are
   * not these (see verifyTopic).
   */
  private createdAt: number | undefined;
  /** The fetch loops running: each leaves the set when it ends (a partition taken away ends its loop; a rebalance starts new ones). */
  private readonly pumps = new Set<Promise<void>>();
  /** group membership (no `partitions` given): the assignment-only Subscribe stream */
  private membership: grpc.ClientDuplexStream<unknown, unknown> | null = null;
  private member: string | undefined;
  private heartbeat: NodeJS.Timeout | null = null;
  private assigning: Promise<void> = Promise.resolve();
  private firstAssignment: (() => void) | null = null;
  /** Aborted by close(): connections still being opened, and retry delays, end at once. */
  // Each partition's loop listens on it (a connection being opened, a poll's or retry's
  // delay): more than 10 partitions is not a leak, and must not warn as one.
  private readonly closeSignal = (() => {
    const c = new AbortController();
    setMaxListeners(0, c.signal);
    return c;
  })();
  /**
   * Aborted when close() stops waiting for the server (see closeNow): every gRPC call
   * of this consumer still out is cancelled, and none is made after. A call left open
   * kept the process for its deadline (30 s), the channel closed or not.
   */
  private readonly abandon = (() => {
    const c = new AbortController();
    setMaxListeners(0, c.signal); // one listener per call under way
    return c;
  })();

  /** @internal use client.consumer({ ..., transport: 'fetch' }) */
  constructor(private readonly client: FetchClientSide, opts: FetchConsumerOptions) {
    if (opts === null || typeof opts !== 'object') throw invalid('consumer options must be an object');
    // Its own copy (of `partitions` too), as the Subscribe consumer's: the first
    // iteration and each rejoin read `from` and `partitions` later, and a caller that
    // reuses or changes its object meanwhile must not change them, past the checks.
    opts = this.opts = ownOptions(opts);
    if (Array.isArray(opts.partitions)) opts.partitions = [...opts.partitions];
    // As the broker checks them (broker.consumer() when it is made): sent as they were,
    // a bad name failed only the first next().
    validateTopicName(opts.topic);
    validateGroupName(opts.group);
    this.topic = opts.topic;
    this.group = opts.group;
    this.maxBytes = intOpt(opts.maxBytes, 'maxBytes', MiB, 1, 1 << 30);
    this.maxWaitMs = intOpt(opts.maxWaitMs, 'maxWaitMs', 500, 0, 3_600_000);
    this.commitIntervalMs = intOpt(opts.commitIntervalMs, 'commitIntervalMs', 1000, 1, 3_600_000);
    // Not taken for its truth: 0 or null turned the CRC checks off.
    if (opts.verifyCrc !== undefined && typeof opts.verifyCrc !== 'boolean') throw invalid(`verifyCrc must be a boolean, got ${shown(opts.verifyCrc)}`);
    this.verifyCrc = opts.verifyCrc ?? true;
    checkConnectionStateOption(opts.onConnectionState);
    refusePartitionOptions(opts, 'fetch');
    if (opts.partitions !== undefined && (!Array.isArray(opts.partitions) || opts.partitions.some((p) => !Number.isInteger(p) || p < 0)))
      throw invalid(`partitions must be an array of partition numbers, got ${shown(opts.partitions, true)}`);
    // As the Subscribe consumer checks it, naming what it got.
    checkConsumerOptions({ from: opts.from });
    let addr = opts.fetchAddress ?? client.fetchAddress;
    if (!addr) addr = `${parseHostPort(client.address, 'server address').host}:${DEFAULT_FETCH_PORT}`;
    const hp = parseHostPort(addr, 'fetchAddress');
    this.host = hp.host;
    this.port = hp.port;
  }

  /** The member id the group gave this consumer (undefined with application-assigned partitions). */
  get memberId(): string | undefined {
    return this.member;
  }

  get assignment(): readonly number[] {
    return this.partitions;
  }

  /** Next offset to fetch per partition (for monitoring). */
  get positions(): Map<number, number> {
    return new Map([...this.parts].map(([p, s]) => [p, s.position]));
  }

  [Symbol.asyncIterator](): AsyncIterator<ConsumedMessage> {
    // batches() now, not at the first next(): a second iteration is refused when it is
    // asked for, as the Subscribe consumer's.
    return closesOnEarlyReturn(this.messages(this.batches()), () => this.close());
  }

  /** One by one; after a nack rewound the partition, the rest of that batch is skipped (it comes again). */
  private async *messages(batches: AsyncIterable<ConsumedMessage[]>): AsyncGenerator<ConsumedMessage> {
    for await (const batch of batches) {
      const epoch = this.yieldedEpoch;
      for (const m of batch) {
        if (this.parts.get(m.partition)?.epoch !== epoch) break; // rewound, or taken away
        yield m;
      }
    }
  }

  private yieldedEpoch = 0;
  /** Counters for PartitionState.epoch and .generation: each value is used once. */
  private epochs = 0;
  private generations = 0;

  batches(): AsyncIterable<ConsumedMessage[]> {
    if (this.started) throw invalid('a consumer can be iterated once');
    this.started = true;
    // return() or throw() while a next() waits (for ever on an idle topic) closes first,
    // as for the other group consumers: queued behind that next(), the member stayed.
    return { [Symbol.asyncIterator]: () => closesOnEarlyReturn(this.run(), () => this.close()) };
  }

  /** Commits the processed positions now (also done every commitIntervalMs and on close). */
  commit(): Promise<void> {
    const run = this.committing.then(() => this.commitNow());
    this.committing = run.catch(() => undefined);
    return run;
  }

  private async commitNow(): Promise<void> {
    // The topic was deleted under this consumer: nothing it read belongs to a topic made
    // again under that name since.
    if (this.fatal?.code === 'TOPIC_NOT_FOUND') return;
    // Positions of a topic deleted and made again since must not be committed to the
    // new one: its group would skip its first messages. (Checked only when there is
    // something to commit: one describeTopic per commit round that commits.)
    if ([...this.parts.values()].some((s) => s.processed !== s.committed) && (await this.verifyTopic())) return;
    for (const s of this.parts.values()) {
      // Positioned in another incarnation than the topic verifyTopic just found (a
      // restart raced with the topic being made again): not this topic's offsets.
      if (s.processed === s.committed || !this.sameIncarnation(s)) continue;
      const at = s.processed;
      try {
        await this.client.commitOffset(this.group, this.topic, s.partition, at, s.run, this.member, this.abandon.signal);
      } catch (e) {
        if (!(e instanceof UringmqError && e.code === 'LOG_TRUNCATED')) throw e;
        await this.restart(s);
        continue;
      }
      s.committed = at;
    }
  }

  /**
   * A power cut took part of the partition's log since this consumer read its committed
   * offset (the broker refused a commit): what it read past the cut is gone, and new
   * messages have those offsets. It starts over from the group's committed offset, which
   * the broker has moved back to the cut; what it read and acked since comes again.
   */
  private async restart(s: PartitionState, described?: Awaited<ReturnType<FetchClientSide['describeTopic']>>): Promise<void> {
    const [{ offsets, run }, d] = await Promise.all([
      this.client.committedState(this.group, this.topic, this.abandon.signal),
      described ?? this.client.describeTopic(this.topic, { groups: false }, this.abandon.signal),
    ]);
    if (this.closed || s.revoked || this.parts.get(s.partition) !== s) return;
    const info = d.partitions.find((x) => x.partition === s.partition);
    // The topic has it no more (made again with fewer partitions since it was looked up):
    // dropped, as verifyTopic drops it (startOf threw a TypeError, which the pump took for
    // a failed look-up, fetching past the end again every 100 ms for good).
    if (!info) return this.dropGone(s, d.partitions.length);
    const c = offsets[s.partition] ?? -1;
    const start = this.startOf(c, info);
    this.newGeneration(s);
    s.processed = start;
    s.acked.clear();
    s.committed = c;
    s.run = run;
    s.incarnation = topicIncarnation(d.createdAt);
    this.rewind(s, start);
  }

  /**
   * Checks that the topic is the one this consumer's offsets are of. If it was deleted
   * and made again meanwhile (while the broker was restarting, or between two fetches),
   * every partition starts over as if just given: from the new topic's committed
   * offset for the group, else `from`; what was read of the old topic is not committed.
   * True if that happened. Runs in the `committing` chain (commitNow, or the pumps).
   * (Fetches name the incarnation each partition is positioned in, so the fetch plane
   * tells the pumps at once when the topic was made again; this is what they then run.)
   */
  private async verifyTopic(): Promise<boolean> {
    const d = await this.client.describeTopic(this.topic, { groups: false }, this.abandon.signal);
    if (this.createdAt === undefined) this.createdAt = d.createdAt;
    if (d.createdAt === undefined || d.createdAt === this.createdAt) return false;
    this.createdAt = d.createdAt;
    // Closing (its last commit): nothing read of the old topic is committed to the new one.
    if (this.closed) return true;
    for (const s of [...this.parts.values()]) {
      if (d.partitions.some((x) => x.partition === s.partition)) {
        await this.restart(s, d);
        s.committed = s.processed; // nothing read of the new topic yet: nothing to commit
        continue;
      }
      this.dropGone(s, d.partitions.length);
    }
    return true;
  }

  /**
   * `s` is gone with the old topic (the one of that name now has `count` partitions):
   * dropped, not committed. Assigned by the application, it is an error.
   */
  private dropGone(s: PartitionState, count: number): void {
    s.revoked = true;
    s.conn?.close();
    s.wake?.();
    this.dropChunks(s.partition);
    this.parts.delete(s.partition);
    this.partitions = [...this.parts.keys()].sort((a, b) => a - b);
    if (this.opts.partitions)
      this.fail(invalid(`partition ${s.partition} does not exist in topic ${this.topic} (${count} partitions): the topic was deleted and made again`));
  }

  /** verifyTopic, in turn with the commits (and restarts) under way. */
  private async verifyTopicInTurn(): Promise<void> {
    const r = this.committing.then(() => this.verifyTopic());
    this.committing = r.then(() => undefined, () => undefined);
    await r;
  }

  /**
   * The fetch plane answered a fetch of `s` (at its epoch `epoch`) that the topic under
   * this name is another incarnation than the one `s` is positioned in: it was deleted
   * and made again. Every partition starts over as verifyTopic does; when verifyTopic
   * saw nothing new (this consumer had already learnt the new createdAt, but `s` was
   * positioned from an older description), `s` alone starts over in the topic as it is.
   */
  private async incarnationChanged(s: PartitionState, epoch: number): Promise<void> {
    const refused = s.incarnation;
    const r = this.committing.then(async () => {
      if (await this.verifyTopic()) return;
      if (this.closed || s.revoked || this.parts.get(s.partition) !== s || s.epoch !== epoch) return;
      await this.restart(s);
      s.committed = s.processed; // nothing read of this incarnation yet: nothing to commit
    });
    this.committing = r.then(() => undefined, () => undefined);
    await r;
    // The broker still describes the incarnation the fetch plane refused: they are not
    // one broker's (fetchAddress names another one), or a topic.json was changed under
    // it. Refetching would go round for good, reading nothing: a few tries, then an error.
    if (this.closed || s.revoked || s.incarnation !== refused) {
      s.mismatches = 0;
      return;
    }
    s.mismatches = (s.mismatches ?? 0) + 1;
    if (s.mismatches >= MAX_INCARNATION_MISMATCHES)
      return this.fail(
        new UringmqError(
          'FAILED_PRECONDITION',
          `the fetch plane at ${this.host}:${this.port} refused ${MAX_INCARNATION_MISMATCHES} fetches of ${this.topic}/${s.partition} for naming the topic's incarnation ${refused} (its createdAt), which the broker still reports: is fetchAddress this broker's fetch listener?`,
        ),
      );
    await this.backoff(100 * s.mismatches);
  }

  /** Positions of `s` are offsets of the topic as this consumer last saw it (see commitNow). */
  private sameIncarnation(s: PartitionState): boolean {
    return s.incarnation === 0 || this.createdAt === undefined || s.incarnation === topicIncarnation(this.createdAt);
  }

  /** Acks and nacks of messages read before now no longer count for `s`. */
  private newGeneration(s: PartitionState): void {
    s.generation = ++this.generations;
    s.acker = this.ackerOf(s.generation);
  }

  private ackerOf(generation: number): Acker {
    return { ack: (p, o) => this.ack(p, o, generation), nack: (p, o, d) => this.seek(p, o, d, generation) };
  }

  /** `s` is fetched again from `offset`: fetches under way and chunks not yet handed out are dropped. */
  private rewind(s: PartitionState, offset: number): void {
    s.epoch = ++this.epochs;
    s.position = offset;
    this.dropChunks(s.partition);
    s.buffered = 0;
    s.wake?.();
  }

  private dropChunks(partition: number): void {
    for (let i = this.chunks.length - 1; i >= 0; i--) if (this.chunks[i]!.partition === partition) this.chunks.splice(i, 1);
  }

  /** Where a partition starts: its committed offset (c ≥ 0), else `from`; within the log. */
  private startOf(c: number, info: { startOffset: number; endOffset: number }): number {
    const from = this.opts.from ?? 'latest';
    const start = c >= 0 ? c : from === 'earliest' ? info.startOffset : from === 'latest' ? info.endOffset : from.offset;
    return Math.min(Math.max(start, info.startOffset), info.endOffset);
  }

  /**
   * Resolves once the final commit is answered and the member has left (see
   * endAndAwaitLeave), as long as the server answers: against one that leaves a
   * liveness probe unanswered (about a second) or takes longer than LEAVE_WAIT_MS in
   * all, it resolves then, the commit given up (what it would have committed is
   * delivered again) and nothing left to hold the process (see closeNow). A second
   * close() waits for the first: returning at once, it let client.close() (which closes
   * its consumers again) close the channel under that commit, and a deleteGroup right
   * after it find the member still there.
   */
  close(): Promise<void> {
    return (this.closing ??= this.closeNow());
  }

  private async closeNow(): Promise<void> {
    this.closed = true;
    this.closeSignal.abort();
    if (this.commitTimer) clearInterval(this.commitTimer);
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.firstAssignment?.();
    for (const s of this.parts.values()) {
      s.conn?.close();
      s.wake?.();
    }
    this.notify();
    // The final commit waits for the work under way that moves positions (the pumps'
    // restarts, an assignment's look-ups and commits): unary calls, each with a 30 s
    // deadline, that a server gone silent (stopped, behind a black hole) never answers.
    const final = (async () => {
      await Promise.allSettled([...this.pumps]);
      await this.assigning;
      if (!this.client.isClosed) await this.commit().catch(() => undefined);
    })();
    // The bound counts from a turn after close(): an app's event loop held right after
    // it (its synchronous cleanup) has not sent the commit yet, and that time is not the
    // server's. Counted from close(), a hold of LEAVE_WAIT_MS gave up the commit before
    // it went out, against a live server: all of it delivered again.
    await new Promise<void>((resolve) => setImmediate(resolve));
    const until = Date.now() + LEAVE_WAIT_MS;
    const answered = await this.whileAnswered(final, until);
    // Leaving after the commit: the next owner of our partitions starts where we ended.
    // Awaited, as the Subscribe consumer's leave: close() resolves with the member gone.
    // Within what is left of the same bound: a server that answers probes but is slow
    // to end the call is not given LEAVE_WAIT_MS twice over.
    const m = this.membership;
    this.membership = null;
    let left: Promise<void> | undefined;
    if (m && answered) {
      const rest = Math.max(0, until - Date.now());
      left = endAndAwaitLeave(boundGrpcEnd(m, this.client.grpcProbe, rest), rest);
    } else if (m) {
      // The server did not answer a probe, or its time is up: its leave would not be
      // answered either, and the call held open would hold the process. The server drops
      // the member when it sees the call cancelled (or the connection go).
      m.cancel();
    }
    this.client.forget(this);
    await left;
  }

  /**
   * Waits for `work` (the final commit) as long as the server answers: it is probed on
   * the channel the commit goes on (see GrpcProbe), every probe timeout. At the first
   * probe left unanswered, or at `until`, the wait ends and the consumer's calls still
   * out are cancelled (`abandon`): a server that answered nothing is gone or stopped,
   * and a call left open kept the process for its 30 s deadline. A server that answers
   * the probes, however slow the commit is, gets it answered up to `until`.
   * True if `work` settled.
   */
  private async whileAnswered(work: Promise<void>, until: number): Promise<boolean> {
    const probe = this.client.grpcProbe;
    const probing = new AbortController();
    const timers: NodeJS.Timeout[] = [];
    const after = (ms: number) => new Promise<void>((resolve) => timers.push(setTimeout(resolve, ms)));
    const unanswered = (async () => {
      // A turn first: a commit with nothing to commit (or a closed client) settles at
      // once, and costs the server no probe.
      await new Promise<void>((resolve) => setImmediate(resolve));
      while (!probing.signal.aborted) {
        if (!(await probe.answered(probe.timeoutMs, probing.signal))) return;
        if (!probing.signal.aborted) await after(probe.timeoutMs);
      }
    })();
    const settled = await Promise.race([work.then(() => true), unanswered.then(() => false), after(Math.max(0, until - Date.now())).then(() => false)]);
    probing.abort();
    for (const t of timers) clearTimeout(t);
    if (!settled) this.abandon.abort();
    return settled;
  }

  private notify(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  private async init(): Promise<void> {
    // With no listener at the fetch address (the fetch plane off, a wrong port) the
    // pumps' retries would look like an idle topic for ever: one connection has to
    // succeed first (closed again: each pump makes its own). Later failures (a broker
    // restarting) are retried.
    // A listener that answers with a refusal is there: one for now (full, shutting
    // down) is left to the pumps' retries, as later.
    // close() gives it up at once (with a listener that never answers, the iteration went
    // on for the handshake timeout after close(), and then threw UNAVAILABLE).
    try {
      (await FetchConnection.open(this.host, this.port, this.client.token ?? '', undefined, this.closeSignal.signal)).close();
    } catch (e) {
      if (this.closed) return;
      if (!(e instanceof UringmqError)) throw e;
      if (ANSWERED.has(e)) {
        if (!RETRYABLE.has(e.code)) throw e;
      } else {
        throw new UringmqError(
          'UNAVAILABLE',
          `${e.message}; a fetch consumer needs the broker's fetch listener (uringmq serve: --fetch-port, default ${DEFAULT_FETCH_PORT}) at that address (fetchAddress; the CLI's --fetch-address)`,
        );
      }
    }
    if (this.closed) return;
    if (this.opts.partitions) {
      // Tracked as an assignment is: close() waits for its look-ups while the server
      // answers, and cancels them when it stops waiting (closeNow). Untracked, close()
      // resolved at once, the call still out held the process for its 30 s deadline
      // against a silent server, and the iteration then failed with DEADLINE_EXCEEDED.
      const adding = this.addPartitions(this.opts.partitions);
      this.assigning = adding.catch(() => undefined);
      try {
        await adding;
      } catch (e) {
        if (this.closed) return; // given up by close(), or refused meanwhile: the iteration ends, as closed
        throw e;
      }
    } else await this.join();
    // Closed while it joined (close() resolves the wait for the first assignment): a
    // timer set now would commit for ever, close() having cleared none.
    if (this.closed) return;
    // A commit that fails for now (the server restarting) is retried with the next one;
    // one refused by maxGroups (with `partitions`, a new group is made by its first
    // commit) would be refused every time, and what was processed never committed.
    this.commitTimer = setInterval(
      () => void this.commit().catch((e: unknown) => (e instanceof UringmqError && CALL_RETRYABLE.has(e.code) && !limitReached(e) ? undefined : this.fail(e))),
      this.commitIntervalMs,
    );
    this.commitTimer.unref();
  }

  /** Starts reading these partitions from the group's committed offsets. */
  private async addPartitions(list: readonly number[]): Promise<void> {
    const d = await this.client.describeTopic(this.topic, { groups: false }, this.abandon.signal);
    this.createdAt ??= d.createdAt;
    const all = d.partitions.map((p) => p.partition);
    for (const p of list) if (!all.includes(p)) throw invalid(`partition ${p} does not exist in topic ${this.topic} (${all.length} partitions)`);
    const { offsets: committed, run } = await this.client.committedState(this.group, this.topic, this.abandon.signal);
    for (const p of list) {
      if (this.parts.has(p) || this.closed) continue;
      const c = committed[p] ?? -1;
      const start = this.startOf(c, d.partitions.find((x) => x.partition === p)!);
      // Epochs and generations fresh to this consumer: chunks and acks of an earlier time
      // it held the partition do not match.
      const generation = ++this.generations;
      const s: PartitionState = {
        partition: p,
        position: start,
        processed: start,
        acked: new RangeSet(),
        committed: c >= 0 ? c : -1,
        run,
        incarnation: topicIncarnation(d.createdAt),
        epoch: ++this.epochs,
        generation,
        acker: this.ackerOf(generation),
        buffered: 0,
        wake: null,
        conn: null,
      };
      this.parts.set(p, s);
      if (this.commitTimer) this.startPump(s); // running already: read it now
    }
    this.partitions = [...this.parts.keys()].sort((a, b) => a - b);
    // A partition new to the group gets its start committed, so a restart resumes
    // here instead of at a 'latest' that has moved on.
    await this.commit();
  }

  /** The partition was given to another member: commit what was processed, stop reading it. */
  private async revoke(p: number): Promise<void> {
    const s = this.parts.get(p);
    if (!s) return;
    s.revoked = true;
    s.conn?.close();
    s.wake?.();
    this.dropChunks(p);
    // With the run: past a power cut's cut the broker refuses it, and its offset stays at the cut.
    // With the member id: the partition has a new owner already, which this late commit
    // must not rewind (the broker takes it as an ack of what lies below).
    if (s.processed !== s.committed && this.sameIncarnation(s) && !this.client.isClosed) await this.client.commitOffset(this.group, this.topic, p, s.processed, s.run, this.member, this.abandon.signal).catch(() => undefined);
    this.parts.delete(p);
    this.partitions = [...this.parts.keys()].sort((a, b) => a - b);
  }

  /** Joins the group as an assignment-only member; resolves at the first assignment. */
  private join(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.firstAssignment = resolve;
      this.openMembership(0);
      this.heartbeat = setInterval(() => this.membership?.write({ heartbeat: true }), 3000);
      this.heartbeat.unref();
    });
  }

  private openMembership(attempt: number): void {
    if (this.closed) return;
    let s: grpc.ClientDuplexStream<unknown, unknown>;
    try {
      s = this.client.bidi('subscribe');
    } catch (e) {
      return this.fail(new UringmqError('UNAVAILABLE', `cannot join group ${this.group}: ${(e as Error).message}`));
    }
    this.membership = s;
    // The same start as this consumer's: joining is what gives a new group its offsets.
    const from = this.opts.from ?? 'latest';
    s.write({
      subscribe: {
        topic: this.topic,
        group: this.group,
        assignment_only: true,
        from: from === 'earliest' ? pb.StartFrom.EARLIEST : from === 'latest' ? pb.StartFrom.LATEST : pb.StartFrom.OFFSET,
        from_offset: typeof from === 'object' ? from.offset : 0,
      },
    });
    s.on('data', (res: { assignment?: { member_id?: string; partitions?: number[] } | null }) => {
      if (this.membership !== s || !res.assignment || this.closed) return; // closing: no new assignment work, nor a 'reconnected'
      if (attempt > 0) tellConnectionState(this.opts.onConnectionState, { state: 'reconnected', attempts: attempt });
      attempt = 0;
      this.member = res.assignment.member_id ?? undefined;
      const want = [...(res.assignment.partitions ?? [])];
      // One assignment at a time, in the order they came.
      this.assigning = this.assigning
        .then(() => this.takeAssignment(s, want))
        .catch((e: unknown) => this.fail(e))
        .finally(() => {
          const f = this.firstAssignment;
          this.firstAssignment = null;
          f?.();
        });
    });
    const broken = (err?: unknown) => {
      if (this.membership !== s) return;
      this.membership = null;
      if (this.closed) return;
      // A server going away is a reconnect (the pumps go on meanwhile); a refusal
      // (unknown topic, bad group name) ends the consumer.
      const e = err ? fromServiceError(err) : null;
      if (e && ((!MEMBERSHIP_RETRYABLE.has(e.code) && !sessionExpired(e)) || limitReached(e))) return this.fail(e);
      const delay = reconnectDelayMs(attempt);
      tellConnectionState(this.opts.onConnectionState, { state: 'reconnecting', error: e ?? new UringmqError('UNAVAILABLE', 'the group membership stream was ended by the server'), attempt: attempt + 1, delayMs: delay });
      setTimeout(() => this.openMembership(attempt + 1), delay).unref();
    };
    s.on('error', (e) => broken(e));
    s.on('end', () => broken());
  }

  /**
   * Takes up an assignment the membership stream `s` brought. Its lookups and its commit
   * go over gRPC, and a connection lost under them (a broker killed or restarting, the
   * network cut) fails them for now. That is tried again with backoff while `s` is
   * still the membership, as the pumps and the membership stream retry: it used to end
   * the consumer, which is to reconnect by itself (a SIGKILL of the broker just after a
   * reconnect's assignment ended it with UNAVAILABLE). Once `s` is gone, the assignment
   * its reconnect brings does the work instead. Each step can run again: partitions
   * held already are kept, and one revoked is gone.
   */
  private async takeAssignment(s: grpc.ClientDuplexStream<unknown, unknown>, want: readonly number[]): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        // After a reconnect (a broker restart) the topic may be another one of that name.
        if (this.parts.size > 0) await this.verifyTopicInTurn();
        for (const p of [...this.parts.keys()]) if (!want.includes(p)) await this.revoke(p);
        await this.addPartitions(want);
        return;
      } catch (e) {
        if (!(e instanceof UringmqError) || !CALL_RETRYABLE.has(e.code) || limitReached(e)) throw e;
      }
      if (this.closed || this.fatal || this.membership !== s) return; // or superseded (see above)
      await this.backoff(reconnectDelayMs(attempt));
      if (this.closed || this.fatal || this.membership !== s) return;
    }
  }

  private fail(e: unknown): void {
    if (this.fatal || this.closed) return;
    this.fatal = e instanceof UringmqError ? e : new UringmqError('INTERNAL', String(e));
    const f = this.firstAssignment; // a join refused before any assignment ends here too
    this.firstAssignment = null;
    f?.();
    this.notify();
  }

  /** Runs pump(s), tracked in `pumps` while it runs (close() waits for it). */
  private startPump(s: PartitionState): void {
    const p: Promise<void> = this.pump(s).finally(() => this.pumps.delete(p));
    this.pumps.add(p);
  }

  /** Fetch loop of one partition: one connection, one request in flight, PREFETCH chunks ahead. */
  private async pump(s: PartitionState): Promise<void> {
    let attempts = 0;
    while (!this.closed && !this.fatal && !s.revoked) {
      /** the offset of the fetch under way, while one is, and the partition's epoch it was asked at */
      let fetching: number | null = null;
      let fetchEpoch = 0;
      if (s.buffered >= PREFETCH) {
        await new Promise<void>((r) => (s.wake = r));
        s.wake = null;
        continue;
      }
      try {
        if (!s.conn) {
          s.conn = await FetchConnection.open(this.host, this.port, this.client.token ?? '', undefined, this.closeSignal.signal);
          if (s.reconnecting) {
            // The broker may have restarted with the topic made again: its offsets are
            // not this consumer's positions (verifyTopic moves them if so).
            await this.verifyTopicInTurn();
            s.reconnecting = false;
            continue;
          }
        }
        const epoch = s.epoch;
        const at = s.position;
        // Within the limits the server's hello announced (it refuses a fetch past them).
        const lim = s.conn.hello;
        const wait = Math.min(this.maxWaitMs, lim.maxWaitMs);
        fetching = at;
        fetchEpoch = epoch;
        // Naming the incarnation `at` is an offset of: a topic made again under this name
        // since is refused (TOPIC_INCARNATION_MISMATCH), never read at these offsets.
        const { header, data } = await s.conn.fetch(this.topic, s.partition, at, Math.min(this.maxBytes, lim.maxFetchBytes || this.maxBytes), wait, s.incarnation);
        attempts = 0;
        s.cutOffs = 0; // a whole reply: the listener serves this partition
        if (this.closed || epoch !== s.epoch) continue; // a seek happened meanwhile
        if (header.error !== 0) {
          const name = fetchErrorName(header.error);
          if (name === 'TOPIC_INCARNATION_MISMATCH') {
            await this.incarnationChanged(s, epoch);
            continue;
          }
          if (name === 'OFFSET_OUT_OF_RANGE' && at > header.highWatermark) {
            // Past the end: the log got shorter (a power cut took its tail, or the topic
            // was made again), and new messages may lie below us: start over from the
            // group's committed offset, which the broker has moved back to the cut.
            const r = this.committing.then(() => this.restart(s));
            this.committing = r.catch(() => undefined);
            await r.catch(() => sleep(100));
            continue;
          }
          if (name === 'OFFSET_OUT_OF_RANGE') {
            // Retention removed what we had not read (or the topic was recreated):
            // those messages are gone; go on from the nearest end.
            s.position = at < header.logStartOffset ? header.logStartOffset : header.highWatermark;
            if (s.processed < s.position && at < header.logStartOffset) {
              s.processed = s.position;
              s.acked.removeBelow(s.position);
            }
            continue;
          }
          throw fetchError(header.error, `fetching ${this.topic}/${s.partition} at offset ${at}`);
        }
        s.mismatches = 0;
        if (data.length === 0) {
          // Long-poll ran out: ask again. Without a long-poll (maxWaitMs 0, ours or the
          // server's limit) an empty reply comes back at once: poll, do not spin.
          if (wait === 0) await this.backoff(IDLE_POLL_MS);
          continue;
        }
        const to = this.checkBatches(data, s.partition, at);
        s.position = to;
        s.buffered++;
        this.chunks.push({ partition: s.partition, raw: data, from: at, to, epoch, acker: s.acker });
        this.notify();
      } catch (e) {
        const err = e instanceof UringmqError ? e : new UringmqError('UNAVAILABLE', String(e));
        s.conn?.close();
        s.conn = null;
        s.reconnecting = true;
        if (this.closed) return;
        if (!RETRYABLE.has(err.code)) return this.fail(err);
        // No listener to take the connection (refused, closed before its hello, shutting
        // down): the broker is down, restarting. The replies cut off before were its going
        // down, not a file it cannot read, which it cuts off while it is up: counted, a
        // broker crashing in a loop under a reply failed a consumer it should wait out. A
        // listener that is up and refuses for now (TOO_MANY_CONNECTIONS, or no hello in
        // time) does not start the count over: a bad sector would be fetched for ever.
        if (LISTENER_DOWN.has(err)) s.cutOffs = 0;
        if (fetching !== null && CUT_OFF.has(err)) {
          // A listener that cannot read the segment file it announced a reply from (EIO,
          // a file shorter than the log says) can only close the connection, and does so
          // again at every fetch from there: retried for ever, the partition never moved
          // on, silently. A connection lost now and then (a broker restarting, a reset) is
          // cut off once, or at other offsets, with whole replies between.
          const came = CUT_OFF.get(err)!;
          const whole = wholeBatchBytes(came);
          if (whole > 0 && fetchEpoch === s.epoch) {
            // The records before the break are handed out, as a whole reply's: the read
            // that failed lies further in (a bad region inside a segment, not at the
            // offset asked), and it is that offset the count and the error name.
            let to: number;
            try {
              to = this.checkBatches(came.subarray(0, whole), s.partition, fetching);
            } catch (bad) {
              return this.fail(bad);
            }
            s.position = to;
            s.buffered++;
            this.chunks.push({ partition: s.partition, raw: came.subarray(0, whole), from: fetching, to, epoch: fetchEpoch, acker: s.acker });
            this.notify();
            s.cutAt = fetching = to;
            s.cutOffs = 0;
            attempts = 0; // it moved on: the next reconnect is a first one, not a later one's longer wait
          }
          s.cutOffs = s.cutAt === fetching ? (s.cutOffs ?? 0) + 1 : 1;
          s.cutAt = fetching;
          if (s.cutOffs >= MAX_CUT_OFFS)
            return this.fail(
              new UringmqError(
                'IO_ERROR',
                `fetching ${this.topic}/${s.partition} at offset ${fetching}: the fetch listener at ${this.host}:${this.port} cut its reply off ${MAX_CUT_OFFS} times in a row, each after a new connection (it cannot read the partition's segment file there: a disk error, or a file shorter than the log says; the broker's warnings name the file). Last: ${err.message}`,
              ),
            );
        }
        // The broker restarted or refused us for now: reconnect, from our position.
        await this.backoff(reconnectDelayMs(attempts++));
      }
    }
    s.conn?.close();
    s.conn = null;
  }

  /** Waits `ms`, or less if close() comes first (it must not wait out a reconnect's delay). */
  private backoff(ms: number): Promise<void> {
    const signal = this.closeSignal.signal;
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done);
    });
  }

  /** Checks framing (and CRCs) of a reply; returns the offset after its last record. */
  private checkBatches(raw: Buffer, partition: number, from: number): number {
    let pos = 0;
    let to = from;
    while (pos < raw.length) {
      if (raw.length - pos < HEADER_SIZE) throw new UringmqError('CORRUPT_BATCH', `${this.topic}/${partition}: truncated batch header in a fetch reply`);
      const len = raw.readUInt32LE(pos + 4);
      if (len < HEADER_SIZE || pos + len > raw.length) throw new UringmqError('CORRUPT_BATCH', `${this.topic}/${partition}: batch length ${len} at byte ${pos} of a fetch reply`);
      const base = Number(raw.readBigInt64LE(pos + 8));
      if (this.verifyCrc && crc32c(raw.subarray(pos + CRC_START, pos + len)) !== raw.readUInt32LE(pos + 16))
        throw new UringmqError('CORRUPT_BATCH', `CRC mismatch in ${this.topic}/${partition} batch at offset ${base}`);
      // The base offset is outside the CRC: the first batch must hold `from` and each
      // next one start where the one before it ended, or the records' offsets are wrong.
      const next = base + raw.readUInt32LE(pos + 24);
      if (pos === 0 ? base > from || next <= from : base !== to)
        throw new UringmqError('CORRUPT_BATCH', `${this.topic}/${partition}: batch at byte ${pos} of a fetch reply for offset ${from} has base offset ${base}, which does not follow (a damaged batch header)`);
      to = next;
      pos += len;
    }
    return Math.max(to, from);
  }

  /** In-order acks just move the frontier; others wait in the RangeSet until it gets there. */
  private ack(partition: number, offset: number, generation: number): void {
    const s = this.parts.get(partition);
    if (!s || offset < s.processed || generation !== s.generation) return;
    if (offset === s.processed) {
      s.processed++;
      const f = s.acked.first();
      if (f && f[0] <= s.processed) {
        s.processed = Math.max(s.processed, f[1]);
        s.acked.removeBelow(s.processed);
      }
    } else {
      s.acked.add(offset, offset + 1);
    }
  }

  /** nack: the partition goes back to `offset` (after delayMs): it and everything after it come again. */
  private seek(partition: number, offset: number, delayMs: number, generation: number): void {
    const s = this.parts.get(partition);
    if (!s) return;
    const apply = () => {
      // `s` as it was at the nack: a partition taken away and given back meanwhile has
      // another state, whose chunks rewind() would drop (its pump left waiting for them).
      if (this.closed || s.revoked || this.parts.get(partition) !== s || offset >= s.position || generation !== s.generation) return;
      this.rewind(s, offset);
    };
    if (delayMs > 0) setTimeout(apply, delayMs).unref();
    else apply();
  }

  private async *run(): AsyncGenerator<ConsumedMessage[]> {
    try {
      await this.init();
      for (const s of this.parts.values()) this.startPump(s);
      for (;;) {
        const c = this.chunks.shift();
        if (c) {
          const s = this.parts.get(c.partition);
          if (!s || c.epoch !== s.epoch) continue; // taken away, or rewound
          s.buffered--;
          s.wake?.();
          const out = groupMessages(c.raw, c.from, c.to, c.acker, this.topic, c.partition);
          if (out.length === 0) continue;
          this.yieldedEpoch = c.epoch;
          yield out;
          continue;
        }
        if (this.fatal) throw this.fatal;
        if (this.closed || this.client.isClosed) return;
        await new Promise<void>((resolve) => (this.wake = resolve));
      }
    } finally {
      await this.close();
    }
  }
}

function intOpt(v: unknown, what: string, dflt: number, min: number, max: number): number {
  if (v === undefined) return dflt;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) throw invalid(`${what} must be an integer between ${min} and ${max}, got ${shown(v)}`);
  return v;
}
