import { encodeDeliveryResponse, encodeSubscribeResponse, publishAnswer } from '../src/grpc/response_encoders';
import { pb } from '../src/grpc/proto';
import { strict as assert } from 'node:assert';
import { RangeSet } from '../src/broker/range_set';
import { barrierProblemIn, majorMinor, parseMountInfo } from '../src/broker/mount_check';
import { IdTable, PendingPromises } from '../src/broker/id_table';
import { WaiterList, type Waiting } from '../src/broker/waiter_list';
import { IdempotenceTable, NEW } from '../src/broker/idempotence';
import { murmur2, partitionForKey } from '../src/broker/partitioner';
import { BufferPool } from '../src/codec/buffer_pool';
import { SERVER_NODE_FLAGS } from '../src/cli/node_flags';
import * as fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import { maxPartitionsFor } from '../src/broker/broker';
import { spawn } from './fixtures/children';
import { parseTrace, sleep } from './helpers';
import * as os from 'node:os';
import * as path from 'node:path';
import { MAX_CUTS, cutsAfter, readLogCuts, recordLogCut } from '../src/broker/log_cuts';
import { Metadata, status } from '@grpc/grpc-js';
import { CODE_TRAILER, LIMIT_TRAILER, fromServiceError, grpcCodeFor, toServiceError } from '../src/grpc/status';
import { UringmqError, isErrorCode, type ErrorCode } from '../src/errors';

describe('Units: RangeSet, idempotence table, partitioner, buffer pool', () => {
  it('RangeSet matches a plain Set under random adds, queries and trims', () => {
    let seed = 42;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n);
    for (let trial = 0; trial < 300; trial++) {
      const rs = new RangeSet();
      const ref = new Set<number>();
      for (let k = 0; k < 40; k++) {
        const a = rnd(100);
        const b = a + rnd(10);
        let fresh = 0;
        for (let x = a; x < b; x++) if (!ref.has(x)) (fresh++, ref.add(x));
        assert.equal(rs.add(a, b), fresh);
        const q = rnd(100);
        const r = q + rnd(20);
        let inside = 0;
        for (let x = q; x < r; x++) if (ref.has(x)) inside++;
        assert.equal(rs.countIn(q, r), inside);
        assert.equal(rs.gapsIn(q, r).reduce((sum, [u, v]) => sum + v - u, 0), r - q - inside);
        if (rnd(10) === 0) {
          const cut = rnd(100);
          rs.removeBelow(cut);
          for (const x of [...ref]) if (x < cut) ref.delete(x);
        }
        for (let x = 0; x < 110; x++) assert.equal(rs.has(x), ref.has(x), `has(${x})`);
      }
    }
  });

  it('in-order acks keep a RangeSet at one range', () => {
    const rs = new RangeSet();
    for (let i = 0; i < 10_000; i++) rs.add(i, i + 1);
    assert.equal(rs.rangeCount, 1);
    assert.deepEqual(rs.first(), [0, 10_000]);
  });

  it('idempotence: duplicates answer with the original result, gaps are refused, the table is bounded', async () => {
    const t = new IdempotenceTable('t/0', 3);
    assert.equal(t.check(7, 0, 10), NEW);
    t.record(7, 0, 10, Promise.resolve({ baseOffset: 100, count: 10 }));
    const dup = t.check(7, 0, 10);
    assert.ok(dup !== NEW);
    assert.deepEqual(await dup.duplicate, { baseOffset: 100, count: 10 });
    assert.throws(() => t.check(7, 11, 1), { code: 'OUT_OF_ORDER_SEQUENCE' });
    assert.throws(() => t.check(7, 0, 5), { code: 'OUT_OF_ORDER_SEQUENCE' });
    assert.equal(t.check(7, 10, 1), NEW);
    // a failed append is forgotten, so its retry is accepted as new
    const failed = Promise.reject(new Error('disk'));
    failed.catch(() => undefined);
    const entry = t.record(7, 10, 1, failed);
    assert.ok(t.check(7, 10, 1) !== NEW, 'recorded: a duplicate until forgotten');
    t.failed(7, entry);
    assert.equal(t.check(7, 10, 1), NEW);
    // bounded: a fourth producer evicts the least recently used
    for (const pid of [1, 2, 3]) {
      assert.equal(t.check(pid, 0, 1), NEW);
      t.record(pid, 0, 1, Promise.resolve({ baseOffset: pid, count: 1 }));
    }
    assert.equal(t.check(7, 0, 10), NEW); // 7 was evicted: unknown again
  });

  it('idempotence table: sequences wrap at 2^31, 64 batches keep their offsets, entries are bounded', async () => {
    const t = new IdempotenceTable('t/0', 100, 200);
    // Settled appends, as the broker leaves them (an append still under way that leaves
    // the window is kept until it settles: test/20.idempotence).
    const add = (pid: number, seq: number, count: number, base: number) => {
      assert.equal(t.check(pid, seq, count), NEW, `sequence ${seq} of producer ${pid}`);
      t.record(pid, seq, count, { baseOffset: base, count });
    };
    const top = 2 ** 31;
    add(1, top - 20, 10, 0);
    add(1, top - 10, 10, 10);
    add(1, 0, 10, 20); // wrapped, as the client numbers them
    add(1, 10, 10, 30);
    const old = t.check(1, top - 10, 10);
    assert.ok(old !== NEW);
    assert.equal((await old.duplicate)?.baseOffset, 10);
    assert.throws(() => t.check(1, 30, 1), { code: 'OUT_OF_ORDER_SEQUENCE' }); // a gap after the wrap
    // 64 remembered: the oldest of 70 batches is a duplicate with unknown offsets, the 7th still known
    for (let i = 0; i < 70; i++) add(2, i, 1, 1000 + i);
    const first = t.check(2, 0, 1);
    assert.ok(first !== NEW && first.duplicate === null);
    const seventh = t.check(2, 6, 1);
    assert.ok(seventh !== NEW && (await seventh.duplicate!).baseOffset === 1006);
    // at most 200 batches over all producers: the least recently used producers go
    for (const pid of [3, 4, 5]) for (let i = 0; i < 64; i++) add(pid, i, 1, pid * 1000 + i);
    assert.equal(t.check(1, 0, 10), NEW, 'producer 1 was dropped to stay within 200 entries');
    const kept = t.check(5, 0, 1);
    assert.ok(kept !== NEW && (await kept.duplicate!).baseOffset === 5000, 'the most recent producer is kept');
  });

  it('idempotence table: restore() takes batches found in the log, oldest first, under the same bounds', async () => {
    const t = new IdempotenceTable('t/0', 2);
    // [producerId, baseSequence, recordCount, baseOffset]: producer 7 has 70 batches (64 kept), then 8 and 9.
    const rows: number[] = [];
    for (let i = 0; i < 70; i++) rows.push(7, i * 2, 2, 100 + i * 2);
    rows.push(8, 0, 1, 500, 9, 5, 3, 600);
    t.restore(Float64Array.from(rows));
    const nine = t.check(9, 5, 3);
    assert.ok(nine !== NEW && (await nine.duplicate!).baseOffset === 600);
    assert.equal(t.check(9, 8, 1), NEW, "producer 9's next batch");
    const eight = t.check(8, 0, 1);
    assert.ok(eight !== NEW && (await eight.duplicate!).baseOffset === 500);
    // At most 2 producers: 7, the least recent, was dropped, so its batch is new again.
    assert.equal(t.check(7, 138, 2), NEW);
    const u = new IdempotenceTable('t/1');
    u.restore(Float64Array.from(rows.slice(0, 70 * 4)));
    const last = u.check(7, 138, 2);
    assert.ok(last !== NEW && (await last.duplicate!).baseOffset === 238);
    const oldest = u.check(7, 0, 2); // 70 restored, 64 remembered
    assert.ok(oldest !== NEW && oldest.duplicate === null);
    assert.throws(() => u.check(7, 150, 1), { code: 'OUT_OF_ORDER_SEQUENCE' });
  });

  it('idempotence table: a producer checked again becomes the most recent, so eviction takes the others first', () => {
    const t = new IdempotenceTable('t/0', 2);
    for (const pid of [1, 2]) {
      t.check(pid, 0, 1);
      t.record(pid, 0, 1, Promise.resolve({ baseOffset: pid, count: 1 }));
    }
    assert.ok(t.check(1, 0, 1) !== NEW); // producer 1 used again: 2 is now the least recent
    t.check(3, 0, 1);
    t.record(3, 0, 1, Promise.resolve({ baseOffset: 3, count: 1 }));
    assert.ok(t.check(1, 0, 1) !== NEW, 'producer 1 kept');
    assert.equal(t.check(2, 0, 1), NEW, 'producer 2 evicted');
  });

  it('murmur2 matches Kafka’s partitioner', () => {
    // Values from Kafka's Utils.murmur2 (org.apache.kafka.common.utils.UtilsTest).
    assert.equal(murmur2(Buffer.from('21')), -973932308);
    assert.equal(murmur2(Buffer.from('foobar')), -790332482);
    assert.equal(murmur2(Buffer.from('a-little-bit-long-string')), -985981536);
    assert.equal(murmur2(Buffer.from('a-little-bit-longer-string')), -1486304829);
    assert.equal(murmur2(Buffer.from('lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8')), -58897971);
    assert.equal(murmur2(Buffer.from('abc')), 479470107);
    for (let p = 1; p < 20; p++) {
      const x = partitionForKey('some-key', p);
      assert.ok(x >= 0 && x < p);
    }
  });

  it('the hand-written Delivery encoder matches protobufjs byte for byte, after the headroom asked for', () => {
    const raw = Buffer.from(Array.from({ length: 300 }, (_, i) => i & 0xff));
    for (const [partition, from, to, count, epoch] of [
      [0, 0, 1, 1, 1],
      [3, 127, 128, 1, 128],
      [200, 2 ** 40 + 5, 2 ** 40 + 900, 2, 2],
      [7, 2 ** 53 - 10, 2 ** 53 - 1, 300, 2 ** 32 - 1],
    ] as const) {
      const theirs = Buffer.from(
        pb.SubscribeResponse.encode({ delivery: { partition, batches: raw, from_offset: from, to_offset: to, delivery_count: count > 1 ? count : 0, epoch } }).finish(),
      );
      for (const headroom of [0, 5]) {
        const mine = encodeDeliveryResponse(headroom, partition, raw, from, to, count, epoch);
        assert.equal(mine.length, headroom + theirs.length);
        assert.deepEqual(mine.subarray(headroom), theirs, `partition ${partition}, [${from}, ${to}), count ${count}, epoch ${epoch}, headroom ${headroom}`);
        const back = pb.SubscribeResponse.decode(mine.subarray(headroom));
        assert.equal(Number(back.delivery!.to_offset), to);
        assert.equal(back.delivery!.delivery_count || 1, count);
        assert.equal(back.delivery!.epoch, epoch);
      }
      const other = encodeSubscribeResponse(5, { assignment: { member_id: 'm', generation: 3, partitions: [0, 2] } });
      assert.deepEqual(pb.SubscribeResponse.decode(other.subarray(5)).assignment!.partitions, [0, 2]);
    }
  });

  it('the hand-written PublishResponse encoder matches protobufjs byte for byte, after the headroom asked for', () => {
    const cases: Array<[unknown, { partition: number; baseOffset: number; count: number; duplicate: boolean }]> = [
      [1, { partition: 0, baseOffset: 0, count: 1, duplicate: false }],
      [pb.PublishRequest.decode(pb.PublishRequest.encode({ sequence: 300 }).finish()).sequence, { partition: 5, baseOffset: 127, count: 1000, duplicate: false }],
      [2 ** 40 + 3, { partition: 65_535, baseOffset: 2 ** 53 - 1, count: 2 ** 31, duplicate: true }],
      [7, { partition: 1, baseOffset: -1, count: 10, duplicate: true }], // a retry too old to know its offsets: protobufjs writes it
      [pb.PublishRequest.decode(pb.PublishRequest.encode({ sequence: '18446744073709551615' as unknown as number }).finish()).sequence, { partition: 2, baseOffset: 9, count: 1, duplicate: false }],
    ];
    for (const [sequence, r] of cases) {
      const seq = sequence as number;
      const theirs = Buffer.from(pb.PublishResponse.encode({ sequence: seq, partition: r.partition, base_offset: r.baseOffset, count: r.count, duplicate: r.duplicate }).finish());
      for (const headroom of [0, 5]) {
        const mine = publishAnswer(headroom, seq, r);
        assert.deepEqual(mine.subarray(headroom), theirs, `sequence ${String(sequence)}, ${JSON.stringify(r)}, headroom ${headroom}`);
      }
      const back = pb.PublishResponse.decode(publishAnswer(0, seq, r));
      assert.equal(Number(back.base_offset), r.baseOffset);
    }
    const err = pb.PublishResponse.decode(publishAnswer(0, 9, { code: 'TOPIC_NOT_FOUND', message: 'topic x does not exist' }));
    assert.equal(Number(err.sequence), 9);
    assert.equal(err.error?.code, 'TOPIC_NOT_FOUND');
  });

  it('the server V8 flags are the same in the bin shebang, npm start and node_flags.ts', () => {
    const root = path.join(__dirname, '..');
    const shebang = fs.readFileSync(path.join(root, 'src/cli/main.ts'), 'utf8').split('\n')[0]!;
    assert.equal(shebang, `#!/usr/bin/env -S node ${SERVER_NODE_FLAGS.join(' ')}`);
    const start = (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.start;
    assert.equal(start, `exec node ${SERVER_NODE_FLAGS.join(' ')} dist/src/cli/main.js serve`);
  });

  it('buffer pool reuses what it handed out and holds a bounded amount', () => {
    const pool = new BufferPool(1 << 20);
    const a = pool.acquire(100_000);
    assert.equal(a.length, 100_000);
    pool.release(a);
    const b = pool.acquire(120_000);
    assert.equal(b.buffer, a.buffer); // same 128 KiB class
    pool.release(Buffer.alloc(200_000)); // not ours: ignored
    for (let i = 0; i < 20; i++) pool.release(pool.acquire(500_000));
    const many = Array.from({ length: 10 }, () => pool.acquire(500_000));
    many.forEach((m) => pool.release(m));
    assert.ok(pool.heldBytes <= 1 << 20);
    assert.equal(pool.acquire(10).length, 10); // small sizes are plain allocations
  });
});

describe('Units: IdTable (requests in flight by id)', () => {
  it('agrees with a Map under random sets and deletes, ids mostly increasing as requests are numbered', () => {
    // Seeded, so a failure repeats.
    let seed = 12345;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const t = new IdTable<string>(4);
    const m = new Map<number, string>();
    let next = 2 ** 32 - 50; // crosses 2^32: slots come from the id's low bits
    for (let step = 0; step < 20_000; step++) {
      const r = rand();
      if (r < 0.45) {
        const id = next++;
        t.set(id, `v${id}`);
        m.set(id, `v${id}`);
      } else if (r < 0.5 && m.size > 0) {
        // A retry: an id in flight before, set again (possibly below newer ones).
        const ids = [...m.keys()];
        const id = ids[Math.floor(rand() * ids.length)]!;
        t.set(id, `again${id}`);
        m.set(id, `again${id}`);
      } else if (m.size > 0) {
        // Completions mostly in order, sometimes not.
        const ids = [...m.keys()].sort((a, b) => a - b);
        const id = rand() < 0.7 ? ids[0]! : ids[Math.floor(rand() * ids.length)]!;
        assert.equal(t.delete(id), m.delete(id));
      }
      if (step % 97 === 0) assert.equal(t.delete(next + 5), false);
      assert.equal(t.size, m.size);
    }
    assert.deepEqual([...t.values()], [...m.keys()].sort((a, b) => a - b).map((k) => m.get(k)));
    for (const [k, v] of m) assert.equal(t.get(k), v);
    assert.equal(t.get(next), undefined);
  });

  it('answers nothing for ids it does not hold, and shrinks back once empty', () => {
    const t = new IdTable<number>(4);
    t.set(10, 1);
    t.set(12, 3);
    assert.equal(t.get(11), undefined);
    assert.equal(t.get(10.5), undefined);
    assert.equal(t.get(-1), undefined);
    assert.equal(t.delete(11), false);
    assert.equal(t.delete(10.5), false);
    t.set(10, 2); // replaces, no new entry
    assert.equal(t.size, 2);
    assert.equal(t.get(10), 2);
    for (let id = 13; id < 2000; id++) t.set(id, id);
    assert.equal(t.size, 1989);
    for (let id = 10; id < 2000; id++) t.delete(id);
    assert.equal(t.size, 0);
    assert.deepEqual([...t.values()], []);
    // Capacity went back to the minimum: a set far from the old ids needs no growth.
    t.set(1_000_000, 7);
    assert.equal((t as unknown as { slots: unknown[] }).slots.length, 4);
    assert.throws(() => t.set(-1, 1), RangeError);
    assert.throws(() => t.set(1.5, 1), RangeError);
    assert.throws(() => new IdTable(6), RangeError);
    t.clear();
    assert.equal(t.size, 0);
    assert.equal(t.get(1_000_000), undefined);
  });
});

describe('Units: PendingPromises (what a producer flush waits for)', () => {
  it('settles after every tracked promise, rejected ones and those tracked while waiting included, and then holds none', async () => {
    const p = new PendingPromises();
    const order: string[] = [];
    let resolveA!: () => void;
    p.track(new Promise<void>((r) => (resolveA = r)).then(() => order.push('a')));
    p.track(Promise.reject(new Error('refused')));
    assert.equal(p.size, 2);
    const done = p.settled().then(() => order.push('settled'));
    await new Promise((r) => setImmediate(r));
    let resolveB!: () => void;
    p.track(new Promise<void>((r) => (resolveB = r)).then(() => order.push('b'))); // tracked while flush waits
    resolveA();
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(order, ['a']);
    resolveB();
    await done;
    assert.deepEqual(order, ['a', 'b', 'settled']);
    assert.equal(p.size, 0);
  });
});

describe('Units: WaiterList (who waits for data on a partition)', () => {
  it('removes in any order, wakes everyone present, and a waiter may remove itself or another while being woken', () => {
    const list = new WaiterList();
    const woken: number[] = [];
    const handles: Waiting[] = [];
    for (let i = 0; i < 6; i++) handles.push(list.add(() => woken.push(i)));
    list.remove(handles[1]!);
    list.remove(handles[5]!); // the last
    list.remove(handles[1]!); // twice: a no-op
    assert.equal(list.size, 4);
    list.wakeAll();
    assert.deepEqual(woken.sort(), [0, 2, 3, 4]);
    // Each waiter removes itself and the next one when woken: everyone present at the call is still woken once.
    const l2 = new WaiterList();
    const calls: number[] = [];
    const hs: Waiting[] = [];
    for (let i = 0; i < 4; i++)
      hs.push(
        l2.add(() => {
          calls.push(i);
          l2.remove(hs[i]!);
          if (hs[i + 1]) l2.remove(hs[i + 1]!);
        }),
      );
    l2.wakeAll();
    assert.deepEqual(calls.sort(), [0, 1, 2, 3]);
    assert.equal(l2.size, 0);
    // Slots are reused after removals: the list holds only the live waiters.
    for (let round = 0; round < 1000; round++) l2.remove(l2.add(() => undefined));
    assert.equal(l2.size, 0);
    assert.equal((l2 as unknown as { items: unknown[] }).items.length, 0);
  });
});

describe('Units: log cuts (where a power cut may have cut a topic\'s partitions)', () => {
  it('state of a run is cut by the ends recorded in later runs only; of the current run by none; of an unknown later run by all', () => {
    const cuts = [
      { run: 10, ends: [100, 7] },
      { run: 20, ends: [50, 9] },
      { run: 30, ends: [80, 3] },
    ];
    assert.deepEqual(cutsAfter(cuts, 2, 0, 40), [50, 3]);
    assert.deepEqual(cutsAfter(cuts, 2, 10, 40), [50, 3]);
    assert.deepEqual(cutsAfter(cuts, 2, 20, 40), [80, 3]);
    assert.deepEqual(cutsAfter(cuts, 2, 25, 40), [80, 3]);
    assert.deepEqual(cutsAfter(cuts, 2, 30, 40), [Infinity, Infinity]);
    assert.deepEqual(cutsAfter(cuts, 2, 30, 30), [Infinity, Infinity], 'state the current run wrote');
    assert.deepEqual(cutsAfter(cuts, 2, 45, 40), [50, 3], 'a run the counter does not know: every cut');
  });

  it('keeps at most MAX_CUTS on disk, merging the oldest two under the newer run with the lower ends; a damaged file is an IO_ERROR', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'uringmq-cuts-'));
    try {
      assert.deepEqual(await readLogCuts(dir, 1), []);
      let cuts = await readLogCuts(dir, 1);
      for (let run = 1; run <= MAX_CUTS + 2; run++) cuts = await recordLogCut(dir, cuts, run, [run === 2 ? 5 : 1000 + run]);
      assert.equal(cuts.length, MAX_CUTS);
      assert.deepEqual(cuts[0], { run: 3, ends: [5] }, 'runs 1 to 3 as one, at the lowest end');
      assert.deepEqual(cuts[1], { run: 4, ends: [1004] });
      assert.deepEqual(await readLogCuts(dir, 1), cuts);
      // State of run 0 or 2 is cut by the merged entry (at run 3's end or lower): more
      // is redelivered, nothing skipped; of run 3 not by it.
      assert.deepEqual([0, 2, 3].map((w) => cutsAfter(cuts, 1, w, 100)[0]), [5, 5, 1004]);
      await assert.rejects(readLogCuts(dir, 2), (e: Error & { code?: string }) => e.code === 'IO_ERROR' && e.message.includes('2 partitions'));
      fs.writeFileSync(path.join(dir, 'cuts.json'), '{"cuts": [');
      await assert.rejects(readLogCuts(dir, 1), (e: Error & { code?: string }) => e.code === 'IO_ERROR' && e.message.includes('cuts.json'));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('Units: uringmq error codes ⇄ gRPC status codes', () => {
  // The contract, written out: a change to the mapping has to change this table too.
  const expected: Record<ErrorCode, status> = {
    TOPIC_NOT_FOUND: status.NOT_FOUND,
    TOPIC_EXISTS: status.ALREADY_EXISTS,
    INVALID_TOPIC_NAME: status.INVALID_ARGUMENT,
    INVALID_GROUP_NAME: status.INVALID_ARGUMENT,
    INVALID_ARGUMENT: status.INVALID_ARGUMENT,
    CORRUPT_BATCH: status.INVALID_ARGUMENT,
    RECORD_TOO_LARGE: status.RESOURCE_EXHAUSTED,
    RESOURCE_EXHAUSTED: status.RESOURCE_EXHAUSTED,
    OFFSET_OUT_OF_RANGE: status.OUT_OF_RANGE,
    FAILED_PRECONDITION: status.FAILED_PRECONDITION,
    OUT_OF_ORDER_SEQUENCE: status.FAILED_PRECONDITION,
    LOG_TRUNCATED: status.FAILED_PRECONDITION,
    DIR_LOCKED: status.FAILED_PRECONDITION,
    BROKER_CLOSED: status.UNAVAILABLE,
    UNAVAILABLE: status.UNAVAILABLE,
    IO_ERROR: status.INTERNAL,
    IO_URING_UNAVAILABLE: status.INTERNAL,
    INTERNAL: status.INTERNAL,
    UNAUTHENTICATED: status.UNAUTHENTICATED,
    SESSION_EXPIRED: status.FAILED_PRECONDITION,
    GROUP_NOT_FOUND: status.NOT_FOUND,
  };

  it('every code goes out as its gRPC status with the exact code in the trailer, and comes back as the same code', () => {
    const codes = Object.keys(expected) as ErrorCode[];
    assert.ok(codes.every(isErrorCode));
    for (const code of codes) {
      const se = toServiceError(new UringmqError(code, `m-${code}`));
      assert.equal(se.code, expected[code], code);
      assert.equal(grpcCodeFor(code), expected[code], code);
      assert.deepEqual(se.metadata.get(CODE_TRAILER), [code]);
      const back = fromServiceError({ ...se, message: se.details });
      assert.ok(back instanceof UringmqError);
      assert.equal(back.code, code);
      assert.equal(back.message, `m-${code}`);
    }
    // Anything else thrown on the server goes out as INTERNAL.
    const other = toServiceError(new TypeError('boom'));
    assert.equal(other.code, status.INTERNAL);
    assert.deepEqual(other.metadata.get(CODE_TRAILER), ['INTERNAL']);
    assert.equal(other.details, 'boom');
  });

  it('a status without the trailer (another server, a proxy, a broken connection) maps by status alone', () => {
    const noTrailer: Array<[status, ErrorCode]> = [
      [status.NOT_FOUND, 'TOPIC_NOT_FOUND'],
      [status.ALREADY_EXISTS, 'TOPIC_EXISTS'],
      [status.INVALID_ARGUMENT, 'INVALID_ARGUMENT'],
      [status.RESOURCE_EXHAUSTED, 'RESOURCE_EXHAUSTED'],
      [status.OUT_OF_RANGE, 'OFFSET_OUT_OF_RANGE'],
      [status.FAILED_PRECONDITION, 'FAILED_PRECONDITION'],
      [status.UNAVAILABLE, 'UNAVAILABLE'],
      [status.DEADLINE_EXCEEDED, 'UNAVAILABLE'],
      [status.CANCELLED, 'UNAVAILABLE'],
      [status.UNAUTHENTICATED, 'UNAUTHENTICATED'],
      [status.PERMISSION_DENIED, 'UNAUTHENTICATED'],
      [status.UNIMPLEMENTED, 'INTERNAL'], // not a uringmq server: retrying cannot help
      // grpc-js reports some broken connections as these: retried, as UNAVAILABLE.
      [status.INTERNAL, 'UNAVAILABLE'],
      [status.UNKNOWN, 'UNAVAILABLE'],
      [status.ABORTED, 'UNAVAILABLE'],
      [status.DATA_LOSS, 'UNAVAILABLE'],
    ];
    for (const [code, want] of noTrailer) {
      assert.equal(fromServiceError({ code, details: 'd', metadata: new Metadata() }).code, want, `status ${code}`);
      assert.equal(fromServiceError({ code, details: 'd' }).code, want, `status ${code}, no metadata at all`);
    }
    // A trailer value that is not one of our codes is ignored, and so is the code under another key.
    const bogus = new Metadata();
    bogus.set(CODE_TRAILER, 'NOT_A_CODE');
    assert.equal(fromServiceError({ code: status.NOT_FOUND, details: 'd', metadata: bogus }).code, 'TOPIC_NOT_FOUND');
    const bin = new Metadata();
    bin.set(`${CODE_TRAILER}-bin`, Buffer.from('INVALID_ARGUMENT'));
    assert.equal(fromServiceError({ code: status.OUT_OF_RANGE, details: 'd', metadata: bin }).code, 'OFFSET_OUT_OF_RANGE');
    // A UringmqError passes through unchanged.
    const e = new UringmqError('DIR_LOCKED', 'x');
    assert.equal(fromServiceError(e), e);
  });

  it('a cap refusal (RESOURCE_EXHAUSTED past maxTopics or maxGroups) carries the setting in the uringmq-limit trailer and back, which load refusals do not', () => {
    for (const limit of ['maxTopics', 'maxPartitions', 'maxGroups']) {
      const se = toServiceError(new UringmqError('RESOURCE_EXHAUSTED', `past ${limit}`, { limit }));
      assert.deepEqual(se.metadata.get(LIMIT_TRAILER), [limit]);
      const back = fromServiceError(se);
      assert.equal(back.code, 'RESOURCE_EXHAUSTED');
      assert.equal(back.limit, limit);
    }
    const load = toServiceError(new UringmqError('RESOURCE_EXHAUSTED', 'too many open streams (limit 1); retry later'));
    assert.deepEqual(load.metadata.get(LIMIT_TRAILER), []);
    assert.equal(fromServiceError(load).limit, undefined);
    const md = (v: string) => {
      const m = new Metadata();
      m.set(LIMIT_TRAILER, v);
      return m;
    };
    // A setting this client does not know yet (a later broker's cap) is one still.
    assert.equal(fromServiceError({ code: status.RESOURCE_EXHAUSTED, details: 'd', metadata: md('maxPartitions') }).limit, 'maxPartitions');
    // Not a setting's name, or on another status: ignored.
    assert.equal(fromServiceError({ code: status.RESOURCE_EXHAUSTED, details: 'd', metadata: md('max groups; or') }).limit, undefined);
    assert.equal(fromServiceError({ code: status.UNAVAILABLE, details: 'd', metadata: md('maxGroups') }).limit, undefined);
  });

  it("grpc-js's text for a channel with no connection becomes a plain sentence, its last error kept, its empty resolution note dropped", () => {
    const details = 'No connection established. Last error: Error: connect ECONNREFUSED 127.0.0.1:50777. Resolution note: ';
    const err = fromServiceError({ code: status.UNAVAILABLE, details, metadata: new Metadata() });
    assert.equal(err.code, 'UNAVAILABLE');
    assert.equal(err.message, 'no connection to the server (last error: connect ECONNREFUSED 127.0.0.1:50777)');
    const noted = fromServiceError({ code: status.UNAVAILABLE, details: 'No connection established. Last error: Error: getaddrinfo ENOTFOUND nope. Resolution note: DNS resolution failed' });
    assert.equal(noted.message, 'no connection to the server (last error: getaddrinfo ENOTFOUND nope; DNS resolution failed)');
    // Any other UNAVAILABLE text (the server's own, a stream cut) is kept as it is.
    assert.equal(fromServiceError({ code: status.UNAVAILABLE, details: 'Connection dropped' }).message, 'Connection dropped');
  });
});

describe('serve log destination (src/cli/log_destination.ts)', function () {
  this.timeout(60_000);

  it('past its bound it drops lines, counts them, and says how many once the reader catches up: every line either arrives or is counted', async () => {
    // In a child whose stdout this test does not read until the child has written:
    // a stalled log reader. (In this process a blocked write would hold one of libuv's
    // pool threads, which the other tests need.)
    // ~4 MB of lines against a 1 MiB bound: more than the bound and the socket's buffer
    // (a few hundred KiB) together, so the writes stall and lines are dropped.
    const N = 40_000;
    const code = `
      const { once } = require('node:events');
      const { logDestination } = require(${JSON.stringify(path.join(__dirname, '../src/cli/log_destination'))});
      const d = logDestination(1, 1 << 20);
      const line = (o) => JSON.stringify({ ...o, pad: 'x'.repeat(80) }) + '\\n';
      for (let i = 0; i < ${N}; i++) d.stream.write(line({ i }));
      let drainedEarly = false;
      const drained = once(d.stream, 'drain').then(() => (drainedEarly = true));
      // Half a second for the writes to go as far as they can: with nobody reading,
      // the bound cannot empty (it is larger than what the socket takes).
      setTimeout(() => process.stderr.write('burst ' + d.dropped + ' ' + drainedEarly + '\\n'), 500);
      process.stdin.once('data', async () => {
        await drained; // everything the bound held got through: the notice fits now
        d.stream.write(line({ last: true }));
        await d.close(10000);
        process.stderr.write('dropped ' + d.dropped + '\\n');
        process.exit(0);
      });`;
    const child = spawn(process.execPath, ['--require', 'tsx/cjs', '-e', code], { stdio: ['pipe', 'pipe', 'pipe'] });
    let err = '';
    let out = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      const until = Date.now() + 30_000;
      while (!/burst \d+ \w+\n/.test(err) && child.exitCode === null && Date.now() < until) await sleep(20);
      const m = /burst (\d+) (\w+)\n/.exec(err);
      assert.ok(Number(m?.[1]) > 0, `nothing dropped with a stalled reader: ${err}`);
      assert.equal(m?.[2], 'false', 'the writes did not stall: everything pending got out with nobody reading');
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      child.stdin!.write('go\n');
      assert.equal(await Promise.race([exited, sleep(30_000).then(() => 'timeout')]), 0, err);
      const dropped = Number(/dropped (\d+)\n/.exec(err)?.[1]);
      const lines = out.trim().split('\n').map((l) => JSON.parse(l) as { i?: number; last?: boolean; dropped?: number });
      const notices = lines.filter((l) => l.dropped !== undefined);
      assert.ok(notices.length >= 1, 'no notice of the dropped lines');
      assert.equal(notices.reduce((n, l) => n + l.dropped!, 0), dropped, 'the notices say every drop, once');
      assert.equal(lines.filter((l) => l.i !== undefined).length + dropped, N, 'a line neither arrived nor was counted');
      assert.ok(lines[lines.length - 1]!.last, 'the line after the reader caught up arrived, after the notice');
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    }
  });
});

describe('Units: the strace trace parser of the tests (parseTrace)', () => {
  it('a descriptor another thread reopened while a close of that number was unfinished names the file opened, not nothing', () => {
    // The kernel frees the number as close begins: thread 101's openat got 23 before
    // thread 100's close of the old 23 was seen to finish.
    const trace = [
      '100 openat(AT_FDCWD, "/d/a.log", O_RDONLY|O_CLOEXEC) = 23',
      '100 close(23 <unfinished ...>',
      '101 openat(AT_FDCWD, "/d/b.log", O_RDWR|O_CLOEXEC) = 23',
      '100 <... close resumed>) = 0',
      '101 pwrite64(23, "x", 1, 0) = 1',
      '101 fsync(23 <unfinished ...>',
      '100 openat(AT_FDCWD, "/d/c.log", O_RDONLY|O_CLOEXEC <unfinished ...>',
      '101 <... fsync resumed>) = 0',
      '100 <... openat resumed>) = 24',
      '100 fdatasync(24) = 0',
      '101 close(23) = 0',
      '101 fsync(23) = -1 EBADF (Bad file descriptor)',
    ].join('\n');
    const calls = parseTrace(trace, ['pwrite64', 'fsync', 'fdatasync']);
    assert.deepEqual(
      calls.map((c) => [c.call, c.file, c.result]),
      [
        ['pwrite64', '/d/b.log', 1],
        ['fsync', '/d/b.log', 0],
        ['fdatasync', '/d/c.log', 0],
        ['fsync', undefined, -1],
      ],
    );
  });
});

describe('Units: the mount table check for file systems without barriers (mount_check.ts)', () => {
  const info = [
    '26 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard',
    '45 26 7:0 / /mnt/with\\040space rw,relatime shared:1 master:2 - ext4 /dev/loop0 rw,nobarrier',
    '46 26 7:1 / /b rw,relatime - btrfs /dev/loop1 rw,barrier=0,space_cache',
    'a line that is not one',
  ].join('\n');
  const entries = parseMountInfo(info);

  it('reads each entry, optional fields and octal escapes included, and skips lines it cannot read', () => {
    assert.equal(entries.length, 3);
    assert.deepEqual(entries[1], { majorMinor: '7:0', mountPoint: '/mnt/with space', mountOptions: 'rw,relatime', fsType: 'ext4', source: '/dev/loop0', superOptions: 'rw,nobarrier' });
  });

  it('names a mount without barriers on a disk with a write-back or unknown cache, and nothing for a write-through cache or a mount with barriers', () => {
    const cache = (mode: string | null) => () => mode;
    assert.equal(barrierProblemIn(entries, '254:0', '/data', cache('write back')), null);
    assert.match(barrierProblemIn(entries, '7:0', '/mnt/with space/d', cache('write back'))!, /^the file system of \/mnt\/with space\/d \(ext4 on \/dev\/loop0, mounted at \/mnt\/with space\) is mounted nobarrier: .*"write back"/);
    assert.match(barrierProblemIn(entries, '7:1', '/b/d', cache(null))!, /mounted barrier=0: .*of unknown mode/);
    assert.equal(barrierProblemIn(entries, '7:0', '/d', cache('write through')), null);
    assert.equal(barrierProblemIn(entries, '9:9', '/d', cache('write back')), null);
  });

  it('splits st_dev as glibc does, large majors and minors included', () => {
    assert.equal(majorMinor(0x700n), '7:0');
    assert.equal(majorMinor(0xfe00n), '254:0');
    // glibc's makedev: major's low 12 bits at 8, the rest at 44; minor's low 8 bits at 0, the rest at 20.
    const [major, minor] = [0x12345n, 0x6789an];
    const dev = ((major & 0xfffff000n) << 32n) | ((major & 0xfffn) << 8n) | ((minor & 0xffffff00n) << 12n) | (minor & 0xffn);
    assert.equal(majorMinor(dev), `${major}:${minor}`);
  });
});

describe("Units: maxPartitions' default from the open-file limit (maxPartitionsFor)", () => {
  const limits = (soft: string, hard: string) =>
    ['Limit                     Soft Limit           Hard Limit           Units     ', `Max processes             63704                63704                processes `, `Max open files            ${soft.padEnd(21)}${hard.padEnd(21)}files     `].join('\n');

  it('an eighth of the limit, at most what no limit gives: a host whose hard limit is 1,048,576 (Node runs with it) is not given 131,072 partitions', () => {
    assert.equal(maxPartitionsFor(limits('20000', '20000')), 2500);
    assert.equal(maxPartitionsFor(limits('7', '7')), 1);
    // Typical hard limits (systemd's 524,288, containers' 1,048,576): the default was
    // 65,536 and 131,072 partitions, some 1.1 MiB of memory each once written, more than
    // the 10,000 given where there is no limit at all.
    assert.equal(maxPartitionsFor(limits('524288', '524288')), 10_000);
    assert.equal(maxPartitionsFor(limits('1048576', '1048576')), 10_000);
    assert.equal(maxPartitionsFor(limits('unlimited', 'unlimited')), 10_000);
    assert.equal(maxPartitionsFor('no such line'), 10_000);
  });

  it('Node runs with its soft limit raised to the hard one: that is the limit the default goes by, not the shell\'s `ulimit -n`', () => {
    // A lower soft limit is raised by Node at start: what `ulimit -n` says in the shell
    // that starts the broker is not what it gets (the README names `ulimit -Hn`).
    const hard = /^Max open files\s+\S+\s+(\d+)/m.exec(fs.readFileSync('/proc/self/limits', 'utf8'))?.[1];
    if (hard === undefined || Number(hard) < 64) return;
    const soft = Math.floor(Number(hard) / 2);
    const code = "const l=require('fs').readFileSync('/proc/self/limits','utf8');process.stdout.write(/^Max open files\\s+(\\d+)/m.exec(l)[1])";
    const out = execFileSync('bash', ['-c', `ulimit -Sn ${soft} && exec "$0" -e "$1"`, process.execPath, code], { encoding: 'utf8' });
    assert.equal(out, hard);
  });
});
