import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as index from '../src';
import { Broker, UringmqError, crc32c, decodeBatches, encodeBatch, readBatchMeta, sealBatch } from '../src';
import { expectCode, openBroker, sleep, tmpDir, within } from './helpers';

describe('Bad input and faults: typed errors, nothing lost', () => {
  let broker: Broker;
  let dir: string;
  beforeEach(async () => {
    dir = tmpDir();
    broker = await openBroker({ dir });
    await broker.createTopic('t', { partitions: 2 });
  });
  afterEach(async () => broker.close());

  it('rejects unsafe or malformed topic names before touching the filesystem', async () => {
    const bad = ['', '.', '..', '../x', 'a/b', '/abs', 'a\u0000b', 'a b', 'ünï', 'x'.repeat(250), 'a\\b', '*', 'a\nb'];
    for (const name of bad) await expectCode(broker.createTopic(name), 'INVALID_TOPIC_NAME');
    await expectCode(broker.createTopic(42 as unknown as string), 'INVALID_TOPIC_NAME');
    await expectCode(broker.deleteTopic('../t'), 'INVALID_TOPIC_NAME');
    assert.deepEqual(fs.readdirSync(path.join(dir, 'topics')), ['t']);
    assert.ok(!fs.existsSync(path.join(dir, 'x')));
    // the longest legal name works
    await broker.createTopic('y'.repeat(249));
  });

  it('TOPIC_EXISTS, TOPIC_NOT_FOUND and bad topic options', async () => {
    const e = await expectCode(broker.createTopic('t'), 'TOPIC_EXISTS');
    assert.ok(e instanceof UringmqError);
    assert.match(e.message, /\bt\b/);
    await expectCode(broker.describeTopic('nope'), 'TOPIC_NOT_FOUND');
    await expectCode(broker.deleteTopic('nope'), 'TOPIC_NOT_FOUND');
    await expectCode(broker.producer().send('nope', { value: 'x' }), 'TOPIC_NOT_FOUND');
    await expectCode(broker.read('nope', 0, 0), 'TOPIC_NOT_FOUND');
    await expectCode(broker.createTopic('u', { partitions: 0 }), 'INVALID_ARGUMENT');
    await expectCode(broker.createTopic('u', { partitions: 1.5 }), 'INVALID_ARGUMENT');
    for (const segmentBytes of [100, 2 ** 30 + 1, 4096.5]) {
      const e = await expectCode(broker.createTopic('u', { segmentBytes }), 'INVALID_ARGUMENT');
      assert.match(e.message, /segmentBytes must be an integer between 4096 and 1073741824, got /);
    }
    await expectCode(broker.createTopic('u', { retention: { maxBytes: -1 } }), 'INVALID_ARGUMENT');
    assert.deepEqual(await broker.listTopics(), ['t']);
  });

  it('a number given as a string is shown quoted in the error (got "5"), not as the valid-looking number it reads as', async () => {
    const shows = (f: () => unknown, re: RegExp) =>
      assert.throws(f, (e: UringmqError) => e.code === 'INVALID_ARGUMENT' && re.test(e.message) && !/, got \d/.test(e.message));
    shows(() => broker.consumer({ topic: 't', group: 'g', maxUnacked: '5' as never }), /maxUnacked must be an integer between 1 and \d+, got "5"/);
    shows(() => broker.consumer({ topic: 't', group: 'g', ackDeadlineMs: '100' as never }), /ackDeadlineMs .*, got "100"/);
    shows(() => broker.consumer({ topic: 't', group: 'g', from: { offset: '1' as never } }), /from\.offset .*, got "1"/);
    shows(() => broker.consumer({ topic: 't', maxBytes: '1024' as never }), /maxBytes .*, got "1024"/);
    await broker.producer().send('t', { value: 'x', partition: 0 });
    const c = broker.consumer({ topic: 't', group: 'g', from: 'earliest' });
    const m = (await c[Symbol.asyncIterator]().next()).value as index.ConsumedMessage;
    shows(() => m.nack({ delayMs: '5' as never }), /delayMs .*, got "5"/);
    m.ack();
    await c.close();
    // Numbers and other values as before.
    shows(() => broker.consumer({ topic: 't', group: 'g', maxUnacked: -1 }), /, got -1$/);
    shows(() => broker.consumer({ topic: 't', group: 'g', maxUnacked: NaN }), /, got NaN$/);
  });

  it('rejects wrong argument types with INVALID_ARGUMENT', async () => {
    const p = broker.producer();
    const bad: unknown[] = [null, 42, 'str', {}, { value: 5 }, { value: 'x', key: 7 }, { value: 'x', headers: { a: 1 } },
      { value: 'x', headers: [] }, { value: 'x', timestamp: -1 }, { value: 'x', timestamp: 1.5 }, { value: 'x', partition: -1 }];
    for (const r of bad) await expectCode(p.send('t', r as never), 'INVALID_ARGUMENT');
    await expectCode(p.send('t', { value: 'x', partition: 2 }), 'INVALID_ARGUMENT');
    await expectCode(p.sendBatch('t', []), 'INVALID_ARGUMENT');
    await expectCode(p.sendBatch('t', [{ value: 'ok' }, { value: 3 } as never]), 'INVALID_ARGUMENT');
    await expectCode(p.sendBatch('t', [{ value: 'ok' }], { partition: 9 }), 'INVALID_ARGUMENT');
    await expectCode(() => broker.producer({ lingerMs: -1 }), 'INVALID_ARGUMENT');
    await expectCode(() => broker.producer({ maxBatchBytes: 0 }), 'INVALID_ARGUMENT');
    await expectCode(Broker.open({ dir: tmpDir(), durability: 'fast' as never }), 'INVALID_ARGUMENT');
    await expectCode(Broker.open({ dir: tmpDir(), durability: { intervalMs: 0 } }), 'INVALID_ARGUMENT');
    await expectCode(Broker.open({ dir: tmpDir(), ioBackend: 'epoll' as never }), 'INVALID_ARGUMENT');
    await expectCode(Broker.open({} as never), 'INVALID_ARGUMENT');
    // directIo: a string from a config file ('false') was taken as true, silently
    for (const directIo of ['false', 'no', 0, 1, null])
      await expectCode(Broker.open({ dir: tmpDir(), directIo: directIo as never }), 'INVALID_ARGUMENT');
    // nothing was written by any of it
    for (const part of (await broker.describeTopic('t')).partitions) assert.equal(part.endOffset, 0);
  });

  it('rejects negative, fractional and out-of-range offsets', async () => {
    await broker.producer().sendBatch('t', [{ value: 'a' }, { value: 'b' }], { partition: 0 });
    for (const off of [-1, 1.5, NaN, Infinity, 2 ** 60]) await expectCode(broker.read('t', 0, off), 'INVALID_ARGUMENT');
    await expectCode(broker.read('t', 5, 0), 'INVALID_ARGUMENT');
    const e = await expectCode(broker.read('t', 0, 3), 'OFFSET_OUT_OF_RANGE');
    assert.match(e.message, /t\/0/);
    assert.match(e.message, /\b3\b/);
    assert.equal((await broker.read('t', 0, 2)).length, 0); // the end itself is fine: nothing yet
    await expectCode(() => broker.consumer({ topic: 't', from: { offset: -5 } }), 'INVALID_ARGUMENT');
    await expectCode(() => broker.consumer({ topic: 't', from: null as never }), 'INVALID_ARGUMENT'); // not taken for 'latest'
  });

  it('RECORD_TOO_LARGE for records over maxRecordBytes, others unaffected', async () => {
    const b = await Broker.open({ dir: tmpDir(), maxRecordBytes: 1000 });
    await b.createTopic('t');
    const p = b.producer();
    const e = await expectCode(p.send('t', { value: Buffer.alloc(2000) }), 'RECORD_TOO_LARGE');
    assert.match(e.message, /2\d{3} bytes.*topic t/);
    await expectCode(p.sendBatch('t', [{ value: 'ok' }, { value: 'y'.repeat(5000) }]), 'RECORD_TOO_LARGE');
    assert.equal((await p.send('t', { value: Buffer.alloc(900) })).offset, 0);
    // Batches built elsewhere (publishBatch, gRPC `batch`) are held to it as well...
    const raw = sealBatch(encodeBatch([{ value: 'ok' }, { value: 'y'.repeat(5000) }, { value: 'ok' }]));
    const e2 = await expectCode(b.publishBatch('t', raw, 0), 'RECORD_TOO_LARGE');
    assert.match(e2.message, /50\d\d bytes.*topic t.*nothing was written/);
    // ...while a batch larger than the limit made of records within it is taken.
    const many = sealBatch(encodeBatch(Array.from({ length: 20 }, () => ({ value: Buffer.alloc(900) }))));
    assert.equal((await b.publishBatch('t', many, 0)).baseOffset, 1);
    assert.equal((await b.describeTopic('t')).partitions[0]!.endOffset, 21);
    await b.close();
  });

  it('a sendBatch larger than one batch can be is refused whole, and one just under it is written whole', async () => {
    const p = broker.producer();
    const limit = broker.maxBatchBytes;
    const mb = Buffer.alloc(1_000_000, 1);
    const tooBig = Array.from({ length: Math.ceil(limit / 1_000_000) + 1 }, () => ({ value: mb }));
    const e = await expectCode(p.sendBatch('t', tooBig, { partition: 0 }), 'RECORD_TOO_LARGE');
    assert.match(e.message, /t\/0.*nothing was written/);
    // 100-byte values: recordSize's bound (120 B each) says too big, the exact
    // encoding fits: 106 B per record plus its offset delta's varint (1, 2 or 3 bytes).
    const size = (k: number) => 64 + 106 * k + Math.min(k, 128) + 2 * Math.max(0, Math.min(k, 16384) - 128) + 3 * Math.max(0, k - 16384);
    const v = Buffer.alloc(100, 2);
    let n = Math.floor((limit - 64) / 110);
    while (size(n + 1) <= limit) n++;
    assert.ok(n * 120 > limit);
    const r = await p.sendBatch('t', Array.from({ length: n }, () => ({ value: v, timestamp: 1 })), { partition: 0 });
    assert.deepEqual(r, { partition: 0, baseOffset: 0, count: n });
    // One batch: a 1-byte read at offset 0 returns it whole, exactly the computed size.
    const internal = broker as unknown as { partitionState(t: string, p: number): unknown; readRaw(ps: unknown, o: number, m: number): Promise<Buffer> };
    assert.equal((await internal.readRaw(internal.partitionState('t', 0), 0, 1)).length, size(n));
    assert.equal((await broker.describeTopic('t')).partitions[0]!.endOffset, n);
    // one more record and it is over: refused, the partition's end unchanged
    const over = Array.from({ length: n + 1 }, () => ({ value: v, timestamp: 1 }));
    await expectCode(p.sendBatch('t', over, { partition: 0 }), 'RECORD_TOO_LARGE');
    // The core holds the same limit, whatever path a batch takes to it.
    const core = broker as unknown as { partitionState(t: string, p: number): unknown; appendBatch(ps: unknown, b: Buffer, seal: boolean, n: number): Promise<unknown> };
    await expectCode(core.appendBatch(core.partitionState('t', 0), encodeBatch(over), true, over.length), 'RECORD_TOO_LARGE');
    assert.equal((await broker.describeTopic('t')).partitions[0]!.endOffset, n);
  });

  it('a corrupt batch handed to the core is rejected and writes nothing', async () => {
    const internal = broker as unknown as {
      partitionState(t: string, p: number): unknown;
      appendBatch(ps: unknown, b: Buffer, seal: boolean, n: number): Promise<{ baseOffset: number }>;
    };
    const ps = internal.partitionState('t', 0);
    const good = sealBatch(encodeBatch([{ value: 'one' }, { value: 'two' }]));
    const flipped = Buffer.from(good);
    flipped[good.length - 2] ^= 0xff;
    const e = await expectCode(internal.appendBatch(ps, flipped, false, 2), 'CORRUPT_BATCH');
    assert.match(e.message, /CRC/);
    assert.match(e.message, /t\/0/);
    const truncated = Buffer.from(good.subarray(0, good.length - 1));
    truncated.writeUInt32LE(truncated.length, 4);
    await expectCode(internal.appendBatch(ps, truncated, false, 2), 'CORRUPT_BATCH');
    await expectCode(internal.appendBatch(ps, Buffer.from('not a batch at all, not at all, not at all, not at all, not at all!'), false, 1), 'CORRUPT_BATCH');
    // a mangled record inside a batch the core would otherwise seal itself
    const mangled = encodeBatch([{ value: 'abc' }]);
    mangled[64] = 0x7f; // record length now runs past the batch
    await expectCode(internal.appendBatch(ps, mangled, true, 1), 'CORRUPT_BATCH');
    assert.equal((await broker.describeTopic('t')).partitions[0]!.endOffset, 0);
    // the partition still works and offsets did not skip
    assert.equal((await internal.appendBatch(ps, Buffer.from(good), false, 2)).baseOffset, 0);
    assert.deepEqual((await broker.read('t', 0, 0)).map((m) => m.value.toString()), ['one', 'two']);
  });

  it('the core checks every field of every record, in small records too (one- and two-byte offset deltas)', async () => {
    const internal = broker as unknown as {
      partitionState(t: string, p: number): unknown;
      appendBatch(ps: unknown, b: Buffer, seal: boolean, n: number): Promise<{ baseOffset: number }>;
    };
    const ps = internal.partitionState('t', 1);
    const n = 300;
    const base = Date.now();
    // Plain small records (the core's fast path), a few with a key, a header or a later
    // timestamp (its general walk) in between.
    const records = Array.from({ length: n }, (_, i) => ({
      value: `v${String(i).padStart(19, '0')}`,
      ...(i % 97 === 50 ? { key: `k${i}` } : {}),
      ...(i % 89 === 40 ? { headers: { h: 'x' } } : {}),
      timestamp: i % 53 === 7 ? base + 20 : base,
    }));
    const good = encodeBatch(records);
    // Where each record starts, from its one-byte length prefix.
    const at: number[] = [];
    for (let pos = 64; pos < good.length; pos += 1 + good[pos]!) at.push(pos);
    assert.equal(at.length, n);
    const plain = (i: number) => records[i]!.key === undefined && records[i]!.headers === undefined;
    for (const i of [0, 5, 127, 128, 200, n - 1]) {
      assert.ok(plain(i));
      const off = i < 128 ? 1 : 2; // bytes of the offset delta
      const p = at[i]!;
      const edits: Array<[string, number, number]> = [
        ['length', p, good[p]! + 1],
        ['attributes', p + 1, 1],
        ['offset delta', p + 3, good[p + 3]! ^ 1],
        ['key length', p + 3 + off, 3],
        ['value length', p + 4 + off, good[p + 4 + off]! - 1],
        ['header count', p + good[p]!, 1],
      ];
      for (const [what, pos, v] of edits) {
        const bad = Buffer.from(good);
        bad[pos] = v;
        const e = await expectCode(internal.appendBatch(ps, bad, true, n), 'CORRUPT_BATCH');
        assert.match(e.message, new RegExp(`record ${i}\\b`), `${what} of record ${i}: ${e.message}`);
      }
    }
    assert.equal((await broker.describeTopic('t')).partitions[1]!.endOffset, 0);
    assert.equal((await internal.appendBatch(ps, Buffer.from(good), true, n)).baseOffset, 0);
    const back = await broker.read('t', 1, 0);
    assert.deepEqual(back.map((m) => m.value.toString()), records.map((r) => r.value));
    assert.deepEqual(back.map((m) => m.timestamp), records.map((r) => r.timestamp));
    assert.equal(back[50]!.key!.toString(), 'k50');
  });

  it('BROKER_CLOSED after close; close while sends are pending resolves them', async () => {
    const p = broker.producer({ lingerMs: 50 });
    const sends = Array.from({ length: 2000 }, (_, i) => p.send('t', { value: `m${i}`, partition: 0 }));
    const batch = p.sendBatch('t', [{ value: 'b' }], { partition: 1 });
    const ps = broker.partitionState('t', 0); // what consumers, groups and Fetch hold across awaits
    await broker.close();
    const rs = await Promise.all(sends);
    assert.equal(rs[1999]!.offset, 1999);
    assert.equal((await batch).baseOffset, 0);
    await expectCode(p.send('t', { value: 'late' }), 'BROKER_CLOSED');
    await expectCode(broker.createTopic('x'), 'BROKER_CLOSED');
    await expectCode(broker.read('t', 0, 0), 'BROKER_CLOSED');
    await expectCode(() => broker.producer(), 'BROKER_CLOSED');
    // Its files are closed: the offsets a delivery loop polls say so too, not "partition is not open".
    await expectCode(() => broker.partitionOffsets(ps), 'BROKER_CLOSED');
    await expectCode(() => broker.partitionInfo(ps), 'BROKER_CLOSED');
    await broker.close(); // idempotent
    broker = await Broker.open({ dir });
    assert.equal((await broker.describeTopic('t')).partitions[0]!.endOffset, 2000);
  });

  it('a data directory that cannot be made is IO_ERROR, also where the file system answers ENOENT for a parent that exists (/proc)', async () => {
    // Node's own recursive mkdir retried that for ever.
    await expectCode(Broker.open({ dir: '/proc/uringmq-no-such/data' }), 'IO_ERROR');
    const file = path.join(dir, 'a-file');
    fs.writeFileSync(file, '');
    await expectCode(Broker.open({ dir: path.join(file, 'data') }), 'IO_ERROR');
    await expectCode(Broker.open({ dir: file }), 'IO_ERROR');
    const nested = path.join(dir, 'x', 'y', 'z');
    const b = await Broker.open({ dir: nested });
    await b.close();
    assert.ok(fs.statSync(nested).isDirectory());
  });

  it("a damaged topic.json is IO_ERROR naming the file and the way on, changing nothing; moving the topic out opens the rest", async () => {
    const d = tmpDir();
    let b = await openBroker({ dir: d });
    await b.createTopic('keep');
    await b.createTopic('hurt');
    await b.producer().send('keep', { value: 'k', partition: 0 });
    await b.producer().send('hurt', { value: 'h', partition: 0 });
    await b.close();
    const hurt = path.join(d, 'topics', 'hurt');
    fs.writeFileSync(path.join(hurt, 'topic.json'), '');
    const listing = () => fs.readdirSync(hurt, { recursive: true }).map(String).sort();
    const before = listing();
    const e = await expectCode(Broker.open({ dir: d }), 'IO_ERROR');
    assert.match(e.message, /corrupt topic metadata .*hurt.topic\.json.*Restore the file .*or move .*hurt out of the data directory/);
    assert.deepEqual(listing(), before);
    fs.renameSync(hurt, path.join(d, '..', path.basename(d) + '-hurt'));
    b = await Broker.open({ dir: d });
    assert.deepEqual(await b.listTopics(), ['keep']);
    assert.equal((await b.read('keep', 0, 0))[0]!.value.toString(), 'k');
    await b.close();
    fs.rmSync(path.join(d, '..', path.basename(d) + '-hurt'), { recursive: true, force: true });
  });

  it('a topic.json edited by hand into values no createTopic takes (a huge partition count, a retention or segment size of the wrong type, sign or range, no retention) is IO_ERROR naming the file, and the open changes nothing', async () => {
    const d = tmpDir();
    let b = await openBroker({ dir: d });
    await b.createTopic('t', { segmentBytes: 8192 });
    await b.producer().send('t', { value: 'v', partition: 0 });
    await b.close();
    const tdir = path.join(d, 'topics', 't');
    const file = path.join(tdir, 'topic.json');
    const good = fs.readFileSync(file, 'utf8');
    const listing = () => fs.readdirSync(tdir, { recursive: true }).map(String).sort();
    const before = listing();
    const edits: Array<[string, (c: Record<string, unknown>) => void]> = [
      ['a million partitions', (c) => (c.partitions = 1_000_000)],
      ['partitions past the limit', (c) => (c.partitions = 4097)],
      ['no retention', (c) => delete c.retention],
      ['retention null', (c) => (c.retention = null)],
      ['retention a list', (c) => (c.retention = [])],
      ['negative retention', (c) => (c.retention = { maxBytes: -5, maxAgeMs: -7 })],
      ['retention as a string', (c) => (c.retention = { maxBytes: '5' })],
      ['retention not a safe integer', (c) => (c.retention = { maxAgeMs: 1e300 })],
      ['segmentBytes as a string', (c) => (c.segmentBytes = 'abc')],
      ['segmentBytes missing', (c) => delete c.segmentBytes],
      ['segmentBytes too small', (c) => (c.segmentBytes = 0)],
      ['segmentBytes fractional', (c) => (c.segmentBytes = 8192.5)],
      ['an invalid name', (c) => (c.name = '../t')],
    ];
    for (const [what, edit] of edits) {
      const cfg = JSON.parse(good) as Record<string, unknown>;
      edit(cfg);
      fs.writeFileSync(file, JSON.stringify(cfg));
      const e = await expectCode(Broker.open({ dir: d }), 'IO_ERROR').catch((err: Error) => {
        throw new Error(`${what}: ${err.message}`);
      });
      assert.match(e.message, /corrupt topic metadata .*t.topic\.json/, what);
      assert.deepEqual(listing(), before, `${what}: the open changed the topic's directory`);
    }
    fs.writeFileSync(file, good);
    b = await Broker.open({ dir: d });
    assert.equal((await b.read('t', 0, 0))[0]!.value.toString(), 'v');
    await b.close();
  });

  it("a topic.json whose partition count was lowered by hand, under partitions that hold records, is IO_ERROR naming them, not those partitions hidden; empty ones above it are left alone", async () => {
    const d = tmpDir();
    let b = await openBroker({ dir: d });
    await b.createTopic('t', { partitions: 3, segmentBytes: 8192 });
    await b.producer().send('t', { value: 'two', partition: 2 });
    await b.createTopic('e', { partitions: 3, segmentBytes: 8192 });
    await b.close();
    const lower = (topic: string) => {
      const file = path.join(d, 'topics', topic, 'topic.json');
      const cfg = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
      cfg.partitions = 2;
      fs.writeFileSync(file, JSON.stringify(cfg));
    };
    lower('e'); // nothing written above: opens as 2 partitions
    lower('t');
    const e = await expectCode(Broker.open({ dir: d }), 'IO_ERROR');
    assert.match(e.message, /t.topic\.json says 2 partitions, but a partition past those holds records \(2\/0+\.log/);
    const file = path.join(d, 'topics', 't', 'topic.json');
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('"partitions":2', '"partitions":3'));
    b = await Broker.open({ dir: d });
    try {
      assert.equal((await b.read('t', 2, 0))[0]!.value.toString(), 'two');
      assert.equal((await b.describeTopic('e')).partitions.length, 2);
    } finally {
      await b.close();
    }
  });

  it('DIR_LOCKED for a second broker, in this process and in another', async () => {
    const e = await expectCode(Broker.open({ dir }), 'DIR_LOCKED');
    assert.ok(e.message.includes(dir));
    const child = spawnSync(process.execPath, ['--require', 'tsx/cjs', '-e', `
      const { Broker } = require(${JSON.stringify(path.resolve(__dirname, '../src'))});
      Broker.open({ dir: ${JSON.stringify(dir)} }).then(() => { console.log('OPENED'); process.exit(0); },
        (e) => { console.log(e.code); process.exit(0); });`], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(child.stdout.trim(), 'DIR_LOCKED', child.stderr);
    await broker.close();
    broker = await Broker.open({ dir }); // released on close
  });

  it('deleting a topic fails its pending and later sends cleanly', async () => {
    const p = broker.producer({ lingerMs: 1000 });
    const pending = p.send('t', { value: 'x' }).then(() => null, (e: Error) => e);
    await broker.deleteTopic('t');
    assert.equal(((await pending) as { code?: string } | null)?.code, 'TOPIC_NOT_FOUND');
    await expectCode(p.send('t', { value: 'y' }), 'TOPIC_NOT_FOUND');
  });
  it('a batch whose buffer is transferred (detached) right after publishBatch still lands intact', async () => {
    const slow = await openBroker({ dir: tmpDir(), testIoDelayMs: 100 });
    try {
      await slow.createTopic('d');
      const value = Buffer.alloc(4096, 0x63);
      const batch = encodeBatch(Array.from({ length: 1000 }, () => ({ value })));
      sealBatch(batch);
      const own = Buffer.from(new ArrayBuffer(batch.length));
      batch.copy(own);
      const blocker = slow.publishBatch('d', batch, 0); // keeps the I/O thread busy
      const pending = slow.publishBatch('d', own, 0);
      structuredClone(own.buffer, { transfer: [own.buffer] }); // detached: its memory goes
      assert.equal(own.length, 0);
      await blocker;
      const r = await pending;
      const got = await slow.read('d', 0, r.baseOffset, { maxBytes: 8 << 20 });
      assert.equal(got.length, 1000);
      assert.ok(got.every((m) => m.value.equals(value)));
    } finally {
      await slow.close();
    }
  });

  for (const fault of ['submit', 'wait'] as const) {
    it(`io_uring ${fault} failure: nothing is acked that is not on disk, and the broker goes on or fences`, async function () {
      const d = tmpDir();
      const b = await openBroker({ dir: d, testUringFault: fault, testIoDelayMs: 30 });
      if (b.ioBackend !== 'io_uring') {
        await b.close();
        return this.skip();
      }
      await b.createTopic('u', { partitions: 2 });
      const sends = Array.from({ length: 40 }, (_, i) => b.publishBatch('u', (() => {
        const x = encodeBatch([{ value: Buffer.from(`m${i}`) }]);
        sealBatch(x);
        return x;
      })(), i % 2));
      const results = await Promise.allSettled(sends);
      await b.close();
      const acked = results.flatMap((r, i) => (r.status === 'fulfilled' ? [{ i, ...r.value }] : []));
      const failed = results.filter((r) => r.status === 'rejected').map((r) => ((r as PromiseRejectedResult).reason as UringmqError).code);
      if (fault === 'submit') assert.equal(acked.length, 40, `failed: ${failed.join(', ')}`); // written the plain way
      else assert.ok(failed.includes('IO_ERROR'), `the injected failure was reported: ${failed.join(', ') || 'none failed'}`);
      const again = await openBroker({ dir: d });
      try {
        for (const a of acked) {
          const got = await again.read('u', a.partition, a.baseOffset);
          assert.equal(got[0]?.value.toString(), `m${a.i}`, `acked message m${a.i} at ${a.partition}/${a.baseOffset}`);
        }
      } finally {
        await again.close();
      }
    });
  }

  it('io_uring short submit then a failed wait: only the ops the kernel took are awaited (the rest, never submitted, would never complete), and those go the plain way', async function () {
    const d = tmpDir();
    // In a child: before the fix its I/O thread polled forever for completions of ops
    // still in the SQ, and neither the appends nor close() ever settled.
    const src = path.join(__dirname, '..', 'src');
    const r = spawnSync(
      process.execPath,
      ['--require', 'tsx/cjs', '-e',
        `const { Broker, encodeBatch, sealBatch } = require(${JSON.stringify(src)});
        Broker.open({ dir: ${JSON.stringify(d)}, testUringFault: 'short-submit-wait', testIoDelayMs: 30 }).then(async (b) => {
          if (b.ioBackend !== 'io_uring') { console.log(JSON.stringify({ skip: true })); await b.close(); return; }
          await b.createTopic('u', { partitions: 4 });
          const sends = Array.from({ length: 40 }, (_, i) => { const x = encodeBatch([{ value: Buffer.from('m' + i) }]); sealBatch(x); return b.publishBatch('u', x, i % 4); });
          const results = await Promise.allSettled(sends);
          await b.close();
          console.log(JSON.stringify({ results: results.map((r, i) => r.status === 'fulfilled' ? { i, partition: r.value.partition, baseOffset: r.value.baseOffset } : { i, code: r.reason.code }) }));
        })`],
      { encoding: 'utf8', timeout: 30_000 },
    );
    assert.equal(r.status, 0, `the broker did not finish (${r.signal ?? r.status}): ${r.stderr}`);
    const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { skip?: boolean; results?: Array<{ i: number; partition?: number; baseOffset?: number; code?: string }> };
    if (out.skip) return this.skip();
    const results = out.results!;
    const failed = results.filter((x) => x.code !== undefined);
    assert.ok(failed.every((x) => x.code === 'IO_ERROR'), r.stdout);
    assert.ok(failed.length > 0 && failed.length < 40, `one op failed (its partition fenced), the others written the plain way: ${r.stdout}`);
    const again = await openBroker({ dir: d });
    try {
      for (const a of results.filter((x) => x.code === undefined)) {
        const got = await again.read('u', a.partition!, a.baseOffset!);
        assert.equal(got[0]?.value.toString(), `m${a.i}`, `acked message m${a.i} at ${a.partition}/${a.baseOffset}`);
      }
    } finally {
      await again.close();
    }
  });

  it('deleting topics with durability none releases their files', async () => {
    const b = await openBroker({ dir: tmpDir(), durability: 'none' });
    const deletedFds = () =>
      fs.readdirSync('/proc/self/fd').filter((f) => {
        try {
          return fs.readlinkSync(`/proc/self/fd/${f}`).endsWith('(deleted)');
        } catch {
          return false;
        }
      }).length;
    try {
      const before = deletedFds();
      for (let i = 0; i < 5; i++) {
        await b.createTopic(`n${i}`, { partitions: 2 });
        await b.producer().sendBatch(`n${i}`, [{ value: 'x' }, { value: 'y' }]);
        await b.deleteTopic(`n${i}`);
      }
      const until = Date.now() + 5000;
      while (deletedFds() > before && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      assert.equal(deletedFds(), before, 'fds of deleted segment files stay open');
    } finally {
      await b.close();
    }
  });
  it('deleting a topic whose sends wait for room in the write queue settles them and completes; close() after it too', async () => {
    const b = await openBroker({ dir: tmpDir(), maxPendingBytes: 1, testIoDelayMs: 200, durability: 'none' });
    try {
      await b.createTopic('a');
      await b.createTopic('w');
      const p = b.producer();
      const sa = p.sendBatch('a', [{ value: 'x' }]);
      const sw = p.sendBatch('w', [{ value: 'y' }]); // waits behind a's append
      await within(5000, 'deleteTopic', b.deleteTopic('w'));
      await expectCode(sw, 'TOPIC_NOT_FOUND');
      assert.equal((await sa).baseOffset, 0);
      await b.createTopic('after'); // the admin chain goes on
    } finally {
      await within(5000, 'close', b.close());
    }
  });

  it('a topic takes sends only once its topic.json is durable', async () => {
    const d = tmpDir();
    const b = await openBroker({ dir: d });
    try {
      let done = false;
      const created = b.createTopic('fresh', { partitions: 4 }).finally(() => (done = true));
      while (!done) {
        if ((await b.listTopics()).includes('fresh')) {
          assert.ok(fs.existsSync(path.join(d, 'topics', 'fresh', 'topic.json')), 'visible before topic.json');
        }
        await new Promise((r) => setImmediate(r));
      }
      await created;
      assert.ok((await b.listTopics()).includes('fresh'));
    } finally {
      await b.close();
    }
  });

  it('a topic directory without topic.json: removed at open when it holds no records (a create that crashed), refused (IO_ERROR, nothing removed) when it does', async () => {
    const d = tmpDir();
    let b = await openBroker({ dir: d });
    await b.createTopic('kept', { partitions: 2 });
    await b.producer().send('kept', { value: 'precious', partition: 1 });
    await b.createTopic('empty', { partitions: 2 });
    await b.close();
    const meta = path.join(d, 'topics', 'kept', 'topic.json');
    const saved = fs.readFileSync(meta);
    fs.rmSync(meta);
    fs.rmSync(path.join(d, 'topics', 'empty', 'topic.json')); // as a create that crashed leaves it
    const e = await expectCode(Broker.open({ dir: d }), 'IO_ERROR');
    assert.match(e.message, /kept has no topic\.json but holds records \(1\/00000000000000000000\.log, \d+ bytes\)/);
    assert.ok(fs.existsSync(path.join(d, 'topics', 'kept', '1', '00000000000000000000.log')), 'the records were removed');
    fs.writeFileSync(meta, saved);
    b = await openBroker({ dir: d });
    try {
      assert.deepEqual(await b.listTopics(), ['kept']);
      assert.ok(!fs.existsSync(path.join(d, 'topics', 'empty')), 'the empty one, a create that crashed, was removed');
      assert.deepEqual((await b.read('kept', 1, 0)).map((m) => m.value.toString()), ['precious']);
    } finally {
      await b.close();
    }
  });

  it("createTopic refuses (TOPIC_EXISTS) a name whose directory holds another topic's topic.json, removing nothing: on a file system that ignores case, `A` is `a`'s directory", async () => {
    const d = tmpDir();
    const b = await openBroker({ dir: d });
    try {
      await b.createTopic('a');
      await b.producer().send('a', { value: 'kept', partition: 0 });
      // What createTopic('A') finds on vfat or a casefold ext4 directory, made by hand here.
      const alias = path.join(d, 'topics', 'A');
      fs.cpSync(path.join(d, 'topics', 'a'), alias, { recursive: true });
      const e = await expectCode(b.createTopic('A'), 'TOPIC_EXISTS');
      assert.match(e.message, /holds topic a \(does the data directory's file system ignore case\?\)/);
      assert.ok(fs.existsSync(path.join(alias, 'topic.json')) && fs.existsSync(path.join(alias, '0', '00000000000000000000.log')), 'the directory was removed');
      fs.rmSync(alias, { recursive: true });
      await b.createTopic('A'); // nothing there now
      assert.deepEqual((await b.read('a', 0, 0)).map((m) => m.value.toString()), ['kept']);
    } finally {
      await b.close();
    }
  });

  it('a topic with the longest legal name can be deleted for good, and its group offsets written', async () => {
    const d = tmpDir();
    const name = 'z'.repeat(249);
    let b = await openBroker({ dir: d });
    await b.createTopic(name);
    await b.producer().send(name, { value: 'v' });
    const c = b.consumer({ topic: name, group: 'g'.repeat(249), from: 'earliest', deadLetterTopic: 'dead' });
    for await (const m of c) {
      m.ack();
      break;
    }
    await c.close();
    await b.close(); // writes the group's offsets (its file, 249 + 5 characters, is created)
    b = await openBroker({ dir: d });
    assert.deepEqual(await b.groups.committedOffsets('g'.repeat(249), name), [1]);
    await b.deleteTopic(name);
    await b.close();
    b = await openBroker({ dir: d });
    assert.deepEqual(await b.listTopics(), []);
    await b.close();
  });

  it("a deleteTopic whose directory cannot be moved to the trash fails with a typed error and leaves the topic as it was: listed, readable, taking sends, deleted once it can be", async function () {
    const p = broker.producer();
    await p.send('t', { value: 'kept', partition: 0 });
    const tdir = path.join(dir, 'topics', 't');
    if (spawnSync('chattr', ['+i', tdir]).status !== 0) return this.skip(); // the rename out of topics/ fails (EPERM)
    try {
      const e = await expectCode(broker.deleteTopic('t'), 'IO_ERROR');
      assert.ok(e instanceof UringmqError, `${e.constructor.name}: ${e.message}`);
      assert.deepEqual(await broker.listTopics(), ['t']);
      assert.deepEqual((await broker.read('t', 0, 0)).map((m) => m.value.toString()), ['kept']);
      assert.equal((await p.send('t', { value: 'after', partition: 0 })).offset, 1);
    } finally {
      spawnSync('chattr', ['-i', tdir]);
    }
    await broker.deleteTopic('t');
    assert.deepEqual(await broker.listTopics(), []);
  });

  it("a deleted topic's files that cannot be removed from the trash (an immutable file) neither fail the delete, which happened, nor keep the broker from opening; a later open removes them once it can", async function () {
    const d = tmpDir();
    let b = await openBroker({ dir: d });
    await b.createTopic('keep');
    await b.createTopic('gone');
    await b.producer().send('keep', { value: 'k', partition: 0 });
    await b.producer().send('gone', { value: 'g', partition: 0 });
    const pdir = path.join(d, 'topics', 'gone', '0');
    const seg = fs.readdirSync(pdir).find((n) => n.endsWith('.log'))!;
    if (spawnSync('chattr', ['+i', path.join(pdir, seg)]).status !== 0) {
      await b.close();
      return this.skip(); // no immutable attribute here (not root, or a file system without it)
    }
    const stuck = () => fs.readdirSync(path.join(d, 'trash')).map((t) => path.join(d, 'trash', t, '0', seg)).filter((f) => fs.existsSync(f));
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on('warning', onWarning);
    try {
      await b.deleteTopic('gone'); // the topic is gone: its directory left topics/ for good
      assert.deepEqual(await b.listTopics(), ['keep']);
      await expectCode(b.deleteTopic('gone'), 'TOPIC_NOT_FOUND');
      await b.close();
      assert.equal(stuck().length, 1);
      b = await Broker.open({ dir: d });
      assert.deepEqual(await b.listTopics(), ['keep']);
      assert.equal((await b.read('keep', 0, 0))[0]!.value.toString(), 'k');
      await b.createTopic('gone');
      assert.equal((await b.describeTopic('gone')).partitions[0]!.endOffset, 0);
      await b.close();
      await sleep(10); // warnings are emitted on the next tick
      assert.ok(warnings.some((w) => w.includes(path.join(d, 'trash'))), `no warning names the trash: ${warnings.join(' | ')}`);
    } finally {
      process.off('warning', onWarning);
      for (const f of stuck()) spawnSync('chattr', ['-i', f]);
    }
    b = await Broker.open({ dir: d });
    assert.deepEqual(fs.readdirSync(path.join(d, 'trash')), []);
    await b.close();
  });

  it('bad values that String() or JSON.stringify cannot show (a BigInt, a prototype-less object, a detached view, a Symbol) are INVALID_*, not a TypeError from the message', async () => {
    const bare = Object.create(null) as never;
    const ab = new ArrayBuffer(8);
    const detached = new Uint8Array(ab);
    structuredClone(ab, { transfer: [ab] });
    const p = broker.producer();
    await expectCode(broker.commitOffset(1n as never, 't', 0, 0), 'INVALID_GROUP_NAME');
    await expectCode(broker.deleteGroup(1n as never, 't'), 'INVALID_GROUP_NAME');
    await expectCode(broker.committedOffsets(1n as never, 't'), 'INVALID_GROUP_NAME');
    await expectCode(() => broker.consumer({ topic: 't', group: 1n as never }), 'INVALID_GROUP_NAME');
    await expectCode(() => broker.consumer({ topic: 't', from: 1n as never }), 'INVALID_ARGUMENT');
    await expectCode(broker.commitOffset('g', 't', bare, 0), 'INVALID_ARGUMENT');
    await expectCode(broker.read('t', detached as never, 0), 'INVALID_ARGUMENT');
    await expectCode(broker.read('t', 0, bare), 'INVALID_ARGUMENT');
    await expectCode(broker.createTopic('u', { segmentBytes: bare }), 'INVALID_ARGUMENT');
    await expectCode(broker.createTopic('u', { partitions: bare }), 'INVALID_ARGUMENT');
    await expectCode(() => broker.producer({ sync: bare }), 'INVALID_ARGUMENT');
    await expectCode(() => broker.producer({ maxBatchBytes: bare }), 'INVALID_ARGUMENT');
    await expectCode(p.send('t', { value: 'v', partition: bare }), 'INVALID_ARGUMENT');
    await expectCode(p.sendBatch('t', [{ value: 'v' }], { partition: bare }), 'INVALID_ARGUMENT');
    await expectCode(p.close({ timeoutMs: bare }), 'INVALID_ARGUMENT');
    const batch = sealBatch(encodeBatch([{ value: 'v' }]));
    await expectCode(broker.publishBatch('t', batch, 0, { sync: bare }), 'INVALID_ARGUMENT');
    await expectCode(broker.publishBatch('t', batch, bare), 'INVALID_ARGUMENT');
    await expectCode(Broker.open({ dir: tmpDir(), ioBackend: 1n as never }), 'INVALID_ARGUMENT');
    await expectCode(Broker.open({ dir: tmpDir(), durability: 1n as never }), 'INVALID_ARGUMENT');
    await expectCode(Broker.open({ dir: tmpDir(), directIo: 1n as never }), 'INVALID_ARGUMENT');
    await expectCode(Broker.open({ dir: tmpDir(), maxTopics: bare }), 'INVALID_ARGUMENT');
    await expectCode(() => encodeBatch([{ value: 'v' }], { now: bare }), 'INVALID_ARGUMENT');
    await expectCode(() => encodeBatch([{ value: 'v' }], { producerId: bare }), 'INVALID_ARGUMENT');
    await expectCode(() => encodeBatch([{ value: 5 } as never], { what: Symbol('w') as never }), 'INVALID_ARGUMENT');
    await expectCode(() => decodeBatches(batch, bare), 'INVALID_ARGUMENT');
    for (const alloc of [() => 'x', (n: number) => Buffer.alloc(n - 1), (n: number) => Buffer.alloc(n + 1)])
      await expectCode(() => encodeBatch([{ value: 'v' }], { alloc: alloc as never }), 'INVALID_ARGUMENT');
    await expectCode(() => readBatchMeta(batch, detached as never), 'INVALID_ARGUMENT');
    await expectCode(() => crc32c(batch, bare), 'INVALID_ARGUMENT');
    // A NUL in the data directory is the caller's mistake, not the disk's (it was IO_ERROR).
    await expectCode(Broker.open({ dir: path.join(tmpDir(), 'a\u0000b') }), 'INVALID_ARGUMENT');
    for (const part of (await broker.describeTopic('t')).partitions) assert.equal(part.endOffset, 0);
    assert.deepEqual(await broker.listTopics(), ['t']);
  });

  it("publishBatch always copies the caller's batch: `copy: false` with its ArrayBuffer transferred (freed) at once no longer crashes the process", async () => {
    const d = tmpDir();
    // In a child: before the fix the I/O thread read the freed memory (SIGSEGV).
    const src = path.join(__dirname, '..', 'src');
    const r = spawnSync(
      process.execPath,
      ['--require', 'tsx/cjs', '-e',
        `const { Broker, encodeBatch, sealBatch } = require(${JSON.stringify(src)});
        Broker.open({ dir: ${JSON.stringify(d)}, durability: 'none', testIoDelayMs: 50 }).then(async (b) => {
          await b.createTopic('t');
          const sends = [];
          for (let i = 0; i < 8; i++) {
            const enc = sealBatch(encodeBatch(Array.from({ length: 4 }, () => ({ value: Buffer.alloc(1 << 19, i) }))));
            const ab = new ArrayBuffer(enc.length);
            enc.copy(Buffer.from(ab));
            sends.push(b.publishBatch('t', Buffer.from(ab), 0, { copy: false }));
            structuredClone(ab, { transfer: [ab] }); // detached: its memory freed
          }
          const rs = await Promise.all(sends);
          const got = await b.read('t', 0, 0, { maxBytes: 1 << 30 });
          await b.close();
          console.log(JSON.stringify({ offsets: rs.map((x) => x.baseOffset), ok: got.length === 32 && got.every((m, j) => m.value.length === 1 << 19 && m.value.every((x) => x === Math.floor(j / 4))) }));
        })`],
      { encoding: 'utf8', timeout: 60_000, cwd: path.join(__dirname, '..') },
    );
    assert.equal(r.status, 0, `the child died (${r.signal ?? r.status}): ${r.stderr.slice(0, 2000)}`);
    assert.deepEqual(JSON.parse(r.stdout.trim().split('\n').at(-1)!), { offsets: [0, 4, 8, 12, 16, 20, 24, 28], ok: true });
  });

  it("no method of the public Broker appends a caller's buffer in place (publishOwnedBatch was public: copy: false and a transfer crashed the process)", async () => {
    const names = new Set<string | symbol>();
    for (let o: object | null = broker; o && o !== Object.prototype; o = Object.getPrototypeOf(o)) for (const k of Reflect.ownKeys(o)) names.add(k);
    assert.ok(![...names].some((k) => typeof k === 'string' && /owned/i.test(k)), [...names].filter((k) => typeof k === 'string').join(', '));
    // The symbol that keys the in-place append is not among the package's exports.
    assert.ok(!Object.values(index).some((v) => typeof v === 'symbol'));
  });

  it('crc32c and sealBatch take a view of a SharedArrayBuffer (they were IO_ERROR "Invalid argument"), and the sealed batch is taken', async () => {
    const plain = sealBatch(encodeBatch([{ value: 'shared' }], { now: 1 }));
    const shared = Buffer.from(new SharedArrayBuffer(plain.length));
    encodeBatch([{ value: 'shared' }], { now: 1 }).copy(shared);
    assert.equal(sealBatch(shared).readUInt32LE(16), plain.readUInt32LE(16));
    assert.equal(crc32c(new Uint8Array(shared.buffer, 8, 20), 7), crc32c(plain.subarray(8, 28), 7));
    const ab = new ArrayBuffer(4);
    const detached = new Uint8Array(ab);
    structuredClone(ab, { transfer: [ab] });
    assert.equal(crc32c(detached, 5), 5); // no bytes
    assert.equal((await broker.publishBatch('t', shared, 1)).baseOffset, 0);
    assert.deepEqual((await broker.read('t', 1, 0)).map((m) => m.value.toString()), ['shared']);
  });

  it("the binding's readInto and readCachedInto refuse a dest that is not a Uint8Array with INVALID_ARGUMENT (a DataView was a plain Error with no code)", async () => {
    await broker.producer().send('t', { value: 'x', partition: 0 });
    type Dest = Buffer | DataView | Uint16Array | string;
    const internal = broker as unknown as {
      engine: {
        readInto(p: unknown, o: number, m: number, dest: Dest): Promise<number | Buffer>;
        readCachedInto(p: unknown, o: number, m: number, dest: Dest): number | Buffer | undefined;
      };
      partitionState(t: string, p: number): { native: unknown };
      readRawInto(ps: unknown, o: number, m: number, dest: Dest): Promise<Buffer>;
    };
    const ps = internal.partitionState('t', 0);
    for (const dest of [new DataView(new ArrayBuffer(4096)), new Uint16Array(2048), 'not a buffer']) {
      const what = Object.prototype.toString.call(dest);
      const e = await expectCode(() => internal.engine.readInto(ps.native, 0, 4096, dest), 'INVALID_ARGUMENT');
      assert.match(e.message, /readInto\(partition, offset, maxBytes, dest\): dest must be a Buffer or Uint8Array/, what);
      await expectCode(() => internal.engine.readCachedInto(ps.native, 0, 4096, dest), 'INVALID_ARGUMENT');
      // Through the broker: INVALID_ARGUMENT, not IO_ERROR (what a code-less Error becomes).
      const viaBroker = await expectCode(internal.readRawInto(ps, 0, 4096, dest), 'INVALID_ARGUMENT');
      assert.ok(viaBroker instanceof UringmqError, what);
    }
    // A Buffer and a plain Uint8Array are read into.
    for (const dest of [Buffer.alloc(4096), new Uint8Array(4096) as Buffer]) assert.ok((await internal.engine.readInto(ps.native, 0, 4096, dest)) as number > 0);
  });

  it('a value, key or header of a detached ArrayBuffer (no bytes) is written as empty, and no longer fails the sends batched with it with a TypeError', async () => {
    const detached = () => {
      const ab = new ArrayBuffer(16);
      const b = Buffer.from(ab);
      structuredClone(ab, { transfer: [ab] });
      return b;
    };
    const p = broker.producer({ lingerMs: 20 });
    const sends = [
      p.send('t', { value: 'before', partition: 0 }),
      p.send('t', { value: detached(), partition: 0 }),
      p.send('t', { value: 'k', key: detached(), headers: { h: detached() }, partition: 0 }),
      p.send('t', { value: 'after', partition: 0 }),
    ];
    assert.deepEqual((await Promise.all(sends)).map((r) => r.offset), [0, 1, 2, 3]);
    assert.deepEqual((await p.sendBatch('t', [{ value: detached() }, { value: 'x', headers: { h: detached() } }], { partition: 1 })).baseOffset, 0);
    const got = await broker.read('t', 0, 0);
    assert.deepEqual(got.map((m) => m.value.toString()), ['before', '', 'k', 'after']);
    assert.equal(got[2]!.key!.length, 0);
    assert.equal(got[2]!.headers.h!.length, 0);
    assert.deepEqual((await broker.read('t', 1, 0)).map((m) => m.value.toString()), ['', 'x']);
  });

  it('read(), describeTopic() and publishBatch() with options that are not objects: INVALID_ARGUMENT', async () => {
    await expectCode(broker.read('t', 0, 0, null as never), 'INVALID_ARGUMENT');
    await expectCode(broker.describeTopic('t', null as never), 'INVALID_ARGUMENT');
    const batch = encodeBatch([{ value: 'v' }]);
    sealBatch(batch);
    await expectCode(broker.publishBatch('t', batch, 0, null as never), 'INVALID_ARGUMENT');
    await expectCode(broker.publishBatch('t', 'not a buffer' as never, 0), 'CORRUPT_BATCH');
  });

  it("options are read once: a getter that answers differently on a second read changes nothing (Broker.open's dir, producer and consumer options)", async () => {
    // Each option is read once, when the call is made; a getter's later answers are never
    // seen, so what was checked is what is used.
    const reads = new Map<string, number>();
    const once = <T extends object>(first: Record<string, unknown>, later: Record<string, unknown>): T => {
      const o = {};
      for (const k of Object.keys(first)) {
        Object.defineProperty(o, k, {
          enumerable: true,
          get: () => {
            const n = (reads.get(k) ?? 0) + 1;
            reads.set(k, n);
            return n === 1 ? first[k] : later[k];
          },
        });
      }
      return o as T;
    };
    const dir = tmpDir();
    const other = tmpDir();
    const b2 = await Broker.open(once({ dir, durability: 'none' }, { dir: other, durability: 42 }));
    try {
      assert.equal(reads.get('dir'), 1);
      await b2.createTopic('t');
      assert.ok(fs.existsSync(path.join(dir, 'topics', 't')), 'the broker is in the dir first read');
      assert.deepEqual(fs.readdirSync(other), [], 'nothing made where the second read points');
      reads.clear();
      const p = b2.producer(once({ lingerMs: 1, maxBatchBytes: 4096 }, { lingerMs: -5, maxBatchBytes: 'x' }));
      await p.send('t', { value: 'v' });
      await p.flush();
      assert.equal(reads.get('lingerMs'), 1);
      assert.equal(reads.get('maxBatchBytes'), 1);
      reads.clear();
      const c = b2.consumer(once({ topic: 't', from: 'earliest', maxBytes: 1 << 16 }, { topic: 'nope', from: 'bogus', maxBytes: -1 }));
      const first = await c[Symbol.asyncIterator]().next();
      c.close();
      assert.equal(first.done, false);
      assert.equal(reads.get('topic'), 1);
      assert.equal(reads.get('from'), 1);
    } finally {
      await b2.close();
    }
  });
});
