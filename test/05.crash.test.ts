import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { Broker, type Message } from '../src';
import { take, tmpDir } from './helpers';
import { valueFor } from './fixtures/crash_child';
import { runCrashChild, type CrashAck as Ack } from './fixtures/crash_run';

describe('Crash safety (SIGKILL during sync appends)', function () {
  this.timeout(180_000);

  it('every acknowledged record survives, intact, across repeated kills', async () => {
    const dir = tmpDir();
    const all: Ack[] = [];
    const rounds = 5;
    for (let round = 0; round < rounds; round++) {
      const acks = await runCrashChild(dir, round, 150 + Math.floor(Math.random() * 900));
      assert.ok(acks.length > 0, `round ${round}: the child acked nothing`);
      all.push(...acks);
    }
    const broker = await Broker.open({ dir });
    try {
      const byPartition: Message[][] = [];
      const d = await broker.describeTopic('crash');
      for (const p of d.partitions) {
        const msgs: Message[] = [];
        for (let off = p.startOffset; off < p.endOffset; ) {
          const got = await broker.read('crash', p.partition, off, { maxBytes: 1 << 20 });
          assert.ok(got.length > 0);
          for (const m of got) {
            // contiguous offsets, every record well-formed (the core verified each CRC)
            assert.equal(m.offset, off++);
            assert.match(m.value.toString(), /^r\d+w\d+s\d+#\d+\|[a-z]+$/);
          }
          msgs.push(...got);
        }
        byPartition[p.partition] = msgs;
      }
      let checked = 0;
      for (const a of all) {
        const log = byPartition[a.partition]!;
        for (let i = 0; i < a.count; i++) {
          assert.equal(log[a.base + i]?.value.toString(), valueFor(a.tag, i), `acked ${a.tag}[${i}] at ${a.partition}/${a.base + i}`);
          checked++;
        }
      }
      assert.ok(checked > 100, `only ${checked} acked records checked`);
    } finally {
      await broker.close();
    }
  });

  it("a new group killed right after its first delivery: what it was delivered comes again ('latest' does not move it past them)", async () => {
    const dir = tmpDir();
    const r = spawnSync(process.execPath, ['--require', 'tsx/cjs', path.join(__dirname, 'fixtures', 'new_group_crash_child.ts'), dir], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.signal, 'SIGKILL', r.stderr);
    assert.match(r.stdout, /GOT 1/);
    const b = await Broker.open({ dir });
    try {
      const c = b.consumer({ topic: 't', group: 'g', from: 'latest' });
      const got = await take(c, 5, (m) => m.ack(), 5000).catch((e: Error) => e);
      await c.close();
      assert.ok(!(got instanceof Error), `delivered before the crash, never acked, not delivered again: ${String(got)}`);
      assert.deepEqual(got.map((m) => m.value.toString()), ['m0', 'm1', 'm2', 'm3', 'm4']);
    } finally {
      await b.close();
    }
  });
});
