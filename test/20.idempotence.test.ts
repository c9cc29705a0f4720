import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Broker, UringmqError, encodeBatch, sealBatch } from '../src';
import { IdempotenceTable, NEW } from '../src/broker/idempotence';
import { stampProducer } from '../src/codec/record_batch';
import { dropProducerSnapshot, expectCode, openBroker, partitionDir, sleep, tmpDir } from './helpers';

const PID = 4242;
const batch = (seq: number, pid = PID) => sealBatch(encodeBatch([{ value: `seq${seq}` }], { producerId: pid, baseSequence: seq }));
/** The same batch with its CRC damaged: the core refuses it on its I/O thread, after the broker took its sequence. */
const damaged = (seq: number, pid = PID) => {
  const b = batch(seq, pid);
  b[16]! ^= 0xff;
  return b;
};
const values = async (b: Broker) => (await b.read('t', 0, 0)).map((m) => String(m.value));


/**
 * Records a batch of one record under way in `t` (its append's promise, resolved or
 * rejected by the test); its failure reaches failed() first, as the broker's publish does.
 */
function pendingIn(t: IdempotenceTable) {
  return (id: number, seq: number) => {
    let resolve!: (r: { baseOffset: number; count: number }) => void;
    let reject!: (e: Error) => void;
    const p = new Promise<{ baseOffset: number; count: number }>((res, rej) => ((resolve = res), (reject = rej)));
    const e = t.record(id, seq, 1, p);
    p.catch(() => t.failed(id, e));
    return { p, resolve, reject };
  };
}
describe('Idempotent producers: failed appends and producer ids', () => {
  let b: Broker;
  beforeEach(async () => {
    b = await openBroker();
    await b.createTopic('t');
  });
  afterEach(async () => b.close());

  it('a retry of a batch whose append failed after a later batch of its producer was taken is OUT_OF_ORDER_SEQUENCE, not a duplicate, even past the window', async () => {
    // Pipelined: seq 1 is taken while seq 0 is still unverified.
    const first = b.publishBatch('t', damaged(0), 0);
    const second = b.publishBatch('t', batch(1), 0);
    await expectCode(first, 'CORRUPT_BATCH');
    assert.equal((await second).duplicate, false);
    const e = await expectCode(b.publishBatch('t', batch(0), 0), 'OUT_OF_ORDER_SEQUENCE');
    assert.match(e.message, /can no longer be written in order/);
    assert.deepEqual(await values(b), ['seq1']);
    // Still refused once 64 later batches pushed it out of the remembered window.
    for (let i = 2; i < 80; i++) await b.publishBatch('t', batch(i), 0);
    await expectCode(b.publishBatch('t', batch(0), 0), 'OUT_OF_ORDER_SEQUENCE');
    // A batch that was written is still answered as an old duplicate.
    const old = await b.publishBatch('t', batch(1), 0);
    assert.deepEqual([old.duplicate, old.baseOffset], [true, -1]);
    assert.equal((await values(b)).includes('seq0'), false);
  });

  it('a batch whose sequence lies inside a remembered batch, not at its start, is OUT_OF_ORDER_SEQUENCE: never answered as a written duplicate', async () => {
    const many = (seq: number, n: number) => sealBatch(encodeBatch(Array.from({ length: n }, (_, i) => ({ value: `seq${seq + i}` })), { producerId: PID, baseSequence: seq }));
    await b.publishBatch('t', batch(0), 0);
    // Sequences 1-5 in flight (and to fail: damaged); the same records cut otherwise,
    // 3-5, sent meanwhile. They were answered as a duplicate (offset -1) at once, and
    // never written when the batch that held them failed.
    const bad = many(1, 5);
    bad[16]! ^= 0xff;
    const first = b.publishBatch('t', bad, 0);
    const cut = b.publishBatch('t', many(3, 3), 0);
    await expectCode(first, 'CORRUPT_BATCH');
    const e = await expectCode(cut, 'OUT_OF_ORDER_SEQUENCE');
    assert.match(e.message, /inside its batch of sequences 1 to 5/);
    // Written: the same, after it is written too.
    assert.equal((await b.publishBatch('t', many(1, 5), 0)).baseOffset, 1);
    await expectCode(b.publishBatch('t', many(3, 3), 0), 'OUT_OF_ORDER_SEQUENCE');
    // A header whose record count lies claims a range that the batch after it falls in.
    const lying = encodeBatch([{ value: 'x' }], { producerId: PID, baseSequence: 6 });
    lying.writeUInt32LE(1000, 24);
    const l = b.publishBatch('t', sealBatch(lying), 0);
    const next = b.publishBatch('t', batch(7), 0);
    await expectCode(l, 'CORRUPT_BATCH');
    await expectCode(next, 'OUT_OF_ORDER_SEQUENCE');
    assert.equal((await b.publishBatch('t', batch(6), 0)).baseOffset, 6);
    assert.equal((await b.publishBatch('t', batch(7), 0)).baseOffset, 7);
    assert.deepEqual(await values(b), ['seq0', 'seq1', 'seq2', 'seq3', 'seq4', 'seq5', 'seq6', 'seq7']);
  });

  it('a retry of a failed batch that nothing of its producer followed is written', async () => {
    await expectCode(b.publishBatch('t', damaged(0), 0), 'CORRUPT_BATCH');
    const retry = await b.publishBatch('t', batch(0), 0);
    assert.deepEqual([retry.duplicate, retry.baseOffset], [false, 0]);
    const next = await b.publishBatch('t', batch(1), 0);
    assert.deepEqual([next.duplicate, next.baseOffset], [false, 1]);
    // Two failed in a row: the producer expects the first of them again.
    const f2 = b.publishBatch('t', damaged(2), 0);
    const f3 = b.publishBatch('t', damaged(3), 0);
    await expectCode(f2, 'CORRUPT_BATCH');
    await expectCode(f3, 'CORRUPT_BATCH');
    await expectCode(b.publishBatch('t', batch(3), 0), 'OUT_OF_ORDER_SEQUENCE'); // 2 is missing
    assert.equal((await b.publishBatch('t', batch(2), 0)).duplicate, false);
    assert.equal((await b.publishBatch('t', batch(3), 0)).duplicate, false);
    assert.deepEqual(await values(b), ['seq0', 'seq1', 'seq2', 'seq3']);
  });

  it('a retry sent while the first attempt is in flight waits for it: a duplicate if it was written, written if it failed, out of order if a later batch was taken', async () => {
    // The first attempt fails, nothing followed: the retry is written, once.
    const bad = b.publishBatch('t', damaged(0), 0);
    const retry = b.publishBatch('t', batch(0), 0);
    const again = b.publishBatch('t', batch(0), 0);
    await expectCode(bad, 'CORRUPT_BATCH');
    const [r, a] = await Promise.all([retry, again]);
    assert.deepEqual([r.duplicate, r.baseOffset], [false, 0]);
    assert.deepEqual([a.duplicate, a.baseOffset], [true, 0]);
    // The first attempt is written: the retry is its duplicate.
    const good = b.publishBatch('t', batch(1), 0);
    const dup = b.publishBatch('t', batch(1), 0);
    assert.deepEqual([(await good).baseOffset, (await dup).duplicate, (await dup).baseOffset], [1, true, 1]);
    // The first attempt fails after seq 3 was taken: the retry cannot go in order.
    const bad2 = b.publishBatch('t', damaged(2), 0);
    const retry2 = b.publishBatch('t', batch(2), 0);
    const three = b.publishBatch('t', batch(3), 0);
    await expectCode(bad2, 'CORRUPT_BATCH');
    await expectCode(retry2, 'OUT_OF_ORDER_SEQUENCE');
    assert.equal((await three).duplicate, false);
    assert.deepEqual(await values(b), ['seq0', 'seq1', 'seq3']);
  });

  it('a retry of a batch pushed out of the window while its append is under way waits for it: out of order once it fails, a duplicate with its offsets once written', async () => {
    // 64 later batches taken behind a damaged seq 0, then a sound retry of it: it must
    // not be taken for an old, written batch (it was answered duplicate, offset -1,
    // and then the first attempt failed: found by a review).
    const first = b.publishBatch('t', damaged(0), 0);
    first.catch(() => undefined);
    const later: Array<Promise<unknown>> = [];
    for (let i = 1; i <= IdempotenceTable.KEEP_BATCHES; i++) later.push(b.publishBatch('t', batch(i), 0));
    await expectCode(b.publishBatch('t', batch(0), 0), 'OUT_OF_ORDER_SEQUENCE');
    await expectCode(first, 'CORRUPT_BATCH');
    await Promise.all(later);
    assert.equal((await values(b)).includes('seq0'), false);
    // A sound one pushed out while under way: its retry gets its real offsets.
    const pid = PID + 1;
    const sound = b.publishBatch('t', batch(0, pid), 0);
    const more: Array<Promise<unknown>> = [];
    for (let i = 1; i <= IdempotenceTable.KEEP_BATCHES; i++) more.push(b.publishBatch('t', batch(i, pid), 0));
    const retry = await b.publishBatch('t', batch(0, pid), 0);
    const orig = await sound;
    await Promise.all(more);
    assert.deepEqual([retry.duplicate, retry.baseOffset], [true, orig.baseOffset]);
  });

  it('holes outlive a restart: kept in the snapshot, found as gaps in the log after a crash; a hole nothing follows any more is let go', async () => {
    const dir = tmpDir();
    let c = await openBroker({ dir });
    try {
      await c.createTopic('t');
      // Producer A: seq 1 fails between 0 and 2; producer B: seq 0 fails before 1 (a
      // hole before its first batch, which only the snapshot can know).
      const a0 = c.publishBatch('t', batch(0, 1), 0);
      const a1 = c.publishBatch('t', damaged(1, 1), 0);
      const a2 = c.publishBatch('t', batch(2, 1), 0);
      const b0 = c.publishBatch('t', damaged(0, 2), 0);
      const b1 = c.publishBatch('t', batch(1, 2), 0);
      await a0;
      await expectCode(a1, 'CORRUPT_BATCH');
      await a2;
      await expectCode(b0, 'CORRUPT_BATCH');
      await b1;
      await c.close();
      // A clean restart: from the snapshot.
      c = await openBroker({ dir });
      await expectCode(c.publishBatch('t', batch(1, 1), 0), 'OUT_OF_ORDER_SEQUENCE');
      await expectCode(c.publishBatch('t', batch(0, 2), 0), 'OUT_OF_ORDER_SEQUENCE');
      assert.equal((await c.publishBatch('t', batch(0, 1), 0)).duplicate, true);
      await c.close();
      // As after a crash before any snapshot: the log's batches alone, where A's gap shows.
      dropProducerSnapshot(dir, 't');
      c = await openBroker({ dir });
      await expectCode(c.publishBatch('t', batch(1, 1), 0), 'OUT_OF_ORDER_SEQUENCE');
      assert.equal((await c.publishBatch('t', batch(2, 1), 0)).duplicate, true);
      assert.deepEqual(await c.read('t', 0, 0).then((m) => m.map((r) => String(r.value))), ['seq0', 'seq2', 'seq1']);
    } finally {
      await c.close();
    }
    // A snapshot whose hole is the producer's last entry (what followed it was lost): the
    // retry is new, as it would have been had the later batch never been taken.
    const t = new IdempotenceTable('t/0');
    t.restore(Float64Array.from([7, 0, 1, 0, 7, 1, 1, -1]));
    t.restored();
    assert.equal(t.check(7, 1, 1), NEW);
  });

  it('a crash more than 64 batches of a producer after its last snapshot: an older retry is answered as written (offset -1), not refused as a hole', async () => {
    const dir = tmpDir();
    let c = await openBroker({ dir });
    try {
      await c.createTopic('t');
      for (let s = 0; s < 10; s++) await c.publishBatch('t', batch(s), 0);
      await c.close(); // the snapshot at offset 10
      const snapFile = path.join(partitionDir(dir, 't', 0), 'producers.snap');
      const snap = fs.readFileSync(snapFile);
      c = await openBroker({ dir });
      for (let s = 10; s < 110; s++) await c.publishBatch('t', batch(s), 0);
      await c.close();
      fs.writeFileSync(snapFile, snap); // as a SIGKILL after 110 batches leaves it: the last snapshot at offset 10
      c = await openBroker({ dir });
      // Seq 20 is in the log (offset 20), older than the newest 64 the scan after the
      // snapshot keeps: not written again, its offsets unknown.
      const r = await c.publishBatch('t', batch(20), 0);
      assert.deepEqual([r.duplicate, r.baseOffset], [true, -1]);
      assert.equal((await c.publishBatch('t', batch(100), 0)).baseOffset, 100, 'the newest 64 keep their offsets');
      assert.equal((await c.describeTopic('t')).partitions[0]!.endOffset, 110);
    } finally {
      await c.close();
    }
  });

  it('when every remembered batch of a producer failed, it still expects the first of them: an older retry is not written again, a gap is refused', () => {
    const t = new IdempotenceTable('t/0');
    // Written 0..99, then the next 64 (a window's worth) all fail, a disk full say.
    t.restore(Float64Array.from(Array.from({ length: 100 }, (_, i) => [9, i, 1, i]).flat()));
    const pending = Array.from({ length: IdempotenceTable.KEEP_BATCHES }, (_, k) => {
      assert.equal(t.check(9, 100 + k, 1), NEW);
      return t.record(9, 100 + k, 1, new Promise<never>(() => undefined));
    });
    for (const e of pending) t.failed(9, e); // oldest first: holes, until the last empties the window
    assert.equal(t.check(9, 100, 1), NEW);
    assert.throws(() => t.check(9, 101, 1), { code: 'OUT_OF_ORDER_SEQUENCE' });
    const old = t.check(9, 99, 1);
    assert.ok(old !== NEW && old.duplicate === null, 'a written batch older than the window was taken as new');
  });

  it('a keyless idempotent batch without a partition goes by its producer id: its retry is a duplicate, its next batch lands in order on the same partition', async () => {
    await b.createTopic('rr', { partitions: 3 });
    const pid = 4243; // 4243 % 3 = 1
    const first = await b.publishBatch('rr', batch(0, pid));
    assert.deepEqual(first, { partition: 1, baseOffset: 0, count: 1, duplicate: false });
    // Round-robin sent these to partitions 2 and 0, where the table does not know the batch: written three times.
    for (let i = 0; i < 2; i++) assert.deepEqual(await b.publishBatch('rr', batch(0, pid)), { ...first, duplicate: true });
    assert.deepEqual(await b.publishBatch('rr', batch(1, pid)), { partition: 1, baseOffset: 1, count: 1, duplicate: false });
    assert.deepEqual((await b.describeTopic('rr')).partitions.map((p) => p.endOffset), [0, 2, 0]);
    // Not idempotent: still round-robin.
    const plain = sealBatch(encodeBatch([{ value: 'p' }]));
    const parts = [];
    for (let i = 0; i < 3; i++) parts.push((await b.publishBatch('rr', plain)).partition);
    assert.deepEqual(new Set(parts).size, 3);
  });

  it('a keyless idempotent batch without a partition, to a topic made again with another partition count, goes by its producer id modulo the new count: written, never to a partition gone', async () => {
    const pid = 4245; // 4245 % 3 = 0, % 2 = 1, % 4 = 1
    await b.createTopic('rc', { partitions: 3 });
    assert.equal((await b.publishBatch('rc', batch(0, pid))).partition, 0);
    for (const [n, partition] of [[2, 1], [4, 1], [1, 0]] as const) {
      await b.deleteTopic('rc');
      await b.createTopic('rc', { partitions: n });
      // The producer numbers on: the new topic's table has not seen it, so it is its first batch there.
      assert.deepEqual(await b.publishBatch('rc', batch(n, pid)), { partition, baseOffset: 0, count: 1, duplicate: false });
      assert.deepEqual(await b.publishBatch('rc', batch(n, pid)), { partition, baseOffset: 0, count: 1, duplicate: true });
    }
    // The embedded producer looks the topic up at every send: keyless records go to a partition it has.
    const p = b.producer();
    await b.deleteTopic('rc');
    await b.createTopic('rc', { partitions: 3 });
    for (let i = 0; i < 6; i++) assert.ok((await p.send('rc', { value: `v${i}` })).partition < 3);
    await b.deleteTopic('rc');
    await b.createTopic('rc', { partitions: 1 });
    for (let i = 0; i < 6; i++) assert.equal((await p.send('rc', { value: `w${i}` })).partition, 0);
    await p.close();
  });

  it('producer ids past 2^53-1 or below -1 in a batch header are refused with INVALID_ARGUMENT before anything is written', async () => {
    const withId = (id: bigint, value: string) => {
      const x = encodeBatch([{ value }], { producerId: 1, baseSequence: 0 });
      x.writeBigInt64LE(id, 48);
      return sealBatch(x);
    };
    // 2^53 and 2^53+1 are one number to JavaScript: taken, one would be the other's duplicate.
    for (const id of [2n ** 53n, 2n ** 53n + 1n, 2n ** 63n - 1n, -2n, -(2n ** 63n)]) {
      const e = await expectCode(b.publishBatch('t', withId(id, `id ${id}`), 0), 'INVALID_ARGUMENT');
      assert.ok(e instanceof UringmqError);
      assert.match(e.message, new RegExp(`producer id ${id} .*9007199254740991`));
    }
    assert.deepEqual(await values(b), []);
    const top = await b.publishBatch('t', withId(2n ** 53n - 1n, 'top'), 0);
    const none = await b.publishBatch('t', withId(-1n, 'none'), 0);
    const zero = await b.publishBatch('t', withId(0n, 'zero'), 0);
    assert.deepEqual([top.baseOffset, none.baseOffset, zero.baseOffset], [0, 1, 2]);
    assert.equal((await b.publishBatch('t', withId(2n ** 53n - 1n, 'top'), 0)).duplicate, true);
  });

  it('encodeBatch and stampProducer refuse an unsafe producer id with INVALID_ARGUMENT, not a RangeError', () => {
    for (const id of [2 ** 53, 2 ** 63 - 1, -2, 1.5, Number.NaN, Infinity]) {
      assert.throws(() => encodeBatch([{ value: 'x' }], { producerId: id, baseSequence: 0 }), (e: unknown) => e instanceof UringmqError && e.code === 'INVALID_ARGUMENT' && /2\^53-1/.test(e.message), String(id));
      const x = encodeBatch([{ value: 'x' }]);
      assert.throws(() => stampProducer(x, id, 0), (e: unknown) => e instanceof UringmqError && e.code === 'INVALID_ARGUMENT', String(id));
    }
    for (const id of [-1, 0, 1, 2 ** 53 - 1]) assert.equal(encodeBatch([{ value: 'x' }], { producerId: id, baseSequence: 0 }).readBigInt64LE(48), BigInt(id));
  });

  it('idempotence table: a failed batch is a hole once a later one was taken, kept past the window and bounded by merging', () => {
    const t = new IdempotenceTable('t/0');
    // Written: settled, as the broker puts a settled append's result in its entry.
    const ok = (base: number) => ({ baseOffset: base, count: 1 });
    const rejected = () => {
      const p = Promise.reject(new Error('corrupt'));
      p.catch(() => undefined);
      return p;
    };
    // Seq 0 in flight when 64 more are taken: shifted out of the window, then failed.
    const e0 = t.record(1, 0, 1, rejected());
    for (let i = 1; i <= 64; i++) t.record(1, i, 1, ok(i));
    t.failed(1, e0);
    assert.throws(() => t.check(1, 0, 1), { code: 'OUT_OF_ORDER_SEQUENCE' });
    const written = t.check(1, 1, 1);
    assert.ok(written !== NEW && written.duplicate !== null);
    // 70 holes, one after each written batch: at most 64 kept, the oldest merged, so
    // every failed one is still refused (and none answered as a duplicate).
    let seq = 65;
    const holes: number[] = [];
    for (let i = 0; i < 70; i++) {
      const e = t.record(1, seq, 1, rejected());
      t.record(1, seq + 1, 1, ok(seq + 1));
      t.failed(1, e);
      holes.push(seq);
      seq += 2;
    }
    for (let i = 0; i < 64; i++) t.record(1, seq++, 1, ok(seq));
    for (const h of holes) assert.throws(() => t.check(1, h, 1), { code: 'OUT_OF_ORDER_SEQUENCE' }, `hole ${h}`);
    assert.equal(t.check(1, seq, 1), NEW);
  });

  it('idempotence table: a retry of a hole while every batch taken after it is still under way waits for them: new if they all fail, refused once one is written', async () => {
    const t = new IdempotenceTable('t/0');
    const deferred = () => {
      let resolve!: (r: { baseOffset: number; count: number }) => void;
      let reject!: (e: Error) => void;
      const promise = new Promise<{ baseOffset: number; count: number }>((res, rej) => ((resolve = res), (reject = rej)));
      promise.catch(() => undefined);
      return { promise, resolve, reject };
    };
    for (const outcome of ['fails', 'written'] as const) {
      const pid = outcome === 'fails' ? 1 : 2;
      const d0 = deferred();
      const d1 = deferred();
      const e0 = t.record(pid, 0, 1, d0.promise);
      const e1 = t.record(pid, 1, 1, d1.promise);
      t.failed(pid, e0); // a hole: seq 1 was taken after it
      const v = t.check(pid, 0, 1);
      assert.ok(v !== NEW && 'wait' in v, `${outcome}: the retry waits, not refused while seq 1 may still fail`);
      if (outcome === 'fails') {
        d1.reject(new Error('disk'));
        await d1.promise.catch(() => undefined);
        t.failed(pid, e1); // as the broker does when the append fails
        await v.wait;
        assert.equal(t.check(pid, 0, 1), NEW, 'nothing of the producer was written after it');
      } else {
        d1.resolve({ baseOffset: 0, count: 1 });
        e1.result = await d1.promise; // as the broker does when the append settles
        await v.wait;
        assert.throws(() => t.check(pid, 0, 1), { code: 'OUT_OF_ORDER_SEQUENCE' });
      }
    }
  });
});

describe('Idempotent producers: maxProducerStateBatches', () => {
  it("bounds the batches all partitions' tables remember: each keeps its share, least recently used producers forgotten first, at least one producer's window; a reopen refills within it", async () => {
    // Every partition kept 65,536 batches (about 8 MB of heap), whatever their number:
    // batches of many producer ids sent to a few hundred partitions ran the process out of memory.
    const dir = tmpDir();
    for (const bad of [0, 1.5, 1_000_000_001, '5'])
      await expectCode(openBroker({ dir: path.join(dir, 'never'), maxProducerStateBatches: bad as never }), 'INVALID_ARGUMENT');
    let b = await openBroker({ dir, maxProducerStateBatches: 400 });
    try {
      assert.equal(b.maxProducerStateBatches, 400);
      await b.createTopic('t', { partitions: 2 }); // 200 each
      for (let pid = 1; pid <= 300; pid++) await b.publishBatch('t', batch(0, pid), 0);
      assert.equal(b.topicState('t').partitions[0]!.idempotence.size, 200);
      const again = async (pid: number) => (await b.publishBatch('t', batch(0, pid), 0)).baseOffset;
      assert.equal(await again(300), 299, 'a retry of a remembered producer is a duplicate');
      assert.equal(await again(1), 300, "the least recently used producers' retries are taken as new");
      await b.createTopic('u', { partitions: 2 }); // 100 each from now on
      for (let pid = 1; pid <= 150; pid++) await b.publishBatch('u', batch(0, pid), 1);
      assert.equal(b.topicState('u').partitions[1]!.idempotence.size, 100);
      // A producer's window (64) is kept whatever the share.
      await b.createTopic('w', { partitions: 10 });
      for (let seq = 0; seq < 80; seq++) await b.publishBatch('w', batch(seq, 7), 0);
      assert.equal(b.topicState('w').partitions[0]!.idempotence.size, 64);
      await b.deleteTopic('w');
      assert.ok(b.producerStateBatches <= 400, String(b.producerStateBatches));
    } finally {
      await b.close();
    }
    // Reopened with a smaller bound, the tables refill within their share of it.
    b = await openBroker({ dir, maxProducerStateBatches: 200 });
    try {
      assert.equal(b.topicState('t').partitions[0]!.idempotence.size, 64);
      assert.ok(b.producerStateBatches <= 4 * 64, String(b.producerStateBatches));
    } finally {
      await b.close();
    }
  });

  it("a table that holds more than its share once a create shrinks it is trimmed then, not at its next publish: the partitions no longer written keep no more than theirs", async () => {
    // Trimmed only in record(), a table filled under a larger share kept it for as
    // long as its partition was not written: filling partitions, creating more and
    // filling those (never writing the first again) passed the bound many times over.
    const b = await openBroker({ dir: tmpDir(), maxProducerStateBatches: 256 });
    try {
      await b.createTopic('a'); // the whole bound: 256
      for (let pid = 1; pid <= 256; pid++) await b.publishBatch('a', batch(0, pid), 0);
      const a0 = b.topicState('a').partitions[0]!.idempotence;
      assert.equal(a0.size, 256);
      await b.createTopic('b', { partitions: 3 }); // 64 each from now on
      assert.equal(a0.size, 64, "a's table kept its former share");
      for (let p = 0; p < 3; p++) for (let pid = 1; pid <= 64; pid++) await b.publishBatch('b', batch(0, pid), p);
      assert.equal(b.producerStateBatches, 256);
      // What stays is the most recently used.
      assert.equal((await b.publishBatch('a', batch(0, 256), 0)).baseOffset, 255, 'a retry of the newest producer is a duplicate');
    } finally {
      await b.close();
    }
  });
});

describe('Idempotent producers: producerStateScanBytes', () => {
  it('a scan bound whose after-snapshot multiple passes 2^53 (any past about 128 TiB) still reopens a partition with a snapshot', async () => {
    const dir = tmpDir();
    const scan = 2 ** 50;
    const b = await openBroker({ dir, producerStateScanBytes: scan });
    await b.createTopic('t');
    await b.publishBatch('t', batch(0), 0);
    await b.close(); // writes producers.snap: the next open scans 64 times the bound after it
    const c = await openBroker({ dir, producerStateScanBytes: scan });
    try {
      const r = await c.publishBatch('t', batch(0), 0);
      assert.deepEqual([r.duplicate, r.baseOffset], [true, 0]);
    } finally {
      await c.close();
    }
  });
});

describe('Idempotent producers: more batches in flight than the window (64)', () => {
  const N = IdempotenceTable.KEEP_BATCHES + 1;

  it('when every one of them fails, the first may be sent again: nothing of the producer was written', async () => {
    const b = await openBroker();
    try {
      await b.createTopic('t');
      const rs = await Promise.allSettled(Array.from({ length: N }, (_, i) => b.publishBatch('t', damaged(i, 77), 0)));
      assert.ok(rs.every((r) => r.status === 'rejected'), 'all refused');
      const r = await b.publishBatch('t', batch(0, 77), 0);
      assert.deepEqual([r.duplicate, r.baseOffset], [false, 0]);
      assert.equal((await b.publishBatch('t', batch(1, 77), 0)).baseOffset, 1);
    } finally {
      await b.close();
    }
  });

  it('when every batch taken after a written one fails, a restart still knows the producer: a retry of the written batch (its ack lost) is a duplicate, not written again', async () => {
    const dir = tmpDir();
    const snapFile = path.join(partitionDir(dir, 't', 0), 'producers.snap');
    let b = await openBroker({ dir });
    try {
      await b.createTopic('t');
      // Producers 66 and 67: seq 0 written, then a window's worth taken after it, all
      // failing (a disk full, say): seq 0 leaves the window, which holds nothing written.
      for (const [pid, offset] of [[66, 0], [67, 1]] as const) {
        assert.equal((await b.publishBatch('t', batch(0, pid), 0)).baseOffset, offset);
        const rs = await Promise.allSettled(Array.from({ length: N - 1 }, (_, i) => b.publishBatch('t', damaged(i + 1, pid), 0)));
        assert.ok(rs.every((r) => r.status === 'rejected'), 'all refused');
      }
      const before = await b.publishBatch('t', batch(0, 66), 0);
      assert.deepEqual([before.duplicate, before.baseOffset], [true, -1]);
      await b.close();
      const snap = fs.readFileSync(snapFile);
      b = await openBroker({ dir });
      const after = await b.publishBatch('t', batch(0, 66), 0);
      assert.deepEqual([after.duplicate, after.baseOffset], [true, -1], 'the retry of a written batch is not written again after a restart');
      await expectCode(b.publishBatch('t', batch(2, 66), 0), 'OUT_OF_ORDER_SEQUENCE');
      assert.equal((await b.publishBatch('t', batch(1, 66), 0)).baseOffset, 2, 'it still expects the first batch that failed');
      // 67: its next two fail, the one after is written, leaving a hole.
      const gap = [b.publishBatch('t', damaged(1, 67), 0), b.publishBatch('t', damaged(2, 67), 0), b.publishBatch('t', batch(3, 67), 0)];
      await expectCode(gap[0]!, 'CORRUPT_BATCH');
      await expectCode(gap[1]!, 'CORRUPT_BATCH');
      assert.equal((await gap[2]!).baseOffset, 3);
      await b.close();
      // As after a crash whose last snapshot was the one at the first close: the log's
      // batches after it are read on from the sequences its markers name.
      fs.writeFileSync(snapFile, snap);
      b = await openBroker({ dir });
      for (const [pid, seq, offset] of [[66, 0, -1], [66, 1, 2], [67, 0, -1], [67, 3, 3]] as const) {
        const r = await b.publishBatch('t', batch(seq, pid), 0);
        assert.deepEqual([r.duplicate, r.baseOffset], [true, offset], `${pid}/${seq}`);
      }
      // The gap between 67's marker and its seq 3 is a hole, not batches written.
      await expectCode(b.publishBatch('t', batch(1, 67), 0), 'OUT_OF_ORDER_SEQUENCE');
      assert.deepEqual(await values(b), ['seq0', 'seq0', 'seq1', 'seq3']);
    } finally {
      await b.close();
    }
  });

  it('a crash more than 64 batches of a producer after a snapshot that held its marker: an older retry is answered as written, not refused as a hole', async () => {
    const dir = tmpDir();
    const snapFile = path.join(partitionDir(dir, 't', 0), 'producers.snap');
    let b = await openBroker({ dir });
    try {
      await b.createTopic('t');
      await b.publishBatch('t', batch(0, 70), 0);
      await Promise.allSettled(Array.from({ length: N - 1 }, (_, i) => b.publishBatch('t', damaged(i + 1, 70), 0)));
      await b.close(); // the snapshot: producer 70's marker at seq 1
      const snap = fs.readFileSync(snapFile);
      b = await openBroker({ dir });
      for (let s = 1; s < 100; s++) await b.publishBatch('t', batch(s, 70), 0);
      await b.close();
      fs.writeFileSync(snapFile, snap); // as a SIGKILL leaves it
      b = await openBroker({ dir });
      // The scan keeps the newest 64 (seq 36 on): 1-35 are written, not a gap after the marker.
      const r = await b.publishBatch('t', batch(20, 70), 0);
      assert.deepEqual([r.duplicate, r.baseOffset], [true, -1]);
      assert.equal((await b.publishBatch('t', batch(100, 70), 0)).baseOffset, 100);
    } finally {
      await b.close();
    }
  });

  it('a hole made while a snapshot waits for appends is in that snapshot: after a restart its retry is still refused, not answered as written', async () => {
    const dir = tmpDir();
    const b = await openBroker({ dir, producerStateScanBytes: 100_000 });
    (b as unknown as { snapshotIntervalMs: number }).snapshotIntervalMs = 0;
    await b.createTopic('t');
    const ps = [b.publishBatch('t', damaged(0, 88), 0)];
    for (let i = 1; i < N; i++) ps.push(b.publishBatch('t', batch(i, 88), 0));
    // Past producerStateScanBytes: a snapshot starts while the 65 are in flight.
    const big = b.producer().sendBatch('t', [{ value: Buffer.alloc(150_000) }], { partition: 0 });
    const rs = await Promise.allSettled(ps);
    await big;
    assert.equal(rs[0]!.status, 'rejected');
    const state = (b as unknown as { topics: Map<string, { partitions: Array<{ snapshotting: unknown }> }> }).topics.get('t')!.partitions[0]!;
    for (let i = 0; i < 1000 && state.snapshotting; i++) await sleep(5);
    await expectCode(b.publishBatch('t', batch(0, 88), 0), 'OUT_OF_ORDER_SEQUENCE');
    await b.close();
    const c = await openBroker({ dir, producerStateScanBytes: 100_000 });
    try {
      await expectCode(c.publishBatch('t', batch(0, 88), 0), 'OUT_OF_ORDER_SEQUENCE');
      assert.equal((await values(c)).includes('seq0'), false);
    } finally {
      await c.close();
    }
  });
  it('a batch that fails while a snapshot waits for it, with nothing of its producer after it, is left out of that snapshot: after a crash a retry of its written retry is a duplicate, not refused', async () => {
    const dir = tmpDir();
    // A slow disk: the damaged batch is verified in the write cycle after the one that
    // holds seq 0, so it is still under way when the snapshot collects the table.
    let b = await openBroker({ dir, producerStateScanBytes: 100_000, testIoDelayMs: 200 });
    try {
      (b as unknown as { snapshotIntervalMs: number }).snapshotIntervalMs = 0;
      await b.createTopic('t');
      const p0 = b.publishBatch('t', batch(0, 99), 0);
      // Past producerStateScanBytes: a snapshot starts, waiting for seq 0.
      const big = b.publishBatch('t', sealBatch(encodeBatch([{ value: Buffer.alloc(150_000) }])), 0);
      await sleep(50); // the I/O thread took seq 0's write cycle: seq 1 waits for the next
      const p1 = b.publishBatch('t', damaged(1, 99), 0);
      await p0;
      await big;
      await expectCode(p1, 'CORRUPT_BATCH');
      const state = (b as unknown as { topics: Map<string, { partitions: Array<{ snapshotting: unknown }> }> }).topics.get('t')!.partitions[0]!;
      for (let i = 0; i < 1000 && state.snapshotting; i++) await sleep(5);
      const snapFile = path.join(partitionDir(dir, 't', 0), 'producers.snap');
      const snap = fs.readFileSync(snapFile);
      // Nothing of producer 99 followed seq 1: its retry is new, and written.
      const retry = await b.publishBatch('t', batch(1, 99), 0);
      assert.deepEqual([retry.duplicate, retry.baseOffset], [false, 2]);
      await b.close();
      fs.writeFileSync(snapFile, snap); // as a SIGKILL right after the retry leaves it
      b = await openBroker({ dir, producerStateScanBytes: 100_000 });
      // The retry's ack was lost: sent again, it is a duplicate of the written one.
      const again = await b.publishBatch('t', batch(1, 99), 0);
      assert.deepEqual([again.duplicate, again.baseOffset], [true, 2]);
      assert.deepEqual((await values(b)).filter((v) => v.startsWith('seq')), ['seq0', 'seq1']);
    } finally {
      await b.close();
    }
  });

  it('idempotence table: a batch failed() dropped while settled() waited is not in the snapshot as a hole; one still a hole is', async () => {
    const t = new IdempotenceTable('t/0');
    const pending = pendingIn(t);
    t.record(7, 0, 1, { baseOffset: 0, count: 1 });
    const a7 = pending(7, 1);
    t.record(9, 0, 1, { baseOffset: 1, count: 1 });
    const a9 = pending(9, 1);
    const snap = t.settled(); // waits for 7/1 and 9/1
    // Recorded while settled() waits, still under way when it collects the table.
    const b7 = pending(7, 2);
    const b8 = pending(8, 0);
    t.record(8, 1, 1, { baseOffset: 4, count: 1 });
    const b9 = pending(9, 2);
    a9.reject(new Error('refused')); // 9/1 is a hole: 9/2 was taken after it
    a7.resolve({ baseOffset: 2, count: 1 });
    await sleep(5);
    b7.reject(new Error('refused')); // nothing of 7 after it: dropped, its retry is new
    b8.reject(new Error('refused')); // 8/1 was taken after it: a hole
    b9.reject(new Error('refused')); // 9/2 dropped, and with it 9/1: 9 expects 1 again
    const { batches } = await snap;
    assert.deepEqual(Array.from(batches), [7, 0, 1, 0, 7, 1, 1, 2, 8, 0, 1, -1, 8, 1, 1, 4, 9, 0, 1, 1]);
    assert.equal(t.check(7, 2, 1), NEW);
    assert.equal(t.check(9, 1, 1), NEW);
    // After a crash in which the retries of 7/2 and 9/1 were written: a retry of either is a duplicate.
    const u = new IdempotenceTable('t/0');
    u.restore(batches);
    u.restore(Float64Array.from([7, 2, 1, 5, 9, 1, 1, 6]));
    u.restored();
    for (const [id, seq, offset] of [[7, 2, 5], [9, 1, 6]] as const) {
      const v = u.check(id, seq, 1);
      assert.ok(v !== NEW, `${id}/${seq}`);
      assert.deepEqual(await v.duplicate, { baseOffset: offset, count: 1 });
    }
    assert.throws(() => u.check(8, 0, 1), (e: UringmqError) => e.code === 'OUT_OF_ORDER_SEQUENCE');
  });

  it("idempotence table: a producer down to its marker whose next batch, taken while settled() waited, fails too is still in the snapshot by its marker", async () => {
    const t = new IdempotenceTable('t/0');
    const pending = pendingIn(t);
    // Producer 5: seq 0 written, then a window's worth taken after it, all failing: a marker at 1.
    t.record(5, 0, 1, { baseOffset: 0, count: 1 });
    const window = Array.from({ length: IdempotenceTable.KEEP_BATCHES }, (_, i) => pending(5, i + 1));
    for (const d of window) d.reject(new Error('refused'));
    await sleep(1);
    assert.deepEqual(Array.from((await t.settled()).batches), [5, 1, 0, -1]);
    const other = pending(6, 0);
    const snap = t.settled(); // waits for 6/0
    const retry = pending(5, 1); // taken while settled() waits, still under way when it collects the table
    other.resolve({ baseOffset: 1, count: 1 });
    await sleep(5);
    retry.reject(new Error('refused')); // 5 is down to its marker at 1 again
    const { batches } = await snap;
    assert.deepEqual(Array.from(batches), [6, 0, 1, 1, 5, 1, 0, -1]);
    // After a restart from that snapshot: a retry of 5/0 (its ack lost) is not written again.
    const u = new IdempotenceTable('t/0');
    u.restore(batches);
    u.restored();
    const v = u.check(5, 0, 1);
    assert.ok(v !== NEW && 'duplicate' in v && v.duplicate === null, 'a retry of a written batch is a duplicate');
    assert.equal(u.check(5, 1, 1), NEW);
  });
});

describe('Idempotent producers: a batch refused for a full write queue', () => {
  it("holds a new producer's sequence: a later batch sent meanwhile is out of order, and the refused one, sent again, is written", async () => {
    const dir = tmpDir();
    // A slow disk and a small queue: a 200 KiB batch waits 400 ms and leaves no room for 100 KiB more.
    const b = await openBroker({ dir, testIoDelayMs: 400, maxQueuedBytes: 256 * 1024, writeHighWaterBytes: 256 * 1024 });
    try {
      await b.createTopic('q', { partitions: 2 });
      const big = (seq: number) => sealBatch(encodeBatch([{ value: Buffer.alloc(100 * 1024, seq) }], { producerId: PID, baseSequence: seq }));
      const filler = b.publishBatch('q', sealBatch(encodeBatch([{ value: Buffer.alloc(200 * 1024) }])), 1);
      await expectCode(b.publishBatch('q', big(0), 0), 'RESOURCE_EXHAUSTED');
      // The table had not seen PID: without the refusal held, this would be taken as its
      // first batch, and the retry of sequence 0 answered as a written duplicate.
      await expectCode(b.publishBatch('q', batch(1), 0), 'OUT_OF_ORDER_SEQUENCE');
      await filler;
      const first = await b.publishBatch('q', big(0), 0);
      assert.deepEqual([first.duplicate, first.baseOffset], [false, 0]);
      const second = await b.publishBatch('q', batch(1), 0);
      assert.deepEqual([second.duplicate, second.baseOffset], [false, 1]);
      // A producer the table knows keeps expecting the refused sequence.
      const f2 = b.publishBatch('q', sealBatch(encodeBatch([{ value: Buffer.alloc(200 * 1024) }])), 1);
      await expectCode(b.publishBatch('q', big(2), 0), 'RESOURCE_EXHAUSTED');
      await expectCode(b.publishBatch('q', batch(3), 0), 'OUT_OF_ORDER_SEQUENCE');
      // A retry of a written batch is answered even while the queue is full.
      const dup = await b.publishBatch('q', batch(1), 0);
      assert.deepEqual([dup.duplicate, dup.baseOffset], [true, 1]);
      await f2;
      assert.equal((await b.publishBatch('q', big(2), 0)).baseOffset, 2);
      assert.equal((await b.publishBatch('q', batch(3), 0)).baseOffset, 3);
      const got = (await b.read('q', 0, 0)).map((m) => m.value.length);
      assert.deepEqual(got, [100 * 1024, 4, 100 * 1024, 4]);
    } finally {
      await b.close();
    }
  });
});
