import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { DEFAULT_ZERO_AHEAD_BYTES, DIR_FORMAT } from '../src/broker/broker';
import { metricsRegistry } from '../src/metrics';
import { Broker, UringmqError, decodeBatches, encodeBatch, readBatchMeta, sealBatch, type Message } from '../src';
import { dropProducerSnapshot, expectCode, faultNode, hasStrace, openBroker, openBrokerWithWarnings, overwriteAt, partitionDir, segmentFiles, sleep, straceNode, tmpDir, waitFor } from './helpers';

async function readAll(b: Broker, topic: string, p: number, from = 0): Promise<Message[]> {
  const out: Message[] = [];
  const end = (await b.describeTopic(topic)).partitions[p]!.endOffset;
  for (let off = from; off < end; ) {
    const got = await b.read(topic, p, off, { maxBytes: 64 * 1024 });
    assert.ok(got.length > 0, `no progress at ${off}`);
    out.push(...got);
    off = got[got.length - 1]!.offset + 1;
  }
  return out;
}

const payload = (i: number) => `rec-${i}-` + 'x'.repeat(200 + (i % 50));

/**
 * A partition of topic t in `dir` whose segment roll a crash interrupted: 300 records in
 * 8 KiB segments, the last sealed one (L, `size` bytes of batches) left as a crash in the
 * roll's cycle leaves it: no seal entry in its index, its data block-padded.
 */
async function crashedMidRoll(dir: string): Promise<{ before: string[]; L: string; Lindex: string; size: number }> {
  const b = await openBroker({ dir, durability: 'none' });
  await b.createTopic('t', { segmentBytes: 8192 });
  await fill(b, 't', 300);
  const before = segmentFiles(dir, 't', 0);
  const bad = sealBatch(encodeBatch([{ value: 'y'.repeat(7000) }]));
  bad[200]! ^= 0xff;
  await expectCode(b.publishBatch('t', bad, 0), 'CORRUPT_BATCH'); // rolls the segment, then is refused
  await b.close();
  const L = before[before.length - 1]!;
  const Lindex = L.replace(/\.log$/, '.index');
  const size = fs.statSync(L).size;
  fs.truncateSync(Lindex, fs.statSync(Lindex).size - 8);
  fs.truncateSync(L, Math.ceil(size / 4096) * 4096 + 4096);
  return { before, L, Lindex, size };
}

async function fill(b: Broker, topic: string, n: number, batch = 25): Promise<void> {
  const p = b.producer();
  for (let i = 0; i < n; i += batch)
    await p.sendBatch(topic, Array.from({ length: Math.min(batch, n - i) }, (_, k) => ({ value: payload(i + k) })), { partition: 0 });
}

/** Where each batch of a segment file starts, up to its end or the zeros preallocated after it (a batch's length is at byte 4). */
function batchStarts(data: Buffer): number[] {
  const starts: number[] = [];
  for (let pos = 0; pos + 8 <= data.length && data.readUInt32LE(pos + 4) > 0; pos += data.readUInt32LE(pos + 4)) starts.push(pos);
  return starts;
}

/** A closed broker's directory whose topic t has 300 records in 8 KiB segments (at least 4). */
async function segmentedLog(batch = 25): Promise<{ dir: string; segs: string[] }> {
  const dir = tmpDir();
  const b = await openBroker({ dir });
  await b.createTopic('t', { segmentBytes: 8192 });
  await fill(b, 't', 300, batch);
  await b.close();
  const segs = segmentFiles(dir, 't', 0);
  assert.ok(segs.length >= 4);
  return { dir, segs };
}

describe('Segments, index, retention and recovery', () => {
  it('rolls segments by size and reads across them', async () => {
    const dir = tmpDir();
    const b = await openBroker({ dir });
    await b.createTopic('t', { segmentBytes: 16 * 1024 });
    await fill(b, 't', 1000);
    const segs = segmentFiles(dir, 't', 0);
    assert.ok(segs.length >= 10, `only ${segs.length} segments`);
    assert.equal(path.basename(segs[0]!), '00000000000000000000.log');
    // sealed segments are trimmed to their data; names are base offsets
    for (const s of segs.slice(0, -1)) assert.ok(fs.statSync(s).size <= 16 * 1024);
    const all = await readAll(b, 't', 0);
    assert.deepEqual(all.map((m) => m.offset), Array.from({ length: 1000 }, (_, i) => i));
    assert.equal(all[777]!.value.toString(), payload(777));
    const d = await b.describeTopic('t');
    assert.equal(d.partitions[0]!.segments, segs.length);
    await b.close();
  });

  it('keeps at most 32 sealed segment files open per partition: the least recently read close, and reopen when read', async () => {
    const dir = tmpDir();
    const openFiles = () =>
      fs.readdirSync('/proc/self/fd').filter((f) => {
        try {
          return fs.readlinkSync(`/proc/self/fd/${f}`).startsWith(partitionDir(dir, 't', 0) + path.sep);
        } catch {
          return false; // closed while listing
        }
      }).length;
    // The tail cache off: every read goes to the files.
    let b = await openBroker({ dir, tailCacheBytes: 0 });
    await b.createTopic('t', { segmentBytes: 4096 });
    await fill(b, 't', 1200, 5);
    const segs = segmentFiles(dir, 't', 0).length;
    assert.ok(segs > 60, `only ${segs} segments`);
    // Open: the active segment's log (read and write) and index; 32 sealed at most.
    const bound = 32 + 3;
    assert.ok(openFiles() <= bound, `${openFiles()} files open after writing ${segs} segments`);
    await b.close();
    assert.equal(openFiles(), 0, 'close() closes the files');
    b = await openBroker({ dir, tailCacheBytes: 0 });
    assert.ok(openFiles() <= 3, `${openFiles()} files open after reopening`);
    const all = await readAll(b, 't', 0);
    assert.deepEqual(all.map((m) => m.offset), Array.from({ length: 1200 }, (_, i) => i));
    assert.ok(openFiles() <= bound, `${openFiles()} files open after reading every segment`);
    // Backwards, so every read reopens a closed file; each batch is still whole and right.
    for (let off = 1199; off >= 0; off -= 7) {
      const [m] = await b.read('t', 0, off, { maxBytes: 1 });
      assert.equal(m!.offset, off);
      assert.equal(m!.value.toString(), payload(off));
    }
    assert.ok(openFiles() <= bound, `${openFiles()} files open after reading backwards`);
    await b.close();
  });

  it('a read that started before deleteTopic and reopens a segment file reads it where the delete moved it, never the file of a topic made again under the name; once the trash is emptied it gets TOPIC_NOT_FOUND, not IO_ERROR', async () => {
    const dir = tmpDir();
    const b = await openBroker({ dir, tailCacheBytes: 0 });
    try {
      await b.createTopic('t', { segmentBytes: 4096 });
      await fill(b, 't', 1200, 5); // 60+ segments
      await readAll(b, 't', 0); // read forwards: the oldest segments' files are the closed ones
      // Another topic with batches of the same sizes at the same offsets and positions.
      await b.createTopic('u', { segmentBytes: 4096 });
      const pu = b.producer();
      for (let i = 0; i < 100; i += 5)
        await pu.sendBatch('u', Array.from({ length: 5 }, (_, k) => ({ value: payload(i + k).replace('rec-', 'NEW-') })), { partition: 0 });
      const internal = b as unknown as {
        partitionState(t: string, p: number): { topic: { deleted: boolean } };
        readRaw(ps: unknown, offset: number, maxBytes: number): Promise<Buffer>;
      };
      const ps = internal.partitionState('t', 0);
      const tdir = path.dirname(partitionDir(dir, 't', 0));
      const moved = path.join(dir, 'trash', 'moved');
      // What deleteTopic does while the read waits for a thread: the directory goes to
      // the trash, then the topic is marked deleted; and what createTopic('t') then does:
      // a new topic's files at the same paths (a copy of u's here).
      fs.mkdirSync(path.dirname(moved), { recursive: true });
      fs.renameSync(tdir, moved);
      fs.cpSync(path.dirname(partitionDir(dir, 'u', 0)), tdir, { recursive: true });
      const oldRead = internal.readRaw(ps, 0, 1);
      ps.topic.deleted = true;
      const old = decodeBatches(await oldRead);
      assert.equal(old[0]?.value?.toString(), payload(0), 'the read served the new topic\'s file as the deleted one\'s records');
      // The trash emptied: the file is gone, which the reader learns as the topic's deletion.
      fs.rmSync(moved, { recursive: true });
      ps.topic.deleted = false;
      const vanished = internal.readRaw(ps, 40, 1);
      ps.topic.deleted = true;
      const e = await vanished.then(() => null, (x: { code?: string; message: string }) => x);
      assert.equal(e?.code, 'TOPIC_NOT_FOUND', e?.message);
      // The same missing file under a live topic is an I/O error naming the file.
      ps.topic.deleted = false;
      const live = await internal.readRaw(ps, 45, 1).then(() => null, (x: { code?: string; message: string }) => x);
      assert.equal(live?.code, 'IO_ERROR');
      assert.match(live!.message, /ENOENT|No such file/);
    } finally {
      await b.close();
    }
  });

  it('reads at any offset from the tail cache and from the file: skips earlier batches, whole batches only, a first batch larger than maxBytes or the destination', async () => {
    const dir = tmpDir();
    let b = await openBroker({ dir });
    await b.createTopic('t', { segmentBytes: 1 << 20 });
    const p = b.producer();
    const sizes: number[] = []; // records per batch, in order
    const add = async (n: number, bytes: number) => {
      await p.sendBatch('t', Array.from({ length: n }, (_, k) => ({ value: Buffer.alloc(bytes, (sizes.length + k) & 0xff) })), { partition: 0 });
      sizes.push(n);
    };
    // Each awaited batch is its own group-commit cycle, so the tail cache (1 MiB, more
    // than these ~470 KB) holds ~100 chunks: reads must find the right one.
    for (let i = 0; i < 60; i++) await add(1 + (i % 3), 90); // small batches: several per index interval
    await add(1, 300 * 1024); // one batch far larger than the reads below
    for (let i = 0; i < 40; i++) await add(5, 700);
    const starts: number[] = [];
    let total = 0;
    for (const n of sizes) {
      starts.push(total);
      total += n;
    }
    const batchEnd = (o: number) => starts.find((s) => s > o) ?? total;
    const readAll = async (from: 'tail cache' | 'file') => {
      const ps = b.partitionState('t', 0);
      for (const maxBytes of [1, 5000, 64 * 1024, 2 << 20])
        for (let off = 0; off < total; off += 3) {
          const at = `at ${off} (maxBytes ${maxBytes}, ${from})`;
          const got = await b.read('t', 0, off, { maxBytes });
          assert.ok(got.length > 0, `nothing ${at}`);
          assert.equal(got[0]!.offset, off, `first offset ${at}`);
          got.forEach((m, i) => assert.equal(m.offset, off + i));
          const last = got[got.length - 1]!.offset;
          assert.equal(batchEnd(last), last + 1, `ends on a batch boundary ${at}`);
          if (maxBytes === 1) assert.equal(last + 1, batchEnd(off), 'one batch when maxBytes is smaller than it');
          // The pooled path, with a destination smaller than the big batch.
          const raw = await b.readRawInto(ps, off, maxBytes, Buffer.alloc(8 * 1024));
          const meta = readBatchMeta(raw);
          assert.ok(meta.baseOffset <= off && off < meta.baseOffset + meta.recordCount, `the first batch holds ${off}`);
          assert.ok(meta.length <= raw.length);
          const again = decodeBatches(raw, off);
          assert.deepEqual(again.map((m) => m.offset), got.map((m) => m.offset), 'the pooled read returns the same records');
        }
    };
    await readAll('tail cache');
    const info = b.partitionInfo(b.partitionState('t', 0));
    assert.equal(info.endOffset, total);
    assert.deepEqual(b.partitionOffsets(b.partitionState('t', 0)), { startOffset: info.startOffset, endOffset: total });
    await b.close();
    b = await openBroker({ dir }); // empty tail cache: every read below goes to the file
    await readAll('file');
    await b.close();
  });

  it('a read into a buffer whose ArrayBuffer is detached (transferred) before or while it runs is refused with INVALID_ARGUMENT, and writes nothing into the memory the buffer gave up', async () => {
    const gc = (() => {
      v8.setFlagsFromString('--expose-gc');
      return vm.runInNewContext('gc') as () => void;
    })();
    // structuredClone moves the memory to a new ArrayBuffer; the old one is left empty.
    const detach = (buf: Buffer): ArrayBuffer => structuredClone(buf.buffer as ArrayBuffer, { transfer: [buf.buffer as ArrayBuffer] });
    for (const tailCacheBytes of [1 << 20, 0]) {
      const b = await openBroker({ tailCacheBytes });
      try {
        await b.createTopic('t');
        await fill(b, 't', 400); // ~100 KiB: in the tail cache, or (0) read from the file
        const ps = b.partitionState('t', 0);
        const before = Buffer.alloc(256 * 1024);
        detach(before);
        await expectCode(b.readRawInto(ps, 0, 64 * 1024, before), 'INVALID_ARGUMENT');
        if (tailCacheBytes > 0) continue; // the tail cache is read synchronously: nothing can detach it meanwhile
        // Detached once the read was asked for: the file is read on a pool thread, which
        // wrote into the memory the buffer had (now the clone's). Kept, zeroed: nothing may
        // land in it. Then dropped and collected, with the pool busy so that the read runs
        // after it may be freed (what ASan caught as a write into freed memory).
        const during = Buffer.alloc(256 * 1024);
        const read = b.readRawInto(ps, 0, 64 * 1024, during).then(
          () => 'resolved',
          (e: UringmqError) => e.code,
        );
        const moved = new Uint8Array(detach(during));
        assert.equal(await read, 'INVALID_ARGUMENT', 'a read into a buffer detached while it ran');
        assert.ok(moved.every((x) => x === 0), 'the read wrote into the memory the detached buffer gave up');
        const pool = Number(process.env.UV_THREADPOOL_SIZE) || 4;
        const busy = Array.from({ length: pool }, () => new Promise((r) => crypto.pbkdf2('x', 'y', 300_000, 32, 'sha256', r)));
        // (Under 128 KiB: ASan's allocator keeps it in its quarantine, not unmapped.)
        const freed = Buffer.alloc(96 * 1024);
        const read2 = b.readRawInto(ps, 0, 32 * 1024, freed).then(
          () => 'resolved',
          (e: UringmqError) => e.code,
        );
        detach(freed);
        for (let i = 0; i < 3; i++) {
          gc();
          await sleep(20);
        }
        assert.equal(await read2, 'INVALID_ARGUMENT');
        await Promise.all(busy);
        // The partition reads on: into a buffer left alone, the records from the start.
        const ok = await b.readRawInto(ps, 0, 64 * 1024, Buffer.alloc(256 * 1024));
        assert.equal(decodeBatches(ok, 0)[0]!.value.toString(), payload(0));
      } finally {
        await b.close();
      }
    }
  });

  it('a read from the file into a destination of maxBytes (as the groups\' pooled reads) lands in it wherever in the segment it starts', async () => {
    const b = await openBroker({ tailCacheBytes: 0 }); // every read below goes to the file
    try {
      await b.createTopic('t');
      await fill(b, 't', 2000); // ~500 KiB, one segment
      const ps = b.partitionState('t', 0);
      for (const [off, maxBytes] of [
        [0, 64 * 1024],
        [777, 64 * 1024],
        [1000, 1 << 20], // the whole rest
        [1999, 64 * 1024],
      ] as const) {
        const dest = Buffer.alloc(maxBytes);
        const r = await b.readRawInto(ps, off, maxBytes, dest);
        assert.ok(r.buffer === dest.buffer, `the read at ${off} came back in a Buffer of its own, not in the destination`);
        assert.ok(r.equals(await b.readRaw(ps, off, maxBytes)), `the bytes read at ${off}`);
      }
      // A first batch larger than the destination: a Buffer of its own, the destination untouched.
      const small = Buffer.alloc(100);
      const big = await b.readRawInto(ps, 5, 100, small);
      assert.ok(big.buffer !== small.buffer && big.length > 100);
      assert.equal(decodeBatches(big, 5)[0]!.offset, 5);
      assert.ok(small.every((x) => x === 0));
      // A destination shrunk while the read ran (a resizable ArrayBuffer) is answered as
      // one the read does not fit: a Buffer of its own.
      // (The lib this compiles against predates resizable ArrayBuffers; Node 20 has them.)
      const Resizable = ArrayBuffer as unknown as new (n: number, o: { maxByteLength: number }) => ArrayBuffer & { resize(n: number): void };
      const rab = new Resizable(64 * 1024, { maxByteLength: 64 * 1024 });
      const shrinking = new Uint8Array(rab) as unknown as Buffer; // length-tracking: shrinks with it
      const read = b.readRawInto(ps, 1990, 64 * 1024, shrinking);
      rab.resize(10);
      const own = await read;
      assert.ok(own.buffer !== rab && own.equals(await b.readRaw(ps, 1990, 64 * 1024)));
    } finally {
      await b.close();
    }
  });

  it('deletes whole old segments past retention.maxBytes', async () => {
    const dir = tmpDir();
    const b = await openBroker({ dir });
    await b.createTopic('t', { segmentBytes: 8192, retention: { maxBytes: 32 * 1024 } });
    await fill(b, 't', 1000);
    // The I/O thread checks retention every second: a pass while fill() was still
    // appending (synced appends, slow under ASan) deleted only part of what it will.
    const bound = 32 * 1024 + 8192 + 1024;
    let d = await b.describeTopic('t');
    for (let i = 0; i < 100 && (d.partitions[0]!.startOffset === 0 || d.partitions[0]!.bytes > bound); i++) {
      await sleep(100);
      d = await b.describeTopic('t');
    }
    const part = d.partitions[0]!;
    assert.ok(part.startOffset > 0, 'nothing deleted');
    assert.ok(part.bytes <= bound, `still ${part.bytes} bytes`);
    assert.equal(part.endOffset, 1000);
    // The start moves first; the I/O thread then unlinks the files one by one, 16 a
    // second (each made durable before the next).
    const first = `${String(part.startOffset).padStart(20, '0')}.log`;
    for (let i = 0; i < 300 && path.basename(segmentFiles(dir, 't', 0)[0]!) !== first; i++) await sleep(50);
    assert.equal(path.basename(segmentFiles(dir, 't', 0)[0]!), first);
    const rest = await readAll(b, 't', 0, part.startOffset);
    assert.equal(rest[0]!.offset, part.startOffset);
    assert.equal(rest.at(-1)!.offset, 999);
    await assert.rejects(b.read('t', 0, 0), { code: 'OFFSET_OUT_OF_RANGE' });
    // a consumer from 'earliest' starts at the new start
    for await (const m of b.consumer({ topic: 't', from: 'earliest' })) {
      assert.equal(m.offset, part.startOffset);
      break;
    }
    await b.close();
  });

  it('a retired segment that cannot be removed yet is removed at a later retention pass', async function () {
    const dir = tmpDir();
    const b = await openBroker({ dir });
    await b.createTopic('t', { segmentBytes: 8192, retention: { maxBytes: 16 * 1024 } });
    await fill(b, 't', 200);
    const first = segmentFiles(dir, 't', 0)[0]!;
    // An immutable file cannot be unlinked (EPERM), even by root.
    if (spawnSync('chattr', ['+i', first]).status !== 0) {
      await b.close();
      return this.skip();
    }
    try {
      await fill(b, 't', 1000);
      let d = await b.describeTopic('t');
      for (let i = 0; i < 40 && d.partitions[0]!.startOffset === 0; i++) {
        await sleep(100);
        d = await b.describeTopic('t');
      }
      assert.ok(d.partitions[0]!.startOffset > 0, 'retention ran');
      assert.ok(fs.existsSync(first), 'the immutable file is still there');
    } finally {
      spawnSync('chattr', ['-i', first]);
    }
    for (let i = 0; i < 40 && fs.existsSync(first); i++) await sleep(100); // the next pass, within a second
    assert.ok(!fs.existsSync(first), 'removed once it could be');
    await b.close();
  });

  it('a retired segment file that cannot be removed is named once in a warning with its error, every failed retry is counted (uringmq_retention_remove_failures_total), and the files go once it can be removed', async function () {
    this.timeout(60_000);
    const dir = tmpDir();
    const b = await openBroker({ dir });
    await b.createTopic('t', { segmentBytes: 8192, retention: { maxBytes: 16 * 1024 } });
    await fill(b, 't', 200);
    const first = segmentFiles(dir, 't', 0)[0]!;
    // An immutable file cannot be unlinked (EPERM), even by root.
    if (spawnSync('chattr', ['+i', first]).status !== 0) {
      await b.close();
      return this.skip();
    }
    const warnings: string[] = [];
    const onWarning = (w: Error) => {
      if (w.name === 'UringmqWarning' && w.message.includes('retention')) warnings.push(w.message);
    };
    process.on('warning', onWarning);
    const registry = metricsRegistry(b, { processMetrics: false });
    try {
      await fill(b, 't', 1000);
      // One retry a second: after four, a warning for each would have been relayed (every second) by the sleep.
      await waitFor(() => b.retentionRemoveFailures >= 4, 30_000, 'four failed removals');
      await sleep(1500);
      assert.equal(warnings.length, 1, warnings.join('\n'));
      assert.ok(warnings[0]!.startsWith('t/0: '), warnings[0]);
      assert.ok(warnings[0]!.includes(first), `the file is named: ${warnings[0]}`);
      assert.match(warnings[0]!, /Operation not permitted \(errno 1\)/);
      const counted = Number(/^uringmq_retention_remove_failures_total (\d+)$/m.exec(await registry.metrics())?.[1]);
      assert.ok(counted >= 4, `uringmq_retention_remove_failures_total ${counted}`);
      assert.ok(fs.existsSync(first), 'the immutable file is still there');
    } finally {
      spawnSync('chattr', ['-i', first]);
    }
    try {
      // The obstacle gone, the next pass removes it, its index and the retired segments after it.
      const start = (await b.describeTopic('t')).partitions[0]!.startOffset;
      const startFile = `${String(start).padStart(20, '0')}.log`;
      await waitFor(() => path.basename(segmentFiles(dir, 't', 0)[0]!) === startFile, 30_000, `retired files removed down to ${startFile}`);
      assert.ok(!fs.existsSync(first.replace(/\.log$/, '.index')), 'its index removed');
      assert.equal(warnings.length, 1, warnings.join('\n'));
    } finally {
      process.off('warning', onWarning);
      await b.close();
    }
  });

  it('a retention pass tries a retired file that stays once and counts that one failure once, also when the pass retires more segments behind it', async function () {
    this.timeout(60_000);
    const dir = tmpDir();
    const b = await openBroker({ dir });
    await b.createTopic('t', { segmentBytes: 8192, retention: { maxBytes: 16 * 1024 } });
    await fill(b, 't', 60); // three segments, under the limit: nothing retired yet
    assert.equal((await b.describeTopic('t')).partitions[0]!.startOffset, 0);
    const first = segmentFiles(dir, 't', 0)[0]!;
    // A non-empty directory where the file was: its unlink fails (EISDIR), for root too.
    fs.renameSync(first, `${first}.moved`);
    fs.mkdirSync(first);
    fs.writeFileSync(path.join(first, 'x'), 'x');
    try {
      // Passes run at least a second apart, so in `elapsed` ms there were at most
      // floor(elapsed / 1000) + 1 of them. Each pass here also retires new segments (the
      // writes go on): it ran the removals twice, and counted the stuck file twice.
      const t0 = performance.now();
      while (b.retentionRemoveFailures < 6 && performance.now() - t0 < 30_000) await fill(b, 't', 50);
      const failures = b.retentionRemoveFailures;
      const passes = Math.floor((performance.now() - t0) / 1000) + 1;
      assert.ok(failures >= 6, `${failures} failed removals`);
      assert.ok(failures <= passes, `${failures} failed removals counted in at most ${passes} retention passes`);
    } finally {
      fs.rmSync(first, { recursive: true });
    }
    // The obstacle gone, the next pass removes it (the retired files after it follow, 16 a pass).
    await waitFor(() => !fs.existsSync(first), 30_000, `${first} removed`);
    await b.close();
  });

  it('retention makes each removal durable before the next: the directory is synced after every unlink, so a power cut cannot keep a later removal and lose an earlier one', async function () {
    // One fsync of the directory after several unlinks lets a power cut keep any subset
    // of them (ext4 without a journal writes the directory's blocks back in any order):
    // a segment's .log kept with its .index gone, the segments after it gone, reads as a
    // torn roll, and the open drops what follows it. Observed by strace, in a child.
    if (!hasStrace()) return this.skip();
    const dir = tmpDir();
    const b = await openBroker({ dir });
    await b.createTopic('t', { segmentBytes: 8192 });
    await fill(b, 't', 300);
    await b.close();
    const logs = segmentFiles(dir, 't', 0);
    assert.ok(logs.length >= 4, `${logs.length} segments`);
    // Retention set by hand, so that the child's first pass retires several at once.
    const cfgPath = path.join(dir, 'topics', 't', 'topic.json');
    const cfg = JSON.parse(fs.readFileSync(cfgPath, 'utf8'));
    cfg.retention = { maxBytes: 1 };
    fs.writeFileSync(cfgPath, JSON.stringify(cfg));
    const src = path.join(__dirname, '..', 'src');
    const calls = straceNode(
      `require(${JSON.stringify(src)}).Broker.open({ dir: ${JSON.stringify(dir)} }).then(async (b) => { for (let i = 0; i < 100 && (await b.describeTopic('t')).partitions[0].startOffset === 0; i++) await new Promise((r) => setTimeout(r, 100)); await new Promise((r) => setTimeout(r, 300)); await b.close(); })`,
      ['unlink', 'unlinkat', 'fsync'],
    );
    const partDir = path.dirname(logs[0]!);
    const events: string[] = [];
    for (const c of calls) {
      const f = c.file;
      if (c.call.startsWith('unlink') && c.result === 0 && f && path.dirname(f) === partDir && /\.(log|index)$/.test(f)) events.push(`unlink ${path.basename(f)}`);
      if (c.call === 'fsync' && f === partDir) events.push('fsync dir');
    }
    const unlinks = events.filter((e) => e.startsWith('unlink'));
    assert.ok(unlinks.length >= 4, `retention removed ${unlinks.length} files: ${events.join(', ')}`);
    for (let i = 0; i < events.length; i++)
      if (events[i]!.startsWith('unlink')) assert.equal(events[i + 1], 'fsync dir', `no sync of the directory right after ${events[i]}: ${events.join(', ')}`);
    // Oldest first, each .log before its .index.
    assert.deepEqual(unlinks, [...unlinks].sort((x, y) => x.slice(7, 27).localeCompare(y.slice(7, 27)) || (x.endsWith('.log') ? -1 : 1)));
  });

  it('a retention pass that was removing a deleted topic\'s segments when a topic of the same name was made again removes nothing of the new topic', async function () {
    // The pass's first unlink of segment 0 held back 3 s (strace's delay): meanwhile the
    // topic is deleted (its directory moved to the trash) and made again, whose first
    // segment file has the very path the pass is about to remove.
    if (!hasStrace()) return this.skip();
    const dir = tmpDir();
    const partDir = partitionDir(dir, 't', 0);
    const seg0 = path.join(partDir, '00000000000000000000.log');
    const src = path.join(__dirname, '..', 'src');
    const script = `const { Broker } = require(${JSON.stringify(src)}); const fs = require('fs');
      const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
      (async () => {
        const b = await Broker.open({ dir: ${JSON.stringify(dir)} });
        await b.createTopic('t', { segmentBytes: 8192, retention: { maxBytes: 1 } });
        const p = b.producer();
        for (let i = 0; i < 40; i++) await p.send('t', { value: 'x'.repeat(500) + i });
        for (let i = 0; i < 100 && (await b.describeTopic('t', { groups: false })).partitions[0].startOffset === 0; i++) await sleep(20);
        console.log('retired', (await b.describeTopic('t', { groups: false })).partitions[0].startOffset > 0);
        console.log('pending', fs.existsSync(${JSON.stringify(seg0)}));
        await b.deleteTopic('t');
        await b.createTopic('t');
        await b.producer().send('t', { value: 'new' });
        await sleep(500);
        console.log('after', fs.existsSync(${JSON.stringify(seg0)}));
        await b.close();
      })().catch((e) => { console.error(e); process.exit(1); });`;
    const out = faultNode(script, [partDir, seg0], 'unlink,unlinkat:delay_enter=3000000:when=1');
    assert.match(out, /^retired true$/m, `no retention pass retired segment 0: ${out}`);
    assert.match(out, /^pending true$/m, `the retention pass had removed segment 0 before the delete: ${out}`);
    assert.match(out, /^after true$/m, `the old topic's retention pass removed the new topic's segment file: ${out}`);
    const b = await Broker.open({ dir });
    try {
      assert.deepEqual((await b.read('t', 0, 0)).map((m) => m.value.toString()), ['new']);
    } finally {
      await b.close();
    }
  });

  it('a retired segment that cannot be removed stops the removal of those after it: a reopen meanwhile finds a whole log, nothing acknowledged dropped', async function () {
    const dir = tmpDir();
    let b = await openBroker({ dir });
    await b.createTopic('t', { segmentBytes: 8192, retention: { maxBytes: 1 } });
    await fill(b, 't', 50);
    const first = segmentFiles(dir, 't', 0)[0]!;
    if (spawnSync('chattr', ['+i', first]).status !== 0) {
      await b.close();
      return this.skip();
    }
    try {
      await fill(b, 't', 250);
      let d = await b.describeTopic('t');
      for (let i = 0; i < 40 && d.partitions[0]!.startOffset === 0; i++) {
        await sleep(100);
        d = await b.describeTopic('t');
      }
      assert.ok(d.partitions[0]!.startOffset > 0, 'retention ran');
      // The segments after the one that stayed stay too (their turn is after it), each with its index.
      const logs = segmentFiles(dir, 't', 0);
      assert.ok(logs.length > 2, `${logs.length} segment files`);
      for (const f of logs) assert.ok(fs.existsSync(f.replace(/\.log$/, '.index')), `${path.basename(f)} kept its index`);
      await b.close();
    } finally {
      spawnSync('chattr', ['-i', first]);
    }
    // Reopened before a retention pass could remove them: the log is whole, from the
    // first segment again (retention takes them once more), to the last acknowledged record.
    b = await Broker.open({ dir });
    const part = (await b.describeTopic('t')).partitions[0]!;
    assert.equal(part.endOffset, 300);
    assert.equal(part.startOffset, 0);
    assert.equal((await b.read('t', 0, 0))[0]!.value.toString(), payload(0));
    assert.equal((await b.read('t', 0, 299))[0]!.value.toString(), payload(249));
    await b.close();
  });

  it('after a crash of a run without sync in the cycle that rolled a segment, the one whose seal never came is checked whole too: a lost block is cut off with what followed', async () => {
    const dir = tmpDir();
    const durability = { intervalMs: 50 };
    let b = await openBroker({ dir, durability });
    await b.createTopic('t', { segmentBytes: 128 * 1024 });
    let n = 0;
    while (segmentFiles(dir, 't', 0).length < 2 || n < 260) {
      const x = encodeBatch([{ value: Buffer.alloc(500, n++) }]);
      sealBatch(x);
      await b.publishBatch('t', x, 0);
    }
    await b.close();
    const [L] = segmentFiles(dir, 't', 0);
    // The crash came before the old segment's seal entry (written after its fdatasync),
    // and an unsynced block of it before its newest index entry was lost.
    const Lindex = L!.replace(/\.log$/, '.index');
    fs.truncateSync(Lindex, fs.statSync(Lindex).size - 8);
    const state = JSON.parse(fs.readFileSync(path.join(dir, 'state.json'), 'utf8'));
    fs.writeFileSync(path.join(dir, 'state.json'), JSON.stringify({ ...state, clean: false }));
    overwriteAt(L!, 32768, Buffer.alloc(4096));
    b = await openBroker({ dir, durability });
    const end = b.partitionInfo(b.partitionState('t', 0)).endOffset;
    assert.ok(end > 0 && end < 100, `end offset ${end}`);
    assert.equal(segmentFiles(dir, 't', 0).length, 1, 'the segment after the loss is dropped');
    for (let o = 0; o < end; o++) assert.equal((await b.read('t', 0, o, { maxBytes: 1 }))[0]!.value[0], o & 0xff);
    await b.close();
  });

  it('after a crash of a run without sync, recovery checks the whole last segment: a lost block is cut off, not served as CORRUPT_BATCH', async () => {
    const dir = tmpDir();
    const durability = { intervalMs: 50 };
    let b = await openBroker({ dir, durability });
    await b.createTopic('t');
    for (let i = 0; i < 200; i++) {
      const x = encodeBatch([{ value: Buffer.alloc(500, i) }]);
      sealBatch(x);
      await b.publishBatch('t', x, 0);
    }
    await b.close();
    // What a power cut can leave: state.json still says the run was going, and a block
    // of an unsynced write lies before the newest index entry, lost.
    const state = JSON.parse(fs.readFileSync(path.join(dir, 'state.json'), 'utf8'));
    assert.deepEqual(state, { format: DIR_FORMAT, clean: true, durability, run: b.run });
    fs.writeFileSync(path.join(dir, 'state.json'), JSON.stringify({ ...state, clean: false }));
    overwriteAt(segmentFiles(dir, 't', 0)[0]!, 32768, Buffer.alloc(4096));
    b = await openBroker({ dir, durability });
    const end = b.partitionInfo(b.partitionState('t', 0)).endOffset;
    assert.ok(end > 0 && end < 200, `end offset ${end}`);
    for (let o = 0; o < end; o++) assert.equal((await b.read('t', 0, o, { maxBytes: 1 }))[0]!.value[0], o & 0xff);
    const next = encodeBatch([{ value: 'after' }]);
    sealBatch(next);
    assert.equal((await b.publishBatch('t', next, 0)).baseOffset, end);
    await b.close();
  });

  it('refuses a data directory a newer release wrote (a higher directory format), changing nothing in it', async () => {
    const dir = tmpDir();
    let b = await openBroker({ dir });
    await b.createTopic('t');
    await b.producer().send('t', { value: 'kept' });
    const g = b.consumer({ topic: 't', group: 'g', from: 'earliest' });
    for await (const m of g) {
      m.ack();
      break;
    }
    await g.close();
    await b.close();
    const stateFile = path.join(dir, 'state.json');
    const state = JSON.parse(fs.readFileSync(stateFile, 'utf8')) as Record<string, unknown>;
    assert.equal(state.format, DIR_FORMAT);
    // Every file's bytes and times, to see that the refused open left them alone.
    const snapshot = () => {
      const out: Record<string, string> = {};
      const walk = (d: string) => {
        for (const e of fs.readdirSync(d, { withFileTypes: true })) {
          const f = path.join(d, e.name);
          if (e.isDirectory()) {
            out[`${path.relative(dir, f)}/`] = 'dir';
            walk(f);
          } else if (e.name !== '.lock') {
            // (.lock: the one file a refused open touches, saying who holds the directory)
            out[path.relative(dir, f)] = `${fs.readFileSync(f).toString('base64')} ${fs.statSync(f).mtimeMs}`;
          }
        }
      };
      walk(dir);
      return out;
    };
    for (const format of [DIR_FORMAT + 1, 'two', 0]) {
      fs.writeFileSync(stateFile, JSON.stringify({ ...state, clean: false, format }));
      fs.mkdirSync(path.join(dir, 'trash', 'x'), { recursive: true }); // an open empties trash/: not this one
      const before = snapshot();
      const e = await expectCode(openBroker({ dir }), 'FAILED_PRECONDITION');
      assert.match(e.message, typeof format === 'number' && format > DIR_FORMAT ? new RegExp(`newer uringmq \\(directory format ${DIR_FORMAT + 1}; this version reads up to ${DIR_FORMAT}\\).*nothing in the directory was changed but its lock file`) : /unknown directory format/);
      assert.deepEqual(snapshot(), before, 'the refused open changed a file');
      assert.ok(fs.existsSync(path.join(dir, 'trash', 'x')));
    }
    // A directory holding nothing else: the refused open makes nothing in it (no topics/).
    const bare = tmpDir();
    fs.writeFileSync(path.join(bare, 'state.json'), JSON.stringify({ format: DIR_FORMAT + 1, clean: true, durability: 'sync', run: 1 }));
    await expectCode(openBroker({ dir: bare }), 'FAILED_PRECONDITION');
    assert.deepEqual(fs.readdirSync(bare).filter((n) => n !== '.lock'), ['state.json']);
    // Written by this format, format 1 (before offsets files of version 4) or before the
    // field existed: opens, and the data is there; its close marks it as this format's.
    for (const format of [DIR_FORMAT, 1, undefined]) {
      fs.writeFileSync(stateFile, JSON.stringify({ ...state, format }));
      b = await openBroker({ dir });
      assert.deepEqual((await b.read('t', 0, 0)).map((m) => m.value.toString()), ['kept']);
      assert.equal((await b.groups.committedOffsets('g', 't'))[0], 1);
      await b.close();
      assert.equal(JSON.parse(fs.readFileSync(stateFile, 'utf8')).format, DIR_FORMAT);
    }
  });

  it('applies retention to partitions nobody appends to after a reopen', async () => {
    const dir = tmpDir();
    let b = await openBroker({ dir });
    await b.createTopic('t', { segmentBytes: 8192 });
    await fill(b, 't', 1000);
    await b.close();
    // The retention setting arrives with the reopen (as after a config change).
    const cfgFile = path.join(dir, 'topics', 't', 'topic.json');
    const cfg = JSON.parse(fs.readFileSync(cfgFile, 'utf8'));
    cfg.retention = { maxBytes: 32 * 1024 };
    fs.writeFileSync(cfgFile, JSON.stringify(cfg));
    b = await Broker.open({ dir });
    let d = await b.describeTopic('t');
    for (let i = 0; i < 40 && d.partitions[0]!.startOffset === 0; i++) {
      await sleep(100);
      d = await b.describeTopic('t');
    }
    assert.ok(d.partitions[0]!.startOffset > 0, 'retention never ran on the idle partition');
    assert.equal(d.partitions[0]!.endOffset, 1000);
    await b.close();
  });

  /** Holds libuv's pool (4 threads) for about `ms`, so a read queued now waits that long. */
  function holdThreadPool(ms: number): Promise<unknown> {
    const t0 = performance.now();
    crypto.pbkdf2Sync('x', 'y', 100_000, 32, 'sha256');
    const perMs = 100_000 / Math.max(1, performance.now() - t0);
    const share = Math.min(1, os.availableParallelism() / 4); // 4 threads on fewer CPUs each run slower
    return Promise.all(Array.from({ length: 4 }, () => new Promise((r) => crypto.pbkdf2('x', 'y', Math.floor(perMs * ms * share), 32, 'sha256', r))));
  }

  it('an offset reader whose read waited while retention removed its position goes on from the new start', async function () {
    this.timeout(60_000);
    const b = await openBroker({ tailCacheBytes: 0 });
    try {
      await b.createTopic('r', { segmentBytes: 8192, retention: { maxAgeMs: 800 } });
      const p = b.producer();
      for (let i = 0; i < 100; i++) await p.send('r', { value: `${i}-${'x'.repeat(500)}` });
      const it = b.consumer({ topic: 'r', partition: 0, from: 'earliest' })[Symbol.asyncIterator]();
      const held = holdThreadPool(2500); // the read of offset 0 waits behind it; retention runs meanwhile
      const r = await it.next().catch((e: Error) => e);
      await held;
      assert.ok(!(r instanceof Error), `the reader failed: ${String(r)}`);
      const start = (await b.describeTopic('r')).partitions[0]!.startOffset;
      assert.ok(start > 0, 'retention did not run while the read waited');
      assert.equal(r.value!.offset, start, 'not from the new start');
      await it.return!();
    } finally {
      await b.close();
    }
  });

  it('a group member whose read waited while retention removed its position stays, and the group moves past it', async function () {
    this.timeout(60_000);
    const b = await openBroker({ tailCacheBytes: 0 });
    try {
      await b.createTopic('r', { segmentBytes: 8192, retention: { maxAgeMs: 800 } });
      const p = b.producer();
      for (let i = 0; i < 100; i++) await p.send('r', { value: `${i}-${'x'.repeat(500)}` });
      const it = b.consumer({ topic: 'r', group: 'g', from: 'earliest', ackDeadlineMs: 60_000 })[Symbol.asyncIterator]();
      for (let i = 0; i < 100; i++) {
        const m = (await it.next()).value!;
        m.ack();
      }
      const next = it.next().catch((e: Error) => e);
      await sleep(100);
      const held = holdThreadPool(2500);
      for (let i = 0; i < 100; i++) await p.send('r', { value: `${i}-${'x'.repeat(500)}` });
      await held;
      const r = await Promise.race([next, sleep(10_000).then(() => 'no message within 10 s')]);
      assert.ok(typeof r !== 'string' && !(r instanceof Error), `the member failed: ${String(r)}`);
      assert.ok(r.value!.offset >= 100);
      assert.ok((await b.describeTopic('r')).partitions[0]!.startOffset > 0, 'retention did not run');
      await it.return!();
    } finally {
      await b.close();
    }
  });

  it('deletes segments older than retention.maxAgeMs, never the active one', async () => {
    const dir = tmpDir();
    const b = await openBroker({ dir });
    await b.createTopic('t', { segmentBytes: 8192, retention: { maxAgeMs: 300 } });
    await fill(b, 't', 200);
    const before = segmentFiles(dir, 't', 0).length;
    assert.ok(before > 2);
    let d = await b.describeTopic('t');
    // (The I/O thread takes a segment out of the log, then unlinks its files: the files
    // may trail what describeTopic says by a moment.)
    for (let i = 0; i < 150 && (d.partitions[0]!.segments > 1 || segmentFiles(dir, 't', 0).length > 1); i++) {
      await sleep(100);
      d = await b.describeTopic('t');
    }
    assert.equal(d.partitions[0]!.segments, 1);
    assert.equal(segmentFiles(dir, 't', 0).length, 1);
    assert.equal(d.partitions[0]!.endOffset, 200);
    await b.producer().send('t', { value: 'after', partition: 0 });
    assert.equal((await b.read('t', 0, 200))[0]!.value.toString(), 'after');
    await b.close();
  });

  it('after a reopen, retention.maxAgeMs counts from a sealed segment\'s last write, not from the roll that sealed it later (nor from the open)', async function () {
    this.timeout(30_000);
    const dir = tmpDir();
    let b = await openBroker({ dir });
    try {
      await b.createTopic('t', { segmentBytes: 8192, retention: { maxAgeMs: 4000 } });
      await b.producer().send('t', { value: 'x'.repeat(3000), partition: 0 });
      const lastWrite = Date.now();
      await sleep(3000);
      await b.producer().send('t', { value: 'y'.repeat(6000), partition: 0 }); // does not fit: rolls, sealing the first segment
      const first = segmentFiles(dir, 't', 0)[0]!;
      await b.close();
      const mtime = fs.statSync(first).mtimeMs;
      assert.ok(Math.abs(mtime - lastWrite) < 500, `the sealed segment's mtime is ${Math.round(mtime - lastWrite)} ms after its last write`);
      b = await openBroker({ dir });
      // Due at lastWrite + 4 s; a retention pass runs every second.
      while ((await b.describeTopic('t')).partitions[0]!.segments > 1) {
        assert.ok(Date.now() < lastWrite + 5800, 'the segment outlived its retention: its age was counted from its seal');
        await sleep(100);
      }
      assert.equal((await b.describeTopic('t')).partitions[0]!.startOffset, 1);
    } finally {
      await b.close();
    }
  });

  it('rebuilds a missing or corrupt index', async () => {
    const dir = tmpDir();
    let b = await openBroker({ dir });
    await b.createTopic('t', { segmentBytes: 64 * 1024 });
    await fill(b, 't', 1000);
    await b.close();
    const idx = segmentFiles(dir, 't', 0, '.index');
    fs.rmSync(idx[0]!);
    fs.writeFileSync(idx[1]!, Buffer.from('garbage that is not an index at all!!!'));
    fs.writeFileSync(idx.at(-1)!, Buffer.alloc(0));
    b = await Broker.open({ dir });
    assert.ok(fs.statSync(segmentFiles(dir, 't', 0, '.index')[0]!).size > 0, 'index not rebuilt');
    const all = await readAll(b, 't', 0);
    assert.equal(all.length, 1000);
    const m = await b.read('t', 0, 555, { maxBytes: 1 });
    assert.equal(m[0]!.value.toString(), payload(555));
    await b.close();
  });

  it('truncates a torn tail and continues with contiguous offsets', async () => {
    const dir = tmpDir();
    let b = await openBroker({ dir });
    await b.createTopic('t');
    await fill(b, 't', 100, 10);
    await b.close();
    const seg = segmentFiles(dir, 't', 0).at(-1)!;
    // Find the end of data, then write half of a copy of the first batch after it:
    // what a crash in the middle of a write leaves behind.
    const data = fs.readFileSync(seg);
    let end = 0;
    while (end + 8 <= data.length && data.readUInt32LE(end) === 0x424d5155) end += data.readUInt32LE(end + 4);
    const firstLen = data.readUInt32LE(4);
    const torn = Buffer.from(data.subarray(0, firstLen));
    torn.writeUInt32LE(100, 8); // the offset it would have had
    overwriteAt(seg, end, torn.subarray(0, firstLen >> 1));

    b = await Broker.open({ dir });
    assert.equal((await b.describeTopic('t')).partitions[0]!.endOffset, 100);
    assert.ok(fs.statSync(seg).size <= end + 4096, 'torn bytes were not cut off');
    assert.deepEqual(await b.producer().send('t', { value: 'new', partition: 0 }), { partition: 0, offset: 100 });
    const all = await readAll(b, 't', 0);
    assert.equal(all.length, 101);
    assert.equal(all[99]!.value.toString(), payload(99));
    assert.equal(all[100]!.value.toString(), 'new');
    await b.close();
  });

  it('a flipped bit inside the log is never served: that batch reads as CORRUPT_BATCH, the rest still reads', async () => {
    const dir = tmpDir();
    let b = await openBroker({ dir });
    await b.createTopic('t');
    await fill(b, 't', 100, 10);
    await b.close();
    const seg = segmentFiles(dir, 't', 0)[0]!;
    const data = fs.readFileSync(seg);
    let pos = 0;
    for (let i = 0; i < 5; i++) pos += data.readUInt32LE(pos + 4); // start of the 6th batch (offset 50)
    overwriteAt(seg, pos + 100, Buffer.from([data[pos + 100]! ^ 0x10]));
    b = await Broker.open({ dir });
    // Recovery scans only from the last index entry; older bytes are checked on read.
    assert.equal((await b.describeTopic('t')).partitions[0]!.endOffset, 100);
    const e = await b.read('t', 0, 50).then(() => null, (err: Error & { code?: string }) => err);
    assert.equal(e?.code, 'CORRUPT_BATCH');
    assert.match(e!.message, /offset 50/);
    // a read that would span it stops just before it
    assert.deepEqual((await b.read('t', 0, 40, { maxBytes: 1 << 20 })).map((m) => m.offset), Array.from({ length: 10 }, (_, i) => 40 + i));
    assert.equal((await b.read('t', 0, 40, { maxBytes: 1 }))[0]!.offset, 40);
    assert.equal((await b.read('t', 0, 60, { maxBytes: 1 }))[0]!.value.toString(), payload(60));
    await b.close();
  });

  it('drops what follows a segment torn while it was being sealed (a crash in the cycle that rolled it)', async () => {
    const { dir, segs } = await segmentedLog();
    // The crash as it can happen: the cycle that rolled the next-to-last segment wrote
    // its tail and the new segment's start; the tail was torn and its seal (the index's
    // seal entry, written once the data is durable) never came. Nothing past the tear
    // was acknowledged.
    const torn = segs[segs.length - 2]!;
    fs.truncateSync(torn, fs.statSync(torn).size - 10);
    const index = torn.replace(/\.log$/, '.index');
    fs.truncateSync(index, fs.statSync(index).size - 8);
    const tornNext = Number(path.basename(segs[segs.length - 1]!, '.log'));
    const b = await Broker.open({ dir });
    const part = (await b.describeTopic('t')).partitions[0]!;
    assert.ok(part.endOffset < tornNext, `end ${part.endOffset} should be before ${tornNext}`);
    assert.equal(segmentFiles(dir, 't', 0).length, segs.length - 1);
    const all = await readAll(b, 't', 0);
    assert.deepEqual(all.map((m) => m.offset), Array.from({ length: part.endOffset }, (_, i) => i));
    assert.equal((await b.producer().send('t', { value: 'z', partition: 0 })).offset, part.endOffset);
    await b.close();
  });

  it("the index of a segment that retention removed, left by a crash between the removal of its .log and its .index, is removed at the next open; the log opens from the next segment", async () => {
    const { dir, segs } = await segmentedLog();
    // What retention leaves when a crash comes between its two unlinks: the .log of the
    // oldest segment gone, its .index still there.
    fs.rmSync(segs[0]!);
    const orphan = segs[0]!.replace(/\.log$/, '.index');
    assert.ok(fs.existsSync(orphan));
    const start = Number(path.basename(segs[1]!, '.log'));
    const b = await Broker.open({ dir });
    try {
      assert.ok(!fs.existsSync(orphan), 'the orphan index was removed');
      assert.deepEqual(segmentFiles(dir, 't', 0, '.index'), segs.slice(1).map((f) => f.replace(/\.log$/, '.index')), 'the other indexes kept');
      const part = (await b.describeTopic('t')).partitions[0]!;
      assert.equal(part.startOffset, start);
      assert.deepEqual((await readAll(b, 't', 0, start)).map((m) => m.offset), Array.from({ length: 300 - start }, (_, i) => start + i));
    } finally {
      await b.close();
    }
  });

  it('an orphan .index that cannot be removed (a non-empty directory by that name) is warned of and left: the partition opens from its first segment', async () => {
    const { dir, segs } = await segmentedLog();
    fs.rmSync(segs[0]!); // retention's removal of the .log, the crash before its .index
    const orphan = segs[0]!.replace(/\.log$/, '.index');
    // What no unlink removes, root's included (EISDIR).
    fs.rmSync(orphan);
    fs.mkdirSync(orphan);
    fs.writeFileSync(path.join(orphan, 'x'), 'x');
    const start = Number(path.basename(segs[1]!, '.log'));
    const warnings: string[] = [];
    const onWarning = (w: Error) => {
      if (w.name === 'UringmqWarning') warnings.push(w.message);
    };
    process.on('warning', onWarning);
    const b = await openBroker({ dir });
    try {
      const part = (await b.describeTopic('t')).partitions[0]!;
      assert.equal(part.startOffset, start);
      assert.deepEqual((await readAll(b, 't', 0, start)).map((m) => m.offset), Array.from({ length: 300 - start }, (_, i) => start + i));
      assert.equal((await b.producer().send('t', { value: 'next', partition: 0 })).offset, 300);
      // Relayed with the core's other warnings (every second).
      await waitFor(() => warnings.some((w) => w.includes(path.basename(orphan))), 10_000, 'a warning naming the orphan');
      const w = warnings.find((x) => x.includes(path.basename(orphan)))!;
      assert.ok(w.startsWith('t/0: '), w);
      assert.match(w, /Is a directory/);
      assert.ok(fs.existsSync(path.join(orphan, 'x')), 'left as it was');
    } finally {
      process.off('warning', onWarning);
      await b.close();
    }
  });

  it("an orphan .index anywhere (between segments, at the offset the next segment will start at, in a partition with no .log) is never taken for a segment's: the open, appends across a roll, reads, retention and the next opens work, and each orphan is overwritten or removed once older than the first segment", async () => {
    const { dir, segs } = await segmentedLog();
    const name = (base: number, ext: string) => `${String(base).padStart(20, '0')}${ext}`;
    const pdir = path.dirname(segs[0]!);
    // Entries that would pass for an index of anything: ascending, and the last points
    // far past any file end and names an offset (what a seal entry of a damaged file
    // looks like), so a log that took this file for its own would trust it.
    const garbage = Buffer.alloc(24);
    for (const [i, [rel, pos]] of [[1, 100], [2, 200], [400, 1 << 20]].entries()) {
      garbage.writeUInt32LE(rel!, i * 8);
      garbage.writeUInt32LE(pos!, i * 8 + 4);
    }
    const b1 = Number(path.basename(segs[1]!, '.log'));
    const middle = path.join(pdir, name(b1 + 1, '.index')); // between two segments' bases
    const atRoll = path.join(pdir, name(300, '.index')); // the base the next roll will take
    fs.writeFileSync(middle, garbage);
    fs.writeFileSync(atRoll, garbage);
    const logsBefore = segmentFiles(dir, 't', 0).map((f) => `${path.basename(f)}:${fs.statSync(f).size}`);
    let b = await Broker.open({ dir });
    // A second topic whose only partition holds nothing but orphans (its files removed by hand).
    await b.createTopic('e', { segmentBytes: 8192 });
    await b.close();
    const edir = partitionDir(dir, 'e', 0);
    for (const f of fs.readdirSync(edir)) fs.rmSync(path.join(edir, f));
    fs.writeFileSync(path.join(edir, name(0, '.index')), garbage);
    fs.writeFileSync(path.join(edir, name(50, '.index')), garbage);
    b = await Broker.open({ dir });
    try {
      let d = (await b.describeTopic('t')).partitions[0]!;
      assert.deepEqual([d.startOffset, d.endOffset, d.segments], [0, 300, segs.length], 'the orphans are no segments');
      assert.deepEqual(segmentFiles(dir, 't', 0).slice(0, -1).map((f) => `${path.basename(f)}:${fs.statSync(f).size}`), logsBefore.slice(0, -1), 'no segment cut');
      assert.deepEqual((await readAll(b, 't', 0)).map((m) => m.value.toString()), Array.from({ length: 300 }, (_, i) => payload(i)));
      // A batch that does not fit the active segment rolls it: the new segment starts at
      // 300, where the orphan is, and its index must be its own, not the orphan's.
      const big = 'y'.repeat(7000);
      assert.equal((await b.producer().send('t', { value: big, partition: 0 })).offset, 300);
      assert.ok(fs.existsSync(path.join(pdir, name(300, '.log'))), 'rolled at 300');
      assert.equal((await b.producer().send('t', { value: 'after', partition: 0 })).offset, 301);
      assert.deepEqual((await b.read('t', 0, 300)).map((m) => m.value.toString()), [big, 'after']);
      const e = (await b.describeTopic('e')).partitions[0]!;
      assert.deepEqual([e.startOffset, e.endOffset], [0, 0]);
      assert.equal((await b.producer().send('e', { value: 'e0', partition: 0 })).offset, 0);
      assert.equal((await b.read('e', 0, 0))[0]!.value.toString(), 'e0');
      d = (await b.describeTopic('t')).partitions[0]!;
      assert.deepEqual([d.startOffset, d.endOffset], [0, 302]);
    } finally {
      await b.close();
    }
    // Reopened: the segment at 300 (sealed or not) recovers from its own index.
    b = await Broker.open({ dir });
    try {
      assert.deepEqual((await b.read('t', 0, 300)).map((m) => m.value.toString().slice(0, 5)), ['yyyyy', 'after']);
      assert.equal((await b.producer().send('t', { value: 'again', partition: 0 })).offset, 302);
    } finally {
      await b.close();
    }
    // Retention past the middle orphan: it is left alone while the broker runs, and
    // removed by the next open, as the index of a segment older than the first.
    const cfgFile = path.join(dir, 'topics', 't', 'topic.json');
    fs.writeFileSync(cfgFile, JSON.stringify({ ...JSON.parse(fs.readFileSync(cfgFile, 'utf8')), retention: { maxBytes: 1 } }));
    b = await Broker.open({ dir });
    try {
      let d = (await b.describeTopic('t')).partitions[0]!;
      for (let i = 0; i < 100 && d.startOffset < 300; i++) {
        await sleep(100);
        d = (await b.describeTopic('t')).partitions[0]!;
      }
      assert.equal(d.startOffset, 300, 'retention ran past the orphan');
      assert.equal(d.endOffset, 303);
      for (let i = 0; i < 100 && path.basename(segmentFiles(dir, 't', 0)[0]!) !== name(300, '.log'); i++) await sleep(50);
      assert.equal(path.basename(segmentFiles(dir, 't', 0)[0]!), name(300, '.log'));
    } finally {
      await b.close();
    }
    b = await Broker.open({ dir });
    try {
      assert.deepEqual((await b.read('t', 0, 300)).map((m) => m.offset), [300, 301, 302]);
      const logs = (ext: string, topic: string) => segmentFiles(dir, topic, 0, ext).map((f) => path.basename(f, ext));
      assert.deepEqual(logs('.index', 't'), logs('.log', 't'), 'every .index left is a segment\'s');
      assert.ok(!fs.existsSync(middle), 'the orphan between segments was removed once older than the first');
      assert.ok(!fs.readFileSync(atRoll).equals(garbage), "the orphan at 300 was overwritten by the segment's own index");
      // The partition that held only orphans: the one at 0 became its index; the one at 50 stays until a segment passes it.
      assert.deepEqual(logs('.log', 'e'), [name(0, '')]);
      assert.equal((await b.read('e', 0, 0))[0]!.value.toString(), 'e0');
    } finally {
      await b.close();
    }
  });

  it('damage inside a sealed segment is not taken for a torn tail: nothing is cut off or dropped, the damaged batch reads as CORRUPT_BATCH', async () => {
    const { dir, segs } = await segmentedLog(5);
    let b: Broker;
    const sizes = segs.map((f) => fs.statSync(f).size);
    // A flipped bit in the last batch of the first segment, and (a second case) a
    // lost index of the second with a bad header in it: a scan at open would stop there.
    const first = fs.readFileSync(segs[0]!);
    let last = 0;
    for (let pos = 0; pos < first.length; pos += first.readUInt32LE(pos + 4)) last = pos;
    const lastBase = Number(first.readBigInt64LE(last + 8));
    overwriteAt(segs[0]!, last + 70, Buffer.from([first[last + 70]! ^ 0x01]));
    const second = fs.readFileSync(segs[1]!);
    const secondBase = Number(path.basename(segs[1]!, '.log'));
    overwriteAt(segs[1]!, second.readUInt32LE(4), Buffer.from('garbage!'));
    fs.rmSync(segs[1]!.replace(/\.log$/, '.index'));
    b = await Broker.open({ dir });
    assert.equal((await b.describeTopic('t')).partitions[0]!.endOffset, 300, 'nothing dropped');
    assert.deepEqual(segmentFiles(dir, 't', 0).map((f) => fs.statSync(f).size), sizes, 'no file cut');
    const e = await b.read('t', 0, lastBase).then(() => null, (err: Error & { code?: string }) => err);
    assert.equal(e?.code, 'CORRUPT_BATCH');
    assert.match(e!.message, new RegExp(`offset ${lastBase}\\b`));
    assert.equal((await b.read('t', 0, 0, { maxBytes: 1 }))[0]!.value.toString(), payload(0));
    assert.equal((await b.read('t', 0, secondBase, { maxBytes: 1 }))[0]!.value.toString(), payload(secondBase));
    const after = Number(path.basename(segs[2]!, '.log'));
    assert.deepEqual((await readAll(b, 't', 0, after)).map((m) => m.offset), Array.from({ length: 300 - after }, (_, i) => after + i));
    assert.equal((await b.producer().send('t', { value: 'z', partition: 0 })).offset, 300);
    await b.close();
    // ...and the same on the next open (the second segment's index was rebuilt, sealed).
    b = await Broker.open({ dir });
    assert.equal((await b.describeTopic('t')).partitions[0]!.endOffset, 301);
    await b.close();
  });

  it('a sealed segment whose file lost its end, the one before the active segment too, is damaged, not torn: nothing after it is dropped, the lost records read as CORRUPT_BATCH', async () => {
    // Only the seal entry of a segment tells the open it was sealed when no segment after
    // it is (the one before the active segment): with its file cut short (damage, or a
    // copy that stopped early) the entry points past the end, and the open took the
    // segment for one whose roll a crash interrupted, cut it there and deleted the active
    // segment with its acknowledged records. An entry naming the next file's base offset
    // is a seal entry (no batch of the segment has that offset).
    for (const cut of ['mid-batch', 'batch boundary', 'below index entries', 'empty'] as const) {
      const { dir, segs } = await segmentedLog(5);
      const A = segs[segs.length - 2]!;
      const next = Number(path.basename(segs[segs.length - 1]!, '.log'));
      const data = fs.readFileSync(A);
      const starts = batchStarts(data);
      const last = starts.at(-1)!;
      const size = { 'mid-batch': data.length - 100, 'batch boundary': last, 'below index entries': 1000, empty: 0 }[cut];
      const lostFrom = Number(data.readBigInt64LE(starts.find((p) => p + data.readUInt32LE(p + 4) > size)! + 8)); // the first offset it lost
      fs.truncateSync(A, size);
      const files = segmentFiles(dir, 't', 0).map((f) => `${path.basename(f)}:${fs.statSync(f).size}`);
      for (let open = 0; open < 2; open++) {
        const b = await Broker.open({ dir });
        assert.equal((await b.describeTopic('t')).partitions[0]!.endOffset, 300 + open, `${cut}: nothing dropped`);
        assert.deepEqual(segmentFiles(dir, 't', 0).slice(0, -1).map((f) => `${path.basename(f)}:${fs.statSync(f).size}`), files.slice(0, -1), `${cut}: no file cut or removed`);
        assert.deepEqual((await readAll(b, 't', 0, next)).map((m) => m.value.toString()), [...Array.from({ length: 300 - next }, (_, i) => payload(next + i)), ...(open ? ['z'] : [])]);
        const e = await b.read('t', 0, lostFrom).then(() => null, (err: Error & { code?: string }) => err);
        assert.equal(e?.code, 'CORRUPT_BATCH', `${cut}: offset ${lostFrom}`);
        // Where to go on: cut at a batch boundary the message said only "past the end".
        assert.match(e!.message, new RegExp(`the next segment starts at offset ${next}$`), `${cut}: ${e!.message}`);
        if (lostFrom > Number(path.basename(A, '.log'))) assert.equal((await b.read('t', 0, lostFrom - 1, { maxBytes: 1 }))[0]!.value.toString(), payload(lostFrom - 1));
        if (open === 0) assert.equal((await b.producer().send('t', { value: 'z', partition: 0 })).offset, 300);
        await b.close();
      }
    }
  });

  it('an index that cannot be read (EIO) fails the open with IO_ERROR naming it: not taken for "no seal entry", which made damage before it look like a torn tail and dropped the segments after', async function () {
    if (!hasStrace()) return this.skip();
    const { dir, segs } = await segmentedLog(5);
    // As in the test above: a segment's index lost and a bad header in it, which the
    // next segment's seal entry (the last sealed one's) shows to be damage, not a torn tail.
    const damaged = segs[segs.length - 3]!;
    const data = fs.readFileSync(damaged);
    overwriteAt(damaged, data.readUInt32LE(4), Buffer.from('garbage!'));
    fs.rmSync(damaged.replace(/\.log$/, '.index'));
    const listing = () => fs.readdirSync(path.dirname(segs[0]!)).sort().map((f) => [f, fs.statSync(path.join(path.dirname(segs[0]!), f)).size]);
    const before = listing();
    // The last sealed segment's index: its first open fails with EIO (strace's fault injection).
    const sealedIndex = segs[segs.length - 2]!.replace(/\.log$/, '.index');
    const src = path.join(__dirname, '..', 'src');
    const out = faultNode(
      `require(${JSON.stringify(src)}).Broker.open({ dir: ${JSON.stringify(dir)} }).then(async (b) => { console.log('opened', (await b.describeTopic('t')).partitions[0].endOffset); await b.close(); }, (e) => console.log('refused', e.code, e.message))`,
      [sealedIndex],
      'openat:error=EIO:when=1',
    );
    assert.match(out, /^refused IO_ERROR /, out);
    assert.ok(out.includes(sealedIndex), out);
    assert.deepEqual(listing(), before, 'the refused open changed the partition directory');
    const b = await Broker.open({ dir }); // the index readable again: nothing was lost
    assert.equal((await b.describeTopic('t')).partitions[0]!.endOffset, 300);
    await b.close();
  });

  it("an open that rewrites a sealed segment's index and fails (a full disk) leaves the old index, seal entry and all: the next open still finds it sealed and drops nothing", async function () {
    // The rewrite went over the old file in place (cut to nothing, then written): a write
    // that failed, or a crash before it, took the seal entry away, and the next open took
    // the damage in the segment for a torn tail, cut it and deleted the active segment.
    if (!hasStrace()) return this.skip();
    const { dir, segs } = await segmentedLog(5);
    // The segment before the active one (only its own seal entry says it is sealed): a
    // flipped bit in its last batch and an index entry pointing past its end, which the
    // open rebuilds the index for.
    const A = segs[segs.length - 2]!;
    const index = A.replace(/\.log$/, '.index');
    const data = fs.readFileSync(A);
    const last = batchStarts(data).pop()!;
    const lastBase = Number(data.readBigInt64LE(last + 8));
    overwriteAt(A, last + 70, Buffer.from([data[last + 70]! ^ 0x01]));
    overwriteAt(index, 4, Buffer.from([0xff, 0xff, 0xff, 0x00]));
    const listing = () => fs.readdirSync(path.dirname(A)).sort().map((f) => [f, fs.readFileSync(path.join(path.dirname(A), f)).toString('hex')]);
    const before = listing();
    const src = path.join(__dirname, '..', 'src');
    const out = faultNode(
      `require(${JSON.stringify(src)}).Broker.open({ dir: ${JSON.stringify(dir)} }).then(async (b) => { console.log('opened'); await b.close(); }, (e) => console.log('refused', e.code, e.message))`,
      [index, `${index}.tmp`],
      'pwrite64:error=ENOSPC',
    );
    assert.match(out, /^refused IO_ERROR .*No space left/, out);
    assert.deepEqual(listing(), before, 'the refused open changed the partition directory');
    for (let open = 0; open < 2; open++) {
      const b = await Broker.open({ dir });
      assert.equal((await b.describeTopic('t')).partitions[0]!.endOffset, 300, 'nothing dropped');
      const next = Number(path.basename(segs[segs.length - 1]!, '.log'));
      assert.deepEqual((await readAll(b, 't', 0, next)).map((m) => m.value.toString()), Array.from({ length: 300 - next }, (_, i) => payload(next + i)));
      await expectCode(b.read('t', 0, lastBase), 'CORRUPT_BATCH');
      await b.close();
    }
  });

  it('an index write that fails after a cycle made its batches readable fences the partition after that cycle: its appends are acknowledged (they are written, and read), the next ones refused', async function () {
    if (!hasStrace()) return this.skip();
    const dir = tmpDir();
    let b = await openBroker({ dir });
    await b.createTopic('t');
    await b.close();
    const index = path.join(partitionDir(dir, 't', 0), '00000000000000000000.index');
    assert.ok(fs.existsSync(index));
    // Every write to the active segment's index fails with EIO (strace's fault
    // injection): the first comes with the batch that passes 4 KiB into the segment.
    const src = path.join(__dirname, '..', 'src');
    const out = faultNode(
      `require(${JSON.stringify(src)}).Broker.open({ dir: ${JSON.stringify(dir)}, durability: 'sync' }).then(async (b) => {
          const out = [];
          for (let i = 0; i < 5; i++) out.push(await b.producer().send('t', { value: 'v'.repeat(1500) + i, partition: 0 }).then((r) => r.offset, (e) => e.code));
          console.log(JSON.stringify(out));
          await b.close().catch(() => undefined);
        })`,
      [index],
      'pwrite64:error=EIO',
    );
    const sent = JSON.parse(out.trim().split('\n').at(-1)!) as Array<number | string>;
    const acked = sent.filter((x): x is number => typeof x === 'number');
    assert.ok(sent.includes('IO_ERROR'), `no write was refused (the index write never failed?): ${out}`);
    // Acknowledged, then refused: never a refusal followed by an acknowledgment.
    assert.deepEqual(sent, [...acked, ...sent.slice(acked.length).map(() => 'IO_ERROR')], out);
    b = await Broker.open({ dir });
    const read = await b.read('t', 0, 0);
    assert.deepEqual(read.map((m) => m.offset), acked, `read back what was acknowledged, no more (sent: ${out.trim()})`);
    await b.close();
  });

  it('with durability interval, a fence syncs what the partition acknowledged before it (the segment whose seal failed, and the active one): no later sync pass covers a fenced partition', async function () {
    if (!hasStrace()) return this.skip();
    const dir = tmpDir();
    let b = await openBroker({ dir });
    await b.createTopic('t', { segmentBytes: 8192 }); // five 1.5 KB records a segment: 0-4, 5-9, 10-
    await b.close();
    const part = partitionDir(dir, 't', 0);
    const [second, third] = ['00000000000000000005.log', '00000000000000000010.log'].map((f) => path.join(part, f)) as [string, string];
    // An interval no test outlasts: only a fence (or the close) can sync. The second
    // segment's seal fails in its ftruncate, before its own fdatasync: its records and the
    // third segment's first were acknowledged (ff0b8cc), never synced. strace -y names
    // each fd's file.
    const trace = path.join(tmpDir(), 'trace');
    const src = path.join(__dirname, '..', 'src');
    const r = spawnSync(
      'strace',
      ['-f', '-qq', '-y', '-o', trace, '-P', second, '-P', third, '-e', 'trace=ftruncate,fdatasync,fsync', '-e', 'inject=ftruncate:error=EIO', process.execPath, '--require', 'tsx/cjs', '-e',
        `require(${JSON.stringify(src)}).Broker.open({ dir: ${JSON.stringify(dir)}, durability: { intervalMs: 3600000 } }).then(async (b) => {
          const out = [];
          for (let i = 0; i < 13; i++) out.push(await b.producer().send('t', { value: 'v'.repeat(1500) + i, partition: 0 }).then((r) => r.offset, (e) => e.code + ' ' + e.message));
          console.log(JSON.stringify(out));
          await b.close().catch(() => undefined);
        })`],
      { encoding: 'utf8', timeout: 60_000 },
    );
    assert.equal(r.status, 0, r.stderr);
    const sent = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Array<number | string>;
    const acked = sent.filter((x): x is number => typeof x === 'number');
    assert.deepEqual(acked, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10], r.stdout);
    assert.match(String(sent[11]), /^IO_ERROR .*ftruncate sealed segment/, r.stdout);
    const lines = fs.readFileSync(trace, 'utf8').split('\n');
    // (strace pads the pid column: "8786  ftruncate(…", "12345 ftruncate(…")
    const failedSeal = lines.findIndex((l) => /^\d+\s+ftruncate\(/.test(l) && l.includes(second) && l.includes('= -1 EIO'));
    assert.ok(failedSeal >= 0, `the seal's ftruncate did not fail:\n${lines.join('\n')}`);
    for (const file of [second, third]) {
      const synced = lines.some((l, i) => i > failedSeal && /\b(fdatasync|fsync)\(/.test(l) && l.includes(file) && /= 0$/.test(l));
      assert.ok(synced, `acknowledged records in ${path.basename(file)} were never synced after the fence:\n${lines.join('\n')}`);
    }
    b = await Broker.open({ dir });
    const read: number[] = [];
    for (const from of [0, 5, 10]) read.push(...(await b.read('t', 0, from)).map((m) => m.offset));
    assert.deepEqual(read, acked);
    assert.equal((await b.describeTopic('t')).partitions[0]!.endOffset, 11);
    await b.close();
  });

  it('with durability none, a sync batch whose cycle failed to seal the segment before it (its fdatasync failing) is refused, not acknowledged: that data was never made durable, and a crash dropped the batch with it', async function () {
    if (!hasStrace()) return this.skip();
    const dir = tmpDir();
    let b = await openBroker({ dir, durability: 'none' });
    await b.createTopic('t', { segmentBytes: 8192 });
    await b.close();
    const seg0 = path.join(partitionDir(dir, 't', 0), '00000000000000000000.log');
    assert.ok(fs.existsSync(seg0));
    // Every fdatasync of segment 0 fails with EIO: the first is its seal, in the cycle of
    // the sync batch that rolls the segment (nothing syncs before with durability none).
    const src = path.join(__dirname, '..', 'src');
    const out = faultNode(
      `require(${JSON.stringify(src)}).Broker.open({ dir: ${JSON.stringify(dir)}, durability: 'none' }).then(async (b) => {
          const out = [];
          const plain = b.producer(), synced = b.producer({ sync: true });
          for (let i = 0; i < 2; i++) out.push(await plain.send('t', { value: 'v'.repeat(3000) + i, partition: 0 }).then((r) => r.offset, (e) => e.code));
          out.push(await synced.send('t', { value: 'v'.repeat(3000) + 2, partition: 0 }).then((r) => r.offset, (e) => e.code));
          console.log(JSON.stringify(out));
          await b.close().catch(() => undefined);
        })`,
      [seg0],
      'fdatasync:error=EIO',
    );
    const sent = JSON.parse(out.trim().split('\n').at(-1)!) as Array<number | string>;
    assert.deepEqual(sent.slice(0, 2), [0, 1], out);
    assert.equal(sent[2], 'IO_ERROR', `the sync batch was acknowledged though the segment before it was never synced: ${out}`);
    b = await Broker.open({ dir });
    assert.ok((await b.describeTopic('t')).partitions[0]!.segments >= 1);
    await b.close();
  });

  it('the segment before the active one is always sealed: after a batch refused once it rolled the segment, and (sealed at the next open) after a crash in the roll; damage in it then drops nothing', async () => {
    const dir = tmpDir();
    let b = await openBroker({ dir });
    await b.createTopic('t', { segmentBytes: 8192 });
    await fill(b, 't', 300);
    const before = segmentFiles(dir, 't', 0);
    // Too large for what is left of the active segment, and damaged: the core rolls the
    // segment for it, then refuses it. Nothing else comes before the close.
    const bad = sealBatch(encodeBatch([{ value: 'y'.repeat(7000) }]));
    bad[200]! ^= 0xff;
    await expectCode(b.publishBatch('t', bad, 0), 'CORRUPT_BATCH');
    await b.close();
    const L = before[before.length - 1]!;
    const Lindex = L.replace(/\.log$/, '.index');
    const lastEntry = () => {
      const idx = fs.readFileSync(Lindex);
      return { rel: idx.readUInt32LE(idx.length - 8), pos: idx.readUInt32LE(idx.length - 4) };
    };
    assert.equal(segmentFiles(dir, 't', 0).length, before.length + 1, 'the refused batch rolled the segment');
    const size = fs.statSync(L).size;
    assert.deepEqual(lastEntry(), { rel: 300 - Number(path.basename(L, '.log')), pos: size }, 'sealed at the refusal');

    // A crash in a roll's cycle leaves the same files without the seal: the old
    // segment's data block-padded, its index without the seal entry.
    fs.truncateSync(Lindex, fs.statSync(Lindex).size - 8);
    fs.truncateSync(L, Math.ceil(size / 4096) * 4096 + 4096);
    b = await Broker.open({ dir });
    assert.equal((await b.describeTopic('t')).partitions[0]!.endOffset, 300);
    assert.equal((await b.producer().send('t', { value: 'z', partition: 0 })).offset, 300);
    await b.close();
    assert.equal(fs.statSync(L).size, size, 'cut to its batches');
    assert.deepEqual(lastEntry(), { rel: 300 - Number(path.basename(L, '.log')), pos: size }, 'sealed at the open');

    // A flipped bit in its last batch: read as CORRUPT_BATCH, the segment after it kept.
    const data = fs.readFileSync(L);
    const last = batchStarts(data).pop()!;
    const lastBase = Number(data.readBigInt64LE(last + 8));
    overwriteAt(L, last + 70, Buffer.from([data[last + 70]! ^ 0x01]));
    b = await Broker.open({ dir });
    assert.equal((await b.describeTopic('t')).partitions[0]!.endOffset, 301);
    assert.equal((await b.read('t', 0, 300))[0]!.value.toString(), 'z');
    await expectCode(b.read('t', 0, lastBase), 'CORRUPT_BATCH');
    await b.close();
  });

  it('after a crash of a run without sync, the open syncs the active segment before this run writes after its data', async function () {
    // The recovered data may never have been synced (buffered writes, extents converted
    // in memory only): a power cut that kept this run's synced appends but lost it would
    // leave a hole the next open cuts the log at, acknowledged records after it.
    if (!hasStrace()) return this.skip();
    const dir = tmpDir();
    const b = await openBroker({ dir, durability: 'none' });
    await b.createTopic('t');
    await fill(b, 't', 20);
    const bytes = (await b.describeTopic('t')).partitions[0]!.bytes; // one segment: its data
    await b.close();
    // The file no longer than its data (as where preallocation is not supported, or
    // the data filled what was preallocated): the open has no tail to cut, and a cut
    // is synced anyway.
    fs.truncateSync(segmentFiles(dir, 't', 0).at(-1)!, bytes);
    // What a crash leaves: state.json says the run without sync did not stop cleanly.
    const statePath = path.join(dir, 'state.json');
    const state = JSON.parse(fs.readFileSync(statePath, 'utf8'));
    state.clean = false;
    fs.writeFileSync(statePath, JSON.stringify(state));
    const L = segmentFiles(dir, 't', 0).at(-1)!;
    const src = path.join(__dirname, '..', 'src');
    const calls = straceNode(
      `const u = require(${JSON.stringify(src)}); u.Broker.open({ dir: ${JSON.stringify(dir)}, durability: 'sync' }).then(async (b) => { await b.producer().send('t', { value: 'after', partition: 0 }); await b.close(); })`,
      ['fsync', 'fdatasync', 'pwrite64', 'pwritev2'],
      { ...process.env, URINGMQ_IO_BACKEND: 'thread' }, // its writes are syscalls strace sees
    );
    const events = calls.filter((c) => c.file === L).map((c) => (c.call.startsWith('pwrite') ? 'write' : 'sync'));
    const firstWrite = events.indexOf('write');
    assert.ok(firstWrite >= 0, `no write to ${L}: ${events.join(', ')}`);
    assert.ok(events.indexOf('sync') >= 0 && events.indexOf('sync') < firstWrite, `the recovered segment was not synced before this run wrote to it: ${events.join(', ')}`);
    const again = await openBroker({ dir });
    assert.deepEqual((await again.read('t', 0, 20)).map((m) => m.value.toString()), ['after']);
    await again.close();
  });

  it('an open that seals a segment whose roll a crash interrupted makes its data durable and cuts it before the seal entry says it is whole (as a seal in a write cycle does)', async function () {
    // After a crash of a run without sync, the old segment's data may be only in memory
    // (never synced); a later run with sync trusts the seal entry, acks appends to the
    // next segment, and a power cut then must not find the seal entry durable but the
    // data (or the cut) not. Observed by strace: the order of the syscalls the open makes.
    if (!hasStrace()) return this.skip();
    const dir = tmpDir();
    const { L, Lindex, size } = await crashedMidRoll(dir);
    let b: Broker;
    const src = path.join(__dirname, '..', 'src');
    const calls = straceNode(`require(${JSON.stringify(src)}).Broker.open({ dir: ${JSON.stringify(dir)} }).then((b) => b.close())`, ['fsync', 'fdatasync', 'pwrite64', 'truncate', 'ftruncate']);
    const events: string[] = [];
    for (const c of calls) {
      if (c.file === L) events.push(`${c.call} log`);
      // (The index is written to a temporary file and renamed over the old one.)
      if ((c.file === Lindex || c.file === `${Lindex}.tmp`) && c.call === 'pwrite64') events.push('write index');
    }
    const sealAt = events.indexOf('write index');
    assert.ok(sealAt >= 0, `the open wrote no index for ${L}: ${events.join(', ')}`);
    const syncAt = events.findIndex((e) => e === 'fsync log' || e === 'fdatasync log');
    assert.ok(syncAt >= 0 && syncAt < sealAt, `the seal entry was written before the segment's data was synced: ${events.join(', ')}`);
    const cutAt = events.findIndex((e) => e === 'truncate log' || e === 'ftruncate log');
    assert.ok(cutAt >= 0 && cutAt < syncAt, `the segment was not cut before that sync: ${events.join(', ')}`);
    b = await Broker.open({ dir });
    assert.equal((await b.describeTopic('t')).partitions[0]!.endOffset, 300);
    await b.close();
    assert.equal(fs.statSync(L).size, size);
  });

  it("an open that seals a segment whose roll a crash interrupted keeps its file's mtime: retention.maxAgeMs still counts from its last write after the next open", async () => {
    const dir = tmpDir();
    const { before, L, size } = await crashedMidRoll(dir);
    let b: Broker;
    // Written an hour ago, as the segments before it (older still: retention goes oldest first).
    const lastWrite = new Date(Date.now() - 3_600_000);
    for (const f of before) fs.utimesSync(f, new Date(lastWrite.getTime() - 1000), new Date(lastWrite.getTime() - 1000));
    fs.utimesSync(L, lastWrite, lastWrite);
    b = await Broker.open({ dir }); // seals it: cut to its data, seal entry written
    await b.close();
    assert.equal(fs.statSync(L).size, size, 'the open did not cut the segment');
    assert.ok(Math.abs(fs.statSync(L).mtimeMs - lastWrite.getTime()) < 1000, `the open's cut moved the segment's mtime ${Math.round(fs.statSync(L).mtimeMs - lastWrite.getTime())} ms past its last write`);
    // The next open takes the segment's age from that mtime: an hour old, past a minute's retention.
    const cfgFile = path.join(dir, 'topics', 't', 'topic.json');
    fs.writeFileSync(cfgFile, JSON.stringify({ ...JSON.parse(fs.readFileSync(cfgFile, 'utf8')), retention: { maxAgeMs: 60_000 } }));
    b = await Broker.open({ dir });
    try {
      for (let i = 0; i < 40 && fs.existsSync(L); i++) await sleep(100);
      assert.ok(!fs.existsSync(L), 'the segment an hour old outlived a retention of a minute');
    } finally {
      await b.close();
    }
  });

  it('a damaged base offset reads as CORRUPT_BATCH, never as records under the wrong offsets', async () => {
    // The base offset lies outside the CRC, and the index is a hint: reads check that
    // each batch starts where the one before it (or the index entry) says.
    const dir = tmpDir();
    let b = await openBroker({ dir });
    await b.createTopic('t');
    await fill(b, 't', 300, 5); // batches of 5, an index entry every ~4 KiB
    await b.close();
    const seg = segmentFiles(dir, 't', 0)[0]!;
    const data = fs.readFileSync(seg);
    const starts = batchStarts(data);
    const at50 = starts[10]!;
    assert.equal(Number(data.readBigInt64LE(at50 + 8)), 50);
    const base = Buffer.alloc(8);
    base.writeBigInt64LE(49n);
    overwriteAt(seg, at50 + 8, base);
    b = await Broker.open({ dir });
    const e = await b.read('t', 0, 50).then((m) => m.map((x) => x.offset), (err: Error & { code?: string }) => err);
    assert.ok(e instanceof Error && (e as Error & { code?: string }).code === 'CORRUPT_BATCH', `read at 50 gave ${String(e)}`);
    assert.match((e as Error).message, /base offset 49 where 50 was expected/);
    assert.deepEqual((await b.read('t', 0, 45, { maxBytes: 1 << 20 })).map((m) => m.offset), [45, 46, 47, 48, 49], 'stops before it');
    await b.close();
  });

  for (const damage of ['a record (CRC)', 'the length', 'the base offset', 'the record count'] as const) {
    it(`a group stops at a batch of a sealed segment with damage in ${damage}: CORRUPT_BATCH names the next readable offset, and commitOffset moves the group on to it`, async () => {
      const { dir, segs } = await segmentedLog(5);
      const data = fs.readFileSync(segs[1]!);
      const second = data.readUInt32LE(4); // the segment's second batch
      const third = second + data.readUInt32LE(second + 4);
      const [secondBase, thirdBase] = [Number(data.readBigInt64LE(second + 8)), Number(data.readBigInt64LE(third + 8))];
      if (damage === 'a record (CRC)') overwriteAt(segs[1]!, third - 1, Buffer.from([data[third - 1]! ^ 0xff]));
      else if (damage === 'the length') overwriteAt(segs[1]!, second + 4, Buffer.from([0xff, 0xff, 0xff, 0x7f]));
      else if (damage === 'the base offset') overwriteAt(segs[1]!, second + 8, Buffer.from([data[second + 8]! ^ 0x40]));
      else overwriteAt(segs[1]!, second + 24, Buffer.from([data[second + 24]! + 1])); // it claims the next batch's first offset
      const b = await Broker.open({ dir });
      try {
        // Offsets after it read right, also from inside the batch after it.
        assert.deepEqual((await b.read('t', 0, thirdBase + 1, { maxBytes: 1 })).map((m) => m.offset), [1, 2, 3, 4].map((i) => thirdBase + i));
        const seen: number[] = [];
        const err = await (async () => {
          for await (const m of b.consumer({ topic: 't', group: 'g', from: 'earliest' })) {
            seen.push(m.offset);
            m.ack();
          }
        })().then(() => null, (e: Error & { code?: string }) => e);
        assert.equal(err?.code, 'CORRUPT_BATCH', String(err));
        assert.match(err!.message, new RegExp(`the next readable batch after it starts at offset ${thirdBase} \\(byte ${third}\\)`));
        assert.deepEqual(seen, Array.from({ length: secondBase }, (_, i) => i), 'everything before it, in order');
        await b.commitOffset('g', 't', 0, thirdBase);
        assert.deepEqual(await b.committedOffsets('g', 't'), [thirdBase]);
        const rest: number[] = [];
        for await (const m of b.consumer({ topic: 't', group: 'g' })) {
          rest.push(m.offset);
          m.ack();
          if (m.offset === 299) break;
        }
        assert.deepEqual(rest, Array.from({ length: 300 - thirdBase }, (_, i) => thirdBase + i));
        await expectCode(b.commitOffset('g', 't', 1, 0), 'INVALID_ARGUMENT');
      } finally {
        await b.close();
      }
      await expectCode(b.committedOffsets('g', 't'), 'BROKER_CLOSED');
    });
  }

  it('a batch of the active segment damaged while the broker runs: the error names the next readable batch, the same after more appends', async () => {
    const dir = tmpDir();
    const b = await openBroker({ dir, tailCacheBytes: 0 }); // reads from the file, not the recent data kept in memory
    try {
      await b.createTopic('t', { segmentBytes: 1 << 20 });
      await fill(b, 't', 300, 5); // ~75 KiB in one segment: the damage below is far from the block the writer rewrites
      const seg = segmentFiles(dir, 't', 0)[0]!;
      const data = fs.readFileSync(seg);
      const starts = batchStarts(data);
      assert.ok(starts.length >= 60 && starts[2]! < 4096, `batches at ${starts.slice(0, 3).join(', ')}`);
      overwriteAt(seg, starts[2]! - 1, Buffer.from([data[starts[2]! - 1]! ^ 0xff])); // the last record of offsets 5..9
      const named = new RegExp(`the next readable batch after it starts at offset 10 \\(byte ${starts[2]}\\)`);
      for (let i = 0; i < 3; i++) assert.match((await expectCode(b.read('t', 0, 5), 'CORRUPT_BATCH')).message, named);
      await fill(b, 't', 50, 5);
      assert.match((await expectCode(b.read('t', 0, 7), 'CORRUPT_BATCH')).message, named);
      assert.deepEqual((await b.read('t', 0, 10, { maxBytes: 1 })).map((m) => m.value.toString()), [10, 11, 12, 13, 14].map(payload));
      assert.deepEqual((await b.read('t', 0, 345, { maxBytes: 1 })).map((m) => m.offset), [345, 346, 347, 348, 349]);
    } finally {
      await b.close();
    }
  });

  it('a damaged batch with nothing readable after it in its segment: the error names where the next segment starts', async () => {
    const { dir, segs } = await segmentedLog(5);
    const data = fs.readFileSync(segs[1]!);
    let last = 0;
    while (last + data.readUInt32LE(last + 4) < data.length) last += data.readUInt32LE(last + 4);
    overwriteAt(segs[1]!, data.length - 1, Buffer.from([data[data.length - 1]! ^ 0xff]));
    const b = await Broker.open({ dir });
    const at = Number(data.readBigInt64LE(last + 8));
    const e = await expectCode(b.read('t', 0, at), 'CORRUPT_BATCH');
    assert.match(e.message, new RegExp(`no readable batch follows it in this segment: the next segment starts at offset ${Number(path.basename(segs[2]!, '.log'))}`));
    await b.close();
  });

  it('a wrong sparse-index entry is rebuilt from the batches: reads serve the right records, and the repaired index is written back', async () => {
    // The index is a hint outside any checksum: a read that finds no batch (or another
    // one) where an entry points walks the segment's headers from its start.
    const { dir, segs } = await segmentedLog(5);
    const sealedIndex = segs[1]!.replace(/\.log$/, '.index');
    const good = fs.readFileSync(sealedIndex);
    assert.ok(good.length >= 16, 'an entry and the seal entry');
    const pos = Buffer.alloc(4);
    pos.writeUInt32LE(good.readUInt32LE(4) + 3); // mid-batch
    overwriteAt(sealedIndex, 4, pos);
    let b = await Broker.open({ dir });
    const at = Number(path.basename(segs[1]!, '.log')) + good.readUInt32LE(0); // where the entry is used
    assert.deepEqual((await b.read('t', 0, at, { maxBytes: 1 })).map((m) => m.value.toString()), [0, 1, 2, 3, 4].map((i) => payload(at + i)));
    const all = await readAll(b, 't', 0);
    assert.deepEqual(all.map((m) => m.offset), Array.from({ length: 300 }, (_, i) => i));
    for (const m of all) assert.equal(m.value.toString(), payload(m.offset));
    assert.deepEqual(fs.readFileSync(sealedIndex), good, 'the sealed segment\'s index file is rewritten as it was');
    assert.deepEqual(fs.readdirSync(path.dirname(sealedIndex)).filter((f) => f.endsWith('.tmp')), []);
    await b.close();

    // The active segment's: repaired in memory, written whole when the segment is sealed.
    const dir2 = tmpDir();
    b = await openBroker({ dir: dir2 });
    await b.createTopic('t', { segmentBytes: 128 * 1024 });
    await fill(b, 't', 300, 5); // one segment, an index entry every ~4 KiB
    await b.close();
    const seg = segmentFiles(dir2, 't', 0)[0]!;
    const index = seg.replace(/\.log$/, '.index');
    const idx = fs.readFileSync(index);
    assert.ok(idx.length >= 16);
    const rel = idx.readUInt32LE(8); // the second entry's offset, named 5 too high
    const wrong = Buffer.alloc(4);
    wrong.writeUInt32LE(rel + 5);
    overwriteAt(index, 8, wrong);
    b = await Broker.open({ dir: dir2 });
    assert.deepEqual((await b.read('t', 0, rel + 5)).map((x) => x.offset).slice(0, 1), [rel + 5]);
    assert.deepEqual((await readAll(b, 't', 0)).map((m) => m.value.toString()), Array.from({ length: 300 }, (_, i) => payload(i)));
    await fill(b, 't', 600, 5); // rolls the segment: sealed with the repaired index
    assert.ok(segmentFiles(dir2, 't', 0).length > 1);
    await b.close();
    const after = fs.readFileSync(index);
    assert.deepEqual(after.subarray(0, idx.length - 8), idx.subarray(0, idx.length - 8), 'the repaired entries');
    assert.equal(after.readUInt32LE(after.length - 4), fs.statSync(seg).size, 'then the seal entry');
    b = await Broker.open({ dir: dir2 });
    const again = await readAll(b, 't', 0);
    assert.equal(again.length, 900);
    assert.deepEqual(again.slice(0, 300).map((m) => m.value.toString()), Array.from({ length: 300 }, (_, i) => payload(i)));
    await b.close();
  });

  it('appends stop where the end offset would pass 2^53 - 1, the largest a JavaScript number holds exactly: OFFSET_OUT_OF_RANGE, the partition goes on', async () => {
    const dir = tmpDir();
    let b = await openBroker({ dir });
    await b.createTopic('big');
    await b.close();
    // A partition whose log starts 3 offsets below the limit (only a file placed by hand can).
    const top = 2 ** 53 - 1;
    const seg = segmentFiles(dir, 'big', 0)[0]!;
    const name = (o: number, ext: string) => path.join(path.dirname(seg), `${String(o).padStart(20, '0')}${ext}`);
    fs.renameSync(seg, name(top - 3, '.log'));
    fs.renameSync(seg.replace(/\.log$/, '.index'), name(top - 3, '.index'));
    b = await Broker.open({ dir });
    const p = b.producer();
    assert.equal((await p.send('big', { value: 'a', partition: 0 })).offset, top - 3);
    await expectCode(p.sendBatch('big', [{ value: 'b' }, { value: 'c' }, { value: 'd' }], { partition: 0 }), 'OFFSET_OUT_OF_RANGE');
    assert.equal((await p.sendBatch('big', [{ value: 'b' }, { value: 'c' }], { partition: 0 })).baseOffset, top - 2);
    await expectCode(p.send('big', { value: 'e', partition: 0 }), 'OFFSET_OUT_OF_RANGE');
    assert.equal((await b.describeTopic('big')).partitions[0]!.endOffset, top);
    assert.deepEqual((await b.read('big', 0, top - 3, { maxBytes: 1 << 20 })).map((m) => [m.offset, m.value.toString()]), [
      [top - 3, 'a'],
      [top - 2, 'b'],
      [top - 1, 'c'],
    ]);
    await b.close();
  });

  it('refuses a partition whose sealed segments do not follow one another (a file removed or added by hand), changing nothing', async () => {
    const { dir, segs } = await segmentedLog();
    let b: Broker;
    const snapshot = () => segmentFiles(dir, 't', 0, '').map((f) => `${path.basename(f)}:${fs.statSync(f).size}`);
    // A missing middle segment.
    const aside = path.join(dir, 'aside.log');
    fs.renameSync(segs[1]!, aside);
    let before = snapshot();
    assert.match((await expectCode(Broker.open({ dir }), 'IO_ERROR')).message, /do not follow one another/);
    assert.deepEqual(snapshot(), before);
    fs.renameSync(aside, segs[1]!);
    // A stray empty file among them.
    const base1 = Number(path.basename(segs[1]!, '.log'));
    const stray = path.join(path.dirname(segs[0]!), `${String(base1 - 1).padStart(20, '0')}.log`);
    fs.writeFileSync(stray, '');
    before = snapshot();
    assert.match((await expectCode(Broker.open({ dir }), 'IO_ERROR')).message, /do not follow one another/);
    assert.deepEqual(snapshot(), before);
    fs.rmSync(stray);
    // A file named past the largest offset a broker writes (2^53 - 1).
    const huge = path.join(path.dirname(segs[0]!), '09223372036854775799.log');
    fs.writeFileSync(huge, '');
    assert.match((await expectCode(Broker.open({ dir }), 'IO_ERROR')).message, /past 2\^53/);
    fs.rmSync(huge);
    // A flipped bit in a seal entry's offset: the log ends where the next file starts,
    // so the entry is what is wrong; it is rewritten, and nothing is refused or lost.
    const index0 = segs[0]!.replace(/\.log$/, '.index');
    const ix = fs.readFileSync(index0);
    ix[ix.length - 8] ^= 0x01;
    fs.writeFileSync(index0, ix);
    b = await Broker.open({ dir });
    assert.equal((await readAll(b, 't', 0)).length, 300);
    await b.close();
    assert.equal(fs.readFileSync(index0)[ix.length - 8], ix[ix.length - 8]! ^ 0x01, 'the seal entry was rewritten');
    b = await Broker.open({ dir });
    assert.equal((await readAll(b, 't', 0)).length, 300);
    await b.close();
  });

  it("a reopened broker still recognises an idempotent producer's retries: the table is refilled from the log", async () => {
    const dir = tmpDir();
    let b = await openBroker({ dir });
    await b.createTopic('t', { segmentBytes: 8192 });
    const pid = 2 ** 40 + 7;
    const batches: Buffer[] = [];
    const offsets: number[] = [];
    let seq = 0;
    for (let i = 0; i < 60; i++) {
      const recs = Array.from({ length: 1 + (i % 3) }, (_, k) => ({ value: `b${i}-${k}-` + 'x'.repeat(300) }));
      const batch = sealBatch(encodeBatch(recs, { producerId: pid, baseSequence: seq }));
      seq += recs.length;
      batches.push(batch);
      offsets.push((await b.publishBatch('t', batch, 0)).baseOffset);
      if (i % 10 === 0) await b.producer().send('t', { value: `plain-${i}`, partition: 0 }); // not idempotent: skipped
    }
    await b.close();
    assert.ok(segmentFiles(dir, 't', 0).length >= 4, 'the producer\'s batches span segments');
    const endOf = async (x: Broker) => (await x.describeTopic('t')).partitions[0]!.endOffset;

    b = await openBroker({ dir });
    const end = await endOf(b);
    for (let i = 0; i < 60; i++) {
      const r = await b.publishBatch('t', batches[i]!, 0);
      assert.deepEqual([r.duplicate, r.baseOffset], [true, offsets[i]], `retry of batch ${i}`);
    }
    assert.equal(await endOf(b), end, 'no retry was written again');
    // The producer goes on where it left off; a gap is still refused.
    const nextBatch = sealBatch(encodeBatch([{ value: 'next' }], { producerId: pid, baseSequence: seq }));
    const next = await b.publishBatch('t', Buffer.from(nextBatch), 0);
    assert.deepEqual([next.duplicate, next.baseOffset], [false, end]);
    await expectCode(b.publishBatch('t', sealBatch(encodeBatch([{ value: 'gap' }], { producerId: pid, baseSequence: seq + 5 })), 0), 'OUT_OF_ORDER_SEQUENCE');
    await b.close();

    // A small window and no snapshot (a crash before the first): the newest batches
    // keep their offsets; an older retry is known to be old (offset -1) and still not
    // written.
    dropProducerSnapshot(dir, 't');
    b = await openBroker({ dir, producerStateScanBytes: 4096 });
    const r59 = await b.publishBatch('t', batches[59]!, 0);
    assert.deepEqual([r59.duplicate, r59.baseOffset], [true, offsets[59]]);
    const r0 = await b.publishBatch('t', batches[0]!, 0);
    assert.deepEqual([r0.duplicate, r0.baseOffset], [true, -1]);
    assert.equal(await endOf(b), end + 1);
    await b.close();

    // A flipped bit in the producer's newest batch ('next', at offset `end`), with
    // newer segments after it: recovery does not check those bytes (it resumes at
    // each segment's newest index entry), the scan does. The broker opens and warns,
    // forgets 'next' (its CRC fails: its producer fields cannot be trusted) and what
    // came before it too: keeping the older batches would make it expect a sequence
    // from before 'next' and refuse the producer's next batch as out of order.
    b = await openBroker({ dir });
    const p = b.producer();
    for (let i = 0; i < 40; i++) await p.send('t', { value: `plain-after-${i}-` + 'y'.repeat(400), partition: 0 });
    const endAfter = await endOf(b);
    await b.close();
    const holding = segmentFiles(dir, 't', 0).filter((f) => Number(path.basename(f, '.log')) <= end).pop()!;
    assert.notEqual(holding, segmentFiles(dir, 't', 0).pop(), 'newer segments follow');
    const bytes = fs.readFileSync(holding);
    let at = 0;
    while (Number(bytes.readBigInt64LE(at + 8)) !== end) at += bytes.readUInt32LE(at + 4);
    overwriteAt(holding, at + 70, Buffer.from([bytes[at + 70]! ^ 0x10])); // inside its record
    dropProducerSnapshot(dir, 't'); // the scan reads the window (the snapshot would cover 'next')
    const reopened = await openBrokerWithWarnings({ dir });
    b = reopened.broker;
    const warnings = reopened.warnings;
    assert.ok(warnings.some((w) => w.includes('t/0') && w.includes(`no valid batch at byte ${at} `)), `warnings: ${warnings.join(' | ')}`);
    const rewritten = await b.publishBatch('t', Buffer.from(nextBatch), 0);
    assert.deepEqual([rewritten.duplicate, rewritten.baseOffset], [false, endAfter], "'next' is written again");
    const after = await b.publishBatch('t', sealBatch(encodeBatch([{ value: 'after' }], { producerId: pid, baseSequence: seq + 1 })), 0);
    assert.deepEqual([after.duplicate, after.baseOffset], [false, endAfter + 1]);
    await b.close();

    // 0: the table starts empty, so a retry is written again.
    b = await openBroker({ dir, producerStateScanBytes: 0 });
    const fresh = await b.publishBatch('t', batches[59]!, 0);
    assert.deepEqual([fresh.duplicate, fresh.baseOffset], [false, endAfter + 2]);
    await expectCode(openBroker({ dir: tmpDir(), producerStateScanBytes: -1 }), 'INVALID_ARGUMENT');
    await b.close();
  });

  it('reads that meet a wrong index entry while another read rebuilds the index wait for it, and all succeed', async () => {
    const dir = tmpDir();
    let b = await openBroker({ dir, tailCacheBytes: 0 });
    await b.createTopic('t', { segmentBytes: 1 << 20 });
    await fill(b, 't', 4000, 5);
    await fill(b, 't', 300, 5); // into a second segment: the first is sealed
    await b.close();
    const index = segmentFiles(dir, 't', 0, '.index')[0]!;
    const idx = fs.readFileSync(index);
    const entries = idx.length / 8 - 1; // and the seal entry
    assert.ok(entries > 100);
    for (let i = 0; i < entries; i++) idx.writeUInt32LE(idx.readUInt32LE(i * 8 + 4) + 3, i * 8 + 4);
    fs.writeFileSync(index, idx);
    b = await Broker.open({ dir, tailCacheBytes: 0 });
    const at = Array.from({ length: 32 }, (_, i) => idx.readUInt32LE(Math.floor((i * entries) / 32) * 8));
    const got = await Promise.all(at.map((o) => b.read('t', 0, o, { maxBytes: 1 }).then((m) => m[0]!.value.toString(), (e: Error) => e.message)));
    assert.deepEqual(got, at.map((o) => payload(o)));
    await b.close();
  });

  it('the producer-state scan rebuilds a wrong index entry it starts at, and still recognises the retries', async () => {
    const dir = tmpDir();
    let b = await openBroker({ dir });
    await b.createTopic('t');
    const pid = 4242;
    const batches: Buffer[] = [];
    const offsets: number[] = [];
    for (let i = 0; i < 40; i++) {
      batches.push(sealBatch(encodeBatch([{ value: `b${i}-` + 'x'.repeat(500) }], { producerId: pid, baseSequence: i })));
      offsets.push((await b.publishBatch('t', batches[i]!, 0)).baseOffset);
    }
    await b.close();
    // Every entry but the newest (which recovery checks) points 3 bytes into its batch;
    // the 8 KiB window starts at one of them.
    const index = segmentFiles(dir, 't', 0, '.index')[0]!;
    const idx = fs.readFileSync(index);
    assert.ok(idx.length >= 32, 'index entries before the window and in it');
    for (let at = 4; at < idx.length - 8; at += 8) idx.writeUInt32LE(idx.readUInt32LE(at) + 3, at);
    fs.writeFileSync(index, idx);
    dropProducerSnapshot(dir, 't');
    const { broker, warnings } = await openBrokerWithWarnings({ dir, producerStateScanBytes: 8192 });
    b = broker;
    assert.deepEqual(warnings.filter((w) => w.includes('t/0')), [], 'nothing lost from the scan');
    const r = await b.publishBatch('t', batches[39]!, 0);
    assert.deepEqual([r.duplicate, r.baseOffset], [true, offsets[39]]);
    const next = await b.publishBatch('t', sealBatch(encodeBatch([{ value: 'next' }], { producerId: pid, baseSequence: 40 })), 0);
    assert.deepEqual([next.duplicate, next.baseOffset], [false, 40]);
    await b.close();
  });

  it('the producer-state scan checks the CRC of a batch larger than its read window (256 KiB) piece by piece', async () => {
    const dir = tmpDir();
    let b = await openBroker({ dir });
    await b.createTopic('big');
    const batch = sealBatch(encodeBatch([{ value: Buffer.alloc(700_000, 7) }, { value: Buffer.alloc(300_000, 9) }], { producerId: 5150, baseSequence: 0 }));
    const first = await b.publishBatch('big', batch, 0);
    await b.close();
    dropProducerSnapshot(dir, 'big');
    b = await openBroker({ dir });
    const retry = await b.publishBatch('big', batch, 0);
    assert.deepEqual([retry.duplicate, retry.baseOffset], [true, first.baseOffset]);
    await b.close();
  });

  it('the producer-state scan forgets what came before a part it cannot read, so a producer is never taken to stop there', async () => {
    const dir = tmpDir();
    let b = await openBroker({ dir });
    await b.createTopic('q', { segmentBytes: 8192 });
    const pid = 31337;
    const offsetsOf: number[] = [];
    const qBatch = (seq: number) => sealBatch(encodeBatch([{ value: `q${seq}-` + 'z'.repeat(200) }], { producerId: pid, baseSequence: seq }));
    const plain = b.producer();
    const filler = async () => {
      for (let i = 0; i < 40; i++) await plain.send('q', { value: 'f'.repeat(500), partition: 0 }); // ~20 KB: segments roll
    };
    for (let seq = 0; seq < 5; seq++) offsetsOf.push((await b.publishBatch('q', qBatch(seq), 0)).baseOffset);
    await filler();
    for (let seq = 5; seq < 10; seq++) offsetsOf.push((await b.publishBatch('q', qBatch(seq), 0)).baseOffset);
    await filler();
    await b.close();
    // The segment holding the second group's first batch loses its first batch's
    // magic: the scan cannot walk that segment, which holds the producer's newest
    // batches (seq 5 on), while the first group sits in an older one.
    const segs = segmentFiles(dir, 'q', 0);
    const base = (f: string) => Number(path.basename(f, '.log'));
    const second = segs.filter((f) => base(f) <= offsetsOf[5]!).pop()!;
    assert.ok(base(second) > offsetsOf[4]!, 'the groups are in different segments');
    overwriteAt(second, 0, Buffer.alloc(4));
    dropProducerSnapshot(dir, 'q');
    const reopened = await openBrokerWithWarnings({ dir });
    b = reopened.broker;
    const warnings = reopened.warnings;
    assert.ok(warnings.some((w) => w.includes('q/0') && w.includes('no valid batch at byte 0 ')), `warnings: ${warnings.join(' | ')}`);
    // Had the first group been kept, the table would expect seq 5 and refuse seq 10
    // as out of order; the producer is unknown instead, and goes on.
    const end = (await b.describeTopic('q')).partitions[0]!.endOffset;
    const r = await b.publishBatch('q', qBatch(10), 0);
    assert.deepEqual([r.duplicate, r.baseOffset], [false, end]);
    await b.close();
  });

  describe('producer-state snapshots', () => {
    const value = 'v'.repeat(300);
    const idem = (pid: number, seq: number) => sealBatch(encodeBatch([{ value: `${pid}-${seq}-${value}` }], { producerId: pid, baseSequence: seq }));
    const filler = async (b: Broker, bytes: number) => {
      const p = b.producer();
      for (let n = 0; n < bytes; n += 500) await p.send('t', { value: 'f'.repeat(500), partition: 0 });
    };
    /** A copy of `dir` as a crash would leave it now (every acked append is synced). */
    const crashImage = (dir: string) => {
      const image = tmpDir();
      fs.cpSync(dir, image, { recursive: true });
      return image;
    };
    /** A broker (4 KiB window) whose partition's snapshot holds producer 1's first batch, `first`; it takes none after that one. */
    const withOneSnapshot = async () => {
      const dir = tmpDir();
      const b = await openBroker({ dir, producerStateScanBytes: 4096 });
      b.snapshotIntervalMs = 0;
      await b.createTopic('t');
      const ps = b.topicState('t').partitions[0]!;
      const first = await b.publishBatch('t', idem(1, 0), 0);
      await filler(b, 6000); // past producerStateScanBytes: a snapshot is taken
      await ps.snapshotting;
      b.snapshotIntervalMs = 1e9;
      return { dir, b, first };
    };

    it('a clean restart keeps the whole table: a retry from far behind the scan window is answered with its offsets', async () => {
      const dir = tmpDir();
      let b = await openBroker({ dir, producerStateScanBytes: 4096 });
      await b.createTopic('t');
      const first = await b.publishBatch('t', idem(77, 0), 0);
      await filler(b, 40_000); // ten windows past it
      await b.close();
      b = await openBroker({ dir, producerStateScanBytes: 4096 });
      const retry = await b.publishBatch('t', idem(77, 0), 0);
      assert.deepEqual([retry.duplicate, retry.baseOffset], [true, first.baseOffset]);
      await b.close();
      // Without the snapshot the window does not reach it: written again.
      dropProducerSnapshot(dir, 't');
      b = await openBroker({ dir, producerStateScanBytes: 4096 });
      const again = await b.publishBatch('t', idem(77, 0), 0);
      assert.equal(again.duplicate, false);
      await b.close();
    });

    it('a snapshot naming batches past the log (its tail lost) leaves them out', async () => {
      const dir = tmpDir();
      const b = await openBroker({ dir, producerStateScanBytes: 4096 });
      await b.createTopic('t');
      await b.publishBatch('t', idem(3, 0), 0);
      const image = crashImage(dir); // without what follows
      const lost = await b.publishBatch('t', idem(3, 1), 0);
      await filler(b, 2000); // the snapshot's offset further on
      await b.close(); // its snapshot names `lost`
      fs.copyFileSync(path.join(partitionDir(dir, 't', 0), 'producers.snap'), path.join(partitionDir(image, 't', 0), 'producers.snap'));
      const c = await openBroker({ dir: image, producerStateScanBytes: 4096 });
      const end = (await c.describeTopic('t')).partitions[0]!.endOffset;
      assert.equal(end, lost.baseOffset);
      const r = await c.publishBatch('t', idem(3, 1), 0);
      assert.deepEqual([r.duplicate, r.baseOffset], [false, end], 'a batch the snapshot names past the log was taken as written');
      // That snapshot was replaced at the open: after another crash, a batch written
      // below its offset is found all the same.
      const other = await c.publishBatch('t', idem(4, 0), 0);
      const image2 = crashImage(image);
      await c.close();
      const d = await openBroker({ dir: image2, producerStateScanBytes: 4096 });
      const r2 = await d.publishBatch('t', idem(4, 0), 0);
      assert.deepEqual([r2.duplicate, r2.baseOffset], [true, other.baseOffset]);
      await d.close();
    });

    it('after a crash: the snapshot covers what lies before it, the log after it, both beyond the window', async () => {
      const { dir, b, first: a0 } = await withOneSnapshot();
      const c0 = await b.publishBatch('t', idem(2, 0), 0);
      await filler(b, 40_000);
      const crashed = crashImage(dir);
      await b.close();
      const c = await openBroker({ dir: crashed, producerStateScanBytes: 4096 });
      const ra = await c.publishBatch('t', idem(1, 0), 0);
      const rc = await c.publishBatch('t', idem(2, 0), 0);
      assert.deepEqual([ra.duplicate, ra.baseOffset, rc.duplicate, rc.baseOffset], [true, a0.baseOffset, true, c0.baseOffset]);
      await c.close();
    });

    it('a snapshot further back than 64 windows is not used: the open reads the newest 64 windows only, and says so', async () => {
      const { dir, b } = await withOneSnapshot();
      await filler(b, 300_000); // more than 64 × 4 KiB after it
      const c0 = await b.publishBatch('t', idem(2, 0), 0);
      const crashed = crashImage(dir);
      await b.close();
      const reopened = await openBrokerWithWarnings({ dir: crashed, producerStateScanBytes: 4096 });
      const c = reopened.broker;
      assert.ok(reopened.warnings.some((w) => w.includes('t/0') && w.includes('is longer than 262144 bytes')), `warnings: ${reopened.warnings.join(' | ')}`);
      const rc = await c.publishBatch('t', idem(2, 0), 0);
      assert.deepEqual([rc.duplicate, rc.baseOffset], [true, c0.baseOffset]);
      const ra = await c.publishBatch('t', idem(1, 0), 0);
      assert.equal(ra.duplicate, false, 'the snapshot before the gap was used');
      await c.close();
    });

    it('a run with the table off removes the snapshot: a later run does not trust one nobody kept up to date', async () => {
      const dir = tmpDir();
      let b = await openBroker({ dir });
      await b.createTopic('t');
      await b.publishBatch('t', idem(5, 0), 0);
      await b.close();
      const snap = path.join(partitionDir(dir, 't', 0), 'producers.snap');
      assert.ok(fs.existsSync(snap));
      fs.writeFileSync(path.join(partitionDir(dir, 't', 0), '.tmp-1-1'), 'left by a crash');
      b = await openBroker({ dir, producerStateScanBytes: 0 });
      assert.ok(!fs.existsSync(snap), 'the snapshot outlived a run with the table off');
      assert.deepEqual(fs.readdirSync(partitionDir(dir, 't', 0)).filter((f) => f.startsWith('.tmp-')), [], 'a temp file a crash left is still there');
      await b.close();
      assert.ok(!fs.existsSync(snap), 'a run with the table off wrote one');
    });

    it("temp files of durable writes a crash interrupted (state.json's, topic.json's and cuts.json's, offsets files') are removed at open; a topic named like one, and its group's offsets, are not touched", async () => {
      const dir = tmpDir();
      let b = await openBroker({ dir });
      // A topic whose name is a temp file's, with a group's offsets file for it.
      for (const t of ['t', '.tmp-7-7']) {
        await b.createTopic(t);
        await b.publishBatch(t, sealBatch(encodeBatch([{ value: 'kept' }])), 0);
        await b.commitOffset('g', t, 0, 1);
      }
      await b.close();
      const groupDir = path.join(dir, 'groups', 'g');
      const left = [dir, path.join(dir, 'topics', 't'), groupDir, partitionDir(dir, 't', 0)].map((d) => path.join(d, '.tmp-4242-3'));
      for (const f of left) fs.writeFileSync(f, 'left by a crash');
      const before = fs.readdirSync(groupDir).sort();
      b = await openBroker({ dir });
      try {
        for (const f of left) assert.ok(!fs.existsSync(f), `still there: ${f}`);
        assert.deepEqual(fs.readdirSync(groupDir).sort(), before.filter((f) => f !== '.tmp-4242-3'));
        assert.ok(fs.existsSync(path.join(dir, 'topics', '.tmp-7-7', 'topic.json')));
        for (const t of ['t', '.tmp-7-7']) {
          assert.deepEqual(await b.committedOffsets('g', t), [1], t);
          assert.equal((await b.read(t, 0, 0))[0]!.value.toString(), 'kept', t);
        }
      } finally {
        await b.close();
      }
    });

    it('a damaged snapshot is reported and the window read instead', async () => {
      const dir = tmpDir();
      let b = await openBroker({ dir, producerStateScanBytes: 4096 });
      await b.createTopic('t');
      await b.publishBatch('t', idem(9, 0), 0);
      await filler(b, 40_000);
      const near = await b.publishBatch('t', idem(9, 1), 0);
      await b.close();
      const snap = path.join(partitionDir(dir, 't', 0), 'producers.snap');
      overwriteAt(snap, 30, Buffer.from([fs.readFileSync(snap)[30]! ^ 1]));
      const reopened = await openBrokerWithWarnings({ dir, producerStateScanBytes: 4096 });
      b = reopened.broker;
      assert.ok(reopened.warnings.some((w) => w.includes('t/0') && w.includes('corrupt producer-state snapshot')), `warnings: ${reopened.warnings.join(' | ')}`);
      const r = await b.publishBatch('t', idem(9, 1), 0);
      assert.deepEqual([r.duplicate, r.baseOffset], [true, near.baseOffset], 'the window still holds the newest batch');
      const old = await b.publishBatch('t', idem(9, 0), 0);
      assert.deepEqual([old.duplicate, old.baseOffset], [true, -1], 'an older one is known to be old, its offsets not');
      await b.close();
    });
  });

  it('removes a topic whose creation never finished', async () => {
    const dir = tmpDir();
    const b = await openBroker({ dir });
    await b.close();
    fs.mkdirSync(path.join(dir, 'topics', 'half', '0'), { recursive: true });
    const b2 = await Broker.open({ dir });
    assert.deepEqual(await b2.listTopics(), []);
    assert.ok(!fs.existsSync(partitionDir(dir, 'half', 0)));
    await b2.close();
  });
});

describe('Zero ahead (BrokerOptions.zeroAheadBytes)', function () {
  this.timeout(60_000);
  const MiB = 1 << 20;

  /** The file's extents as filefrag reports them (block ranges; unwritten: fallocated, never written), or null where it cannot tell. */
  function extents(file: string): Array<{ first: number; last: number; unwritten: boolean }> | null {
    const r = spawnSync('filefrag', ['-v', '-b4096', file], { encoding: 'utf8' });
    if (r.error || r.status !== 0) return null;
    const out: Array<{ first: number; last: number; unwritten: boolean }> = [];
    for (const line of r.stdout.split('\n')) {
      const m = /^\s*\d+:\s+(\d+)\.\.\s*(\d+):/.exec(line);
      if (m) out.push({ first: Number(m[1]), last: Number(m[2]), unwritten: /unwritten/.test(line) });
    }
    return out;
  }
  /** Blocks [from, to) of the file are all written (data or zeros): no unwritten extent covers any. */
  const allWritten = (ext: ReturnType<typeof extents>, from: number, to: number) =>
    ext!.every((e) => !e.unwritten || e.last < from || e.first >= to) &&
    // and nothing in that range is a hole
    Array.from({ length: to - from }, (_, i) => from + i).every((b) => ext!.some((e) => e.first <= b && b <= e.last));

  it('refuses a zeroAheadBytes that is negative, fractional, not a number or past 64 MiB with INVALID_ARGUMENT; 0 and 64 MiB open', async () => {
    for (const bad of [-1, 1.5, '1', NaN, 64 * MiB + 1]) await expectCode(openBroker({ zeroAheadBytes: bad as never }), 'INVALID_ARGUMENT');
    for (const ok of [0, 64 * MiB]) await (await openBroker({ zeroAheadBytes: ok })).close();
  });

  it('with sync, the preallocated space after a written partition\'s data is written with zeros between cycles, zeroAheadBytes of it and no more; not for a partition nobody writes, nor with 0 or without sync', async function () {
    const run = async (opts: { zeroAheadBytes?: number; durability?: 'none' }) => {
      const dir = tmpDir();
      const b = await openBroker({ dir, ...opts });
      try {
        await b.createTopic('t', { partitions: 2 });
        const p = b.producer({ lingerMs: 0 });
        for (let i = 0; i < 20; i++) await p.send('t', { value: 'x'.repeat(200), partition: 0 });
        const zeroing = opts.durability === undefined && opts.zeroAheadBytes !== 0;
        // Two steps of 1 MiB, 20 ms apart at the soonest; generous for a loaded machine.
        if (zeroing) await waitFor(() => b.zeroAheadBytesWritten >= DEFAULT_ZERO_AHEAD_BYTES, 20_000, 'the zeros ahead');
        // And then no more (nor any at all without them).
        await sleep(300);
        const written = b.zeroAheadBytesWritten;
        const [seg] = segmentFiles(dir, 't', 0);
        return { written, ext: extents(seg!) };
      } finally {
        await b.close();
      }
    };
    const zeroed = await run({});
    // 20 sends of ~270 bytes: the data ends in the second 4 KiB block, and the zeros reach
    // 2 MiB (the default) past the end of the data, in whole 1 MiB steps; partition 1 got none.
    assert.equal(DEFAULT_ZERO_AHEAD_BYTES, 2 * MiB);
    assert.equal(zeroed.written, 2 * MiB);
    if (!zeroed.ext || zeroed.ext.length === 0) this.skip(); // no filefrag, or a file system without extents to show
    assert.ok(allWritten(zeroed.ext, 0, 512), `blocks after the data are still unwritten: ${JSON.stringify(zeroed.ext)}`);
    assert.ok(zeroed.ext.some((e) => e.unwritten && e.last >= 1024), 'the rest of the preallocation should stay unwritten');
    for (const opts of [{ zeroAheadBytes: 0 }, { durability: 'none' as const }]) {
      const plain = await run(opts);
      assert.equal(plain.written, 0, `${JSON.stringify(opts)}: zeros written`);
      assert.ok(!allWritten(plain.ext, 0, 512), `${JSON.stringify(opts)}: blocks after the data are written: ${JSON.stringify(plain.ext)}`);
    }
  });

  it('a partition first written just after a zero step that found nothing to do is zeroed too (the idle I/O thread comes back for it)', async () => {
    const b = await openBroker();
    try {
      await b.createTopic('t', { partitions: 2 });
      const p = b.producer({ lingerMs: 0 });
      await p.send('t', { value: 'a', partition: 0 });
      await waitFor(() => b.zeroAheadBytesWritten >= DEFAULT_ZERO_AHEAD_BYTES, 20_000, 'p0 zeroed');
      await sleep(100); // the I/O thread idle, its last step having found nothing
      const z0 = b.zeroAheadBytesWritten;
      await p.send('t', { value: 'a', partition: 0 }); // a step finds nothing
      await p.send('t', { value: 'b', partition: 1 }); // within the steps' gap: one has to come back for it
      await waitFor(() => b.zeroAheadBytesWritten - z0 >= DEFAULT_ZERO_AHEAD_BYTES, 20_000, 'p1 zeroed');
    } finally {
      await b.close();
    }
  });

  it('a partition written in large cycles gets no zeros, even while another written in small ones gets them (its steps look at both)', async () => {
    const b = await openBroker({ maxRecordBytes: 4 * MiB });
    try {
      await b.createTopic('t', { partitions: 2 });
      const p = b.producer({ lingerMs: 0 });
      const until = Date.now() + 2500;
      const large = (async () => {
        while (Date.now() < until) {
          await p.send('t', { value: Buffer.alloc(256 * 1024, 1), partition: 0 });
          await sleep(60);
        }
      })();
      const small = (async () => {
        while (Date.now() < until) {
          await p.send('t', { value: 'x'.repeat(100), partition: 1 });
          await sleep(2);
        }
      })();
      await Promise.all([large, small]);
      await sleep(300);
      // Partition 1: its 2 MiB (its data stays far below a step). Partition 0's cycles
      // average 256 KiB: a step there would add at least 1 MiB more.
      const z = b.zeroAheadBytesWritten;
      assert.ok(z >= DEFAULT_ZERO_AHEAD_BYTES && z < DEFAULT_ZERO_AHEAD_BYTES + MiB, `${z} bytes of zeros`);
    } finally {
      await b.close();
    }
  });

  it('data written while zeros are laid down ahead of it, across segment rolls and batches larger than a segment, reads back whole, before and after a reopen', async () => {
    const dir = tmpDir();
    const b = await openBroker({ dir, maxRecordBytes: 4 * MiB });
    const sent: string[] = [];
    try {
      await b.createTopic('t', { segmentBytes: 3 * MiB });
      const p = b.producer({ lingerMs: 0 });
      // Small appends a few ms apart (the zeros keep ahead of them in steps between
      // cycles), bursts of large ones, and now and then one larger than a segment.
      for (let round = 0; round < 12; round++) {
        for (let i = 0; i < 20; i++) {
          const v = `r${round}i${i}:` + 'v'.repeat((round * 131 + i * 17) % 900);
          sent.push(v);
          await p.send('t', { value: v, partition: 0 });
          if (i % 5 === 0) await sleep(3);
        }
        const big = `big${round}:` + 'b'.repeat(round % 4 === 3 ? 3 * MiB + 1000 : 200_000);
        sent.push(big);
        await p.send('t', { value: big, partition: 0 });
      }
      // Zeros past the first 2 MiB. Steps follow small cycles and back off a second after
      // a large one, so on a loaded machine the rounds above can end before a step reached
      // a rolled segment (the CI's thread-backend stage once saw none): small sends go on
      // until one has.
      const until = Date.now() + 20_000;
      while (b.zeroAheadBytesWritten <= DEFAULT_ZERO_AHEAD_BYTES && Date.now() < until) {
        const v = `tail${sent.length}`;
        sent.push(v);
        await p.send('t', { value: v, partition: 0 });
        await sleep(20);
      }
      assert.ok(b.zeroAheadBytesWritten > DEFAULT_ZERO_AHEAD_BYTES, `zeros after a roll: ${b.zeroAheadBytesWritten}`);
      assert.deepEqual((await readAll(b, 't', 0)).map((m) => m.value.toString()), sent);
      assert.ok((await b.describeTopic('t')).partitions[0]!.segments > 3, 'the segments should have rolled');
    } finally {
      await b.close();
    }
    const r = await openBroker({ dir, maxRecordBytes: 4 * MiB });
    try {
      assert.deepEqual((await readAll(r, 't', 0)).map((m) => m.value.toString()), sent);
    } finally {
      await r.close();
    }
  });

  it('a broker reopened after a crash with zeros written ahead of the data finds the end where the data ends, reads it all and appends after it', async () => {
    const dir = tmpDir();
    const b = await openBroker({ dir });
    let image = '';
    try {
      await b.createTopic('t');
      const p = b.producer({ lingerMs: 0 });
      for (let i = 0; i < 30; i++) await p.send('t', { value: `m${i}`, partition: 0 });
      await waitFor(() => b.zeroAheadBytesWritten >= 2 * MiB, 10_000, 'zeros ahead');
      // What a crash now leaves on disk: the file as it is, zeros and all.
      image = tmpDir();
      fs.cpSync(dir, image, { recursive: true });
    } finally {
      await b.close();
    }
    const [seg] = segmentFiles(image, 't', 0);
    assert.ok(fs.statSync(seg!).size >= 2 * MiB, 'the image should hold the zeros');
    const r = await openBroker({ dir: image });
    try {
      assert.equal((await r.describeTopic('t')).partitions[0]!.endOffset, 30);
      assert.deepEqual((await readAll(r, 't', 0)).map((m) => m.value.toString()), Array.from({ length: 30 }, (_, i) => `m${i}`));
      const sent = await r.producer().send('t', { value: 'after', partition: 0 });
      assert.equal(sent.offset, 30);
      assert.deepEqual((await readAll(r, 't', 0, 30)).map((m) => m.value.toString()), ['after']);
    } finally {
      await r.close();
    }
  });
});

describe("Cache flushes for writes over written blocks (sync on ext4)", function () {
  this.timeout(60_000);
  /** Whether dir is on ext4 (`stat -f` names it ext2/ext3, the magic the three share). */
  const onExt4 = (dir: string) => /^ext[234]/.test(spawnSync('stat', ['-f', '-c', '%T', dir], { encoding: 'utf8' }).stdout ?? '');
  const cycles = (b: Broker) => b.logWriteLatency.count;
  /**
   * On a file system of one flex group (a couple of GiB or less) nothing places the flush
   * file's inode (made at the open) away from the next ones, and a segment whose inode
   * shares its table block stays on O_DSYNC: files made in between put the segment's
   * further on, as a larger file system's allocator would.
   */
  const padInodes = (dir: string) => {
    fs.mkdirSync(path.join(dir, 'pad'));
    for (let i = 0; i < 64; i++) fs.writeFileSync(path.join(dir, 'pad', String(i)), '');
  };
  /** Whether dir's file system is large enough for ext4 to spread directories over inode groups (16 GiB: many flex groups). */
  const large = (dir: string) => fs.statfsSync(dir).blocks * fs.statfsSync(dir).bsize >= 16 * 2 ** 30;

  it("with zeros ahead, every cycle of small appends is made durable by one flush of the disk's cache, and all of it reads back after a reopen", async function () {
    const dir = tmpDir();
    if (!onExt4(dir)) this.skip();
    const b = await openBroker({ dir });
    const sent: string[] = [];
    try {
      padInodes(dir);
      await b.createTopic('t');
      const p = b.producer({ lingerMs: 0 });
      await p.send('t', { value: 'first', partition: 0 });
      sent.push('first');
      // The first step of zeros (1 MiB) is enough; the second may not come on a loaded
      // machine (steps stop a second after the last send).
      await waitFor(() => b.zeroAheadBytesWritten >= DEFAULT_ZERO_AHEAD_BYTES / 2, 20_000, 'the zeros ahead');
      const [c0, f0] = [cycles(b), b.cacheFlushes];
      // 100 × ~300 bytes: about 30 KiB, well inside the first MiB of zeros.
      for (let i = 0; i < 100; i++) {
        const v = `m${i}:` + 'x'.repeat(300);
        sent.push(v);
        await p.send('t', { value: v, partition: 0 });
      }
      const [c1, f1] = [cycles(b), b.cacheFlushes];
      assert.ok(c1 - c0 >= 100, `one cycle per awaited send: ${c1 - c0}`);
      assert.equal(f1 - f0, c1 - c0, 'every cycle over the zeros should be made durable by a cache flush');
      assert.deepEqual((await readAll(b, 't', 0)).map((m) => m.value.toString()), sent);
    } finally {
      await b.close();
    }
    const r = await openBroker({ dir });
    try {
      assert.deepEqual((await readAll(r, 't', 0)).map((m) => m.value.toString()), sent);
      // After an open nothing is known durable (the last run may have left writes
      // unsynced): the first cycle goes with O_DSYNC, the next rewrites what it wrote.
      const p = r.producer({ lingerMs: 0 });
      await p.send('t', { value: 'after', partition: 0 });
      assert.equal(r.cacheFlushes, 0, 'the first write after an open went without O_DSYNC');
      await p.send('t', { value: 'after2', partition: 0 });
      assert.equal(r.cacheFlushes, 1);
      assert.equal((await r.describeTopic('t')).partitions[0]!.endOffset, sent.length + 2);
    } finally {
      await r.close();
    }
  });

  it('a cycle that reaches past the blocks already written goes with O_DSYNC (no flush alone); one that only rewrites the tail block does not', async function () {
    const dir = tmpDir();
    if (!onExt4(dir)) this.skip();
    const b = await openBroker({ dir, zeroAheadBytes: 0 });
    try {
      padInodes(dir);
      await b.createTopic('t');
      const p = b.producer({ lingerMs: 0 });
      await p.send('t', { value: 'first', partition: 0 });
      // Each append more than a block: every cycle writes blocks never written before,
      // whose extents (fallocated, unwritten) need their conversion made durable.
      const f0 = b.cacheFlushes;
      for (let i = 0; i < 30; i++) await p.send('t', { value: 'y'.repeat(5000), partition: 0 });
      assert.equal(b.cacheFlushes - f0, 0, 'a write into new blocks was made durable by a cache flush alone');
      // Small appends: most cycles rewrite the partial tail block the previous one wrote.
      const [c1, f1] = [cycles(b), b.cacheFlushes];
      for (let i = 0; i < 60; i++) await p.send('t', { value: 'z'.repeat(100), partition: 0 });
      const [c2, f2] = [cycles(b), b.cacheFlushes];
      assert.ok(f2 - f1 > 0 && f2 - f1 < c2 - c1, `cache flushes ${f2 - f1} of ${c2 - c1} cycles: those that stay in the tail block`);
    } finally {
      await b.close();
    }
  });

  it("the flush file is alone in a directory ext4 places in another inode group than the data's (an fsync writes its inode's whole table block, dirty from any inode in it)", async function () {
    const dir = tmpDir();
    if (!onExt4(dir) || !large(dir)) this.skip();
    const b = await openBroker({ dir });
    try {
      await b.createTopic('t');
      await b.producer({ lingerMs: 0 }).send('t', { value: 'v', partition: 0 });
      assert.deepEqual(fs.readdirSync(path.join(dir, '.flush')), ['d']);
      assert.deepEqual(fs.readdirSync(path.join(dir, '.flush', 'd')), ['flush']);
      const attrs = spawnSync('lsattr', ['-d', path.join(dir, '.flush')], { encoding: 'utf8' });
      if (attrs.status === 0) assert.match(attrs.stdout.split(' ')[0]!, /T/, 'the directory should be marked for the Orlov allocator (chattr +T)');
      const ino = (f: string) => fs.statSync(f).ino;
      const flush = ino(path.join(dir, '.flush', 'd', 'flush'));
      // 32 inodes: a 4 KiB table block of the smallest (128-byte) inodes.
      for (const f of [...segmentFiles(dir, 't', 0), path.join(dir, '.lock')])
        assert.notEqual(Math.floor((ino(f) - 1) / 32), Math.floor((flush - 1) / 32), `${f} (inode ${ino(f)}) shares a table block with the flush file (${flush})`);
    } finally {
      await b.close();
    }
  });

  it('a flush file that is not a regular file (a FIFO), or a data dir of an early build with a file at .flush: the broker opens, warns, and writes with O_DSYNC', async function () {
    const dir = tmpDir();
    if (!onExt4(dir)) this.skip();
    await (await openBroker({ dir })).close();
    const flush = path.join(dir, '.flush', 'd', 'flush');
    fs.rmSync(flush);
    if (spawnSync('mkfifo', [flush]).status !== 0) this.skip();
    const { broker: b, warnings } = await openBrokerWithWarnings({ dir });
    try {
      assert.ok(warnings.some((w) => w.includes(flush) && /not a regular file/.test(w)), JSON.stringify(warnings));
      await b.createTopic('t');
      const p = b.producer({ lingerMs: 0 });
      for (let i = 0; i < 10; i++) await p.send('t', { value: 'f'.repeat(100), partition: 0 });
      assert.equal(b.cacheFlushes, 0);
    } finally {
      await b.close();
    }
    // The first build kept an empty file at <dir>/.flush: replaced by the directory.
    fs.rmSync(path.join(dir, '.flush'), { recursive: true });
    fs.writeFileSync(path.join(dir, '.flush'), '');
    padInodes(dir);
    const { broker: r, warnings: none } = await openBrokerWithWarnings({ dir });
    try {
      assert.deepEqual(none, []);
      assert.ok(fs.statSync(flush).isFile());
      const p = r.producer({ lingerMs: 0 });
      for (let i = 0; i < 3; i++) await p.send('t', { value: 'g'.repeat(100), partition: 0 });
      assert.ok(r.cacheFlushes > 0);
    } finally {
      await r.close();
    }
  });

  it("none without sync, and none on a file system that is not ext4 (tmpfs), where every write stays O_DSYNC", async function () {
    const dir = tmpDir();
    const b = await openBroker({ dir, durability: 'none' });
    try {
      await b.createTopic('t');
      const p = b.producer({ lingerMs: 0 });
      for (let i = 0; i < 20; i++) await p.send('t', { value: 'n'.repeat(100), partition: 0 });
      assert.equal(b.cacheFlushes, 0);
    } finally {
      await b.close();
    }
    if (!fs.existsSync('/dev/shm') || onExt4('/dev/shm')) return;
    const shm = fs.mkdtempSync('/dev/shm/uringmq-test-');
    try {
      const s = await openBroker({ dir: shm });
      try {
        await s.createTopic('t');
        const p = s.producer({ lingerMs: 0 });
        for (let i = 0; i < 20; i++) await p.send('t', { value: 's'.repeat(100), partition: 0 });
        await sleep(100);
        for (let i = 0; i < 20; i++) await p.send('t', { value: 's'.repeat(100), partition: 0 });
        assert.equal(s.cacheFlushes, 0);
        assert.ok(!fs.existsSync(path.join(shm, '.flush')), 'no flush file where it cannot help');
        assert.equal((await s.describeTopic('t')).partitions[0]!.endOffset, 40);
      } finally {
        await s.close();
      }
    } finally {
      fs.rmSync(shm, { recursive: true, force: true });
    }
  });
});
