/**
 * PublishStream served over node:http2 directly, on grpc-js's own connections: the
 * server side of src/client/publish_stream.ts. Every other call, and a PublishStream
 * this path does not take (compressed, or with a deadline), stays with grpc-js.
 *
 * Why by hand, for this one call: per ~100 KB request grpc-js concatenates the HTTP/2
 * DATA chunks (16 KB each) into a new buffer, passes it through its interceptors and
 * object-mode streams, and the broker then copied the batch again into a pooled buffer
 * (a grpc-js buffer kept until the append is durable survives young GCs). Here each
 * request is copied once, from the chunks straight into a pooled buffer that the log's
 * I/O thread reads and that goes back to the pool when the append settles.
 * `npm run bench:grpc -- --only throughput [--server-publish grpc-js]`, two
 * alternating pairs on 2026-12-01: the server's main thread spent 62 / 81 ns per
 * record this way against 100 / 99 through grpc-js.
 *
 * grpc-js has no public hook for one path, so this wraps its per-stream handler (a
 * private method) before the server binds; if grpc-js changes, routing reports false
 * and grpc-js serves PublishStream like any call.
 */
import * as http2 from 'node:http2';
import type * as grpc from '@grpc/grpc-js';
import type { BufferPool } from '../codec/buffer_pool';
import { UringmqError } from '../errors';
import { GRPC_PREFIX_BYTES, GrpcFrameReader } from './framing';
import { pb, type uringmq } from './proto';
import { brokerService } from './service';
import { CODE_TRAILER, MAX_MESSAGE_HEADER, toServiceError } from './status';

const PUBLISH_STREAM_PATH = brokerService.publishStream!.path;

/** One PublishStream call, whichever transport carries it; owned by the main thread. */
export interface PublishCallIO {
  /** Stops reading requests (their bytes wait in the client: HTTP/2 flow control). */
  pause(): void;
  resume(): void;
  /** Bytes each answer leaves free at its start for this transport's framing. */
  readonly headroom: number;
  /** Sends one answer: a serialized PublishResponse after `headroom` bytes (see publishAnswer); dropped once the call is over. */
  send(res: Buffer): void;
  /** Ends the call with status OK. */
  end(): void;
  /** Ends the call with the status for this error. */
  fail(e: unknown): void;
}

/** What the broker side does with one call's requests. */
export interface PublishCallHandler {
  /** One request; `owned` (when given) is the caller's buffer behind it, to release once settled. */
  request(req: uringmq.v1.PublishRequest, owned: Buffer | null): void;
  /** The client sent its last request. */
  end(): void;
  /** The call is gone (reset, connection lost): nothing more can be sent. */
  gone(): void;
}

export interface RawPublishOptions {
  maxMessageBytes: number;
  /** Where requests are assembled: the broker's batch pool (the handler releases what it is given). */
  pool: BufferPool;
  /** Admits the call (auth, limits) or gives the error it ends with. */
  open(authorization: string | undefined, io: PublishCallIO): PublishCallHandler | UringmqError;
}

/**
 * Makes `server` hand the PublishStream calls it can to `opts` instead of grpc-js.
 * Call before the server binds (grpc-js reads the handler then). False when grpc-js's
 * internals are not what this expects: grpc-js then serves them all.
 */
export function routePublishStreams(server: grpc.Server, opts: RawPublishOptions): boolean {
  type StreamHandler = (this: unknown, extra: unknown, stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => void;
  const s = server as unknown as { _streamHandler?: StreamHandler; channelzEnabled?: unknown; onStreamOpened?: (stream: http2.ServerHttp2Stream) => void };
  const grpcHandler = s._streamHandler;
  // With channelz on, grpc-js installs another handler, which this does not wrap; a
  // handler of another arity is not the (interceptors, stream, headers) one known here.
  if (typeof grpcHandler !== 'function' || grpcHandler.length !== 3 || s.channelzEnabled !== false) return false;
  s._streamHandler = function (this: unknown, extra, stream, headers) {
    if (headers[':path'] !== PUBLISH_STREAM_PATH || !takes(headers)) return grpcHandler.call(this, extra, stream, headers);
    // What grpc-js's handler does first: an error listener (a reset emits one; the
    // 'close' that follows is what counts), and its idle-connection bookkeeping.
    stream.once('error', () => undefined);
    if (typeof s.onStreamOpened === 'function') s.onStreamOpened.call(server, stream);
    try {
      serveRaw(stream, headers, opts);
    } catch {
      // A stream reset or a session closing between the checks and a respond():
      // this call is over, and an exception here would reach the http2 server's emit.
      if (!stream.destroyed) stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    }
  };
  return true;
}

/**
 * Plain gRPC over HTTP/2 with nothing this path leaves to grpc-js: no message
 * compression, no deadline (grpc-js enforces those).
 */
function takes(headers: http2.IncomingHttpHeaders): boolean {
  const type = headers['content-type'];
  const encoding = headers['grpc-encoding'];
  return (
    headers[':method'] === 'POST' &&
    (type === 'application/grpc' || type === 'application/grpc+proto') &&
    (encoding === undefined || encoding === 'identity') &&
    headers['grpc-timeout'] === undefined
  );
}

function serveRaw(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, opts: RawPublishOptions): void {
  const call = new Http2PublishCall(stream);
  const auth = headers.authorization;
  const handler = opts.open(Array.isArray(auth) ? auth[0] : auth, call);
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
  call.respond(opts.maxMessageBytes);
  const reader = new GrpcFrameReader(opts.maxMessageBytes, { side: 'server', alloc: (n) => opts.pool.acquire(n) });
  stream.on('data', (chunk: Buffer) => {
    if (call.over) return; // failed: what the client still sends is dropped
    let messages: Buffer[];
    try {
      messages = reader.push(chunk);
    } catch (e) {
      return call.fail(e);
    }
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i]!;
      let req: uringmq.v1.PublishRequest;
      try {
        req = pb.PublishRequest.decode(m);
      } catch (e) {
        for (let j = i; j < messages.length; j++) opts.pool.release(messages[j]!);
        return call.fail(new UringmqError('INVALID_ARGUMENT', `malformed PublishStream request: ${(e as Error).message}`));
      }
      if (call.over) {
        opts.pool.release(m);
        continue;
      }
      handler.request(req, m);
    }
  });
  stream.on('end', () => {
    if (call.over) return;
    if (reader.midMessage) return call.fail(new UringmqError('INTERNAL', 'the client ended the stream inside a message'));
    handler.end();
  });
}

/** The HTTP/2 stream of one raw PublishStream call; owned by the main thread. */
class Http2PublishCall implements PublishCallIO {
  /** True once the status is decided: nothing more is sent or read. */
  over = false;
  private responded = false;
  private trailers: http2.OutgoingHttpHeaders | null = null;

  constructor(private readonly stream: http2.ServerHttp2Stream) {}

  /** Response headers, with the largest request this server reads (as grpc-js's path sends). */
  respond(maxMessageBytes: number): void {
    if (this.stream.destroyed) return;
    this.responded = true;
    this.stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-accept-encoding': 'identity', [MAX_MESSAGE_HEADER]: String(maxMessageBytes) }, { waitForTrailers: true });
    this.stream.on('wantTrailers', () => {
      try {
        this.stream.sendTrailers(this.trailers ?? { 'grpc-status': '0' });
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

  send(res: Buffer): void {
    if (this.over || this.stream.destroyed) return;
    res[0] = 0; // not compressed
    res.writeUInt32BE(res.length - GRPC_PREFIX_BYTES, 1);
    this.stream.write(res);
  }

  end(): void {
    this.close({ 'grpc-status': '0' });
  }

  fail(e: unknown): void {
    const se = toServiceError(e);
    this.close({ 'grpc-status': String(se.code), 'grpc-message': encodeURI(se.details), [CODE_TRAILER]: String(se.metadata.get(CODE_TRAILER)[0] ?? 'INTERNAL') });
  }

  closed(): void {
    this.over = true;
  }

  private close(trailers: http2.OutgoingHttpHeaders): void {
    if (this.over) return;
    this.over = true;
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
    // on flow control before it sees the status.
    this.stream.resume();
  }
}
