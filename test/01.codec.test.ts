import { strict as assert } from 'node:assert';
import { UringmqError, crc32c, decodeBatches, encodeBatch, readBatchMeta, sealBatch } from '../src';
import { validateBatch } from '../src/native';
import { encodeSent, readBatchSpan, recordAsBatch, stampProducer, type RecordInput } from '../src/codec/record_batch';
import { BufferPool } from '../src/codec/buffer_pool';
import { finishRequest, prepareBatch } from '../src/client/publish_request';
import { pb } from '../src/grpc/proto';

const sealed = (): Buffer => {
  const b = encodeBatch([{ value: 'x' }]);
  sealBatch(b);
  return b;
};

describe('RecordBatch codec', () => {
  it('computes CRC32C (Castagnoli) check values', () => {
    assert.equal(crc32c(Buffer.from('123456789')), 0xe3069283);
    assert.equal(crc32c(Buffer.alloc(32, 0)), 0x8a9136aa);
    // chaining: crc(a+b) == crc(b, crc(a))
    const a = Buffer.from('hello '), b = Buffer.from('world');
    assert.equal(crc32c(b, crc32c(a)), crc32c(Buffer.concat([a, b])));
  });

  it('crc32c refuses what is not bytes, and a crc that is not a uint32, with a UringmqError (INVALID_ARGUMENT)', () => {
    const bad: Array<() => unknown> = [
      () => crc32c('123456789' as never),
      () => crc32c(null as never),
      () => crc32c(Buffer.from('a'), -1),
      () => crc32c(Buffer.from('a'), 1.5),
      () => crc32c(Buffer.from('a'), 2 ** 32),
      () => crc32c(Buffer.from('a'), '7' as never),
    ];
    for (const f of bad)
      assert.throws(f, (e: unknown) => e instanceof UringmqError && e.code === 'INVALID_ARGUMENT', String(f));
    assert.equal(crc32c(Buffer.from('a'), 0xffffffff), crc32c(Buffer.from('a'), 0xffffffff)); // the largest crc is taken
  });

  it('the exported codec functions refuse bad arguments with a UringmqError (INVALID_ARGUMENT, or CORRUPT_BATCH for bytes that are no batch), not a TypeError or RangeError', () => {
    const ok = sealBatch(encodeBatch([{ value: 'a' }]));
    const cases: Array<[() => unknown, string]> = [
      [() => encodeBatch(null as never), 'INVALID_ARGUMENT'],
      [() => encodeBatch({ length: 1, 0: { value: 'a' } } as never), 'INVALID_ARGUMENT'],
      [() => encodeBatch([]), 'INVALID_ARGUMENT'],
      [() => encodeBatch([{ value: 'a' }], 5 as never), 'INVALID_ARGUMENT'],
      [() => encodeBatch([{ value: 'a' }], null as never), 'INVALID_ARGUMENT'],
      [() => sealBatch(null as never), 'INVALID_ARGUMENT'],
      [() => sealBatch('abc' as never), 'INVALID_ARGUMENT'],
      [() => sealBatch(new Uint8Array(ok) as never), 'INVALID_ARGUMENT'],
      [() => sealBatch(Buffer.alloc(3)), 'CORRUPT_BATCH'],
      [() => decodeBatches(null as never), 'INVALID_ARGUMENT'],
      [() => decodeBatches('x' as never), 'INVALID_ARGUMENT'],
      [() => decodeBatches(ok, 'x' as never), 'INVALID_ARGUMENT'],
      [() => decodeBatches(ok, -1), 'INVALID_ARGUMENT'],
      [() => decodeBatches(ok, 0, null as never), 'INVALID_ARGUMENT'],
      [() => decodeBatches(Buffer.alloc(10)), 'CORRUPT_BATCH'],
      [() => readBatchMeta(null as never), 'INVALID_ARGUMENT'],
      [() => readBatchMeta(ok, -1), 'INVALID_ARGUMENT'],
      [() => readBatchMeta(ok, 1.5), 'INVALID_ARGUMENT'],
      [() => readBatchMeta(ok, 'x' as never), 'INVALID_ARGUMENT'],
      [() => readBatchMeta(Buffer.alloc(3)), 'CORRUPT_BATCH'],
    ];
    for (const [f, code] of cases)
      assert.throws(f, (e: unknown) => e instanceof UringmqError && e.code === code, `${String(f)}: not ${code}`);
    assert.deepEqual(decodeBatches(ok).map((r) => r.value.toString()), ['a']); // the good call still reads
  });

  it('a key, value or header value that answers differently when written than when sized (a getter, a Proxy) is INVALID_ARGUMENT, not a record holding the buffer\'s old bytes or a RangeError', () => {
    // Sized at its first read, written at its second.
    const flaky = (first: unknown, then: unknown) => {
      let reads = 0;
      return () => (reads++ === 0 ? first : then) as Buffer;
    };
    const long = Buffer.alloc(40, 0x41);
    const cases: Array<[string, () => RecordInput]> = [
      ['plain value, shorter', () => { const v = flaky(long, Buffer.from('BB')); return { get value() { return v(); } }; }],
      ['plain value, longer', () => { const v = flaky(Buffer.from('BB'), long); return { get value() { return v(); } }; }],
      ['value, shorter string', () => { const v = flaky('A'.repeat(40), 'BB'); return { key: 'k', get value() { return v(); } }; }],
      ['value, not bytes', () => { const v = flaky(long, 42); return { key: 'k', get value() { return v(); } }; }],
      ['key, shorter', () => { const k = flaky(long, Buffer.from('BB')); return { value: 'v', get key() { return k(); } }; }],
      ['header, not bytes', () => { const h = flaky(long, 42); return { value: 'v', headers: { get h() { return h(); } } }; }],
    ];
    for (const [what, rec] of cases) {
      // A pooled buffer's old contents, as the producers' encodes get.
      const alloc = (size: number) => Buffer.alloc(size, 0x53);
      assert.throws(() => encodeBatch([rec()], { alloc }), (e: unknown) => e instanceof UringmqError && e.code === 'INVALID_ARGUMENT' && /changed while it was encoded/.test(e.message), what);
    }
  });

  it('computes CRC32C like a bytewise reference at every block boundary and alignment', () => {
    // The native code runs three interleaved streams over 8 KiB and 256 B blocks and
    // combines them: lengths around 3×block and unaligned starts exercise each path.
    const table = new Uint32Array(256);
    for (let i = 0; i < 256; i++) {
      let c = i;
      for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
      table[i] = c >>> 0;
    }
    const reference = (bytes: Uint8Array, seed: number): number => {
      let c = ~seed >>> 0;
      for (const x of bytes) c = (table[(c ^ x) & 0xff]! ^ (c >>> 8)) >>> 0;
      return ~c >>> 0;
    };
    const data = Buffer.alloc(60_000);
    for (let i = 0; i < data.length; i++) data[i] = ((i * 2654435761) >>> 13) & 0xff;
    for (const len of [0, 1, 7, 8, 9, 255, 767, 768, 769, 1000, 24_575, 24_576, 24_577, 24_576 + 768 + 13, 50_000])
      for (const off of [0, 1, 3, 8])
        for (const seed of [0, 0x12345678]) {
          const b = data.subarray(off, off + len);
          assert.equal(crc32c(b, seed), reference(b, seed), `length ${len}, offset ${off}, seed ${seed}`);
        }
  });

  it('round-trips keys, values, headers and timestamps', () => {
    const records = [
      { value: 'plain' },
      { key: 'k1', value: Buffer.from([0, 1, 2, 255]), headers: { a: 'x', 'ü-ni': Buffer.from('çode') }, timestamp: 1_700_000_000_123 },
      { key: Buffer.alloc(0), value: '', timestamp: 1_600_000_000_000 },
      { key: null, value: 'x'.repeat(20_000), timestamp: 1_900_000_000_000 },
    ];
    const batch = sealBatch(encodeBatch(records, { now: 1_800_000_000_000, producerId: 42, baseSequence: 7 }));
    const meta = readBatchMeta(batch);
    assert.equal(meta.recordCount, 4);
    assert.equal(meta.firstTimestamp, 1_800_000_000_000);
    assert.equal(meta.maxTimestamp, 1_900_000_000_000);
    assert.equal(meta.producerId, 42);
    assert.equal(meta.baseSequence, 7);
    assert.equal(meta.length, batch.length);
    assert.doesNotThrow(() => validateBatch(batch));
    const out = decodeBatches(batch);
    assert.equal(out.length, 4);
    assert.deepEqual(out.map((r) => r.offset), [0, 1, 2, 3]);
    assert.equal(out[0]!.key, null);
    assert.equal(out[0]!.value.toString(), 'plain');
    assert.equal(out[0]!.timestamp, 1_800_000_000_000);
    assert.equal(out[1]!.key!.toString(), 'k1');
    assert.deepEqual([...out[1]!.value], [0, 1, 2, 255]);
    assert.equal(out[1]!.headers['ü-ni']!.toString(), 'çode');
    assert.equal(out[1]!.headers.a!.toString(), 'x');
    assert.equal(out[1]!.timestamp, 1_700_000_000_123);
    assert.equal(out[2]!.key!.length, 0);
    assert.equal(out[2]!.value.length, 0);
    assert.equal(out[3]!.value.length, 20_000);
  });

  it('round-trips every field shape: one- and multi-byte lengths, offsets and deltas, empty and large headers', () => {
    // decodeEach reads one-byte varints inline and falls back for longer ones: mix both.
    const rnd = (n: number) => Math.floor(Math.random() * n);
    const bytes = (n: number) => Buffer.from(Array.from({ length: n }, () => rnd(256)));
    const records = Array.from({ length: 300 }, (_, i) => {
      const r: { key?: Buffer | null; value: Buffer; headers?: Record<string, Buffer>; timestamp?: number } = { value: bytes([0, 1, 127, 128, 300, 5000][i % 6]!) };
      if (i % 3 === 1) r.key = bytes([0, 5, 200][i % 3]!);
      if (i % 4 === 2) r.headers = { h: bytes(i % 7), [`k${i}`]: bytes(130) };
      if (i % 5 === 3) r.timestamp = 1_700_000_000_000 + (i % 2 ? 1 : -1) * rnd(10_000_000);
      return r;
    });
    const batch = sealBatch(encodeBatch(records, { now: 1_700_000_000_000 }));
    assert.doesNotThrow(() => validateBatch(batch));
    for (const from of [0, 1, 127, 128, 299]) {
      const out = decodeBatches(batch, from);
      assert.equal(out.length, 300 - from);
      out.forEach((m, j) => {
        const i = from + j;
        const r = records[i]!;
        assert.equal(m.offset, i);
        assert.deepEqual(m.value, r.value, `value of ${i}`);
        assert.deepEqual(m.key, r.key ?? null, `key of ${i}`);
        assert.deepEqual(m.headers, r.headers ?? {}, `headers of ${i}`);
        assert.equal(m.timestamp, r.timestamp ?? 1_700_000_000_000, `timestamp of ${i}`);
      });
    }
  });

  it('encodes plain batches (byte values only) like any other: the fast path agrees with the general one', () => {
    const values = Array.from({ length: 300 }, (_, i) => Buffer.alloc([0, 1, 127, 128, 5000][i % 5]!, i & 0xff));
    const plain = sealBatch(encodeBatch(values.map((value) => ({ value })), { now: 1_700_000_000_000 }));
    // The same records through the general path: a string value for the last record.
    const general = sealBatch(encodeBatch([...values.slice(0, -1).map((value) => ({ value })), { value: values[299]!.toString('latin1') }], { now: 1_700_000_000_000 }));
    assert.equal(Buffer.compare(plain, general), 0, 'byte for byte');
    assert.doesNotThrow(() => validateBatch(plain));
    const out = decodeBatches(plain);
    out.forEach((m, i) => assert.deepEqual(m.value, values[i]));
    // Past 2^14 records (three-byte offset deltas), Uint8Array values, null keys, and
    // timestamps given (all equal to the batch's): the plain pass and the general one
    // (one string value) write the same bytes.
    const now = 1_700_000_000_000;
    // (A plain Uint8Array is accepted at run time, though the type says Buffer.)
    const many = Array.from({ length: 20_000 }, (_, i) => (i % 3 === 0 ? (new Uint8Array([i & 0xff, 7]) as Buffer) : Buffer.from([i & 0xff])));
    const bulk = encodeBatch(many.map((value, i) => (i % 2 ? { value, key: null } : { value })), { now });
    const timed = encodeBatch(many.map((value) => ({ value, timestamp: now })), { now });
    const mixed = encodeBatch([...many.slice(0, -1).map((value) => ({ value })), { value: Buffer.from(many[19_999]!).toString('latin1') }], { now });
    assert.equal(Buffer.compare(bulk, timed), 0, 'timestamps given = none given');
    assert.equal(Buffer.compare(bulk, mixed), 0, 'plain pass = general pass');
    assert.doesNotThrow(() => validateBatch(sealBatch(bulk)));
    const back = decodeBatches(sealBatch(bulk));
    assert.equal(back.length, 20_000);
    assert.deepEqual(back[19_999]!.value, Buffer.from(many[19_999]!));
    assert.equal(back[16_384]!.offset, 16_384);
    // Timestamps within 64 ms of the first (a one-byte delta, -64..63: a producer's
    // send() stamps each record) stay on the plain pass, and agree with the general one;
    // one further off takes the general pass.
    for (const deltas of [[0, 63, -64, 5, 0], [0, 1, 64, 2], [0, -65]]) {
      const recs = deltas.map((d, i) => ({ value: Buffer.from([i]), timestamp: now + d }));
      const fast = sealBatch(encodeBatch(recs, { now }));
      // The same bytes through the general pass: the last value as a string.
      const slow = sealBatch(encodeBatch([...recs.slice(0, -1), { ...recs.at(-1)!, value: recs.at(-1)!.value.toString('latin1') }], { now }));
      assert.doesNotThrow(() => validateBatch(fast));
      assert.deepEqual(decodeBatches(fast).map((m) => m.timestamp - now), deltas);
      assert.equal(Buffer.compare(fast, slow), 0, `plain pass = general pass (${deltas})`);
    }
  });

  it('matches the worked example in docs/FORMAT.md byte for byte', () => {
    const b = sealBatch(encodeBatch([{ key: 'k', value: 'hi', timestamp: 1_700_000_000_000 }]));
    const hex = [
      '55514d42', '4a000000', '0000000000000000', '62fcfc66', // magic, length 74, baseOffset 0, crc
      '01', '00', '4000', '01000000', '00000000', // version, attributes, headerLength, count, lastOffsetDelta
      '0068e5cf8b010000', '0068e5cf8b010000', // first and max timestamp 1700000000000
      'ffffffffffffffff', 'ffffffff', '00000000', // producerId -1, baseSequence -1, reserved
      '09', '00', '00', '00', '026b', '026869', '00', // the record
    ].join('');
    assert.equal(b.toString('hex'), hex);
  });

  it('decodes from an offset inside a batch', () => {
    const b = sealBatch(encodeBatch([{ value: 'a' }, { value: 'b' }, { value: 'c' }]));
    b.writeUInt32LE(100, 8); // baseOffset 100 (not covered by the CRC)
    const out = decodeBatches(b, 101);
    assert.deepEqual(out.map((r) => [r.offset, r.value.toString()]), [[101, 'b'], [102, 'c']]);
  });

  it('decoded keys, values and header values are full Buffers viewing the batch (no copies), also at an offset inside a pooled slab', () => {
    const enc = encodeBatch([{ key: 'k1', value: 'hello', headers: { h: 'v' } }]);
    const slab = Buffer.allocUnsafe(enc.length + 13); // the batch at a non-zero byteOffset
    enc.copy(slab, 13);
    const b = slab.subarray(13);
    const [r] = decodeBatches(b);
    for (const x of [r!.key!, r!.value, r!.headers.h!]) {
      assert.ok(Buffer.isBuffer(x) && x instanceof Buffer);
      assert.equal(x.buffer, slab.buffer, 'a view of the same memory');
    }
    assert.equal(r!.value.toString(), 'hello');
    assert.equal(r!.value.readUInt8(0), 0x68);
    assert.equal(r!.key!.toString('hex'), Buffer.from('k1').toString('hex'));
    b[b.indexOf('hello')] = 0x4a; // views see writes to the batch
    assert.equal(r!.value.toString(), 'Jello');
    assert.ok(r!.value.subarray(1).equals(Buffer.from('ello')));
  });

  it('the core rejects flipped bits, truncation and bad framing', () => {
    const good = sealBatch(encodeBatch([{ key: 'k', value: 'v'.repeat(100) }, { value: 'w' }]));
    const flip = Buffer.from(good);
    flip[80] ^= 0x01;
    assert.throws(() => validateBatch(flip), (e: Error & { code?: string }) => e.code === 'CORRUPT_BATCH' && /CRC/.test(e.message));
    assert.throws(() => validateBatch(good.subarray(0, good.length - 3)), { code: 'CORRUPT_BATCH' });
    const badCount = Buffer.from(good);
    badCount.writeUInt32LE(3, 24);
    badCount.writeUInt32LE(2, 28);
    sealBatch(badCount); // CRC is right, the record count is not
    assert.throws(() => validateBatch(badCount), { code: 'CORRUPT_BATCH' });
    assert.throws(() => validateBatch(Buffer.alloc(10)), { code: 'CORRUPT_BATCH' });
    assert.throws(() => validateBatch(Buffer.alloc(200)), { code: 'CORRUPT_BATCH' });
  });
  it('refuses a batch whose length is smaller than its header (a loop over it would never advance)', () => {
    const b = Buffer.alloc(64);
    sealed().copy(b, 0, 0, 4); // the magic
    b.writeUInt32LE(0, 4); // batchLength 0
    b.writeUInt32LE(0, 24); // recordCount 0
    assert.throws(() => readBatchMeta(b), /less than its 64-byte header/);
    assert.throws(() => decodeBatches(b, 5), /less than its 64-byte header/);
    assert.throws(() => readBatchSpan(b, 0, { length: 0, nextOffset: 0 }), /less than its 64-byte header/);
  });

  it('readBatchSpan reads what readBatchMeta does (length, end offset) from batches side by side, and refuses what is no batch', () => {
    const first = sealBatch(encodeBatch([{ value: 'a' }, { value: 'bb' }]));
    first.writeUInt32LE(2 ** 31 + 5, 8); // a base offset past 2^31: both 32-bit halves count
    first.writeUInt32LE(1, 12);
    const second = sealBatch(encodeBatch(Array.from({ length: 300 }, (_, i) => ({ value: `v${i}` }))));
    const raw = Buffer.concat([first, second]);
    const span = { length: 0, nextOffset: 0 };
    for (const pos of [0, first.length]) {
      const meta = readBatchMeta(raw, pos);
      readBatchSpan(raw, pos, span);
      assert.deepEqual(span, { length: meta.length, nextOffset: meta.baseOffset + meta.recordCount });
    }
    assert.equal(span.nextOffset, 300);
    readBatchSpan(raw, 0, span);
    assert.equal(span.nextOffset, 2 ** 32 + 2 ** 31 + 5 + 2);
    assert.throws(() => readBatchSpan(raw, 1, span), /no batch at byte 1/);
    assert.throws(() => readBatchSpan(raw, raw.length - 10, span), /no batch/);
  });

  it('recordAsBatch: a record of the log as a batch of its own, its fields as they were and the extra headers after its own', () => {
    const recs: RecordInput[] = [
      { value: 'a', timestamp: 5000 },
      { key: Buffer.alloc(0), value: Buffer.alloc(300, 1), headers: { h: 'x', e: '' }, timestamp: 1000 },
      { key: 'k', value: '', headers: { 'x-uringmq-reason': 'mine' }, timestamp: 2 ** 52 - 1 },
    ];
    const first = sealBatch(encodeBatch([{ value: 'before' }]));
    const b = sealBatch(encodeBatch(recs));
    b.writeBigInt64LE(1n, 8); // the second batch starts at offset 1
    const raw = Buffer.concat([first, b]);
    const decoded = decodeBatches(raw, 0);
    for (let off = 0; off < 4; off++) {
      const one = sealBatch(recordAsBatch(raw, off, { 'x-uringmq-reason': 'moved', n: String(off) })!);
      assert.equal(validateBatch(one).recordCount, 1, 'the core takes it');
      const [r] = decodeBatches(one, 0);
      const want = decoded[off]!;
      assert.equal(r!.timestamp, want.timestamp);
      assert.deepEqual(r!.key, want.key);
      assert.deepEqual(r!.value, want.value);
      assert.deepEqual({ ...r!.headers }, { ...want.headers, 'x-uringmq-reason': Buffer.from('moved'), n: Buffer.from(String(off)) });
    }
    assert.equal(recordAsBatch(raw, 4, {}), null);
  });

  it('a header named __proto__ round-trips as a header', () => {
    const headers: Record<string, Buffer> = { x: Buffer.from('y') };
    Object.defineProperty(headers, '__proto__', { value: Buffer.from('p'), enumerable: true });
    const b = encodeBatch([{ value: 'v', headers }]);
    sealBatch(b);
    const [r] = decodeBatches(b, 0);
    assert.equal(Object.getPrototypeOf(r!.headers), Object.prototype);
    assert.deepEqual(Object.keys(r!.headers).sort(), ['__proto__', 'x']);
    assert.equal(r!.headers['__proto__']!.toString(), 'p');
  });

  it('timestamps: 0 and 2^52 - 1 in one batch round-trip exactly; past 2^52 - 1 is INVALID_ARGUMENT before anything is written', () => {
    const b = sealBatch(encodeBatch([{ value: 'a', timestamp: 2 ** 52 - 1 }, { value: 'b', timestamp: 0 }, { value: 'c', timestamp: 2 ** 52 - 1 }]));
    validateBatch(b); // the core agrees: CRC and the deltas against maxTimestamp
    assert.deepEqual(decodeBatches(b, 0).map((r) => r.timestamp), [2 ** 52 - 1, 0, 2 ** 52 - 1]);
    for (const t of [2 ** 52, Number.MAX_SAFE_INTEGER])
      assert.throws(() => encodeBatch([{ value: 'a', timestamp: 0 }, { value: 'b', timestamp: t }]), (e: Error & { code?: string }) => e.code === 'INVALID_ARGUMENT' && /record 1: timestamp must be an integer from 0 to 2\^52 - 1/.test(e.message));
  });

  it('the core refuses batches built elsewhere with timestamps outside 0..2^52 - 1 (CORRUPT_BATCH), through both record walks', () => {
    const small = (v: number) => ({ value: 'v', timestamp: v });
    const large = (v: number) => ({ value: Buffer.alloc(300), timestamp: v }); // a two-byte record length: the general walk
    for (const rec of [small, large]) {
      // Record 1 is 1 ms after record 0; the header's first and max timestamps are rewritten.
      for (const [first, max] of [[2 ** 52, 2 ** 52 + 1], [-1, 0], [2 ** 52 - 1, 2 ** 52]]) {
        const b = encodeBatch([rec(1000), rec(1001)]);
        b.writeBigInt64LE(BigInt(first!), 32); // firstTimestamp
        b.writeBigInt64LE(BigInt(max!), 40); // maxTimestamp
        sealBatch(b);
        assert.throws(() => validateBatch(b), (e: Error & { code?: string }) => e.code === 'CORRUPT_BATCH' && /outside 0\.\.2\^52-1/.test(e.message), `first ${first} max ${max}`);
      }
      const ok = sealBatch(encodeBatch([rec(2 ** 52 - 2), rec(2 ** 52 - 1)]));
      validateBatch(ok);
    }
  });

  it('a varint past 64 bits (a 10th byte above 1) is CORRUPT_BATCH to the core and an error to the decoder, not a length with its top bits dropped', () => {
    // One record whose length is 8 written in 10 bytes with a 10th byte of 2: a decoder
    // that drops the excess reads 8, one that keeps it 8 + 2^64. The core took it (CRC
    // sound), and no consumer could read the batch back (found by fuzzing the server).
    const fuzzed = Buffer.from('55514d42520000000000000000000000993a22f90100400001000000000000000068e5cf8b0100000068e5cf8b010000ffffffffffffffffffffffff00000000888080808080808080020000000002686900', 'hex');
    assert.throws(() => validateBatch(fuzzed), (e: Error & { code?: string }) => e.code === 'CORRUPT_BATCH', 'the core took a length past 64 bits');
    assert.throws(() => decodeBatches(fuzzed, 0), /varint past 64 bits/);
    // The same length in 10 bytes with a 10th byte of 0 is overlong but exact: both agree.
    const overlong = Buffer.from(fuzzed);
    overlong[64 + 9] = 0; // the record starts after the 64-byte header
    sealBatch(overlong);
    assert.equal(validateBatch(overlong).recordCount, 1);
    assert.deepEqual(decodeBatches(overlong, 0).map((r) => r.value.toString()), ['hi']);
  });

  it('a key length in a longer encoding than the shortest (80 00 for "no key") is read as the core reads it, not as a negative length', () => {
    const plain = encodeBatch([{ value: Buffer.from('x'), timestamp: 1000 }], { now: 1000 });
    // The record after the 64-byte header: length 7, attributes, timestamp and offset deltas, key length 0, value length 1, 'x', no headers.
    assert.equal(plain.subarray(64).toString('hex'), '0700000000017800', 'the record as encoded');
    const longer = Buffer.concat([plain.subarray(0, 64), Buffer.from('080000008000017800', 'hex')]);
    longer.writeUInt32LE(longer.length, 4);
    sealBatch(longer);
    assert.equal(validateBatch(longer).recordCount, 1, 'the core takes it');
    const [r] = decodeBatches(longer, 0);
    assert.equal(r?.key, null, 'no key');
    assert.equal(r?.value.toString(), 'x');
    // A key of 2 bytes with its length (3) in two bytes.
    const keyed = Buffer.concat([plain.subarray(0, 64), Buffer.from('0a0000008300616201780000', 'hex').subarray(0, 11)]);
    keyed.writeUInt32LE(keyed.length, 4);
    sealBatch(keyed);
    assert.equal(validateBatch(keyed).recordCount, 1, 'the core takes the keyed one');
    assert.equal(decodeBatches(keyed, 0)[0]?.key?.toString(), 'ab');
  });

  it('a batch that does not decode is CORRUPT_BATCH from the decoder (a typed error, whoever reads it)', () => {
    const b = encodeBatch([{ value: Buffer.from('hello') }]);
    b[64] = 0x7f; // the record's length past the batch
    assert.throws(
      () => decodeBatches(b, 0),
      (e: Error & { code?: string }) => e.code === 'CORRUPT_BATCH' && /record runs past the batch/.test(e.message),
    );
    // No batch where one should start (a truncated header after a whole batch, bytes
    // that are no batch): CORRUPT_BATCH too, not an untyped Error.
    const good = sealed();
    for (const [buf, re] of [[Buffer.concat([good, good.subarray(0, 30)]), /no batch at byte 72/], [Buffer.alloc(100), /no batch at byte 0/]] as const)
      assert.throws(() => decodeBatches(buf, 0), (e: Error & { code?: string }) => e.code === 'CORRUPT_BATCH' && re.test(e.message), re.source);
  });

  it('encodeBatch and stampProducer refuse a base sequence or a clock that the header cannot hold (INVALID_ARGUMENT, not a silent 0)', () => {
    const recs = [{ value: Buffer.from('v') }];
    const invalidArg = (e: Error & { code?: string }) => e.code === 'INVALID_ARGUMENT';
    for (const baseSequence of [NaN, 1.5, -2, 2 ** 31]) {
      assert.throws(() => encodeBatch(recs, { producerId: 7, baseSequence }), invalidArg, `baseSequence ${baseSequence}`);
      assert.throws(() => stampProducer(encodeBatch(recs), 7, baseSequence), invalidArg, `stamped baseSequence ${baseSequence}`);
    }
    for (const now of [-1000, 2 ** 53, 1.5, NaN]) assert.throws(() => encodeBatch(recs, { now }), invalidArg, `now ${now}`);
    assert.equal(readBatchMeta(encodeBatch(recs, { producerId: 7, baseSequence: 2 ** 31 - 1 })).baseSequence, 2 ** 31 - 1);
  });

  it('differential: every batch the core accepts, the decoder reads whole, with the same record count (4,000 seeded mutations, CRC fixed up after each)', () => {
    // The class of bug a fuzz run found: the core's validator and the decoders reading
    // the same bytes differently, so the log took a batch no consumer could read.
    let seed = 0x5eed1234;
    const rnd = (n: number): number => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return (((t ^ (t >>> 14)) >>> 0) % n);
    };
    const varint = (): number[] => {
      // A uvarint of 1 to 10 bytes, sometimes overlong or past 64 bits.
      const n = 1 + rnd(10);
      const out = Array.from({ length: n }, (_, i) => (i < n - 1 ? 0x80 : 0) | rnd(128));
      if (n === 10) out[9] = rnd(4); // 0 and 1 are within 64 bits, 2 and 3 past them
      return out;
    };
    let accepted = 0;
    for (let iter = 0; iter < 4000; iter++) {
      const records = Array.from({ length: 1 + rnd(4) }, (_, i) => ({
        key: rnd(3) === 0 ? null : Buffer.alloc(rnd(3) === 0 ? 0 : rnd(200), 65 + i),
        value: Buffer.alloc(rnd(4) === 0 ? 300 + rnd(300) : rnd(40), 97 + i),
        headers: rnd(2) === 0 ? {} : { h: Buffer.from('v'), ...(rnd(2) ? { k2: Buffer.alloc(rnd(20)) } : {}) },
        timestamp: 1_700_000_000_000 + rnd(5000),
      }));
      let b = encodeBatch(records);
      const mutations = 1 + rnd(3);
      for (let k = 0; k < mutations; k++) {
        const at = 64 + rnd(Math.max(1, b.length - 64));
        switch (rnd(4)) {
          case 0: // a byte changed
            b[at] = rnd(256);
            break;
          case 1: {
            // a varint written over what is there
            const v = varint();
            for (let i = 0; i < v.length && at + i < b.length; i++) b[at + i] = v[i]!;
            break;
          }
          case 2: {
            // a varint inserted, batchLength following
            const v = Buffer.from(varint());
            b = Buffer.concat([b.subarray(0, at), v, b.subarray(at)]);
            b.writeUInt32LE(b.length, 4);
            break;
          }
          default: {
            // bytes cut out, batchLength following
            const n = 1 + rnd(4);
            if (b.length - n <= 64) break;
            b = Buffer.concat([b.subarray(0, at), b.subarray(Math.min(b.length, at + n))]);
            b.writeUInt32LE(b.length, 4);
          }
        }
      }
      sealBatch(b);
      let core: { recordCount: number } | null = null;
      try {
        core = validateBatch(b);
      } catch (e) {
        assert.equal((e as { code?: string }).code, 'CORRUPT_BATCH', `iteration ${iter}: ${(e as Error).message}`);
      }
      if (!core) continue;
      accepted++;
      let decoded;
      try {
        decoded = decodeBatches(b, 0);
      } catch (e) {
        assert.fail(`iteration ${iter}: the core took a batch the decoder cannot read (${(e as Error).message}): ${b.toString('hex')}`);
      }
      assert.equal(decoded.length, core.recordCount, `iteration ${iter}: ${b.toString('hex')}`);
      for (const r of decoded) assert.ok(r.timestamp >= 0 && r.timestamp < 2 ** 52, `iteration ${iter}: timestamp ${r.timestamp}`);
    }
    assert.ok(accepted > 100, `only ${accepted} mutated batches were valid: the mutations test little`);
  });

  it("the client's hand-built PublishRequest decodes as protobufjs reads it, with and without sync, at the largest field values", () => {
    const pool = new BufferPool(1 << 20);
    for (const [seq, topic, partition, producer, sync] of [
      [1, 't', 0, null, false],
      [Number.MAX_SAFE_INTEGER, 'x'.repeat(249), 2 ** 32 - 1, { producerId: 2 ** 52 - 1, baseSequence: 2 ** 31 - 1 }, true],
      [300, 'ü-topic', 7, null, true],
    ] as const) {
      const prep = prepareBatch(pool, topic, [{ key: 'k', value: 'v' }, { value: 'w' }]);
      const req = pb.PublishRequest.decode(finishRequest(prep, seq, topic, partition, producer, sync));
      assert.deepEqual([Number(req.sequence), req.topic, req.partition, req.sync], [seq, topic, partition, sync]);
      const meta = readBatchMeta(Buffer.from(req.batch));
      assert.equal(meta.recordCount, 2);
      if (producer) assert.deepEqual([meta.producerId, meta.baseSequence], [producer.producerId, producer.baseSequence]);
      assert.deepEqual(decodeBatches(Buffer.from(req.batch), 0).map((r) => r.value.toString()), ['v', 'w']);
    }
  });
});

describe('encodeSent (the records of send()s)', () => {
  // Records whose values are views of one buffer the caller transferred after its sends
  // (a message parsed into many records, say): each detached record cost a pass over
  // the records before it, and a batch of 20k such records, every other one lost,
  // held the event loop for seconds.
  it('takes out any number of records whose bytes were detached since their send() in a bounded number of passes, each send failed alone and the rest in order', () => {
    const n = 2000;
    const ab = new ArrayBuffer(n * 4);
    let reads = 0;
    const records: RecordInput[] = [];
    for (let i = 0; i < n; i++) {
      const r = { value: i % 2 ? new Uint8Array(ab, i * 4, 4) : `kept ${i}` } as RecordInput;
      // Counts what the encoder reads: one read of each record's timestamp per pass over it.
      Object.defineProperty(r, 'timestamp', { enumerable: true, get: () => (reads++, 1_000) });
      records.push(r);
    }
    structuredClone(ab, { transfer: [ab] });
    const failed: number[] = [];
    const senders = records.map((_, i) => ({ reject: (e: Error) => (assert.match(e.message, /the record's value was detached/), failed.push(i)) }));
    const batch = encodeSent(records, {}, 't', senders)!;
    assert.ok(reads <= 3 * n, `the records were read ${reads} times`);
    assert.deepEqual(failed, Array.from({ length: n / 2 }, (_, i) => 2 * i + 1));
    assert.equal(records.length, n / 2);
    assert.equal(senders.length, n / 2);
    assert.deepEqual(decodeBatches(batch).map((m) => m.value.toString()), Array.from({ length: n / 2 }, (_, i) => `kept ${2 * i}`));
  });
});
