/**
 * gRPC's message framing over HTTP/2 (a 1-byte compressed flag and a 4-byte big-endian
 * length before each message), for the calls spoken over node:http2 directly:
 * PublishStream and Subscribe on both sides (src/client/direct_stream.ts,
 * src/grpc/direct_streams.ts).
 */
import { UringmqError } from '../errors';
import { overClientMax } from './status';

/** Bytes of the prefix before every message. */
export const GRPC_PREFIX_BYTES = 5;

/**
 * A message announced longer than this is gathered from the bytes as they come and
 * copied into one buffer of its length only once whole. The length is the peer's word:
 * a buffer taken for it up front (the batch pool's, or the heap's: memory touched
 * before) is memory that a peer sending prefixes and nothing more pins, up to
 * maxMessageBytes × streams per connection (840 MiB seen for 64 streams of 16 MiB).
 * Below it, the hot path's batches (about 100 KB) keep their single copy.
 */
export const GATHER_ABOVE_BYTES = 1 << 20;

/**
 * The largest block a gathered message's bytes are copied into as they come. Not a
 * copy per chunk: node:http2 hands over each DATA frame as a chunk of its own, and a
 * peer sending a message one byte per frame made a Buffer per byte, about 130 bytes of
 * heap for each byte counted in the budget (1 MB of such a message held 127 MB, so one
 * stream of maxMessageBytes gigabytes). A block is at most as large as what the message
 * has already gathered (from 1 KiB on): what it holds unfilled is at most as much
 * again as was counted.
 */
const GATHER_BLOCK_BYTES = 64 << 10;

export interface FrameReaderOptions {
  /** Which side reads: a client reads responses, a server requests (it decides the errors). */
  readonly side: 'client' | 'server';
  /**
   * Where each message is copied: a buffer of exactly the given length that the caller
   * then owns (a pooled one, say). Without it, a message that arrives whole in one
   * chunk is returned as a view of that chunk: valid as long as the chunk is (node:http2
   * hands out each socket read's bytes in memory of their own, never reused, so a
   * consumer may keep a delivery's batches as views).
   */
  readonly alloc?: (bytes: number) => Buffer;
  /** Where a buffer from `alloc` goes back when the reader drops it unfilled (the stream ended inside its message). */
  readonly release?: (buf: Buffer) => void;
  /** The budget the bytes of this reader's partly received messages are counted in (a server's, or its connection's share of it). */
  readonly budget?: PartialMessageBudget;
}

/**
 * Bytes held by messages partly received, over every stream that counts in it (a
 * server's calls: the direct streams here, the others in grpcjs_budget.ts): a message's
 * length is the peer's word, and a peer that sends a prefix, maybe most of the bytes,
 * and then nothing, pins them until its stream ends. maxMessageBytes bounds that per
 * stream only; connections × streams of them is no bound. On a direct stream a message
 * that arrives whole in one chunk is never held partly, so never counted (the hot
 * path's batches mostly): one add and one subtract per message that spans chunks, one
 * add per chunk of a gathered one.
 *
 * With `perConnection`, each HTTP/2 connection's calls count in a share of their own
 * (forConnection), as well as in this: one connection (many streams sending large
 * messages slowly) could otherwise hold all of it, and every other connection's calls
 * needing any were refused until it let go.
 */
export class PartialMessageBudget {
  private bytes = 0;
  /** The connections' shares (perConnection), by connection: gone with it. */
  private readonly shares = new WeakMap<object, PartialMessageBudget>();
  /** The shares holding bytes now: one holding none is not kept here, so none outlives its connection. */
  private readonly holding = new Set<PartialMessageBudget>();
  /** The budget this one is a connection's share of: what it takes is taken there too, and must fit in both. */
  private parent: PartialMessageBudget | null = null;
  /** Which budget refused the last take() refused, this one or its parent (for exhausted(), called right after). */
  private refusedBy: PartialMessageBudget | null = null;

  constructor(
    /** At least the largest message read, so that one always fits when nothing else holds the budget. */
    readonly limit: number,
    /** The setting that raises it, named in the error a refused stream gets. */
    readonly setting: string,
    /** Each connection's share: at least the largest message read too, at most `limit`. */
    readonly perConnection: { readonly limit: number; readonly setting: string } | null = null,
  ) {}

  /** Bytes held now. */
  get held(): number {
    return this.bytes;
  }

  /** Of the connections' shares, the most bytes one holds now (0 without shares). */
  get largestShareHeld(): number {
    let most = 0;
    for (const s of this.holding) most = Math.max(most, s.bytes);
    return most;
  }

  /**
   * What the calls of the connection `conn` (an HTTP/2 session) count in: its share, the
   * same for all of its calls, or this budget itself without perConnection. A stream
   * whose session is gone already (undefined: it reads nothing more) gets a share of
   * its own.
   */
  forConnection(conn: object | undefined): PartialMessageBudget {
    if (this.perConnection === null) return this;
    let share = conn === undefined ? undefined : this.shares.get(conn);
    if (share === undefined) {
      share = new PartialMessageBudget(this.perConnection.limit, this.perConnection.setting);
      share.parent = this;
      if (conn !== undefined) this.shares.set(conn, share);
    }
    return share;
  }

  /** Counts `n` more bytes, or (the budget, or its parent's, would be passed) refuses them, counting nothing. */
  take(n: number): boolean {
    // The parent first: where both would be passed, the server's is the one named
    // (and a share as large as it never refuses alone).
    const parent = this.parent;
    if (parent !== null && !parent.take(n)) {
      this.refusedBy = parent;
      return false;
    }
    if (this.bytes + n > this.limit) {
      parent?.give(n);
      this.refusedBy = this;
      return false;
    }
    if (parent !== null && this.bytes === 0 && n > 0) parent.holding.add(this);
    this.bytes += n;
    return true;
  }

  give(n: number): void {
    this.bytes -= n;
    const parent = this.parent;
    if (parent === null) return;
    if (this.bytes === 0) parent.holding.delete(this);
    parent.give(n);
  }

  /**
   * The error a call is refused with after take() refused: `what` cannot be read now,
   * `mine` of the bytes held being its own. Names the budget that refused it: the
   * server's, or the connection's share.
   */
  exhausted(what: string, mine: number): UringmqError {
    if (this.refusedBy !== null && this.refusedBy !== this) return this.refusedBy.exhausted(what, mine);
    if (this.parent !== null)
      return new UringmqError(
        'RESOURCE_EXHAUSTED',
        `this connection's share of this server's memory for requests received in part is taken (${this.setting}: ${this.limit} bytes, ${this.bytes - mine} held by other calls on this connection): ${what} cannot be read now; retry later, or have the server's ${this.setting} raised`,
      );
    return new UringmqError(
      'RESOURCE_EXHAUSTED',
      `this server's memory for requests received in part is taken (${this.setting}: ${this.limit} bytes, ${this.bytes - mine} held by other calls): ${what} cannot be read now; retry later, or have the server's ${this.setting} raised`,
    );
  }
}

/**
 * Splits a stream of length-prefixed messages into messages, whatever the chunking.
 * Bounded: a message announced over `maxBytes` throws before anything is allocated for
 * it (a broken or hostile peer; waiting for it would buffer without limit), as does a
 * compressed one (never offered, so never to be sent); with a `budget`, so does a
 * message whose bytes held partly would pass it. The bytes counted in the budget are
 * given back when the message is whole, when reading fails, and on dispose(): the
 * owner of the reader calls that however its stream ends.
 */
export class GrpcFrameReader {
  private readonly head = Buffer.alloc(GRPC_PREFIX_BYTES);
  private headBytes = 0;
  /** The message being filled, and how many of its bytes have arrived. */
  private body: Buffer | null = null;
  private bodyBytes = 0;
  /** A long message being gathered (GATHER_ABOVE_BYTES): its full blocks so far, and its length. */
  private parts: Buffer[] | null = null;
  private partsLen = 0;
  /** The block being filled, and its bytes filled (of the bodyBytes gathered). */
  private block: Buffer | null = null;
  private blockBytes = 0;
  /** Bytes of the message being filled or gathered counted in opts.budget. */
  private charged = 0;
  /** The last read failed for the budget. */
  private overBudget = false;

  constructor(
    private readonly maxBytes: number,
    private readonly opts: FrameReaderOptions,
  ) {}

  push(chunk: Buffer): Buffer[] {
    const r = this.read(chunk);
    if (r.error !== null) throw r.error;
    return r.messages;
  }

  /**
   * push(), except that a message that cannot be read (compressed, over the limit)
   * does not take the whole messages before it in the chunk with it: they come back
   * with the error, so that they can be answered before the call ends. After an
   * error the reader's state is undefined: the caller reads nothing more.
   * `overBudget`: the error is the budget's (the message would pass it).
   */
  read(chunk: Buffer): { messages: Buffer[]; error: unknown; overBudget: boolean } {
    const out: Buffer[] = [];
    this.overBudget = false;
    try {
      this.readInto(chunk, out);
    } catch (e) {
      this.dispose(); // nothing more is read: what the message held goes back now, not when the stream ends
      return { messages: out, error: e, overBudget: this.overBudget };
    }
    return { messages: out, error: null, overBudget: false };
  }

  /**
   * Drops the message being read, if any, and gives back what it held (its budget, its
   * buffer). Idempotent; the reader may read afresh after it, from a message's start.
   */
  dispose(): void {
    if (this.charged !== 0) {
      this.opts.budget?.give(this.charged);
      this.charged = 0;
    }
    if (this.body !== null) this.opts.release?.(this.body);
    this.body = null;
    this.parts = null;
    this.block = null;
    this.headBytes = 0;
  }

  /** Counts `n` bytes of the message being read (`len` long) in the budget, or throws. */
  private charge(n: number, len: number): void {
    const budget = this.opts.budget;
    if (budget === undefined) return;
    if (!budget.take(n)) {
      this.overBudget = true;
      throw budget.exhausted(`a ${len}-byte message`, this.charged);
    }
    this.charged += n;
  }

  /** The message is whole: it holds nothing in the budget any more (it is the caller's now). */
  private uncharge(): void {
    if (this.charged === 0) return;
    this.opts.budget?.give(this.charged);
    this.charged = 0;
  }

  private readInto(chunk: Buffer, out: Buffer[]): void {
    let pos = 0;
    while (pos < chunk.length) {
      if (this.parts) {
        const n = Math.min(this.partsLen - this.bodyBytes, chunk.length - pos);
        if (this.bodyBytes + n === this.partsLen) {
          // The last part is not held: it is copied into the whole message at once.
          const whole = this.opts.alloc ? this.opts.alloc(this.partsLen) : Buffer.allocUnsafe(this.partsLen);
          let at = 0;
          for (const part of this.parts) at += part.copy(whole, at);
          if (this.block) at += this.block.copy(whole, at, 0, this.blockBytes);
          chunk.copy(whole, at, pos, pos + n);
          this.parts = null;
          this.block = null;
          this.uncharge();
          out.push(whole);
          pos += n;
          continue;
        }
        this.charge(n, this.partsLen);
        // Copied (the chunk's memory may be reused) into blocks, not a buffer per chunk.
        for (let left = n; left > 0; ) {
          if (this.block === null) {
            this.block = Buffer.allocUnsafeSlow(Math.min(GATHER_BLOCK_BYTES, Math.max(1024, this.bodyBytes), this.partsLen - this.bodyBytes));
            this.blockBytes = 0;
          }
          const k = chunk.copy(this.block, this.blockBytes, pos, pos + Math.min(left, this.block.length - this.blockBytes));
          this.blockBytes += k;
          this.bodyBytes += k;
          pos += k;
          left -= k;
          if (this.blockBytes === this.block.length) {
            this.parts.push(this.block);
            this.block = null;
          }
        }
        continue;
      }
      if (this.body) {
        const n = Math.min(this.body.length - this.bodyBytes, chunk.length - pos);
        chunk.copy(this.body, this.bodyBytes, pos, pos + n);
        this.bodyBytes += n;
        pos += n;
        if (this.bodyBytes === this.body.length) {
          out.push(this.body);
          this.body = null;
          this.uncharge();
        }
        continue;
      }
      let len: number;
      if (this.headBytes === 0 && chunk.length - pos >= GRPC_PREFIX_BYTES) {
        this.check(chunk[pos]!, (len = chunk.readUInt32BE(pos + 1)));
        pos += GRPC_PREFIX_BYTES;
      } else {
        const n = Math.min(GRPC_PREFIX_BYTES - this.headBytes, chunk.length - pos);
        chunk.copy(this.head, this.headBytes, pos, pos + n);
        this.headBytes += n;
        pos += n;
        if (this.headBytes < GRPC_PREFIX_BYTES) break;
        this.headBytes = 0;
        this.check(this.head[0]!, (len = this.head.readUInt32BE(1)));
      }
      if (chunk.length - pos >= len) {
        // Whole in this chunk: never held in part, so not counted in the budget, and
        // copied at once (a long one too: its bytes are here, nothing is taken on the
        // peer's word).
        if (this.opts.alloc) {
          const m = this.opts.alloc(len);
          chunk.copy(m, 0, pos, pos + len);
          out.push(m);
        } else out.push(chunk.subarray(pos, pos + len));
        pos += len;
      } else if (len > GATHER_ABOVE_BYTES) {
        this.parts = [];
        this.block = null;
        this.partsLen = len;
        this.bodyBytes = 0;
      } else {
        // Counted before it is taken: its full length, from now until it is whole.
        this.charge(len, len);
        this.body = this.opts.alloc ? this.opts.alloc(len) : Buffer.allocUnsafe(len);
        this.bodyBytes = 0;
      }
    }
  }

  /** True while part of a message has arrived and the rest has not. */
  get midMessage(): boolean {
    return this.headBytes > 0 || this.body !== null || this.parts !== null;
  }

  private check(flag: number, len: number): void {
    if (flag !== 0) throw new UringmqError('INTERNAL', `the ${this.opts.side === 'client' ? 'server' : 'client'} sent a compressed message, which was not negotiated`);
    if (len <= this.maxBytes) return;
    if (this.opts.side === 'client') throw overClientMax(len, this.maxBytes);
    throw new UringmqError('RESOURCE_EXHAUSTED', `a ${len}-byte message is over this server's maxMessageBytes (${this.maxBytes}); nothing of it was written`);
  }
}
