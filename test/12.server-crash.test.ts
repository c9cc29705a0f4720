import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as http2 from 'node:http2';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { brokerService } from '../src/grpc/service';
import { readOffsetsFile } from '../src/broker/offsets_file';
import { connect, type Client, type ConnectionEvent } from '../src/client';
import { encodeBatch, sealBatch, type ConsumedMessage, type GroupConsumerApi } from '../src';
import { sleep, take, tmpDir } from './helpers';
import { spawnServer, type ServerProcess } from './fixtures/server_process';
import { spawn } from './fixtures/children';

describe('Server crash and shutdown', function () {
  this.timeout(240_000);
  const procs: ServerProcess[] = [];
  // Clients too: one left open by a failed assertion would keep reconnecting and mocha
  // (which does not force an exit) from ending.
  const clients: Client[] = [];
  const connected = async (address: string) => {
    const c = await connect(address);
    clients.push(c);
    return c;
  };
  afterEach(async () => {
    procs.splice(0).forEach((p) => p.child.kill('SIGKILL'));
    await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  });

  /** A server child on `dir` (reaped after the test) with topic 't', and a client. */
  async function serverWithTopic(dir: string): Promise<{ srv: ServerProcess; client: Client }> {
    const srv = await spawnServer(dir);
    procs.push(srv);
    const client = await connected(srv.address);
    await client.createTopic('t');
    return { srv, client };
  }

  async function readAllValues(client: Client, topic: string): Promise<Map<string, string>> {
    const out = new Map<string, string>(); // "p/offset" -> value
    const d = await client.describeTopic(topic);
    for (const p of d.partitions)
      for (let off = p.startOffset; off < p.endOffset; ) {
        const msgs = await client.fetch(topic, p.partition, off, { maxBytes: 1 << 20 });
        for (const m of msgs) out.set(`${p.partition}/${m.offset}`, m.value.toString());
        off = msgs[msgs.length - 1]!.offset + 1;
      }
    return out;
  }

  it('SIGKILL under publish load: every acked publish is there after restart, and the group gets every message', async () => {
    const dir = tmpDir();
    let srv = await spawnServer(dir);
    procs.push(srv);
    const port = srv.port;
    const client = await connected(srv.address);
    await client.createTopic('load', { partitions: 3 });
    const producer = client.producer({ maxInFlight: 32, deliveryTimeoutMs: 60_000 });
    const acked: Array<{ key: string; value: string }> = [];
    const failed: string[] = [];
    const seenByGroup = new Set<string>();
    const seenAfterRestartAt = new Set<string>(); // "p/offset" delivered by the restarted server
    let killed = false;
    let restarted = false;
    // Restarted for the consumer once its stream is back, which can be before this
    // process reads the new server's ready line (the server listens before it prints it):
    // what it delivered meanwhile was counted as the old server's.
    const onConnectionState = (ev: ConnectionEvent) => void (killed && ev.state === 'reconnected' && (restarted = true));
    const consumer = client.consumer({ topic: 'load', group: 'g', from: 'earliest', ackDeadlineMs: 2000, onConnectionState });
    let consumerEnded: string | null = null;
    let seenAfterRestart = 0;
    const consuming = (async () => {
      for await (const m of consumer) {
        seenByGroup.add(m.value.toString());
        if (restarted) {
          seenAfterRestart++;
          seenAfterRestartAt.add(`${m.partition}/${m.offset}`);
        }
        m.ack();
      }
      consumerEnded = 'ended';
    })().catch((e: Error) => {
      consumerEnded = `failed: ${e.message}`;
      return e;
    });

    let stop = false;
    let n = 0;
    const producing = (async () => {
      const inflight = new Set<Promise<void>>();
      while (!stop) {
        const value = `v${n++}`;
        const p: Promise<void> = producer.send('load', { key: `k${n % 97}`, value }).then(
          (r) => void acked.push({ key: `${r.partition}/${r.offset}`, value }),
          () => void failed.push(value),
        );
        inflight.add(p);
        void p.finally(() => inflight.delete(p));
        if (inflight.size >= 500) await Promise.race(inflight);
      }
      await Promise.all(inflight);
    })();

    const until = Date.now() + 60_000;
    while ((acked.length < 200 || seenByGroup.size < 100) && Date.now() < until) await sleep(20);
    // Kill only once the group's progress is on disk (its acks travel every 5 ms and
    // its offsets are flushed every 20 ms, but a loaded machine, an ASan build, can
    // take longer than a fixed pause), then at a random point of what follows.
    const offsPath = path.join(dir, 'groups', 'g', 'load.offs');
    while (!(await readOffsetsFile(offsPath).catch(() => null))?.committed.some((c) => c > 0) && Date.now() < until) await sleep(20);
    await sleep(Math.random() * 800);
    const ackedBeforeKill = acked.length;
    srv.child.kill('SIGKILL');
    await srv.exited;
    killed = true;
    // What the group had durably committed when the server died: everything from there
    // on must come again after the restart, acked before the kill or not.
    const state = await readOffsetsFile(offsPath);
    const committed = state?.committed ?? [0, 0, 0];
    const ackedAbove = (p: number, off: number) => !!state?.ranges.some((r) => r.partition === p && r.deliveries === 0 && r.from <= off && off < r.to);
    await sleep(300);
    srv = await spawnServer(dir, port); // same port: the client reconnects by itself
    procs.push(srv);
    restarted = true;
    await sleep(800);
    stop = true;
    await producing;
    assert.ok(ackedBeforeKill > 100, `only ${ackedBeforeKill} acked before the kill`);
    // The group acked hundreds of messages before the kill; its offsets are flushed
    // every 20 ms, so the crash left some of that progress on disk.
    assert.ok(committed.some((c) => c > 0), `committed offsets at the kill: [${committed.join(',')}]`);

    // every acked publish is readable at its offset with its value
    const log = await readAllValues(client, 'load');
    for (const a of acked) assert.equal(log.get(a.key), a.value, `acked ${a.value} at ${a.key}`);
    // ...and once only: the producer (idempotent by default) resent what had no ack
    // when the server died, and the restarted server knew the batches that had
    // reached the disk from its log.
    const copies = new Map<string, number>();
    for (const v of log.values()) copies.set(v, (copies.get(v) ?? 0) + 1);
    const twice = [...copies].filter(([, n]) => n > 1).map(([v]) => v);
    assert.deepEqual(twice.slice(0, 5), [], `${twice.length} values are in the log more than once`);

    // every message in the log reaches the group (at least once)
    const deadline = Date.now() + 60_000;
    const logValues = new Set(log.values());
    while ([...logValues].some((v) => !seenByGroup.has(v)) && Date.now() < deadline) await sleep(100);
    const missing = [...logValues].filter((v) => !seenByGroup.has(v));
    assert.deepEqual(
      missing.slice(0, 5),
      [],
      `${missing.length} of ${logValues.size} messages never reached the group (consumer: ${consumerEnded ?? 'running'}, ` +
        `${seenByGroup.size} distinct seen, ${seenAfterRestart} deliveries after the restart, assignment [${consumer.assignment.join(',')}])`,
    );
    // ...and the restarted server redelivered everything past the durable committed
    // offsets that its file did not say was acked: a consumer that resumed past
    // messages it had not acked fails here.
    const owed = [...log.keys()].filter((k) => {
      const [p, off] = k.split('/').map(Number) as [number, number];
      return off >= committed[p]! && !ackedAbove(p, off);
    });
    while (owed.some((k) => !seenAfterRestartAt.has(k)) && Date.now() < deadline) await sleep(100);
    const notRedelivered = owed.filter((k) => !seenAfterRestartAt.has(k));
    assert.deepEqual(notRedelivered.slice(0, 5), [], `${notRedelivered.length} of ${owed.length} messages past the committed offsets [${committed.join(',')}] and not acked were not delivered again after the restart`);
    await consumer.close();
    await consuming;
    await client.close();
  });

  it("SIGKILL, restart: a retry of a batch written before the kill is answered with its original offsets, not written again", async () => {
    const dir = tmpDir();
    let { srv, client } = await serverWithTopic(dir);
    const publish = (address: string, batch: Buffer) => {
      const raw = new grpc.Client(address, grpc.credentials.createInsecure());
      const d = brokerService.publish!;
      return new Promise<{ base_offset: unknown; duplicate: boolean }>((resolve, reject) =>
        raw.makeUnaryRequest(d.path, d.requestSerialize, d.responseDeserialize, { topic: 't', partition: 0, batch }, (e, res) => {
          raw.close();
          if (e) reject(e);
          else resolve(res as { base_offset: unknown; duplicate: boolean });
        }),
      );
    };
    const pid = 987_654_321;
    const batches = [0, 2, 4].map((seq) => sealBatch(encodeBatch([{ value: `s${seq}` }, { value: `s${seq + 1}` }], { producerId: pid, baseSequence: seq })));
    const first: number[] = [];
    for (const b of batches) first.push(Number((await publish(srv.address, b)).base_offset));
    await client.producer({ idempotent: false }).send('t', { value: 'plain', partition: 0 });
    await client.close();
    srv.child.kill('SIGKILL');
    await srv.exited;
    srv = await spawnServer(dir);
    procs.push(srv);
    client = await connected(srv.address);
    for (let i = batches.length - 1; i >= 0; i--) {
      const r = await publish(srv.address, batches[i]!);
      assert.deepEqual([r.duplicate, Number(r.base_offset)], [true, first[i]], `retry of batch ${i}`);
    }
    const next = await publish(srv.address, sealBatch(encodeBatch([{ value: 's6' }], { producerId: pid, baseSequence: 6 })));
    assert.deepEqual([next.duplicate, Number(next.base_offset)], [false, 7]);
    assert.equal((await client.describeTopic('t')).partitions[0]!.endOffset, 8);
    await client.close();
    // With the scan off (the flag reaches the broker), the table starts empty: the
    // same retry is written again.
    srv.child.kill('SIGKILL');
    await srv.exited;
    srv = await spawnServer(dir, 0, ['--producer-state-scan-bytes', '0']);
    procs.push(srv);
    const again = await publish(srv.address, batches[2]!);
    assert.deepEqual([again.duplicate, Number(again.base_offset)], [false, 8]);
  });

  it('SIGKILL, restart: the group neither repeats what was acked nor forgets how often the rest was delivered', async () => {
    const dir = tmpDir();
    let { srv, client } = await serverWithTopic(dir);
    await client.producer().sendBatch('t', [{ value: 'slow' }, { value: 'poison' }, { value: 'done' }]);
    const opts = { topic: 't', group: 'g', from: 'earliest' as const, maxDeliveries: 2 };
    /** The first n messages of a consumer as [value, deliveryCount, redelivered]. */
    const receive = async (c: GroupConsumerApi, n: number, onMsg: (m: ConsumedMessage) => void) =>
      (await take(c, n, onMsg, 10_000)).map((m) => [m.value.toString(), m.deliveryCount, m.redelivered]);
    const before = await receive(client.consumer(opts), 4, (m) => {
      const v = m.value.toString();
      if (v === 'done') m.ack();
      else if (v === 'poison' && m.deliveryCount === 1) m.nack();
      // 'slow' and the poison's second delivery stay unacked
    });
    assert.deepEqual(before, [['slow', 1, false], ['poison', 1, false], ['done', 1, false], ['poison', 2, true]]);
    // Kill once the group's state is on disk: all three delivered, 'done' acked, the
    // poison delivered twice (the ack travels on a 5 ms timer, the file is written every
    // 20 ms: an ASan server on a loaded machine can take longer than a fixed pause).
    const offsPath = path.join(dir, 'groups', 'g', 't.offs');
    const written = (s: Awaited<ReturnType<typeof readOffsetsFile>>) =>
      !!s && s.next[0] === 3 && s.ranges.some((r) => r.from <= 1 && r.to > 1 && r.deliveries === 2) && s.ranges.some((r) => r.from <= 2 && r.to > 2 && r.deliveries === 0);
    const stateBy = Date.now() + 20_000;
    while (!written(await readOffsetsFile(offsPath).catch(() => null)) && Date.now() < stateBy) await sleep(20);
    assert.ok(written(await readOffsetsFile(offsPath)), "the group's state reached its file");
    srv.child.kill('SIGKILL');
    await srv.exited;
    await client.close(); // after the kill: the server never saw the member leave
    srv = await spawnServer(dir);
    procs.push(srv);
    client = await connected(srv.address);
    await client.producer().send('t', { value: 'after' });
    const after = await receive(client.consumer(opts), 2, (m) => m.ack());
    // (The poison message shares a read with 'slow': its count is checked all the same.)
    assert.deepEqual(after, [['slow', 2, true], ['after', 1, false]], "'done' came again, the poison message a third time, or a count started over");
    const until = Date.now() + 10_000; // the move to the dead-letter topic runs on its own
    while (!(await client.listTopics()).includes('t.dlq') && Date.now() < until) await sleep(50);
    const dlq = await client.fetch('t.dlq', 0, 0, { maxWaitMs: 5000 });
    assert.deepEqual(
      dlq.map((m) => [m.value.toString(), m.headers['x-uringmq-delivery-count']?.toString(), m.headers['x-uringmq-reason']?.toString()]),
      [['poison', '2', 'delivered 2 times without an ack']],
    );
  });

  it('SIGTERM answers long-polling Fetches at once instead of waiting out their max_wait_ms', async () => {
    const { srv, client } = await serverWithTopic(tmpDir());
    const t0 = Date.now();
    const polled = client.fetch('t', 0, 0, { maxWaitMs: 30_000 }).then(
      (m) => ({ n: m.length, ms: Date.now() - t0 }),
      (e: { code: string }) => ({ n: -1, ms: Date.now() - t0, code: e.code }),
    );
    // A call made after the Fetch, on the same connection: once it is answered, the
    // server has the Fetch too (a fixed pause could end before a slow server had it,
    // and a SIGTERM before it came failed it, UNAVAILABLE, which is not the case here).
    await client.describeTopic('t');
    await sleep(50);
    srv.child.kill('SIGTERM');
    const { code } = await srv.exited;
    assert.equal(code, 0, srv.logs());
    const r = await polled;
    assert.deepEqual({ n: r.n }, { n: 0 }, JSON.stringify(r)); // answered, empty: not failed at the grace timeout
    assert.ok(r.ms < 5000, `the long-poll was answered after ${r.ms} ms`);
    await client.close();
  });

  it('a second signal during a graceful shutdown exits at once, with code 1', async () => {
    const { srv, client } = await serverWithTopic(tmpDir());
    // A unary call the server cannot finish holds the graceful shutdown (up to its
    // 10 s grace): a Publish whose request never ends. HTTP/2 lets the body wait.
    const session = http2.connect(`http://${srv.address}`);
    const stuck = session.request({ ':method': 'POST', ':path': '/uringmq.v1.Broker/Publish', 'content-type': 'application/grpc', te: 'trailers' });
    stuck.on('error', () => undefined);
    stuck.write(Buffer.from([0, 0, 0, 0, 100])); // announces 100 bytes, sends none
    // The server handles a connection's frames in order: once a PING sent after the
    // request is answered, the call is open there (a fixed pause could be too short).
    if (session.connecting) await new Promise<void>((resolve) => session.once('connect', () => resolve())); // a PING before that is cancelled
    await new Promise<void>((resolve, reject) => session.ping((e) => (e ? reject(e) : resolve())));
    srv.child.kill('SIGTERM');
    await sleep(500);
    assert.equal(srv.child.exitCode, null, 'still shutting down gracefully');
    // Meanwhile it takes no new calls: a new client's call fails with UNAVAILABLE.
    const late = new grpc.Client(srv.address, grpc.credentials.createInsecure());
    const d = brokerService.listTopics!;
    const lateCode = await new Promise<grpc.status>((resolve) =>
      late.makeUnaryRequest(d.path, d.requestSerialize, d.responseDeserialize, {}, { deadline: Date.now() + 3000 }, (e) => resolve(e ? e.code : grpc.status.OK)),
    );
    late.close();
    assert.equal(lateCode, grpc.status.UNAVAILABLE);
    assert.equal(srv.child.exitCode, null, 'still shutting down gracefully');
    const t0 = Date.now();
    srv.child.kill('SIGINT');
    const { code } = await srv.exited;
    assert.equal(code, 1);
    assert.ok(Date.now() - t0 < 3000, `exited ${Date.now() - t0} ms after the second signal`);
    assert.match(srv.logs(), /second signal/);
    session.destroy();
    await client.close();
  });

  it('one signal delivered twice (to the process group, and again by a parent that forwards it: `npm start`) is one graceful shutdown, not a forced exit', async () => {
    const dir = tmpDir();
    const { srv, client } = await serverWithTopic(dir);
    await client.producer({ lingerMs: 0 }).send('t', { value: 'before' });
    // A call the server cannot finish holds the graceful shutdown while the copy
    // arrives (as in the test above); it goes once the copy has been taken.
    const session = http2.connect(`http://${srv.address}`);
    session.on('error', () => undefined);
    const stuck = session.request({ ':method': 'POST', ':path': '/uringmq.v1.Broker/Publish', 'content-type': 'application/grpc', te: 'trailers' });
    stuck.on('error', () => undefined);
    stuck.write(Buffer.from([0, 0, 0, 0, 100]));
    if (session.connecting) await new Promise<void>((resolve) => session.once('connect', () => resolve()));
    await new Promise<void>((resolve, reject) => session.ping((e) => (e ? reject(e) : resolve())));
    // Ctrl-C on `npm start` where /bin/sh is bash: one SIGINT from the terminal, one from npm.
    srv.child.kill('SIGINT');
    await sleep(20);
    srv.child.kill('SIGINT');
    await sleep(500);
    assert.equal(srv.child.exitCode, null, `exited on the copy: ${srv.logs()}`);
    session.destroy();
    const { code } = await srv.exited;
    assert.equal(code, 0, srv.logs());
    assert.doesNotMatch(srv.logs(), /second signal/);
    const state = JSON.parse(fs.readFileSync(path.join(dir, 'state.json'), 'utf8')) as { clean: boolean };
    assert.equal(state.clean, true);
    await client.close();
  });

  it('SIGTERM to `npm start` (docker stop, a process manager) stops the server cleanly, also where /bin/sh is dash', async function () {
    const root = path.join(__dirname, '..');
    // npm start runs the compiled CLI; dash is where a script's `sh -c` does not exec
    // its last command, so npm's forwarded SIGTERM ended the shell and orphaned the server.
    if (!fs.existsSync(path.join(root, 'dist/src/cli/main.js'))) this.skip();
    const shell = fs.existsSync('/bin/dash') ? '/bin/dash' : '/bin/sh';
    const dir = path.join(tmpDir(), 'data');
    const npm = spawn('npm', ['start', '--silent'], {
      cwd: root,
      detached: true, // its own process group: an orphaned server is found and killed below
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, URINGMQ_DIR: dir, URINGMQ_PORT: '0', URINGMQ_LOG_LEVEL: 'warn', npm_config_script_shell: shell },
    });
    const pgid = npm.pid!;
    try {
      let out = '';
      npm.stderr!.on('data', (d: Buffer) => (out += d.toString()));
      const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`npm start did not listen: ${out}`)), 60_000);
        npm.stdout!.on('data', (d: Buffer) => {
          out += d.toString();
          if (/"listening"/.test(out)) (clearTimeout(timer), resolve());
        });
        void exited.then((code) => (clearTimeout(timer), reject(new Error(`npm start exited (${code}): ${out}`))));
      });
      npm.kill('SIGTERM');
      await exited;
      // The server is gone with npm, after its clean close (a bounded wait: it may lag npm's exit by a little).
      const alive = () => {
        try {
          process.kill(-pgid, 0);
          return true;
        } catch {
          return false;
        }
      };
      for (let i = 0; i < 100 && alive(); i++) await sleep(100);
      assert.equal(alive(), false, `the server outlived npm start: ${out}`);
      const state = JSON.parse(fs.readFileSync(path.join(dir, 'state.json'), 'utf8')) as { clean: boolean };
      assert.equal(state.clean, true);
    } finally {
      try {
        process.kill(-pgid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const)
    it(`${signal} finishes in-flight publishes, syncs and exits 0: nothing acked is lost`, async () => {
      const dir = tmpDir();
      const { srv, client } = await serverWithTopic(dir);
      const producer = client.producer({ deliveryTimeoutMs: 3000 });
      const acked: Array<{ offset: number; value: string }> = [];
      let failed = 0;
      const sends = Array.from({ length: 20_000 }, (_, i) =>
        producer.send('t', { value: `m${i}` }).then(
          (r) => void acked.push({ offset: r.offset, value: `m${i}` }),
          () => void failed++, // sent after the server stopped reading: never written
        ),
      );
      while (acked.length < 100) await sleep(5);
      srv.child.kill(signal);
      const { code } = await srv.exited;
      assert.equal(code, 0, srv.logs());
      await Promise.all(sends);
      await client.close();

      const again = await spawnServer(dir);
      procs.push(again);
      const c2 = await connected(again.address);
      const end = (await c2.describeTopic('t')).partitions[0]!.endOffset;
      // Exactly the acked records: every publish the server took before it stopped
      // reading was written and its ack sent before the exit. (A server that exited at
      // once would leave records written but never acked, or acked ones missing.)
      assert.equal(end, acked.length, `${end} records in the log, ${acked.length} acked, ${failed} sends failed`);
      assert.equal(acked.length + failed, 20_000);
      const values = new Map<number, string>();
      for (let off = 0; off < end; ) {
        const msgs = await c2.fetch('t', 0, off, { maxBytes: 1 << 20 });
        for (const m of msgs) values.set(m.offset, m.value.toString());
        off = msgs[msgs.length - 1]!.offset + 1;
      }
      for (const a of acked) assert.equal(values.get(a.offset), a.value);
      await c2.close();
    });
});
