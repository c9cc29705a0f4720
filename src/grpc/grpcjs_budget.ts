/**
 * The calls grpc-js reads (unary calls, and the streams the direct path leaves to it)
 * counted in the server's PartialMessageBudget, as the direct streams are.
 *
 * grpc-js (server-interceptors.js) reads a call through a 'data' listener into its
 * StreamDecoder, which keeps views of the chunks of the message it is assembling
 * (readPartialMessage, and its first byte: readCompressFlag) until the next message
 * begins, and a unary call's request goes to its handler only at the client's end of
 * the stream. Up to maxMessageBytes per call, held for as long as the client waits:
 * maxConnections × maxConcurrentStreams of them was the only bound. Nothing of that is
 * public, so it is watched from the node:http2 stream grpc-js reads, before grpc-js sees it:
 * - the stream's emit of each 'data' chunk (to grpc-js's listener) counts the chunk,
 *   whole, when grpc-js keeps a view of it (a view keeps all of its chunk), gives back
 *   a message's chunks when the next one begins or a chunk ends with it (a stream:
 *   letGoOfWhole) or when the request is handed over (a unary call, at 'end'), and
 *   does not hand on a chunk that would pass the budget: grpc-js keeps nothing of it,
 *   and the call is refused. A stream's handler takes that as a request that cannot be
 *   read (deferRefusal): it answers what grpc-js handed it, then ends the call with
 *   the status (reset if, in a period of UNREAD_CALL_PERIOD_MS, what it wrote waits
 *   for its client and none of it reaches it: resetUnreadCallLater); the others are
 *   refused at once.
 * - the stream's push (where node:http2 hands each DATA chunk over) stores a copy:
 *   node:http2's chunks are views of the whole socket read they came in (up to 64 KiB,
 *   shared with other streams), and the views grpc-js keeps would pin that for a
 *   byte counted; a copy is no larger than the DATA frame it came in. It also holds
 *   back the last byte of a unary call's request until the client's end of the stream
 *   (see there), and drops what is sent to a call refused.
 * Whatever ends the call (its status, a reset, the connection, the server's stop), its
 * 'close' gives back what it held.
 *
 * A stream's message is counted until it is whole: grpc-js's decoder keeps views of
 * its chunks (our copies, so no socket read besides) until the next message begins,
 * and they are dropped from it (its private fields: letGoOfWhole) once it has copied
 * the message out. Where its decoder is not the one known here they stay, counted,
 * until the next message begins (holding back a byte of it, as for a unary request,
 * would keep the message from its handler until the client sends another).
 */
import * as http2 from 'node:http2';
import { Duplex } from 'node:stream';
import type { UringmqError } from '../errors';
import { resetUnreadCallLater } from './direct_streams';
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
  /** Messages whose last byte has been scanned. */
  whole = 0;

  /** Whether the bytes scanned so far end where a message does (or before any). */
  get atBoundary(): boolean {
    return this.head === 0 && this.left === 0;
  }

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
        if (this.left === 0) this.whole++;
        continue;
      }
      if (this.head === 0) this.began = true;
      else this.len = this.len * 256 + chunk[pos]!; // bytes 1-4: the length, big-endian (the compressed flag before)
      pos++;
      if (++this.head === GRPC_PREFIX_BYTES) {
        this.left = this.len;
        if (this.len === 0) this.whole++;
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
 * The fields of grpc-js's StreamDecoder (stream-decoder.js, private) let go of here:
 * between messages (readState 0, NO_DATA) it keeps views of the chunks of the last
 * one, which it has copied out whole already, until the next begins.
 */
interface GrpcJsDecoder {
  readState: number;
  readCompressFlag: Buffer;
  readPartialMessage: Buffer[];
}

/** grpc-js's decoder of the call `c` (its private `decoder`), or null when it is not the one known here. */
function decoderOf(c: object): GrpcJsDecoder | null {
  const d = (c as { decoder?: Partial<GrpcJsDecoder> }).decoder;
  if (typeof d !== 'object' || d === null || typeof (d as { write?: unknown }).write !== 'function') return null;
  return typeof d.readState === 'number' && Buffer.isBuffer(d.readCompressFlag) && Array.isArray(d.readPartialMessage) ? (d as GrpcJsDecoder) : null;
}

/** What the decoder's first-byte view is replaced with: it only ever reads it, and sets another at the next message. */
const NO_FLAG = Buffer.alloc(1);

/** Per stream counted here: what its handler told (deferRefusal): who ends it when it is refused, and grpc-js's decoder of it. */
interface Deferred {
  abort: ((e: UringmqError) => void) | null;
  decoder: GrpcJsDecoder | null;
}
const deferredTo = new WeakMap<http2.ServerHttp2Stream, Deferred>();

/**
 * The HTTP/2 stream of a grpc-js call (the object its handler was given), found as
 * deferRefusal finds it: grpc-js's own call, through any interceptors (their
 * nextCall), reads and writes it. Null when it cannot be (grpc-js's internals changed).
 */
export function grpcJsStreamOf(call: object): http2.ServerHttp2Stream | null {
  let c = (call as { call?: unknown }).call;
  for (let depth = 0; depth < 8 && typeof c === 'object' && c !== null; depth++) {
    const stream = (c as { stream?: unknown }).stream;
    if (stream instanceof Duplex && typeof (stream as Partial<http2.ServerHttp2Stream>).respond === 'function') return stream as http2.ServerHttp2Stream;
    c = (c as { nextCall?: unknown }).nextCall;
  }
  return null;
}

/**
 * Has the refusal of a grpc-js streaming call (its next bytes would pass the budget)
 * told to `abort`, which ends the call with the error's status once the requests
 * grpc-js handed over before it are answered (StreamCallHandler.abort), instead of
 * resetting the call at once: a reset dropped the answers not yet written, and a
 * PublishStream client then wrote again batches already appended. `call` is the
 * grpc-js call object its handler was given. False when its HTTP/2 stream cannot be
 * found in it (grpc-js's internals changed): the call is then reset when refused.
 */
export function deferRefusal(call: object, abort: (e: UringmqError) => void): boolean {
  // The ServerDuplexStream's call, through any interceptors to grpc-js's own, which reads the stream.
  let c = (call as { call?: unknown }).call;
  for (let depth = 0; depth < 8 && typeof c === 'object' && c !== null; depth++) {
    const state = deferredTo.get((c as { stream?: http2.ServerHttp2Stream }).stream!);
    if (state) {
      state.abort = abort;
      state.decoder = decoderOf(c);
      return true;
    }
    c = (c as { nextCall?: unknown }).nextCall;
  }
  return false;
}

/**
 * What each chunk grpc-js keeps past a call's first CHUNKS_AT_LENGTH counts at least:
 * the chunks a call holds count their bytes, or this much for each of them past the
 * first CHUNKS_AT_LENGTH, whichever is more (DATA frames of a KiB or more, as clients
 * send, are counted at their length). Each chunk is a Buffer of its own (our copy) and
 * an entry of the decoder's list, about 400 bytes of memory (heap and backing store)
 * whatever its length: a peer sending its message one byte per DATA frame (each a
 * chunk) had 1 MB counted hold 400 MB, and one unary call of maxMessageBytes could
 * take the server's heap.
 */
export const MIN_CHUNK_COST = 1024;
const CHUNKS_AT_LENGTH = 64;

/**
 * Counts what grpc-js holds of the requests of a call it is about to read on `stream`
 * in `opts.budget`, and refuses the call (RESOURCE_EXHAUSTED) when its next bytes
 * would pass it: a streaming call whose handler took its refusal (deferRefusal) ends
 * after answering what it was handed, the others at once. Call from the http2 server's
 * 'stream' event before grpc-js's listener.
 */
export function countGrpcJsCall(stream: http2.ServerHttp2Stream, opts: GrpcJsCallBudgetOptions): void {
  const { budget, wholeRequest } = opts;
  const deferred: Deferred = { abort: null, decoder: null };
  deferredTo.set(stream, deferred);
  /** Follows what grpc-js is handed (where its decoder lets go of a message's chunks). */
  const scanner = new FrameScanner();
  /** Follows what node:http2 delivers (where a unary call's message ends). */
  const arriving = new FrameScanner();
  /** Bytes counted for this call: the chunks grpc-js keeps of its message in progress (of its whole request, for a unary call), and `last`. */
  let held = 0;
  /** The bytes and the chunks `held` counts: their bytes, or MIN_CHUNK_COST for each chunk past CHUNKS_AT_LENGTH, whichever is more. */
  let heldBytes = 0;
  let chunksHeld = 0;
  /** No more counting: the call's request is handed over, or its status is on its way, or it is closed. */
  let over = false;
  /** Refused, its handler answering what it was handed: nothing more is handed to grpc-js. */
  let dropping = false;
  /**
   * A unary call's request, whole, short of its last byte, which grpc-js gets at the
   * client's end of the stream (or before the bytes after it). Counted in `held`.
   */
  let last: Buffer | null = null;
  /** `last` once handed on: counted already. */
  let lastOut: Buffer | null = null;
  const stop = () => {
    if (over) return;
    over = true;
    budget.give(held);
    held = 0;
  };

  const own = (chunk: Buffer) => {
    const copy = Buffer.allocUnsafeSlow(chunk.length); // memory of its own: not a pooled slab others share either
    chunk.copy(copy);
    return copy;
  };
  const push = stream.push;
  const handOnLast = (s: http2.ServerHttp2Stream) => {
    if (last === null) return;
    lastOut = last;
    last = null;
    push.call(s, lastOut);
  };
  stream.push = function (this: http2.ServerHttp2Stream, chunk: unknown, encoding?: BufferEncoding): boolean {
    // What is sent to a refused call is read and dropped (as on a direct stream whose
    // status is decided): not held while its answers are written, whatever they wait for.
    if (dropping) return chunk === null ? push.call(this, null) : true;
    if (chunk === null) handOnLast(this); // before the stream's end
    if (!Buffer.isBuffer(chunk) || chunk.length === 0) return push.call(this, chunk, encoding);
    if (over) {
      handOnLast(this);
      return push.call(this, chunk, encoding);
    }
    if (!wholeRequest) return push.call(this, own(chunk));
    // grpc-js's decoder, on a message's last byte, joins its chunks into one buffer (the
    // message) and yet keeps its views of them until another message begins: a unary
    // request whole and not ended was held twice, once counted. Its last byte waits
    // here, counted, until the end of the stream: grpc-js joins it only to hand it over.
    handOnLast(this); // a second message: grpc-js refuses the call for it
    arriving.scan(chunk);
    // Only the first message's: a second one's, held back, kept grpc-js from seeing it
    // (and refusing the call) until the client's end.
    if (!arriving.atBoundary || arriving.whole !== 1) return push.call(this, own(chunk));
    if (!budget.take(1)) {
      refuse();
      return true;
    }
    held += 1;
    heldBytes += 1;
    last = own(chunk.subarray(chunk.length - 1));
    return chunk.length === 1 || push.call(this, own(chunk.subarray(0, chunk.length - 1)));
  };

  /** Whether grpc-js is handed `chunk`: counted here first, refused if it would pass the budget. */
  function admit(chunk: Buffer): boolean {
    if (over) return true;
    if (dropping) return false;
    if (chunk === lastOut) {
      lastOut = null;
      scanner.scan(chunk);
      return true;
    }
    // Its status is on its way: grpc-js decodes nothing more of it.
    if (stream.writableEnded) {
      stop();
      return true;
    }
    scanner.scan(chunk);
    // The decoder keeps the chunk its message in progress began in, all of it (the
    // message's first byte is kept as a one-byte view: the whole messages before it in
    // the chunk are kept with it), and each chunk after. A stream's decoder lets go of
    // them as the next message begins; a unary call's request is held until its end.
    const fresh = !wholeRequest && scanner.began;
    const bytes = (fresh ? 0 : heldBytes) + chunk.length;
    const chunks = (fresh ? 0 : chunksHeld) + 1;
    const next = Math.max(bytes, (chunks - CHUNKS_AT_LENGTH) * MIN_CHUNK_COST);
    if (next > held && !budget.take(next - held)) {
      refuse();
      return false;
    }
    if (next < held) budget.give(held - next);
    held = next;
    heldBytes = bytes;
    chunksHeld = chunks;
    return true;
  }

  // Where each chunk is handed to the 'data' listeners (grpc-js's): one past the budget
  // is not, so grpc-js keeps nothing of it (the stream need not be closed first, and
  // the call can answer what came before). No listener of its own: the stream stays
  // paused until grpc-js resumes it.
  const emit = stream.emit;
  stream.emit = function (this: http2.ServerHttp2Stream, event: string | symbol, ...args: unknown[]): boolean {
    if (event !== 'data' || !Buffer.isBuffer(args[0])) return emit.call(this, event, ...args);
    if (!admit(args[0])) return false;
    const handled = emit.call(this, event, ...args);
    if (!wholeRequest) letGoOfWhole();
    return handled;
  } as typeof stream.emit;

  /**
   * A stream's chunks handed on end where a message does: grpc-js's decoder has copied
   * it out (synchronously, in its 'data' listener) and holds nothing of its own then,
   * only views of the chunks the message came in, until the next message begins; an
   * idle stream kept them, counted, for as long as it stayed idle. They are dropped
   * from it here, and given back. Where its decoder is not the one known here (or
   * before the handler ran), they stay, counted, until the next message.
   */
  function letGoOfWhole(): void {
    const d = deferred.decoder;
    if (over || dropping || held === 0 || d === null || !scanner.atBoundary || d.readState !== 0) return;
    d.readCompressFlag = NO_FLAG;
    d.readPartialMessage = [];
    budget.give(held);
    held = 0;
    heldBytes = 0;
    chunksHeld = 0;
  }

  function refuse(): void {
    const e = budget.exhausted(`this call's request (${held} bytes of it received so far)`, held);
    if (deferred.abort && !stream.destroyed && !stream.closed && !stream.writableEnded) {
      // The handler ends the call once it has answered the requests grpc-js handed it.
      // What grpc-js keeps of the message in progress stays counted until the call
      // closes (reset if its client does not read its answers); nothing more is handed
      // to it, or counted.
      dropping = true;
      last = null;
      resetUnreadCallLater(stream);
      deferred.abort(e);
      return;
    }
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

  // A unary call's request is its handler's from the end of the stream (grpc-js calls it then).
  if (wholeRequest) stream.once('end', stop);
  stream.once('close', stop);
}
