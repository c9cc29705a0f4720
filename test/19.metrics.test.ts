/**
 * Prometheus metrics (src/metrics): the registry read from a broker, the HTTP server
 * for /metrics and /healthz, and `uringmq serve` exposing both on its own port.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import { Gauge, Registry } from 'prom-client';
import type { Broker } from '../src';
import type { NativeEngine, NativePartition } from '../src/native';
import * as grpc from '@grpc/grpc-js';
import { MetricsServer, metricsRegistry } from '../src/metrics';
import { connect } from '../src/client';
import { pb } from '../src/grpc/proto';
import { brokerService } from '../src/grpc/service';
import { expectCode, freePort, holdPort, openBroker, sleep, startServer, tmpDir, within } from './helpers';
import { spawnServer, type ServerProcess } from './fixtures/server_process';

function get(port: number, path: string, method = 'GET'): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), body }));
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error('timed out')));
    req.end();
  });
}

/** The value of one series in Prometheus text, or undefined when absent. */
function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('metrics', function () {
  this.timeout(60_000);
  let broker: Broker | null = null;
  afterEach(async () => {
    await broker?.close();
    broker = null;
  });

  it('the registry reads offsets, bytes, group lag and commits from the broker; deleted topics and a closed broker leave no stale series', async () => {
    broker = await openBroker({ durability: 'none' });
    const registry = metricsRegistry(broker, { processMetrics: false });
    await broker.createTopic('t', { partitions: 2 });
    const p = broker.producer();
    await p.sendBatch('t', Array.from({ length: 5 }, (_, i) => ({ value: `m${i}` })), { partition: 0 });
    await p.send('t', { value: 'other', partition: 1 });
    const c = broker.consumer({ topic: 't', group: 'g', from: 'earliest' });
    let seen = 0;
    for await (const m of c) {
      if (m.partition === 0 && m.offset < 3) m.ack();
      if (++seen === 6) break;
    }
    let text = '';
    const until = Date.now() + 5000;
    do {
      text = await registry.metrics();
      if (value(text, 'uringmq_group_committed_offset{group="g",topic="t",partition="0"}') === 3) break;
      await sleep(20);
    } while (Date.now() < until);
    assert.equal(value(text, 'uringmq_partition_end_offset{topic="t",partition="0"}'), 5);
    assert.equal(value(text, 'uringmq_partition_end_offset{topic="t",partition="1"}'), 1);
    assert.equal(value(text, 'uringmq_partition_start_offset{topic="t",partition="0"}'), 0);
    assert.ok(value(text, 'uringmq_partition_bytes{topic="t",partition="0"}')! > 0);
    assert.equal(value(text, 'uringmq_group_committed_offset{group="g",topic="t",partition="0"}'), 3);
    assert.equal(value(text, 'uringmq_group_lag{group="g",topic="t",partition="0"}'), 2);
    assert.equal(value(text, 'uringmq_group_lag{group="g",topic="t",partition="1"}'), 1);
    assert.equal(value(text, 'uringmq_topics'), 1);
    assert.equal(value(text, 'uringmq_groups'), 1, 'one group with committed offsets on one topic');
    assert.equal(value(text, 'uringmq_max_topics'), broker.maxTopics);
    assert.equal(value(text, 'uringmq_partitions'), 2);
    assert.equal(value(text, 'uringmq_max_partitions'), broker.maxPartitions);
    assert.equal(value(text, 'uringmq_tail_cache_max_bytes'), 256 << 20);
    assert.equal(value(text, 'uringmq_tail_cache_bytes'), broker.tailCachedBytes);
    assert.ok(broker.tailCachedBytes > 0, 'the records written are in the tail cache');
    assert.equal(value(text, 'uringmq_max_groups'), broker.maxGroups);
    assert.equal(value(text, 'uringmq_up'), 1);
    assert.ok(value(text, 'uringmq_disk_free_bytes')! > 0);
    assert.equal(value(text, 'uringmq_disk_min_free_bytes'), broker.minFreeBytes);
    assert.equal(broker.minFreeBytes, 64 << 20);
    assert.equal(value(text, `uringmq_info{io_backend="${broker.ioBackend}",durability="none"}`), 1);
    assert.equal(value(text, 'uringmq_sync_passes_total'), 0, 'durability none makes no sync pass here');
    assert.equal(value(text, 'uringmq_log_zero_ahead_bytes_total'), 0, 'durability none zeroes nothing ahead');
    assert.equal(value(text, 'uringmq_retention_remove_failures_total'), 0);
    assert.equal(value(text, 'uringmq_fetch_read_errors_total'), 0);
    // The write cycles' and the appends' durations, histograms from the core's own
    // buckets: cumulative, +Inf equal to the count, one more cycle and one more append
    // for an append awaited alone, which spent at least its cycle's write in the core.
    const hist = (t: string, name: string) => {
      const buckets = [...t.matchAll(new RegExp(`^${name}_bucket\\{le="([^"]+)"\\} (\\d+)$`, 'gm'))].map((m) => [m[1]!, Number(m[2])] as const);
      return { buckets, count: value(t, `${name}_count`)!, sum: value(t, `${name}_sum`)! };
    };
    const w1 = hist(text, 'uringmq_log_write_seconds');
    const a1 = hist(text, 'uringmq_log_append_seconds');
    for (const h of [w1, a1]) {
      assert.equal(h.buckets.length, 22);
      assert.equal(h.buckets[0]![0], '0.000016');
      assert.equal(h.buckets[21]![0], '+Inf');
      for (let i = 1; i < h.buckets.length; i++) assert.ok(h.buckets[i]![1] >= h.buckets[i - 1]![1], 'cumulative buckets');
      assert.equal(h.buckets[21]![1], h.count);
      assert.ok(h.count >= 1 && h.sum > 0, `count ${h.count}, ${h.sum} s`);
    }
    assert.ok(a1.count >= w1.count, `${a1.count} appends in ${w1.count} cycles`);
    await broker.producer({ sync: true }).send('t', { value: 'synced', partition: 1 });
    const after = await registry.metrics();
    assert.equal(value(after, 'uringmq_sync_passes_total'), 1);
    const w2 = hist(after, 'uringmq_log_write_seconds');
    const a2 = hist(after, 'uringmq_log_append_seconds');
    assert.equal(w2.count, w1.count + 1);
    assert.ok(w2.sum > w1.sum);
    assert.equal(a2.count, a1.count + 1);
    assert.ok(a2.sum - a1.sum >= w2.sum - w1.sum - 1e-9, `the append (${a2.sum - a1.sum} s) took at least its write (${w2.sum - w1.sum} s)`);
    assert.equal(broker.logWriteLatency.count, w2.count);
    assert.equal(broker.logAppendLatency.count, a2.count);
    // The group's consumer is gone and the group leaves memory: its lag still shows,
    // from its state file (end offset minus committed), so an alert on it keeps firing.
    broker.groups.idleGroupMs = 50;
    const gone = Date.now() + 5000;
    while (broker.groups.describe('t').length > 0 && Date.now() < gone) await sleep(20);
    assert.deepEqual(broker.groups.describe('t'), []);
    // describeTopic lists it from its file: no members, its committed offsets and lag.
    assert.deepEqual((await broker.describeTopic('t')).groups, [{ group: 'g', generation: 0, members: [], committed: [3, 0], lag: [2, 2] }]);
    text = await registry.metrics();
    assert.equal(value(text, 'uringmq_group_lag{group="g",topic="t",partition="0"}'), 2);
    assert.equal(value(text, 'uringmq_group_committed_offset{group="g",topic="t",partition="0"}'), 3);
    assert.equal(value(text, 'uringmq_group_members{group="g",topic="t"}'), 0);
    await broker.deleteTopic('t');
    text = await registry.metrics();
    assert.ok(!text.includes('topic="t"'), 'a deleted topic kept its series');
    assert.equal(value(text, 'uringmq_topics'), 0);
    assert.equal(value(text, 'uringmq_groups'), 0, "a deleted topic's groups are no longer kept");
    assert.equal(value(text, 'uringmq_partitions'), 0);
    await broker.close();
    text = await registry.metrics();
    assert.equal(value(text, 'uringmq_up'), 0);
    // Free space is not read from a closed broker: no value, not the last one read.
    assert.equal(value(text, 'uringmq_disk_free_bytes'), undefined, 'a closed broker kept its free-space reading');
    assert.equal(value(text, 'uringmq_disk_min_free_bytes'), undefined);
  });

  for (const directStreams of [true, false]) {
    it(`counts gRPC requests by method and code, their latency, and how streams end (${directStreams ? 'streams on node:http2' : 'all calls through grpc-js'})`, async () => {
      const s = await startServer({ directStreams, brokerOptions: { maxRecordBytes: 1024 } });
      try {
        const registry = metricsRegistry(s.broker, { server: s.server, processMetrics: false });
        await s.client.createTopic('t', { partitions: 1 });
        await expectCode(s.client.createTopic('t', { partitions: 1 }), 'TOPIC_EXISTS');
        await expectCode(s.client.describeTopic('missing'), 'TOPIC_NOT_FOUND');
        const p = s.client.producer({ lingerMs: 0 });
        await p.sendBatch('t', [{ value: 'a' }, { value: 'b' }]);
        await p.sendBatch('t', [{ value: 'c' }]);
        // A batch the server refuses (its record limit is below the client's).
        await expectCode(p.send('t', { value: Buffer.alloc(2048) }), 'RECORD_TOO_LARGE');
        await s.client.createTopic('gone', { partitions: 1 });
        await s.client.deleteTopic('gone');
        await p.close();
        const c = s.client.consumer({ topic: 't', group: 'g', from: 'earliest' });
        let n = 0;
        for await (const m of c) {
          m.ack();
          if (++n === 3) break;
        }
        let text = '';
        const until = Date.now() + 5000;
        do {
          text = await registry.metrics();
          const subs = (value(text, 'uringmq_grpc_streams_ended_total{method="Subscribe",code="OK"}') ?? 0) + (value(text, 'uringmq_grpc_streams_ended_total{method="Subscribe",code="CANCELLED"}') ?? 0);
          if (subs === 1 && value(text, 'uringmq_grpc_streams_ended_total{method="PublishStream",code="OK"}') === 1) break;
          await sleep(20);
        } while (Date.now() < until);
        assert.equal(value(text, 'uringmq_grpc_requests_total{method="CreateTopic",code="OK"}'), 2);
        assert.equal(value(text, 'uringmq_grpc_requests_total{method="CreateTopic",code="TOPIC_EXISTS"}'), 1);
        assert.equal(value(text, 'uringmq_grpc_requests_total{method="DescribeTopic",code="TOPIC_NOT_FOUND"}'), 1);
        assert.equal(value(text, 'uringmq_grpc_requests_total{method="DeleteTopic",code="OK"}'), 1);
        assert.equal(value(text, 'uringmq_grpc_requests_total{method="PublishStream",code="OK"}'), 2, text);
        assert.equal(value(text, 'uringmq_grpc_requests_total{method="PublishStream",code="RECORD_TOO_LARGE"}'), 1, text);
        assert.equal(value(text, 'uringmq_grpc_request_duration_seconds_count{method="PublishStream"}'), 3);
        assert.equal(value(text, 'uringmq_grpc_request_duration_seconds_bucket{le="+Inf",method="PublishStream"}'), 3);
        assert.ok(value(text, 'uringmq_grpc_request_duration_seconds_sum{method="PublishStream"}')! > 0);
        assert.equal(value(text, 'uringmq_grpc_streams_ended_total{method="PublishStream",code="OK"}'), 1, text);
        const subs0 = { ok: value(text, 'uringmq_grpc_streams_ended_total{method="Subscribe",code="OK"}') ?? 0, cancelled: value(text, 'uringmq_grpc_streams_ended_total{method="Subscribe",code="CANCELLED"}') ?? 0 };
        assert.equal(subs0.ok + subs0.cancelled, 1, text);
        // A stream that fails counts with its code; one the client cancels as CANCELLED.
        const raw = new grpc.Client(s.address, grpc.credentials.createInsecure());
        try {
          const d = brokerService.subscribe!;
          const bad = raw.makeBidiStreamRequest(d.path, d.requestSerialize, d.responseDeserialize);
          bad.write({ credit: 5 }); // before `subscribe`
          const err = await new Promise<grpc.ServiceError>((resolve) => bad.on('error', resolve));
          assert.equal(err.code, grpc.status.FAILED_PRECONDITION);
          const cancelled = raw.makeBidiStreamRequest(d.path, d.requestSerialize, d.responseDeserialize);
          cancelled.on('error', () => undefined);
          cancelled.write({ subscribe: { topic: 't', group: 'h', from: pb.StartFrom.EARLIEST } });
          await new Promise((resolve) => cancelled.once('data', resolve)); // joined
          cancelled.cancel();
          const until2 = Date.now() + 5000;
          do {
            text = await registry.metrics();
            if (value(text, 'uringmq_grpc_streams_ended_total{method="Subscribe",code="CANCELLED"}') === subs0.cancelled + 1) break;
            await sleep(20);
          } while (Date.now() < until2);
          assert.equal(value(text, 'uringmq_grpc_streams_ended_total{method="Subscribe",code="FAILED_PRECONDITION"}'), 1, text);
          assert.equal(value(text, 'uringmq_grpc_streams_ended_total{method="Subscribe",code="CANCELLED"}'), subs0.cancelled + 1, text);
        } finally {
          raw.close();
        }
      } finally {
        await s.stop();
      }
    });
  }

  it('MetricsServer serves /metrics and /healthz, refuses other paths and methods, and closes', async () => {
    broker = await openBroker();
    const registry = metricsRegistry(broker);
    const srv = await MetricsServer.start(broker, registry, { port: 0 });
    try {
      const m = await get(srv.port, '/metrics');
      assert.equal(m.status, 200);
      assert.match(m.type, /^text\/plain; version=0\.0\.4/);
      assert.equal(value(m.body, 'uringmq_up'), 1);
      assert.match(m.body, /^uringmq_nodejs_heap_size_total_bytes /m, 'process metrics missing');
      assert.deepEqual(await get(srv.port, '/healthz').then((r) => [r.status, r.body]), [200, 'ok\n']);
      assert.equal((await get(srv.port, '/nope')).status, 404);
      assert.equal((await get(srv.port, '/metrics', 'POST')).status, 405);
      await broker.close();
      broker = null;
      assert.equal((await get(srv.port, '/healthz')).status, 503);
    } finally {
      await srv.close();
    }
    await assert.rejects(get(srv.port, '/metrics'), /ECONNREFUSED/);
    await assert.rejects(MetricsServer.start({} as Broker, registry, { port: 70_000 }), (e: { code?: string }) => e.code === 'INVALID_ARGUMENT');
  });

  it('MetricsServer.start refuses an empty or non-string host instead of listening on every interface', async () => {
    broker = await openBroker();
    const registry = metricsRegistry(broker);
    for (const host of ['', 0, false] as unknown as string[]) {
      let bound = '';
      const err: { code?: string; message?: string } | null = await MetricsServer.start(broker, registry, { host, port: 0 }).then(
        async (srv) => {
          bound = JSON.stringify((srv as unknown as { http: http.Server }).http.address());
          await srv.close();
          return null;
        },
        (e: { code?: string; message?: string }) => e,
      );
      assert.equal(err?.code, 'INVALID_ARGUMENT', `host ${JSON.stringify(host)}: listening on ${bound}`);
      assert.match(err.message ?? '', /host must be a non-empty string/);
    }
  });

  it('a scrape is shared for a second only, on the monotonic clock: a wall clock stepped back does not freeze /metrics', async () => {
    broker = await openBroker();
    await broker.createTopic('t');
    const srv = await MetricsServer.start(broker, metricsRegistry(broker), { port: 0 });
    const realNow = Date.now;
    try {
      const end = async () => value((await get(srv.port, '/metrics')).body, 'uringmq_partition_end_offset{topic="t",partition="0"}');
      assert.equal(await end(), 0, 'end offset before any publish');
      const stepped = realNow() - 3_600_000;
      Date.now = () => stepped; // an hour back, and not moving on
      const producer = broker.producer({ lingerMs: 0 });
      await producer.send('t', { value: Buffer.from('x'), partition: 0 });
      await sleep(1100);
      assert.equal(await end(), 1, 'the scrape after a second shows the publish');
      await producer.flush();
    } finally {
      Date.now = realNow;
      await srv.close();
    }
  });

  it('a scraper that stops reading is cut off once its reply makes no progress, not held open until stop()', async () => {
    broker = await openBroker();
    // A reply far larger than the socket buffers of both ends: a client that reads
    // nothing leaves the server with most of it unsent.
    const registry = new Registry();
    new Gauge({ name: 'big', help: 'x'.repeat(32 << 20), registers: [registry] });
    const srv = await MetricsServer.start(broker, registry, { port: 0, idleTimeoutMs: 2000 });
    const httpServer = (srv as unknown as { http: http.Server }).http;
    const open = () => new Promise<number>((resolve, reject) => httpServer.getConnections((e, n) => (e ? reject(e) : resolve(n))));
    const sock = net.connect(srv.port, '127.0.0.1');
    try {
      await new Promise((resolve) => sock.once('connect', resolve));
      sock.pause();
      sock.write('GET /metrics HTTP/1.1\r\nhost: x\r\n\r\n');
      const until = Date.now() + 20_000;
      while ((await open()) > 0 && Date.now() < until) await sleep(100);
      assert.equal(await open(), 0, 'a scraper that reads nothing held its connection (and its unsent reply)');
      // One that reads gets it all: progress keeps the connection.
      const m = await get(srv.port, '/metrics');
      assert.equal(m.status, 200);
      assert.ok(m.body.length > 32 << 20);
      await assert.rejects(MetricsServer.start(broker, registry, { port: 0, idleTimeoutMs: 0 }), (e: { code?: string }) => e.code === 'INVALID_ARGUMENT');
    } finally {
      sock.destroy();
      await srv.close();
    }
  });

  it('uringmq serve exposes metrics on its own port (any free one with --port 0), with its open streams; --no-metrics turns it off', async () => {
    const dir = tmpDir();
    let srv: ServerProcess | null = await spawnServer(dir, 0);
    try {
      const port = Number(/"metricsPort":(\d+)/.exec(srv.logs())?.[1]);
      assert.ok(port > 0, srv.logs());
      const m = await get(port, '/metrics');
      assert.equal(m.status, 200);
      assert.equal(value(m.body, 'uringmq_grpc_open_streams'), 0);
      assert.equal((await get(port, '/healthz')).status, 200);
      srv.child.kill('SIGTERM');
      assert.equal((await srv.exited).code, 0);
      srv = await spawnServer(dir, 0, ['--no-metrics']);
      assert.ok(!/metricsPort/.test(srv.logs()), srv.logs());
      srv.child.kill('SIGTERM');
      await srv.exited;
      // The default port taken by another program: a warning, and the broker serves.
      // (The default is moved to a port held here: 9464 itself may be taken, and freed,
      // by another socket at any moment.)
      const metricsHold = await holdPort();
      try {
        srv = await spawnServer(dir, await freePort(), [], { defaultMetricsPort: true, env: { URINGMQ_TEST_DEFAULT_METRICS_PORT: String(metricsHold.port) } });
        assert.ok(!/"metricsPort"/.test(srv.logs()), srv.logs());
        const taken = new RegExp(`cannot serve metrics on 127\\.0\\.0\\.1:${metricsHold.port}`);
        const until = Date.now() + 5000;
        while (!taken.test(srv.logs()) && Date.now() < until) await sleep(20);
        assert.match(srv.logs(), taken);
      } finally {
        metricsHold.release();
      }
      srv.child.kill('SIGTERM');
      await srv.exited;
      // The same for the fetch plane's default port (a second broker on this host):
      // a warning, and gRPC serves without it. A port asked for is kept (exit 2).
      const fetchHold = await holdPort();
      try {
        const free = await freePort();
        srv = await spawnServer(dir, free, ['--no-metrics'], { defaultFetchPort: true, env: { URINGMQ_TEST_DEFAULT_FETCH_PORT: String(fetchHold.port) } });
        assert.ok(!/"fetchPort"/.test(srv.logs()), srv.logs());
        const taken = new RegExp(`cannot start the fetch plane on 127\\.0\\.0\\.1:${fetchHold.port}.*serving without it`);
        const until = Date.now() + 5000;
        while (!taken.test(srv.logs()) && Date.now() < until) await sleep(20);
        assert.match(srv.logs(), taken);
        const client = await connect(srv.address);
        try {
          await client.createTopic('served');
        } finally {
          await client.close();
        }
        srv.child.kill('SIGTERM');
        assert.equal((await srv.exited).code, 0);
      } finally {
        fetchHold.release();
      }
      // A port asked for is kept: one held here, so no other socket can free it meanwhile.
      const asked = await holdPort();
      try {
        const started = spawnServer(dir, await freePort(), ['--no-metrics', '--fetch-port', String(asked.port)]);
        await assert.rejects(started.then((s) => (srv = s)), new RegExp(`cannot start the fetch plane on 127\\.0\\.0\\.1:${asked.port}`));
      } finally {
        asked.release();
      }
    } finally {
      if (srv && srv.child.exitCode === null) {
        srv.child.kill('SIGTERM');
        await srv.exited;
      }
    }
  });
});

describe('metrics: scrape cost', function () {
  this.timeout(120_000);
  let broker: Broker | null = null;
  afterEach(async () => {
    const d = broker?.dir;
    await broker?.close();
    broker = null;
    if (d) fs.rmSync(d, { recursive: true, force: true });
  });

  it("a scrape reads each idle group's file once, not every group's files once per topic", async () => {
    broker = await openBroker({ durability: 'none' });
    const T = 20, G = 5;
    for (let t = 0; t < T; t++) {
      await broker.createTopic(`t${t}`);
      await broker.producer().sendBatch(`t${t}`, [{ value: 'a' }, { value: 'b' }, { value: 'c' }]);
      for (let g = 0; g < G; g++) await broker.groups.commitOffset(`g${t}-${g}`, `t${t}`, 0, 1);
    }
    broker.groups.idleGroupMs = 10;
    const until = Date.now() + 10_000;
    while (broker.groups.describe('t0').length > 0 && Date.now() < until) await sleep(20);
    const registry = metricsRegistry(broker, { processMetrics: false });
    const groups = broker.groups;
    const orig = groups.committedOffsets.bind(groups);
    let reads = 0;
    groups.committedOffsets = (g: string, t: string) => {
      reads++;
      return orig(g, t);
    };
    const t0 = performance.now();
    const text = await registry.metrics();
    const ms = performance.now() - t0;
    const lag = text.split('\n').filter((l) => l.startsWith('uringmq_group_lag{'));
    assert.equal(lag.length, T * G);
    assert.ok(lag.every((l) => l.endsWith(' 2')), lag.join('\n'));
    assert.ok(text.includes('uringmq_group_committed_offset{group="g7-3",topic="t7",partition="0"} 1'));
    assert.ok(reads <= T * G, `${reads} group file reads for ${T * G} group files (${ms.toFixed(0)} ms): every group's files once per topic`);
    // describeTopic on its own still finds them
    assert.equal((await broker.describeTopic('t3')).groups.length, G);
  });

  it("a scrape reads each partition's info from the core once: the tail caches' total and a group's lag come from the offsets' reading", async () => {
    broker = await openBroker({ durability: 'none' });
    const T = 4, P = 5, N = T * P;
    const producer = broker.producer();
    for (let t = 0; t < T; t++) {
      await broker.createTopic(`t${t}`, { partitions: P });
      for (let p = 0; p < P; p++) await producer.send(`t${t}`, { value: `m${p}`, partition: p });
    }
    // A group in memory (no member, so no delivery loop reading offsets meanwhile): its
    // lag is described from the partitions' offsets.
    await broker.groups.commitOffset('g', 't0', 0, 1);
    assert.equal(broker.groups.describe('t0').length, 1);
    const registry = metricsRegistry(broker, { processMetrics: false });
    // The real core, its two per-partition readings counted.
    const engine = (broker as unknown as { engine: NativeEngine }).engine;
    const info = engine.info.bind(engine);
    const offsets = engine.offsets.bind(engine);
    let reads = 0;
    // Its methods are read-only on the prototype (N-API's default): defined on the instance.
    Object.defineProperty(engine, 'info', {
      configurable: true,
      value: (p: NativePartition) => {
        reads++;
        return info(p);
      },
    });
    Object.defineProperty(engine, 'offsets', {
      configurable: true,
      value: (p: NativePartition, out: Float64Array) => {
        reads++;
        offsets(p, out);
      },
    });
    const text = await registry.metrics();
    const scrapeReads = reads;
    assert.ok(scrapeReads <= N, `${scrapeReads} partition info reads in one scrape of ${N} written partitions`);
    const cached = broker.tailCachedBytes;
    assert.equal(text.split('\n').filter((l) => l.startsWith('uringmq_partition_end_offset{')).length, N);
    assert.equal(value(text, 'uringmq_partition_end_offset{topic="t3",partition="4"}'), 1);
    assert.ok(cached > 0, 'the records written are in the tail caches');
    assert.equal(value(text, 'uringmq_tail_cache_bytes'), cached);
    assert.equal(value(text, 'uringmq_group_committed_offset{group="g",topic="t0",partition="0"}'), 1);
    assert.equal(value(text, 'uringmq_group_lag{group="g",topic="t0",partition="0"}'), 0);
  });
});

describe('metrics: bounded under churn', function () {
  this.timeout(240_000);

  it('topics and groups created and deleted many times leave no series behind, and unknown gRPC paths make none', async () => {
    const s = await startServer({ brokerOptions: { durability: 'none' } });
    const raw = new grpc.Client(s.address, grpc.credentials.createInsecure());
    try {
      const registry = metricsRegistry(s.broker, { server: s.server, processMetrics: false });
      const series = (text: string) => text.split('\n').filter((l) => l.length > 0 && !l.startsWith('#'));
      const N = 200;
      let first: string[] = [];
      const p = s.client.producer({ lingerMs: 0 });
      // Each step is bounded on its own (it takes milliseconds): one that hangs fails
      // naming itself and its round, not at the test's timeout naming nothing.
      const step = <T>(i: number, what: string, x: Promise<T>) => within(30_000, `round ${i}: ${what}`, x);
      for (let i = 0; i < N; i++) {
        const topic = `churn-${i}`;
        await step(i, 'createTopic', s.client.createTopic(topic, { partitions: 2 }));
        await step(i, 'send', p.send(topic, { value: `m${i}`, partition: 0 }));
        const c = s.client.consumer({ topic, group: `group-${i}`, from: 'earliest' });
        const it = c[Symbol.asyncIterator]();
        const got = await step(i, "the consumer's first message", it.next());
        assert.equal(got.done, false);
        got.value.ack();
        await step(i, "the consumer's close (its iteration's return)", it.return!());
        await step(i, 'commitOffset of an idle group', s.broker.groups.commitOffset(`idle-${i}`, topic, 1, 0));
        // A path no service has: answered UNIMPLEMENTED, and a client must not be able
        // to mint a series per name it makes up.
        const err = await step(
          i,
          'a call to an unknown path',
          new Promise<grpc.ServiceError | null>((resolve) => raw.makeUnaryRequest(`/uringmq.v1.Broker/Made${i}`, (b: Buffer) => b, (b: Buffer) => b, Buffer.alloc(0), resolve)),
        );
        assert.equal(err?.code, grpc.status.UNIMPLEMENTED);
        const text = await step(i, 'a scrape', registry.metrics());
        assert.ok(text.includes(`uringmq_partition_end_offset{topic="${topic}",partition="0"} 1`), text);
        assert.ok(text.includes(`group="idle-${i}"`), text);
        if (i === 0) first = series(text);
        await step(i, 'deleteTopic', s.client.deleteTopic(topic));
      }
      await within(30_000, "the producer's close", p.close());
      const text = await within(30_000, 'the last scrape', registry.metrics());
      assert.ok(!/churn-|group-|idle-|Made/.test(text), text.split('\n').filter((l) => /churn-|group-|idle-|Made/.test(l)).slice(0, 10).join('\n'));
      // Only the topic's and groups' series went: fewer than after the first round.
      const now = series(text);
      assert.ok(now.length < first.length, `${now.length} series after ${N} topics came and went, ${first.length} with one`);
      assert.equal(value(text, 'uringmq_topics'), 0);
    } finally {
      raw.close();
      await within(30_000, 'the server and client stop', s.stop());
    }
  });
});
