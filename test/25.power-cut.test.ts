import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { connect } from '../src/client';
import { Broker, probeIoUring } from '../src';
import { simulatePowerCut, type PowerCutResult } from '../src/native';
import { expectCode, sleep, tmpDir } from './helpers';
import { spawnServer, type ServerProcess } from './fixtures/server_process';
import { valueFor } from './fixtures/crash_child';
import { runCrashChild, type CrashAck as Ack } from './fixtures/crash_run';

// A SIGKILL loses nothing the disk took: the kernel finishes every write the process
// issued. These tests run the broker with the power-cut hook (native/log/power_cut.h),
// which journals each data write's old bytes until a flush covers it; after the kill,
// simulatePowerCut puts back what a disk with a volatile write cache could have lost
// (with a seed, a random part of it: the disk persisted the rest early, or tore a write).
// An append acknowledged before the flush that makes it durable is then lost, and the
// checks below find it.

const backends = (['io_uring', 'thread'] as const).filter((b) => b === 'thread' || probeIoUring().available);

/**
 * The log of every partition of `topic` read whole: contiguous offsets from 0, every
 * batch CRC-checked by the core, and nothing readable at or past the end.
 */
async function readLog(broker: Broker, topic: string): Promise<string[][]> {
  const out: string[][] = [];
  for (const p of (await broker.describeTopic(topic)).partitions) {
    assert.equal(p.startOffset, 0);
    const values: string[] = [];
    for (let off = 0; off < p.endOffset; ) {
      const got = await broker.read(topic, p.partition, off, { maxBytes: 1 << 20 });
      assert.ok(got.length > 0, `partition ${p.partition}: nothing at ${off} below the end ${p.endOffset}`);
      for (const m of got) {
        assert.equal(m.offset, off++);
        values.push(m.value.toString());
      }
    }
    assert.deepEqual(await broker.read(topic, p.partition, p.endOffset, { maxBytes: 1 << 20 }), [], `partition ${p.partition}: records past the end`);
    out[p.partition] = values;
  }
  return out;
}

describe('Power cut (a disk cache lost: the power-cut hook, SIGKILL, simulatePowerCut)', function () {
  this.timeout(600_000);

  for (const backend of backends) {
    it(`${backend}: every acknowledged record survives, in order and intact, across 12 power cuts`, async () => {
      const dir = tmpDir();
      const journal = path.join(tmpDir(), 'journal');
      const all: Ack[] = [];
      let lost = 0;
      let torn = 0;
      for (let round = 0; round < 12; round++) {
        // Even rounds: killed by the hook right after a batch it holds, with all of the
        // batch's writes lost, or (odd rounds' seeds) part of their sectors.
        const killAfter = round % 2 === 0 ? 1 + Math.floor(Math.random() * 300) : 0;
        // Killed by the hook (killAfter > 0), or by us a moment after its first ack.
        const env = { ...process.env, URINGMQ_IO_BACKEND: backend, URINGMQ_TEST_POWER_CUT: journal, URINGMQ_TEST_POWER_CUT_KILL_AFTER: String(killAfter) };
        const acks = await runCrashChild(dir, round, killAfter === 0 ? 100 + Math.floor(Math.random() * 900) : null, env);
        const seed = round % 4 < 2 ? 0 : 1 + Math.floor(Math.random() * 1e9);
        const r: PowerCutResult = simulatePowerCut(journal, seed);
        const what = `round ${round} (kill after ${killAfter || 'a timer'}, seed ${seed}, ${JSON.stringify(r)})`;
        if (killAfter > 0) assert.ok(r.lostWrites > 0, `${what}: the hook killed with nothing held`);
        lost += r.lostWrites;
        torn += r.sectorsKept > 0 && r.sectorsUndone > 0 ? 1 : 0;
        all.push(...acks);
        const broker = await Broker.open({ dir });
        try {
          const log = await readLog(broker, 'crash');
          for (const v of log.flat()) assert.match(v, /^r\d+w\d+s\d+#\d+\|[a-z]+$/, `${what}: a malformed record`);
          for (const a of all)
            for (let i = 0; i < a.count; i++)
              assert.equal(log[a.partition]![a.base + i], valueFor(a.tag, i), `${what}: acked ${a.tag}[${i}] at ${a.partition}/${a.base + i}`);
        } finally {
          await broker.close();
        }
      }
      assert.ok(all.length > 100, `only ${all.length} acks`);
      assert.ok(lost > 0 && torn > 0, `the power cuts lost ${lost} writes and tore ${torn} rounds' writes`);
    });
  }

  it('the hook refuses what it cannot model: durability none (nothing would empty its journal), a bad seed, no journal', async () => {
    const dir = tmpDir();
    await expectCode(Broker.open({ dir, durability: 'none', testPowerCut: path.join(dir, 'journal') }), 'INVALID_ARGUMENT');
    await expectCode(() => simulatePowerCut(path.join(dir, 'journal'), -1), 'INVALID_ARGUMENT');
    await expectCode(() => simulatePowerCut(path.join(dir, 'no-such-journal')), 'IO_ERROR');
    // The refused open left the directory unlocked.
    await (await Broker.open({ dir })).close();
  });

  for (const backend of backends) {
    it(`${backend}, gRPC server: every acknowledged publish survives 8 power cuts, once each`, async () => {
      const dir = tmpDir();
      const journal = path.join(tmpDir(), 'journal');
      const acked: Array<{ key: string; value: string }> = [];
      let n = 0;
      let lost = 0;
      const procs: ServerProcess[] = [];
      try {
        for (let round = 0; round < 8; round++) {
          const killAfter = round % 2 === 0 ? 1 + Math.floor(Math.random() * 200) : 0;
          const srv = await spawnServer(dir, 0, [], { env: { URINGMQ_IO_BACKEND: backend, URINGMQ_TEST_POWER_CUT: journal, URINGMQ_TEST_POWER_CUT_KILL_AFTER: String(killAfter) } });
          procs.push(srv);
          const client = await connect(srv.address);
          try {
            if (round === 0) await client.createTopic('load', { partitions: 3, segmentBytes: 64 * 1024 });
            // Idempotence off: a send whose answer the kill took is not retried (the
            // producer's retry of it after the restart is test/12's subject).
            const producer = client.producer({ maxInFlight: 32, deliveryTimeoutMs: 10_000, idempotent: false });
            let dead = false;
            void srv.exited.then(() => (dead = true));
            const inflight = new Set<Promise<void>>();
            const until = Date.now() + 60_000;
            const killAt = Date.now() + 300 + Math.random() * 900;
            while (!dead && Date.now() < until) {
              if (killAfter === 0 && Date.now() >= killAt) srv.child.kill('SIGKILL');
              const value = `g${round}v${n++}`;
              const p: Promise<void> = producer.send('load', { key: `k${n % 97}`, value }).then(
                (r) => void acked.push({ key: `${r.partition}/${r.offset}`, value }),
                () => undefined,
              );
              inflight.add(p);
              void p.finally(() => inflight.delete(p));
              // A turn of the event loop each time, or the kill's exit event never came.
              if (inflight.size >= 200) await Promise.race([...inflight, sleep(50)]);
              else await new Promise((r) => setImmediate(r));
            }
            assert.ok(dead, `round ${round}: the server did not die`);
            await srv.exited;
          } finally {
            // The server is gone: what it never answered is given up at once.
            await client.close({ timeoutMs: 200 }).catch(() => undefined);
          }
          const r = simulatePowerCut(journal, round % 2 === 0 ? 0 : 1 + round);
          if (killAfter > 0) assert.ok(r.lostWrites > 0, `round ${round}: the hook killed with nothing held: ${JSON.stringify(r)}`);
          lost += r.lostWrites;
        }
        assert.ok(acked.length > 100, `only ${acked.length} publishes acked`);
        assert.ok(lost > 0);
        const srv = await spawnServer(dir);
        procs.push(srv);
        const client = await connect(srv.address);
        try {
          const log = new Map<string, string>();
          const d = await client.describeTopic('load');
          for (const p of d.partitions) {
            assert.equal(p.startOffset, 0);
            for (let off = 0; off < p.endOffset; ) {
              const msgs = await client.fetch('load', p.partition, off, { maxBytes: 1 << 20 });
              assert.ok(msgs.length > 0, `partition ${p.partition}: nothing at ${off} below the end ${p.endOffset}`);
              for (const m of msgs) {
                assert.equal(m.offset, off++);
                log.set(`${p.partition}/${m.offset}`, m.value.toString());
              }
            }
          }
          for (const a of acked) assert.equal(log.get(a.key), a.value, `acked ${a.value} at ${a.key}`);
          const values = [...log.values()];
          assert.equal(new Set(values).size, values.length, 'a value in the log twice');
        } finally {
          await client.close();
        }
      } finally {
        for (const p of procs) p.child.kill('SIGKILL');
        await Promise.all(procs.map((p) => p.exited));
      }
    });
  }
});
