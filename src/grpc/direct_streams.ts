/**
 * The two streaming calls that carry every record, PublishStream and Subscribe, served
 * over node:http2 directly on grpc-js's own connections: the server side of
 * src/client/direct_stream.ts. Every other call, and a stream this path does not take
 * (compressed, or with a deadline), stays with grpc-js.
 *
 * Why by hand, for these two: per ~100 KB request grpc-js concatenates the HTTP/2
 * DATA chunks (16 KB each) into a new buffer, passes it through its interceptors and
 * object-mode streams, and the broker then copied the batch again into a pooled buffer
 * (a grpc-js buffer kept until the append is durable survives young GCs). Here each
 * request is copied once, from the chunks straight into a pooled buffer that the log's
 * I/O thread reads and that goes back to the pool when the append settles.
 * `npm run bench:grpc -- --only throughput [--server-streams grpc-js]`, two
 * alternating pairs on 2026-12-01: the server's main thread spent 62 / 81 ns per
 * record this way against 100 / 99 through grpc-js. A Subscribe delivery is a
 * serialized buffer written to the HTTP/2 stream with its prefix in place, where
 * grpc-js passes each message through its Writable, its interceptors and a copy into
 * a framed buffer; its acks and credits are decoded straight from the socket's chunks.
 *
 * grpc-js has no public hook for one path, so this wraps its per-stream handler (a
 * private method) before the server binds; if grpc-js changes, routing reports false
 * and grpc-js serves these calls like any other.
 */
import * as http2 from 'node:http2';
import type * as grpc from '@grpc/grpc-js';
import type { BufferPool } from '../codec/buffer_pool';
import { UringmqError } from '../errors';
import { GRPC_PREFIX_BYTES, GrpcFrameReader, type PartialMessageBudget } from './framing';
import { pb, type uringmq } from './proto';
import { decodePublishRequest } from './publish_request';
import { decodeSubscribeRequest } from './subscribe_request';
import { brokerService } from './service';
import { CODE_TRAILER, LIMIT_TRAILER, MAX_BATCH_HEADER, MAX_MESSAGE_HEADER, toServiceError } from './status';

const PUBLISH_STREAM_PATH = brokerService.publishStream!.path;
const SUBSCRIBE_PATH = brokerService.subscribe!.path;

/** One streaming call (PublishStream or Subscribe), whichever transport carries it; owned by the main thread. */
export interface StreamCallIO {
  /** Stops reading requests (their bytes wait in the client: HTTP/2 flow control). */
  pause(): void;
  resume(): void;
  /** Bytes each response leaves free at its start for this transport's framing. */
  readonly headroom: number;
  /** Sends one response: a serialized message after `headroom` bytes (see response_encoders.ts); dropped once the call is over. */
  send(res: Buffer): void;
  /** Bytes of responses sent and not yet written to the socket (a client that does not read them). */
  readonly unflushed: number;
  /** Called each time some of them are written. */
  onFlushed: (() => void) | null;
  /** Ends the call with status OK. */
  end(): void;
  /** Ends the call with the status for this error. */
  fail(e: unknown): void;
}

/** What the broker side does with one call's requests. */
export interface StreamCallHandler<Req> {
  /** One request; `owned` (when given) is the caller's buffer behind it, to release once settled. */
  request(req: Req, owned: Buffer | null): void;
  /** The client sent its last request. */
  end(): void;
  /**
   * A request that cannot be read (malformed, over the size limit, cut off): nothing
   * more is read, and the call ends with this error's status once the requests before
   * it are answered (a PublishStream's earlier batches may be written already: their
   * acks must reach the client, or its retry would write them twice).
   */
  abort(e: unknown): void;
  /** The call is gone (reset, connection lost, or ended by this side): nothing more can be sent. */
  gone(): void;
}

export type PublishCallIO = StreamCallIO;
export type PublishCallHandler = StreamCallHandler<uringmq.v1.PublishRequest>;
export type SubscribeCallIO = StreamCallIO;
export type SubscribeCallHandler = StreamCallHandler<uringmq.v1.SubscribeRequest>;

/** Admits a call (auth, limits) or gives the error it ends with. */
type Opener<Req> = (authorization: string | undefined, io: StreamCallIO) => StreamCallHandler<Req> | UringmqError;

export interface DirectStreamOptions {
  /** The largest message read or sent, as grpc-js's limits on the other calls. */
  maxMessageBytes: number;
  /** The largest RecordBatch the broker takes (sent to PublishStream clients, as grpc-js's path does). */
  maxBatchBytes: number;
  /** Where publish requests are assembled: the broker's batch pool (the handler releases what it is given). */
  pool: BufferPool;
  /** Bytes of requests received in part, over every call served here (maxPartialMessageBytes), each call counting in its connection's share. */
  budget: PartialMessageBudget;
  openPublish: Opener<uringmq.v1.PublishRequest>;
  openSubscribe: Opener<uringmq.v1.SubscribeRequest>;
  /** Each call's end, once: 'OK', the uringmq code it failed with, or CANCELLED when the client went first. */
  ended?: (method: string, code: string) => void;
}

/** How one of the two calls is read. */
interface CallKind<Req> {
  name: string;
  decode(b: Buffer): Req;
  open: Opener<Req>;
  /** Requests are copied into buffers from here (then owned by the handler), else decoded from views of the socket's chunks. */
  pool: BufferPool | null;
  /** Response headers beyond the status and content type. */
  headers: http2.OutgoingHttpHeaders;
}

/**
 * Makes `server` hand the PublishStream and Subscribe calls it can to `opts` instead
 * of grpc-js. Call before the server binds (grpc-js reads the handler then). False
 * when grpc-js's internals are not what this expects: grpc-js then serves them all.
 */
export function routeDirectStreams(server: grpc.Server, opts: DirectStreamOptions): boolean {
  type StreamHandler = (this: unknown, extra: unknown, stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => void;
  const s = server as unknown as { _streamHandler?: StreamHandler; channelzEnabled?: unknown; onStreamOpened?: (stream: http2.ServerHttp2Stream) => void };
  const grpcHandler = s._streamHandler;
  // With channelz on, grpc-js installs another handler, which this does not wrap; a
  // handler of another arity is not the (interceptors, stream, headers) one known here.
  if (typeof grpcHandler !== 'function' || grpcHandler.length !== 3 || s.channelzEnabled !== false) return false;
  const publish: CallKind<uringmq.v1.PublishRequest> = {
    name: 'PublishStream',
    decode: (b) => decodePublishRequest(b),
    open: opts.openPublish,
    pool: opts.pool,
    // What grpc-js's path sends too: the largest request this server reads, and batch the broker takes.
    headers: { [MAX_MESSAGE_HEADER]: String(opts.maxMessageBytes), [MAX_BATCH_HEADER]: String(opts.maxBatchBytes) },
  };
  const subscribe: CallKind<uringmq.v1.SubscribeRequest> = {
    name: 'Subscribe',
    decode: (b) => decodeSubscribeRequest(b),
    open: opts.openSubscribe,
    pool: null, // acks and credits: small, and decoded before the chunk is let go
    headers: {},
  };
  s._streamHandler = function (this: unknown, extra, stream, headers) {
    if (!takenDirect(headers)) return grpcHandler.call(this, extra, stream, headers);
    const kind = headers[':path'] === PUBLISH_STREAM_PATH ? publish : subscribe;
    // What grpc-js's handler does first: an error listener (a reset emits one; the
    // 'close' that follows is what counts), and its idle-connection bookkeeping.
    stream.once('error', () => undefined);
    if (typeof s.onStreamOpened === 'function') s.onStreamOpened.call(server, stream);
    try {
      serveRaw(stream, headers, kind as CallKind<unknown>, opts);
    } catch {
      // A stream reset or a session closing between the checks and a respond():
      // this call is over, and an exception here would reach the http2 server's emit.
      if (!stream.destroyed) stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    }
  };
  return true;
}

/**
 * Once a call's status is sent, a client still sending requests has nobody to read
 * them: its side of the stream is reset (RST_STREAM NO_ERROR, which RFC 9113 §8.1
 * allows after a complete response). Without it a client went on sending into a failed
 * call (about 40 MB a second, read and dropped), or one grpc-js refused, for as long as
 * it kept the stream open. Done to every stream of the server, before grpc-js or
 * routeDirectStreams sees it, through its two ways of sending a status (trailers, or a
 * trailers-only response).
 *
 * And once this side ends the stream (the status decided, to go after what was written
 * before it: a direct call's close, grpc-js's sendStatus), a client that does not read
 * what waits has it reset (resetUnreadCallLater): a call refused for a malformed or
 * oversize request, say, kept its stream slot and its unwritten answers for as long as
 * such a client kept the connection. (A status grpc-js has yet to get to, behind
 * answers it has not handed to node:http2, is grpcJsCallIO's to bound.) Only on
 * PublishStream and Subscribe: grpc-js sends a unary call's status from its answer's
 * write callback, once nghttp2 has taken all of it, so nothing of a unary call waits
 * behind its end but, at most, the END_STREAM (and a client that does not read keeps
 * any larger answer, and its call, unended). Watching every unary call cost about
 * 5-12 µs of the server's ~100 µs CPU per DescribeTopic (measured A/B), for nothing.
 */
export function resetAfterStatus(stream: http2.ServerHttp2Stream, requestHeaders: http2.IncomingHttpHeaders): void {
  const respond = stream.respond;
  const sendTrailers = stream.sendTrailers;
  stream.respond = function (this: http2.ServerHttp2Stream, headers?: http2.OutgoingHttpHeaders, options?: http2.ServerStreamResponseOptions) {
    respond.call(this, headers, options);
    if (options?.endStream) resetRequestSide(this);
  };
  stream.sendTrailers = function (this: http2.ServerHttp2Stream, headers: http2.OutgoingHttpHeaders) {
    sendTrailers.call(this, headers);
    resetRequestSide(this);
  };
  const path = requestHeaders[':path'];
  if (path !== PUBLISH_STREAM_PATH && path !== SUBSCRIBE_PATH) return;
  const end = stream.end;
  stream.end = function (this: http2.ServerHttp2Stream, ...args: unknown[]) {
    const r = (end as (...a: unknown[]) => http2.ServerHttp2Stream).apply(this, args);
    resetUnreadCallLater(this);
    return r;
  } as typeof stream.end;
}

/**
 * A turn later: the trailers are sent from within nghttp2's write of the last DATA
 * frame ('wantTrailers'), and a reset asked for there went out before them (the client
 * never saw the status).
 */
function resetRequestSide(stream: http2.ServerHttp2Stream): void {
  setImmediate(() => {
    if (!stream.destroyed && !stream.closed && !stream.readableEnded) stream.close(http2.constants.NGHTTP2_NO_ERROR);
  });
}

/**
 * How long a call's writes may wait for its client without any of them reaching it,
 * once the call is refused for maxPartialMessageBytes or its status is decided
 * (resetUnreadCallLater). Until then it keeps its place among maxConcurrentStreams,
 * its unwritten answers and, when refused for maxPartialMessageBytes on grpc-js's
 * path, what grpc-js holds of its message in progress: a client that sends big partial
 * messages, or a malformed one, and never reads pinned them for as long as its
 * connection lived (keepalive catches dead peers only; maxConnectionAgeMs is off by
 * default). No setting of the server bounds a write; 10 s, keepaliveTimeoutMs's
 * default, is far more than a client that reads needs to take something of what is
 * left (acks past MAX_UNREAD_ANSWER_BYTES, 1 MiB, stop the reading; deliveries stop
 * past MAX_UNREAD_DELIVERY_BYTES, 4 MiB, and a message).
 */
export const UNREAD_CALL_PERIOD_MS = 10_000;

/**
 * What the session's socket must send in a period for a write in flight to count as
 * moving (see resetUnreadCallLater): a whole DATA frame at the default frame size.
 * The control frames a client has the server send (PING and SETTINGS acks, 9-17 bytes
 * each) come to less unless it sends about a thousand a period, and what they can earn
 * a call is bounded anyway.
 */
const MIN_SOCKET_PROGRESS_BYTES = 16 << 10;

/** The pieces a watched stream's big writes go in (resetUnreadCallLater): a DATA frame at the default frame size. */
const WRITE_PIECE_BYTES = 16 << 10;

/** Streams resetUnreadCallLater watches: once each. */
const unreadWatched = new WeakSet<http2.ServerHttp2Stream>();

/** Whether resetUnreadCallLater watches `stream` (for tests). */
export function watchedUnread(stream: http2.ServerHttp2Stream): boolean {
  return unreadWatched.has(stream);
}

/** Bytes the session's socket has sent, 0 when it cannot tell (gone). */
function sessionBytesWritten(stream: http2.ServerHttp2Stream): number {
  try {
    return Number(stream.session?.socket?.bytesWritten) || 0;
  } catch {
    return 0; // the session is going away
  }
}

/**
 * Resets `stream` (RST_STREAM ENHANCE_YOUR_CALM, which gRPC clients take as
 * RESOURCE_EXHAUSTED) once, at a check every UNREAD_CALL_PERIOD_MS while it stays
 * open, what it wrote (answers, deliveries, or its status once decided) waits for its
 * client and none of it reached the client since the check before: a client that does
 * not read. One that reads, however slowly, gets all of it and the status. Called when
 * a call is refused for maxPartialMessageBytes and when its status is decided, on
 * either path (resetAfterStatus, grpcJsCallIO); nothing is done per message before
 * that. Its 'close' then gives back what it held, as any reset's does. The timer keeps
 * no process alive and goes with the stream's 'close', however it comes.
 *
 * What reached the client: node:http2 completes a write once nghttp2 has handed all of
 * it to the socket (so what the client's shut window keeps back is not written), and
 * tells nothing finer, per stream (stream.state gives our receive window, not the
 * client's; session.state and the socket count the whole connection). A writev, the
 * buffered writes taken together, completes only as a whole: a client reading a 4 MiB
 * one at 100 KB/s showed none of it for 40 s. So from here on:
 * - the stream's writes go to nghttp2 one at a time (no writev), each completing as
 *   its own bytes are sent;
 * - a write still in flight (the one taken before this was called, or one message)
 *   counts as moving while the session's socket sends at least
 *   MIN_SOCKET_PROGRESS_BYTES a period, and, since this stream's last completed
 *   write, no more than twice what the stream had to send since (and 64 KiB): past
 *   that the socket was sending something else (other streams' data, control frames
 *   a client had it send), not this stream's. Node's own stream timeout takes any byte
 *   the session sends as a write in flight moving; here a client that does not read
 *   gets at most that much credit, then is reset.
 */
export function resetUnreadCallLater(stream: http2.ServerHttp2Stream): void {
  if (stream.destroyed || stream.closed || unreadWatched.has(stream)) return;
  unreadWatched.add(stream);
  // Writable takes its buffered writes one by one when the stream has no _writev.
  (stream as unknown as { _writev: unknown })._writev = undefined;
  // Bytes of its writes completed since: all written here (those waiting now
  // included) less what still waits. New writes (a slow append's answer) raise
  // writableLength while others complete: only this difference says the client took any.
  let written = stream.writableLength;
  const write = stream.write;
  stream.write = function (this: http2.ServerHttp2Stream, chunk: unknown, ...rest: unknown[]): boolean {
    if (!this.writableEnded && !this.destroyed) written += typeof chunk === 'string' ? Buffer.byteLength(chunk, typeof rest[0] === 'string' ? (rest[0] as BufferEncoding) : 'utf8') : (chunk as Uint8Array).byteLength;
    // A big write in pieces: each completes as its own bytes go, so a client that reads
    // this stream, however slowly, shows it here. Whole, a Fetch answer completed only
    // at its end, and with the socket shared (other calls' answers read on the same
    // connection) the check below could not tell it was moving: concurrent Fetches over
    // a slow link were all reset, while read, at the first check.
    if (chunk instanceof Uint8Array && chunk.byteLength > WRITE_PIECE_BYTES && !this.writableEnded && !this.destroyed) {
      for (let at = 0; at + WRITE_PIECE_BYTES < chunk.byteLength; at += WRITE_PIECE_BYTES) (write as (...a: unknown[]) => boolean).call(this, chunk.subarray(at, at + WRITE_PIECE_BYTES));
      const last = chunk.byteLength - (((chunk.byteLength - 1) % WRITE_PIECE_BYTES) + 1);
      return (write as (...a: unknown[]) => boolean).call(this, chunk.subarray(last), ...rest);
    }
    return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
  } as typeof stream.write;
  const completed = () => written - stream.writableLength;
  let lastCompleted = completed();
  let socketAtCheck = sessionBytesWritten(stream);
  /** At its last completed write (or when nothing of it was in flight): the socket's count, what it had left to send, and `written`. */
  let mark = { socket: socketAtCheck, left: stream.writableLength, written };
  let timer: NodeJS.Timeout;
  const check = () => {
    if (stream.destroyed || stream.closed) return;
    const left = stream.writableLength;
    const sent = sessionBytesWritten(stream);
    const done = completed();
    let moved = done > lastCompleted;
    if (moved || left === 0) mark = { socket: sent, left, written };
    else {
      // What the session has sent since the mark can all be this stream's only while
      // it is no more than the stream had to send since (twice over: small frames'
      // headers), and some.
      const couldBeItsOwn = 2 * (mark.left + written - mark.written) + 4 * MIN_SOCKET_PROGRESS_BYTES;
      moved = sent - socketAtCheck >= MIN_SOCKET_PROGRESS_BYTES && sent - mark.socket <= couldBeItsOwn;
    }
    lastCompleted = done;
    socketAtCheck = sent;
    // Nothing waits to be written: the client is not what holds the call, answers not
    // made yet are (appends in flight on a disk that stalls). A reset now would lose
    // them, and a producer without idempotence would write those batches again.
    // (The status counts once the stream is ended: its END_STREAM, behind which the
    // trailers go, waits for the client's window too, even with no byte left to send,
    // and only nghttp2's local close says it has gone. A call refused before any
    // answer, or whose answers filled the window exactly, was otherwise never reset.)
    const waiting = left > 0 || (stream.writableEnded && stream.state.localClose !== 1);
    if (!waiting || moved) {
      timer = setTimeout(check, UNREAD_CALL_PERIOD_MS).unref();
      return;
    }
    try {
      stream.close(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
    } catch {
      stream.destroy(); // the session is going away
    }
  };
  timer = setTimeout(check, UNREAD_CALL_PERIOD_MS).unref();
  stream.once('close', () => clearTimeout(timer));
}

/**
 * Whether a server routed here serves this call itself: a PublishStream or Subscribe
 * in plain gRPC over HTTP/2, with nothing this path leaves to grpc-js (message
 * compression, a deadline: grpc-js enforces those).
 */
export function takenDirect(headers: http2.IncomingHttpHeaders): boolean {
  const path = headers[':path'];
  const type = headers['content-type'];
  const encoding = headers['grpc-encoding'];
  return (
    (path === PUBLISH_STREAM_PATH || path === SUBSCRIBE_PATH) &&
    headers[':method'] === 'POST' &&
    (type === 'application/grpc' || type === 'application/grpc+proto') &&
    (encoding === undefined || encoding === 'identity') &&
    headers['grpc-timeout'] === undefined
  );
}

function serveRaw<Req>(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, kind: CallKind<Req>, opts: DirectStreamOptions): void {
  const { maxMessageBytes, ended } = opts;
  const budget = opts.budget.forConnection(stream.session); // its connection's share, when the server has them
  const pool = kind.pool;
  const reader = new GrpcFrameReader(maxMessageBytes, pool ? { side: 'server', budget, alloc: (n) => pool.acquire(n), release: (b) => pool.release(b) } : { side: 'server', budget });
  // However the call ends (its status, a reset, the connection or the server going),
  // the message it was receiving holds nothing more: nothing of the stream is read after.
  const call = new Http2StreamCall(stream, maxMessageBytes, (code) => {
    reader.dispose();
    ended?.(kind.name, code);
  });
  const auth = headers.authorization;
  const handler = kind.open(Array.isArray(auth) ? auth[0] : auth, call);
  if (handler instanceof UringmqError) return call.fail(handler);
  // First, so that an admitted call is let go however it ends (respond() included).
  stream.on('close', () => {
    call.closed();
    handler.gone();
  });
  if (stream.destroyed) {
    // Reset before this ran: its 'close' may have been emitted already. (gone() twice is harmless.)
    call.closed();
    return handler.gone();
  }
  call.respond(kind.headers);
  let aborted = false;
  const abort = (e: unknown) => {
    aborted = true;
    reader.dispose(); // nothing more is read: not held until the answers before it are sent
    handler.abort(e);
  };
  stream.on('data', (chunk: Buffer) => {
    if (call.over || aborted) return; // failed: what the client still sends is dropped
    // The whole messages before one that cannot be read are taken first: the call
    // ends only after they are answered (abort's contract).
    const { messages, error, overBudget } = reader.read(chunk);
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i]!;
      let req: Req;
      try {
        req = kind.decode(m);
      } catch (e) {
        if (pool) for (let j = i; j < messages.length; j++) pool.release(messages[j]!);
        return abort(new UringmqError('INVALID_ARGUMENT', `malformed ${kind.name} request: ${(e as Error).message}`));
      }
      if (call.over) {
        pool?.release(m);
        continue;
      }
      handler.request(req, pool ? m : null);
    }
    if (error !== null && !aborted) {
      if (overBudget) resetUnreadCallLater(stream); // its status waits behind its answers: not forever
      abort(error);
    }
  });
  stream.on('end', () => {
    // A reset ends the readable side too, before 'aborted' and 'close' say it was one:
    // looked at a turn later, so a cancelled call goes as gone, not as a clean end.
    setImmediate(() => {
      if (call.over || aborted || stream.aborted || stream.destroyed) return;
      if (reader.midMessage) return abort(new UringmqError('INTERNAL', 'the client ended the stream inside a message'));
      handler.end();
    });
  });
}

/** The HTTP/2 stream of one direct call; owned by the main thread. */
class Http2StreamCall implements StreamCallIO {
  /** True once the status is decided: nothing more is sent or read. */
  over = false;
  private responded = false;
  private trailers: http2.OutgoingHttpHeaders | null = null;

  constructor(
    private readonly stream: http2.ServerHttp2Stream,
    private readonly maxMessageBytes: number,
    /** Told the call's end once, as it ends (stream closed or status decided): 'OK', a uringmq code, or CANCELLED. */
    private readonly ended: (code: string) => void,
  ) {}

  /** Response headers: the status and content type, and `extra`. */
  respond(extra: http2.OutgoingHttpHeaders): void {
    if (this.stream.destroyed) return;
    this.responded = true;
    this.stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-accept-encoding': 'identity', ...extra }, { waitForTrailers: true });
    this.stream.on('wantTrailers', () => {
      try {
        this.stream.sendTrailers(this.trailers ?? { 'grpc-status': '0' }); // then the request side is reset (resetAfterStatus)
      } catch {
        // reset meanwhile: nobody to tell
      }
    });
  }

  pause(): void {
    this.stream.pause();
  }

  resume(): void {
    if (!this.over) this.stream.resume();
  }

  readonly headroom = GRPC_PREFIX_BYTES;
  unflushed = 0;
  onFlushed: (() => void) | null = null;

  send(res: Buffer): void {
    if (this.over || this.stream.destroyed) return;
    const size = res.length - GRPC_PREFIX_BYTES;
    // grpc-js's check on what it sends, with its status: the client would refuse it anyway.
    if (size > this.maxMessageBytes) return this.fail(new UringmqError('RESOURCE_EXHAUSTED', `a ${size}-byte response is over this server's maxMessageBytes (${this.maxMessageBytes})`));
    res[0] = 0; // not compressed
    res.writeUInt32BE(size, 1);
    this.unflushed += res.length;
    this.stream.write(res, () => {
      this.unflushed -= res.length;
      this.onFlushed?.();
    });
  }

  end(): void {
    this.close({ 'grpc-status': '0' }, 'OK');
  }

  fail(e: unknown): void {
    const se = toServiceError(e);
    const code = String(se.metadata.get(CODE_TRAILER)[0] ?? 'INTERNAL');
    const limit = se.metadata.get(LIMIT_TRAILER)[0];
    this.close({ 'grpc-status': String(se.code), 'grpc-message': encodeURI(se.details), [CODE_TRAILER]: code, ...(limit ? { [LIMIT_TRAILER]: String(limit) } : {}) }, code);
  }

  /** The stream is closed (reset, connection gone, or after this side's status). */
  closed(): void {
    if (!this.over) this.ended('CANCELLED');
    this.over = true;
  }

  private close(trailers: http2.OutgoingHttpHeaders, code: string): void {
    if (this.over) return;
    this.over = true;
    this.ended(code);
    if (this.stream.destroyed) return;
    if (!this.responded) {
      // Trailers-only: the status in the one HEADERS frame.
      try {
        this.stream.respond({ ':status': 200, 'content-type': 'application/grpc', ...trailers }, { endStream: true });
      } catch {
        this.stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR); // the session is going away
      }
      return;
    }
    this.trailers = trailers;
    this.stream.end();
    // Requests still arriving are read and dropped, so the client's sends do not stall
    // on flow control before it sees the status (sent once the responses before it
    // are; then the request side is reset: resetAfterStatus).
    this.stream.resume();
  }
}
