import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Broker } from '../src';
import { connect } from '../src/client';
import { BrokerServer } from '../src/grpc/server';
import { expectCode, faultNode, hasStrace, openBrokerWithWarnings, sleep, tmpDir, waitFor } from './helpers';

/**
 * A full disk, for real: a small ext4 file system on a loop device (root, mkfs.ext4 and
 * loop devices needed; CI has them, elsewhere the tests are skipped and say why).
 */
function mountSmallExt4(mib: number, mkfsOptions: string[] = [], mountOptions: string[] = []): { dir: string; unmount(): void } | string {
  if (process.getuid?.() !== 0) return 'needs root to mount a loop device';
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'uringmq-full-'));
  const image = path.join(base, 'fs.img');
  const dir = path.join(base, 'mnt');
  fs.mkdirSync(dir);
  const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { stdio: 'pipe', timeout: 30_000 });
  try {
    fs.writeFileSync(image, '');
    fs.truncateSync(image, mib << 20);
    run('mkfs.ext4', ['-q', '-F', ...mkfsOptions, image]);
    run('mount', ['-o', ['loop', ...mountOptions].join(','), image, dir]);
  } catch (e) {
    fs.rmSync(base, { recursive: true, force: true });
    return `cannot make a small ext4 file system here: ${String((e as Error).message).split('\n')[0]}`;
  }
  return {
    dir,
    unmount() {
      for (let i = 0; i < 20; i++) {
        try {
          run('umount', [dir]);
          break;
        } catch {
          execFileSync('sleep', ['0.1']); // busy for a moment after the broker's last close
        }
      }
      fs.rmSync(base, { recursive: true, force: true });
    },
  };
}

const freeBytes = (dir: string): number => fs.statfsSync(dir).bavail * fs.statfsSync(dir).bsize;

describe('A full disk', function () {
  this.timeout(120_000);
  let fsys: { dir: string; unmount(): void } | undefined;
  let broker: Broker | undefined;
  let server: BrokerServer | undefined;

  let skipReason = '';
  before(() => {
    const m = mountSmallExt4(48);
    if (typeof m === 'string') skipReason = m;
    else fsys = m;
  });
  beforeEach(function () {
    if (!fsys) {
      this.currentTest!.title += ` (skipped: ${skipReason})`;
      this.skip();
    }
  });
  afterEach(async () => {
    await server?.stop(1000);
    server = undefined;
    await broker?.close().catch(() => undefined);
    broker = undefined;
    if (fsys) fs.rmSync(path.join(fsys.dir, 'data'), { recursive: true, force: true });
  });
  after(() => fsys?.unmount());

  /** Fills the disk through `topic` until the broker refuses a batch; returns the offsets acked. */
  async function fill(b: Broker, topic: string): Promise<number> {
    const producer = b.producer({ lingerMs: 0 });
    const value = Buffer.alloc(1000, 1);
    let acked = 0;
    let refused: Error | undefined;
    // 1 MB batches first, then single records to take what is left (bounded: 48 MiB holds < 50k)
    for (const size of [1000, 1]) {
      // A refusal holds the partition's appends back until the core has taken the
      // broker's resume (a write cycle): the singles wait for that before they start.
      if (size === 1) await sleep(100);
      for (let i = 0; i < 60_000 / size && !refused; i++) {
        try {
          await producer.sendBatch(topic, Array.from({ length: size }, () => ({ value })), { partition: 0 });
          acked += size;
        } catch (e) {
          refused = e as Error;
        }
      }
      assert.ok(refused, 'the disk never filled');
      assert.equal((refused as { code?: string }).code, 'RESOURCE_EXHAUSTED', refused.message);
      assert.match(refused.message, /^no space for (a batch|a new segment)\b.* of fill\/0\b/);
      assert.match(refused.message, /nothing was written/);
      if (size === 1000) refused = undefined;
    }
    return acked;
  }

  /**
   * A broker whose topic 'fill' took the disk down to its minFreeBytes, beside a topic
   * 't' of 64 KiB segments (all preallocated at its first append) holding one record:
   * a small batch fits in t's first segment, a 100 KB one needs a new segment, which
   * the headroom refuses. Returns it and its data directory.
   */
  async function fullBesideSmallTopic(minFreeBytes: number): Promise<{ b: Broker; dir: string }> {
    const dir = path.join(fsys!.dir, 'data');
    broker = await Broker.open({ dir, minFreeBytes });
    await broker.createTopic('fill', { segmentBytes: 4 << 20 });
    await broker.createTopic('t', { segmentBytes: 64 << 10 });
    await broker.producer({ lingerMs: 0 }).send('t', { value: Buffer.from('first'), partition: 0 });
    await fill(broker, 'fill');
    return { b: broker, dir };
  }

  it('full to the last block (minFreeBytes 0): refuses what does not fit with RESOURCE_EXHAUSTED, fences nothing, and takes it once space is freed', async () => {
    const dir = path.join(fsys!.dir, 'data');
    broker = await Broker.open({ dir, minFreeBytes: 0 });
    await broker.createTopic('fill', { segmentBytes: 4 << 20 });
    await broker.createTopic('other', { segmentBytes: 4 << 20 });
    const acked = await fill(broker, 'fill');
    assert.ok(acked > 20_000, `only ${acked} records before the disk was full`);
    assert.ok(freeBytes(fsys!.dir) < 1 << 20, `${freeBytes(fsys!.dir)} bytes still free`);
    // A refused batch took no offset, and every acked record reads back, the last one too.
    const part = (await broker.describeTopic('fill')).partitions[0]!;
    assert.equal(part.endOffset, acked);
    const last = await broker.read('fill', 0, acked - 1);
    assert.equal(last[0]!.offset, acked - 1);
    assert.equal(last[0]!.value.length, 1000);

    // A topic cannot be created (and leaves nothing behind); a group's first commit is refused the same way.
    await expectCode(broker.createTopic('new', { partitions: 2 }), 'RESOURCE_EXHAUSTED');
    assert.deepEqual((await broker.listTopics()).sort(), ['fill', 'other']);
    assert.ok(!fs.existsSync(path.join(dir, 'topics', 'new')));
    await expectCode(broker.commitOffset('g', 'fill', 0, 5), 'RESOURCE_EXHAUSTED');

    // A remote producer's batch that does not fit is retried (the server answers
    // RESOURCE_EXHAUSTED with a retry hint) until deleting the topic that filled the disk frees space.
    server = await BrokerServer.start({ broker, host: '127.0.0.1', port: 0 });
    const client = await connect(`127.0.0.1:${server.port}`);
    try {
      const big = Buffer.alloc(500_000, 7);
      let outcome: string | undefined;
      const sent = client
        .producer({ lingerMs: 0 })
        .send('other', { value: big, partition: 0 })
        .then(
          (r) => (outcome = `offset ${r.offset}`),
          (e: Error) => (outcome = `failed: ${e.message}`),
        );
      const said: string[] = [];
      const onWarning = (w: Error) => void (w.message.startsWith('other/0: appends refused') && said.push(w.message));
      process.on('warning', onWarning);
      try {
        // The first refusal (a fixed pause from the send was outlasted by a slow first
        // publish: no refusal yet, none said), then retries ~100 ms apart: said once.
        await waitFor(() => said.length > 0, 10_000, 'the refusal said');
        await sleep(700);
      } finally {
        process.off('warning', onWarning);
      }
      assert.equal(outcome, undefined, 'sent while the disk was full');
      assert.equal(said.length, 1, `the retried refusals said ${said.length} times`); // a retry every ~100 ms, said once
      await broker.deleteTopic('fill'); // works on a full disk: how space is won back
      assert.ok(freeBytes(fsys!.dir) > 30 << 20);
      await sent;
      assert.equal(outcome, 'offset 0');
    } finally {
      await client.close({ timeoutMs: 2000 }); // a failed check leaves the send retrying: its error, not a hang
    }
    // Everything works again without a reopen: appends, new topics, commits.
    const p = broker.producer({ lingerMs: 0 });
    assert.equal((await p.send('other', { value: Buffer.from('after'), partition: 0 })).offset, 1);
    await broker.createTopic('new', { partitions: 2 });
    await broker.commitOffset('g', 'other', 0, 1);

    await server.stop(1000);
    server = undefined;
    await broker.close();
    broker = await Broker.open({ dir, minFreeBytes: 0 });
    const got = await broker.read('other', 0, 0);
    assert.deepEqual(
      got.map((m) => [m.offset, m.value.length]),
      [
        [0, 500_000],
        [1, 5],
      ],
    );
    assert.deepEqual(await broker.committedOffsets('g', 'other'), [1]);
  });

  it('keeps minFreeBytes free for itself: appends stop there, while commits, a close and a reopen still work', async () => {
    const dir = path.join(fsys!.dir, 'data');
    const minFreeBytes = 8 << 20;
    broker = await Broker.open({ dir, minFreeBytes });
    await broker.createTopic('fill', { segmentBytes: 4 << 20 });
    const acked = await fill(broker, 'fill');
    const free = freeBytes(fsys!.dir);
    assert.ok(free >= minFreeBytes && free < minFreeBytes + (5 << 20), `${free} bytes free`);
    await expectCode(broker.createTopic('new'), 'RESOURCE_EXHAUSTED');
    assert.ok(!fs.existsSync(path.join(dir, 'topics', 'new')));
    // The headroom is the broker's: group commits and the snapshots and state a close writes.
    await broker.commitOffset('g', 'fill', 0, acked);
    await broker.close();
    broker = await Broker.open({ dir, minFreeBytes });
    assert.equal((await broker.describeTopic('fill')).partitions[0]!.endOffset, acked);
    assert.deepEqual(await broker.committedOffsets('g', 'fill'), [acked]);
    await expectCode(broker.producer({ lingerMs: 0 }).send('fill', { value: Buffer.alloc(100_000), partition: 0 }), 'RESOURCE_EXHAUSTED');
    // The headroom is a setting: a smaller one lets appends take what is left.
    await broker.close();
    broker = await Broker.open({ dir, minFreeBytes: 4 << 20 });
    assert.equal((await broker.producer({ lingerMs: 0 }).send('fill', { value: Buffer.alloc(100_000), partition: 0 })).offset, acked);
  });

  it('a batch refused for space holds back the later batches of its partition in the same write cycle, so none is written before it', async () => {
    const minFreeBytes = 8 << 20;
    const { b, dir } = await fullBesideSmallTopic(minFreeBytes);
    await b.close();
    // Slow write cycles (the test hook sleeps in each), so that the two batches sent
    // while the first cycle sleeps meet in the next one: the big one first.
    broker = await Broker.open({ dir, minFreeBytes, testIoDelayMs: 300 });
    const p = broker.producer({ lingerMs: 0 });
    const first = p.send('t', { value: Buffer.from('a'), partition: 0 });
    await sleep(100);
    const [big, small] = await Promise.allSettled([
      p.sendBatch('t', [{ value: Buffer.alloc(100_000, 1) }], { partition: 0 }),
      p.sendBatch('t', [{ value: Buffer.from('small') }], { partition: 0 }),
    ]);
    assert.equal((await first).offset, 1);
    assert.equal(big!.status, 'rejected');
    assert.match(((big as PromiseRejectedResult).reason as Error).message, /minFreeBytes/);
    assert.equal(small!.status, 'rejected', 'the small batch was written past the refused one');
    for (const r of [big, small] as PromiseRejectedResult[]) assert.equal((r.reason as { code: string }).code, 'RESOURCE_EXHAUSTED');
    assert.equal((await broker.describeTopic('t')).partitions[0]!.endOffset, 2);
    // Alone, the small one fits, once the broker's resume has gone through the (slow) cycle.
    const until = Date.now() + 10_000;
    while (broker.partitionState('t', 0).spaceRefused && Date.now() < until) await sleep(20);
    assert.equal((await p.send('t', { value: Buffer.from('small'), partition: 0 })).offset, 2);
  });

  it("an idempotent remote producer's batches refused for space are written in order once space is freed, none lost", async () => {
    const { b } = await fullBesideSmallTopic(8 << 20);
    server = await BrokerServer.start({ broker: b, host: '127.0.0.1', port: 0 });
    const client = await connect(`127.0.0.1:${server.port}`);
    try {
      const producer = client.producer({ lingerMs: 0, deliveryTimeoutMs: 20_000 });
      // The big one needs a new segment (refused: the headroom); the small one, sent
      // right behind it, would fit in t's first segment. Written ahead of the big one,
      // it would leave the big one a hole its retries could never fill.
      const big = producer.send('t', { value: Buffer.alloc(100_000, 1), partition: 0 });
      await sleep(20);
      const small = producer.send('t', { value: Buffer.from('small'), partition: 0 });
      await sleep(1000);
      assert.equal((await b.describeTopic('t')).partitions[0]!.endOffset, 1, 'written while the disk was full');
      await b.deleteTopic('fill');
      assert.deepEqual([(await big).offset, (await small).offset], [1, 2]);
    } finally {
      await client.close();
    }
    assert.deepEqual(
      (await b.read('t', 0, 0)).map((m) => m.value.length),
      [5, 100_000, 5],
    );
  });
});

/**
 * The cache flushes that stand in for O_DSYNC writes over written blocks (with sync on
 * ext4): each must reach the device as a flush request, with a journal and without one.
 * The loop device counts them (/sys/block/loopN/stat, field 16: flush requests completed).
 */
describe('Cache flushes reach the disk', function () {
  this.timeout(120_000);
  for (const [label, mkfs] of [
    ['with a journal', []],
    ['without a journal', ['-O', '^has_journal']],
  ] as Array<[string, string[]]>) {
    it(`${label}: the device completes at least one flush per cache flush the broker counts`, async function () {
      const m = mountSmallExt4(200, mkfs);
      if (typeof m === 'string') {
        this.test!.title += ` (skipped: ${m})`;
        this.skip();
      }
      try {
        const source = execFileSync('findmnt', ['-n', '-o', 'SOURCE', m.dir], { encoding: 'utf8' }).trim();
        const stat = `/sys/block/${path.basename(source)}/stat`;
        const flushes = () => Number(fs.readFileSync(stat, 'utf8').trim().split(/\s+/)[15]);
        if (!fs.existsSync(stat) || !Number.isFinite(flushes())) this.skip(); // a kernel without flush counts
        const b = await Broker.open({ dir: path.join(m.dir, 'data') });
        try {
          // A file system this small is one flex group, where nothing places the flush
          // file's inode (made at the open) away from the segment's: a file whose inode
          // shares its table block stays on O_DSYNC (the flush would write that block
          // too). Files made in between put the segment's a few blocks further on.
          fs.mkdirSync(path.join(m.dir, 'pad'));
          for (let i = 0; i < 64; i++) fs.writeFileSync(path.join(m.dir, 'pad', String(i)), '');
          await b.createTopic('t');
          const p = b.producer({ lingerMs: 0 });
          await p.send('t', { value: 'first', partition: 0 });
          await sleep(50);
          const [c0, d0] = [b.cacheFlushes, flushes()];
          for (let i = 0; i < 50; i++) await p.send('t', { value: 'x'.repeat(100), partition: 0 });
          const [c1, d1] = [b.cacheFlushes, flushes()];
          assert.ok(c1 - c0 >= 40, `most of the 50 cycles rewrite the tail block and flush: ${c1 - c0}`);
          assert.ok(d1 - d0 >= c1 - c0, `${c1 - c0} cache flushes counted, ${d1 - d0} flushes completed by the device`);
        } finally {
          await b.close();
        }
      } finally {
        m.unmount();
      }
    });
  }
});

describe('A file system mounted without barriers', function () {
  this.timeout(120_000);
  for (const option of ['nobarrier', 'barrier=0']) {
    it(`mounted ${option}: the open warns that nothing acknowledged is safe from a power cut, naming the mount; with barriers, no warning`, async function () {
      const m = mountSmallExt4(64, [], [option]);
      if (typeof m === 'string') {
        this.test!.title += ` (skipped: ${m})`;
        this.skip();
      }
      try {
        const { broker, warnings } = await openBrokerWithWarnings({ dir: path.join(m.dir, 'data') });
        await broker.close();
        const said = warnings.filter((w) => w.includes('cache flushes'));
        assert.equal(said.length, 1, warnings.join('\n'));
        assert.match(said[0]!, /is mounted nobarrier: .*power cut/);
        assert.ok(said[0]!.includes(`mounted at ${m.dir}`) && said[0]!.includes('mount -o remount,barrier'), said[0]);
        execFileSync('mount', ['-o', 'remount,barrier', m.dir], { stdio: 'pipe', timeout: 30_000 });
        const again = await openBrokerWithWarnings({ dir: path.join(m.dir, 'data') });
        await again.broker.close();
        assert.deepEqual(again.warnings.filter((w) => w.includes('cache flushes')), []);
      } finally {
        m.unmount();
      }
    });
  }
});


describe('A file system without preallocation (ext4 without extents: fallocate is EOPNOTSUPP)', function () {
  this.timeout(120_000);
  it('appends to many partitions stop at minFreeBytes with RESOURCE_EXHAUSTED, none fenced, and go on once space is freed', async function () {
    const m = mountSmallExt4(64, ['-O', '^extent,^flex_bg,^64bit']);
    if (typeof m === 'string') {
      this.test!.title += ` (skipped: ${m})`;
      this.skip();
    }
    const minFreeBytes = 8 << 20;
    let b: Broker | undefined;
    try {
      fs.writeFileSync(path.join(m.dir, 'ballast'), Buffer.alloc(4 << 20, 7));
      b = await Broker.open({ dir: path.join(m.dir, 'data'), minFreeBytes });
      const n = 8;
      await b.createTopic('f', { partitions: n, segmentBytes: 32 << 20 });
      const p = b.producer({ lingerMs: 0 });
      const value = Buffer.alloc(1000, 1);
      const refused = new Map<number, Error>();
      let acked = 0;
      // Every partition in turn, 100 KB a batch, until each is refused (64 MiB holds < 600 rounds).
      for (let round = 0; round < 600 && refused.size < n; round++) {
        const rs = await Promise.allSettled(Array.from({ length: n }, (_, i) => p.sendBatch('f', Array.from({ length: 100 }, () => ({ value })), { partition: i })));
        rs.forEach((r, i) => {
          if (r.status === 'fulfilled') acked += 100;
          else if (!refused.has(i)) refused.set(i, r.reason as Error);
        });
      }
      assert.equal(refused.size, n, 'the disk never filled');
      for (const [i, e] of refused) assert.equal((e as { code?: string }).code, 'RESOURCE_EXHAUSTED', `f/${i}: ${e.message}`);
      // Near the floor, not to the byte: without preallocation the indexes grow unreserved,
      // and the batches of one write cycle are all checked before any is written.
      assert.ok(freeBytes(m.dir) >= minFreeBytes - (1 << 20), `appends left ${freeBytes(m.dir)} bytes free, far under minFreeBytes (${minFreeBytes})`);
      const d = await b.describeTopic('f');
      assert.equal(d.partitions.reduce((s, x) => s + x.endOffset, 0), acked, 'what was acknowledged is all in the log');
      fs.rmSync(path.join(m.dir, 'ballast'));
      // The refusal holds a partition's appends until the broker's resume reached the core
      // (through a write cycle: a fixed 100 ms is not that on a slow disk or build).
      const broker = b;
      await waitFor(() => Array.from({ length: n }, (_, i) => broker.partitionState('f', i).spaceRefused).every((x) => x === null), 10_000, 'the resumes');
      await p.sendBatch('f', [{ value }], { partition: 0 });
      await p.sendBatch('f', [{ value }], { partition: n - 1 });
    } finally {
      await b?.close().catch(() => undefined);
      m.unmount();
    }
  });

  it("a write that still finds the disk full (filled by another program after the check) fences its partition: every later publish is IO_ERROR saying to reopen the broker, also once space is back; the reopen recovers it, nothing acknowledged lost", async function () {
    // Without preallocation the check before a batch cannot hold the space for its
    // write. The race is made by strace: the first data write of the segment is ENOSPC,
    // the ones after it would succeed (the space is back).
    if (!hasStrace()) return this.skip();
    const dir = tmpDir();
    let b = await Broker.open({ dir });
    await b.createTopic('t', { segmentBytes: 8192 });
    await b.close();
    const seg0 = path.join(dir, 'topics', 't', '0', '00000000000000000000.log');
    const out = faultNode(
      `require(${JSON.stringify(path.join(__dirname, '..', 'src'))}).Broker.open({ dir: ${JSON.stringify(dir)} }).then(async (b) => {
          const out = [];
          const p = b.producer();
          for (let i = 0; i < 3; i++) out.push(await p.send('t', { value: 'v' + i, partition: 0 }).then((r) => r.offset, (e) => ({ code: e.code, message: e.message })));
          console.log(JSON.stringify(out));
          await b.close().catch(() => undefined);
        })`,
      [seg0],
      'pwritev2:error=ENOSPC:when=1',
      { ...process.env, URINGMQ_IO_BACKEND: 'thread' }, // io_uring's writes pass no syscall strace could fail
    );
    const sent = JSON.parse(out.trim().split('\n').at(-1)!) as Array<number | { code: string; message: string }>;
    assert.equal(sent.length, 3, out);
    for (const r of sent) {
      assert.equal(typeof r, 'object', `a publish to the fenced partition was written: ${out}`);
      const e = r as { code: string; message: string };
      assert.equal(e.code, 'IO_ERROR', out);
      // The publishes after the one that fenced it said only "fenced after an I/O error".
      assert.match(e.message, /^partition t\/0 is fenced after an I\/O error \(reopen the broker to recover\): write .*00000000000000000000\.log at offset 0: No space left on device/, out);
    }
    b = await Broker.open({ dir });
    try {
      assert.equal((await b.describeTopic('t')).partitions[0]!.endOffset, 0, 'nothing of the failed write became readable');
      assert.equal((await b.producer().send('t', { value: 'after', partition: 0 })).offset, 0);
      assert.equal((await b.read('t', 0, 0))[0]!.value.toString(), 'after');
    } finally {
      await b.close();
    }
  });

  // Retention skipped fenced partitions: one fenced by a full disk kept all its old
  // segments until the broker was reopened, though retention removing them is what
  // gives the space back, and removing whole sealed segments below the start touches
  // nothing the fence guards (its active segment, the one whose seal never ran).
  it('retention goes on on a fenced partition: its old sealed segments are removed by age, the space given back; the segment whose seal the fence stopped stays for the reopen, which recovers it whole', async function () {
    if (!hasStrace()) return this.skip();
    const dir = tmpDir();
    const maxAgeMs = 5000; // past the writes below, under strace
    let b = await Broker.open({ dir });
    await b.createTopic('t', { partitions: 2, segmentBytes: 8192, retention: { maxAgeMs } }); // five 1.5 KB records a segment
    await b.close();
    const part0 = path.join(dir, 'topics', 't', '0');
    // Records 0-14 fill segments 0, 5 and 10; record 15 rolls to segment 15, whose first
    // write finds the disk full: the partition is fenced in that cycle, before it sealed
    // segment 10.
    const seg15 = path.join(part0, '00000000000000000015.log');
    const out = faultNode(
      `const fs = require('node:fs');
      require(${JSON.stringify(path.join(__dirname, '..', 'src'))}).Broker.open({ dir: ${JSON.stringify(dir)} }).then(async (b) => {
          const p = b.producer();
          const value = (i) => 'v'.repeat(1500) + i;
          const sent = [];
          for (let i = 0; i < 16; i++) sent.push(await p.send('t', { value: value(i), partition: 0 }).then((r) => r.offset, (e) => e.code));
          const start = async (n) => (await b.describeTopic('t')).partitions[n].startOffset;
          const atFence = await start(0);
          // Partition 1 gets a sealed segment written after the fence: once retention has
          // removed it by age, every pass that did so found partition 0's segments older.
          for (let i = 0; i < 6; i++) await p.send('t', { value: value(i), partition: 1 });
          const deadline = Date.now() + 30000;
          while ((await start(1)) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
          console.log(JSON.stringify({ sent, atFence, start0: await start(0), start1: await start(1), files: fs.readdirSync(${JSON.stringify(part0)}).sort() }));
          await b.close().catch(() => undefined);
        })`,
      [seg15],
      'pwritev2:error=ENOSPC',
      { ...process.env, URINGMQ_IO_BACKEND: 'thread' }, // io_uring's writes pass no syscall strace could fail
    );
    const r = JSON.parse(out.trim().split('\n').at(-1)!) as { sent: Array<number | string>; atFence: number; start0: number; start1: number; files: string[] };
    assert.deepEqual(r.sent, [...Array.from({ length: 15 }, (_, i) => i), 'IO_ERROR'], out);
    assert.equal(r.atFence, 0, `retention ran before the fence (the writes took past maxAgeMs?): ${out}`);
    assert.equal(r.start1, 5, `partition 1's first segment was never retired: ${out}`);
    // Segments 0 and 5 (sealed) removed; 10 (its seal stopped by the fence) and 15 (the active one) kept.
    assert.equal(r.start0, 10, `retention did not run on the fenced partition, or removed the segment whose seal the fence stopped: ${out}`);
    assert.deepEqual(
      r.files.filter((f) => f.endsWith('.log')),
      ['00000000000000000010.log', '00000000000000000015.log'],
      out,
    );
    b = await Broker.open({ dir });
    try {
      const d = (await b.describeTopic('t')).partitions[0]!;
      assert.deepEqual([d.startOffset, d.endOffset], [10, 15], 'what was acknowledged after the start is all there, nothing of the failed write');
      assert.deepEqual((await b.read('t', 0, 10)).map((m) => m.offset), [10, 11, 12, 13, 14]);
      assert.equal((await b.producer().send('t', { value: 'after', partition: 0 })).offset, 15);
    } finally {
      await b.close();
    }
  });
});
