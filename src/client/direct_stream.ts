/**
 * The client's two hot streams, PublishStream and Subscribe, spoken over node:http2
 * directly: gRPC's framing (a 5-byte prefix per message, the status in trailers) on an
 * HTTP/2 connection of its own. Everything else the client does (admin calls, Fetch,
 * targets grpc-js resolves such as `dns:` or `unix:`) stays on grpc-js.
 *
 * Why by hand, for these two: per ~100 KB PublishRequest grpc-js copies the message
 * into a newly allocated framed buffer and passes it through its filter stack and
 * object-mode streams. bench:grpc's two bare streams show the cost: ~60-75 ns of the
 * client's main-thread CPU per 100 B record through grpc-js, ~30-40 through node:http2;
 * its batched publish went from 172-220 to 96-163 ns per record (2026-11-30). Here a
 * request's prefix is written into the room it was built with, and the bytes go to
 * the socket from the producer's pooled buffer, which stays untouched until the server
 * answers. Subscribe's deliveries come the other way, with the same per-message costs
 * in grpc-js (a reassembly copy, its decoder and call machinery): here they are
 * reassembled by the frame reader shared with the server and decoded at once.
 *
 * Owned by one RemoteProducer or RemoteConsumer; one stream per connection, a new
 * connection per (re)connect, so a broken stream never leaves state behind.
 */
import { EventEmitter } from 'node:events';
import * as http2 from 'node:http2';
import * as net from 'node:net';
import * as tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { UringmqError } from '../errors';
import { GRPC_PREFIX_BYTES, GrpcFrameReader } from '../grpc/framing';
import { pb, type uringmq } from '../grpc/proto';
import { brokerService } from '../grpc/service';
import { CODE_TRAILER, LIMIT_TRAILER, MAX_BATCH_HEADER, MAX_MESSAGE_HEADER, fromServiceError } from '../grpc/status';

/** What differs between the streams: the method, its responses, the name errors give it. */
export interface DirectStreamKind<Res> {
  path: string;
  what: string;
  decode(b: Buffer): Res;
}

export const PUBLISH_STREAM: DirectStreamKind<uringmq.v1.PublishResponse> = {
  path: brokerService.publishStream!.path,
  what: 'publish stream',
  decode: (b) => pb.PublishResponse.decode(b),
};

export const SUBSCRIBE_STREAM: DirectStreamKind<uringmq.v1.SubscribeResponse> = {
  path: brokerService.subscribe!.path,
  what: 'subscribe stream',
  decode: (b) => pb.SubscribeResponse.decode(b),
};

/**
 * HTTP/2 receive window, per stream and per connection, of these streams and of the
 * client's grpc-js channel: the default 64 KiB caps a stream at one window per round
 * trip, and deliveries are up to megabytes each.
 */
export const FLOW_WINDOW = 16 << 20;

/** The longest end() lets a stream's server take to end it before the connection is destroyed. */
const CLOSE_AT_MOST_MS = 10_000;
/**
 * How long a liveness probe at the end of a stream (end()'s ping, a grpc-js stream's
 * unary probe: see leave.ts) may go unanswered before close() stops waiting for the
 * server (at most the keepalive timeout).
 */
export const PROBE_MS = 1_000;

export interface DirectTarget {
  host: string;
  port: number;
  tls: false | { ca?: Buffer; cert?: Buffer; key?: Buffer };
  token: string | undefined;
  keepaliveTimeMs: number;
  keepaliveTimeoutMs: number;
  maxMessageBytes: number;
}

/**
 * host:port or [v6]:port, the targets this path serves; null for anything grpc-js
 * resolves itself (dns:///, unix:, ipv4: lists...), which keeps the grpc-js streams.
 */
export function parseHostPort(address: string): { host: string; port: number } | null {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(address);
  if (!m) return null;
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return null;
  return { host: m[1] ?? m[2]!, port };
}

/** gRPC status for an HTTP status that is not 200 (the gRPC over HTTP/2 mapping). */
function statusForHttp(code: number): grpc.status {
  if (code === 401) return grpc.status.UNAUTHENTICATED;
  if (code === 403) return grpc.status.PERMISSION_DENIED;
  if (code === 404) return grpc.status.UNIMPLEMENTED;
  if (code === 429 || code === 502 || code === 503 || code === 504) return grpc.status.UNAVAILABLE;
  return grpc.status.UNKNOWN;
}

/** A text metadata value grpc-js's Metadata accepts (printable ASCII). */
const METADATA_TEXT = /^[ -~]*$/;

function headerString(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** grpc-message is percent-encoded; text that is not valid encoding is taken as is. */
function grpcMessage(v: string | undefined): string {
  if (!v) return '';
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
}

/**
 * Events: 'data' (a response), 'drain', 'limit' (the largest message the server
 * reads, from its initial metadata), 'batchLimit' (the largest RecordBatch its broker
 * takes, from the same), 'headers' (after those two, once the initial metadata came), 'error' (a UringmqError; the stream is over),
 * 'end' (the server ended the stream with status OK), 'unanswered' (after end(): the
 * server has not answered a ping for PROBE_MS; see probeAtEnd).
 */
export class DirectStream<Res> extends EventEmitter {
  private readonly session: http2.ClientHttp2Session;
  private readonly stream: http2.ClientHttp2Stream;
  /** The session's connection (see destroy). */
  private socket: net.Socket | null = null;
  private readonly frames: GrpcFrameReader;
  private finished = false;
  private keepalive: NodeJS.Timeout | null = null;
  private closeTimer: NodeJS.Timeout | null = null;
  /** The pending timer of end()'s probe (see probeAtEnd). */
  private probeTimer: NodeJS.Timeout | null = null;
  /** Response chunks read so far: a probe that sees more arrive takes the server for alive. */
  private reads = 0;
  private unread = false;

  constructor(
    private readonly target: DirectTarget,
    private readonly kind: DirectStreamKind<Res>,
  ) {
    super();
    this.frames = new GrpcFrameReader(target.maxMessageBytes, { side: 'client' });
    const { host, port } = target;
    const authority = `${target.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`;
    this.session = http2.connect(authority, {
      // Outgoing requests queue in the session until written; room for a few of the
      // largest allowed (Node's default is 10 MB, and past it the session refuses).
      maxSessionMemory: Math.max(10, Math.ceil((4 * target.maxMessageBytes) / (1 << 20))),
      settings: { initialWindowSize: FLOW_WINDOW },
      createConnection: () => {
        const sock: net.Socket = target.tls
          ? tls.connect({ host, port, servername: net.isIP(host) ? undefined : host, ALPNProtocols: ['h2'], ca: target.tls.ca, cert: target.tls.cert, key: target.tls.key })
          : net.connect({ host, port });
        // Acks are small and latency matters: no Nagle delay (grpc-js sets it too).
        sock.setNoDelay(true);
        this.socket = sock;
        return sock;
      },
    });
    this.session.once('connect', () => {
      try {
        this.session.setLocalWindowSize(FLOW_WINDOW); // the connection's window, past the streams'
      } catch {
        // closing already: its close event reports it
      }
    });
    this.session.on('error', (e: Error) => this.fail(new UringmqError('UNAVAILABLE', `${kind.what} to ${host}:${port}: ${e.message}`, { cause: e })));
    this.session.on('goaway', () => {
      // The server is going (shutdown, max connection age): this stream may finish,
      // the producer's next stream opens a new connection.
    });
    this.session.on('close', () => this.fail(new UringmqError('UNAVAILABLE', `${kind.what} to ${host}:${port}: connection closed`)));
    const headers: http2.OutgoingHttpHeaders = {
      ':method': 'POST',
      ':path': kind.path,
      'content-type': 'application/grpc',
      te: 'trailers',
      'user-agent': 'uringmq-js',
    };
    if (target.token !== undefined) headers.authorization = `Bearer ${target.token}`;
    try {
      this.stream = this.session.request(headers);
    } catch (e) {
      this.session.destroy(); // its socket is already connecting
      throw e;
    }
    let httpStatus = 0;
    let trailers: http2.IncomingHttpHeaders | null = null;
    this.stream.on('response', (h) => {
      httpStatus = Number(h[':status']);
      // An HTTP error without a gRPC status (a proxy's 502 or 503 page, say): its body
      // is not gRPC messages, and read as such it gave INTERNAL ("compressed message"),
      // which producers and consumers do not retry. The HTTP status says what happened
      // (a grpc-status beside it, if any, says it better: settle() uses that).
      if (httpStatus !== 200 && h['grpc-status'] === undefined) return this.fail(this.statusError(statusForHttp(httpStatus), `HTTP status ${httpStatus}`, undefined));
      // Not a gRPC server at all (a web server on that port): its page read as gRPC
      // messages said "the server sent a compressed message". Still INTERNAL (not
      // retried: as for UNIMPLEMENTED, not a uringmq server), but saying so.
      const type = headerString(h['content-type']);
      if (type !== undefined && !type.startsWith('application/grpc') && h['grpc-status'] === undefined)
        return this.fail(new UringmqError('INTERNAL', `${kind.what} to ${host}:${port}: the server answered with content-type ${type}, not gRPC: is this the address of a uringmq broker?`));
      const limit = Number(headerString(h[MAX_MESSAGE_HEADER]));
      if (Number.isSafeInteger(limit) && limit > 0) this.emit('limit', limit);
      const batchLimit = Number(headerString(h[MAX_BATCH_HEADER]));
      if (Number.isSafeInteger(batchLimit) && batchLimit > 0) this.emit('batchLimit', batchLimit);
      if (h['grpc-status'] === undefined) this.emit('headers'); // what the server says of its limits, it has said
      // A trailers-only response (an error before any message) carries the status here.
      if (h['grpc-status'] !== undefined) {
        trailers = h;
        this.unread = headerString(h[CODE_TRAILER]) !== undefined;
      }
    });
    this.stream.on('trailers', (h) => (trailers = h));
    // The body of an HTTP error is not gRPC messages (a status came with its headers).
    this.stream.on('data', (chunk: Buffer) => httpStatus === 200 && this.onData(chunk));
    this.stream.on('drain', () => this.emit('drain'));
    this.stream.on('error', (e: Error) => {
      // A server's reset for load (a call refused for its request budget whose answers
      // this side did not read) is RESOURCE_EXHAUSTED, as grpc-js's client reads it.
      if (this.stream.rstCode === http2.constants.NGHTTP2_ENHANCE_YOUR_CALM)
        return this.fail(this.statusError(grpc.status.RESOURCE_EXHAUSTED, `${kind.what} to ${host}:${port} reset by the server (ENHANCE_YOUR_CALM: over a limit)`, undefined));
      this.fail(new UringmqError('UNAVAILABLE', `${kind.what} to ${host}:${port}: ${e.message}`, { cause: e }));
    });
    // The server's side is over once its responses are read ('end', after the last
    // 'data'): settle then. 'close' would wait for our side too, which a producer keeps
    // open, so a status sent mid-stream (a graceful shutdown's OK, an error) would sit
    // unseen. 'close' still settles a stream that ends without 'end' (a reset).
    const settle = () => {
      // The HTTP status only when there is no gRPC status: "if grpc-status was
      // provided, it must be used" (gRPC's doc/http-grpc-status-mapping.md).
      if (!trailers && httpStatus !== 200 && httpStatus !== 0) return this.fail(this.statusError(statusForHttp(httpStatus), `HTTP status ${httpStatus}`, undefined));
      if (!trailers) return this.fail(new UringmqError('UNAVAILABLE', `${kind.what} to ${host}:${port} closed without a status`));
      const code = Number(headerString(trailers['grpc-status']));
      const message = grpcMessage(headerString(trailers['grpc-message']));
      if (code === grpc.status.OK) return this.finish();
      this.fail(
        this.statusError(Number.isInteger(code) ? code : grpc.status.UNKNOWN, message || `gRPC status ${code}`, headerString(trailers[CODE_TRAILER]), headerString(trailers[LIMIT_TRAILER])),
      );
    };
    this.stream.on('end', settle);
    this.stream.on('close', settle);
    if (target.keepaliveTimeMs > 0) {
      this.keepalive = setInterval(() => this.ping(), target.keepaliveTimeMs);
      this.keepalive.unref();
    }
  }

  /**
   * The server answered with a uringmq broker's status before its initial metadata (a
   * trailers-only response carrying the uringmq-code trailer): the broker refused the
   * call as it opened, and read none of its requests (BrokerServer.admit). A proxy's
   * status carries no such trailer, and may come after the broker read requests.
   */
  get refusedUnread(): boolean {
    return this.unread;
  }

  /**
   * Sends one serialized request, a view with GRPC_PREFIX_BYTES of the same
   * memory free in front of it (the prefix is written there). The view must not change
   * until its response arrives or the stream fails. false: wait for 'drain'.
   */
  write(msg: Buffer): boolean {
    if (this.finished) return false;
    if (msg.length > this.target.maxMessageBytes) {
      // The producer refuses such batches before this; not a code it retries.
      this.fail(new UringmqError('INVALID_ARGUMENT', `a ${this.kind.what} request of ${msg.length} bytes is over maxMessageBytes (${this.target.maxMessageBytes})`));
      return false;
    }
    if (msg.byteOffset < GRPC_PREFIX_BYTES) throw new Error('uringmq bug: no room for the gRPC prefix before a request');
    const framed = Buffer.from(msg.buffer, msg.byteOffset - GRPC_PREFIX_BYTES, msg.length + GRPC_PREFIX_BYTES);
    framed[0] = 0; // not compressed
    framed.writeUInt32BE(msg.length, 1);
    return this.stream.write(framed);
  }

  /** Sends one request serialized elsewhere (small ones: it is copied behind room for its prefix). false: wait for 'drain'. */
  writeMessage(msg: Uint8Array): boolean {
    const room = Buffer.allocUnsafe(GRPC_PREFIX_BYTES + msg.length);
    room.set(msg, GRPC_PREFIX_BYTES);
    return this.write(room.subarray(GRPC_PREFIX_BYTES));
  }

  /**
   * No more requests: the server answers what it has, then ends the stream, and the
   * connection closes gracefully, so the last requests written (a consumer's final acks
   * and returned ranges, a producer's last batches) reach a live server. A server that
   * does not answer a ping within PROBE_MS is reported ('unanswered': close() stops
   * waiting) and the connection stops holding the process; it is destroyed once the
   * ping has gone unanswered for the keepalive timeout (see probeAtEnd), and 10 s after
   * end() at most.
   */
  end(): void {
    if (this.finished) return;
    this.stream.end();
    // Unref'd: the socket holds the process while it is open, these only end it.
    this.closeTimer = setTimeout(() => this.session.destroy(), CLOSE_AT_MOST_MS);
    this.closeTimer.unref();
    this.probeAtEnd();
  }

  /** Gives up on the stream at once (its server presumed gone): no 'error', no 'end'. */
  cancel(): void {
    if (this.finished) return;
    this.stop();
    this.destroy();
  }

  /**
   * Drops the connection now. The session alone is not enough after stop(): a session
   * closed first is destroyed gracefully, its socket only half-closed until the server
   * closes its side, which a server gone silent (stopped, behind a black hole) never
   * does, and that socket held the process for good (a producer's close({ timeoutMs })
   * with batches in flight; the same for any stream failed while its server is silent,
   * a missed keepalive among them).
   */
  private destroy(): void {
    this.session.destroy();
    this.socket?.destroy();
  }

  /**
   * While the stream ends: a ping every PROBE_MS (or the keepalive timeout if smaller).
   * One unanswered that long, with no response read meanwhile either, is reported
   * ('unanswered': close() stops waiting), and the connection is unref'd, so a process
   * closing against a server gone silent (stopped, behind a black hole) exits. It used
   * to be destroyed right then, which also dropped a live server merely slow (its
   * event loop late by over a second) under the final acks just written: whatever of
   * them had not reached it yet could be lost (a close with responses unread becomes a
   * reset, which discards the socket's send buffer), and those messages came again.
   * Now it goes as the keepalive takes an open stream's connection: once the ping has
   * gone unanswered for the keepalive timeout (or at CLOSE_AT_MOST_MS). A late answer
   * goes on probing; the server's end of the stream closes the connection gracefully.
   */
  private probeAtEnd(): void {
    if (this.session.destroyed || this.session.closed || this.closeTimer === null) return;
    const bound = Math.min(PROBE_MS, this.target.keepaliveTimeoutMs);
    const sentAt = performance.now();
    let readsBefore = this.reads;
    let answered = false;
    const missed = () => {
      this.probeTimer = null;
      if (answered || this.finished) return;
      const waited = performance.now() - sentAt;
      if (waited >= this.target.keepaliveTimeoutMs) return this.session.destroy();
      if (this.reads !== readsBefore) {
        // Responses still arriving: the server is reading and writing, only late.
        readsBefore = this.reads;
        this.probeTimer = setTimeout(missed, bound);
      } else {
        if (bound < this.target.keepaliveTimeoutMs) this.emit('unanswered');
        this.session.unref();
        this.probeTimer = setTimeout(missed, Math.max(1, this.target.keepaliveTimeoutMs - waited));
      }
      this.probeTimer.unref();
    };
    this.probeTimer = setTimeout(missed, bound);
    this.probeTimer.unref();
    try {
      this.session.ping((err) => {
        answered = true;
        if (this.probeTimer) clearTimeout(this.probeTimer);
        this.probeTimer = null;
        if (err || this.finished) return; // the session is closing or destroyed already
        this.probeTimer = setTimeout(() => this.probeAtEnd(), bound);
        this.probeTimer.unref();
      });
    } catch {
      // closing already (a ping cannot be sent): its close event follows
      if (this.probeTimer) clearTimeout(this.probeTimer);
      this.probeTimer = null;
    }
  }

  private onData(chunk: Buffer): void {
    if (this.finished) return;
    this.reads++;
    let messages: Buffer[];
    try {
      messages = this.frames.push(chunk);
    } catch (e) {
      return this.fail(e as UringmqError);
    }
    for (const m of messages) {
      let res: Res;
      try {
        res = this.kind.decode(m);
      } catch (e) {
        return this.fail(new UringmqError('INTERNAL', `malformed ${this.kind.what} response: ${(e as Error).message}`));
      }
      this.emit('data', res);
      if (this.finished) return;
    }
  }

  private ping(): void {
    if (this.finished || this.session.destroyed) return;
    const timer = setTimeout(
      () => this.fail(new UringmqError('UNAVAILABLE', `${this.kind.what} to ${this.target.host}:${this.target.port}: no keepalive answer within ${this.target.keepaliveTimeoutMs} ms`)),
      this.target.keepaliveTimeoutMs,
    );
    timer.unref();
    try {
      this.session.ping((err) => {
        clearTimeout(timer);
        if (err && !this.finished) this.fail(new UringmqError('UNAVAILABLE', `${this.kind.what} keepalive: ${err.message}`));
      });
    } catch {
      clearTimeout(timer); // the session is closing; its close event reports it
    }
  }

  private statusError(code: grpc.status, details: string, trailerCode: string | undefined, limit?: string): UringmqError {
    const metadata = new grpc.Metadata();
    // Only values grpc-js's Metadata takes (it throws on others): a tab or a Latin-1
    // byte is a legal HTTP/2 field value, and the throw, from the stream's 'end'
    // handler, was an uncaught exception. Such a trailer is ignored, as grpc-js's own
    // client ignores it (the status alone counts).
    if (trailerCode && METADATA_TEXT.test(trailerCode)) metadata.set(CODE_TRAILER, trailerCode);
    if (limit && METADATA_TEXT.test(limit)) metadata.set(LIMIT_TRAILER, limit);
    return fromServiceError({ code, details, metadata });
  }

  private stop(): void {
    this.finished = true;
    if (this.keepalive) clearInterval(this.keepalive);
    if (this.closeTimer) clearTimeout(this.closeTimer);
    if (this.probeTimer) clearTimeout(this.probeTimer);
    this.keepalive = null;
    this.closeTimer = null;
    this.probeTimer = null;
    if (!this.stream.closed) this.stream.close(http2.constants.NGHTTP2_CANCEL);
    if (!this.session.destroyed) this.session.close();
  }

  private finish(): void {
    if (this.finished) return;
    this.stop();
    this.emit('end');
  }

  private fail(e: UringmqError): void {
    if (this.finished) return;
    this.stop();
    this.destroy();
    this.emit('error', e);
  }
}
