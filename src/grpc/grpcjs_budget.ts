/**
 * The calls grpc-js reads (unary calls, and the streams the direct path leaves to it)
 * counted in the server's PartialMessageBudget, as the direct streams are.
 *
 * grpc-js (server-interceptors.js) reads a call through a 'data' listener into its
 * StreamDecoder, which keeps views of the chunks of the message it is assembling
 * (readPartialMessage, and its first byte: readCompressFlag) until the next message
 * begins, and a unary call's request goes to its handler only at the client's end of
 * the stream. Up to maxMessageBytes per call, held for as long as the client waits:
 * maxConnections × maxConcurrentStreams of them was the only bound. Nothing of that is public, so it is watched from the
 * node:http2 stream grpc-js reads, before grpc-js sees it:
 * - a 'data' listener put in front of grpc-js's (prependListener: a Readable starts
 *   flowing for on('data') only, so the stream stays paused until grpc-js resumes it)
 *   counts each delivered chunk grpc-js keeps a view of, whole (a view keeps all of
 *   its chunk), gives back a message's chunks when the next one begins (a stream) or
 *   when the request is handed over (a unary call, at 'end'), and refuses a chunk that
 *   would pass the budget before grpc-js decodes it;
 * - the stream's push (where node:http2 hands each DATA chunk over) stores a copy:
 *   node:http2's chunks are views of the whole socket read they came in (up to 64 KiB,
 *   shared with other streams), and the views grpc-js keeps would pin that for a
 *   byte counted; a copy is no larger than the DATA frame it came in.
 * Whatever ends the call (its status, a reset, the connection, the server's stop), its
 * 'close' gives back what it held.
 */
import * as http2 from 'node:http2';
import type { UringmqError } from '../errors';
import { GRPC_PREFIX_BYTES, type PartialMessageBudget } from './framing';
import { CODE_TRAILER, toServiceError } from './status';

/**
 * Follows gRPC's framing through a byte stream, whatever the chunking, without keeping
 * any of it: how many message bytes (prefixes not counted) each chunk carries, and
 * whether a message begins in it.
 */
export class FrameScanner {
  /** Prefix bytes seen of the message being read (0 between messages). */
  private head = 0;
  private len = 0;
  /** Message bytes still to come. */
  private left = 0;
  /** Of the chunk last scanned: whether a message began in it. */
  began = false;

  /** The message bytes in `chunk`. */
  scan(chunk: Buffer): number {
    let pos = 0;
    let bytes = 0;
    this.began = false;
    while (pos < chunk.length) {
      if (this.left > 0) {
        const n = Math.min(this.left, chunk.length - pos);
        this.left -= n;
        pos += n;
        bytes += n;
        continue;
      }
      if (this.head === 0) this.began = true;
      else this.len = this.len * 256 + chunk[pos]!; // bytes 1-4: the length, big-endian (the compressed flag before)
      pos++;
      if (++this.head === GRPC_PREFIX_BYTES) {
        this.left = this.len;
        this.head = 0;
        this.len = 0;
      }
    }
    return bytes;
  }
}

export interface GrpcJsCallBudgetOptions {
  budget: PartialMessageBudget;
  /** The call's request is read whole before its handler runs (unary, server-streaming, or no such method). */
  wholeRequest: boolean;
  /** Told when the call is refused, with the error its client was sent. */
  refused?: (e: UringmqError) => void;
}

/**
 * Counts what grpc-js holds of the requests of a call it is about to read on `stream`
 * in `opts.budget`, and ends the call with RESOURCE_EXHAUSTED when its next bytes
 * would pass it. Call from the http2 server's 'stream' event before grpc-js's listener.
 */
export function countGrpcJsCall(stream: http2.ServerHttp2Stream, opts: GrpcJsCallBudgetOptions): void {
  const { budget, wholeRequest } = opts;
  const scanner = new FrameScanner();
  /** Bytes counted for this call: the chunks grpc-js keeps of its message in progress (of its whole request, for a unary call). */
  let held = 0;
  let over = false;
  const stop = () => {
    if (over) return;
    over = true;
    budget.give(held);
    held = 0;
    stream.removeListener('data', onData);
  };

  const push = stream.push;
  stream.push = function (this: http2.ServerHttp2Stream, chunk: unknown, encoding?: BufferEncoding): boolean {
    if (over || !Buffer.isBuffer(chunk)) return push.call(this, chunk, encoding);
    const copy = Buffer.allocUnsafeSlow(chunk.length); // memory of its own: not a pooled slab others share either
    chunk.copy(copy);
    return push.call(this, copy);
  };

  function onData(chunk: Buffer): void {
    if (over) return;
    // Its status is on its way: grpc-js decodes nothing more of it.
    if (stream.writableEnded) return stop();
    scanner.scan(chunk);
    // The decoder keeps the chunk its message in progress began in, all of it (the
    // message's first byte is kept as a one-byte view: the whole messages before it in
    // the chunk are kept with it), and each chunk after. A stream's decoder lets go of
    // them as the next message begins; a unary call's request is held until its end.
    const next = !wholeRequest && scanner.began ? chunk.length : held + chunk.length;
    if (next > held && !budget.take(next - held)) return refuse();
    if (next < held) budget.give(held - next);
    held = next;
  }

  function refuse(): void {
    const e = budget.exhausted(`this call's request (${held} bytes of it received so far)`, held);
    stop();
    if (stream.destroyed || stream.closed) return;
    try {
      if (!stream.headersSent) {
        const se = toServiceError(e);
        stream.respond(
          { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': String(se.code), 'grpc-message': encodeURI(se.details), [CODE_TRAILER]: e.code },
          { endStream: true },
        );
        // Closed now, not a turn later (resetAfterStatus): grpc-js, whose call this
        // still is, then sees it cancelled and sends nothing more on it (a respond()
        // after this one would throw from its deadline timer, say). The reset goes
        // out after the response (node:http2 waits for the writable side to finish).
        stream.close(http2.constants.NGHTTP2_NO_ERROR);
      } else {
        // grpc-js has sent the call's headers and may be writing answers: no status
        // can be put in between. gRPC clients take this code as RESOURCE_EXHAUSTED.
        stream.close(http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
      }
    } catch {
      if (!stream.destroyed) stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR); // the session is going away
    }
    opts.refused?.(e);
  }

  stream.prependListener('data', onData);
  // A unary call's request is its handler's from the end of the stream (grpc-js calls it then).
  if (wholeRequest) stream.once('end', stop);
  stream.once('close', stop);
}
