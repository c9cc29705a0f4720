/**
 * The gRPC broker: uringmq.v1.Broker served with @grpc/grpc-js over a Broker.
 * Publish batches go to the core untouched (the core verifies their CRC); Subscribe
 * streams whole batches from the log and takes acks, credits and heartbeats on the
 * same stream. Every failure becomes a precise status with the uringmq code in the
 * `uringmq-code` trailer; one bad request never affects another.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import * as http2 from 'node:http2';
import { isIPv6 } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { UringmqError, invalid } from '../errors';
import { PartialMessageBudget } from './framing';
import { HEADER_SIZE, decodeEach, encodeBatch, readBatchMeta, sealBatch, uvarintSize, type BatchMeta, type DecodedRecord, type RecordInput } from '../codec/record_batch';
import { PUBLISH_OWNED_BATCH, type Broker, type PublishResult, type TopicDescription } from '../broker/broker';
import type { DeliverySink, GroupMember, RedeliveredRecord } from '../broker/groups';
import { checkRecordSize, validateRecord, validateTopicName } from '../broker/validate';
import { pb, resetsOf, wireEpoch, type uringmq } from './proto';
import { brokerService, isMalformed, type Malformed } from './service';
import { MAX_PLAIN_HEADERS, MAX_PLAIN_RECORDS, type DecodedPublishRequest } from './publish_request';
import { MAX_BATCH_HEADER, MAX_MESSAGE_HEADER, toServiceError } from './status';
import { encodeDeliveryResponse, encodeSubscribeResponse, publishAnswer } from './response_encoders';
import { countGrpcJsCall, deferRefusal, grpcJsStreamOf } from './grpcjs_budget';
import { resetAfterStatus, resetUnreadCallLater, routeDirectStreams, takenDirect, type PublishCallHandler, type PublishCallIO, type StreamCallHandler, type StreamCallIO, type SubscribeCallHandler, type SubscribeCallIO } from './direct_streams';
import { WaiterList } from '../broker/waiter_list';
import { checkAuthToken } from '../fetch/protocol';

type V1 = typeof uringmq.v1;

/**
 * What the metrics see of the calls (src/metrics installs one per server): plain
 * callbacks, so this module does not depend on prom-client and costs nothing without.
 * `code` is the uringmq error code, or 'OK'.
 */
export interface CallObserver {
  /** A unary call, or one PublishStream batch, answered after `seconds`. */
  request(method: string, code: string, seconds: number): void;
  /** A PublishStream or Subscribe call ended, or was refused at its start. */
  streamEnded(method: string, code: string): void;
}

const codeOf = (e: unknown): string => (e instanceof UringmqError ? e.code : 'INTERNAL');
/** A decoded request message of the given type. */
type Req<K extends keyof V1> = InstanceType<Extract<V1[K], new (...a: never[]) => unknown>>;

export interface KeepaliveOptions {
  /** Send a keepalive ping after this much idle time (default 30 s). */
  keepaliveTimeMs?: number;
  /** Close the connection if the ping is not answered within this time (default 10 s). */
  keepaliveTimeoutMs?: number;
  /** Allow client pings when no call is active (default true). */
  permitWithoutStream?: boolean;
  /** Close connections older than this, gracefully (default: never). */
  maxConnectionAgeMs?: number;
  /** Time given to calls on a connection closed for age (default: unlimited). */
  maxConnectionAgeGraceMs?: number;
}

export interface ServerOptions extends KeepaliveOptions {
  broker: Broker;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** Largest gRPC message accepted or sent (default 16 MiB). */
  maxMessageBytes?: number;
  /**
   * Streaming calls (PublishStream, Subscribe) open at once; more get RESOURCE_EXHAUSTED
   * (default 1000). A call keeps its place until what it wrote has reached its client;
   * once its status is decided, a client that takes none of it for UNREAD_CALL_PERIOD_MS
   * (10 s) has the call reset (resetUnreadCallLater).
   */
  maxConcurrentStreams?: number;
  /**
   * Client connections open at once (default 1024, as the fetch plane's); more are
   * closed as they arrive, which a client sees as UNAVAILABLE. Each connection may
   * hold up to its HTTP/2 window (64 MiB) of requests not yet read, so this also
   * bounds that memory. A Node client uses one connection for its unary calls and
   * one per producer stream and consumer.
   */
  maxConnections?: number;
  /** Batches in flight per PublishStream before the server stops reading it (default 256). */
  maxInFlightPerStream?: number;
  /**
   * Bytes held at once by requests received in part, over all calls (default 256 MiB,
   * at least maxMessageBytes). On PublishStream and Subscribe served on node:http2 a
   * request up to 1 MiB counts its announced length from its first bytes, a longer one
   * the bytes that have arrived; one that arrives whole in one read counts nothing. On
   * the calls grpc-js serves, what it holds: a unary call's request until the client
   * ends it, a stream's message until it is whole (grpcjs_budget.ts). A call whose
   * next bytes would pass it ends with RESOURCE_EXHAUSTED (on a stream, its requests
   * before are answered first; the call is reset if what it wrote waits for its client
   * and none of it reaches the client in 10 s, UNREAD_CALL_PERIOD_MS: answers held up
   * by a slow disk are waited for). maxMessageBytes bounds one call; this bounds them all.
   */
  maxPartialMessageBytes?: number;
  /**
   * Of maxPartialMessageBytes, the most one client connection's calls may hold at once
   * (default a quarter of it, at least maxMessageBytes; between maxMessageBytes and
   * maxPartialMessageBytes): one connection (many streams sending large messages
   * slowly) cannot hold all of it and have every other connection's calls refused. A
   * call past it ends as one past maxPartialMessageBytes does, its status naming this.
   */
  maxPartialMessageBytesPerConnection?: number;
  tls?: { cert: Buffer; key: Buffer; ca?: Buffer; requireClientCert?: boolean };
  logger?: Logger;
  /**
   * Shared secret (default: none): every call must carry the metadata
   * `authorization: Bearer <token>`, else UNAUTHENTICATED. The fetch plane takes the
   * same token in its hello. Over plaintext it is only as secret as the network.
   */
  authToken?: string;
  /**
   * Serve PublishStream and Subscribe on node:http2 directly where the call allows it
   * (default true; see src/grpc/direct_streams.ts). false leaves every call to grpc-js.
   */
  directStreams?: boolean;
}

const MiB = 1 << 20;
const FLOW_WINDOW = 16 * MiB;

/** The service's methods by their HTTP/2 path. */
const METHODS_BY_PATH = new Map(Object.values(brokerService).map((m) => [m.path, m]));

const EMPTY = Buffer.alloc(0);

/** A request's sequence as it was sent: protobufjs decodes uint64 to a number, exact only below 2^53. */
function checkSequence(seq: unknown): void {
  if (typeof seq === 'number' && !(Number.isSafeInteger(seq) && seq >= 0))
    throw invalid(`sequence ${seq} is not below 2^53: its answer could not name it exactly (a client numbers its requests from 1 up)`);
}

/**
 * permitWithoutStream false: a client that PINGs a connection with no call open is told
 * to stop (GOAWAY ENHANCE_YOUR_CALM, "too_many_pings", after two such pings, as gRPC
 * core servers do). grpc-js passes `grpc.keepalive_permit_without_calls` to its clients
 * only; its server does not police pings, so it is done here.
 */
function refusePingsWithoutCalls(session: http2.ServerHttp2Session): void {
  let open = 0;
  let strikes = 0;
  session.on('stream', (st: http2.ServerHttp2Stream) => {
    open++;
    strikes = 0;
    st.once('close', () => open--);
  });
  session.on('ping', () => {
    if (open > 0 || ++strikes <= 2 || session.closed || session.destroyed) return;
    session.goaway(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM, 0, Buffer.from('too_many_pings'));
    session.close();
  });
}

/** Unary Fetch calls waiting for data at once; more are answered without waiting. */
const MAX_LONG_POLLS = 1024;

/** Answers a PublishStream client has not read, past which the server stops reading its requests. */
const MAX_UNREAD_ANSWER_BYTES = 1 << 20;

/**
 * Deliveries a Subscribe client has not read, past which its member is sent nothing
 * more until half of them are written to the socket: credit and the window count
 * messages, not bytes, and messages taken back at the ack deadline are sent again.
 */
const MAX_UNREAD_DELIVERY_BYTES = 4 << 20;

/**
 * A Fetch answer of at least this many bytes of batches is watched for a client that
 * never reads it (resetUnreadCallLater): grpc-js sends the status only once the answer
 * is written, so a client whose window stays shut held the call, its stream slot and
 * up to maxMessageBytes of answer for as long as its connection lived. Half of HTTP/2's
 * default stream window: a smaller answer (a plain-records one is up to about twice its
 * batches) fits in a window the client has not shut, and smaller ones left unread wait
 * in their session, which Node's maxSessionMemory bounds (new calls refused, then the
 * connection dropped: about 16,000 unread DescribeTopic answers). Only these pay for
 * the watch (a few µs a call).
 */
const WATCHED_FETCH_ANSWER_BYTES = 32 << 10;
/**
 * How long a shutdown waits for a Subscribe member's acks before it ends the call. The
 * client library sends acks every 5 ms: ended at once, what its app had acked in that
 * time was lost with the stream, and came again after the restart.
 */
const SHUTDOWN_ACK_WAIT_MS = 250;

/**
 * How PublishStream answers go out. grpc-js's ServerDuplexStream is a Writable without
 * _writev: it hands the HTTP/2 stream one message at a time and waits until each has
 * been flushed to the socket, one event-loop turn apiece, so the acks of the batches
 * one group-commit cycle made durable left over as many turns. The call it wraps (its
 * ServerInterceptingCall, whose sendMessage is what _write calls) writes straight to
 * the HTTP/2 stream, whose own Writable sends whatever queued behind in one writev.
 * bench:latency-parts, 2026-11-30 23:35, two alternating pairs at 10k msgs/s: durable →
 * publish ack p99 5.79 / 5.23 ms through the Writable, 1.91 / 1.52 ms this way (durable
 * → consumer read 1.5–2.1 in all four). Used only where nothing else writes on the call
 * and its Writable's backpressure is not needed (a stream's unanswered batches are
 * bounded by maxInFlightPerStream, its unread answers by MAX_UNREAD_ANSWER_BYTES through
 * the `written` callback); falls back to call.write if grpc-js changes.
 */
function responseSender<T>(call: grpc.ServerDuplexStream<unknown, T>): (res: T, written: () => void) => void {
  const inner = (call as unknown as { call?: { sendMessage?: unknown } }).call;
  if (inner && typeof inner.sendMessage === 'function') {
    const sendMessage = inner.sendMessage as (m: T, cb: () => void) => void;
    return (res, written) => sendMessage.call(inner, res, written);
  }
  return (res, written) => void call.write(res, written);
}

/**
 * The server's numeric and typed settings, checked whatever set them (code, config
 * file, environment): a string or a negative number would otherwise reach grpc-js or a
 * comparison and quietly turn a limit off.
 */
function checkedOptions(opts: Omit<ServerOptions, 'broker'>) {
  if (opts === null || typeof opts !== 'object') throw invalid('server options must be an object');
  const opt = (v: number | undefined, name: string, dflt: number, min: number, max: number): number => {
    if (v === undefined) return dflt;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) throw invalid(`${name} must be an integer between ${min} and ${max}, got ${JSON.stringify(v)}`);
    return v;
  };
  const MAX_MS = 2 ** 31 - 1; // grpc-js and Node timers take 32-bit milliseconds
  const c = {
    maxStreams: opt(opts.maxConcurrentStreams, 'maxConcurrentStreams', 1000, 1, 1_000_000),
    maxInFlight: opt(opts.maxInFlightPerStream, 'maxInFlightPerStream', 256, 1, 65_536),
    maxConnections: opt(opts.maxConnections, 'maxConnections', 1024, 1, 1_000_000),
    // At least 64 KiB (Fetch answers take maxMessageBytes - 4096); at most 256 MiB,
    // four times the largest batch the log takes.
    maxMessageBytes: opt(opts.maxMessageBytes, 'maxMessageBytes', 16 * MiB, 64 * 1024, 256 * MiB),
    maxPartialMessageBytes: opt(opts.maxPartialMessageBytes, 'maxPartialMessageBytes', 256 * MiB, 64 * 1024, 2 ** 40),
    maxAge: opt(opts.maxConnectionAgeMs, 'maxConnectionAgeMs', 0, 0, MAX_MS),
    maxAgeGrace: opt(opts.maxConnectionAgeGraceMs, 'maxConnectionAgeGraceMs', 0, 0, MAX_MS),
    keepaliveTimeMs: opt(opts.keepaliveTimeMs, 'keepaliveTimeMs', 30_000, 1, MAX_MS),
    keepaliveTimeoutMs: opt(opts.keepaliveTimeoutMs, 'keepaliveTimeoutMs', 10_000, 1, MAX_MS),
  };
  // Less, and a message maxMessageBytes allows could never be read, whatever else is held.
  if (c.maxPartialMessageBytes < c.maxMessageBytes)
    throw invalid(`maxPartialMessageBytes (${c.maxPartialMessageBytes}) must be at least maxMessageBytes (${c.maxMessageBytes}): a message of maxMessageBytes could never be read`);
  const perConnection = opt(opts.maxPartialMessageBytesPerConnection, 'maxPartialMessageBytesPerConnection', Math.max(Math.floor(c.maxPartialMessageBytes / 4), c.maxMessageBytes), 64 * 1024, 2 ** 40);
  if (perConnection < c.maxMessageBytes)
    throw invalid(`maxPartialMessageBytesPerConnection (${perConnection}) must be at least maxMessageBytes (${c.maxMessageBytes}): a message of maxMessageBytes could never be read`);
  if (perConnection > c.maxPartialMessageBytes)
    throw invalid(`maxPartialMessageBytesPerConnection (${perConnection}) must be at most maxPartialMessageBytes (${c.maxPartialMessageBytes}), the share of which it is`);
  if (opts.authToken !== undefined) checkAuthToken(opts.authToken, 'authToken');
  if (opts.permitWithoutStream !== undefined && typeof opts.permitWithoutStream !== 'boolean') throw invalid(`permitWithoutStream must be true or false, got ${JSON.stringify(opts.permitWithoutStream)}`);
  if (opts.host !== undefined && (typeof opts.host !== 'string' || opts.host.length === 0)) throw invalid('host must be a non-empty string');
  opt(opts.port, 'port', 0, 0, 65_535);
  if (opts.directStreams !== undefined && typeof opts.directStreams !== 'boolean') throw invalid(`directStreams must be true or false, got ${JSON.stringify(opts.directStreams)}`);
  return { ...c, maxPartialMessageBytesPerConnection: perConnection };
}

export class BrokerServer {
  readonly broker: Broker;
  private readonly server: grpc.Server;
  private readonly log: Logger | undefined;
  private readonly maxStreams: number;
  private readonly maxConnections: number;
  /** Client PINGs on a connection with no call open are refused (GOAWAY) unless this is true. */
  private readonly permitWithoutStream: boolean;
  private connectionsOpen = 0;
  private connectionsRefused = 0;
  /** Refusals not yet logged, and when the last warning went out (at most one per 10 s). */
  private refusedUnlogged = 0;
  private refusedLoggedAt = 0;
  private readonly maxInFlight: number;
  /** grpc-js's limit on each message this server sends (and receives). */
  private readonly maxMessageBytes: number;
  private readonly streams = new Set<StreamHandle>();
  /** Bytes of requests received in part, on every call (maxPartialMessageBytes), each connection's in its share (maxPartialMessageBytesPerConnection). */
  private readonly partialBudget: PartialMessageBudget;
  /** PublishStream and Subscribe calls go to routeDirectStreams where it takes them. */
  private directRouted = false;
  /** Fetches waiting for data (max_wait_ms): stop() wakes them (a WaiterList: one comes and goes per long poll). */
  private readonly longPolls = new WaiterList();
  private stopping = false;
  private readonly authToken: Buffer | null;
  /** Set by metricsRegistry (the latest one made for this server). */
  callObserver: CallObserver | null = null;
  port = 0;

  /**
   * Checks the settings alone, with the errors start() would give, so that a command
   * line can refuse them before it opens (and creates) a data directory.
   */
  static checkOptions(opts: Omit<ServerOptions, 'broker'>): void {
    checkedOptions(opts);
  }

  private constructor(opts: ServerOptions) {
    const c = checkedOptions(opts);
    this.broker = opts.broker;
    this.log = opts.logger;
    this.maxStreams = c.maxStreams;
    this.maxInFlight = c.maxInFlight;
    this.maxConnections = c.maxConnections;
    this.permitWithoutStream = opts.permitWithoutStream ?? true;
    this.authToken = opts.authToken === undefined ? null : tokenDigest(opts.authToken);
    const maxMsg = c.maxMessageBytes;
    this.maxMessageBytes = maxMsg;
    this.partialBudget = new PartialMessageBudget(c.maxPartialMessageBytes, 'maxPartialMessageBytes', { limit: c.maxPartialMessageBytesPerConnection, setting: 'maxPartialMessageBytesPerConnection' });
    const { maxAge, maxAgeGrace } = c;
    const channelOptions: grpc.ServerOptions = {
      'grpc.max_receive_message_length': maxMsg,
      'grpc.max_send_message_length': maxMsg,
      'grpc.keepalive_time_ms': c.keepaliveTimeMs,
      'grpc.keepalive_timeout_ms': c.keepaliveTimeoutMs,
      'grpc.keepalive_permit_without_calls': (opts.permitWithoutStream ?? true) ? 1 : 0,
      'grpc.http2.min_ping_interval_without_data_ms': 5_000,
      // Channelz (grpc-js's introspection service, which this server does not expose)
      // counts and timestamps (Date.now()) every message of every call.
      'grpc.enable_channelz': 0,
    };
    if (maxAge) channelOptions['grpc.max_connection_age_ms'] = maxAge;
    if (maxAgeGrace) channelOptions['grpc.max_connection_age_grace_ms'] = maxAgeGrace;
    this.server = new grpc.Server(channelOptions);
    this.server.addService(brokerService, this.handlers());
    if (opts.directStreams !== false) {
      const routed = routeDirectStreams(this.server, {
        maxMessageBytes: maxMsg,
        maxBatchBytes: this.broker.maxBatchBytes,
        pool: this.broker.batchPool,
        budget: this.partialBudget,
        openPublish: (authorization, io) => this.openPublishCall(authorization, io),
        openSubscribe: (authorization, io) => this.openSubscribeCall(authorization, io),
        ended: (method, code) => this.callObserver?.streamEnded(method, code),
      });
      if (!routed) this.log?.warn('PublishStream and Subscribe stay on grpc-js (its internals changed)');
      this.directRouted = routed;
    }
  }

  /** Binds and starts serving. */
  static async start(opts: ServerOptions): Promise<BrokerServer> {
    const s = new BrokerServer(opts);
    const creds = opts.tls
      ? grpc.ServerCredentials.createSsl(opts.tls.ca ?? null, [{ private_key: opts.tls.key, cert_chain: opts.tls.cert }], opts.tls.requireClientCert ?? false)
      : grpc.ServerCredentials.createInsecure();
    const host = opts.host ?? '127.0.0.1';
    const addr = `${host.includes(':') ? `[${host}]` : host}:${opts.port ?? 50051}`;
    s.port = await new Promise<number>((resolve, reject) => s.server.bindAsync(addr, creds, (err, port) => (err ? reject(err) : resolve(port))));
    s.tuneListeners();
    // Deliveries carry whole batches: one the broker takes (maxBatchBytes) but this
    // server cannot send would stall every reader of its partition.
    if (s.maxMessageBytes < s.broker.maxBatchBytes + 64 * 1024)
      s.log?.warn(
        { maxMessageBytes: s.maxMessageBytes, maxBatchBytes: s.broker.maxBatchBytes },
        'maxMessageBytes is below the broker\'s maxBatchBytes + 64 KiB: batches written embedded or through another server may be too large to deliver from this one',
      );
    s.log?.info({ address: `${isIPv6(host) ? `[${host}]` : host}:${s.port}`, ioBackend: s.broker.ioBackend, dir: s.broker.dir }, 'uringmq serving');
    return s;
  }

  /**
   * What grpc-js has no option for, set on its http2 servers (a private field; if it
   * moves, the server starts without these and says so).
   * - TCP_NODELAY: grpc-js sets it on client sockets but not on accepted ones, so small
   *   server writes (publish acks, single-message deliveries) can sit in Nagle's buffer
   *   until the peer's delayed ACK: tens of ms at p99.
   * - The connection cap: net.Server's own maxConnections, which closes a connection
   *   past it before any HTTP/2 is spoken on it (the cheapest refusal there is). It
   *   counts per listener, and grpc-js makes one per address a host name resolves to
   *   ('localhost': 127.0.0.1 and ::1), so the total over all of them is checked too.
   * - The reset of a call's request side once its status is sent (resetAfterStatus).
   * - maxPartialMessageBytes (and each connection's share) on the calls grpc-js reads (countGrpcJsCall).
   */
  private tuneListeners(): void {
    const servers = (this.server as unknown as { http2Servers?: Map<import('node:net').Server, unknown> }).http2Servers;
    if (!(servers instanceof Map)) {
      this.log?.warn('cannot set TCP_NODELAY, the connection cap or maxPartialMessageBytes on grpc-js calls on accepted connections (grpc-js internals changed)');
      return;
    }
    for (const srv of servers.keys()) {
      // First, so that a status grpc-js sends as it takes the stream is seen too, and
      // its requests are counted from their first byte.
      srv.prependListener('stream', (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => {
        resetAfterStatus(stream, headers);
        if (!this.directRouted || !takenDirect(headers)) this.countGrpcJsCall(stream, headers);
      });
      srv.maxConnections = this.maxConnections;
      srv.on('drop', () => this.connectionRefused());
      srv.on('connection', (sock: import('node:net').Socket) => {
        if (this.connectionsOpen >= this.maxConnections) {
          // Past one listener's own cap but not the server's: the HTTP/2 server's
          // listener, registered first, has made a session on it already; it goes
          // with the socket.
          sock.destroy();
          this.connectionRefused();
          return;
        }
        sock.setNoDelay(true);
        this.connectionsOpen++;
        sock.once('close', () => this.connectionsOpen--);
      });
      // HTTP/2's default 64 KiB receive window caps a publish stream at one window
      // per round trip; batches are ~100 KiB each, so widen it (per stream and per
      // connection). Same private-field caveat as above.
      srv.on('session', (session: import('node:http2').ServerHttp2Session) => {
        try {
          session.settings({ initialWindowSize: FLOW_WINDOW });
          session.setLocalWindowSize(FLOW_WINDOW * 4);
        } catch {
          // an old Node or a closing session: keep the defaults
        }
        if (!this.permitWithoutStream) refusePingsWithoutCalls(session);
      });
    }
  }

  /** PublishStream and Subscribe calls open now. */
  get openStreams(): number {
    return this.streams.size;
  }

  /** Bytes held now by requests received in part (at most maxPartialMessageBytes). */
  get partialMessageBytes(): number {
    return this.partialBudget.held;
  }

  /** Of those, the most one client connection holds now (at most maxPartialMessageBytesPerConnection). */
  get largestConnectionPartialMessageBytes(): number {
    return this.partialBudget.largestShareHeld;
  }

  /** maxPartialMessageBytes on a call grpc-js is about to read; a unary one refused is told to the observer as its request. */
  private countGrpcJsCall(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders): void {
    const path = headers[':path'];
    const method = typeof path === 'string' ? METHODS_BY_PATH.get(path) : undefined;
    const start = performance.now();
    countGrpcJsCall(stream, {
      budget: this.partialBudget.forConnection(stream.session),
      wholeRequest: !method?.requestStream,
      // A stream's end is told by its handler (it ends the call: deferRefusal, or it sees it cancelled).
      refused: method && !method.requestStream ? (e) => this.callObserver?.request(method.originalName!, e.code, (performance.now() - start) / 1000) : undefined,
    });
  }

  /** Client connections open now. */
  get openConnections(): number {
    return this.connectionsOpen;
  }

  /** Connections closed on arrival because maxConnections were open, since start. */
  get refusedConnections(): number {
    return this.connectionsRefused;
  }

  private connectionRefused(): void {
    this.connectionsRefused++;
    this.refusedUnlogged++;
    const now = Date.now();
    if (now - this.refusedLoggedAt < 10_000) return;
    this.log?.warn({ refused: this.refusedUnlogged, maxConnections: this.maxConnections }, 'connections refused: maxConnections are open');
    this.refusedLoggedAt = now;
    this.refusedUnlogged = 0;
  }

  /**
   * Graceful stop: refuse new calls, end Subscribe streams (their unacked messages
   * stay for the next consumer), let in-flight publishes finish, then close the
   * broker (which syncs). After `graceMs`, whatever is left is cut.
   */
  stop(graceMs = 10_000): Promise<void> {
    // A later call (another signal's handler) waits for the same end: resolved at once,
    // its `await stop(); process.exit(0)` exited while the broker was still closing,
    // acks unsent and the data dir left marked as crashed.
    return (this.stopped ??= this.stopOnce(graceMs));
  }

  private stopped: Promise<void> | null = null;

  private async stopOnce(graceMs: number): Promise<void> {
    this.stopping = true;
    for (const h of [...this.streams]) h.shutdown();
    this.longPolls.wakeAll();
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        const sessions = this.openSessions();
        this.server.forceShutdown();
        for (const s of sessions) if (!s.destroyed) s.destroy();
        resolve();
      }, graceMs);
      this.server.tryShutdown(() => {
        clearTimeout(t);
        resolve();
      });
    });
    await this.broker.close();
    this.log?.info('uringmq stopped');
  }

  /**
   * The server's HTTP/2 connections. grpc-js's forceShutdown destroys only those it
   * tracks for channelz, which this server turns off, so a call still open at the end
   * of the grace (a publish the disk never answers) would keep its connection, and
   * the client waiting on it, after stop() returned. grpc-js keeps the connections
   * per listener in a private map; if that changes, this finds none (as before).
   */
  private openSessions(): http2.ServerHttp2Session[] {
    const out: http2.ServerHttp2Session[] = [];
    const servers = (this.server as unknown as { http2Servers?: unknown }).http2Servers;
    if (!(servers instanceof Map)) return out;
    for (const entry of servers.values()) {
      const sessions = (entry as { sessions?: unknown } | null)?.sessions;
      if (sessions instanceof Set) for (const s of sessions) if (typeof (s as { destroy?: unknown }).destroy === 'function') out.push(s as http2.ServerHttp2Session);
    }
    return out;
  }

  private handlers(): grpc.UntypedServiceImplementation {
    const b = this.broker;
    const unary =
      <Q, R>(method: string, fn: (req: Q, call: grpc.ServerUnaryCall<Q, R>) => Promise<R>) =>
      (call: grpc.ServerUnaryCall<Q, R>, cb: grpc.sendUnaryData<R>) => {
        const start = performance.now();
        const fail = (e: unknown) => {
          this.callObserver?.request(method, codeOf(e), (performance.now() - start) / 1000);
          cb(toServiceError(e));
        };
        if (!this.authorized(call.metadata.get('authorization')[0])) return fail(unauthenticated());
        if (isMalformed(call.request)) return fail(invalid(call.request.$malformed));
        fn(call.request, call).then((r) => {
          this.callObserver?.request(method, 'OK', (performance.now() - start) / 1000);
          cb(null, r);
        }, fail);
      };

    return {
      createTopic: unary('CreateTopic', async (req: Req<'CreateTopicRequest'>) => {
        // Presence, not value, says whether there is a limit: a present 0 is a limit of 0
        // (keep no sealed segment), as embedded; an absent field (all an old client sends) is none.
        const retention: { maxBytes?: number; maxAgeMs?: number } = {};
        if (req.retention?.max_bytes != null) retention.maxBytes = Number(req.retention.max_bytes);
        if (req.retention?.max_age_ms != null) retention.maxAgeMs = Number(req.retention.max_age_ms);
        const d = await b.createTopic(req.name, {
          partitions: req.partitions || undefined,
          segmentBytes: req.segment_bytes ? Number(req.segment_bytes) : undefined,
          retention,
        });
        return topicInfo(d);
      }),
      deleteTopic: unary('DeleteTopic', async (req: Req<'DeleteTopicRequest'>) => {
        await b.deleteTopic(req.name);
        return {};
      }),
      listTopics: unary('ListTopics', async () => ({ names: await b.listTopics() })),
      describeTopic: unary('DescribeTopic', async (req: Req<'DescribeTopicRequest'>) => topicInfo(await b.describeTopic(req.name, { groups: !req.skip_groups }))),
      publish: unary('Publish', async (req: Req<'PublishRequest'>) => {
        checkSequence(req.sequence);
        return publishResponse(req, await this.publish(req));
      }),
      publishStream: (call: grpc.ServerDuplexStream<Req<'PublishRequest'>, uringmq.v1.PublishResponse.$Properties>) => this.publishStream(call),
      fetch: unary('Fetch', async (req: Req<'FetchRequest'>, call: grpc.ServerUnaryCall<Req<'FetchRequest'>, unknown>) => this.fetch(req, call)),
      subscribe: (call: grpc.ServerDuplexStream<Req<'SubscribeRequest'>, uringmq.v1.SubscribeResponse.$Properties>) => this.subscribe(call),
      commitOffset: unary('CommitOffset', async (req: Req<'CommitOffsetRequest'>) => {
        await b.groups.commitOffset(req.group, req.topic, req.partition, Number(req.offset), req.run ?? 0, req.member_id || undefined);
        return {};
      }),
      getCommittedOffsets: unary('GetCommittedOffsets', async (req: Req<'GetCommittedOffsetsRequest'>) => await b.groups.committedState(req.group, req.topic)),
      deleteGroup: unary('DeleteGroup', async (req: Req<'DeleteGroupRequest'>) => {
        await b.deleteGroup(req.group, req.topic);
        return {};
      }),
    };
  }

  /** `copy` false: req.batch is the caller's until the promise settles (see Broker's PUBLISH_OWNED_BATCH). */
  private publish(req: DecodedPublishRequest, copy = true): Promise<PublishResult> {
    // The name first: the refusals below name the topic, and one no topic can have may
    // be as long as the request. In their message it made a PublishStream answer over
    // maxMessageBytes (the stream ended, later batches unanswered) and a unary call's
    // grpc-message trailer past what the client's HTTP/2 takes (it never got a status).
    try {
      validateTopicName(req.topic);
    } catch (e) {
      return Promise.reject(e);
    }
    if (req.plainRecordsOver !== undefined)
      return Promise.reject(invalid(`a PublishRequest carries at most ${MAX_PLAIN_RECORDS} plain records; this one to ${req.topic} carried ${req.plainRecordsOver}, and nothing of it was written: send them in several requests, or as a RecordBatch (docs/FORMAT.md), which has no such bound`));
    if (req.plainHeadersOver !== undefined)
      return Promise.reject(invalid(`the plain records of a PublishRequest carry at most ${MAX_PLAIN_HEADERS} headers in all; this one to ${req.topic} carried more, and nothing of it was written: send them in several requests, or as a RecordBatch (docs/FORMAT.md), which has no such bound`));
    const hasBatch = req.batch && req.batch.length > 0;
    const hasRecords = req.records && req.records.length > 0;
    if (hasBatch === hasRecords) return Promise.reject(invalid('a PublishRequest carries either a batch or records (exactly one)'));
    const partition = req.partition ?? undefined;
    const sync = req.sync === true;
    if (hasBatch) {
      // A RecordBatch's idempotence is in its header; the request's fields would be
      // ignored, so a client that sets them otherwise expects what it would not get.
      // Each field is checked alone (proto3 cannot tell 0 from unset), and only in a
      // batch whose frame checks out: a damaged one is CORRUPT_BATCH from publishBatch,
      // as without the fields (its CRC is the core's to check, on the I/O thread).
      const pid = Number(req.producer_id || 0);
      const seq = req.base_sequence || 0;
      if (pid !== 0 || seq !== 0) {
        const h = framedMeta(req.batch as Buffer);
        if (h && ((pid !== 0 && pid !== h.producerId) || (seq !== 0 && seq !== h.baseSequence)))
          return Promise.reject(invalid(`producer_id ${pid} and base_sequence ${seq} of a PublishRequest with a batch must be those of the batch's header (${h.producerId}, ${h.baseSequence}) or 0: a RecordBatch carries its own (docs/FORMAT.md)`));
      }
      return this.broker[PUBLISH_OWNED_BATCH](req.topic, req.batch as Buffer, partition, { copy, sync });
    }
    // Plain records: encode here, then the same path as a client batch.
    let batch: Buffer;
    try {
      const pid = Number(req.producer_id || 0);
      const baseSequence = req.base_sequence || 0;
      if (pid < 0 || (pid > 0 && (!Number.isSafeInteger(pid) || baseSequence < 0)) || (pid === 0 && baseSequence !== 0))
        throw invalid(`producer_id ${pid} with base_sequence ${baseSequence}: an idempotent producer's id is positive (below 2^53) and its sequence not negative; a request without one has both 0`);
      // Sized as they are checked, so a request of millions of records over the
      // broker's maxBatchBytes is refused before any of them is encoded.
      const recs: RecordInput[] = [];
      let bytes = HEADER_SIZE;
      for (let i = 0; i < req.records.length; i++) {
        const r = req.records[i]!;
        const headers: Record<string, Buffer> = {};
        // A header whose value the encoder left out (empty bytes) decodes as [].
        // defineProperty: a header named __proto__ is a header (protobufjs keeps it as
        // one), not the object's prototype, which the encoder would leave out.
        if (r.headers)
          for (const [k, v] of Object.entries(r.headers)) {
            const value = Array.isArray(v) && v.length === 0 ? EMPTY : (v as Buffer);
            if (k === '__proto__') Object.defineProperty(headers, k, { value, enumerable: true, writable: true, configurable: true });
            else headers[k] = value;
          }
        const rec: RecordInput = { key: (r.key as Buffer | null | undefined) ?? null, value: (r.value ?? EMPTY) as Buffer, headers };
        if (r.timestamp) rec.timestamp = Number(r.timestamp);
        validateRecord(rec, 'publish to', req.topic, i);
        bytes += checkRecordSize(rec, req.topic, this.broker.maxRecordBytes);
        if (bytes > this.broker.maxBatchBytes)
          throw new UringmqError('RECORD_TOO_LARGE', `the records of a request to ${req.topic} make a batch over maxBatchBytes ${this.broker.maxBatchBytes} (past record ${i} of ${req.records.length}); nothing was written: send them in smaller requests`);
        recs.push(rec);
      }
      batch = encodeBatch(recs, pid > 0 ? { producerId: pid, baseSequence } : {});
      sealBatch(batch); // then verified by the core like any client's batch
    } catch (e) {
      return Promise.reject(e);
    }
    return this.broker[PUBLISH_OWNED_BATCH](req.topic, batch, partition, { copy: false, sync }); // built here: nobody else holds it
  }

  /** PublishStream through grpc-js (the calls routeDirectStreams leaves to it, or all). */
  private publishStream(call: grpc.ServerDuplexStream<Req<'PublishRequest'>, uringmq.v1.PublishResponse.$Properties>): void {
    const send = responseSender(call);
    const ended = this.streamEnd('PublishStream');
    const io: PublishCallIO = grpcJsCallIO(call, (res, written) => send(res as unknown as uringmq.v1.PublishResponse.$Properties, written), ended);
    const auth = call.metadata.get('authorization')[0];
    const h = this.openPublishCall(auth, io);
    if (h instanceof UringmqError) return io.fail(h);
    const md = new grpc.Metadata();
    md.set(MAX_MESSAGE_HEADER, String(this.maxMessageBytes));
    md.set(MAX_BATCH_HEADER, String(this.broker.maxBatchBytes));
    call.sendMetadata(md);
    feedHandler(call, h, io, () => ended('CANCELLED'));
  }

  /**
   * One PublishStream call, over either transport: answers each request with its
   * batch's ack or error, and stops reading the call while maxInFlightPerStream of its
   * batches, or more than the disk keeps up with, wait.
   */
  private openPublishCall(authorization: string | Buffer | undefined, io: PublishCallIO): PublishCallHandler | UringmqError {
    const refused = this.admit(authorization);
    if (refused) return refused;
    const pool = this.broker.batchPool;
    let inflight = 0;
    let ended = false;
    let paused = false;
    /** Set by abort(): the status the call ends with once its batches are answered. */
    let failure: unknown = null;
    const handle: StreamHandle = {
      shutdown: () => {
        // Stop reading; in-flight batches finish, then the stream ends.
        io.pause();
        ended = true;
        if (inflight === 0) finish();
      },
    };
    this.streams.add(handle);
    let finished = false;
    // The call holds its place among maxConcurrentStreams until its answers are written
    // (or it is gone), not only until its status is decided: a client that ends its
    // calls without reading their answers would otherwise pile them up, call after call.
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.streams.delete(handle);
    };
    const finish = () => {
      if (finished) return;
      finished = true;
      if (failure !== null) io.fail(failure);
      else io.end();
      if (io.unflushed === 0) release(); // else once they are (onFlushed), or gone()
    };
    /** Nothing more is read; the call ends with e's status once the requests before it are answered. */
    const abort = (e: unknown) => {
      io.pause();
      failure ??= e;
      ended = true;
      if (inflight === 0) finish();
    };
    let awaitingDisk = false;
    const waitForDisk = () => {
      if (awaitingDisk) return;
      awaitingDisk = true;
      void this.broker.whenWritable().then(() => {
        awaitingDisk = false;
        maybeResume();
      });
    };
    const maybeResume = () => {
      if (!paused || ended || inflight >= this.maxInFlight / 2 || io.unflushed > MAX_UNREAD_ANSWER_BYTES / 2) return;
      if (this.broker.overHighWater) return waitForDisk();
      paused = false;
      io.resume();
    };
    io.onFlushed = () => {
      if (!finished) maybeResume();
      else if (io.unflushed === 0) release();
    };
    const answer = (res: Buffer) => {
      inflight--;
      io.send(res);
      // A client that sends and does not read its answers: they wait in this process
      // (answers of refused requests come at once, so inflight alone does not bound them).
      if (!paused && io.unflushed > MAX_UNREAD_ANSWER_BYTES) {
        paused = true;
        io.pause();
      }
      maybeResume();
      if (ended && inflight === 0) finish();
    };
    return {
      request: (req, owned) => {
        if (failure !== null) {
          if (owned) pool.release(owned); // after a request that ended the call: not taken
          return;
        }
        try {
          checkSequence(req.sequence);
        } catch (e) {
          if (owned) pool.release(owned);
          return abort(e);
        }
        inflight++;
        if (!paused && (inflight >= this.maxInFlight || this.broker.overHighWater)) {
          // Stop reading this stream: its batches wait in the client (whose window
          // fills, so its send() waits) rather than in this process.
          paused = true;
          io.pause();
          if (this.broker.overHighWater) waitForDisk();
        }
        const sequence = req.sequence;
        const observer = this.callObserver;
        const start = observer ? performance.now() : 0;
        // An owned buffer is nobody else's until the append settles: no copy, and it
        // goes back to the pool then (the I/O thread is done with it by settlement).
        this.publish(req, owned === null).then(
          (r) => {
            if (owned) pool.release(owned);
            observer?.request('PublishStream', 'OK', (performance.now() - start) / 1000);
            answer(publishAnswer(io.headroom, sequence, r));
          },
          (e: unknown) => {
            if (owned) pool.release(owned);
            const err = e instanceof UringmqError ? e : new UringmqError('INTERNAL', String(e));
            observer?.request('PublishStream', err.code, (performance.now() - start) / 1000);
            answer(publishAnswer(io.headroom, sequence, { code: err.code, message: err.message, retry_after_ms: err.code === 'RESOURCE_EXHAUSTED' ? 100 : 0 }));
          },
        );
      },
      end: () => {
        ended = true;
        if (inflight === 0) finish();
      },
      abort,
      gone: () => {
        finished = true;
        release();
      },
    };
  }

  private async fetch(req: Req<'FetchRequest'>, call?: grpc.ServerUnaryCall<unknown, unknown>): Promise<uringmq.v1.FetchResponse.$Properties> {
    const b = this.broker;
    const ps = b.partitionState(req.topic, req.partition);
    const offset = Number(req.offset);
    if (!Number.isSafeInteger(offset) || offset < 0) throw invalid(`offset must be a non-negative integer, got ${offset}`);
    // Capped so the answer fits in one message: plain records take more room than
    // the batches they come from (a few dozen bytes of fields per record).
    const maxBytes = Math.min(req.max_bytes || MiB, 64 * MiB, req.plain_records ? Math.floor(this.maxMessageBytes / 2) : this.maxMessageBytes - 4096);
    let info = b.partitionOffsets(ps);
    const waitMs = Math.min(req.max_wait_ms || 0, 30_000);
    // Past MAX_LONG_POLLS waiting at once, a fetch at the end is answered at once
    // (empty), as with max_wait_ms 0: each waiting one holds a timer, a waiter and its call.
    if (offset === info.endOffset && waitMs > 0 && !this.stopping && this.longPolls.size < MAX_LONG_POLLS && !call?.cancelled) {
      // stop() answers long-polls at once (empty) rather than letting them hold the
      // shutdown for their whole wait; a call its client cancelled (or whose connection
      // went) stops waiting then.
      const w = b.waitForDataCancellable([ps], waitMs);
      const polling = this.longPolls.add(w.cancel);
      call?.once('cancelled', w.cancel);
      try {
        await w.promise;
      } finally {
        this.longPolls.remove(polling);
        call?.off('cancelled', w.cancel);
      }
      info = b.partitionOffsets(ps);
    }
    const raw = await b.readRaw(ps, offset, maxBytes);
    if (call && raw.length >= WATCHED_FETCH_ANSWER_BYTES) {
      const stream = grpcJsStreamOf(call);
      if (stream) resetUnreadCallLater(stream);
    }
    if (req.plain_records) {
      // As many records as surely fit in one message; the client goes on after the last.
      let records: uringmq.v1.ConsumedRecord.$Properties[] = [];
      // Not past MAX_PLAIN_RECORDS either, and none decoded past it: each costs this
      // thread a few µs, and a fetch of 8 MiB of tiny records held it for a second.
      plainRecordRuns(raw, offset, offset + MAX_PLAIN_RECORDS, ps.index, 1, this.maxMessageBytes, (run) => {
        records = run;
        return true;
      });
      return { records, start_offset: info.startOffset, end_offset: info.endOffset };
    }
    return { batches: raw, start_offset: info.startOffset, end_offset: info.endOffset };
  }

  /** Subscribe through grpc-js (the calls routeDirectStreams leaves to it, or all). */
  private subscribe(call: grpc.ServerDuplexStream<Req<'SubscribeRequest'>, uringmq.v1.SubscribeResponse.$Properties>): void {
    const ended = this.streamEnd('Subscribe');
    const io: SubscribeCallIO = grpcJsCallIO(call, (res, written) => call.write(res as unknown as uringmq.v1.SubscribeResponse.$Properties, written), ended);
    const h = this.openSubscribeCall(call.metadata.get('authorization')[0], io);
    if (h instanceof UringmqError) return io.fail(h);
    feedHandler(call, h, io, () => ended('CANCELLED'));
  }

  /**
   * One Subscribe call, over either transport: joins the group on its first request,
   * then streams the member's deliveries and takes its acks, nacks, credit, feedback
   * and heartbeats. Any bad request ends the call with its status; the member leaves
   * (its unacked messages go to the others, or wait for the next member).
   */
  private openSubscribeCall(authorization: string | Buffer | undefined, io: SubscribeCallIO): SubscribeCallHandler | UringmqError {
    const refused = this.admit(authorization);
    if (refused) return refused;
    let member: GroupMember | null = null;
    let joining = false;
    // Credit and feedback that arrive while the join is still running (it reads the
    // group's committed offsets from disk): applied once it completes. A client may
    // send them right behind its `subscribe`, e.g. on reconnecting to a restarted
    // broker; refusing them ended such consumers.
    let earlyCredit = 0;
    let earlyFeedback: { processedPerSec: number; latencyMs: number } | null = null;
    let plain = false;
    /** `assignment_only`: the broker sends it no messages, so credit is only a sign of life. */
    let assignmentOnly = false;
    let done = false;
    /** `returned` came while the join was still running: the member leaves (and the call ends) once it is in. */
    let leaveOnJoin = false;
    /** backlogged() held the member back: onFlushed wakes it. */
    let held = false;
    const headroom = io.headroom;
    const fail = (e: unknown) => {
      if (done) return;
      done = true;
      cleanup();
      io.fail(e);
      if (io.unflushed === 0) release(); // else once they are written (onFlushed), or gone
    };
    const end = () => {
      if (done) return;
      done = true;
      clearTimeout(drainTimer);
      cleanup();
      io.end();
      if (io.unflushed === 0) release();
    };
    /** Set while a shutdown waits for the member's last acks (SHUTDOWN_ACK_WAIT_MS): nothing more is delivered. */
    let draining = false;
    let drainTimer: NodeJS.Timeout | undefined;
    const handle: StreamHandle = {
      shutdown: () => {
        const m = member;
        if (done || draining) return;
        if (!m || m.unacked === 0) return end();
        draining = true;
        m.credits = 0; // delivers nothing more; credit the client sends meanwhile is not taken
        drainTimer = setTimeout(end, SHUTDOWN_ACK_WAIT_MS);
      },
    };
    /** Gives the call's place among maxConcurrentStreams back: once it is done and its deliveries are written, or gone (as a PublishStream's). */
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.streams.delete(handle);
    };
    const cleanup = () => {
      const m = member;
      member = null;
      m?.leave();
    };
    this.streams.add(handle);
    const sink: DeliverySink = {
      copiesBatches: true, // serialized (copied) before deliverBatches returns
      deliverBatches: (partition, raw, from, to, deliveryCount = 1, resets) => {
        if (done) return;
        const epoch = wireEpoch(resets);
        if (plain) {
          // Several messages when the records would not fit in one (a delivery of whole
          // batches can be past maxMessageBytes as records), each naming the range its
          // records cover; together they are [from, to). Serialized here: the records are
          // views of `raw`, whose pooled buffer is reused once this returns (copiesBatches).
          plainRecordRuns(raw, from, to, partition, deliveryCount, this.maxMessageBytes, (records, start, end) => {
            io.send(encodeSubscribeResponse(headroom, { delivery: { partition, from_offset: start, to_offset: end, records, epoch } }));
          });
        } else io.send(encodeDeliveryResponse(headroom, partition, raw, from, to, deliveryCount, epoch));
      },
      deliverRecords: (records: RedeliveredRecord[], resets) => {
        if (done) return;
        const epoch = wireEpoch(resets);
        const byPartition = new Map<number, RedeliveredRecord[]>();
        for (const r of records) {
          let l = byPartition.get(r.partition);
          if (!l) byPartition.set(r.partition, (l = []));
          l.push(r);
        }
        // Several messages when the records would not fit in one (up to 256 are due at
        // once, each up to the record size limit).
        const limit = this.maxMessageBytes / 2;
        for (const [partition, rs] of byPartition) {
          let part: uringmq.v1.ConsumedRecord.$Properties[] = [];
          let bytes = 0;
          for (const r of rs) {
            const size = 64 + r.value.length + (r.key?.length ?? 0) + Object.entries(r.headers).reduce((n, [k, v]) => n + k.length + v.length + 8, 0);
            if (part.length > 0 && bytes + size > limit) {
              io.send(encodeSubscribeResponse(headroom, { delivery: { partition, records: part, epoch } }));
              part = [];
              bytes = 0;
            }
            part.push(consumedRecord(partition, r, r.deliveryCount));
            bytes += size;
          }
          if (part.length) io.send(encodeSubscribeResponse(headroom, { delivery: { partition, records: part, epoch } }));
        }
      },
      assign: (partitions, generation, memberId) => {
        if (!done) io.send(encodeSubscribeResponse(headroom, { assignment: { member_id: memberId, generation, partitions } }));
      },
      backlogged: () => (held = io.unflushed > MAX_UNREAD_DELIVERY_BYTES),
      end: (err) => {
        if (done) return;
        if (err) fail(err);
        else handle.shutdown();
      },
    };
    // A member held back by backlogged() goes on once the client has read half of it.
    io.onFlushed = () => {
      if (done) {
        if (io.unflushed === 0) release();
        return;
      }
      if (!held || io.unflushed > MAX_UNREAD_DELIVERY_BYTES / 2) return;
      held = false;
      member?.wake();
    };
    const request = (req: Req<'SubscribeRequest'>): void => {
      if (req.subscribe) {
        if (member || joining) throw new UringmqError('FAILED_PRECONDITION', 'this stream already subscribed');
        const s = req.subscribe;
        // An enum value this server does not know (a newer client's) is not LATEST: a
        // consumer that asked for something else would skip what it meant to read.
        if (s.from !== undefined && s.from !== null && s.from !== pb.StartFrom.LATEST && s.from !== pb.StartFrom.EARLIEST && s.from !== pb.StartFrom.OFFSET)
          throw new UringmqError('INVALID_ARGUMENT', `subscribe.from ${String(s.from)} is not a StartFrom this server knows (LATEST, EARLIEST or OFFSET)`);
        plain = !!s.plain_records;
        assignmentOnly = !!s.assignment_only;
        joining = true;
        const from = s.from === pb.StartFrom.EARLIEST ? 'earliest' : s.from === pb.StartFrom.OFFSET ? { offset: Number(s.from_offset) } : 'latest';
        this.broker.groups
          .join(
            {
              topic: s.topic ?? '',
              group: s.group ?? '',
              from,
              ackDeadlineMs: s.ack_deadline_ms || undefined,
              maxUnacked: s.max_unacked || undefined,
              maxDeliveries: s.max_deliveries || undefined,
              deadLetterTopic: s.dead_letter_topic || undefined,
              flow: s.flow
                ? {
                    minWindow: s.flow.min_window || undefined,
                    windowStep: s.flow.window_step || undefined,
                    latencyThresholdMs: s.flow.latency_threshold_ms || undefined,
                    feedbackIntervalMs: s.flow.feedback_interval_ms || undefined,
                    minRatePerSec: s.flow.min_rate_per_sec || undefined,
                  }
                : undefined,
            },
            sink,
            s.assignment_only ? 0 : s.initial_credit || s.max_unacked || undefined, // no credit: never delivered to
          )
          .then(
            (m) => {
              joining = false;
              if (done || leaveOnJoin) return m.leave(); // (leaving ends the call: sink.end)
              member = m;
              try {
                if (earlyCredit > 0) m.credit(earlyCredit);
                if (earlyFeedback) m.feedback(earlyFeedback);
              } catch (e) {
                fail(e); // bad credit or feedback: INVALID_ARGUMENT, as on a joined stream
              }
            },
            (e) => fail(e),
          );
        return;
      }
      const m = member;
      if (!m && joining) {
        if (req.acks || req.nack) throw new UringmqError('FAILED_PRECONDITION', 'ack or nack before anything was delivered on this stream');
        if (req.returned) {
          leaveOnJoin = true; // nothing delivered yet: nothing to give back, but the client is closing
          return;
        }
        if (req.credit) {
          if (!assignmentOnly) earlyCredit += req.credit; // checked and capped by credit() when applied
        } else if (req.feedback) earlyFeedback = { processedPerSec: req.feedback.processed_per_sec ?? 0, latencyMs: req.feedback.latency_ms ?? 0 };
        return; // a heartbeat: the join itself shows the member alive
      }
      if (!m) throw new UringmqError('FAILED_PRECONDITION', 'the first message on a Subscribe stream must be `subscribe`');
      if (req.acks) {
        // All ranges checked before any applies: a bad one fails the stream with none
        // of the message's acks taken (they come again as redeliveries).
        const ranges = req.acks.ranges ?? [];
        for (const r of ranges) m.checkAck(r.partition ?? 0, Number(r.from_offset ?? 0), Number(r.to_offset ?? 0), resetsOf(r.epoch));
        for (const r of ranges) m.ack(r.partition ?? 0, Number(r.from_offset ?? 0), Number(r.to_offset ?? 0), resetsOf(r.epoch));
        if (draining && m.unacked === 0) end(); // all it was sent is acked: nothing more to wait for
      } else if (req.nack) {
        m.nack(req.nack.partition ?? 0, Number(req.nack.offset ?? 0), req.nack.delay_ms ?? 0, req.nack.delivery_count ?? 0, resetsOf(req.nack.epoch));
        if (draining && m.unacked === 0) end();
      } else if (req.returned)
        // The client is closing: the member leaves with them, and the call ends.
        m.leave(
          (req.returned.ranges ?? []).map((r) => ({
            partition: r.partition ?? 0,
            from: Number(r.from_offset ?? 0),
            to: Number(r.to_offset ?? 0),
            deliveryCount: r.delivery_count ?? 0,
            resets: resetsOf(r.epoch),
          })),
        );
      else if (req.credit) {
        // A membership-only stream is never delivered to: its credit keeps it alive, no more.
        if (assignmentOnly || draining) m.heartbeat();
        else m.credit(req.credit);
      } else if (req.feedback) m.feedback({ processedPerSec: req.feedback.processed_per_sec ?? 0, latencyMs: req.feedback.latency_ms ?? 0 });
      else m.heartbeat();
    };
    return {
      request: (req) => {
        if (done) return;
        try {
          request(req);
        } catch (e) {
          fail(e);
        }
      },
      // The client half-closed (its close()): no ack can follow, so there is nothing to
      // drain for (a shutdown's wait for acks only held the leave back 250 ms). The call
      // ends once the member is out, which its client waits for: a deleteGroup right after
      // its close() found the member still there. One still joining leaves once it is in.
      end: () => {
        if (done) return;
        if (joining) leaveOnJoin = true;
        else end();
      },
      abort: (e) => fail(e), // acks not yet applied come again as redeliveries
      gone: () => {
        done = true;
        cleanup();
        release();
      },
    };
  }

  /** Tells the observer, once, how a grpc-js streaming call ended. */
  private streamEnd(method: string): (code: string) => void {
    let told = false;
    return (code) => {
      if (told) return;
      told = true;
      this.callObserver?.streamEnded(method, code);
    };
  }

  /**
   * Why a new call is refused (auth token, shutdown, the stream limit), or null. Its
   * refusal is the only status a PublishStream gets before its initial metadata, on
   * either transport (publishStream, serveRaw), which go out as a call is taken, before
   * any request is read: a client takes such a status for "none of the call's requests
   * was read" (RemoteProducer.brokerRefusedUnread), and reuses an oversize batch's
   * sequence numbers on it. Any later failure must come after the metadata.
   */
  private admit(authorization: string | Buffer | undefined): UringmqError | null {
    if (!this.authorized(authorization)) return unauthenticated();
    if (this.stopping) return new UringmqError('UNAVAILABLE', 'the broker is shutting down');
    if (this.streams.size >= this.maxStreams) return new UringmqError('RESOURCE_EXHAUSTED', `too many open streams (limit ${this.maxStreams}); retry later`);
    return null;
  }

  /** With an auth token set: is this the call's `authorization`? */
  private authorized(v: string | Buffer | undefined): boolean {
    if (!this.authToken) return true;
    if (v === undefined) return false;
    // The scheme in any case (RFC 9110: `bearer` is `Bearer`). The tokens are compared as
    // digests: a length check before timingSafeEqual told a prober the token's length.
    const m = /^bearer (.*)$/is.exec(typeof v === 'string' ? v : v.toString('latin1'));
    return m !== null && timingSafeEqual(tokenDigest(m[1]!), this.authToken);
  }
}

/** A token's SHA-256: fixed length, so comparing two takes the same time whatever they are. */
const tokenDigest = (token: string): Buffer => createHash('sha256').update(token, 'latin1').digest();

/** The errors grpcJsCallIO's fail() emitted on a call: its status, not its end. */
const statusErrors = new WeakSet<object>();

/**
 * A grpc-js streaming call as the transport-neutral handlers see it. `send` writes a
 * serialized response (brokerService's responseSerialize passes a Buffer on); `ended`
 * hears how the call ends.
 */
function grpcJsCallIO<Q, R>(call: grpc.ServerDuplexStream<Q, R>, send: (res: Buffer, written: () => void) => void, ended: (code: string) => void): StreamCallIO {
  let unflushed = 0;
  // grpc-js sends the status once the answers before it are written, each handed to
  // node:http2 only when the one before has gone: a client that does not read them
  // held the call, the status never reaching node:http2 (where resetAfterStatus would
  // see it). Bounded from here, where it is decided.
  const bound = () => {
    const stream = grpcJsStreamOf(call);
    if (stream) resetUnreadCallLater(stream);
  };
  const io: StreamCallIO = {
    headroom: 0,
    get unflushed() {
      return unflushed;
    },
    onFlushed: null,
    pause: () => call.pause(),
    resume: () => call.resume(),
    send: (res) => {
      if (call.destroyed || call.writableEnded) return;
      unflushed += res.length;
      send(res, () => {
        unflushed -= res.length;
        io.onFlushed?.();
      });
    },
    end: () => {
      ended('OK');
      if (!call.writableEnded && !call.destroyed) call.end();
      bound();
    },
    fail: (e) => {
      ended(codeOf(e));
      const se = toServiceError(e);
      statusErrors.add(se);
      call.emit('error', se);
      bound();
    },
  };
  return io;
}

/** Hands a grpc-js streaming call's requests and its end to the transport-neutral handler. */
function feedHandler<Q>(call: grpc.ServerDuplexStream<Q | Malformed, unknown>, h: StreamCallHandler<Q>, io: StreamCallIO, cancelled: () => void): void {
  let aborted = false;
  const abort = (e: unknown) => {
    if (aborted) return;
    aborted = true;
    h.abort(e);
  };
  // A request past maxPartialMessageBytes ends the call as one that cannot be read does:
  // after the requests before it are answered (where grpc-js's internals allow; else reset).
  deferRefusal(call, abort);
  // grpc-js may end a call with a status of its own and still hand over the requests
  // that follow: a grpc-timeout it cannot parse (INTERNAL, sent as the call starts) or
  // a deadline passed. Nothing taken after that can be answered: a PublishStream's
  // batches in the same packet as its headers were written, their client told INTERNAL.
  const stream = grpcJsStreamOf(call);
  call.on('data', (req: Q | Malformed) => {
    if (aborted || stream?.writableEnded) return;
    if (isMalformed(req)) return abort(invalid(req.$malformed));
    h.request(req, null);
  });
  // As on the direct path: a cancelled call's 'end' comes before its 'cancelled'.
  call.on('end', () => setImmediate(() => call.cancelled || aborted || h.end()));
  const gone = () => {
    cancelled(); // unless the call's status was already given
    h.gone();
  };
  // The error this side emits to give the call its status (grpc-js then sends it once
  // the answers before it are written, and emits 'cancelled') is not the call gone.
  call.on('error', (e: unknown) => statusErrors.has(e as object) || gone());
  call.on('cancelled', gone);
}

interface StreamHandle {
  shutdown(): void;
}

/** The header of the one batch `b` holds, or null when its frame does not check out (magic, length). */
function framedMeta(b: Buffer): BatchMeta | null {
  try {
    const m = readBatchMeta(b);
    return m.length === b.length ? m : null;
  } catch {
    return null;
  }
}

function unauthenticated(): UringmqError {
  return new UringmqError('UNAUTHENTICATED', 'missing or wrong auth token: send metadata `authorization: Bearer <token>` (the Node client: connect(address, { token }))');
}

function publishResponse(req: { sequence: number | { low: number } }, r: PublishResult): uringmq.v1.PublishResponse.$Properties {
  return { sequence: req.sequence as number, partition: r.partition, base_offset: r.baseOffset, count: r.count, duplicate: r.duplicate };
}

/** Bytes of a length-delimited field of `len` bytes, with its tag. */
const lenField = (len: number) => 1 + uvarintSize(len) + len;

/**
 * At least the bytes a record takes as a ConsumedRecord in a FetchResponse's repeated
 * field: its tag and length, and partition, offset, timestamp and delivery count (each
 * counted at 10 bytes, a varint's longest), key, value and headers with theirs.
 */
function plainRecordBytes(key: Buffer | null, value: Buffer, headers: Record<string, Buffer>): number {
  let inner = 4 * 11 + (key ? lenField(key.length) : 0) + lenField(value.length);
  for (const k in headers) inner += lenField(lenField(Buffer.byteLength(k)) + lenField(headers[k]!.length));
  return lenField(inner);
}

/**
 * The records of `raw` in [from, to) as ConsumedRecords, in runs that each surely fit in
 * one message of `maxMessageBytes` (a small record takes more room as a ConsumedRecord
 * than in its batch) and hold at most MAX_PLAIN_RECORDS; a run holds at least one record. `onRun` gets each run with the
 * offsets it spans, the last ending at `to`; returning true stops there.
 */
function plainRecordRuns(
  raw: Buffer,
  from: number,
  to: number,
  partition: number,
  deliveryCount: number,
  maxMessageBytes: number,
  onRun: (records: uringmq.v1.ConsumedRecord.$Properties[], start: number, end: number) => boolean | void,
): void {
  const room = maxMessageBytes - 4096; // the message's other fields
  let records: uringmq.v1.ConsumedRecord.$Properties[] = [];
  let bytes = 0;
  let start = from;
  let stopped = false;
  decodeEach(raw, from, to, (offset, timestamp, key, value, headers) => {
    if (stopped) return;
    const size = plainRecordBytes(key, value, headers);
    if (records.length > 0 && (bytes + size > room || records.length >= MAX_PLAIN_RECORDS)) {
      if (onRun(records, start, offset) === true) {
        stopped = true;
        return;
      }
      records = [];
      bytes = 0;
      start = offset;
    }
    bytes += size;
    records.push(consumedRecord(partition, { offset, timestamp, key, value, headers }, deliveryCount));
  });
  if (!stopped) onRun(records, start, to);
}

function consumedRecord(partition: number, r: DecodedRecord, deliveryCount: number): uringmq.v1.ConsumedRecord.$Properties {
  const out: uringmq.v1.ConsumedRecord.$Properties = { partition, offset: r.offset, timestamp: r.timestamp, value: r.value, headers: r.headers, delivery_count: deliveryCount };
  if (r.key) out.key = r.key;
  return out;
}

/** A topic's retention on the wire: a field only for a limit it has, 0 included (absent: no limit). */
function retentionInfo(r: TopicDescription['retention']): uringmq.v1.Retention.$Properties {
  const out: uringmq.v1.Retention.$Properties = {};
  if (r.maxBytes !== undefined) out.max_bytes = r.maxBytes;
  if (r.maxAgeMs !== undefined) out.max_age_ms = r.maxAgeMs;
  return out;
}

function topicInfo(d: TopicDescription): uringmq.v1.TopicInfo.$Properties {
  return {
    name: d.name,
    partitions: d.partitions.map((p) => ({ partition: p.partition, start_offset: p.startOffset, end_offset: p.endOffset, bytes: p.bytes, segments: p.segments })),
    retention: retentionInfo(d.retention),
    segment_bytes: d.segmentBytes,
    created_at: d.createdAt,
    groups: d.groups.map((g) => ({
      group: g.group,
      generation: g.generation,
      members: g.members.map((m) => ({
        member_id: m.memberId,
        partitions: m.partitions,
        unacked: m.unacked,
        window: m.window,
        token_rate: Number.isFinite(m.tokenRate) ? m.tokenRate : 0,
        reported_rate: m.reportedRate,
        latency_ms: m.latencyMs,
        lag: m.lag,
        stalled: m.stalled,
      })),
      committed: g.committed,
      lag: g.lag,
    })),
  };
}
