/**
 * The native fetch plane, started from JavaScript: `broker.startFetchServer()` (and
 * `uringmq serve`, by default). The listener, its connections and the bytes all
 * live on a native thread (native/fetch); this object only starts, inspects and
 * stops it. Protocol: docs/FETCH-PROTOCOL.md.
 */
import { invalid } from '../errors';
import { createFetchServer, type FetchServerStats, type NativeEngine, type NativeFetchServer } from '../native';
import { DEFAULT_FETCH_PORT, checkAuthToken } from './protocol';

export type { FetchServerStats };

export interface FetchServerOptions {
  /** Listen address (default 127.0.0.1). */
  host?: string;
  /** Listen port (default 50052); 0 picks a free one (see `port` after start). */
  port?: number;
  /**
   * 'auto' (default): io_uring (accept, recv, send, splice) where the kernel allows
   * it, else epoll + sendfile(2); URINGMQ_IO_BACKEND sets the default, as for the log.
   */
  ioBackend?: 'auto' | 'io_uring' | 'thread';
  /** Shared secret every client must present in its hello (default: none). */
  authToken?: string;
  /** Open connections at most; more are refused with TOO_MANY_CONNECTIONS (default 1024). */
  maxConnections?: number;
  /** A connection that has not completed its hello by then is closed (default 10 s). */
  handshakeTimeoutMs?: number;
  /** A connection without a request for this long is closed (default 5 min). */
  idleTimeoutMs?: number;
  /** A reply that makes no progress for this long (the client stopped reading) closes the connection (default 30 s). */
  sendTimeoutMs?: number;
  /** The largest maxBytes a request may ask for (default 64 MiB). */
  maxFetchBytes?: number;
  /** The longest long-poll a request may ask for (default 60 s). */
  maxWaitMs?: number;
  /** Bytes one reply may copy from the in-memory tail cache (default 1 MiB; beyond it the file serves). */
  memoryPerConnection?: number;
  /** The same, all connections together (default 64 MiB). */
  memoryTotal?: number;
}

function optInt(v: unknown, what: string, min: number, max: number): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) throw invalid(`${what} must be an integer between ${min} and ${max}, got ${String(v)}`);
  return v;
}

export class FetchServer {
  private native: NativeFetchServer | null;
  readonly host: string;
  readonly port: number;
  /** 'io_uring' or 'thread' (epoll + sendfile). */
  readonly ioBackend: 'io_uring' | 'thread';
  /** Why that backend (e.g. "io_uring_setup: Operation not permitted"). */
  readonly ioBackendNote: string;

  /** @internal use broker.startFetchServer() */
  constructor(engine: NativeEngine, opts: FetchServerOptions, defaultBackend: 'auto' | 'io_uring' | 'thread', private readonly onClose: () => void) {
    if (opts === null || typeof opts !== 'object') throw invalid('fetch server options must be an object');
    const host = opts.host ?? '127.0.0.1';
    if (typeof host !== 'string' || host.length === 0) throw invalid('host must be a non-empty string');
    const backend = opts.ioBackend ?? defaultBackend;
    if (backend !== 'auto' && backend !== 'io_uring' && backend !== 'thread') throw invalid(`ioBackend must be 'auto', 'io_uring' or 'thread', got ${JSON.stringify(backend)}`);
    // '' is refused, not taken as "no token": the listener would run without auth.
    if (opts.authToken !== undefined) checkAuthToken(opts.authToken, 'authToken');
    this.native = createFetchServer(engine, {
      host,
      port: optInt(opts.port, 'port', 0, 65535) ?? DEFAULT_FETCH_PORT,
      backend,
      token: opts.authToken,
      maxConnections: optInt(opts.maxConnections, 'maxConnections', 1, 1 << 20),
      handshakeTimeoutMs: optInt(opts.handshakeTimeoutMs, 'handshakeTimeoutMs', 1, 3_600_000),
      idleTimeoutMs: optInt(opts.idleTimeoutMs, 'idleTimeoutMs', 1, 86_400_000),
      sendTimeoutMs: optInt(opts.sendTimeoutMs, 'sendTimeoutMs', 1, 3_600_000),
      maxFetchBytes: optInt(opts.maxFetchBytes, 'maxFetchBytes', 1, 1 << 30),
      maxWaitMs: optInt(opts.maxWaitMs, 'maxWaitMs', 0, 3_600_000),
      memoryPerConnection: optInt(opts.memoryPerConnection, 'memoryPerConnection', 0, 2 ** 40),
      memoryTotal: optInt(opts.memoryTotal, 'memoryTotal', 0, 2 ** 40),
    });
    this.host = host;
    this.port = this.native.port;
    this.ioBackend = this.native.backend === 'io_uring' ? 'io_uring' : 'thread';
    this.ioBackendNote = this.native.backendNote;
  }

  get closed(): boolean {
    return this.native === null;
  }

  /** Counters of the listener (connections, requests, bytes spliced vs copied, ...). */
  stats(): FetchServerStats {
    if (!this.native) return { connections: 0, accepted: 0, refused: 0, lingering: 0, requests: 0, badRequests: 0, timeouts: 0, bytesSpliced: 0, bytesCopied: 0, parked: 0, readErrors: 0 };
    const s = this.native.stats();
    s.readErrors ??= 0; // an addon built before the counter
    s.lingering ??= 0;
    return s;
  }

  /** Read errors (stats().readErrors) at close, for the broker's total, which outlives the server. */
  private closedReadErrors = 0;
  private readErrorsWarned = 0;
  private readErrorWarnedAt = -Infinity;

  /** @internal Fetches that failed reading a segment file over this server's life (kept after close). */
  get readErrors(): number {
    return this.native ? this.stats().readErrors : this.closedReadErrors;
  }

  /**
   * @internal Warns of fetches that failed reading a segment file since the last
   * warning: the client got IO_ERROR and no more (the reply has no room for the file,
   * the errno), or, when the read failed after the reply's header went out, only a
   * closed connection, and retries. The broker
   * calls this every second; a warning goes out at most every 10 s (a damaged file
   * fails every fetch of it), summing those in between, and at close.
   */
  warnReadErrors(atClose = false): void {
    const n = this.native;
    if (!n) return;
    const count = this.stats().readErrors;
    if (count <= this.readErrorsWarned) return;
    const now = performance.now();
    if (!atClose && now - this.readErrorWarnedAt < 10_000) return;
    const more = count - this.readErrorsWarned;
    this.readErrorsWarned = count;
    this.readErrorWarnedAt = now;
    const last = n.lastReadError ? ` (the last: ${n.lastReadError})` : '';
    process.emitWarning(
      `fetch plane on ${this.host}:${this.port}: ${more} ${more === 1 ? 'fetch' : 'fetches'} failed reading a segment file${last}; uringmq_fetch_read_errors_total counts them, said at most every 10 s`,
      'UringmqWarning',
    );
  }

  /** Closes the listener and every connection and joins the fetch thread. Idempotent. */
  close(): void {
    const n = this.native;
    if (!n) return;
    this.warnReadErrors(true);
    this.closedReadErrors = this.stats().readErrors;
    this.native = null;
    n.close();
    this.onClose();
  }
}
