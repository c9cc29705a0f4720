/**
 * Prometheus metrics of a broker, and of its gRPC server when there is one: a
 * prom-client registry whose values are read from the broker when scraped, so the
 * publish and delivery paths count nothing extra (rates come from the offsets:
 * `rate(uringmq_partition_end_offset[1m])` is the publish rate in records/s). The one
 * exception is the gRPC server's per-request counter and latency histogram: one
 * observation per unary call or PublishStream batch, none per record or delivery.
 * `MetricsServer` serves it on GET /metrics, with GET /healthz, over node:http.
 */
import * as fs from 'node:fs/promises';
import * as http from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Broker, LogLatency } from '../broker/broker';
import type { BrokerServer } from '../grpc/server';
import { UringmqError } from '../errors';

export interface MetricsOptions {
  /** The gRPC server in front of the broker: adds its open streams and per-request counts and latencies (only the latest registry made for a server gets the latter). */
  server?: BrokerServer;
  /** Node's own process metrics (heap, GC, event-loop delay, fds; default true). */
  processMetrics?: boolean;
}

/** Node's process metrics: one set per process (prom-client starts an event-loop monitor and a GC observer for them that never stop). */
let processRegistry: Registry | null = null;

/** A registry of `broker`'s metrics (one per broker: the names are the same for each). */
export function metricsRegistry(broker: Broker, opts: MetricsOptions = {}): Registry {
  const registry = new Registry();
  if (opts.processMetrics !== false && !processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry, prefix: 'uringmq_' });
  }
  const registers = [registry];
  // prom-client reads all metrics of a scrape at once, each after its collect(): they
  // all wait on one pass over the broker (each scrape describes every topic once). The
  // gauges are reset first, so a deleted topic or a gone group leaves no series behind.
  let pass: Promise<void> | null = null;
  const collect = (): Promise<void> =>
    (pass ??= collectBroker().finally(() => {
      pass = null;
    }));
  const topics = new Gauge({ name: 'uringmq_topics', help: 'Topics; past maxTopics (uringmq_max_topics) a createTopic is refused', registers, collect });
  const groups = new Gauge({
    name: 'uringmq_groups',
    help: 'Consumer group states the broker keeps, one per group and topic with committed offsets; past maxGroups (uringmq_max_groups) a new one is refused',
    registers,
    collect,
  });
  // The caps beside their counts: an alert on the ratio needs no copy of the config.
  const maxTopics = new Gauge({ name: 'uringmq_max_topics', help: 'The most topics the broker holds (maxTopics)', registers, collect });
  const partitions = new Gauge({ name: 'uringmq_partitions', help: 'Partitions over all topics; past maxPartitions (uringmq_max_partitions) a createTopic is refused', registers, collect });
  const maxPartitions = new Gauge({ name: 'uringmq_max_partitions', help: 'The most partitions, over all topics, the broker holds (maxPartitions)', registers, collect });
  const tailCache = new Gauge({ name: 'uringmq_tail_cache_bytes', help: "Bytes the partitions' tail caches hold together (recent batches kept in memory for consumers that keep up); at most uringmq_tail_cache_max_bytes", registers, collect });
  const tailCacheMax = new Gauge({ name: 'uringmq_tail_cache_max_bytes', help: "The most the partitions' tail caches hold together (tailCacheTotalBytes)", registers, collect });
  const maxGroups = new Gauge({ name: 'uringmq_max_groups', help: 'The most consumer group states the broker keeps (maxGroups)', registers, collect });
  const partition = ['topic', 'partition'] as const;
  const startOffset = new Gauge({ name: 'uringmq_partition_start_offset', help: 'Oldest offset still in the log (retention moves it)', labelNames: partition, registers, collect });
  const endOffset = new Gauge({ name: 'uringmq_partition_end_offset', help: 'Offset the next record gets: its rate is the publish rate', labelNames: partition, registers, collect });
  const bytes = new Gauge({ name: 'uringmq_partition_bytes', help: 'Bytes of the partition on disk', labelNames: partition, registers, collect });
  const segments = new Gauge({ name: 'uringmq_partition_segments', help: 'Segment files of the partition', labelNames: partition, registers, collect });
  const group = ['group', 'topic', 'partition'] as const;
  const committed = new Gauge({ name: 'uringmq_group_committed_offset', help: 'Offset below which the group acked everything (where it started, before any ack)', labelNames: group, registers, collect });
  const lag = new Gauge({ name: 'uringmq_group_lag', help: 'Messages of the partition the group has not acked (for a group with no member in memory: end offset minus committed)', labelNames: group, registers, collect });
  const members = new Gauge({ name: 'uringmq_group_members', help: 'Members of the group on the topic', labelNames: ['group', 'topic'], registers, collect });
  const unacked = new Gauge({ name: 'uringmq_group_unacked', help: 'Messages delivered to the members and not yet acked', labelNames: ['group', 'topic'], registers, collect });
  const stalled = new Gauge({ name: 'uringmq_group_stalled_members', help: 'Members that let an ack deadline pass without acking (their partitions went to others)', labelNames: ['group', 'topic'], registers, collect });
  // Without a reading (a closed broker, a directory gone) these have no value: a
  // prom-client Gauge without labels shows 0 once reset (0 bytes free: a false alert)
  // and kept the last reading of a closed broker.
  let diskFreeBytes: number | null = null;
  let diskMinBytes: number | null = null;
  readingGauge(registry, 'uringmq_disk_free_bytes', "Free space on the data directory's file system (as an unprivileged process may use it); appends stop at uringmq_disk_min_free_bytes", collect, () => diskFreeBytes);
  readingGauge(registry, 'uringmq_disk_min_free_bytes', 'Free space appends leave on that file system (minFreeBytes): below it publishes get RESOURCE_EXHAUSTED', collect, () => diskMinBytes);
  const queued = new Gauge({ name: 'uringmq_write_queue_bytes', help: 'Bytes accepted for writing and not yet written (with durability sync: not yet durable)', registers, collect });
  coreCounter(
    registers,
    'uringmq_sync_passes_total',
    'Sync passes of the I/O thread (fdatasync of every file with unsynced writes; none in sync mode, where each write is durable)',
    () => (broker.closed ? null : broker.syncPasses),
  );
  coreCounter(registers, 'uringmq_dead_letter_moves_total', 'Messages moved to a dead-letter topic (past maxDeliveries) since the broker opened', () =>
    broker.closed ? null : broker.groups.deadLetterMoves,
  );
  coreCounter(
    registers,
    'uringmq_dead_letter_failures_total',
    'Moves to a dead-letter topic that failed (each message stays with its group, holding its committed offset, and is retried with backoff); the warning names the cause',
    () => (broker.closed ? null : broker.groups.deadLetterFailures),
  );
  coreCounter(
    registers,
    'uringmq_dead_letter_skipped_total',
    'Dead-letter moves that found their message no longer in the log (removed by retention, or a gap in the log): skipped, as the group skips any message retention removed (not retried, and no other move paused); the warning names them',
    () => (broker.closed ? null : broker.groups.deadLetterSkips),
  );
  coreCounter(
    registers,
    'uringmq_log_zero_ahead_bytes_total',
    "Bytes of zeros the log's I/O thread wrote over preallocated space ahead of the data, between write cycles (zeroAheadBytes: a durable write there needs no metadata write)",
    () => (broker.closed ? null : broker.zeroAheadBytesWritten),
  );
  coreCounter(
    registers,
    'uringmq_log_cache_flushes_total',
    "Write cycles whose writes all landed on blocks already written (zeros ahead) and were made durable by one flush of the disk's cache, not by O_DSYNC writes (which on ext4 also write the file's inode when its timestamps moved)",
    () => (broker.closed ? null : broker.cacheFlushes),
  );
  coreCounter(
    registers,
    'uringmq_retention_remove_failures_total',
    'Attempts to remove a retired segment file (or sync its directory after a removal) that failed; each is retried a second later, so it grows while a partition\'s retention is stuck (its files, and the retired ones after them, stay on disk); a warning names the file and the error once',
    () => (broker.closed ? null : broker.retentionRemoveFailures),
  );
  coreCounter(
    registers,
    'uringmq_fetch_read_errors_total',
    'Fetch-plane fetches that failed reading a segment file (an I/O error, a file shorter than the log says): answered IO_ERROR when the file could not be opened or its batch headers read, else cut off after their header went out (the connection is closed and the client retries); a warning (at most every 10 s) names the partition, offset, file and error',
    () => (broker.closed ? null : broker.fetchReadErrors),
  );
  // The core counts write cycles and appends in its own buckets (no per-cycle call into
  // JavaScript): exposed as histograms as they are, cumulative per `le` as Prometheus wants.
  coreHistogram(
    registry,
    'uringmq_log_write_seconds',
    "Duration of the log's write cycles at the disk (with durability sync each is written and flushed before its appends are acknowledged: a slow one holds every message in it and queued behind it)",
    () => (broker.closed ? null : broker.logWriteLatency),
  );
  coreHistogram(
    registry,
    'uringmq_log_append_seconds',
    "Time each append spent in the log core, from the I/O thread's queue to its completion (waiting behind the cycle before it, its own cycle's writes and sync): long here but not in uringmq_log_write_seconds means a busy or descheduled I/O thread, not the disk",
    () => (broker.closed ? null : broker.logAppendLatency),
  );
  const info = new Gauge({ name: 'uringmq_info', help: 'The broker: I/O backend and durability mode (value 1)', labelNames: ['io_backend', 'durability'], registers, collect });
  const up = new Gauge({ name: 'uringmq_up', help: '1 while the broker is open', registers, collect });
  const streams = opts.server ? new Gauge({ name: 'uringmq_grpc_open_streams', help: 'PublishStream and Subscribe calls open on the gRPC server', registers, collect }) : null;
  if (opts.server) {
    const server = opts.server;
    new Gauge({ name: 'uringmq_grpc_open_connections', help: 'Client connections open on the gRPC server', registers, collect() { this.set(server.openConnections); } });
    new Gauge({
      name: 'uringmq_grpc_partial_message_bytes',
      help: "Bytes held by requests received in part (a unary call's until the client ends it); past maxPartialMessageBytes a call gets RESOURCE_EXHAUSTED",
      registers,
      collect() {
        this.set(server.partialMessageBytes);
      },
    });
    new Gauge({
      name: 'uringmq_grpc_partial_message_bytes_connection_max',
      help: 'Of those, the most one client connection holds; past maxPartialMessageBytesPerConnection its calls get RESOURCE_EXHAUSTED',
      registers,
      collect() {
        this.set(server.largestConnectionPartialMessageBytes);
      },
    });
    let seenRefused = 0;
    new Counter({
      name: 'uringmq_grpc_connections_refused_total',
      help: 'Connections the gRPC server closed on arrival because maxConnections were open',
      registers,
      collect() {
        if (server.refusedConnections > seenRefused) this.inc(server.refusedConnections - seenRefused);
        seenRefused = server.refusedConnections;
      },
    });
    // Counted as they happen (a scrape cannot read them back): a handful of methods
    // times the uringmq error codes bounds the series.
    const requests = new Counter({ name: 'uringmq_grpc_requests_total', help: 'gRPC requests answered: unary calls, and each batch of a PublishStream; code is OK or the uringmq error code', labelNames: ['method', 'code'], registers });
    const duration = new Histogram({
      name: 'uringmq_grpc_request_duration_seconds',
      help: 'Time from a request (unary call or PublishStream batch) arriving to its answer; with durability sync a publish is answered once durable',
      labelNames: ['method'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    const ended = new Counter({ name: 'uringmq_grpc_streams_ended_total', help: 'PublishStream and Subscribe calls ended (or refused at their start); code is OK, the uringmq error code, or CANCELLED when the client went first', labelNames: ['method', 'code'], registers });
    opts.server.callObserver = {
      request(method, code, seconds) {
        requests.inc({ method, code });
        duration.observe({ method }, seconds);
      },
      streamEnded(method, code) {
        ended.inc({ method, code });
      },
    };
  }

  const perTopic = [startOffset, endOffset, bytes, segments, committed, lag, members, unacked, stalled];
  const collectBroker = async (): Promise<void> => {
    for (const g of perTopic) g.reset();
    up.set(broker.closed ? 0 : 1);
    info.reset();
    if (broker.closed) {
      diskFreeBytes = diskMinBytes = null;
      topics.set(0);
      partitions.set(0);
      tailCache.set(0);
      groups.set(0);
      queued.set(0);
      streams?.set(0);
      return;
    }
    const d = broker.durability;
    info.set({ io_backend: broker.ioBackend, durability: typeof d === 'string' ? d : `interval_${d.intervalMs}ms` }, 1);
    queued.set(broker.queuedBytes);
    groups.set(broker.storedGroups.size);
    maxTopics.set(broker.maxTopics);
    partitions.set(broker.partitionCount);
    maxPartitions.set(broker.maxPartitions);
    tailCacheMax.set(broker.tailCacheTotalBytes);
    maxGroups.set(broker.maxGroups);
    if (streams) streams.set(opts.server!.openStreams);
    diskMinBytes = broker.minFreeBytes;
    try {
      const st = await fs.statfs(broker.dir);
      diskFreeBytes = st.bavail * st.bsize;
    } catch {
      diskFreeBytes = null; // the directory is gone (a test's temp dir after close): no value, not a stale one
    }
    // Every topic, its groups in memory and the tail caches' total read in one turn, each
    // partition's info once; then the groups not in memory from their files.
    let described: ReturnType<Broker['describeTopics']>;
    try {
      described = broker.describeTopics();
    } catch (e) {
      if (!(e instanceof UringmqError && e.code === 'BROKER_CLOSED')) throw e;
      up.set(0); // closed since the check above
      tailCache.set(0);
      return;
    }
    topics.set(described.topics.length);
    tailCache.set(described.tailCachedBytes);
    // Each group directory listed once for all topics: describeTopic alone lists every
    // group's files for each topic (topics × groups reads a scrape).
    const savedGroupIndex = await broker.groups.savedGroupIndex();
    for (const d of described.topics) {
      const name = d.name;
      const t = await broker.addSavedGroups(d, savedGroupIndex);
      for (const p of t.partitions) {
        const l = { topic: name, partition: String(p.partition) };
        startOffset.set(l, p.startOffset);
        endOffset.set(l, p.endOffset);
        bytes.set(l, p.bytes);
        segments.set(l, p.segments);
      }
      // Groups whose consumers are gone are listed too (from their offsets files): their
      // lag still grows, and an alert on it must not go quiet when they leave.
      for (const g of t.groups) {
        const gl = { group: g.group, topic: name };
        members.set(gl, g.members.length);
        unacked.set(gl, g.members.reduce((n, m) => n + m.unacked, 0));
        stalled.set(gl, g.members.filter((m) => m.stalled).length);
        g.committed.forEach((c, i) => {
          if (c < 0) return; // never committed there: no position to measure from
          committed.set({ ...gl, partition: String(i) }, c);
          lag.set({ ...gl, partition: String(i) }, g.lag[i]!);
        });
      }
    }
  };
  return processRegistry && opts.processMetrics !== false ? Registry.merge([processRegistry, registry]) : registry;
}

export interface MetricsServerOptions {
  host?: string;
  /** 0: any free port (default 9464). */
  port?: number;
  /** @internal A connection with nothing read from it or written to it for this long is closed (default 30 s; tests shorten it). */
  idleTimeoutMs?: number;
}

/** GET /metrics and /healthz on their own port; owned by the main thread. */
export class MetricsServer {
  private constructor(
    private readonly http: http.Server,
    readonly port: number,
  ) {}

  static async start(broker: Broker, registry: Registry, opts: MetricsServerOptions = {}): Promise<MetricsServer> {
    const host = opts.host ?? '127.0.0.1';
    // Node's listen() takes '' (or any falsy host) as "every interface": a metrics
    // host read from an unset variable exposed /metrics beyond the loopback.
    if (typeof host !== 'string' || host.length === 0) throw new UringmqError('INVALID_ARGUMENT', 'host must be a non-empty string');
    const port = opts.port ?? 9464;
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UringmqError('INVALID_ARGUMENT', `metrics port must be an integer between 0 and 65535, got ${JSON.stringify(port)}`);
    const idleTimeoutMs = opts.idleTimeoutMs ?? 30_000;
    if (!Number.isInteger(idleTimeoutMs) || idleTimeoutMs < 1) throw new UringmqError('INVALID_ARGUMENT', `idleTimeoutMs must be a positive integer, got ${JSON.stringify(idleTimeoutMs)}`);
    // A scrape describes every topic on the main thread: scrapes within a second (two
    // Prometheus servers, a dashboard) share one.
    // Timed on the monotonic clock: with the wall clock a step back (NTP, a resumed VM)
    // served the old text until the clock caught up, hours of a frozen scrape.
    let last: { at: number; text: Promise<string> } | null = null;
    const scrape = (): Promise<string> => {
      const now = performance.now();
      if (!last || now - last.at >= 1000) {
        const text = registry.metrics();
        const entry = { at: now, text };
        last = entry;
        text.catch(() => {
          if (last === entry) last = null; // a failed scrape is not served again
        });
      }
      return last.text;
    };
    // Timeouts are checked every connectionsCheckingInterval (30 s by default): a few
    // clients sending half a request would otherwise hold every slot that long.
    const srv = http.createServer({ connectionsCheckingInterval: 1000, headersTimeout: 5000, requestTimeout: 5000 }, (req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { allow: 'GET, HEAD' }).end();
        return;
      }
      if (path === '/healthz') {
        const ok = !broker.closed;
        res.writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' }).end(ok ? 'ok\n' : 'closed\n');
        return;
      }
      if (path !== '/metrics') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics or /healthz\n');
        return;
      }
      scrape().then(
        (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(req.method === 'HEAD' ? undefined : text),
        (e: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${e.message}\n`),
      );
    });
    // A scrape is small: a client that holds a connection open must not keep stop()
    // waiting, and a flood of scrapers must not take the broker's main thread.
    srv.maxConnections = 32;
    srv.keepAliveTimeout = 5000;
    // The timeouts above cover a request arriving and the wait for the next; none covers
    // a reply the client stops reading (Node's socket timeout is off by default): such a
    // scraper held its connection, one of the 32, and its unsent reply until stop(). With
    // no 'timeout' listener Node destroys a socket idle this long; a reply read, however
    // slowly, keeps it alive.
    srv.timeout = idleTimeoutMs;
    await new Promise<void>((resolve, reject) => {
      srv.once('error', reject);
      srv.listen(port, host, () => {
        srv.off('error', reject);
        resolve();
      });
    });
    return new MetricsServer(srv, (srv.address() as { port: number }).port);
  }

  /** Stops listening and closes every connection. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.http.close(() => resolve());
      this.http.closeAllConnections();
    });
  }
}

/**
 * A counter the core keeps (a running total read on each scrape): increased by what it
 * gained since the last scrape; `read` returns null once the broker is closed, and the
 * counter then stays where it was.
 */
function coreCounter(registers: Registry[], name: string, help: string, read: () => number | null): void {
  let seen = 0;
  new Counter({
    name,
    help,
    registers,
    collect() {
      const now = read() ?? seen;
      if (now > seen) this.inc(now - seen);
      seen = now;
    },
  });
}

/** A gauge without labels that has no value while `read` returns null (after the scrape's pass, `collect`). */
function readingGauge(registry: Registry, name: string, help: string, collect: () => Promise<void>, read: () => number | null): void {
  registry.registerMetric({
    name,
    help,
    async get() {
      await collect();
      const v = read();
      return { name, help, type: 'gauge', values: v === null ? [] : [{ value: v, labels: {} }], aggregator: 'sum' };
    },
    reset() {},
  } as unknown as Parameters<Registry['registerMetric']>[0]);
}

/** A histogram the broker's core keeps itself, read at each scrape (the last reading stays once the broker closes). */
function coreHistogram(registry: Registry, name: string, help: string, read: () => LogLatency | null): void {
  let last = read();
  registry.registerMetric({
    name,
    help,
    get() {
      last = read() ?? last;
      const values: Array<{ value: number; labels: Record<string, string | number>; metricName: string }> = [];
      if (!last) return { name, help, type: 'histogram', values, aggregator: 'sum' };
      let cumulative = 0;
      last.le.forEach((le, i) => {
        cumulative += last!.counts[i]!;
        values.push({ value: cumulative, labels: { le }, metricName: `${name}_bucket` });
      });
      values.push({ value: last.count, labels: { le: '+Inf' }, metricName: `${name}_bucket` });
      values.push({ value: last.sumSeconds, labels: {}, metricName: `${name}_sum` });
      values.push({ value: last.count, labels: {}, metricName: `${name}_count` });
      return { name, help, type: 'histogram', values, aggregator: 'sum' };
    },
    reset() {},
  } as unknown as Parameters<Registry['registerMetric']>[0]);
}
