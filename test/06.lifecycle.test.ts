import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as net from 'node:net';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { Broker, probeIoUring } from '../src';
import { createEngine } from '../src/native';
import { encodeBatch } from '../src/codec/record_batch';
import { expectCode, openBroker, tmpDir } from './helpers';

const gc = (globalThis as { gc?: () => void }).gc;

describe('Lifecycle: gc, worker threads, backends', () => {
  it('garbage collection while appends are pending loses nothing', async function () {
    if (!gc) this.skip();
    const dir = tmpDir();
    const b = await openBroker({ dir });
    await b.createTopic('t');
    const results: Array<Promise<{ offset: number }>> = [];
    // The only references to the batch buffers are inside the broker while in flight.
    for (let round = 0; round < 20; round++) {
      const p = b.producer();
      for (let i = 0; i < 500; i++) results.push(p.send('t', { value: Buffer.from(`r${round}-${i}-${'z'.repeat(100)}`) }));
      gc!();
      await new Promise((r) => setImmediate(r));
      gc!();
    }
    const rs = await Promise.all(results);
    assert.deepEqual(rs.map((r) => r.offset), Array.from({ length: 10_000 }, (_, i) => i));
    gc!();
    const msgs = await b.read('t', 0, 9_500, { maxBytes: 1 << 20 });
    assert.equal(msgs[0]!.value.toString(), `r19-0-${'z'.repeat(100)}`);
    await b.close();
  });

  it('a native engine closed with an append in flight and then collected still gets the completion (no use after free: the ASan run checks)', async function () {
    if (!gc) this.skip();
    const dir = tmpDir();
    let delivered = 0;
    let engine: ReturnType<typeof createEngine> | null = createEngine({
      backend: 'thread',
      durability: 'none',
      testIoDelayMs: 100,
      onComplete: () => void delivered++,
    });
    const p = await engine.openPartition(dir, 't/0', {});
    const batch = encodeBatch([{ value: Buffer.from('hello') }]);
    assert.equal(engine.append(p, batch, 1, true), true);
    // close() from a poll-phase callback, the engine dropped and collected before the
    // next poll, where the completion the close queued is delivered.
    const srv = net.createServer((c) => c.end('x'));
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
    const sock = net.connect((srv.address() as net.AddressInfo).port, '127.0.0.1');
    await new Promise<void>((resolve) =>
      sock.on('data', () => {
        engine!.close();
        engine = null;
        process.nextTick(() => {
          gc!();
          gc!();
          resolve();
        });
      }),
    );
    await new Promise((r) => setTimeout(r, 300));
    gc!();
    sock.destroy();
    srv.close();
    assert.equal(delivered, 1);
    assert.equal(batch.length > 0, true); // held until here: its memory outlives the append
  });

  it("a native engine refuses another engine's partition (its I/O thread would write the log beside the owner's: use after free)", async () => {
    const dir = tmpDir();
    const completed: number[] = [];
    const onComplete = (ids: Float64Array) => void completed.push(...ids);
    const a = createEngine({ backend: 'thread', durability: 'none', onComplete });
    const b = createEngine({ backend: 'thread', durability: 'none', onComplete });
    try {
      const p = await a.openPartition(dir, 't/0', {});
      const batch = encodeBatch([{ value: Buffer.from('hello') }]);
      await expectCode(() => b.append(p, batch, 1, true), 'INVALID_ARGUMENT');
      await expectCode(() => b.info(p), 'INVALID_ARGUMENT');
      await expectCode(() => b.offsets(p, new Float64Array(2)), 'INVALID_ARGUMENT');
      await expectCode(() => b.read(p, 0, 1000), 'INVALID_ARGUMENT');
      await expectCode(() => b.readCached(p, 0, 1000), 'INVALID_ARGUMENT');
      await expectCode(() => b.takeProducerBatches(p), 'INVALID_ARGUMENT');
      await expectCode(() => b.closePartition(p), 'INVALID_ARGUMENT');
      // its own engine still takes it
      assert.equal(a.append(p, batch, 2, true), true);
      for (let i = 0; i < 100 && completed.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(completed, [2]);
      assert.equal(a.info(p).endOffset, 1);
      a.closePartition(p);
    } finally {
      a.close();
      b.close();
    }
  });

  it('the native engine refuses option values its casts would wrap or make undefined (2^32 + 5 ms, a negative size, NaN, 1e300), naming the option', async () => {
    const onComplete = () => undefined;
    for (const [k, v] of [['testIoDelayMs', 2 ** 32 + 5], ['maxBatchBytes', -1], ['maxBatchBytes', 2 ** 40], ['intervalMs', 1e300], ['groupCommitUs', NaN]] as const)
      await expectCode(() => createEngine({ backend: 'thread', durability: 'none', onComplete, [k]: v }), 'INVALID_ARGUMENT').then((e) => assert.match(e.message, new RegExp(k)));
    const e = createEngine({ backend: 'thread', durability: 'none', onComplete });
    try {
      for (const [k, v] of [['tailCacheBytes', -1], ['indexIntervalBytes', 2 ** 32 + 64], ['minFreeBytes', -5], ['retentionMs', -2], ['segmentBytes', 1e300]] as const)
        await expectCode(() => e.openPartition(tmpDir(), 't/0', { [k]: v }), 'INVALID_ARGUMENT').then((err) => assert.match(err.message, new RegExp(k)));
    } finally {
      e.close();
    }
  });

  it('append refuses an id that would not come back as given (negative, fractional, NaN, past 2^53)', async () => {
    const dir = tmpDir();
    const completed: number[] = [];
    const e = createEngine({ backend: 'thread', durability: 'none', onComplete: (ids) => void completed.push(...ids) });
    try {
      const p = await e.openPartition(dir, 't/0', {});
      const batch = encodeBatch([{ value: Buffer.from('hello') }]);
      for (const id of [-1, 1.5, NaN, Infinity, 2 ** 53, 1e300]) await expectCode(() => e.append(p, batch, id, true), 'INVALID_ARGUMENT');
      assert.equal(e.pending, 0);
      assert.equal(e.append(p, batch, 2 ** 53 - 1, true), true);
      assert.equal(e.append(p, batch, 0, true), true);
      for (let i = 0; i < 100 && completed.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(completed, [2 ** 53 - 1, 0]);
      e.closePartition(p);
    } finally {
      e.close();
    }
  });

  it('unclosed brokers do not crash gc or process exit', async function () {
    if (!gc) this.skip();
    // Run in a child so its exit code tells whether collection and teardown were clean.
    const code = `
      const { Broker } = require(${JSON.stringify(path.resolve(__dirname, '../src'))});
      (async () => {
        for (let i = 0; i < 5; i++) {
          const b = await Broker.open({ dir: ${JSON.stringify(tmpDir())} + '/' + i });
          await b.createTopic('t');
          await b.producer().send('t', { value: 'x' });
        }
        global.gc(); await new Promise((r) => setTimeout(r, 50)); global.gc();
        console.log('OK');
      })().catch((e) => { console.error(e); process.exit(3); });`;
    const r = spawnSync(process.execPath, ['--expose-gc', '--require', 'tsx/cjs', '-e', code], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'OK');
  });

  it('works from worker threads, one broker each, in parallel with the main thread', async () => {
    const main = await openBroker();
    await main.createTopic('m');
    const mainSends = Promise.all(Array.from({ length: 1000 }, (_, i) => main.producer().send('m', { value: String(i) })));
    const runWorker = (dir: string) =>
      new Promise<{ backend: string; last: number; read: number; sample: string; error?: string }>((resolve, reject) => {
        const w = new Worker(path.join(__dirname, 'fixtures', 'worker_broker.ts'), {
          workerData: { dir, n: 2000 },
          execArgv: ['--require', 'tsx/cjs'],
        });
        w.once('message', (m) => {
          resolve(m);
          void w.terminate();
        });
        w.once('error', reject);
      });
    const outs = await Promise.all([runWorker(tmpDir()), runWorker(tmpDir())]);
    for (const out of outs) {
      assert.equal(out.error, undefined, out.error);
      assert.equal(out.last, 1999);
      assert.equal(out.read, 2000);
      assert.equal(out.sample, 'worker-1999');
    }
    assert.equal((await mainSends).length, 1000);
    await main.close();
  });

  it('workers terminated mid-append and mid-read never take the process down', async () => {
    // Completions and errors that land while a worker's env is terminating used to
    // abort the whole process; run the race many times.
    for (let i = 0; i < 12; i++) {
      const dir = tmpDir();
      const w = new Worker(
        `const { Broker } = require(${JSON.stringify(path.resolve(__dirname, '../src'))});
         const { parentPort } = require('node:worker_threads');
         (async () => { const b = await Broker.open({ dir: ${JSON.stringify(dir)} }); await b.createTopic('t');
           const p = b.producer(); for (let i = 0; i < 100; i++) p.send('t', { value: 'x' }).catch(() => {});
           parentPort.postMessage('go');
           setInterval(() => { p.send('t', { value: 'y' }).catch(() => {}); b.read('t', 0, 0).catch(() => {}); }, 1); })();`,
        { eval: true, execArgv: ['--require', 'tsx/cjs'] },
      );
      await new Promise((r) => w.once('message', r));
      await new Promise((r) => setTimeout(r, Math.random() * 20));
      await w.terminate();
      // the lock went with the worker's env: the dir opens again, and its data is intact
      const b = await Broker.open({ dir });
      const end = (await b.describeTopic('t')).partitions[0]!.endOffset;
      if (end > 0) assert.ok((await b.read('t', 0, 0)).length > 0);
      await b.close();
    }
  });

  it('selects the backend by option and by URINGMQ_IO_BACKEND', async () => {
    const probe = probeIoUring();
    const t = await Broker.open({ dir: tmpDir(), ioBackend: 'thread' });
    assert.equal(t.ioBackend, 'thread');
    await t.createTopic('x');
    await t.producer().send('x', { value: 'v' });
    await t.close();
    if (probe.available) {
      const u = await Broker.open({ dir: tmpDir(), ioBackend: 'io_uring' });
      assert.equal(u.ioBackend, 'io_uring');
      await u.close();
      const a = await Broker.open({ dir: tmpDir(), ioBackend: 'auto' });
      assert.equal(a.ioBackend, 'io_uring');
      await a.close();
    } else {
      await expectCode(Broker.open({ dir: tmpDir(), ioBackend: 'io_uring' }), 'IO_URING_UNAVAILABLE');
    }
    const saved = process.env.URINGMQ_IO_BACKEND;
    try {
      process.env.URINGMQ_IO_BACKEND = 'thread';
      const e = await Broker.open({ dir: tmpDir() });
      assert.equal(e.ioBackend, 'thread');
      await e.close();
      process.env.URINGMQ_IO_BACKEND = 'bogus';
      await expectCode(Broker.open({ dir: tmpDir() }), 'INVALID_ARGUMENT');
    } finally {
      if (saved === undefined) delete process.env.URINGMQ_IO_BACKEND;
      else process.env.URINGMQ_IO_BACKEND = saved;
    }
  });
});
