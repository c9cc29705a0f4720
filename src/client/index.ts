/**
 * The uringmq client: `import { connect } from 'uringmq/client'`. Same Producer and
 * group-consumer shapes as the embedded broker, over gRPC. Producers batch records
 * into RecordBatches (one protobuf `bytes` per batch), keep many in flight on one
 * PublishStream, and retry with the same producer id and sequence after a lost
 * connection, so the broker drops duplicates. Consumers resume from committed
 * offsets after a reconnect; unacked messages are redelivered, never lost.
 */
import * as grpc from '@grpc/grpc-js';
import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { BufferPool } from '../codec/buffer_pool';
import { checkConnectionStateOption, limitReached, reconnectDelayMs, sessionExpired, tellConnectionState, type ConnectionEvent } from './backoff';
import { UringmqError, invalid, shown } from '../errors';
import { MIN_MAX_BATCH_BYTES, decodeEach, detachedViews, recordSize, sealBatch, sendBatchDetachedError, stampProducer, type DecodedRecord, type RecordInput } from '../codec/record_batch';
import type { Message, TopicDescription } from '../broker/broker';
import { GroupMessage, closesOnEarlyReturn, flatten, groupMessages, ownOptions, returnedOf, type Acker, type ConsumedMessage, type FlattenCursor, type GroupConsumerApi } from '../broker/group_consumer';
import type { GroupJoinOptions } from '../broker/groups';
import { FeedbackMeter, resolveFlowOptions, type ResolvedFlowOptions } from '../flow/controller';
import type { ProducerApi, ProducerRecord, SendBatchResult, SendResult } from '../broker/producer';
import { StickyPartitioner } from '../broker/partitioner';
import { IdTable, PendingPromises } from '../broker/id_table';
import { checkConsumerOptions, closeTimeout, closeTimedOut, nonNegInt, ownRecord, positiveInt, refusePartitionOptions, settlesWithin, validateGroupName, validateOffset, validateRecord, validateTopicName } from '../broker/validate';
import { pb, resetsOf, wireEpoch, type uringmq } from '../grpc/proto';
import { brokerService } from '../grpc/service';
import { CODE_TRAILER, MAX_BATCH_HEADER, MAX_MESSAGE_HEADER, fromServiceError } from '../grpc/status';
import { MAX_ACK_RANGES } from '../grpc/subscribe_request';
import { FetchConsumer, type FetchConsumerOptions } from './fetch_consumer';
import { finishRequest, maxRequestBytes, prepareBatch, prepareSent, type PreparedBatch } from './publish_request';
import { checkAuthToken } from '../fetch/protocol';
import { DirectStream, FLOW_WINDOW, PROBE_MS, PUBLISH_STREAM, SUBSCRIBE_STREAM, parseHostPort, type DirectTarget } from './direct_stream';
import { boundGrpcEnd, endAndAwaitLeave, type GrpcCallStream, type GrpcProbe } from './leave';

export type { ConsumedMessage, GroupConsumerApi, ProducerApi, ProducerRecord, SendBatchResult, SendResult, Message, TopicDescription };
export { FetchConsumer, FetchConnection } from './fetch_consumer';
export type { FetchConsumerOptions } from './fetch_consumer';
export { UringmqError } from '../errors';
export type { ConnectionEvent } from './backoff';

export interface ConnectOptions {
  keepalive?: { timeMs?: number; timeoutMs?: number; permitWithoutStream?: boolean };
  /** true: TLS with the system CAs; or explicit PEM buffers. */
  tls?: boolean | { ca?: Buffer; cert?: Buffer; key?: Buffer };
  maxMessageBytes?: number;
  /** How long connect() waits for the server (default 10 s). */
  connectTimeoutMs?: number;
  /** The server's shared auth token (serve --auth-token): sent with every call and in the fetch plane's hello. */
  token?: string;
  /** host:port of the server's fetch listener, for transport 'fetch' (default: the server's host, port 50052). */
  fetchAddress?: string;
}

export interface RemoteProducerOptions {
  lingerMs?: number;
  /** Where send()'s batches are cut (default 1 MiB), or at the broker's maxBatchBytes once its stream said it, when that is smaller. */
  maxBatchBytes?: number;
  /**
   * Batches sent and not yet acked, at most (default 64; maxBufferedBytes bounds their
   * bytes). While all are taken, a partition's next batch keeps growing (up to
   * maxBatchBytes) and goes when one frees, so a slow broker gets fewer, larger
   * requests. 64 keeps a `sync` broker's group commit fed; in bench:grpc A/B pairs
   * (1000-record batches, --in-flight 64 / 256) 256 took 2-25% more CPU per record and
   * published no faster: its buffers cycle through more memory than the caches hold.
   * At most 64 for an idempotent producer (INVALID_ARGUMENT past it): what the broker
   * remembers of a producer, so every retried batch gets its offsets back.
   */
  maxInFlight?: number;
  /** Producer id + sequence numbers so retries never duplicate (default true). */
  idempotent?: boolean;
  /**
   * Every batch is acknowledged only once it is on disk, whatever the broker's
   * durability mode (default false: as the broker's mode says). For the producer whose
   * records must survive a power cut on a broker run with `none` or `{ intervalMs }`;
   * each of its batches makes the broker sync every file with unsynced writes.
   */
  sync?: boolean;
  /**
   * Give up on a batch after this long (default 120 s). close() waits this long too for
   * a batch the broker does not answer, unless close({ timeoutMs }) says less.
   */
  deliveryTimeoutMs?: number;
  /**
   * Bytes of records accepted by send()/sendBatch() and not yet acknowledged, at
   * most (default 32 MiB): past it, send() waits for acks before taking the record.
   */
  maxBufferedBytes?: number;
  /**
   * A topic this producer has not sent a batch to for this long, with nothing of its
   * pending (in flight, waiting to be retried, or lingering), is forgotten: what the
   * producer keeps per partition of it goes (default 300000, 5 minutes, as Kafka's
   * metadata.max.idle.ms). A later send to it starts its partitions under a fresh
   * producer id, one more id in the broker's table of each partition (at least 1000).
   */
  topicIdleMs?: number;
}

/** RemoteProducerOptions.maxInFlight's bound when idempotent: the window of batches the broker remembers per producer and partition. */
const MAX_IDEMPOTENT_IN_FLIGHT = 64;

/** RemoteProducerOptions.topicIdleMs: its floor. */
const MIN_TOPIC_IDLE_MS = 1000;

export interface RemoteConsumerOptions extends Omit<GroupJoinOptions, 'sessionTimeoutMs'> {
  /** Ask the server for decoded records instead of RecordBatches. */
  plainRecords?: boolean;
  /** 'grpc' (default): the Subscribe stream. 'fetch': the native fetch plane (FetchConsumerOptions). */
  transport?: 'grpc';
  /**
   * Told when the Subscribe stream is lost and each reconnect attempt is scheduled, and
   * when one is answered (ConnectionEvent). The consumer retries for as long as it is
   * open; this is how an application (the CLI's `consume --group`) says so.
   */
  onConnectionState?: (ev: ConnectionEvent) => void;
}

const MiB = 1 << 20;
/** A cached partition count not looked up again for this long is dropped (Client.describeTopic). */
const PARTITIONS_IDLE_MS = 300_000;
type M = keyof typeof brokerService;

function methodOf(name: M) {
  const d = brokerService[name]!;
  return { path: d.path, ser: d.requestSerialize, de: d.responseDeserialize };
}

/** Resolves after `ms`, or at once when `signal` aborts (its timer then cleared: it does not hold the process). */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** `p`, or UNAVAILABLE (`what`) if it has not settled after `ms`. */
function answeredWithin<T>(p: Promise<T>, ms: number, what: string, signal?: AbortSignal): Promise<T> {
  if (signal?.aborted) {
    p.catch(() => undefined); // nobody waits for it now: its rejection must not go unhandled
    return Promise.reject(signal.reason as Error);
  }
  return new Promise<T>((resolve, reject) => {
    // Aborted (its producer's close gave up), the wait ends with its timer: left to run,
    // it held the process for the rest of deliveryTimeoutMs.
    const abort = () => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      reject(new UringmqError('UNAVAILABLE', `${what} for ${ms} ms`));
    }, ms);
    signal?.addEventListener('abort', abort, { once: true });
    p.then(
      (v) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', abort);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', abort);
        reject(e as Error);
      },
    );
  });
}

/** `p`, marked handled: it may reject before anyone awaits it, and must not count as an unhandled rejection then. */
function handled<T>(p: Promise<T>): Promise<T> {
  p.catch(() => undefined);
  return p;
}

export async function connect(address: string, opts: ConnectOptions = {}): Promise<Client> {
  if (typeof address !== 'string' || !address) throw invalid('connect(address) needs "host:port"');
  // Checked here: grpc-js would refuse it at every call, with the token in its message.
  if (opts.token !== undefined) checkAuthToken(opts.token, 'token', true);
  // grpc-js takes a port past 65535 (or 0, -1, none after the colon, letters) and an
  // empty host, and tries for the whole connect timeout. A scheme grpc-js resolves
  // (`dns:host`, `unix:path`) is not a host.
  // Likewise a URL (`http://host:port`, as other brokers' docs write them), a path after
  // the port, or a space (a quoted `" host:port"`): grpc-js takes each for a DNS name.
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(address)?.[1];
  if (scheme === undefined || !GRPC_SCHEMES.has(scheme)) {
    if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(address)) throw invalid(`${JSON.stringify(address)} is a URL: give host:port`);
    if (/\s/.test(address)) throw invalid(`${JSON.stringify(address)} has a space in it: give host:port`);
    if (/^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):\d*\//.test(address)) throw invalid(`${JSON.stringify(address)} has a path after its port: give host:port`);
  }
  const hostPort = /^([A-Za-z0-9.-]*|\[[0-9A-Fa-f:.]+\]):([^:/]*)$/.exec(address);
  if (hostPort && !GRPC_SCHEMES.has(hostPort[1]!)) {
    if (hostPort[1] === '') throw invalid(`${JSON.stringify(address)} needs a host before its port`);
    const port = hostPort[2]!;
    if (!/^\d+$/.test(port) || !(Number(port) >= 1 && Number(port) <= 65535)) throw invalid(`the port of ${JSON.stringify(address)} must be 1 to 65535`);
  }
  const c = new Client(withDefaultPort(address), opts);
  try {
    await c.ready(opts.connectTimeoutMs ?? 10_000);
  } catch (e) {
    // Nobody holds the client: left open, its channel would keep reconnecting (with
    // backoff, for good) to a server that refused or never answered.
    await c.close();
    throw e;
  }
  return c;
}

/** The target schemes grpc-js resolves (`dns:host`, `unix:path`...): what precedes their colon is no host. */
const GRPC_SCHEMES = new Set(['dns', 'unix', 'unix-abstract', 'ipv4', 'ipv6']);

/** The port `uringmq serve` listens on unless told otherwise. */
export const DEFAULT_PORT = 50051;

/**
 * A host without a port (`127.0.0.1`, `broker.local`, `[::1]`) names the broker's
 * default port: grpc-js would take 443 for it, where no broker listens, and a connect
 * waited out its whole timeout. Other targets (`host:port`, `dns:`, `unix:`) are kept.
 */
export function withDefaultPort(address: string): string {
  return /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])$/.test(address) ? `${address}:${DEFAULT_PORT}` : address;
}

export class Client {
  /** @internal */ readonly grpc: grpc.Client;
  /**
   * Partition counts from describeTopic. One unref'd 1 s timer per client marks
   * entries older than 5 s stale, so sends need no clock read per record.
   */
  private readonly partitionsCache = new Map<string, { n: number; at: number; fresh: boolean }>();
  private staleTimer: NodeJS.Timeout | null = null;
  /**
   * The partition-count lookups under way (lookupPartitions), one per topic, each with
   * who waits for it. One is cancelled once nobody does: when every producer that asked
   * has given up on it (its close({ timeoutMs }) passed, or its close is done), or when
   * client.close() is done with its producers. A lookup unanswered (a server stopped, a
   * network gone silent) held the process, or the connection, until its 30 s deadline
   * after the close that had given up on it.
   */
  private readonly partitionLookups = new Map<string, PartitionLookup>();
  private readonly closers = new Set<{ close(): Promise<void> }>();
  private closed = false;
  private closing: Promise<void> | null = null;
  // A private field: `console.log(client)` (or a logger given the client) printed the token.
  readonly #token: string | undefined;
  /** @internal */ get token(): string | undefined {
    return this.#token;
  }
  /** @internal */ readonly fetchAddress: string | undefined;
  /**
   * @internal Where producers and consumers open their PublishStream and Subscribe
   * over node:http2 (see DirectStream); null for targets only grpc-js resolves, whose
   * streams stay on grpc-js.
   */
  readonly directTarget: DirectTarget | null;
  /** @internal The largest request this client sends (ConnectOptions.maxMessageBytes). */
  readonly maxMessageBytes: number;
  /** @internal How the end of a grpc-js stream probes the server (see boundGrpcEnd). */
  readonly grpcProbe: GrpcProbe;
  private readonly plaintext: boolean;

  /** @internal use connect() */
  constructor(readonly address: string, opts: ConnectOptions) {
    this.#token = opts.token;
    this.fetchAddress = opts.fetchAddress;
    const tls = opts.tls;
    this.plaintext = !tls;
    const creds =
      tls === true
        ? grpc.credentials.createSsl()
        : tls
          ? grpc.credentials.createSsl(tls.ca ?? null, tls.key ?? null, tls.cert ?? null)
          : grpc.credentials.createInsecure();
    const maxMsg = opts.maxMessageBytes ?? 16 * MiB;
    this.maxMessageBytes = maxMsg;
    const keepaliveTimeMs = opts.keepalive?.timeMs ?? 30_000;
    const keepaliveTimeoutMs = opts.keepalive?.timeoutMs ?? 10_000;
    this.grpcProbe = { answered: (ms, signal) => this.answers(ms, signal), timeoutMs: Math.min(PROBE_MS, keepaliveTimeoutMs) };
    const hostPort = parseHostPort(address);
    this.directTarget = hostPort && {
      ...hostPort,
      tls: tls === true ? {} : tls ? { ca: tls.ca, cert: tls.cert, key: tls.key } : false,
      token: undefined,
      keepaliveTimeMs,
      keepaliveTimeoutMs,
      maxMessageBytes: maxMsg,
    };
    // Not enumerable, for the same reason as #token.
    if (this.directTarget) Object.defineProperty(this.directTarget, 'token', { value: opts.token, enumerable: false });
    this.grpc = new grpc.Client(address, creds, {
      'grpc.max_receive_message_length': maxMsg,
      'grpc.max_send_message_length': maxMsg,
      'grpc.keepalive_time_ms': keepaliveTimeMs,
      'grpc.keepalive_timeout_ms': keepaliveTimeoutMs,
      'grpc.keepalive_permit_without_calls': (opts.keepalive?.permitWithoutStream ?? true) ? 1 : 0,
      'grpc-node.flow_control_window': FLOW_WINDOW, // as the direct streams' (see there)
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': 5_000,
      'grpc.enable_channelz': 0, // counts and timestamps every message; nothing here reads it
    });
  }

  /** @internal */
  ready(timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) =>
      this.grpc.waitForReady(Date.now() + timeoutMs, (err) => {
        if (!err) return resolve();
        // waitForReady says only that the deadline passed: a certificate the client does
        // not trust read the same as a server that is down. A call made now fails at
        // once with the channel's last connection error, which names the cause.
        void this.lastConnectError().then((why) => {
          // A plaintext client's HTTP/2 preface to a TLS server is answered by a TLS alert, which grpc-js reports as a bare "Failed to connect".
          if (why && this.plaintext && /^Failed to connect\b/.test(why)) why += '; if the server uses TLS, connect with the `tls` option (the CLI: --tls-ca or --tls)';
          reject(new UringmqError('UNAVAILABLE', `cannot reach uringmq at ${this.address}: ${err.message}${why ? ` (last error: ${why})` : ''}`));
        });
      }),
    );
  }

  /**
   * Whether the server answers a call on this channel within `timeoutMs`, whatever its
   * answer (ListTopics: an in-memory list; a refusal is an answer too). Unanswered:
   * the deadline passed, or the connection is gone (UNAVAILABLE). `signal` cancels it
   * (whoever asked no longer waits: the answer no longer matters).
   */
  private answers(timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    const m = methodOf('listTopics');
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve(false);
      let call: grpc.ClientUnaryCall | undefined;
      const cancel = () => call?.cancel();
      try {
        call = this.grpc.makeUnaryRequest(m.path, m.ser, m.de, {}, this.metadata(), { deadline: Date.now() + timeoutMs }, (e) => {
          signal?.removeEventListener('abort', cancel);
          resolve(!e || (e.code !== grpc.status.DEADLINE_EXCEEDED && e.code !== grpc.status.UNAVAILABLE));
        });
        signal?.addEventListener('abort', cancel, { once: true });
      } catch {
        resolve(false); // the channel is closed
      }
    });
  }

  private lastConnectError(): Promise<string | undefined> {
    const m = methodOf('listTopics');
    return new Promise((resolve) =>
      this.grpc.makeUnaryRequest(m.path, m.ser, m.de, {}, this.metadata(), { deadline: Date.now() + 1000 }, (e) =>
        resolve(e?.code === grpc.status.UNAVAILABLE ? /Last error: (?:Error: )?(.*?)(?:\. Resolution note:.*)?$/s.exec(e.details)?.[1] : undefined),
      ),
    );
  }

  /**
   * @internal `signal`: aborting it cancels the call (a consumer's close() that stops
   * waiting for the server: a call left open would hold the process until its deadline).
   */
  unary<Q, R>(name: M, req: Q, timeoutMs = 30_000, signal?: AbortSignal): Promise<R> {
    if (this.closed) return Promise.reject(new UringmqError('BROKER_CLOSED', 'client is closed'));
    // Checked before the call goes out: a public method's extra argument that is not a signal is the caller's mistake, typed.
    if (signal !== undefined && !(signal instanceof AbortSignal)) return Promise.reject(invalid(`${name}: its last argument must be an AbortSignal or left out`));
    if (signal?.aborted) return Promise.reject(abandonedCall(name));
    const m = methodOf(name);
    return new Promise((resolve, reject) => {
      let call: grpc.ClientUnaryCall | undefined;
      const cancel = () => call?.cancel();
      call = this.grpc.makeUnaryRequest(m.path, m.ser, m.de, req, this.metadata(), { deadline: Date.now() + timeoutMs }, (err, res) => {
        signal?.removeEventListener('abort', cancel);
        if (!err) resolve(res as R);
        else reject(signal?.aborted && err.code === grpc.status.CANCELLED ? abandonedCall(name) : fromServiceError(err, this.maxMessageBytes));
      });
      signal?.addEventListener('abort', cancel, { once: true });
    });
  }

  /** @internal `preserialized`: requests are already protobuf bytes. */
  bidi(name: M, preserialized = false): grpc.ClientDuplexStream<unknown, unknown> {
    const m = methodOf(name);
    const ser = preserialized ? (b: Buffer) => b : m.ser;
    return this.grpc.makeBidiStreamRequest(m.path, ser as (v: unknown) => Buffer, m.de, this.metadata(), {});
  }

  /** Call metadata: the auth token, when there is one. */
  private metadata(): grpc.Metadata {
    const md = new grpc.Metadata();
    if (this.token !== undefined) md.set('authorization', `Bearer ${this.token}`);
    return md;
  }

  async createTopic(name: string, opts: { partitions?: number; retention?: { maxBytes?: number; maxAgeMs?: number }; segmentBytes?: number } = {}): Promise<TopicDescription> {
    // 0 on the wire means "the default": an explicit 0 is refused here, as the
    // embedded broker refuses it, instead of becoming one partition.
    if (opts === null || typeof opts !== 'object') throw invalid('createTopic options must be an object');
    // partitions is a uint32 on the wire: a larger number wrapped (2^32 + 1 became 1).
    if (opts.partitions !== undefined) positiveInt(opts.partitions, 'partitions', 0xffff_ffff);
    if (opts.segmentBytes !== undefined) positiveInt(opts.segmentBytes, 'segmentBytes');
    // Retention is checked as the embedded broker checks it (NaN, 1.5 or a string went
    // out as 0 or truncated). A limit given is sent, 0 included (keep no sealed
    // segment, as embedded); one left out is not sent: no limit.
    const retention: uringmq.v1.Retention.$Properties = {};
    if (opts.retention !== undefined) {
      if (opts.retention === null || typeof opts.retention !== 'object') throw invalid('retention must be an object');
      if (opts.retention.maxBytes !== undefined) retention.max_bytes = nonNegInt(opts.retention.maxBytes, 'retention.maxBytes');
      if (opts.retention.maxAgeMs !== undefined) retention.max_age_ms = nonNegInt(opts.retention.maxAgeMs, 'retention.maxAgeMs');
    }
    const r = await this.unary<uringmq.v1.CreateTopicRequest.$Properties, uringmq.v1.TopicInfo>('createTopic', {
      name,
      partitions: opts.partitions ?? 0,
      segment_bytes: opts.segmentBytes ?? 0,
      retention,
    });
    return topicDescription(r);
  }

  async listTopics(): Promise<string[]> {
    const r = await this.unary<object, uringmq.v1.ListTopicsResponse>('listTopics', {});
    return [...r.names];
  }

  /**
   * As Broker.describeTopic: `groups: false` asks for partitions and offsets only
   * (cheaper for the server). `signal` (internal): see unary.
   */
  async describeTopic(name: string, opts: { groups?: boolean } = {}, signal?: AbortSignal): Promise<TopicDescription> {
    if (opts === null || typeof opts !== 'object') throw invalid('describeTopic options must be an object');
    const d = topicDescription(await this.unary<object, uringmq.v1.TopicInfo>('describeTopic', { name, skip_groups: opts.groups === false }, undefined, signal));
    this.partitionsCache.set(name, { n: d.partitions.length, at: Date.now(), fresh: true });
    if (!this.staleTimer && !this.closed) {
      this.staleTimer = setInterval(() => {
        const now = Date.now();
        const old = now - 5000;
        // Not looked up for 5 minutes (a topic in use is looked up again every 5 s):
        // dropped, so a client of topics others delete keeps no entry for good.
        const idle = now - PARTITIONS_IDLE_MS;
        for (const [name, e] of this.partitionsCache) {
          if (e.at <= idle) this.partitionsCache.delete(name);
          else if (e.at <= old) e.fresh = false;
        }
      }, 1000);
      this.staleTimer.unref();
    }
    return d;
  }

  async deleteTopic(name: string): Promise<void> {
    await this.unary('deleteTopic', { name });
    this.topicGone(name);
  }

  /**
   * The topic is gone (deleted through this client, or a lookup found it missing): its
   * cached partition count goes, and so does what this client's producers keep per
   * partition of it, once nothing of theirs to it is pending (RemoteProducer.forgetTopic).
   * Else a long-lived client of short-lived topics kept an entry per topic (and per
   * partition) for good.
   */
  private topicGone(name: string): void {
    this.partitionsCache.delete(name);
    for (const c of this.closers) if (c instanceof RemoteProducer) c.forgetTopic(name);
  }

  /** Reads whole batches from an offset (no group), decoded. */
  async fetch(topic: string, partition: number, offset: number, opts: { maxBytes?: number; maxWaitMs?: number } = {}): Promise<Message[]> {
    // Checked here as the embedded read() checks them: on the wire NaN, 1.5 or a string
    // became another number (offset 0, partition 0), read and labelled as asked.
    checkPartition(partition);
    validateOffset(offset);
    if (opts === null || typeof opts !== 'object') throw invalid('fetch options must be an object');
    if (opts.maxBytes !== undefined) positiveInt(opts.maxBytes, 'maxBytes', 1 << 30);
    if (opts.maxWaitMs !== undefined && !(Number.isSafeInteger(opts.maxWaitMs) && opts.maxWaitMs >= 0))
      throw invalid(`maxWaitMs must be a non-negative integer, got ${String(opts.maxWaitMs)}`);
    const r = await this.unary<uringmq.v1.FetchRequest.$Properties, uringmq.v1.FetchResponse>(
      'fetch',
      { topic, partition, offset, max_bytes: opts.maxBytes ?? 0, max_wait_ms: opts.maxWaitMs ?? 0 },
      (opts.maxWaitMs ?? 0) + 30_000,
    );
    const out: Message[] = [];
    decodeEach(r.batches as Buffer, offset, Number.MAX_SAFE_INTEGER, (o, timestamp, key, value, headers) =>
      out.push({ topic, partition, offset: o, timestamp, key, value, headers }),
    );
    return out;
  }

  /**
   * Sets a group's committed offset. `run` (optional): that of the committedState()
   * this position was reached from; the broker then refuses with LOG_TRUNCATED an
   * offset a power cut may have cut away since. `signal` (internal): see unary.
   */
  async commitOffset(group: string, topic: string, partition: number, offset: number, run = 0, memberId?: string, signal?: AbortSignal): Promise<void> {
    // As the embedded commitOffset: NaN went out as 0, a rewind of the whole partition.
    checkPartition(partition);
    validateOffset(offset);
    validateOffset(run, 'run');
    await this.unary('commitOffset', { group, topic, partition, offset, run, member_id: memberId ?? '' }, undefined, signal);
  }

  async committedOffsets(group: string, topic: string): Promise<number[]> {
    return (await this.committedState(group, topic)).offsets;
  }

  /**
   * As Broker.deleteGroup: removes the group's committed offsets and state on the
   * topic; FAILED_PRECONDITION while it has members there, GROUP_NOT_FOUND when it has
   * nothing to delete.
   */
  async deleteGroup(group: string, topic: string): Promise<void> {
    await this.unary('deleteGroup', { group, topic });
  }

  /** Committed offsets per partition (-1: none) and the broker's run they were read in. `signal` (internal): see unary. */
  async committedState(group: string, topic: string, signal?: AbortSignal): Promise<{ offsets: number[]; run: number }> {
    const r = await this.unary<object, uringmq.v1.GetCommittedOffsetsResponse>('getCommittedOffsets', { group, topic }, undefined, signal);
    return { offsets: r.offsets.map(Number), run: r.run ?? 0 };
  }

  producer(opts: RemoteProducerOptions = {}): RemoteProducer {
    // Also while close() runs, as consumer() does: close() closes the producers it had
    // when it began, and one made since was never closed (its sends never answered once
    // the channel closed under them).
    if (this.closed || this.closing) throw new UringmqError('BROKER_CLOSED', 'client is closed');
    const p = new RemoteProducer(this, opts);
    this.closers.add(p);
    return p;
  }

  /**
   * A group consumer. transport 'grpc' (default): the broker delivers over a
   * Subscribe stream, with per-message acks and redelivery. transport 'fetch': the
   * bytes come through the native fetch plane and the group's committed offsets go
   * over gRPC (at-least-once by committed positions; see FetchConsumer).
   */
  consumer(opts: FetchConsumerOptions): FetchConsumer;
  consumer(opts: RemoteConsumerOptions): RemoteConsumer;
  consumer(opts: RemoteConsumerOptions | FetchConsumerOptions): RemoteConsumer | FetchConsumer {
    // Also while close() runs: it closes the consumers it had when it began, and one made
    // since would stay subscribed (its own connection, its heartbeats) after it.
    if (this.closed || this.closing) throw new UringmqError('BROKER_CLOSED', 'client is closed');
    if (opts !== null && typeof opts === 'object' && opts.transport === 'fetch') {
      const f = new FetchConsumer(this, opts);
      this.closers.add(f);
      return f;
    }
    if (opts !== null && typeof opts === 'object' && opts.transport !== undefined && opts.transport !== 'grpc')
      throw invalid(`transport must be 'grpc' or 'fetch', got ${JSON.stringify(opts.transport)}`);
    const c = new RemoteConsumer(this, opts as RemoteConsumerOptions);
    this.closers.add(c);
    return c;
  }

  /**
   * @internal partition count, cached for 5 s. `owner`: aborted, its holder no longer
   * waits for a lookup this starts or joins (see partitionLookups); left out, only
   * client.close() cancels it.
   */
  async partitionCount(topic: string, owner?: AbortSignal): Promise<number> {
    return this.knownPartitionCount(topic, owner) ?? this.lookupPartitions(topic, owner);
  }

  /**
   * @internal The cached partition count without waiting, or undefined if there is
   * none yet. A stale entry is still returned (sends go on with it) while a refresh
   * runs, on behalf of `owner` (see partitionCount).
   */
  knownPartitionCount(topic: string, owner?: AbortSignal): number | undefined {
    const c = this.partitionsCache.get(topic);
    if (!c) return undefined;
    if (!c.fresh) this.lookupPartitions(topic, owner).catch(() => undefined);
    return c.n;
  }

  /**
   * @internal A publish to the topic was refused as if its partition count were not
   * what this client has cached (the topic deleted, or made again with fewer
   * partitions): the next send looks it up again instead of going on with it.
   */
  dropPartitionCount(topic: string): void {
    this.partitionsCache.delete(topic);
  }

  /**
   * One lookup at a time per topic, however many sends ask at once. With the call's own
   * deadline, not that of the send that began it: the sends that join it may have
   * longer, and each bounds its own wait (RemoteProducer.partitionCount).
   */
  private lookupPartitions(topic: string, owner?: AbortSignal): Promise<number> {
    if (owner?.aborted) return Promise.reject(owner.reason as Error);
    let l = this.partitionLookups.get(topic);
    if (!l) {
      const cancel = new AbortController();
      const lookup: PartitionLookup = {
        promise: undefined as unknown as Promise<number>,
        owners: new Map(),
        unowned: false,
        cancel: () => {
          // Out of the table at once: a send that asks from here on makes a new lookup
          // instead of joining this one, cancelled under it.
          if (this.partitionLookups.get(topic) === lookup) this.partitionLookups.delete(topic);
          cancel.abort();
        },
      };
      l = lookup;
      lookup.promise = this.describeTopic(topic, { groups: false }, cancel.signal)
        .then(
          (d) => d.partitions.length,
          (e: unknown) => {
            if (e instanceof UringmqError && e.code === 'TOPIC_NOT_FOUND') this.topicGone(topic);
            throw e;
          },
        )
        .finally(() => {
          if (this.partitionLookups.get(topic) === lookup) this.partitionLookups.delete(topic);
          for (const [signal, gaveUp] of lookup.owners) signal.removeEventListener('abort', gaveUp);
          lookup.owners.clear();
        });
      this.partitionLookups.set(topic, lookup);
    }
    const lookup = l;
    if (!owner) lookup.unowned = true;
    else if (!lookup.owners.has(owner)) {
      const gaveUp = () => {
        lookup.owners.delete(owner);
        if (lookup.owners.size === 0 && !lookup.unowned) lookup.cancel();
      };
      lookup.owners.set(owner, gaveUp);
      owner.addEventListener('abort', gaveUp, { once: true });
    }
    return lookup.promise;
  }

  /** @internal */
  forget(x: { close(): Promise<void> }): void {
    this.closers.delete(x);
  }

  /**
   * Flushes producers, closes consumers (their unacked messages get redelivered),
   * disconnects. `timeoutMs` bounds the wait: each producer closes with it (see
   * ProducerApi.close), and a fetch consumer's final commit still unanswered then is
   * not waited for (what it would have committed is delivered again). Left out, close
   * waits as long as the producers' batches may take (deliveryTimeoutMs).
   *
   * A consumer sends its final acks, gives back what it was not handed, and waits for
   * the server to take it out of its group: a round trip with a server that answers.
   * The server is probed meanwhile (an HTTP/2 ping on a host:port target's connection,
   * a unary call on other targets' grpc-js channel): one that leaves a probe
   * unanswered for a second (keepalive.timeoutMs if less) is waited for no longer, one
   * that answers but does not end the stream 5 s at most. Nothing is then left to hold
   * the process: a grpc-js stream is cancelled (its final acks went out before, and a
   * server merely slow still reads them first), a node:http2 connection is kept,
   * unref'd, until its server ends the stream or leaves the ping unanswered for
   * keepalive.timeoutMs (10 s at most). A producer's stream, its batches all answered,
   * is ended the same way without being waited for. A fetch consumer's final offset
   * commit, a unary call, is bounded the same way (it waited out its 30 s deadline
   * against a silent server): waited for while the server answers the grpc-js probes,
   * 5 s at most with its leave; then cancelled with the member's call, and what it
   * would have committed is delivered again (see FetchConsumer.close).
   */
  async close(opts?: { timeoutMs?: number }): Promise<void> {
    const timeoutMs = closeTimeout(opts);
    // A second close() while the first is under way waits for it: it used to go on and
    // close the channel under the consumers still closing, whose final commit was lost.
    // (A second one with a timeout still bounds its own wait, and its producers'.)
    if (this.closing && timeoutMs !== undefined) for (const c of this.closers) if (c instanceof RemoteProducer) void c.close({ timeoutMs }).catch(() => undefined);
    this.closing ??= (async () => {
      const all = Promise.allSettled([...this.closers].map((c) => (c instanceof RemoteProducer ? c.close(opts) : c.close())));
      if (timeoutMs === undefined) await all;
      else await settlesWithin(all, timeoutMs + 100); // the producers settle at the timeout themselves; the margin is for their last turn
      for (const l of [...this.partitionLookups.values()]) l.cancel();
      this.closed = true;
      if (this.staleTimer) clearInterval(this.staleTimer);
      this.staleTimer = null;
      this.grpc.close();
    })();
    return this.closing;
  }

  get isClosed(): boolean {
    return this.closed;
  }
}

/** A partition-count lookup under way, shared by the sends to its topic (Client.partitionLookups). */
interface PartitionLookup {
  promise: Promise<number>;
  /** The signals of those waiting for it, each with its listener: once all are aborted, the lookup is cancelled. */
  readonly owners: Map<AbortSignal, () => void>;
  /** Asked for without an owner: only client.close() cancels it. */
  unowned: boolean;
  cancel(): void;
}

/** A call cancelled (or not made) because its caller's close() stopped waiting for the server: whether the server acted on it is unknown. */
function abandonedCall(name: M): UringmqError {
  return new UringmqError('UNAVAILABLE', `${name} given up: close() stopped waiting for the server (it left a liveness probe unanswered, or took longer than close() waits)`);
}

/** A partition number as the wire carries it (uint32): INVALID_ARGUMENT for anything else, which it would carry as another number. */
function checkPartition(partition: unknown): void {
  if (typeof partition !== 'number' || !Number.isInteger(partition) || partition < 0 || partition > 0xffff_ffff)
    throw invalid(`partition must be a non-negative integer, got ${String(partition)}`);
}

function topicDescription(t: uringmq.v1.TopicInfo): TopicDescription {
  return {
    name: t.name,
    segmentBytes: Number(t.segment_bytes),
    createdAt: Number(t.created_at),
    // A field present is a limit, 0 included; absent is none (as the embedded description leaves it out).
    retention: {
      ...(t.retention?.max_bytes != null ? { maxBytes: Number(t.retention.max_bytes) } : {}),
      ...(t.retention?.max_age_ms != null ? { maxAgeMs: Number(t.retention.max_age_ms) } : {}),
    },
    partitions: t.partitions.map((p) => ({
      partition: p.partition ?? 0,
      startOffset: Number(p.start_offset ?? 0),
      endOffset: Number(p.end_offset ?? 0),
      bytes: Number(p.bytes ?? 0),
      segments: p.segments ?? 0,
      directIo: true,
    })),
    groups: t.groups.map((g) => ({
      group: g.group ?? '',
      generation: Number(g.generation ?? 0),
      members: (g.members ?? []).map((m) => ({
        memberId: m.member_id ?? '',
        partitions: [...(m.partitions ?? [])],
        unacked: m.unacked ?? 0,
        window: m.window ?? 0,
        tokenRate: m.token_rate ? m.token_rate : Infinity,
        reportedRate: m.reported_rate ?? 0,
        latencyMs: m.latency_ms ?? 0,
        lag: Number(m.lag ?? 0),
        stalled: !!m.stalled,
      })),
      committed: (g.committed ?? []).map(Number),
      lag: (g.lag ?? []).map(Number),
    })),
  };
}

/**
 * A refusal of a batch an earlier attempt of which went unanswered says so: the refusal
 * answers this attempt only (a topic deleted meanwhile, say), and the earlier one may
 * still be written, as Kafka's producer says of a batch it expired.
 */
function unansweredError(b: OutBatch, err: UringmqError): UringmqError {
  if (!b.unanswered) return err;
  return new UringmqError(err.code, `${err.message}; an earlier attempt of this batch went out on a connection that broke before its answer, and may still be written`, { cause: err });
}

/**
 * An idempotent batch the broker refused as out of order with nothing of its partition
 * sent before it still pending: no retry can be written. Each attempt the broker
 * answered was not written; only one that went out on a broken connection may have been.
 */
function outOfOrderError(b: OutBatch, err: UringmqError): UringmqError {
  const where = b.unanswered
    ? 'an earlier attempt of it went out on a connection that broke before its answer came and may have been written'
    : 'it was not written';
  return new UringmqError('OUT_OF_ORDER_SEQUENCE', `batch for ${b.topic}/${b.partition} can never be written: the broker refuses it as out of order (${err.message}), and no earlier batch of its partition is pending to fill a gap; ${where}`, { cause: err });
}

// ------------------------------------------------------------------------------------
interface OutBatch {
  seq: number;
  topic: string;
  partition: number;
  /** accKey(topic, partition) */
  key: string;
  /** The producer id stamped in its batch (0: not idempotent). */
  producerId: number;
  /** The serialized PublishRequest (sequence, topic, partition, batch), sent as is on every attempt. */
  msg: Buffer;
  /** The RecordBatch at the end of `msg`, whose sequence takeBackSequence may change. */
  batch: Buffer;
  /** Its first sequence number (with producerId). */
  baseSequence: number;
  count: number;
  deadline: number;
  resolve: (r: { partition: number; baseOffset: number }) => void;
  reject: (e: Error) => void;
  /** Rejects while the transport may still hold `msg`: the buffer is left to the GC, not reused. */
  abandon: (e: Error) => void;
  attempts: number;
  /**
   * Of its attempts, those that went out on a stream the broker refused before it read
   * any request (brokerRefusedUnread): never written, whatever the broker's limits.
   */
  unreadAttempts: number;
  /**
   * An attempt went out on a stream that broke before its answer came (other than one
   * the broker refused unread: unreadAttempts): the server may still write that
   * attempt (a connection it has not yet seen close, a proxy holding its bytes),
   * whatever a later attempt is told.
   */
  unanswered: boolean;
  /** Why its stream last failed or its last attempt was refused for now: named if it times out. */
  lastError: UringmqError | null;
  /** Its topic's entry, which counts it as pending until it settles (RemoteProducer.settle). */
  topicState: TopicState;
}

/**
 * What a producer keeps per topic it sends to (RemoteProducer.topics): kept while
 * batches to it are pending, and forgotten (with its partitions' accumulators,
 * sequences and producer ids) once none are and none lingers, if the topic is gone or
 * idle for topicIdleMs.
 */
interface TopicState {
  /** accKey(topic, partition), built once per partition. */
  keys: string[];
  /** Its batches numbered and not settled (sent, queued, or waiting out a retry delay). */
  pending: number;
  /** A publish was refused with TOPIC_NOT_FOUND, or a lookup or deleteTopic found it gone: forgotten once `pending` is 0. */
  gone: boolean;
  /** Date.now() when its last batch was numbered. */
  usedAt: number;
}

// From the OS's random source, not Math.random: producers in many processes (and
// clients restarted on the same seed) must not share an id, or the broker drops one's
// batches as the other's duplicates. 53 bits: the most a JS number carries exactly.
const newProducerId = (): number => Number(randomBytes(8).readBigUInt64LE() & 0x1f_ffff_ffff_ffffn) || 1;

/** What a producer publishes on: PublishStream over node:http2, or grpc-js's stream for other targets. */
type PublishChannel = Pick<grpc.ClientDuplexStream<unknown, unknown>, 'on' | 'write' | 'end' | 'cancel'> | DirectStream<uringmq.v1.PublishResponse>;

/** What a consumer subscribes on: Subscribe over node:http2, or grpc-js's stream for other targets. */
type SubscribeChannel = {
  /** The node:http2 stream underneath, when it is one. */
  direct?: DirectStream<uringmq.v1.SubscribeResponse>;
  write(req: uringmq.v1.SubscribeRequest.$Properties): unknown;
  end(): void;
  on(event: 'data', listener: (res: uringmq.v1.SubscribeResponse) => void): unknown;
  on(event: 'error', listener: (e: unknown) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
};

function openSubscribe(client: Client): SubscribeChannel {
  // As grpc-js refuses a call on a closed channel: no new connection after close().
  if (client.isClosed) throw new Error('the client is closed');
  const target = client.directTarget;
  if (!target) return client.bidi('subscribe') as unknown as SubscribeChannel;
  const s = new DirectStream(target, SUBSCRIBE_STREAM);
  return {
    direct: s,
    write: (req: uringmq.v1.SubscribeRequest.$Properties) => s.writeMessage(pb.SubscribeRequest.encode(req).finish()),
    end: () => s.end(),
    on: (event: string, listener: (...args: never[]) => void) => s.on(event, listener as (...args: unknown[]) => void),
  } as SubscribeChannel;
}

const RETRYABLE = new Set(['UNAVAILABLE', 'RESOURCE_EXHAUSTED', 'BROKER_CLOSED', 'OUT_OF_ORDER_SEQUENCE', 'IO_ERROR']);

/**
 * Request bytes of answered batches whose responses are handled in one event-loop
 * turn (see RemoteProducer.receive): about one large batch.
 */
const RESPONSE_BYTES_PER_TURN = 64 * 1024;

interface WaitingSend {
  topic: string;
  rec: ProducerRecord;
  size: number;
  /** 'reserved': its bytes are held already; a promise: granted when it resolves; null: not asked for yet. */
  space: 'reserved' | Promise<void> | null;
  resolve: (r: Promise<SendResult>) => void;
  reject: (e: Error) => void;
  /** A sendBatch() in the line instead of a record: drainWaiting runs it in its turn (and it settles its own promise). */
  batch?: () => Promise<void>;
  /** flush() was called while it waited: it does not linger once in its accumulator (see enqueue). */
  flushed?: boolean;
}

export class RemoteProducer implements ProducerApi {
  private readonly lingerMs: number;
  private readonly maxBatchBytes: number;
  private readonly maxInFlight: number;
  /** Every batch asks the broker to be on disk before its ack (RemoteProducerOptions.sync). */
  private readonly sync: boolean;
  private readonly deliveryTimeoutMs: number;
  private readonly producerId: number;
  private readonly sequences = new Map<string, number>();
  /**
   * Per partition (bounded like `sequences`: one each), the producer id its batches
   * go with: `idForNewKeys` when the partition's entry was made (accKey), a new one
   * once one of its batches was given up (giveUp, with the error that did it, the old
   * id and that batch's number). Only for an idempotent producer.
   */
  private readonly restarted = new Map<string, { producerId: number; cause: UringmqError | null; oldId: number; failedSeq: number }>();
  /**
   * The producer id of partitions whose entries are made from now on. Replaced by a
   * fresh one whenever a topic is forgotten: an attempt of an earlier batch to it may
   * still reach the broker (from a connection this client gave up on, held by the
   * network), and land on a topic made again under the name, after which the broker
   * expects that id's next sequence there. Under the same id, the partition numbered
   * from 0 again would be answered as a duplicate of it and never written; under a new
   * one it is a new producer's first batch.
   */
  private idForNewKeys: number;
  private readonly topicIdleMs: number;
  /** Forgets topics idle for topicIdleMs (sweepIdle); runs while `topics` has any. */
  private idleTimer: NodeJS.Timeout | null = null;
  private deadlineTimer: NodeJS.Timeout | null = null;
  /**
   * One accumulator per partition this producer has sent to (bounded like
   * `sequences`), emptied when its batch is cut rather than removed: a Map that gains
   * and loses an entry per batch keeps its old tables, and what they held, alive
   * through young GCs (see IdTable).
   */
  private readonly accs = new Map<
    string,
    {
      topic: string;
      partition: number;
      records: RecordInput[];
      waiters: Array<{ resolve: (r: SendResult) => void; reject: (e: Error) => void }>;
      bytes: number;
      reserved: number;
      timer: NodeJS.Immediate | NodeJS.Timeout | null;
      /** Its linger is over but every in-flight slot was taken: it goes when one frees, and grows meanwhile. */
      ready: boolean;
    }
  >();
  /** Keys of accumulators whose linger is over, waiting for an in-flight slot, in the order they became ready. */
  private readonly readyAccs = new Set<string>();
  private readonly maxBufferedBytes: number;
  private bufferedBytes = 0;
  /** PublishRequest buffers: a fresh ~1 MiB buffer per batch costs page faults and full GCs */
  private readonly msgPool = new BufferPool(16 * MiB);
  private readonly spaceWaiters: Array<{ bytes: number; resolve: () => void; reject: (e: Error) => void }> = [];
  private readonly partitioner = new StickyPartitioner((_topic, n) => Math.floor(Math.random() * n));
  private readonly inflight = new IdTable<OutBatch>();
  private readonly queue: OutBatch[] = [];
  /** submit()s waiting for an in-flight slot, in call order (each is handed one by wakeCapacity). */
  private readonly capacityWaiters: Array<() => void> = [];
  /** Batches waiting out a retry delay (onResponse), with its timer: they keep their in-flight slot. */
  private readonly retrying = new Map<OutBatch, NodeJS.Timeout>();
  /**
   * close()'s timeout passed: every send still outstanding was rejected with this, and
   * whatever would still wait (a retry, a reconnect, a lookup) fails with it at once.
   */
  private abandoned: UringmqError | null = null;
  /** Aborted with `abandoned`: wakes the waits that are not in one of the tables above. */
  private readonly abandon = (() => {
    const c = new AbortController();
    setMaxListeners(0, c.signal); // one listener per wait under way (answeredWithin, sleep, unlessAbandoned)
    return c;
  })();
  /**
   * This producer's hold on the partition-count lookups it waits for or began (a
   * refresh of a stale count): aborted when close() gives up (abandonAll) or is done,
   * it cancels those no other producer of the client waits for (Client.partitionLookups).
   */
  private readonly lookupsHeld = (() => {
    const c = new AbortController();
    setMaxListeners(0, c.signal); // one listener per lookup under way
    return c;
  })();
  /** Slots handed to woken capacity waiters that have not queued their batch yet. */
  private granted = 0;
  private stream: PublishChannel | null = null;
  /** The largest request the server reads, from its last PublishStream's metadata (0: not known yet). */
  private serverMaxMessageBytes = 0;
  /** The largest RecordBatch the server's broker takes, from the stream's initial metadata (0: not known yet, or an older server). */
  private serverMaxBatchBytes = 0;
  /** The stream's initial metadata (its limits, or none from an older server) has come. */
  private limitsKnown = false;
  /**
   * The broker's maxBatchBytes as the last stream whose metadata came said it (0: none
   * said, or an older server), where send()'s batches are cut. Kept while the next
   * streams' limits are not known yet: each reconnect attempt opens one, and forgotten
   * there, send() cut at its own 1 MiB through an outage, batches the broker refuses.
   */
  private cutBatchBytes = 0;
  /** The stream took a request past its buffer: write more after its 'drain'. */
  private blocked = false;
  private nextSeq = 1;
  /** close() was called (closed follows once it has flushed): new sends are refused. */
  private closing = false;
  private closed = false;
  private reconnecting = false;
  /**
   * The wait before the stream is opened again after it broke with batches to send
   * (ensureStream). It holds the process while batches wait for it, and ends as soon as
   * none does (expireInflight, close, abandonAll): left to run out, up to 5 s, it kept a
   * script whose sends had all settled (expired meanwhile) and that had closed its
   * producer and client from exiting until then.
   */
  private reconnectTimer: NodeJS.Timeout | null = null;
  /** sendBatch calls, batches cut from send()s and sends still waiting: what flush() waits for. */
  private readonly pendingSends = new PendingPromises();
  /** Per topic sent to: its partitions' keys, its pending batches (see TopicState). */
  private readonly topics = new Map<string, TopicState>();
  /** send()s waiting for buffer room or a partition count, in call order. They hold only the caller's records, no encoded bytes. */
  private readonly waiting: WaitingSend[] = [];
  /** Responses received and not yet handled, in arrival order (at most one per batch in flight). */
  private readonly responses: uringmq.v1.PublishResponse[] = [];
  private responseTimer: NodeJS.Immediate | null = null;

  /** @internal use client.producer() */
  constructor(private readonly client: Client, opts: RemoteProducerOptions) {
    if (opts === null || typeof opts !== 'object') throw invalid('producer options must be an object');
    // As the embedded producer checks its options: a maxInFlight of 0 (or NaN) would
    // leave every send() pending for good, deliveryTimeoutMs included.
    if (opts.lingerMs !== undefined && !(Number.isInteger(opts.lingerMs) && opts.lingerMs >= 0 && opts.lingerMs <= 60_000))
      throw invalid('lingerMs must be an integer between 0 and 60000');
    this.lingerMs = opts.lingerMs ?? 0;
    this.maxBatchBytes = opts.maxBatchBytes === undefined ? MiB : positiveInt(opts.maxBatchBytes, 'maxBatchBytes');
    // With sync durability a batch's round trip spans one or two disk write cycles
    // (tens of ms at full speed): fewer in flight leave the pipeline idle.
    this.maxInFlight = opts.maxInFlight === undefined ? 64 : positiveInt(opts.maxInFlight, 'maxInFlight', 65_536);
    // The broker remembers an idempotent producer's last 64 batches per partition with
    // their offsets (IdempotenceTable.KEEP_BATCHES): with more in flight, the retries of
    // the first ones after a lost connection are answered with offset -1, and a window
    // that fails whole leaves only a marker of the producer. Kafka caps it at 5 alike.
    if (opts.idempotent !== false && this.maxInFlight > MAX_IDEMPOTENT_IN_FLIGHT)
      throw invalid(`maxInFlight of an idempotent producer must be at most ${MAX_IDEMPOTENT_IN_FLIGHT} (the batches a broker remembers per producer and partition), got ${this.maxInFlight}; pass idempotent: false for more`);
    this.deliveryTimeoutMs = opts.deliveryTimeoutMs === undefined ? 120_000 : positiveInt(opts.deliveryTimeoutMs, 'deliveryTimeoutMs', 2 ** 31 - 1);
    if (opts.idempotent !== undefined && typeof opts.idempotent !== 'boolean') throw invalid(`producer option idempotent must be a boolean, got ${String(opts.idempotent)}`);
    this.maxBufferedBytes = opts.maxBufferedBytes === undefined ? 32 * MiB : positiveInt(opts.maxBufferedBytes, 'maxBufferedBytes');
    // 52 random bits: unique enough across producers of one broker, a safe integer.
    this.producerId = opts.idempotent === false ? 0 : newProducerId();
    this.idForNewKeys = this.producerId;
    this.topicIdleMs = opts.topicIdleMs === undefined ? 300_000 : positiveInt(opts.topicIdleMs, 'topicIdleMs', 2 ** 31 - 1);
    // Each forget of a live topic costs a fresh producer id in the broker's table of each
    // of its partitions (bounded there, least recently used out): a floor keeps a
    // producer that sends every little while from filling it and pushing out other
    // producers' duplicate detection.
    if (this.topicIdleMs < MIN_TOPIC_IDLE_MS) throw invalid(`topicIdleMs must be at least ${MIN_TOPIC_IDLE_MS}, got ${this.topicIdleMs}`);
    if (opts.sync !== undefined && typeof opts.sync !== 'boolean') throw invalid(`producer option sync must be a boolean, got ${String(opts.sync)}`);
    this.sync = opts.sync === true;
  }

  /**
   * Queues one record for its partition's next batch; resolves once that batch is
   * acknowledged. Synchronous when nothing is waiting, the buffer has room and the
   * partition count is cached (the common case): one promise per record and none of
   * the async machinery, which at 100k+ sends/s was most of the client's time
   * (young-generation GC of per-send promises and closures). Otherwise the record
   * joins `waiting`, which is drained in call order, so sends keep their order.
   */
  send(topic: string, record: ProducerRecord): Promise<SendResult> {
    try {
      if (this.closing) throw new UringmqError('BROKER_CLOSED', 'producer is closed');
      // Stamped with the time of this send() when it has no timestamp, not of its batch's cut.
      const rec = validateRecord(ownRecord(record), 'send to', topic) as ProducerRecord;
      rec.timestamp ??= Date.now();
      const size = recordSize(rec);
      if (this.waiting.length > 0) return this.sendLater(topic, rec, size, null);
      const space = this.reserve(size);
      if (space) return this.sendLater(topic, rec, size, space);
      const n = this.client.knownPartitionCount(topic, this.lookupsHeld.signal);
      if (n === undefined) return this.sendLater(topic, rec, size, 'reserved');
      return this.enqueue(topic, n, rec, size);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** A send that must wait for buffer room or for the topic's partition count. */
  private sendLater(topic: string, rec: ProducerRecord, size: number, space: WaitingSend['space']): Promise<SendResult> {
    const p = new Promise<SendResult>((resolve, reject) => this.waiting.push({ topic, rec, size, space, resolve, reject }));
    this.track(p);
    if (this.waiting.length === 1) void this.drainWaiting();
    return p;
  }

  /** Moves waiting sends into their accumulators, one at a time, in call order. */
  private async drainWaiting(): Promise<void> {
    while (this.waiting.length > 0) {
      const w = this.waiting[0]!;
      if (w.batch) {
        await w.batch();
        this.waiting.shift();
        continue;
      }
      try {
        if (w.space !== 'reserved') await (w.space ?? this.reserve(w.size));
        let n: number;
        try {
          n = await this.partitionCount(w.topic);
        } catch (e) {
          this.release(w.size);
          throw e;
        }
        w.resolve(this.enqueue(w.topic, n, w.rec, w.size, w.flushed));
      } catch (e) {
        w.reject(e as Error);
      }
      this.waiting.shift();
    }
  }

  /**
   * The topic's partition count, for a send that waits for it. A lookup that fails for
   * now (a dropped connection, a server restarting) is retried with backoff within
   * deliveryTimeoutMs, as the batches themselves are: it failed the send at once.
   */
  private async partitionCount(topic: string): Promise<number> {
    const deadline = Date.now() + this.deliveryTimeoutMs;
    for (let attempt = 0; ; attempt++) {
      try {
        // Each attempt waits for what is left: a lookup the network leaves unanswered
        // waited out the call's own 30 s deadline, and so did the send, its flush() and
        // close(), whatever deliveryTimeoutMs said. The wait, not the lookup: that one is
        // shared by every send to the topic (other producers' too), and made with this
        // send's deadline it failed with it those that had longer.
        const left = Math.max(1, deadline - Date.now());
        return await answeredWithin(this.client.partitionCount(topic, this.lookupsHeld.signal), left, `the lookup of ${topic}'s partition count went unanswered`, this.abandon.signal);
      } catch (e) {
        if (!(e instanceof UringmqError) || !RETRYABLE.has(e.code) || this.client.isClosed || this.abandoned) throw e;
        const delay = reconnectDelayMs(attempt);
        if (Date.now() + delay > deadline)
          throw new UringmqError('UNAVAILABLE', `the partition count of ${topic} was not known within deliveryTimeoutMs (${this.deliveryTimeoutMs} ms); it last failed with ${e.code}: ${e.message}`, { cause: e });
        await this.unlessAbandoned(sleep(delay, this.abandon.signal));
      }
    }
  }

  /**
   * Adds a record (its `size` bytes already reserved) to its partition's accumulator.
   * `flushed`: a flush() is waiting for it (see flush).
   */
  private enqueue(topic: string, n: number, rec: ProducerRecord, size: number, flushed = false): Promise<SendResult> {
    let partition: number;
    try {
      partition = this.choose(topic, n, rec);
    } catch (e) {
      this.release(size); // a partition the topic does not have
      throw e;
    }
    const key = this.accKey(topic, partition);
    let acc = this.accs.get(key);
    // Cut at the broker's maxBatchBytes too, once its stream said it: a batch past it is
    // refused (submit), and with it every record send() put in it.
    const limit = this.cutBatchBytes > 0 ? Math.min(this.maxBatchBytes, this.cutBatchBytes) : this.maxBatchBytes;
    if (acc && acc.records.length > 0 && acc.bytes + size > limit) this.flushAcc(key);
    if (!acc) {
      acc = { topic, partition, records: [], waiters: [], bytes: 64, reserved: 0, timer: null, ready: false };
      this.accs.set(key, acc);
    }
    const out = new Promise<SendResult>((resolve, reject) => acc!.waiters.push({ resolve, reject }));
    acc.records.push(rec);
    acc.bytes += size;
    acc.reserved += size;
    // Closing: close()'s flush cut the accumulators already, and this record (a send
    // accepted before close() that waited for its partition count or for buffer room)
    // must not linger past it: close waits for it, and its timeout rejects only what
    // was handed on (a lingering record kept close waiting lingerMs, past that timeout).
    if (acc.bytes >= limit || this.closing) this.flushAcc(key);
    else if (flushed && !acc.ready) {
      // flush() cut the accumulators before this record came (it waited for its partition
      // count or for buffer room), and waits for it: left to linger, it kept flush()
      // waiting lingerMs. It goes at the end of this turn, with the other waiting sends
      // drained in it, not as a batch of its own (which a flush under backpressure, many
      // sends waiting for room, would make of each).
      if (acc.timer) {
        clearTimeout(acc.timer as NodeJS.Timeout);
        clearImmediate(acc.timer as NodeJS.Immediate);
      }
      acc.timer = setImmediate(() => this.lingerOver(key));
    } else if (!acc.timer && !acc.ready) acc.timer = this.lingerMs > 0 ? setTimeout(() => this.lingerOver(key), this.lingerMs) : setImmediate(() => this.lingerOver(key));
    return out;
  }

  /**
   * An accumulator's linger is over: it is cut now if an in-flight slot is free, else
   * it waits for one and keeps taking records (Kafka's accumulator does the same). Cut
   * at once and queued instead, every record sent while the broker was slow would wait
   * as a batch of its own, and the broker would then take them one request, one append
   * and one delivery at a time, just when it is behind: the backlog after a stall would
   * drain at the rate of single-record requests.
   */
  private lingerOver(key: string): void {
    const acc = this.accs.get(key);
    if (!acc || acc.records.length === 0) return;
    acc.timer = null;
    if (this.capacityWaiters.length === 0 && this.slotsInUse() < this.maxInFlight) return this.flushAcc(key);
    acc.ready = true;
    this.readyAccs.add(key);
  }

  /**
   * The accumulator key of (topic, partition), built once: a template string per
   * send showed in profiles (allocation and hashing). Bounded like `sequences`: one
   * entry per partition this producer has sent to.
   */
  private accKey(topic: string, partition: number): string {
    const t = this.topicState(topic);
    return t.keys[partition] ?? this.newKey(t, topic, partition);
  }

  private topicState(topic: string): TopicState {
    let t = this.topics.get(topic);
    if (!t) {
      this.topics.set(topic, (t = { keys: [], pending: 0, gone: false, usedAt: Date.now() }));
      if (!this.idleTimer && !this.closed) {
        this.idleTimer = setInterval(() => this.sweepIdle(), Math.max(10, Math.min(this.topicIdleMs, 60_000)));
        this.idleTimer.unref();
      }
    }
    return t;
  }

  /** A partition's entry is made: its batches go with the producer id of new entries (see idForNewKeys). */
  private newKey(t: TopicState, topic: string, partition: number): string {
    const key = (t.keys[partition] = `${topic}\u0000${partition}`);
    if (this.producerId) this.restarted.set(key, { producerId: this.idForNewKeys, cause: null, oldId: 0, failedSeq: 0 });
    return key;
  }

  /**
   * Sends `records` as one batch, after every record sent before it to the same
   * partition and before every one sent after it. Synchronous when nothing is waiting,
   * the buffer has room and the partition count is cached; otherwise it waits in line
   * with the waiting send()s (holding only the caller's records, encoded again in its
   * turn).
   */
  sendBatch(topic: string, records: readonly RecordInput[], opts: { partition?: number } = {}): Promise<SendBatchResult> {
    let p: Promise<SendBatchResult>;
    try {
      if (this.closing) throw new UringmqError('BROKER_CLOSED', 'producer is closed');
      if (!Array.isArray(records) || records.length === 0) throw invalid('sendBatch needs a non-empty array of records');
      if (opts === null || typeof opts !== 'object') throw invalid('sendBatch options must be an object');
      if (typeof topic !== 'string') throw new UringmqError('INVALID_TOPIC_NAME', 'topic must be a string');
      // Encoded (and checked) in one pass; its size is what the buffer bound counts.
      const what = `sendBatch to ${topic}`;
      const at = Date.now(); // the records' default timestamp, also if encoded again later
      const prep = prepareBatch(this.msgPool, topic, records, what, at);
      const bytes = prep.end - prep.start;
      const n = this.client.knownPartitionCount(topic, this.lookupsHeld.signal);
      const space = this.waiting.length === 0 && n !== undefined ? this.reserve(bytes) : undefined;
      if (space === null) p = this.submitBatch(topic, n!, records, opts, prep, bytes);
      else {
        // In line: hold only the caller's records, not an encoded copy as well. A view
        // detached meanwhile refuses the batch whole, not encoded empty (detachedViews).
        this.msgPool.release(prep.buf);
        const detached = detachedViews(records);
        p = new Promise<SendBatchResult>((resolve, reject) => {
          const batch = async (): Promise<void> => {
            let held = 0;
            try {
              await (space ?? this.reserve(bytes));
              held = bytes;
              if (detachedViews(records) > detached) throw sendBatchDetachedError(topic);
              const again = prepareBatch(this.msgPool, topic, records, what, at);
              const now = again.end - again.start;
              this.bufferedBytes += now - bytes; // the caller changed its records meanwhile
              held = now;
              let count: number;
              try {
                count = await this.partitionCount(topic);
              } catch (e) {
                this.msgPool.release(again.buf);
                throw e;
              }
              held = 0; // submitBatch releases it from here on
              resolve(this.submitBatch(topic, count, records, opts, again, now));
            } catch (e) {
              if (held) this.release(held);
              reject(e as Error);
            }
          };
          this.waiting.push({ topic, rec: records[0] as ProducerRecord, size: 0, space: 'reserved', resolve: () => undefined, reject, batch });
          if (this.waiting.length === 1) void this.drainWaiting();
        });
      }
    } catch (e) {
      return Promise.reject(e);
    }
    this.track(p);
    return p;
  }

  /** Cuts the partition's accumulator (its records go first) and submits the prepared batch, whose `bytes` are reserved. */
  private submitBatch(topic: string, n: number, records: readonly RecordInput[], opts: { partition?: number }, prep: PreparedBatch, bytes: number): Promise<SendBatchResult> {
    let partition: number;
    try {
      partition = this.partitioner.choose(topic, n, records[0]!.key, opts.partition);
      // A sendBatch is a whole batch: a keyless one moves the sticky partition on, as a cut
      // accumulator does (or every keyless sendBatch went to one partition).
      if (opts.partition === undefined && records[0]!.key == null) this.partitioner.batchCut(topic, partition);
    } catch (e) {
      this.release(bytes);
      this.msgPool.release(prep.buf);
      return Promise.reject(e);
    }
    this.flushAcc(this.accKey(topic, partition));
    const release = () => this.release(bytes);
    return this.submit(topic, partition, prep).then(
      (r) => {
        release();
        return { partition: r.partition, baseOffset: r.baseOffset, count: records.length };
      },
      (e: unknown) => {
        release();
        throw e;
      },
    );
  }

  /**
   * Sends what lingers, and the sends still waiting (for their partition count, for
   * buffer room) as soon as they may go, without lingering; waits for every send.
   */
  async flush(): Promise<void> {
    for (const w of this.waiting) w.flushed = true;
    for (const k of [...this.accs.keys()]) this.flushAcc(k);
    await this.pendingSends.settled();
  }

  /**
   * See ProducerApi.close. `timeoutMs` is what a SIGTERM handler needs against a broker
   * that cannot be reached: without it close waits for each batch's deliveryTimeoutMs
   * (as Kafka's close() does; its close(Duration) is this option).
   */
  async close(opts?: { timeoutMs?: number }): Promise<void> {
    const timeoutMs = closeTimeout(opts);
    // Sends from here on are refused: one accepted while the flush runs could still be
    // lingering when it ends, and would open a stream after close.
    this.closing = true;
    const flushed = this.flush();
    if (timeoutMs !== undefined && !this.abandoned && !(await settlesWithin(flushed, timeoutMs))) this.abandonAll(closeTimedOut('producer', timeoutMs));
    await flushed;
    this.closed = true;
    this.lookupsHeld.abort(new UringmqError('BROKER_CLOSED', 'producer is closed')); // a refresh it began, nobody else waiting for it
    if (this.idleTimer) clearInterval(this.idleTimer);
    this.idleTimer = null;
    this.endReconnectWait(); // every batch is settled: none waits for it
    // Every batch is answered: the server has nothing more to say, and a grpc-js stream
    // left half-closed toward one that does not end it held the process (see boundGrpcEnd).
    const s = this.stream;
    if (s instanceof DirectStream) s.end();
    else if (s) boundGrpcEnd(s as unknown as GrpcCallStream, null, undefined, this.client.grpcProbe.timeoutMs).end();
    this.stream = null;
    this.client.forget(this);
  }

  /**
   * close()'s timeout passed: every send still outstanding is rejected with `err`, and
   * nothing is left waiting (timers, lookups, the stream), so flush() settles at once
   * and the process is not held open. A batch already sent may still be written.
   */
  private abandonAll(err: UringmqError): void {
    this.abandoned = err;
    this.abandon.abort(err);
    this.lookupsHeld.abort(err);
    this.endReconnectWait();
    const s = this.stream;
    this.stream = null; // before the cancel: its 'error' must not queue the batches again
    if (s instanceof DirectStream) s.cancel();
    else s?.cancel();
    if (this.responseTimer) clearImmediate(this.responseTimer);
    this.responseTimer = null;
    this.responses.length = 0;
    if (this.deadlineTimer) clearInterval(this.deadlineTimer);
    this.deadlineTimer = null;
    // Left to the GC, not the pool: the transport may still hold a request's bytes.
    for (const b of this.inflight.values()) b.abandon(err);
    this.inflight.clear();
    for (const b of this.queue.splice(0)) b.abandon(err);
    for (const [b, timer] of this.retrying) {
      clearTimeout(timer);
      b.abandon(err);
    }
    this.retrying.clear();
    for (const w of this.spaceWaiters.splice(0)) w.reject(err);
    // Each resumes, finds `abandoned` and rejects its batch (submit).
    for (const wake of this.capacityWaiters.splice(0)) {
      this.granted++;
      wake();
    }
  }

  /** `p`, or `abandoned` as soon as close()'s timeout passes. */
  private unlessAbandoned<T>(p: Promise<T>): Promise<T> {
    const signal = this.abandon.signal;
    if (signal.aborted) return Promise.reject(this.abandoned!);
    return new Promise<T>((resolve, reject) => {
      const abort = () => reject(this.abandoned!);
      signal.addEventListener('abort', abort, { once: true });
      p.then(
        (v) => {
          signal.removeEventListener('abort', abort);
          resolve(v);
        },
        (e: unknown) => {
          signal.removeEventListener('abort', abort);
          reject(e as Error);
        },
      );
    });
  }

  private track(p: Promise<unknown>): void {
    this.pendingSends.track(p);
  }

  /**
   * @internal The topic is gone (deleted through this client, or a lookup found it
   * missing): it is forgotten as soon as none of its batches is pending (settle).
   */
  forgetTopic(topic: string): void {
    const t = this.topics.get(topic);
    if (!t) return;
    t.gone = true;
    this.dropIfSettled(topic, t);
  }

  /**
   * Forgets the topic if none of its batches is pending and no records wait in its
   * accumulators (their waiters settle only when their batch does): its
   * accumulators, sequences and producer ids go. Safe whenever that holds, even if an
   * attempt of one of its batches is still on its way to the broker (on a connection
   * given up, in a proxy): the topic's partitions, if this producer sends to them again,
   * start under a producer id none of its earlier batches had (idForNewKeys), from
   * sequence 0, which the broker takes as a new producer's first batch whatever landed
   * before. Each forget costs one more producer id per partition sent to again in the
   * broker's idempotence table (at most 10k producers per partition there, the least
   * recently used dropped).
   */
  private dropIfSettled(topic: string, t: TopicState): boolean {
    if (t.pending > 0 || this.topics.get(topic) !== t) return false;
    for (const key of t.keys) {
      const acc = key === undefined ? undefined : this.accs.get(key);
      if (acc && (acc.records.length > 0 || acc.timer)) return false;
    }
    for (const key of t.keys) {
      if (key === undefined) continue;
      this.accs.delete(key);
      this.readyAccs.delete(key);
      this.sequences.delete(key);
      this.restarted.delete(key);
    }
    this.topics.delete(topic);
    this.partitioner.forget(topic);
    if (this.producerId) this.idForNewKeys = newProducerId();
    if (this.topics.size === 0 && this.idleTimer) {
      clearInterval(this.idleTimer);
      this.idleTimer = null;
    }
    return true;
  }

  /** Forgets topics not sent to for topicIdleMs, deleted or not (dropIfSettled). */
  private sweepIdle(): void {
    const old = Date.now() - this.topicIdleMs;
    for (const [topic, t] of this.topics) if (t.usedAt <= old) this.dropIfSettled(topic, t);
  }

  /** A numbered batch settled (acked, failed, or abandoned). */
  private settle(b: OutBatch): void {
    const t = b.topicState;
    if (--t.pending === 0 && t.gone) this.dropIfSettled(b.topic, t);
  }

  private choose(topic: string, n: number, rec: RecordInput & { partition?: number }): number {
    return this.partitioner.choose(topic, n, rec.key, rec.partition);
  }

  private flushAcc(key: string): void {
    const acc = this.accs.get(key);
    if (!acc || acc.records.length === 0) return;
    this.readyAccs.delete(key);
    if (acc.timer) {
      clearTimeout(acc.timer as NodeJS.Timeout);
      clearImmediate(acc.timer as NodeJS.Immediate);
    }
    this.partitioner.batchCut(acc.topic, acc.partition);
    const { records, waiters, reserved } = acc;
    acc.records = [];
    acc.waiters = [];
    acc.bytes = 64;
    acc.reserved = 0;
    acc.timer = null;
    acc.ready = false;
    let prep: PreparedBatch | null;
    try {
      // Checked by send() already; a record whose bytes were detached since fails alone.
      prep = prepareSent(this.msgPool, acc.topic, records, waiters);
    } catch (e) {
      this.release(reserved);
      waiters.forEach((w) => w.reject(e as Error));
      return;
    }
    if (prep === null) {
      this.release(reserved);
      return;
    }
    const done = this.submit(acc.topic, acc.partition, prep).then(
      (r) => {
        this.release(reserved);
        // A base offset of -1: a retry of a batch the broker had written already, too
        // long ago for it to remember where (more than 64 batches back).
        for (let i = 0; i < waiters.length; i++) waiters[i]!.resolve({ partition: r.partition, offset: r.baseOffset < 0 ? -1 : r.baseOffset + i });
      },
      (e: Error) => {
        this.release(reserved);
        for (const w of waiters) w.reject(e);
      },
    );
    this.track(done);
  }

  /** Bytes of records this producer holds (accepted, not yet acknowledged). */
  get buffered(): number {
    return this.bufferedBytes;
  }

  /** Takes `bytes` of the buffer, or returns a promise for when they are granted (in send order). */
  private reserve(bytes: number): Promise<void> | null {
    if (this.abandoned) return handled(Promise.reject(this.abandoned));
    if (this.spaceWaiters.length === 0 && (this.bufferedBytes === 0 || this.bufferedBytes + bytes <= this.maxBufferedBytes)) {
      this.bufferedBytes += bytes;
      return null;
    }
    // Awaited only in its turn (drainWaiting), maybe after close()'s timeout rejected it.
    return handled(new Promise((resolve, reject) => this.spaceWaiters.push({ bytes, resolve, reject })));
  }

  private release(bytes: number): void {
    this.bufferedBytes -= bytes;
    while (this.spaceWaiters.length) {
      const w = this.spaceWaiters[0]!;
      if (this.bufferedBytes > 0 && this.bufferedBytes + w.bytes > this.maxBufferedBytes) break;
      this.spaceWaiters.shift();
      this.bufferedBytes += w.bytes;
      w.resolve();
    }
  }

  private async submit(topic: string, partition: number, prep: PreparedBatch): Promise<{ partition: number; baseOffset: number }> {
    // Refused here, before it takes a sequence number: the server would refuse the
    // request, a retry could never succeed, and the partition's numbering (and the
    // batches around it) stays as it was. The server's limit counts once known.
    const request = maxRequestBytes(prep);
    const serverMax = this.serverMaxMessageBytes;
    if (request > this.client.maxMessageBytes || (serverMax > 0 && request > serverMax)) {
      const size = prep.end - prep.start;
      this.msgPool.release(prep.buf);
      if (request <= this.client.maxMessageBytes) throw this.oversizeError(size, topic, partition);
      throw new UringmqError('RECORD_TOO_LARGE', `a batch of ${size} bytes for ${topic}/${partition} does not fit in one request (the client's maxMessageBytes is ${this.client.maxMessageBytes}); send fewer records per sendBatch or raise maxMessageBytes on both sides`);
    }
    // The broker would refuse it alone, but the batches numbered after it would fail
    // with it: refused here too, its numbering untouched.
    const batchMax = this.serverMaxBatchBytes;
    if (batchMax > 0 && prep.end - prep.start > batchMax) {
      const size = prep.end - prep.start;
      this.msgPool.release(prep.buf);
      throw this.batchOversizeError(size, topic, partition);
    }
    if (this.abandoned) {
      this.msgPool.release(prep.buf);
      throw this.abandoned;
    }
    // In call order: a batch never takes a slot, and so its partition's next sequence,
    // ahead of one already waiting for a slot (wakeCapacity hands each its own), nor
    // ahead of one handed a slot that has not resumed yet (`granted`): its
    // continuation runs on a later microtask, after whatever else this turn submits.
    if (this.capacityWaiters.length > 0 || this.granted > 0 || this.slotsInUse() >= this.maxInFlight) {
      await new Promise<void>((r) => this.capacityWaiters.push(r));
      this.granted--;
      if (this.abandoned) {
        this.msgPool.release(prep.buf);
        throw this.abandoned;
      }
    }
    // After the wait: the topic may have been forgotten meanwhile (dropIfSettled), and
    // its entries are made again here, under the id for new ones.
    const topicState = this.topicState(topic);
    const key = topicState.keys[partition] ?? this.newKey(topicState, topic, partition);
    const baseSequence = this.sequences.get(key) ?? 0;
    const seq = this.nextSeq++;
    const producerId = this.producerIdFor(key);
    const msg = finishRequest(prep, seq, topic, partition, producerId ? { producerId, baseSequence } : null, this.sync);
    if (producerId) this.sequences.set(key, (baseSequence + prep.count) % 2 ** 31);
    const now = Date.now();
    topicState.pending++;
    topicState.usedAt = now;
    return new Promise((resolve, reject) => {
      // Settled means sent and answered (or given up): the request buffer is reused.
      const b: OutBatch = {
        seq,
        topic,
        partition,
        key,
        producerId,
        msg,
        batch: prep.buf.subarray(prep.start, prep.end),
        baseSequence,
        count: prep.count,
        deadline: now + this.deliveryTimeoutMs,
        resolve: (r) => {
          this.msgPool.release(prep.buf);
          this.settle(b);
          resolve(r);
        },
        reject: (e) => {
          this.msgPool.release(prep.buf);
          this.settle(b);
          reject(e);
        },
        abandon: (e) => {
          this.settle(b);
          reject(e);
        },
        attempts: 0,
        unreadAttempts: 0,
        unanswered: false,
        lastError: null,
        topicState,
      };
      this.queue.push(b);
      this.pump();
    });
  }

  private ensureStream(): PublishChannel | null {
    if (this.stream || this.reconnecting) return this.stream;
    let s: PublishChannel;
    try {
      const target = this.client.directTarget;
      s = target ? new DirectStream(target, PUBLISH_STREAM) : this.client.bidi('publishStream', true);
    } catch (e) {
      const err = new UringmqError('UNAVAILABLE', `cannot publish: ${(e as Error).message}`);
      for (const b of this.queue.splice(0)) {
        this.giveUp(b, err, false);
        this.wakeCapacity(); // one slot per batch given up: each waiting submit gets its turn
      }
      return null;
    }
    this.stream = s;
    this.blocked = false;
    // This stream's server says its own limit (it may be another server, or restarted
    // with other settings); until then a batch over it is caught when the stream breaks.
    this.serverMaxMessageBytes = 0;
    this.serverMaxBatchBytes = 0;
    this.limitsKnown = false;
    if (s instanceof DirectStream) {
      s.on('limit', (n: number) => (this.serverMaxMessageBytes = n));
      s.on('batchLimit', (n: number) => (this.serverMaxBatchBytes = n));
      s.on('headers', () => this.limitsCame(s));
    } else
      s.on('metadata', (md: grpc.Metadata) => {
        const n = Number(md.get(MAX_MESSAGE_HEADER)[0]);
        if (Number.isSafeInteger(n) && n > 0) this.serverMaxMessageBytes = n;
        const b = Number(md.get(MAX_BATCH_HEADER)[0]);
        if (Number.isSafeInteger(b) && b > 0) this.serverMaxBatchBytes = b;
        this.limitsCame(s);
      });
    s.on('data', (res: uringmq.v1.PublishResponse) => this.receive(res));
    s.on('drain', () => {
      if (this.stream !== s) return;
      this.blocked = false;
      this.pump();
    });
    const broken = (err?: unknown) => {
      if (this.stream !== s) return;
      // Before anything else here: it reads the stream's state (its limits unknown).
      const unread = this.brokerRefusedUnread(s, err);
      // Acks received before the break count: their batches must not go again.
      this.handleAllResponses();
      this.stream = null;
      this.blocked = false;
      // Everything in flight on this stream goes again, same sequence numbers, except
      // a batch over the server's limit: the server ended the stream because of it
      // (grpc-js refuses the request whole), and it would end every stream again.
      const sent = this.inflight.size;
      const again = [...this.inflight.values()].sort((a, b) => a.seq - b.seq).filter((b) => !this.refuseOversize(b, true));
      for (const b of again) {
        if (unread) b.unreadAttempts++;
        else b.unanswered = true;
      }
      this.inflight.clear();
      // In numbering order with what was queued: a batch queued to go again (its retry
      // delay over while the stream did not drain) goes before later batches of its
      // partition that were in flight, as it first did. Put behind them, an idempotent
      // producer's later batches came back out of order, a plain one's landed first.
      this.queue.push(...again);
      this.queue.sort((x, y) => x.seq - y.seq);
      // The slots of those refused: refuseOversize's wakeCapacity ran while they were
      // still counted in flight, and handed them to nobody (with maxInFlight 1, the send
      // waiting for its slot waited for ever).
      if (again.length < sent) this.wakeCapacity();
      if (this.queue.length === 0) return;
      this.reconnecting = true;
      const fatal = err ? fromServiceError(err, this.client.maxMessageBytes) : null;
      if (fatal) for (const b of this.queue) b.lastError = fatal;
      this.reconnectTimer = setTimeout(() => {
        this.reconnectTimer = null;
        this.reconnecting = false;
        if (this.abandoned) return;
        if (fatal && !RETRYABLE.has(fatal.code)) {
          for (const b of this.queue.splice(0)) {
            this.giveUp(b, fatal, false);
            this.wakeCapacity();
          }
          return;
        }
        this.pump();
      }, reconnectDelayMs(again[0]?.attempts ?? 0));
    };
    s.on('error', (e) => broken(e));
    s.on('end', () => broken());
    return s;
  }

  /**
   * Until a new stream's limits come (its initial metadata, one round trip after it
   * opens), nothing goes behind a batch bigger than the smallest maxBatchBytes a broker
   * takes: over the broker's limit, the broker refuses it (not the stream), and an
   * idempotent producer's batches sent behind it would fail with it, their sequence
   * after a gap. Held, they take its sequence numbers instead (limitsCame).
   */
  private heldForLimits(): boolean {
    if (this.limitsKnown) return false;
    for (const b of this.inflight.values()) if (b.batch.length > MIN_MAX_BATCH_BYTES) return true;
    return false;
  }

  /**
   * The stream ended with the broker's own status (its uringmq-code) before its initial
   * metadata: refused as it opened (at the broker's stream limit, unauthenticated, the
   * broker shutting down), before any of its requests was read (BrokerServer.admit).
   * A stream that broke otherwise before its metadata may have been read: the broker
   * sends that metadata as it takes the call, and it was lost with the connection, or
   * a proxy answered for it.
   */
  private brokerRefusedUnread(s: PublishChannel, err: unknown): boolean {
    if (s instanceof DirectStream) return s.refusedUnread;
    if (this.limitsKnown) return false; // its 'metadata' came
    const trailer = (err as Partial<grpc.ServiceError> | undefined)?.metadata?.get?.(CODE_TRAILER);
    return trailer !== undefined && trailer.length > 0;
  }

  /** A stream's initial metadata came: batches in flight over the broker's limit are given up (their numbers taken back when they can be), and the held ones go. */
  private limitsCame(s: PublishChannel): void {
    if (this.stream !== s || this.limitsKnown) return;
    this.limitsKnown = true;
    const limit = this.serverMaxBatchBytes;
    this.cutBatchBytes = limit;
    if (limit > 0)
      for (const b of [...this.inflight.values()].sort((x, y) => x.seq - y.seq)) {
        if (b.batch.length <= limit) continue;
        // Refused for certain, never written: its answer, when it comes, finds nothing.
        this.inflight.delete(b.seq);
        const err = this.batchOversizeError(b.batch.length, b.topic, b.partition, b.unanswered);
        // Only if none of its partition's later batches went out (the hold above): the
        // broker reads those, and may write them under the numbers they were sent with.
        const sentAfter = [...this.inflight.values()].some((x) => x.key === b.key && x.producerId === b.producerId && x.seq > b.seq);
        if (sentAfter || !this.takeBackSequence(b, true)) this.giveUp(b, err, true);
        else b.abandon(err);
        this.wakeCapacity();
      }
    this.pump();
  }

  /**
   * Writes queued requests until the stream's buffer is full (then 'drain' calls
   * this again): requests wait here, in the producer's pooled buffers, not in
   * transport buffers.
   */
  private pump(): void {
    if (this.queue.length === 0 || this.abandoned) return;
    const s = this.ensureStream();
    if (!s) return;
    const now = Date.now();
    while (this.queue.length && !this.blocked && this.stream === s && !this.heldForLimits()) {
      const b = this.queue.shift()!;
      const stale = this.staleError(b);
      if (stale || now > b.deadline) {
        if (stale) b.reject(stale);
        else this.giveUp(b, this.timeoutError(b), false);
        this.wakeCapacity();
        continue;
      }
      if (this.refuseOversize(b, false)) continue;
      b.attempts++;
      this.inflight.set(b.seq, b);
      if (!s.write(b.msg)) this.blocked = true;
    }
    if ((this.inflight.size || this.queue.length) && !this.deadlineTimer) {
      this.deadlineTimer = setInterval(() => this.expireInflight(), Math.min(1000, Math.max(10, this.deliveryTimeoutMs / 4)));
      this.deadlineTimer.unref();
    }
  }

  /**
   * deliveryTimeoutMs also bounds batches already sent: a broker that keeps the
   * connection alive but never answers (its disk hangs) must not hang send() and
   * flush() forever. Such a batch may still be written later.
   */
  private expireInflight(): void {
    this.handleAllResponses(); // a batch acked already is not timed out
    const now = Date.now();
    for (const b of [...this.inflight.values()]) {
      if (now <= b.deadline) continue;
      this.inflight.delete(b.seq);
      this.giveUp(b, this.timeoutError(b, true), true);
      this.wakeCapacity();
    }
    // Batches queued behind a stream that does not drain (a server that stopped reading
    // it: its disk hangs) wait for no pump(): their deadline is kept here too.
    for (let i = 0; i < this.queue.length; ) {
      const b = this.queue[i]!;
      const stale = this.staleError(b);
      if (!stale && now <= b.deadline) {
        i++;
        continue;
      }
      this.queue.splice(i, 1);
      if (stale) b.reject(stale);
      else this.giveUp(b, this.timeoutError(b), false);
      this.wakeCapacity();
    }
    if (this.inflight.size === 0 && this.queue.length === 0 && this.deadlineTimer) {
      clearInterval(this.deadlineTimer);
      this.deadlineTimer = null;
    }
    // The batches that waited to reconnect all expired, and no slot handed out is about
    // to queue one: a send from now on opens the stream at once.
    if (this.queue.length === 0 && this.granted === 0) this.endReconnectWait();
  }

  /** Ends the wait to reopen the stream (reconnectTimer): nothing is left to send on it. */
  private endReconnectWait(): void {
    if (!this.reconnectTimer) return;
    clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    this.reconnecting = false;
  }

  /** Returns the size of the request it answered (0 for none in flight). */
  private onResponse(res: uringmq.v1.PublishResponse): number {
    const b = this.inflight.get(Number(res.sequence));
    if (!b) return 0;
    this.inflight.delete(b.seq);
    if (res.error && res.error.code) {
      const err = new UringmqError(res.error.code as never, res.error.message ?? 'publish failed');
      const stale = this.staleError(b);
      if (stale) b.reject(stale);
      else if (err.code === 'OUT_OF_ORDER_SEQUENCE' && !this.earlierPending(b)) {
        // Transient only while a batch the broker expects before this one may still
        // come (a gap): one of its partition numbered earlier, still pending. With none,
        // the broker refused this batch itself (its first attempt failed and a later
        // batch was written: see IdempotenceTable.check, which waits until that is
        // decided), and every retry would be refused alike until deliveryTimeoutMs.
        this.giveUp(b, outOfOrderError(b, err), false);
      } else if (RETRYABLE.has(err.code) && Date.now() < b.deadline) {
        b.lastError = err;
        const delay = Number(res.error.retry_after_ms) || Math.min(50 * 2 ** Math.min(b.attempts, 6), 2000);
        // Not past its deadline: a server's retry_after_ms may be longer than what is
        // left, and send() and flush() must not wait it out (nothing else watches a
        // batch here: expireInflight looks at those sent or queued).
        const left = Math.max(0, b.deadline - Date.now());
        const expires = delay > left;
        const timer = setTimeout(() => {
          this.retrying.delete(b);
          if (expires) {
            // Batches of its partition numbered before it that wait out a retry too, with
            // deadlines no later, expire first (their timers may fire after this one), so
            // the later ones fail with them, in send order, as pump() expires a queue.
            const due = [b];
            for (const [x, t] of this.retrying)
              if (x.key === b.key && x.producerId === b.producerId && x.seq < b.seq && x.deadline <= b.deadline) {
                clearTimeout(t);
                this.retrying.delete(x);
                due.push(x);
              }
            due.sort((x, y) => x.seq - y.seq);
            for (const x of due) {
              const stale = this.staleError(x); // as pump() would say
              if (stale) x.reject(stale);
              else this.giveUp(x, this.timeoutError(x), false);
            }
            this.wakeCapacity();
            return;
          }
          this.queue.push(b);
          this.queue.sort((x, y) => x.seq - y.seq);
          this.pump();
        }, expires ? left : delay);
        this.retrying.set(b, timer);
        return b.msg.length;
      } else {
        // A partition the topic no longer has (made again with fewer), or a topic gone:
        // the cached count is not the topic's. Sends after it would be refused the same
        // way until the cache went stale (5 s).
        if (err.code === 'INVALID_ARGUMENT' || err.code === 'TOPIC_NOT_FOUND') this.client.dropPartitionCount(b.topic);
        // Forgotten once its batches settle (this one as it is given up just below).
        if (err.code === 'TOPIC_NOT_FOUND') b.topicState.gone = true;
        this.giveUp(b, unansweredError(b, err), false);
      }
    } else {
      b.resolve({ partition: res.partition, baseOffset: Number(res.base_offset) });
    }
    this.wakeCapacity();
    return b.msg.length;
  }

  /**
   * Handles the server's responses, about one large batch's worth per event-loop
   * turn. The server acks all the batches one disk write made durable at once; told
   * together, their senders would encode as many new batches in one turn, and
   * node:http2 sends what a turn wrote only when the turn ends, so the server would
   * sit idle through the whole burst and the client through the server's turn after
   * it. Told a few per turn, each new batch leaves while the next is encoded, and
   * both processes work at once: a sendBatch(1000) loop with 64 in flight went from
   * 4.10-4.32 to 4.80-4.98 M records/s (three alternating rounds of 15 s,
   * 2026-12-01). A lone ack is handled at once, so latency at low rates is unchanged.
   */
  private receive(res: uringmq.v1.PublishResponse): void {
    this.responses.push(res);
    if (!this.responseTimer) this.handleResponses();
  }

  private handleResponses(): void {
    let bytes = 0;
    let handled = false;
    while (this.responses.length && bytes < RESPONSE_BYTES_PER_TURN) {
      bytes += this.onResponse(this.responses.shift()!);
      handled = true;
    }
    // Responses that arrive later in this turn (each ack is a DATA frame of its own,
    // and one socket read holds many) wait for the next turn too.
    this.responseTimer = handled ? setImmediate(() => this.handleResponses()) : null;
  }

  /** Handles every response received so far, now. */
  private handleAllResponses(): void {
    while (this.responses.length) this.onResponse(this.responses.shift()!);
  }

  /**
   * Gives up a batch whose request is larger than the server reads (its limit comes
   * with each PublishStream's initial metadata, so a server configured below this
   * client's maxMessageBytes is known before the first batch can be refused). True if
   * it was given up.
   */
  private refuseOversize(b: OutBatch, inTransport: boolean): boolean {
    const limit = this.serverMaxMessageBytes;
    let err: UringmqError;
    if (limit > 0 && b.msg.length > limit) err = this.oversizeError(b.msg.length, b.topic, b.partition);
    // Over the broker's batch limit, numbered before it was known and not sent: the
    // broker would refuse it alone, and the batches after it would fail with it. (One
    // sent is the broker's to refuse: limitsCame.)
    else if (!inTransport && this.serverMaxBatchBytes > 0 && b.batch.length > this.serverMaxBatchBytes) err = this.batchOversizeError(b.batch.length, b.topic, b.partition, b.unanswered);
    else return false;
    if (!this.takeBackSequence(b, inTransport)) this.giveUp(b, err, inTransport);
    else if (inTransport) b.abandon(err);
    else b.reject(err);
    this.wakeCapacity();
    return true;
  }

  /**
   * An idempotent batch over the server's limit, numbered before that limit was known
   * (the first requests of a stream go before its metadata), is refused: no server read
   * it, nor any later batch of its partition (a server ends the stream at such a
   * request; a first attempt goes in sequence order). Those later batches then take its
   * sequence numbers, restamped, instead of failing with it under a new producer id:
   * the producer's other batches are not affected. False (giveUp instead) unless that
   * holds for certain: the batch went out at most on the stream that refused it and on
   * streams the broker refused unread (unreadAttempts), and every batch of its
   * partition numbered after it waits to be sent and went out no earlier than it. Any
   * other earlier attempt may have been written (a broker restarted since with a
   * smaller limit took it, its answer lost): numbers reused after it would be answered
   * as its duplicates, acked and never written.
   */
  private takeBackSequence(b: OutBatch, inTransport: boolean): boolean {
    const read = b.attempts - b.unreadAttempts;
    if (!b.producerId || b.producerId !== this.producerIdFor(b.key) || read !== (inTransport ? 1 : 0)) return false;
    const later: OutBatch[] = [];
    const add = (x: OutBatch, sent: boolean): boolean => {
      if (x === b || x.key !== b.key || x.producerId !== b.producerId) return true;
      if (x.seq < b.seq) return true;
      if (x.unanswered || x.attempts - x.unreadAttempts > read || (sent && !inTransport)) return false;
      later.push(x);
      return true;
    };
    for (const x of this.retrying.keys()) if (x.key === b.key && x.producerId === b.producerId && x.seq > b.seq) return false;
    for (const x of this.inflight.values()) if (!add(x, true)) return false;
    for (const x of this.queue) if (!add(x, false)) return false;
    later.sort((x, y) => x.seq - y.seq);
    const SEQ_MOD = 2 ** 31;
    let next = b.baseSequence;
    // Every batch numbered after it must be among them, or the numbers would not add up.
    const end = later.reduce((at, x) => (at + x.count) % SEQ_MOD, (b.baseSequence + b.count) % SEQ_MOD);
    if (end !== this.sequences.get(b.key)) return false;
    for (const x of later) {
      stampProducer(x.batch, x.producerId, next);
      sealBatch(x.batch);
      x.baseSequence = next;
      next = (next + x.count) % SEQ_MOD;
    }
    this.sequences.set(b.key, next);
    return true;
  }

  /** `unanswered`: an earlier attempt went out on a stream that broke before its answer (a broker restarted with a smaller limit may have written it). */
  private batchOversizeError(bytes: number, topic: string, partition: number, unanswered = false): UringmqError {
    return new UringmqError('RECORD_TOO_LARGE', `a batch of ${bytes} bytes for ${topic}/${partition} is larger than the broker takes (its maxBatchBytes is ${this.serverMaxBatchBytes}); send fewer records per sendBatch, or raise maxBatchBytes on the broker; ${unanswered ? 'an earlier attempt of it, on a connection that broke before its answer, may have been written' : 'nothing was written'}`);
  }

  private oversizeError(bytes: number, topic: string, partition: number): UringmqError {
    return new UringmqError('RECORD_TOO_LARGE', `a batch of ${bytes} bytes for ${topic}/${partition} is larger than the server reads (its maxMessageBytes is ${this.serverMaxMessageBytes}); send fewer records per sendBatch, or raise maxMessageBytes on the server`);
  }

  /** The key's entry exists while a batch to it is pending (made in submit, kept by `pending`). */
  private producerIdFor(key: string): number {
    return this.producerId ? this.restarted.get(key)!.producerId : 0;
  }

  /** `sent`: the batch is in flight (sent, its answer not come): the broker may have written it. */
  private timeoutError(b: OutBatch, sent = false): UringmqError {
    // Why it kept failing (a server at its stream limit, say) is the useful part.
    const last = b.lastError;
    // A batch that went out may be written after all (a broker answering late, a
    // connection that broke after the request reached it): said, as Kafka's producer
    // says of a batch it expired, or a caller sends it again and it is there twice.
    const maybe = sent || b.unanswered ? '; it was sent and may still be written' : '';
    return new UringmqError(
      'UNAVAILABLE',
      `batch for ${b.topic}/${b.partition} not acknowledged within deliveryTimeoutMs (${this.deliveryTimeoutMs} ms)${maybe}${last ? `; it last failed with ${last.code}: ${last.message}` : ''}`,
      last ? { cause: last } : undefined,
    );
  }

  /**
   * Fails a batch for good. An idempotent producer's partition then starts afresh
   * under a new producer id: the broker expects the failed batch's sequence number
   * next and would refuse every later batch as out of order, forever. Batches
   * already numbered after it fail with it (staleError), so that what does land keeps
   * send order.
   */
  private giveUp(b: OutBatch, err: UringmqError, inTransport: boolean): void {
    if (b.producerId && b.producerId === this.producerIdFor(b.key)) {
      this.restarted.set(b.key, { producerId: newProducerId(), cause: err, oldId: b.producerId, failedSeq: b.seq });
      this.sequences.set(b.key, 0);
    } else if (b.producerId) {
      // A batch numbered before the one that restarted the partition fails too: the
      // old id's batches after it are now the stale ones.
      const r = this.restarted.get(b.key);
      if (r && r.oldId === b.producerId && b.seq < r.failedSeq) {
        r.failedSeq = b.seq;
        r.cause = err;
      }
    }
    if (inTransport) b.abandon(err);
    else b.reject(err);
  }

  /**
   * Why a batch numbered under its partition's old producer id cannot be sent any more;
   * null if it can: a batch numbered before the one that failed still goes (the
   * broker's state for the old id expects it), one numbered after would land out of
   * order.
   */
  private staleError(b: OutBatch): UringmqError | null {
    if (!b.producerId || b.producerId === this.producerIdFor(b.key)) return null;
    const r = this.restarted.get(b.key)!;
    if (b.producerId === r.oldId && b.seq < r.failedSeq) return null;
    // Set: the id changes only there while a batch of the partition is pending.
    const cause = r.cause!;
    // Sent before, on a connection that broke: that attempt may be in the log (its ack
    // lost), which a caller must know before it sends the records again.
    const maybe = b.unanswered ? '; this one was sent on a connection that broke before its answer came and may have been written' : '';
    return new UringmqError(cause.code, `an earlier batch for ${b.topic}/${b.partition} failed (${cause.message}); this one was sent after it and fails with it, so the partition keeps send order${maybe}`);
  }

  /** True if a batch numbered before `b` under its partition's producer id is pending (sent, queued, or waiting out a retry delay). */
  private earlierPending(b: OutBatch): boolean {
    const before = (x: OutBatch) => x.key === b.key && x.producerId === b.producerId && x.seq < b.seq;
    for (const x of this.inflight.values()) if (before(x)) return true;
    for (const x of this.retrying.keys()) if (before(x)) return true;
    return this.queue.some(before);
  }

  /** In-flight slots taken: sent, queued to be sent, waiting to be sent again, or handed to a waiter. */
  private slotsInUse(): number {
    return this.inflight.size + this.queue.length + this.retrying.size + this.granted;
  }

  /** A slot may have freed: the longest waiting submit() gets it, else the oldest ready accumulator is cut. */
  private wakeCapacity(): void {
    if (this.capacityWaiters.length > 0) {
      while (this.capacityWaiters.length > 0 && this.slotsInUse() < this.maxInFlight) {
        this.granted++;
        this.capacityWaiters.shift()!();
      }
      return;
    }
    const oldest = this.readyAccs.values().next();
    if (!oldest.done) this.flushAcc(oldest.value);
  }
}

// ------------------------------------------------------------------------------------
/** A delivery: raw batches decoded lazily when the app gets to it, or decoded records. */
type Chunk = {
  partition: number;
  raw?: Buffer;
  from?: number;
  to?: number;
  /** of the records of `raw` in [from, to) */
  rawDeliveryCount?: number;
  records: DecodedRecord[];
  deliveryCounts: number[] | null;
  /** Delivery.epoch - 1 (the coordinator's resets); undefined from a server that sends none. */
  resets: number | undefined;
  session: number;
  arrived: number;
};

export class RemoteConsumer implements GroupConsumerApi {
  private stream: SubscribeChannel | null = null;
  private readonly chunks: Chunk[] = [];
  private wake: (() => void) | null = null;
  private session = 0;
  private closed = false;
  /** close()'s work, which a second close() waits for too. */
  private closing: Promise<void> | null = null;
  private fatal: UringmqError | null = null;
  private started = false;
  /**
   * per partition: [from, to, epoch, from, to, epoch, ...] ranges to ack. A range never
   * spans two epochs (deliveries before and after a CommitOffset moved the partition):
   * the broker takes or ignores a range whole by its epoch.
   */
  private pendingAcks = new Map<number, number[]>();
  /** The last partition acked and its pendingAcks list: acks come in runs per partition. Reset with pendingAcks. */
  private lastAck: { partition: number; list: number[] } | null = null;
  private pendingAckCount = 0;
  private pendingCredit = 0;
  private flushTimer: NodeJS.Timeout | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  /** The reconnect after a broken stream, waiting out its backoff (close() clears it). */
  private reconnectTimer: NodeJS.Timeout | null = null;
  private member: string | undefined;
  private partitions: number[] = [];
  private attempts = 0;
  private readonly maxUnacked: number;
  private readonly flowOpts: ResolvedFlowOptions;
  private readonly meter = new FeedbackMeter();
  /** arrival time of the delivery the app is working on, while it is */
  private inApp: number | undefined;
  private feedbackTimer: NodeJS.Timeout | null = null;

  /** Where the message-at-a-time iterator is in the batch it is handing out, and that batch's session. */
  private readonly cursor: FlattenCursor<ConsumedMessage> = { batch: [], next: 0 };
  private cursorSession = 0;

  private readonly opts: RemoteConsumerOptions;

  /** @internal use client.consumer() */
  constructor(private readonly client: Client, opts: RemoteConsumerOptions) {
    if (opts === null || typeof opts !== 'object') throw invalid('consumer options must be an object');
    // Its own copy: subscribe (at the first iteration, and again at each reconnect)
    // must not follow a caller that reuses or changes its object afterwards.
    opts = this.opts = ownOptions(opts);
    refusePartitionOptions(opts, 'subscribe');
    // The embedded consumer's: Subscribe carries none, and the broker's 10 s applied.
    const sessionTimeoutMs = (opts as { sessionTimeoutMs?: unknown }).sessionTimeoutMs;
    if (sessionTimeoutMs !== undefined)
      throw invalid(`sessionTimeoutMs (${shown(sessionTimeoutMs)}) is an option of the embedded group consumer: a remote member has the broker's session timeout (10 s), which Subscribe cannot change; leave it out`);
    // Names as broker.consumer() checks them, when the consumer is made: sent as they
    // are, a bad one failed only the first next(), and one that is no string went out as
    // "" (protobufjs's default), which the server's error then named instead.
    validateTopicName(opts.topic);
    validateGroupName(opts.group);
    checkConsumerOptions(opts);
    if (opts.deadLetterTopic === opts.topic) throw invalid(`deadLetterTopic must differ from the topic itself (${opts.topic})`);
    if (opts.plainRecords !== undefined && typeof opts.plainRecords !== 'boolean') throw invalid(`plainRecords must be a boolean, got ${shown(opts.plainRecords)}`);
    checkConnectionStateOption(opts.onConnectionState);
    this.maxUnacked = opts.maxUnacked ?? 512;
    this.flowOpts = resolveFlowOptions(opts.flow, this.maxUnacked); // validated here, sent with subscribe
  }

  get memberId(): string | undefined {
    return this.member;
  }
  get assignment(): readonly number[] {
    return this.partitions;
  }

  private open(): void {
    let s: SubscribeChannel;
    try {
      s = openSubscribe(this.client);
    } catch (e) {
      // The channel was closed under us (client.close(), or grpc.Client#close).
      this.fatal = new UringmqError('UNAVAILABLE', `cannot subscribe: ${(e as Error).message}`);
      this.notify();
      return;
    }
    const session = ++this.session;
    this.stream = s;
    this.pendingAcks.clear(); // acks of a previous session: those messages come again
    this.lastAck = null;
    this.pendingCredit = 0;
    const from = this.opts.from ?? 'latest';
    s.write({
      subscribe: {
        topic: this.opts.topic,
        group: this.opts.group,
        from: from === 'earliest' ? pb.StartFrom.EARLIEST : from === 'latest' ? pb.StartFrom.LATEST : pb.StartFrom.OFFSET,
        from_offset: typeof from === 'object' ? from.offset : 0,
        ack_deadline_ms: this.opts.ackDeadlineMs ?? 0,
        max_unacked: this.maxUnacked,
        max_deliveries: this.opts.maxDeliveries ?? 0,
        dead_letter_topic: this.opts.deadLetterTopic ?? '',
        plain_records: this.opts.plainRecords ?? false,
        initial_credit: this.maxUnacked,
        flow: {
          min_window: this.flowOpts.minWindow,
          window_step: this.flowOpts.windowStep,
          latency_threshold_ms: this.flowOpts.latencyThresholdMs,
          feedback_interval_ms: this.flowOpts.feedbackIntervalMs,
          min_rate_per_sec: this.flowOpts.minRatePerSec,
        },
      },
    });
    s.on('data', (res: uringmq.v1.SubscribeResponse) => {
      // After close(), until the server sees the half-close: nothing more is handed out.
      if (session !== this.session || this.closed) return;
      if (this.attempts > 0) tellConnectionState(this.opts.onConnectionState, { state: 'reconnected', attempts: this.attempts });
      this.attempts = 0;
      if (res.assignment) {
        this.member = res.assignment.member_id ?? undefined;
        this.partitions = [...(res.assignment.partitions ?? [])];
        return;
      }
      const d = res.delivery;
      if (!d) return;
      const partition = d.partition ?? 0;
      const resets = resetsOf(d.epoch);
      if (d.batches && d.batches.length)
        this.chunks.push({
          partition,
          raw: d.batches as Buffer,
          from: Number(d.from_offset),
          to: Number(d.to_offset),
          rawDeliveryCount: d.delivery_count || 1,
          records: [],
          deliveryCounts: null,
          resets,
          session,
          arrived: performance.now(),
        });
      if (d.records && d.records.length) {
        const recs: DecodedRecord[] = d.records.map((r) => ({
          offset: Number(r.offset),
          timestamp: Number(r.timestamp),
          key: r.key ? (r.key as Buffer) : null,
          value: (r.value ?? Buffer.alloc(0)) as Buffer,
          headers: (r.headers ?? {}) as Record<string, Buffer>,
        }));
        this.chunks.push({ partition, records: recs, deliveryCounts: d.records.map((r) => r.delivery_count || 1), resets, session, arrived: performance.now() });
      }
      this.notify();
    });
    const broken = (err?: unknown) => {
      // grpc-js emits 'end' right after 'error': only the first one counts, or a
      // fatal error would be followed by a reconnect that hides it.
      if (session !== this.session || this.stream !== s) return;
      this.stream = null;
      if (this.closed) return this.notify();
      // The rest of the batch the app is being handed a message at a time came on this
      // stream: its acks can no longer reach the broker, which delivers those messages
      // again. Handed out now, each was processed twice, and the redelivery after it
      // went back in offsets.
      if (this.cursorSession === session) this.cursor.next = this.cursor.batch.length;
      const e = err ? fromServiceError(err, this.client.maxMessageBytes) : new UringmqError('UNAVAILABLE', 'subscribe stream ended by the server');
      // What this stream delivered and the app was not handed goes too (nor are acks of
      // it possible now): after a reconnect it comes again; after an error that ends
      // the consumer, the error comes next.
      this.chunks.length = 0;
      if ((!RETRYABLE.has(e.code) && !sessionExpired(e)) || limitReached(e)) {
        this.fatal = e;
        return this.notify();
      }
      // Reconnect and resume from committed offsets; what we held unacked comes again.
      const delay = reconnectDelayMs(this.attempts++);
      tellConnectionState(this.opts.onConnectionState, { state: 'reconnecting', error: e, attempt: this.attempts, delayMs: delay });
      this.reconnectTimer = setTimeout(() => {
        this.reconnectTimer = null;
        if (!this.closed && !this.stream && !this.client.isClosed) this.open();
      }, delay);
    };
    s.on('error', (e) => broken(e));
    s.on('end', () => broken());
    if (!this.heartbeatTimer) {
      this.heartbeatTimer = setInterval(() => this.stream?.write({ heartbeat: true }), 3000);
    }
    if (!this.feedbackTimer) {
      // What this consumer's iterator measured: the broker sizes its window and rate by it.
      this.feedbackTimer = setInterval(() => {
        const f = this.meter.take(this.oldestWaiting());
        this.stream?.write({ feedback: { processed_per_sec: f.processedPerSec, latency_ms: f.latencyMs } });
      }, this.flowOpts.feedbackIntervalMs);
    }
  }

  private notify(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  /** When the oldest delivery not yet handled by the app arrived (undefined: none). */
  private oldestWaiting(): number | undefined {
    return this.inApp ?? this.chunks[0]?.arrived;
  }

  /** @internal the Acker of this session's messages; epoch: Delivery.epoch of the message (0: not checked) */
  queueAck(partition: number, offset: number, session: number, epoch: number): void {
    if (session !== this.session || !this.stream) return; // that session's messages are redelivered anyway
    // In-order acks extend the last range of their partition: no sorting, no per-ack garbage.
    let l: number[] | undefined;
    if (this.lastAck !== null && this.lastAck.partition === partition) l = this.lastAck.list;
    else {
      l = this.pendingAcks.get(partition);
      if (!l) this.pendingAcks.set(partition, (l = []));
      this.lastAck = { partition, list: l };
    }
    const n = l.length;
    if (n >= 3 && l[n - 2] === offset && l[n - 1] === epoch) l[n - 2] = offset + 1;
    else l.push(offset, offset + 1, epoch);
    this.pendingAckCount++;
    this.scheduleFlush(this.pendingAckCount >= 4096);
  }

  /** @internal the Acker of this session's messages */
  sendNack(partition: number, offset: number, delayMs: number, deliveryCount: number, session: number, epoch: number): void {
    if (session === this.session) this.stream?.write({ nack: { partition, offset, delay_ms: delayMs, delivery_count: deliveryCount, epoch } });
  }

  private scheduleFlush(now: boolean): void {
    if (now) return this.flushAcks();
    this.flushTimer ??= setTimeout(() => this.flushAcks(), 5);
  }

  private flushAcks(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    const s = this.stream;
    if (!s) return;
    const ranges: Array<{ partition: number; from_offset: number; to_offset: number; epoch: number }> = [];
    // Each partition's list is emptied, not the Map cleared: clear() leaves the old
    // table (once tenured) holding the lists through young GCs (see IdTable).
    for (const [partition, l] of this.pendingAcks) {
      for (let i = 0; i < l.length; i += 3) ranges.push({ partition, from_offset: l[i]!, to_offset: l[i + 1]!, epoch: l[i + 2]! });
      l.length = 0;
    }
    this.lastAck = null;
    this.pendingAckCount = 0;
    if (ranges.length) s.write({ acks: { ranges } });
    if (this.pendingCredit > 0) {
      s.write({ credit: this.pendingCredit });
      this.pendingCredit = 0;
    }
  }

  /**
   * Resolves once the server has taken the member out of its group (see
   * endAndAwaitLeave), or the stream is lost, or the server left a liveness probe
   * unanswered (about a second; see Client.close).
   */
  close(): Promise<void> {
    return (this.closing ??= this.closeNow());
  }

  private async closeNow(): Promise<void> {
    this.flushAcks();
    this.closed = true;
    // Delivered but not handed to the app: given back to the group, that delivery not
    // counted (counted, a few quick join/close cycles dead-lettered a message unseen);
    // handed out after the close, it was processed twice (its ack never sent).
    this.giveBack();
    this.chunks.length = 0;
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    if (this.feedbackTimer) clearInterval(this.feedbackTimer);
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    const s = this.stream;
    this.stream = null;
    // The acks and returned ranges above go first, on the same stream; a stream already
    // lost (or a reconnect waiting) leaves nothing to wait for.
    const left = s ? endAndAwaitLeave(s.direct ? s : boundGrpcEnd(s as unknown as GrpcCallStream, this.client.grpcProbe)) : undefined;
    this.notify();
    this.client.forget(this);
    await left;
  }

  /** Sends the deliveries of this session the app was never handed back to the group (see close()). */
  private giveBack(): void {
    const s = this.stream;
    const inBatch = returnedOf(this.cursor);
    const back = this.cursorSession === this.session ? inBatch : []; // a broken stream's: they come again anyway
    for (const c of this.chunks) {
      if (c.session !== this.session) continue;
      if (c.raw) back.push({ partition: c.partition, from: c.from!, to: c.to!, deliveryCount: c.rawDeliveryCount ?? 1, resets: c.resets });
      c.records.forEach((r, i) => back.push({ partition: c.partition, from: r.offset, to: r.offset + 1, deliveryCount: c.deliveryCounts ? c.deliveryCounts[i]! : 1, resets: c.resets }));
    }
    if (!s || back.length === 0) return;
    // The server takes at most MAX_ACK_RANGES (a Returned of more ends the call unread);
    // what does not fit is redelivered as everything else this member held, counted.
    if (back.length > MAX_ACK_RANGES) back.length = MAX_ACK_RANGES;
    s.write({
      returned: { ranges: back.map((r) => ({ partition: r.partition, from_offset: r.from, to_offset: r.to, delivery_count: r.deliveryCount, epoch: wireEpoch(r.resets) })) },
    });
  }

  [Symbol.asyncIterator](): AsyncIterator<ConsumedMessage> {
    return closesOnEarlyReturn(flatten(this.batches(), () => this.closed, this.cursor), () => this.close());
  }

  /** Deliveries as arrays: one await per batch; each message still acked on its own. */
  batches(): AsyncIterable<ConsumedMessage[]> {
    if (this.started) throw invalid('a consumer can be iterated once');
    this.started = true;
    // A consumer closed before it is iterated ends at once: subscribing now would join
    // a member nobody closes (close() is done), holding partitions and their messages.
    if (!this.closed) this.open();
    return { [Symbol.asyncIterator]: () => closesOnEarlyReturn(this.run(), () => this.close()) };
  }

  private expand(c: Chunk): ConsumedMessage[] {
    const topic = this.opts.topic;
    const session = c.session;
    // The chunk's epoch is the same for all its messages: taken here, not from each one.
    const epoch = wireEpoch(c.resets);
    const acker: Acker = { ack: (p, o) => this.queueAck(p, o, session, epoch), nack: (p, o, d, n) => this.sendNack(p, o, d, n, session, epoch) };
    const p = c.partition;
    if (c.raw) {
      return groupMessages(c.raw, c.from!, c.to!, acker, topic, p, c.rawDeliveryCount ?? 1, c.resets);
    }
    return c.records.map((r, i) => new GroupMessage(acker, topic, p, r.offset, r.timestamp, r.key, r.value, r.headers, c.deliveryCounts ? c.deliveryCounts[i]! : 1, c.resets));
  }

  private async *run(): AsyncGenerator<ConsumedMessage[]> {
    try {
      for (;;) {
        if (this.closed) return;
        const c = this.chunks.shift();
        if (c) {
          if (c.session !== this.session) continue;
          const msgs = this.expand(c);
          if (msgs.length === 0) continue;
          this.inApp = c.arrived;
          this.cursorSession = c.session;
          yield msgs;
          this.inApp = undefined;
          this.meter.handled(msgs.length, c.arrived);
          // Credit is per stream: messages of a stream that broke meanwhile return none.
          if (c.session === this.session) {
            this.pendingCredit += msgs.length;
            this.scheduleFlush(this.pendingCredit >= this.maxUnacked / 4);
          }
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
