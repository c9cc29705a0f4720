import { strict as assert } from 'node:assert';
import { spawn } from './fixtures/children';
import * as dns from 'node:dns';
import * as fs from 'node:fs';
import * as http2 from 'node:http2';
import * as net from 'node:net';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protobuf from 'protobufjs/minimal';
import { UringmqError, encodeBatch, sealBatch, type SendResult } from '../src';
import { connect, withDefaultPort, type Client, type ConnectionEvent } from '../src/client';
import { pb } from '../src/grpc/proto';
import { brokerService } from '../src/grpc/service';
import { MAX_ACK_RANGES, decodeSubscribeRequest } from '../src/grpc/subscribe_request';
import { toServiceError } from '../src/grpc/status';
import { MAX_PLAIN_RECORDS, decodePublishRequest } from '../src/grpc/publish_request';
import { metricsRegistry } from '../src/metrics';
import { checkHeldSendBatchOfTransferredBytes, checkSendOfTransferredBytes, checkSendTakesRecordAsSent, openBroker, sleep, startServer, take, tcpProxy, unhandledRejectionsDuring, waitFor, within, type Running } from './helpers';
import { BrokerServer } from '../src/grpc/server';
import { partitionForKey } from '../src/broker/partitioner';

/** A bare grpc-js client using only the .proto messages: what another language would do. */
function rawClient(address: string): grpc.Client {
  return new grpc.Client(address, grpc.credentials.createInsecure(), { 'grpc.max_send_message_length': 64 << 20 });
}

type RawDelivery = { partition?: number; from_offset?: unknown; to_offset?: unknown };

/** A raw Subscribe stream: the offsets delivered on it in order, its error once it failed; `onDelivery` sees each delivery after its offsets are counted. */
function rawSubscriber(raw: grpc.Client, onDelivery?: (dl: RawDelivery) => void) {
  const d = brokerService.subscribe!;
  const s = raw.makeBidiStreamRequest(d.path, d.requestSerialize, d.responseDeserialize);
  const st = { s, got: [] as number[], err: null as grpc.ServiceError | null };
  s.on('error', (e: grpc.ServiceError) => (st.err = e));
  s.on('data', (res: { delivery?: RawDelivery }) => {
    const dl = res.delivery;
    if (!dl) return;
    for (let o = Number(dl.from_offset); o < Number(dl.to_offset); o++) st.got.push(o);
    onDelivery?.(dl);
  });
  return st;
}

function unary<T>(c: grpc.Client, name: keyof typeof brokerService, req: unknown, raw = false): Promise<T> {
  const d = brokerService[name]!;
  const ser = raw ? (b: Buffer) => b : d.requestSerialize;
  return new Promise((resolve, reject) =>
    c.makeUnaryRequest(d.path, ser as (x: unknown) => Buffer, d.responseDeserialize, req, (err, res) => (err ? reject(err) : resolve(res as T))),
  );
}

function trailerCode(e: unknown): string | undefined {
  return (e as grpc.ServiceError).metadata?.get('uringmq-code')?.[0]?.toString();
}

async function expectStatus(p: Promise<unknown>, code: grpc.status, uringmqCode?: string): Promise<grpc.ServiceError> {
  try {
    await p;
  } catch (e) {
    const se = e as grpc.ServiceError;
    assert.equal(se.code, code, `status ${se.code} (${se.details})`);
    if (uringmqCode) assert.equal(trailerCode(e), uringmqCode);
    return se;
  }
  throw new Error('expected an error status');
}

describe('gRPC server: protocol, plain clients and bad input', function () {
  this.timeout(60_000);
  let r: Running;
  let raw: grpc.Client;
  beforeEach(async () => {
    r = await startServer({ maxConcurrentStreams: 20, maxMessageBytes: 1 << 20 });
    raw = rawClient(r.address);
    await r.client.createTopic('t', { partitions: 2 });
  });
  afterEach(async () => {
    raw.close();
    await r.stop();
  });

  it("the client producer's send() takes the record as it was when sent, stamped with the time of its send(), as the embedded one does", async () => {
    await checkSendTakesRecordAsSent(r.client.producer({ lingerMs: 100 }), r.broker, 't');
  });

  it("the client producer: a send() whose value, key or header is transferred (its ArrayBuffer detached) while it lingers fails alone (INVALID_ARGUMENT), as the embedded one's", async () => {
    await checkSendOfTransferredBytes(r.client.producer({ lingerMs: 100 }), r.broker, 't');
  });

  it("the client producer: a sendBatch waiting its turn (its topic's partition count not known yet) whose value or header is transferred meanwhile is refused whole (INVALID_ARGUMENT), nothing written, as the embedded one's", async () => {
    await r.client.createTopic('held-batch');
    // A new producer's first batches to a topic wait in line for its partition count,
    // holding the caller's records; before the fix they were encoded again when let go,
    // the detached views empty: written so, and resolved.
    await checkHeldSendBatchOfTransferredBytes(r.client.producer(), r.broker, 'held-batch');
  });

  it('DescribeTopic lists a group whose consumer left (from its offsets file) unless skip_groups asks for partitions only', async () => {
    const p = r.client.producer({ lingerMs: 0 });
    await p.sendBatch('t', [{ value: 'a' }, { value: 'b' }], { partition: 0 });
    await p.close();
    const c = r.client.consumer({ topic: 't', group: 'gone', from: 'earliest' });
    await take(c, 2);
    await c.close();
    r.broker.groups.idleGroupMs = 50; // out of memory soon after its member left
    const until = Date.now() + 10_000;
    while (r.broker.groups.describe('t').length > 0 && Date.now() < until) await sleep(20);
    assert.equal(r.broker.groups.describe('t').length, 0, 'the group stayed in memory');
    let d = await r.client.describeTopic('t');
    while (d.groups[0]?.committed[0] !== 2 && Date.now() < until) {
      await sleep(20);
      d = await r.client.describeTopic('t');
    }
    assert.deepEqual(d.groups, [{ group: 'gone', generation: 0, members: [], committed: [2, 0], lag: [0, 0] }]);
    assert.deepEqual((await r.client.describeTopic('t', { groups: false })).groups, []);
    assert.equal((await r.client.describeTopic('t', { groups: false })).partitions[0]!.endOffset, 2);
  });

  it('a plain-records client publishes and consumes with the .proto alone', async () => {
    const res = await unary<InstanceType<typeof pb.PublishResponse>>(raw, 'publish', {
      sequence: 7,
      topic: 't',
      partition: 1,
      records: [{ value: Buffer.from('one'), key: Buffer.from('k'), headers: { h: Buffer.from('v') } }, { value: Buffer.from('two') }],
    });
    assert.equal(Number(res.sequence), 7);
    assert.deepEqual([res.partition, Number(res.base_offset), res.count], [1, 0, 2]);
    const f = await unary<InstanceType<typeof pb.FetchResponse>>(raw, 'fetch', { topic: 't', partition: 1, offset: 0, plain_records: true });
    assert.deepEqual(f.records.map((x) => [Number(x.offset), Buffer.from(x.value!).toString()]), [[0, 'one'], [1, 'two']]);
    assert.equal(Buffer.from(f.records[0]!.key!).toString(), 'k');
    assert.equal(Buffer.from(f.records[0]!.headers!.h!).toString(), 'v');
    // Subscribe with plain records, ack by range
    const d = brokerService.subscribe!;
    const s = raw.makeBidiStreamRequest(d.path, d.requestSerialize, d.responseDeserialize);
    s.write({ subscribe: { topic: 't', group: 'plain', from: pb.StartFrom.EARLIEST, plain_records: true } });
    const got: string[] = [];
    await new Promise<void>((resolve, reject) => {
      s.on('data', (m: InstanceType<typeof pb.SubscribeResponse>) => {
        for (const rec of m.delivery?.records ?? []) got.push(Buffer.from(rec.value!).toString());
        if (m.delivery) s.write({ acks: { ranges: [{ partition: m.delivery.partition, from_offset: m.delivery.from_offset, to_offset: m.delivery.to_offset }] } });
        if (got.length === 2) resolve();
      });
      s.on('error', reject);
    });
    assert.deepEqual(got.sort(), ['one', 'two']);
    s.end();
    const until = Date.now() + 10_000;
    const committed = async () => (await r.client.describeTopic('t')).groups.find((g) => g.group === 'plain')?.committed[1];
    while ((await committed()) !== 2 && Date.now() < until) await sleep(20);
    assert.equal(await committed(), 2);
  });

  it('a plain record with a header named __proto__ keeps it: written as it was acked', async () => {
    const headers: Record<string, Buffer> = { x: Buffer.from('y') };
    Object.defineProperty(headers, '__proto__', { value: Buffer.from('p'), enumerable: true, writable: true, configurable: true });
    const res = await unary<InstanceType<typeof pb.PublishResponse>>(raw, 'publish', { topic: 't', partition: 0, records: [{ value: Buffer.from('v'), headers }] });
    const [m] = await r.broker.read('t', 0, Number(res.base_offset));
    assert.deepEqual(Object.keys(m!.headers).sort(), ['__proto__', 'x']);
    assert.equal(m!.headers['__proto__']!.toString(), 'p');
  });

  it('an idempotent retry is not written twice', async () => {
    const batch = sealBatch(encodeBatch([{ value: 'a' }, { value: 'b' }], { producerId: 12345, baseSequence: 0 }));
    const first = await unary<InstanceType<typeof pb.PublishResponse>>(raw, 'publish', { topic: 't', partition: 0, batch });
    const retry = await unary<InstanceType<typeof pb.PublishResponse>>(raw, 'publish', { topic: 't', partition: 0, batch });
    assert.equal(first.duplicate, false);
    assert.equal(retry.duplicate, true);
    assert.equal(Number(retry.base_offset), Number(first.base_offset));
    const next = sealBatch(encodeBatch([{ value: 'c' }], { producerId: 12345, baseSequence: 2 }));
    assert.equal(Number((await unary<InstanceType<typeof pb.PublishResponse>>(raw, 'publish', { topic: 't', partition: 0, batch: next })).base_offset), 2);
    const gap = sealBatch(encodeBatch([{ value: 'd' }], { producerId: 12345, baseSequence: 9 }));
    await expectStatus(unary(raw, 'publish', { topic: 't', partition: 0, batch: gap }), grpc.status.FAILED_PRECONDITION, 'OUT_OF_ORDER_SEQUENCE');
    // The request's producer fields are for plain records: with a batch they must match
    // its header (then the retry is recognised as above) or be 0, never be ignored.
    const unstamped = sealBatch(encodeBatch([{ value: 'e' }]));
    const se = await expectStatus(unary(raw, 'publish', { topic: 't', partition: 0, batch: unstamped, producer_id: 777, base_sequence: 0 }), grpc.status.INVALID_ARGUMENT, 'INVALID_ARGUMENT');
    assert.match(se.details, /must be those of the batch's header \(-1, -1\) or 0/);
    const same = await unary<InstanceType<typeof pb.PublishResponse>>(raw, 'publish', { topic: 't', partition: 0, batch: next, producer_id: 12345, base_sequence: 2 });
    assert.deepEqual([same.duplicate, Number(same.base_offset)], [true, 2]);
    // proto3 reads an unset field as 0: the header's id alone is accepted too.
    const idOnly = await unary<InstanceType<typeof pb.PublishResponse>>(raw, 'publish', { topic: 't', partition: 0, batch: next, producer_id: 12345 });
    assert.deepEqual([idOnly.duplicate, Number(idOnly.base_offset)], [true, 2]);
    // A damaged batch is CORRUPT_BATCH with the fields set as without them.
    await expectStatus(unary(raw, 'publish', { topic: 't', partition: 0, batch: Buffer.alloc(80, 7), producer_id: 5 }), grpc.status.INVALID_ARGUMENT, 'CORRUPT_BATCH');
    assert.equal((await r.client.describeTopic('t')).partitions[0]!.endOffset, 3);
  });

  it('the client library retries through a dropped stream without duplicates', async () => {
    // Small batches sent in waves: requests are on the wire when the stream is cut.
    const p = r.client.producer({ idempotent: true, maxBatchBytes: 2048 });
    const streams = (r.server as unknown as { streams: Set<{ shutdown(): void }> }).streams;
    let settled = 0;
    let cut: Array<{ shutdown(): void }> = [];
    let settledAtCut = -1;
    const sends: Array<Promise<SendResult>> = [];
    for (let i = 0; i < 2000; i++) {
      sends.push(p.send('t', { value: `m${i}`, partition: 0 }).finally(() => settled++));
      if (i % 50 === 49) await sleep(1);
      if (cut.length === 0 && settled > 0 && streams.size > 0) {
        // Cut every call on the server side once, mid-flight: the server stops reading
        // and ends the stream after answering what it read; the producer must resend
        // what went unanswered, and send the rest, on a new stream.
        cut = [...streams];
        cut.forEach((h) => h.shutdown());
        settledAtCut = settled;
      }
    }
    assert.ok(cut.length > 0, 'the stream was cut');
    assert.ok(settledAtCut < 2000, 'sends were still to come when the stream was cut');
    const res = await Promise.all(sends);
    assert.ok([...streams].some((h) => !cut.includes(h)), 'the producer went on on a new stream');
    assert.equal(new Set(res.map((x) => x.offset)).size, 2000);
    const msgs = await r.client.fetch('t', 0, 0, { maxBytes: 1 << 20 });
    assert.equal(msgs.length, 2000);
    assert.equal(new Set(msgs.map((m) => m.value.toString())).size, 2000);
  });

  it('send() keeps call order across sends that must wait (partition count unknown, buffer full) and sends that need not; flush() settles them all', async () => {
    const c = await connect(r.address); // a fresh client: no partition count cached yet
    try {
      // 4 KiB of buffer holds about 150 of these records: the second 150 start on the fast
      // path and soon wait for room.
      const p = c.producer({ lingerMs: 2, maxBufferedBytes: 4096, maxBatchBytes: 2048 });
      const order: number[] = [];
      const sends: Array<Promise<number>> = [];
      const send = (i: number) => sends.push(p.send('t', { value: `m${i}`, partition: 1 }).then((x) => (order.push(i), x.offset)));
      for (let i = 0; i < 150; i++) send(i); // the first waits for the lookup, the rest queue behind it
      await c.describeTopic('t'); // the count is known now, while earlier sends may still wait
      for (let i = 150; i < 300; i++) send(i);
      await assert.rejects(p.send('t', { value: 'x', partition: 7 }), /partition 7 does not exist/);
      await p.flush();
      assert.equal(order.length, 300, 'flush() returned before every send settled');
      const offsets = await Promise.all(sends);
      assert.deepEqual(offsets, offsets.map((_, i) => offsets[0]! + i), 'offsets follow call order');
      const msgs = await c.fetch('t', 1, offsets[0]!, { maxBytes: 1 << 20 });
      assert.deepEqual(msgs.map((m) => m.value.toString()), offsets.map((_, i) => `m${i}`));
      assert.equal(p.buffered, 0, 'the rejected send gave its buffer bytes back');
    } finally {
      await c.close();
    }
  });

  it('flush() sends at once a send that was waiting for its partition count or for buffer room when it was called, not after lingerMs', async () => {
    // Such a send reached its accumulator after flush() had cut them, and lingered there:
    // flush() waited for it, lingerMs (60 s here) instead of a round trip. Those let go
    // in one turn still go as one batch.
    const c = await connect(r.address); // a fresh client: no partition count cached yet
    try {
      const p = c.producer({ lingerMs: 60_000, maxBufferedBytes: 4096 });
      let batches = 0;
      const x = p as unknown as { submit: (...a: unknown[]) => Promise<unknown> };
      const submit = x.submit.bind(p);
      x.submit = (...a: unknown[]) => (batches++, submit(...a));
      const counted = Array.from({ length: 20 }, (_, i) => p.send('t', { value: `c${i}`, partition: 0 })); // they wait for the partition count
      await within(10_000, 'flush() with sends waiting for the partition count', p.flush());
      assert.deepEqual(new Set((await Promise.all(counted)).map((s) => s.partition)), new Set([0]));
      assert.equal(batches, 1, 'the sends let go together went as a batch each');
      const lingering = p.send('t', { value: 'x'.repeat(3000), partition: 0 }); // lingers, holding most of the buffer
      const roomless = p.send('t', { value: 'y'.repeat(3000), partition: 1 }); // waits for room
      await within(10_000, 'flush() with a send waiting for buffer room', p.flush());
      assert.deepEqual([(await lingering).partition, (await roomless).partition], [0, 1]);
      await p.close();
    } finally {
      await c.close();
    }
  });

  it("the client's cached partition count is served until it is 5 s old, then refreshed in the background", async () => {
    const c = await connect(r.address);
    try {
      await r.client.createTopic('pc', { partitions: 3 });
      assert.equal(c.knownPartitionCount('pc'), undefined);
      await c.describeTopic('pc');
      assert.equal(c.knownPartitionCount('pc'), 3);
      await r.client.deleteTopic('pc');
      await r.client.createTopic('pc', { partitions: 5 });
      assert.equal(c.knownPartitionCount('pc'), 3, 'fresh: no lookup per send');
      // Age the entry instead of waiting 5 s; the client's 1 s timer marks it stale.
      const cache = (c as unknown as { partitionsCache: Map<string, { at: number }> }).partitionsCache;
      cache.get('pc')!.at = Date.now() - 6000;
      await sleep(1100);
      assert.equal(c.knownPartitionCount('pc'), 3, 'stale: still served while the refresh runs');
      const until = Date.now() + 3000;
      while (c.knownPartitionCount('pc') !== 5 && Date.now() < until) await sleep(20);
      assert.equal(c.knownPartitionCount('pc'), 5);
      // Not looked up for 5 minutes (no send used it): dropped, not kept for good.
      cache.get('pc')!.at = Date.now() - 301_000;
      await waitFor(() => c.knownPartitionCount('pc') === undefined, 5000, 'idle: dropped');
    } finally {
      await c.close();
    }
  });

  it('a producer whose cached partition count is past what the topic has now (made again with fewer by another client) looks it up again after a refusal, instead of refusing sends for 5 s', async () => {
    const c = await connect(r.address);
    try {
      await r.client.createTopic('shrunk', { partitions: 2 });
      const p = c.producer({ idempotent: true });
      const key = ['a', 'b', 'c', 'd', 'e', 'f'].find((k) => partitionForKey(k, 2) === 1)!;
      assert.equal((await p.send('shrunk', { key, value: 'old' })).partition, 1);
      await r.client.deleteTopic('shrunk');
      await r.client.createTopic('shrunk', { partitions: 1 });
      // Routed by the cached count (2): partition 1 is gone. Refused, typed.
      await assert.rejects(p.send('shrunk', { key, value: 'refused' }), (e: UringmqError) => e.code === 'INVALID_ARGUMENT' && /partition 1 does not exist/.test(e.message));
      // The refusal says the count is not the topic's: the next send asks for it.
      assert.deepEqual(await p.send('shrunk', { key, value: 'new' }), { partition: 0, offset: 0 });
      await r.client.deleteTopic('shrunk');
    } finally {
      await c.close();
    }
  });

  it('a long-lived client and producer of short-lived topics keep nothing per topic once they delete it', async () => {
    const p = r.client.producer({ idempotent: true, lingerMs: 1 });
    const kept = () => {
      const x = p as unknown as { sequences: Map<string, number>; accs: Map<string, unknown>; topics: Map<string, unknown>; restarted: Map<string, unknown> };
      const c = r.client as unknown as { partitionsCache: Map<string, unknown> };
      return { sequences: x.sequences.size, accs: x.accs.size, topics: x.topics.size, restarted: x.restarted.size, cache: c.partitionsCache.size };
    };
    await p.send('t', { value: 'live' }); // a topic that stays: its entries stay
    const live = kept();
    for (let i = 0; i < 20; i++) {
      await r.client.createTopic(`job-${i}`, { partitions: 2 });
      await Promise.all([0, 1].map((partition) => p.send(`job-${i}`, { value: `v${i}`, partition })));
      await r.client.deleteTopic(`job-${i}`);
    }
    assert.deepEqual(kept(), live, 'topics deleted through this client');
    await p.close();
  });

  it('an idempotent producer that sent to a topic made again before its deleteTopic was answered goes on with its sequence: its next batch is written, not taken for a duplicate', async () => {
    await r.client.createTopic('again');
    const p = r.client.producer({ idempotent: true, lingerMs: 0 });
    await p.send('again', { value: 'a', partition: 0 });
    // The deleteTopic answer on its way back (held here): meanwhile the topic is made
    // again and this producer sends to it, numbered on from its old sequence.
    const c = r.client as unknown as { unary: (name: string, req: unknown, timeoutMs?: number) => Promise<unknown> };
    const unary = c.unary;
    c.unary = async (name, req, timeoutMs) => {
      const res = await unary.call(r.client, name, req, timeoutMs);
      if (name === 'deleteTopic') {
        await r.broker.createTopic('again');
        await p.send('again', { value: 'b', partition: 0 });
      }
      return res;
    };
    try {
      await r.client.deleteTopic('again');
    } finally {
      c.unary = unary;
    }
    assert.deepEqual(await p.send('again', { value: 'c', partition: 0 }), { partition: 0, offset: 1 });
    assert.deepEqual((await r.broker.read('again', 0, 0)).map((m) => m.value.toString()), ['b', 'c']);
    await p.close();
    await r.client.deleteTopic('again');
  });

  it('the client library refuses badly shaped records before sending: INVALID_ARGUMENT naming the record, nothing written', async () => {
    const p = r.client.producer();
    const bad: unknown[] = [null, { value: 3 }, { value: 'x', key: 7 }, { value: 'x', timestamp: -1 }, { value: 'x', timestamp: 1.5 }, { value: 'x', headers: { h: 1 } }, { value: 'x', headers: [] }, { value: 'x', headers: null }];
    for (const b of bad) {
      await assert.rejects(p.sendBatch('t', [{ value: 'ok' }, b as never], { partition: 0 }), (e: Error & { code?: string }) => {
        assert.equal(e.code, 'INVALID_ARGUMENT', `${JSON.stringify(b)}: ${e.message}`);
        assert.match(e.message, /^sendBatch to t, record 1: /);
        return true;
      });
    }
    // Uint8Arrays that are not Buffers are bytes too.
    const u8 = new Uint8Array([104, 105]) as Buffer;
    await p.sendBatch('t', [{ value: u8, key: u8, headers: { h: u8 } }], { partition: 0 });
    await p.close();
    const d = await r.client.describeTopic('t');
    assert.equal(d.partitions[0]!.endOffset, 1, 'only the good batch was written');
    const [m] = await r.broker.read('t', 0, 0);
    assert.equal(m!.value.toString(), 'hi');
    assert.equal(m!.key!.toString(), 'hi');
    assert.equal(m!.headers.h!.toString(), 'hi');
  });

  it("a remote consumer's iterator returned before its first next() leaves the group (Readable.from(consumer) destroyed unread), as the embedded one does", async () => {
    const members = async (group: string) => (await r.client.describeTopic('t')).groups.find((x) => x.group === group)?.members.length ?? 0;
    const until = async (group: string, n: number) => {
      for (let i = 0; i < 100 && (await members(group)) !== n; i++) await sleep(50);
      return members(group);
    };
    const a = r.client.consumer({ topic: 't', group: 'ra', from: 'earliest' })[Symbol.asyncIterator]();
    const b = r.client.consumer({ topic: 't', group: 'rb', from: 'earliest' }).batches()[Symbol.asyncIterator]();
    assert.equal(await until('ra', 1), 1, 'joined on iteration'); // (iterating subscribes)
    assert.equal(await until('rb', 1), 1);
    await a.return!(undefined);
    await b.return!(undefined);
    assert.equal(await until('ra', 0), 0, 'the member of the returned iterator stayed in the group');
    assert.equal(await until('rb', 0), 0);
  });

  it("a remote consumer's iterator returned while its next() waits for messages, or thrown into before its first next(), leaves the group, as the embedded one does", async () => {
    const members = async (group: string) => (await r.client.describeTopic('t')).groups.find((x) => x.group === group)?.members.length ?? 0;
    const until = async (group: string, n: number) => {
      for (let i = 0; i < 100 && (await members(group)) !== n; i++) await sleep(50);
      return members(group);
    };
    const a = r.client.consumer({ topic: 't', group: 'rwait' })[Symbol.asyncIterator]();
    const waiting = a.next();
    assert.equal(await until('rwait', 1), 1, 'joined on iteration');
    const returned = a.return!(undefined);
    assert.equal((await within(10_000, 'the waiting next() after return()', waiting)).done, true);
    assert.equal((await returned).done, true);
    assert.equal(await until('rwait', 0), 0, 'the member of the returned iterator stayed in the group');
    const b = r.client.consumer({ topic: 't', group: 'rthrow' }).batches()[Symbol.asyncIterator]();
    assert.equal(await until('rthrow', 1), 1, 'joined on iteration');
    const boom = new Error('boom');
    await assert.rejects(b.throw!(boom), (e) => e === boom);
    assert.equal(await until('rthrow', 0), 0, 'the member of the iterator thrown into stayed in the group');
  });

  it('a consumer closed before it is iterated ends at once and joins nothing: no member left holding the partitions', async () => {
    await r.client.producer().send('t', { value: 'x', partition: 0 });
    const closed = r.client.consumer({ topic: 't', group: 'g', from: 'earliest' });
    await closed.close();
    const got: number[] = [];
    for await (const m of closed) got.push(m.offset);
    assert.deepEqual(got, []);
    await sleep(200);
    const g = (await r.client.describeTopic('t')).groups.find((x) => x.group === 'g');
    assert.equal(g?.members.length ?? 0, 0);
    // Another member of the group gets the message now, not after a ghost's ack deadline.
    const other = r.client.consumer({ topic: 't', group: 'g', from: 'earliest' });
    const [m] = await take(other, 1, (x) => x.ack(), 5000);
    assert.equal(m?.value.toString(), 'x');
    await other.close();
  });

  it("a group consumer given `partitions` (the fetch transport's) or `partition` (the offset reader's) is refused INVALID_ARGUMENT naming it, embedded and remote, instead of reading every partition its group assigns it; so is a remote one's sessionTimeoutMs, which Subscribe cannot carry", async () => {
    const refused = (make: () => unknown, option: RegExp, why: RegExp, what: string) =>
      assert.throws(make, (e: UringmqError) => e instanceof UringmqError && e.code === 'INVALID_ARGUMENT' && option.test(e.message) && why.test(e.message), what);
    for (const transport of [undefined, 'grpc'] as const) {
      refused(() => r.client.consumer({ topic: 't', group: 'g', transport, partitions: [1] } as never), /partitions \(\[1\]\)/, /transport: 'fetch'/, `${transport} partitions`);
      refused(() => r.client.consumer({ topic: 't', group: 'g', transport, partition: 1 } as never), /partition \(1\)/, /offset reader/, `${transport} partition`);
    }
    refused(() => r.client.consumer({ topic: 't', group: 'g', transport: 'fetch', partition: 1 } as never), /partition \(1\)/, /partitions: \[1\]/, 'fetch partition');
    // The embedded consumer's sessionTimeoutMs: a Subscribe member has the broker's (10 s), which the wire cannot change.
    refused(() => r.client.consumer({ topic: 't', group: 'g', sessionTimeoutMs: 30_000 } as never), /sessionTimeoutMs \(30000\)/, /10 s/, 'sessionTimeoutMs');
    refused(() => r.broker.consumer({ topic: 't', group: 'g', partitions: [1] } as never), /partitions \(\[1\]\)/, /fetch/, 'embedded partitions');
    // Nothing joined: the group was never made.
    assert.equal((await r.client.describeTopic('t')).groups.find((g) => g.group === 'g'), undefined);
    // The fetch transport's own option is still taken.
    await r.client.consumer({ topic: 't', group: 'g', transport: 'fetch', partitions: [1] }).close();
  });

  it('client.consumer() refuses a topic or group name the broker would refuse when it is made, on both transports, as broker.consumer() does: nothing is sent, and a number is named, not sent as ""', async () => {
    const bad: Array<[object, string, RegExp]> = [
      [{ group: 'g' }, 'INVALID_TOPIC_NAME', /got undefined/],
      [{ topic: 5, group: 'g' }, 'INVALID_TOPIC_NAME', /got number/],
      [{ topic: 'a b', group: 'g' }, 'INVALID_TOPIC_NAME', /"a b"/],
      [{ topic: 't' }, 'INVALID_GROUP_NAME', /undefined/],
      [{ topic: 't', group: 5 }, 'INVALID_GROUP_NAME', /group name 5/],
      [{ topic: 't', group: '..' }, 'INVALID_GROUP_NAME', /"\.\."/],
      [{ topic: 't', group: 'g', deadLetterTopic: 't' }, 'INVALID_ARGUMENT', /deadLetterTopic must differ from the topic itself/],
    ];
    for (const transport of ['grpc', 'fetch'] as const)
      for (const [opts, code, msg] of bad) {
        if (transport === 'fetch' && 'deadLetterTopic' in opts) continue; // not a fetch option
        const what = `${transport} ${JSON.stringify(opts)}`;
        assert.throws(() => r.client.consumer({ transport, ...opts } as never), (e: UringmqError) => e instanceof UringmqError && e.code === code && msg.test(e.message), what);
        // The embedded consumer refuses the same, with the same code.
        if (transport === 'grpc' && 'group' in opts) assert.throws(() => r.broker.consumer(opts as never), (e: UringmqError) => e.code === code, `embedded ${what}`);
      }
    assert.deepEqual((await r.client.describeTopic('t')).groups, []);
  });

  it('a Subscribe whose `from` is a StartFrom value the server does not know is INVALID_ARGUMENT, not LATEST; the group is not made', async () => {
    const d = brokerService.subscribe!;
    const st = raw.makeBidiStreamRequest(d.path, d.requestSerialize, d.responseDeserialize);
    st.on('data', () => undefined);
    const err = new Promise<grpc.ServiceError>((resolve) => st.on('error', resolve));
    st.write({ subscribe: { topic: 't', group: 'unknown-from', from: 7 } });
    const e = await err;
    assert.equal(e.code, grpc.status.INVALID_ARGUMENT, e.details);
    assert.match(e.details, /subscribe\.from 7/);
    assert.equal((await r.client.describeTopic('t')).groups.find((g) => g.group === 'unknown-from'), undefined);
  });

  it('malformed protobuf → INVALID_ARGUMENT, server stays up', async () => {
    await expectStatus(unary(raw, 'publish', Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]), true), grpc.status.INVALID_ARGUMENT, 'INVALID_ARGUMENT');
    await expectStatus(unary(raw, 'createTopic', Buffer.from([0x0a, 0x50, 0x41]), true), grpc.status.INVALID_ARGUMENT);
    // On both streams: the stream ends with INVALID_ARGUMENT, nothing is written, and
    // a consumer already subscribed keeps getting messages.
    const member = r.client.consumer({ topic: 't', group: 'g', from: 'earliest' });
    const it = member[Symbol.asyncIterator]();
    await r.client.producer().send('t', { value: 'before', partition: 0 });
    assert.equal(((await it.next()).value as { value: Buffer }).value.toString(), 'before');
    for (const name of ['publishStream', 'subscribe'] as const) {
      const d = brokerService[name]!;
      const st = raw.makeBidiStreamRequest(d.path, (b: Buffer) => b, d.responseDeserialize);
      st.on('data', () => undefined);
      const err = new Promise<grpc.ServiceError>((resolve) => st.on('error', resolve));
      st.write(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]));
      const e = await err;
      assert.equal(e.code, grpc.status.INVALID_ARGUMENT, `${name}: ${e.details}`);
      assert.equal(trailerCode(e), 'INVALID_ARGUMENT');
    }
    assert.deepEqual((await r.client.describeTopic('t')).partitions.map((p) => p.endOffset), [1, 0]);
    await r.client.producer().send('t', { value: 'after', partition: 1 });
    assert.equal(((await it.next()).value as { value: Buffer }).value.toString(), 'after');
    await member.close();
    assert.deepEqual(await r.client.listTopics(), ['t']);
  });

  it('bad CRC or truncated batch → INVALID_ARGUMENT/CORRUPT_BATCH, nothing written; on a stream only that batch fails', async () => {
    const good = sealBatch(encodeBatch([{ value: 'ok' }]));
    const bad = Buffer.from(good);
    bad[bad.length - 1] ^= 1;
    await expectStatus(unary(raw, 'publish', { topic: 't', partition: 0, batch: bad }), grpc.status.INVALID_ARGUMENT, 'CORRUPT_BATCH');
    const trunc = Buffer.from(good.subarray(0, good.length - 2));
    await expectStatus(unary(raw, 'publish', { topic: 't', partition: 0, batch: trunc }), grpc.status.INVALID_ARGUMENT, 'CORRUPT_BATCH');
    await expectStatus(unary(raw, 'publish', { topic: 't', partition: 0 }), grpc.status.INVALID_ARGUMENT, 'INVALID_ARGUMENT');
    assert.equal((await r.client.describeTopic('t')).partitions[0]!.endOffset, 0);

    const d = brokerService.publishStream!;
    const s = raw.makeBidiStreamRequest(d.path, d.requestSerialize, d.responseDeserialize);
    const responses: Array<InstanceType<typeof pb.PublishResponse>> = [];
    const done = new Promise<void>((resolve) => s.on('data', (m: InstanceType<typeof pb.PublishResponse>) => (responses.push(m), responses.length === 3 && resolve())));
    s.write({ sequence: 1, topic: 't', partition: 0, batch: good });
    s.write({ sequence: 2, topic: 't', partition: 0, batch: bad });
    s.write({ sequence: 3, topic: 't', partition: 0, batch: good });
    await done;
    s.end();
    const bySeq = new Map(responses.map((m) => [Number(m.sequence), m]));
    assert.equal(bySeq.get(2)!.error!.code, 'CORRUPT_BATCH');
    assert.ok(!bySeq.get(1)!.error && !bySeq.get(3)!.error);
    assert.equal((await r.client.describeTopic('t')).partitions[0]!.endOffset, 2);
  });

  it('unknown topic → NOT_FOUND; invalid names → INVALID_ARGUMENT; bad offsets → OUT_OF_RANGE', async () => {
    await expectStatus(unary(raw, 'publish', { topic: 'nope', records: [{ value: Buffer.from('x') }] }), grpc.status.NOT_FOUND, 'TOPIC_NOT_FOUND');
    await expectStatus(unary(raw, 'describeTopic', { name: 'nope' }), grpc.status.NOT_FOUND);
    await expectStatus(unary(raw, 'createTopic', { name: '../evil' }), grpc.status.INVALID_ARGUMENT, 'INVALID_TOPIC_NAME');
    // A name no topic can have is named as such on every call, not reported missing.
    await expectStatus(unary(raw, 'publish', { topic: '../evil', records: [{ value: Buffer.from('x') }] }), grpc.status.INVALID_ARGUMENT, 'INVALID_TOPIC_NAME');
    await expectStatus(unary(raw, 'fetch', { topic: 'bad name!', partition: 0, offset: 0 }), grpc.status.INVALID_ARGUMENT, 'INVALID_TOPIC_NAME');
    await expectStatus(unary(raw, 'describeTopic', { name: '' }), grpc.status.INVALID_ARGUMENT, 'INVALID_TOPIC_NAME');
    await expectStatus(unary(raw, 'createTopic', { name: 't' }), grpc.status.ALREADY_EXISTS, 'TOPIC_EXISTS');
    await expectStatus(unary(raw, 'fetch', { topic: 't', partition: 0, offset: 99 }), grpc.status.OUT_OF_RANGE, 'OFFSET_OUT_OF_RANGE');
    await expectStatus(unary(raw, 'fetch', { topic: 't', partition: 9, offset: 0 }), grpc.status.INVALID_ARGUMENT);
    await expectStatus(unary(raw, 'commitOffset', { group: 'bad/name', topic: 't', partition: 0, offset: 0 }), grpc.status.INVALID_ARGUMENT, 'INVALID_GROUP_NAME');
    await expectStatus(unary(raw, 'commitOffset', { group: 'g', topic: 't', partition: 0, offset: 5 }), grpc.status.OUT_OF_RANGE);
    // the typed client maps statuses back to the same codes
    await assert.rejects(r.client.describeTopic('nope'), { code: 'TOPIC_NOT_FOUND' });
    await assert.rejects(r.client.createTopic('t'), { code: 'TOPIC_EXISTS' });
  });

  it('a plain-records publish to a topic name no topic can have, of any length, is INVALID_TOPIC_NAME with a bounded message: the unary call gets its status and its channel goes on; a PublishStream answers it and goes on (both paths)', async () => {
    // Its refusals (a bad record, too many records) named the topic whole: 20,000 'é'
    // made a 120 KB grpc-message trailer, which the client's HTTP/2 refused
    // (COMPRESSION_ERROR): the call, and every later one on its channel, hung.
    const withDeadline = (name: keyof typeof brokerService, req: unknown) =>
      new Promise((resolve, reject) => {
        const d = brokerService[name]!;
        raw.makeUnaryRequest(d.path, d.requestSerialize, d.responseDeserialize, req, { deadline: Date.now() + 5000 }, (err, res) => (err ? reject(err) : resolve(res)));
      });
    const long = 'é'.repeat(20_000);
    for (const records of [[{ value: Buffer.from('x'), timestamp: -1 }], Array.from({ length: MAX_PLAIN_RECORDS + 1 }, () => ({ value: Buffer.from('x') }))]) {
      const e = await expectStatus(withDeadline('publish', { topic: long, records }), grpc.status.INVALID_ARGUMENT, 'INVALID_TOPIC_NAME');
      assert.ok(e.details.length < 1000, `${e.details.length} characters`);
    }
    assert.deepEqual((await withDeadline('listTopics', {}) as { names: string[] }).names, ['t'], 'the channel goes on');
    // Any status's details are bounded so, whatever a message holds.
    for (const ch of ['a', 'é', '😀']) {
      const details = toServiceError(new UringmqError('INVALID_ARGUMENT', ch.repeat(100_000))).details;
      assert.ok(Buffer.byteLength(details) <= 1024 && encodeURI(details).length <= 3072, `${ch}: ${Buffer.byteLength(details)} bytes`);
      assert.ok(details.startsWith(ch.repeat(100)) && details.endsWith('…'));
    }
    assert.equal(toServiceError(new UringmqError('INVALID_ARGUMENT', 'é'.repeat(300))).details, 'é'.repeat(300), 'a message that fits is kept whole');
    // On a stream the refusal is an answer: one naming a topic of nearly maxMessageBytes
    // (1 MiB here) was over it, and ended the stream with the batches after it unanswered.
    const other = await startServer({ maxMessageBytes: 1 << 20, directStreams: false });
    try {
      await other.client.createTopic('t');
      for (const address of [r.address, other.address]) {
        const c = rawClient(address);
        const d = brokerService.publishStream!;
        const s = c.makeBidiStreamRequest(d.path, d.requestSerialize, d.responseDeserialize);
        const answers: Array<InstanceType<typeof pb.PublishResponse>> = [];
        s.on('data', (m: InstanceType<typeof pb.PublishResponse>) => answers.push(m));
        const status = new Promise<grpc.StatusObject | grpc.ServiceError>((resolve) => s.on('status', resolve).on('error', resolve));
        s.write({ sequence: 1, topic: 'a'.repeat(1_048_520), records: [{ value: Buffer.from('x'), timestamp: -1 }] });
        s.write({ sequence: 2, topic: 't', records: [{ value: Buffer.from('y') }] });
        s.end();
        const st = await status;
        c.close();
        assert.equal(st.code, grpc.status.OK, `${address}: ${st.details}`);
        const bySeq = new Map(answers.map((m) => [Number(m.sequence), m]));
        assert.equal(bySeq.get(1)?.error?.code, 'INVALID_TOPIC_NAME', address);
        assert.ok(bySeq.get(2) && !bySeq.get(2)!.error, `${address}: the batch after it is written`);
      }
    } finally {
      await other.stop();
    }
  });

  it('createTopic through the client refuses what the embedded broker refuses, instead of sending another config (2^32 + 1 partitions as 1, NaN retention as none)', async () => {
    const bad: Array<[string, unknown]> = [
      ['partitions 0', { partitions: 0 }], ['partitions 1.5', { partitions: 1.5 }], ['partitions 2^32 + 1', { partitions: 2 ** 32 + 1 }],
      ['segmentBytes NaN', { segmentBytes: NaN }], ['retention.maxBytes NaN', { retention: { maxBytes: NaN } }],
      ['retention.maxBytes 1.5', { retention: { maxBytes: 1.5 } }], ['retention.maxBytes Infinity', { retention: { maxBytes: Infinity } }],
      ['retention.maxAgeMs -1', { retention: { maxAgeMs: -1 } }], ['retention.maxAgeMs "x"', { retention: { maxAgeMs: 'x' } }],
      ['retention null', { retention: null }], ['retention 5', { retention: 5 }], ['options null', null],
    ];
    const taken: string[] = [];
    for (const [what, opts] of bad) {
      try {
        await r.client.createTopic('x', opts as never);
        taken.push(`${what}: created`);
        await r.client.deleteTopic('x');
      } catch (e) {
        if ((e as { code?: string }).code !== 'INVALID_ARGUMENT') taken.push(`${what}: ${String(e)}`);
      }
    }
    assert.deepEqual(taken, []);
    assert.ok(!(await r.client.listTopics()).includes('x'));
  });

  it('a retention limit of 0 is the same over gRPC as embedded (keep no sealed segment), and distinct from no limit, whichever side made the topic', async () => {
    // 0 went out as "no limit" (proto3 drops a 0 it cannot tell from unset): the client
    // refused it, and a topic with a limit of 0 made embedded (or a dead-letter topic
    // copying its source's) was described over gRPC as having none.
    const both = async (name: string) => [(await r.client.describeTopic(name)).retention, (await r.broker.describeTopic(name)).retention];
    assert.deepEqual((await r.client.createTopic('zero', { retention: { maxBytes: 0, maxAgeMs: 0 } })).retention, { maxBytes: 0, maxAgeMs: 0 });
    assert.deepEqual(await both('zero'), [{ maxBytes: 0, maxAgeMs: 0 }, { maxBytes: 0, maxAgeMs: 0 }]);
    assert.deepEqual((await r.client.createTopic('zb', { retention: { maxBytes: 0, maxAgeMs: 60_000 } })).retention, { maxBytes: 0, maxAgeMs: 60_000 });
    assert.deepEqual(await both('zb'), [{ maxBytes: 0, maxAgeMs: 60_000 }, { maxBytes: 0, maxAgeMs: 60_000 }]);
    assert.deepEqual((await r.client.createTopic('za', { retention: { maxAgeMs: 0 } })).retention, { maxAgeMs: 0 });
    assert.deepEqual(await both('za'), [{ maxAgeMs: 0 }, { maxAgeMs: 0 }]);
    await r.broker.createTopic('ze', { retention: { maxBytes: 0 } });
    assert.deepEqual(await both('ze'), [{ maxBytes: 0 }, { maxBytes: 0 }]);
    // No limit: no field, both ways (also with an empty retention object).
    assert.deepEqual((await r.client.createTopic('none', { retention: {} })).retention, {});
    assert.deepEqual(await both('none'), [{}, {}]);
    assert.deepEqual(await both('t'), [{}, {}]);
  });

  it('on the wire, DescribeTopic carries a Retention field only for a limit (0 included), and CreateTopic takes a present 0 as a limit of 0 and an absent field as none', async () => {
    /** The fields of a protobuf message: field number -> values (varints as numbers, length-delimited as bytes). */
    const fieldsOf = (b: Uint8Array): Map<number, Array<number | Uint8Array>> => {
      const rd = protobuf.Reader.create(b);
      const out = new Map<number, Array<number | Uint8Array>>();
      while (rd.pos < rd.len) {
        const tag = rd.uint32();
        let v: number | Uint8Array = -1;
        if ((tag & 7) === 0) v = Number(rd.uint64());
        else if ((tag & 7) === 2) v = rd.bytes();
        else rd.skipType(tag & 7);
        out.set(tag >>> 3, [...(out.get(tag >>> 3) ?? []), v]);
      }
      return out;
    };
    const describeRaw = (name: string): Promise<Buffer> => {
      const d = brokerService.describeTopic!;
      return new Promise((resolve, reject) =>
        raw.makeUnaryRequest(d.path, d.requestSerialize, (b: Buffer) => b, { name, skip_groups: true }, (e, v) => (e ? reject(e) : resolve(v!))),
      );
    };
    /** The Retention submessage of a TopicInfo, as its fields; undefined when TopicInfo has none. */
    const retentionOf = async (name: string) => {
      const r3 = fieldsOf(await describeRaw(name)).get(3);
      return r3 && Object.fromEntries(fieldsOf(r3[0] as Uint8Array));
    };
    // CreateTopicRequest { name, retention: { ... } } written by hand: a present 0 is
    // what a client of the new .proto sends for a limit of 0; an old one sends nothing.
    const create = (name: string, retention: number[]) =>
      unary(raw, 'createTopic', Buffer.from([0x0a, name.length, ...Buffer.from(name), 0x1a, retention.length, ...retention]), true);
    await create('rz', [0x08, 0x00, 0x10, 0x00]); // max_bytes 0, max_age_ms 0
    await create('rb', [0x08, 0x00]); // max_bytes 0
    await create('rn', []); // neither
    await create('r7', [0x08, 0x07, 0x10, 0x09]);
    assert.deepEqual((await r.broker.describeTopic('rz')).retention, { maxBytes: 0, maxAgeMs: 0 });
    assert.deepEqual((await r.broker.describeTopic('rb')).retention, { maxBytes: 0 });
    assert.deepEqual((await r.broker.describeTopic('rn')).retention, {});
    assert.deepEqual((await r.broker.describeTopic('r7')).retention, { maxBytes: 7, maxAgeMs: 9 });
    assert.deepEqual(await retentionOf('rz'), { 1: [0], 2: [0] });
    assert.deepEqual(await retentionOf('rb'), { 1: [0] });
    const none = await retentionOf('rn');
    assert.ok(none === undefined || Object.keys(none).length === 0, `no limit, yet Retention fields ${JSON.stringify(none)}`);
    assert.deepEqual(await retentionOf('r7'), { 1: [7], 2: [9] });
  });

  it('the client refuses offsets, partitions and options the embedded broker refuses, instead of sending another value (NaN as offset 0, 1.5 as 1)', async () => {
    const p = r.client.producer();
    await p.sendBatch('t', [{ value: 'a' }, { value: 'b' }, { value: 'c' }], { partition: 0 });
    await r.client.commitOffset('g', 't', 0, 2);
    for (const off of [NaN, 1.5, '1' as never, Infinity])
      await assert.rejects(r.client.commitOffset('g', 't', 0, off), (e: UringmqError) => e.code === 'INVALID_ARGUMENT', `commitOffset ${String(off)}`);
    for (const part of [NaN, 0.5, 'x' as never])
      await assert.rejects(r.client.commitOffset('g', 't', part, 0), (e: UringmqError) => e.code === 'INVALID_ARGUMENT', `commitOffset partition ${String(part)}`);
    assert.equal((await r.client.committedOffsets('g', 't'))[0], 2); // not rewound
    for (const off of [NaN, 1.5, '1' as never])
      await assert.rejects(r.client.fetch('t', 0, off), (e: UringmqError) => e.code === 'INVALID_ARGUMENT', `fetch offset ${String(off)}`);
    for (const part of [NaN, 0.5, 'x' as never])
      await assert.rejects(r.client.fetch('t', part, 0), (e: UringmqError) => e.code === 'INVALID_ARGUMENT', `fetch partition ${String(part)}`);
    // Options that are not objects: INVALID_ARGUMENT, not a TypeError from inside the library.
    await assert.rejects(r.client.fetch('t', 0, 0, null as never), (e: UringmqError) => e.code === 'INVALID_ARGUMENT');
    await assert.rejects(r.client.describeTopic('t', null as never), (e: UringmqError) => e.code === 'INVALID_ARGUMENT');
    // An extra argument where the internal cancel signal goes: refused before the call goes out.
    await assert.rejects(r.client.describeTopic('t', {}, 'x' as never), (e: UringmqError) => e.code === 'INVALID_ARGUMENT');
    await assert.rejects(r.client.commitOffset('g', 't', 0, 0, 0, undefined, {} as never), (e: UringmqError) => e.code === 'INVALID_ARGUMENT');
    await assert.rejects(p.sendBatch('t', [{ value: 'x' }], null as never), (e: UringmqError) => e.code === 'INVALID_ARGUMENT');
    assert.equal((await r.client.describeTopic('t')).partitions[0]!.endOffset, 3);
  });

  it('client.producer() checks its options as the embedded producer does (maxInFlight 0 left every send pending for good)', async () => {
    for (const opts of [{ maxInFlight: 0 }, { maxInFlight: -1 }, { maxInFlight: 1.5 }, { lingerMs: -5 }, { lingerMs: NaN }, { maxBatchBytes: 0 }, { deliveryTimeoutMs: -1 }, { idempotent: 'yes' }, null])
      assert.throws(() => r.client.producer(opts as never), (e: { code?: string }) => e.code === 'INVALID_ARGUMENT', `${JSON.stringify(opts)} taken`);
    const p = r.client.producer({ maxInFlight: 1, lingerMs: 0 });
    assert.equal((await p.send('t', { value: 'x', partition: 0 })).partition, 0);
  });

  it('an idempotent producer takes at most 64 batches in flight, the window the broker remembers of it (past it a retry after a lost connection lost its offsets): INVALID_ARGUMENT at creation', async () => {
    for (const opts of [{ maxInFlight: 65 }, { maxInFlight: 256, idempotent: true }])
      assert.throws(() => r.client.producer(opts), (e: UringmqError) => e.code === 'INVALID_ARGUMENT' && /at most 64/.test(e.message), JSON.stringify(opts));
    const ok = [r.client.producer({ maxInFlight: 64 }), r.client.producer({ maxInFlight: 256, idempotent: false })];
    for (const p of ok) assert.equal((await p.send('t', { value: 'x', partition: 0 })).partition, 0);
    await Promise.all(ok.map((p) => p.close()));
  });

  it("a consumer's boolean option that is no boolean is INVALID_ARGUMENT, not taken for its truth (verifyCrc: 0 turned the CRC checks off)", () => {
    for (const [opts, name] of [
      [{ plainRecords: 'yes' }, 'plainRecords'],
      [{ plainRecords: 1 }, 'plainRecords'],
      [{ transport: 'fetch', verifyCrc: 0 }, 'verifyCrc'],
      [{ transport: 'fetch', verifyCrc: 'no' }, 'verifyCrc'],
      [{ transport: 'fetch', verifyCrc: null }, 'verifyCrc'],
    ] as const)
      assert.throws(
        () => r.client.consumer({ topic: 't', group: 'g', ...opts } as never),
        (e: UringmqError) => e instanceof UringmqError && e.code === 'INVALID_ARGUMENT' && new RegExp(`^${name} must be a boolean, got `).test(e.message),
        JSON.stringify(opts),
      );
  });

  it("a consumer's bad flow option names the value it got (a string shown quoted), embedded and remote", () => {
    for (const [flow, got] of [[{ minWindow: -1 }, 'got -1'], [{ windowStep: '4' }, 'got "4"'], [{ latencyThresholdMs: NaN }, 'got NaN'], [5, 'got 5']] as const)
      for (const make of [(o: object) => r.client.consumer(o as never), (o: object) => r.broker.consumer(o as never)])
        assert.throws(
          () => make({ topic: 't', group: 'g', flow }),
          (e: UringmqError) => e instanceof UringmqError && e.code === 'INVALID_ARGUMENT' && e.message.endsWith(got),
          JSON.stringify(flow),
        );
  });

  it("a consumer's onConnectionState that is not a function is INVALID_ARGUMENT, on both transports", () => {
    for (const transport of ['grpc', 'fetch'] as const)
      assert.throws(
        () => r.client.consumer({ topic: 't', group: 'g', transport, onConnectionState: 'log' as never } as never),
        (e: { code?: string; message?: string }) => e.code === 'INVALID_ARGUMENT' && /onConnectionState must be a function/.test(e.message ?? ''),
        transport,
      );
  });

  it('oversize message → RESOURCE_EXHAUSTED, other calls unaffected', async () => {
    // Each record is under the broker's maxRecordBytes (1 MiB): only the server's
    // maxMessageBytes (1 MiB here) can refuse the request, not the broker's record limit.
    const big = sealBatch(encodeBatch([{ value: Buffer.alloc(600_000) }, { value: Buffer.alloc(600_000) }]));
    const e = await expectStatus(unary(raw, 'publish', { topic: 't', partition: 0, batch: big }), grpc.status.RESOURCE_EXHAUSTED);
    assert.notEqual(trailerCode(e), 'RECORD_TOO_LARGE');
    assert.equal((await r.client.describeTopic('t')).partitions[0]!.endOffset, 0, 'nothing written');
    const ok = await r.client.producer().send('t', { value: 'small', partition: 0 });
    assert.equal(ok.offset, 0);
  });

  it('a batch built by the client holding a record over the broker\'s maxRecordBytes → RESOURCE_EXHAUSTED (RECORD_TOO_LARGE), nothing written', async () => {
    const small = await startServer({ brokerOptions: { maxRecordBytes: 1000 } });
    const c = rawClient(small.address);
    try {
      await small.client.createTopic('r');
      const big = sealBatch(encodeBatch([{ value: 'a' }, { value: Buffer.alloc(5000) }]));
      await expectStatus(unary(c, 'publish', { topic: 'r', partition: 0, batch: big }), grpc.status.RESOURCE_EXHAUSTED, 'RECORD_TOO_LARGE');
      const e = await small.client.producer().sendBatch('r', [{ value: 'a' }, { value: Buffer.alloc(5000) }]).then(() => null, (x: UringmqError) => x);
      assert.equal(e?.code, 'RECORD_TOO_LARGE');
      assert.equal((await small.client.describeTopic('r')).partitions[0]!.endOffset, 0);
      assert.equal((await small.client.producer().send('r', { value: 'fits' })).offset, 0);
    } finally {
      c.close();
      await small.stop();
    }
  });

  it("client library: a batch over the server's maxMessageBytes, the only one in flight (maxInFlight 1), frees its slot: the send waiting for it goes", async () => {
    // Refused when its stream broke, while still counted in flight: the slot it freed
    // was handed to nobody, and the next send waited for it for ever.
    const c = await connect(r.address);
    try {
      const p = c.producer({ maxInFlight: 1, lingerMs: 0, deliveryTimeoutMs: 30_000 });
      const big = Array.from({ length: 18 }, () => ({ value: Buffer.alloc(100_000, 1) }));
      const first = p.sendBatch('t', big, { partition: 0 }).then(() => null, (x: UringmqError) => x);
      const next = p.sendBatch('t', [{ value: 'next' }], { partition: 1 });
      const e = await first;
      assert.equal(e?.code, 'RECORD_TOO_LARGE', e?.message);
      const res = await Promise.race([next, sleep(10_000).then(() => 'still waiting')]);
      assert.notEqual(res, 'still waiting');
      assert.equal((res as { baseOffset: number }).baseOffset, 0);
    } finally {
      await c.close();
    }
  });

  for (const via of ['node:http2', 'grpc-js'] as const)
    it(`client library (${via} publish stream): a batch over the server's maxMessageBytes fails alone with RECORD_TOO_LARGE; the producer's other sends land`, async () => {
      // The client allows 16 MiB; the server reads 1 MiB. Without the server's limit the
      // refused request ended the stream, the client resent it, and every send on the
      // producer timed out.
      const c = await connect(via === 'grpc-js' ? `ipv4:${r.address}` : r.address);
      try {
        const p = c.producer({ deliveryTimeoutMs: 30_000 });
        const big = Array.from({ length: 18 }, () => ({ value: Buffer.alloc(100_000, 1) }));
        const started = Date.now();
        // First things on a new stream: written before the server's metadata can
        // arrive. A small batch to the same partition goes just before the big one, and
        // sends to its partition and another go after it: all of them land (idempotent
        // producer: failing the big one must not fail the batches numbered before it,
        // nor those numbered after it, which take its sequence numbers).
        const before = p.sendBatch('t', [{ value: 'before' }], { partition: 0 });
        const first = p.sendBatch('t', big, { partition: 0 });
        const after = p.sendBatch('t', [{ value: 'after' }], { partition: 0 });
        const small = Array.from({ length: 100 }, (_, i) => p.send('t', { value: `s${i}`, partition: 1 }));
        const e = await first.then(() => null, (x: UringmqError) => x);
        assert.equal(e?.code, 'RECORD_TOO_LARGE', e?.message);
        assert.match(e!.message, /maxMessageBytes is 1048576/);
        assert.equal((await before).baseOffset, 0);
        assert.equal((await after).baseOffset, 1);
        const offsets = (await Promise.all(small)).map((x) => x.offset);
        assert.deepEqual(offsets, Array.from({ length: 100 }, (_, i) => i));
        // Now the limit is known: refused before it is sent, the stream stays up.
        const again = await p.sendBatch('t', big, { partition: 0 }).then(() => null, (x: UringmqError) => x);
        assert.equal(again?.code, 'RECORD_TOO_LARGE');
        assert.equal((await p.sendBatch('t', big.slice(0, 5), { partition: 0 })).baseOffset, 2);
        assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
        const d = await r.client.describeTopic('t');
        assert.deepEqual(d.partitions.map((x) => x.endOffset), [7, 100]);
        assert.deepEqual((await r.client.fetch('t', 0, 0, { maxBytes: 1 << 20 })).slice(0, 2).map((m) => m.value.toString()), ['before', 'after']);
      } finally {
        await c.close();
      }
    });

  /**
   * A server whose broker takes batches up to `maxBatchBytes` (and streams up to
   * `maxConcurrentStreams`), topic 'b' made on it (`partitions`), and a client on `via`
   * (through a tcpProxy in front of it when `proxied`); all stopped after `fn`.
   */
  async function withBatchLimit(
    via: 'node:http2' | 'grpc-js',
    maxBatchBytes: number,
    opts: { proxied?: boolean; partitions?: number; maxConcurrentStreams?: number },
    fn: (t: { small: Running; c: Client; proxy: Awaited<ReturnType<typeof tcpProxy>> | null }) => Promise<void>,
  ): Promise<void> {
    const small = await startServer({ brokerOptions: { maxBatchBytes }, maxConcurrentStreams: opts.maxConcurrentStreams });
    const proxy = opts.proxied ? await tcpProxy(small.server.port) : null;
    const c = await connect(`${via === 'grpc-js' ? 'ipv4:' : ''}127.0.0.1:${proxy ? proxy.port : small.server.port}`);
    try {
      await c.createTopic('b', { partitions: opts.partitions ?? 1 });
      await fn({ small, c, proxy });
    } finally {
      await c.close();
      await proxy?.close();
      await small.stop();
    }
  }

  // A batch within the server's maxMessageBytes but over the broker's maxBatchBytes
  // (16 MiB and 1 MiB here) was sent, took its sequence numbers, and was refused by the
  // broker: the idempotent producer's batches numbered after it, already in flight, then
  // failed with it (their sequence had a gap).
  for (const via of ['node:http2', 'grpc-js'] as const)
    it(`client library (${via} publish stream): a batch over the broker's maxBatchBytes fails alone with RECORD_TOO_LARGE before it is sent; the producer's sends around it land`, async () => {
      await withBatchLimit(via, 1 << 20, { partitions: 2 }, async ({ small, c }) => {
        const p = c.producer({ deliveryTimeoutMs: 30_000 });
        assert.equal((await p.send('b', { value: 'first', partition: 0 })).offset, 0); // the stream is up: the limits are known
        const big = Array.from({ length: 18 }, () => ({ value: Buffer.alloc(100_000, 1) }));
        const before = p.sendBatch('b', [{ value: 'before' }], { partition: 0 });
        const refused = p.sendBatch('b', big, { partition: 0 }).then(() => null, (x: UringmqError) => x);
        const after = p.sendBatch('b', [{ value: 'after' }], { partition: 0 });
        const others = Array.from({ length: 50 }, (_, i) => p.send('b', { value: `s${i}`, partition: i % 2 }));
        const e = await refused;
        assert.equal(e?.code, 'RECORD_TOO_LARGE', e?.message);
        assert.match(e!.message, /its maxBatchBytes is 1048576/);
        assert.equal((await before).baseOffset, 1);
        assert.equal((await after).baseOffset, 2);
        await Promise.all(others);
        const d = await small.client.describeTopic('b');
        assert.deepEqual(d.partitions.map((x) => x.endOffset), [28, 25]);
        assert.deepEqual((await small.client.fetch('b', 0, 0, { maxBytes: 1 << 20 })).slice(0, 3).map((m) => m.value.toString()), ['first', 'before', 'after']);
      });
    });

  // The limit comes with a stream's initial metadata, a round trip after it opens; the
  // batches queued while the producer reconnected go as its first requests. A big one
  // over the limit among them was refused by the broker, and the idempotent producer's
  // batches sent behind it (known to the broker, their sequence after its gap) with it.
  for (const via of ['node:http2', 'grpc-js'] as const)
    it(`client library (${via} publish stream): a batch over the broker's maxBatchBytes among a new stream's first requests fails alone; those behind it wait for the limit and land`, async () => {
      await withBatchLimit(via, 1 << 20, { proxied: true }, async ({ small, c, proxy }) => {
        const p = c.producer({ deliveryTimeoutMs: 30_000 });
        assert.equal((await p.send('b', { value: 'first' })).offset, 0); // the broker knows the producer now
        proxy!.mode = 'refuse';
        proxy!.cut(); // the stream breaks: what is sent next queues until it reconnects
        await sleep(50);
        const before = p.sendBatch('b', [{ value: 'before' }]);
        const refused = p.sendBatch('b', Array.from({ length: 18 }, () => ({ value: Buffer.alloc(100_000, 1) }))).then(() => null, (x: UringmqError) => x);
        const after = Array.from({ length: 5 }, (_, i) => p.sendBatch('b', [{ value: `after ${i}` }]));
        proxy!.mode = 'forward';
        const e = await refused;
        assert.equal(e?.code, 'RECORD_TOO_LARGE', e?.message);
        assert.equal((await before).baseOffset, 1);
        assert.deepEqual((await Promise.all(after)).map((x) => x.baseOffset), [2, 3, 4, 5, 6]);
        assert.deepEqual((await small.client.fetch('b', 0, 0, { maxBytes: 1 << 20 })).map((m) => m.value.toString()), ['first', 'before', 'after 0', 'after 1', 'after 2', 'after 3', 'after 4']);
      });
    });

  // The client's accumulators cut send()'s batches at its own maxBatchBytes (1 MiB by
  // default): against a broker that takes less, each such batch was refused, and every
  // record send() had put in it failed with RECORD_TOO_LARGE.
  for (const via of ['node:http2', 'grpc-js'] as const)
    it(`client library (${via} publish stream): send() cuts its batches at the broker's maxBatchBytes once known, not only its own`, async () => {
      await withBatchLimit(via, 64 << 10, {}, async ({ c }) => {
        const p = c.producer({ lingerMs: 50, deliveryTimeoutMs: 30_000 });
        assert.equal((await p.send('b', { value: 'first' })).offset, 0); // the stream is up: the limits are known
        const sent = await Promise.all(Array.from({ length: 200 }, (_, i) => p.send('b', { value: Buffer.alloc(2000, i) })));
        assert.deepEqual(sent.map((x) => x.offset), Array.from({ length: 200 }, (_, i) => i + 1));
        await p.close();
      });
    });

  // Each new stream starts with its limits unknown until its metadata comes. Reconnecting
  // (each attempt a new stream) the producer forgot the broker's maxBatchBytes, and
  // send() cut its batches at its own 1 MiB again: the records sent during an outage
  // went in batches the broker refuses, and each of them failed with RECORD_TOO_LARGE.
  for (const via of ['node:http2', 'grpc-js'] as const)
    it(`client library (${via} publish stream): send() keeps cutting its batches at the broker's maxBatchBytes while it reconnects`, async () => {
      await withBatchLimit(via, 64 << 10, { proxied: true }, async ({ c, proxy }) => {
        const p = c.producer({ deliveryTimeoutMs: 30_000 });
        assert.equal((await p.send('b', { value: 'first' })).offset, 0); // the stream is up: the limits are known
        proxy!.mode = 'refuse';
        proxy!.cut();
        await sleep(50);
        const during = p.send('b', { value: 'during' }); // a stream is opened again (and refused)
        await sleep(50);
        const burst = Array.from({ length: 200 }, (_, i) => p.send('b', { value: Buffer.alloc(2000, i) }));
        proxy!.mode = 'forward';
        assert.equal((await during).offset, 1);
        assert.deepEqual((await Promise.all(burst)).map((x) => x.offset), Array.from({ length: 200 }, (_, i) => i + 2));
        await p.close();
      });
    });

  // A stream the broker refuses before its initial metadata (at its stream limit, or
  // shutting down) read none of its requests. A batch over the broker's maxBatchBytes
  // sent on such a stream, and again on one it took, was given up as one that may have
  // been written, and the batches of its partition numbered after it failed with it.
  for (const via of ['node:http2', 'grpc-js'] as const)
    it(`client library (${via} publish stream): a batch over the broker's maxBatchBytes first sent on a stream refused at the broker's stream limit fails alone; those behind it land`, async () => {
      await withBatchLimit(via, 64 << 10, { maxConcurrentStreams: 1 }, async ({ small, c }) => {
        const other = await connect(small.address);
        try {
          const hog = other.producer();
          assert.equal((await hog.send('b', { value: 'hog' })).offset, 0); // its stream is the one the broker takes
          const srv = small.server as unknown as { admit(authorization: unknown): UringmqError | null };
          const admit = srv.admit.bind(srv);
          let refusals = 0;
          srv.admit = (authorization) => {
            const e = admit(authorization);
            if (e) refusals++;
            return e;
          };
          const p = c.producer({ deliveryTimeoutMs: 30_000 });
          // Numbered before any limit is known, and sent as the new stream's first request.
          const refused = p.sendBatch('b', Array.from({ length: 18 }, () => ({ value: Buffer.alloc(10_000, 1) }))).then(() => null, (x: UringmqError) => x);
          const after = Array.from({ length: 3 }, (_, i) => p.sendBatch('b', [{ value: `after ${i}` }]));
          await waitFor(() => refusals > 0, 10_000, 'a stream of the producer refused');
          await hog.close(); // the producer's next stream is taken
          const e = await refused;
          assert.equal(e?.code, 'RECORD_TOO_LARGE', e?.message);
          assert.match(e!.message, /nothing was written/);
          assert.deepEqual((await Promise.all(after)).map((x) => x.baseOffset), [1, 2, 3]);
          assert.deepEqual((await small.client.fetch('b', 0, 0, { maxBytes: 1 << 20 })).map((m) => m.value.toString()), ['hog', 'after 0', 'after 1', 'after 2']);
        } finally {
          await other.close();
        }
      });
    });

  // An attempt that reached a broker taking the batch may have been written, its answer
  // lost with the connection. The broker restarted with a smaller maxBatchBytes refuses
  // the batch, and its sequence numbers must not go to the batches behind it: the broker
  // would answer those as that batch's duplicates (acked, never written).
  for (const via of ['node:http2', 'grpc-js'] as const)
    it(`client library (${via} publish stream): a batch written by a broker whose answer was lost, refused after a restart with a smaller maxBatchBytes, lends its sequence numbers to no later batch`, async () => {
      let s = await startServer(); // maxBatchBytes 8 MiB
      const dir = s.broker.dir;
      const proxy = await tcpProxy(s.server.port);
      const c = await connect(`${via === 'grpc-js' ? 'ipv4:' : ''}127.0.0.1:${proxy.port}`);
      try {
        await c.createTopic('b', { partitions: 1 });
        const p = c.producer({ deliveryTimeoutMs: 30_000 });
        assert.equal((await p.send('b', { value: 'first' })).offset, 0);
        const srv = s.server as unknown as { publish: (req: unknown) => Promise<unknown> };
        const orig = srv.publish.bind(srv);
        srv.publish = (req) => orig(req).then(() => new Promise(() => undefined)); // written, its ack lost
        const big = p.sendBatch('b', Array.from({ length: 18 }, () => ({ value: Buffer.alloc(10_000, 1) }))).then(() => null, (x: UringmqError) => x);
        await waitFor(async () => (await s.client.describeTopic('b')).partitions[0]!.endOffset === 19, 10_000, 'the big batch written');
        proxy.mode = 'refuse';
        proxy.cut();
        await s.stop();
        s = await startServer({ dir, brokerOptions: { maxBatchBytes: 64 << 10 } });
        proxy.upstreamPort = s.server.port;
        // The first as many records as the big one: given its numbers, the broker takes it for its retry.
        const after = [18, 1, 1].map((n, i) => p.sendBatch('b', Array.from({ length: n }, (_, j) => ({ value: `after ${i}.${j}` }))).then((x) => x, (x: UringmqError) => x));
        proxy.mode = 'forward';
        const e = await big;
        assert.equal(e?.code, 'RECORD_TOO_LARGE', e?.message);
        assert.match(e!.message, /may have been written/);
        // They fail with it, as any batch behind one given up (the partition goes on
        // under a new producer id); none is acked for records the log does not hold.
        for (const x of await Promise.all(after)) {
          assert.ok(x instanceof UringmqError, `acked at ${JSON.stringify(x)}`);
          assert.match(x.message, /an earlier batch for b\/0 failed/);
        }
        assert.equal((await p.send('b', { value: 'next' })).offset, 19);
        const log = (await s.client.fetch('b', 0, 0, { maxBytes: 1 << 20 })).map((m) => (m.value.length === 10_000 ? 'big' : m.value.toString()));
        assert.deepEqual(log, ['first', ...Array<string>(18).fill('big'), 'next']);
      } finally {
        await c.close();
        await proxy.close();
        await s.stop();
      }
    });

  it('ack for never-delivered offsets ends that Subscribe with FAILED_PRECONDITION', async () => {
    await r.client.producer().send('t', { value: 'x', partition: 0 });
    const d = brokerService.subscribe!;
    const s = raw.makeBidiStreamRequest(d.path, d.requestSerialize, d.responseDeserialize);
    s.write({ subscribe: { topic: 't', group: 'g', from: pb.StartFrom.EARLIEST } });
    // Offset 0 delivered before the acks go (not a fixed sleep: on a busy host the join
    // and the delivery can take longer, and the good range would then be refused too).
    const delivered = new Promise<void>((resolve) => s.on('data', (m: InstanceType<typeof pb.SubscribeResponse>) => m.delivery && resolve()));
    await delivered;
    // The good range (offset 0, delivered) comes first: the message is refused whole.
    s.write({ acks: { ranges: [{ partition: 0, from_offset: 0, to_offset: 1 }, { partition: 0, from_offset: 100, to_offset: 200 }] } });
    const err = await new Promise<grpc.ServiceError>((resolve) => s.on('error', resolve));
    assert.equal(err.code, grpc.status.FAILED_PRECONDITION);
    assert.equal(trailerCode(err), 'FAILED_PRECONDITION');
    assert.match(err.details, /never|only delivered/);
    await sleep(200); // past the group's offset flush
    const g = (await r.client.describeTopic('t')).groups.find((x) => x.group === 'g')!;
    assert.equal(g.committed[0], 0, 'no ack of the refused message was taken');
    assert.equal((await r.client.producer().send('t', { value: 'y', partition: 0 })).offset, 1); // others unaffected
    // a first message that is not `subscribe`
    const s2 = raw.makeBidiStreamRequest(d.path, d.requestSerialize, d.responseDeserialize);
    s2.write({ credit: 5 });
    const err2 = await new Promise<grpc.ServiceError>((resolve) => s2.on('error', resolve));
    assert.equal(err2.code, grpc.status.FAILED_PRECONDITION);
  });

  it('`returned` right behind `subscribe` (the join still running) ends the membership and the call once the join is in', async () => {
    await r.client.producer().sendBatch('t', [{ value: 'x' }], { partition: 0 });
    const d = brokerService.subscribe!;
    const s = raw.makeBidiStreamRequest(d.path, d.requestSerialize, d.responseDeserialize);
    s.on('error', () => undefined);
    s.on('data', () => undefined); // read: the status comes after what was sent
    const status = new Promise<grpc.StatusObject>((resolve) => s.on('status', resolve));
    s.write({ subscribe: { topic: 't', group: 'early-close', from: pb.StartFrom.EARLIEST } });
    s.write({ returned: { ranges: [] } }); // closing at once: nothing delivered yet
    const ended = await Promise.race([status, sleep(3000).then(() => null)]);
    const members = r.broker.groups.describe('t').find((g) => g.group === 'early-close')?.members.length ?? 0;
    s.cancel();
    assert.ok(ended, `the call did not end (members in the group: ${members})`);
    assert.equal(ended.code, grpc.status.OK);
    assert.equal(members, 0);
  });

  it('`returned` ends the membership and the call; the ranges are redelivered uncounted; a malformed range is INVALID_ARGUMENT with nothing given back', async () => {
    await r.client.producer().sendBatch('t', Array.from({ length: 4 }, (_, i) => ({ value: `r${i}` })), { partition: 0 });
    const d = brokerService.subscribe!;
    // The delivery count of each message a stream is delivered, in order (batches or records).
    const deliveryCounts = (s: grpc.ClientDuplexStream<unknown, unknown>): number[] => {
      const counts: number[] = [];
      s.on('data', (res: { delivery?: { records?: Array<{ delivery_count?: number }>; delivery_count?: number; from_offset?: unknown; to_offset?: unknown } }) => {
        const dl = res.delivery;
        if (!dl) return;
        if (dl.records?.length) for (const rec of dl.records) counts.push(rec.delivery_count ?? 1);
        else for (let o = Number(dl.from_offset); o < Number(dl.to_offset); o++) counts.push(dl.delivery_count || 1);
      });
      return counts;
    };
    const delivered = (s: grpc.ClientDuplexStream<unknown, unknown>) =>
      new Promise<number>((resolve) => s.on('data', (res: { delivery?: { to_offset?: unknown } }) => res.delivery && resolve(Number(res.delivery.to_offset))));
    // A malformed range: the stream fails, the member leaves, its delivery counted.
    const s1 = raw.makeBidiStreamRequest(d.path, d.requestSerialize, d.responseDeserialize);
    s1.write({ subscribe: { topic: 't', group: 'ret', from: pb.StartFrom.EARLIEST, max_deliveries: 3 } });
    assert.equal(await delivered(s1), 4);
    s1.write({ returned: { ranges: [{ partition: 0, from_offset: 3, to_offset: 1, delivery_count: 1 }] } });
    const err = await new Promise<grpc.ServiceError>((resolve) => s1.on('error', resolve));
    assert.equal(err.code, grpc.status.INVALID_ARGUMENT);
    assert.match(err.details, /not a valid offset range/);
    // A good one: the call ends with OK, and the next member has them as delivery 2
    // (the first stream's, counted), not 3.
    const s2 = raw.makeBidiStreamRequest(d.path, d.requestSerialize, d.responseDeserialize);
    const counts = deliveryCounts(s2);
    s2.write({ subscribe: { topic: 't', group: 'ret', from: pb.StartFrom.EARLIEST, max_deliveries: 3 } });
    const until = Date.now() + 5000;
    while (counts.length < 4 && Date.now() < until) await sleep(20);
    assert.deepEqual(counts, [2, 2, 2, 2]);
    const status = new Promise<grpc.StatusObject>((resolve) => s2.on('status', resolve));
    s2.on('error', () => undefined);
    s2.write({ returned: { ranges: [{ partition: 0, from_offset: 0, to_offset: 4, delivery_count: 2 }] } });
    assert.equal((await status).code, grpc.status.OK);
    const s3 = raw.makeBidiStreamRequest(d.path, d.requestSerialize, d.responseDeserialize);
    const counts3 = deliveryCounts(s3);
    s3.on('error', () => undefined);
    s3.write({ subscribe: { topic: 't', group: 'ret', from: pb.StartFrom.EARLIEST, max_deliveries: 3 } });
    const until3 = Date.now() + 5000;
    while (counts3.length < 4 && Date.now() < until3) await sleep(20);
    assert.deepEqual(counts3, [2, 2, 2, 2], 'the returned delivery was counted');
    s3.cancel();
    assert.ok(!(await r.client.listTopics()).includes('t.dlq'));
  });

  it('`returned` with many small ranges out of order is taken in time about linear in their number (it does not hold up the broker); one of more than 65,536 ranges ends the call with INVALID_ARGUMENT before it is decoded', async () => {
    const big = await startServer({}); // messages up to 16 MiB
    const c = rawClient(big.address);
    try {
      await big.client.createTopic('t');
      await big.client.producer().sendBatch('t', [{ value: 'x' }], { partition: 0 });
      const d = brokerService.subscribe!;
      /** A member of `group` given its delivery sends `n` small ranges back; the call's end and error. */
      const giveBack = async (group: string, n: number, descending = false) => {
        const s = c.makeBidiStreamRequest(d.path, d.requestSerialize, d.responseDeserialize);
        let err: grpc.ServiceError | null = null;
        s.on('error', (e: grpc.ServiceError) => (err = e));
        const got = new Promise<void>((resolve) => s.on('data', (res: { delivery?: unknown }) => res.delivery && resolve()));
        s.write({ subscribe: { topic: 't', group, from: pb.StartFrom.EARLIEST } });
        await got;
        const status = new Promise<void>((resolve) => s.on('status', () => resolve()));
        const ranges = Array.from({ length: n }, (_, i) => ({ partition: 0, from_offset: 2 * i + 2, to_offset: 2 * i + 3, delivery_count: 1 }));
        const t0 = performance.now();
        s.write({ returned: { ranges: descending ? ranges.reverse() : ranges } });
        await status;
        return { ms: performance.now() - t0, err: err as grpc.ServiceError | null };
      };
      // MAX_ACK_RANGES: about 0.8 MB, the most one Returned may carry.
      const times = [(await giveBack('many-false', MAX_ACK_RANGES)).ms, (await giveBack('many-true', MAX_ACK_RANGES, true)).ms];
      assert.ok(times[1]! < 3 * times[0]! + 1000, `descending ${times[1]!.toFixed(0)} ms, ascending ${times[0]!.toFixed(0)} ms`);
      // Past the bound: refused on the wire, unread.
      const { err } = await giveBack('many-returned', MAX_ACK_RANGES + 1);
      assert.equal(err?.code, grpc.status.INVALID_ARGUMENT);
      assert.match(err?.details ?? '', /a Returned message carries at most 65536 ranges, this one 65537/);
      // The member left: its one message is redelivered to the next, counted.
      const s2 = c.makeBidiStreamRequest(d.path, d.requestSerialize, d.responseDeserialize);
      s2.on('error', () => undefined);
      const counts: number[] = [];
      s2.on('data', (res: { delivery?: { records?: Array<{ delivery_count?: number }>; delivery_count?: number } }) => {
        if (res.delivery) counts.push(res.delivery.records?.[0]?.delivery_count ?? res.delivery.delivery_count ?? 1);
      });
      s2.write({ subscribe: { topic: 't', group: 'many-returned', from: pb.StartFrom.EARLIEST } });
      await waitFor(() => counts.length >= 1, 10_000, 'the redelivery');
      assert.deepEqual(counts, [2]);
      s2.cancel();
    } finally {
      c.close();
      await big.stop();
    }
  });

  it('an Acks message of more than 65,536 ranges ends the Subscribe call with INVALID_ARGUMENT before it is decoded, none of its acks taken; one of 65,536 is decoded and checked', async () => {
    const big = await startServer({}); // messages up to 16 MiB
    const c = rawClient(big.address);
    try {
      await big.client.createTopic('t');
      await big.client.producer().sendBatch('t', Array.from({ length: 3 }, (_, i) => ({ value: `m${i}` })), { partition: 0 });
      const d = brokerService.subscribe!;
      for (const n of [MAX_ACK_RANGES + 1, MAX_ACK_RANGES]) {
        const s = c.makeBidiStreamRequest(d.path, d.requestSerialize, d.responseDeserialize);
        let err: grpc.ServiceError | null = null;
        s.on('error', (e: grpc.ServiceError) => (err = e));
        const got = new Promise<void>((resolve) => s.on('data', (res: { delivery?: unknown }) => res.delivery && resolve()));
        s.write({ subscribe: { topic: 't', group: `acks-${n}`, from: pb.StartFrom.EARLIEST } });
        await got;
        // Offsets 0..2 acked, then n - 1 ranges past them: acks of offsets never
        // delivered, each refused once decoded (FAILED_PRECONDITION), unless not decoded.
        const ranges = [{ partition: 0, from_offset: 0, to_offset: 3 }, ...Array.from({ length: n - 1 }, (_, i) => ({ partition: 0, from_offset: 10 + 2 * i, to_offset: 11 + 2 * i }))];
        const status = new Promise<void>((resolve) => s.on('status', () => resolve()));
        const t0 = performance.now();
        s.write({ acks: { ranges } });
        await status;
        const ms = performance.now() - t0;
        const e = err as grpc.ServiceError | null;
        assert.ok(e, `the call ended without an error (${n} ranges)`);
        if (n > MAX_ACK_RANGES) {
          assert.equal(e.code, grpc.status.INVALID_ARGUMENT, e.message);
          assert.match(e.details, /at most 65536 ranges, this one 65537/);
          assert.equal(e.metadata.get('uringmq-code')[0], 'INVALID_ARGUMENT');
        } else {
          // Decoded and checked: its acks past what was delivered are refused as such.
          assert.equal(e.code, grpc.status.FAILED_PRECONDITION, e.message);
        }
        assert.ok(ms < 10_000, `${ms.toFixed(0)} ms`);
        const g = (await big.client.describeTopic('t')).groups.find((x) => x.group === `acks-${n}`);
        assert.equal(g?.committed[0] ?? 0, 0, 'none of the acks was taken');
        s.cancel();
      }
    } finally {
      c.close();
      await big.stop();
    }
  });

  it('heartbeat, feedback and credit sent right behind `subscribe` (the join may still be running) are taken, not refused; an early ack is refused', async () => {
    await r.client.producer().sendBatch('t', Array.from({ length: 5 }, (_, i) => ({ value: `e${i}` })), { partition: 0 });
    const d = brokerService.subscribe!;
    // An initial credit of 2: the other 3 messages come only with the credit sent behind
    // `subscribe`, whether it arrives during the join (kept until it completes) or after.
    // Before the fix, whichever of these arrived during the join ended the stream with
    // FAILED_PRECONDITION, and a client reconnecting to a restarted broker lost its consumer.
    // Acked at once, so only credit limits what comes next.
    const st = rawSubscriber(raw, (dl) => s.write({ acks: { ranges: [{ partition: dl.partition ?? 0, from_offset: Number(dl.from_offset), to_offset: Number(dl.to_offset) }] } }));
    const { s, got } = st;
    s.write({ subscribe: { topic: 't', group: 'early', from: pb.StartFrom.EARLIEST, max_unacked: 100, initial_credit: 2 } });
    s.write({ heartbeat: true });
    s.write({ feedback: { processed_per_sec: 10, latency_ms: 1 } });
    s.write({ credit: 5 });
    const until = Date.now() + 5000;
    while (got.length < 5 && !st.err && Date.now() < until) await sleep(20);
    assert.equal(st.err, null, `stream failed: ${st.err?.details}`);
    assert.ok(got.length >= 5, `delivered ${got.length} of 5`);
    s.end();
    // An ack before anything could be delivered is still refused.
    const s2 = raw.makeBidiStreamRequest(d.path, d.requestSerialize, d.responseDeserialize);
    s2.on('data', () => undefined);
    s2.write({ subscribe: { topic: 't', group: 'early2', from: pb.StartFrom.EARLIEST } });
    s2.write({ acks: { ranges: [{ partition: 0, from_offset: 0, to_offset: 1 }] } });
    const err2 = await new Promise<grpc.ServiceError>((resolve) => s2.on('error', resolve));
    assert.equal(err2.code, grpc.status.FAILED_PRECONDITION);
  });

  it('an `assignment_only` member is sent no messages, whatever credit it sends (early or once joined): its credit is only a sign of life', async () => {
    await r.client.producer().sendBatch('t', Array.from({ length: 5 }, (_, i) => ({ value: `a${i}` })), { partition: 0 });
    const d = brokerService.subscribe!;
    const s = raw.makeBidiStreamRequest(d.path, d.requestSerialize, d.responseDeserialize);
    let err: grpc.ServiceError | null = null;
    s.on('error', (e: grpc.ServiceError) => (err = e));
    let assigned = false;
    let delivered = 0;
    s.on('data', (res: { assignment?: unknown; delivery?: { records?: unknown[]; from_offset?: unknown; to_offset?: unknown } }) => {
      if (res.assignment) assigned = true;
      if (res.delivery) delivered += Math.max(res.delivery.records?.length ?? 0, Number(res.delivery.to_offset ?? 0) - Number(res.delivery.from_offset ?? 0));
    });
    s.write({ subscribe: { topic: 't', group: 'membership', from: pb.StartFrom.EARLIEST, assignment_only: true } });
    s.write({ credit: 100 }); // during the join
    const until = Date.now() + 5000;
    while (!assigned && !err && Date.now() < until) await sleep(20);
    assert.ok(assigned, 'no assignment');
    s.write({ credit: 100 }); // once joined
    await sleep(500);
    assert.equal(err, null, `stream failed: ${(err as grpc.ServiceError | null)?.details}`);
    const m = (await r.client.describeTopic('t')).groups.find((g) => g.group === 'membership')!.members[0]!;
    assert.deepEqual(m.partitions, [0, 1], 'still a member with its partitions');
    assert.equal(m.unacked, 0, 'messages were delivered to an assignment_only member');
    assert.equal(delivered, 0);
    s.end();
  });

  it('credit granted a little at a time is used as it comes, with messages still unacked (not only once all are acked)', async () => {
    await r.client.producer().sendBatch('t', Array.from({ length: 20 }, (_, i) => ({ value: `c${i}` })), { partition: 0 });
    const st = rawSubscriber(raw);
    const { s, got } = st;
    const waitFor = async (n: number) => {
      const until = Date.now() + 5000;
      while (got.length < n && !st.err && Date.now() < until) await sleep(20);
      assert.equal(st.err, null, `stream failed: ${st.err?.details}`);
      assert.deepEqual(got, Array.from({ length: n }, (_, i) => i));
    };
    // A client that buffers 2 messages and never acks here: only credit lets more through.
    s.write({ subscribe: { topic: 't', group: 'trickle', from: pb.StartFrom.EARLIEST, initial_credit: 2, ack_deadline_ms: 60_000 } });
    await waitFor(2);
    s.write({ credit: 3 });
    await waitFor(5);
    s.write({ credit: 1 });
    await waitFor(6);
    await sleep(200);
    assert.equal(got.length, 6, 'delivered past the credit granted');
    s.end();
  });

  it('credit granted after everything was acked is used at once, even below a quarter of the initial credit (a client pulling one message at a time)', async () => {
    await r.client.producer().sendBatch('t', Array.from({ length: 20 }, (_, i) => ({ value: `p${i}` })), { partition: 0 });
    const st = rawSubscriber(raw, (dl) => s.write({ acks: { ranges: [{ partition: dl.partition ?? 0, from_offset: Number(dl.from_offset), to_offset: Number(dl.to_offset) }] } }));
    const { s, got } = st;
    const waitFor = async (n: number) => {
      const until = Date.now() + 5000;
      while (got.length < n && !st.err && Date.now() < until) await sleep(5);
      assert.equal(st.err, null, `stream failed: ${st.err?.details}`);
      assert.equal(got.length, n);
    };
    // A buffer of 8 drained and acked, then one message asked for at a time: nothing is
    // unacked, so each credit of 1 is enough (the pump must not wait for its idle timeout).
    s.write({ subscribe: { topic: 't', group: 'pull', from: pb.StartFrom.EARLIEST, initial_credit: 8, ack_deadline_ms: 60_000 } });
    await waitFor(8);
    await sleep(100); // the acks are in: nothing unacked
    const t0 = Date.now();
    for (let i = 1; i <= 4; i++) {
      s.write({ credit: 1 });
      await waitFor(8 + i);
      await sleep(20); // its ack lands
    }
    const ms = Date.now() - t0;
    assert.ok(ms < 1500, `4 pulls of one message took ${ms} ms`);
    s.end();
  });

  it('a nack with a delay frees its window slot at once: a window-bound client that nacks everything for later is sent the rest without waiting', async () => {
    await r.client.producer().sendBatch('t', Array.from({ length: 40 }, (_, i) => ({ value: `k${i}` })), { partition: 0 });
    const st = rawSubscriber(raw, (dl) => {
      for (let o = Number(dl.from_offset); o < Number(dl.to_offset); o++) s.write({ nack: { partition: dl.partition ?? 0, offset: o, delay_ms: 60_000 } });
    });
    const { s, got } = st;
    // Credit for all of them: only the window (4) holds deliveries back, and each nack empties it.
    s.write({ subscribe: { topic: 't', group: 'later', from: pb.StartFrom.EARLIEST, max_unacked: 4, initial_credit: 1000, ack_deadline_ms: 60_000 } });
    const t0 = Date.now();
    while (got.length < 40 && !st.err && Date.now() - t0 < 15_000) await sleep(5);
    const ms = Date.now() - t0;
    assert.equal(st.err, null, `stream failed: ${st.err?.details}`);
    assert.equal(got.length, 40);
    assert.ok(ms < 1500, `10 windows of nacked messages took ${ms} ms`);
    s.end();
  });

  it('a consumer whose server is gone reconnects with backoff, not in a loop', async () => {
    const own = await startServer();
    const port = own.server.port;
    const c = await connect(own.address);
    let listener: net.Server | null = null;
    try {
      await c.createTopic('b');
      const consumer = c.consumer({ topic: 'b', group: 'g' });
      const it = consumer[Symbol.asyncIterator]();
      const first = it.next(); // starts the Subscribe stream
      const until = Date.now() + 10_000;
      while ((await c.describeTopic('b')).groups.find((g) => g.group === 'g')?.members.length !== 1 && Date.now() < until) await sleep(20);
      await own.stop();
      // In the server's place: a port that takes each connection and drops it at once.
      let connections = 0;
      listener = net.createServer((sock) => {
        connections++;
        sock.destroy();
      });
      await new Promise<void>((resolve, reject) => {
        listener!.once('error', reject);
        listener!.listen(port, '127.0.0.1', resolve);
      });
      // Delays of 100, 200, 400, 800, 1600 ms: about five attempts in 3 s. A consumer
      // retrying without backoff would make hundreds. (Attempts made while the server was
      // stopping found no listener: on a slow machine the count starts late.)
      const t0 = Date.now();
      while (connections < 2 && Date.now() - t0 < 10_000) await sleep(50);
      await sleep(Math.max(0, 3000 - (Date.now() - t0)));
      const s = ((Date.now() - t0) / 1000).toFixed(1);
      assert.ok(connections >= 2, `${connections} reconnection attempts in ${s} s: the consumer gave up`);
      assert.ok(connections <= 12, `${connections} reconnection attempts in ${s} s: no backoff`);
      await consumer.close();
      await first.catch(() => undefined);
    } finally {
      await c.close();
      await new Promise((resolve) => (listener ? listener.close(resolve) : resolve(undefined)));
    }
  });

  it('a client vanishing mid-stream (SIGKILL) loses nothing: its messages go to the next member', async () => {
    await r.client.producer().sendBatch('t', Array.from({ length: 50 }, (_, i) => ({ value: String(i) })), { partition: 0 });
    const child = spawn(process.execPath, ['--require', 'tsx/cjs', '-e', `
      const { connect } = require(${JSON.stringify(path.resolve(__dirname, '../src/client'))});
      (async () => {
        const c = await connect(${JSON.stringify(r.address)});
        for await (const m of c.consumer({ topic: 't', group: 'g', from: 'earliest', ackDeadlineMs: 60000 })) {
          console.log('GOT ' + m.offset); // never acked
        }
      })();`], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve) => child.stdout!.on('data', (d: Buffer) => d.toString().includes('GOT') && resolve()));
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      const c2 = r.client.consumer({ topic: 't', group: 'g', from: 'earliest' });
      const seen = new Set<string>();
      // The vanished member's ack deadline is 60 s and the server's session timeout 10 s:
      // only noticing the closed stream hands its messages over well before either.
      const giveUp = setTimeout(() => void c2.close(), 8000);
      try {
        for await (const m of c2) {
          seen.add(m.value.toString());
          m.ack();
          if (seen.size === 50) break;
        }
      } finally {
        clearTimeout(giveUp);
      }
      assert.equal(seen.size, 50, `${seen.size} of 50 reached the next member within 8 s of the kill`);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('streams past the limit get RESOURCE_EXHAUSTED; existing ones keep working', async () => {
    const d = brokerService.publishStream!;
    const streams = Array.from({ length: 25 }, () => raw.makeBidiStreamRequest(d.path, d.requestSerialize, d.responseDeserialize));
    const errors: grpc.ServiceError[] = [];
    const acked = new Set<number>(); // streams whose batch was acked
    streams.forEach((s, i) => {
      s.on('error', (e: grpc.ServiceError) => errors.push(e));
      s.on('data', (res: { sequence: unknown; error?: { code?: string } }) => {
        if (Number(res.sequence) === 1 && !res.error?.code) acked.add(i);
      });
      s.write({ sequence: 1, topic: 't', partition: 0, records: [{ value: Buffer.from('x') }] });
    });
    const until = Date.now() + 20_000;
    while (errors.length + acked.size < 25 && Date.now() < until) await sleep(20);
    assert.equal(errors.length, 5, `${errors.length} refused, ${acked.size} acked`);
    assert.ok(errors.every((e) => e.code === grpc.status.RESOURCE_EXHAUSTED && trailerCode(e) === 'RESOURCE_EXHAUSTED'));
    assert.equal(acked.size, 20, 'every admitted stream had its batch acked');
    // With the 20 open: unary calls work, and each open stream still takes batches.
    assert.deepEqual(await r.client.listTopics(), ['t']);
    const open = [...acked];
    const acked2 = new Set<number>();
    for (const i of open) {
      streams[i]!.on('data', (res: { sequence: unknown; error?: { code?: string } }) => {
        if (Number(res.sequence) === 2 && !res.error?.code) acked2.add(i);
      });
      streams[i]!.write({ sequence: 2, topic: 't', partition: 0, records: [{ value: Buffer.from('y') }] });
    }
    while (acked2.size < open.length && Date.now() < until) await sleep(20);
    assert.equal(acked2.size, 20);
    assert.equal((await r.client.describeTopic('t')).partitions[0]!.endOffset, 40);
    streams.forEach((s) => s.end());
    await sleep(100);
    assert.equal((await r.client.producer().send('t', { value: 'after', partition: 1 })).partition, 1);
  });
});

describe('gRPC client and server: give-ups, timeouts, retries and message limits', function () {
  this.timeout(60_000);
  let r: Running;
  afterEach(async () => r?.stop());
  type Publish = (req: unknown) => Promise<unknown>;
  const publishOf = (running: Running) => running.server as unknown as { publish: Publish };

  for (const via of ['node:http2', 'grpc-js'] as const)
    it(`client library (${via} streams and unary calls): a message over the client's own maxMessageBytes fails with INTERNAL, saying to raise it in connect(), and is not retried`, async () => {
      r = await startServer(); // reads and sends up to 16 MiB
      await r.client.createTopic('t', { partitions: 1 });
      await r.client.producer().sendBatch('t', [{ value: Buffer.alloc(200_000, 1) }], { partition: 0 });
      const c = await connect(via === 'grpc-js' ? `ipv4:${r.address}` : r.address, { maxMessageBytes: 64 * 1024 });
      try {
        const reconnects: string[] = [];
        const consumer = c.consumer({ topic: 't', group: 'g', from: 'earliest', onConnectionState: (ev) => reconnects.push(ev.state) });
        const it = consumer[Symbol.asyncIterator]();
        // Before: grpc-js's RESOURCE_EXHAUSTED was taken for the broker's (a full disk)
        // and the consumer reconnected for good, the delivery too large each time.
        const got = await Promise.race([it.next().then(() => null, (e: UringmqError) => e), sleep(15_000).then(() => 'still waiting' as const)]);
        assert.notEqual(got, 'still waiting', `no error; connection states: ${reconnects.join(', ')}`);
        assert.equal((got as UringmqError).code, 'INTERNAL', (got as UringmqError).message);
        assert.match((got as UringmqError).message, /over this client's maxMessageBytes \(65536\): raise maxMessageBytes in connect\(\)/);
        await consumer.close();
        // A unary answer too (grpc-js carries every Fetch).
        const e = await c.fetch('t', 0, 0, { maxBytes: 1 << 20 }).then(() => null, (x: UringmqError) => x);
        assert.equal(e?.code, 'INTERNAL', e?.message);
        assert.match(e!.message, /raise maxMessageBytes in connect\(\)/);
      } finally {
        await c.close();
      }
    });

  it('a batch given up does not wedge its partition: batches numbered after it fail with it, later ones land in order', async () => {
    r = await startServer();
    await r.client.createTopic('t');
    const srv = publishOf(r);
    const orig = srv.publish.bind(srv);
    let full = false;
    srv.publish = (req) => (full ? Promise.reject(new UringmqError('RESOURCE_EXHAUSTED', 'the write queue is full')) : orig(req));
    const p = r.client.producer({ deliveryTimeoutMs: 800 });
    assert.equal((await p.sendBatch('t', [{ value: 'a' }], { partition: 0 })).baseOffset, 0);
    full = true;
    const b = p.sendBatch('t', [{ value: 'b' }], { partition: 0 });
    const c = p.sendBatch('t', [{ value: 'c' }], { partition: 0 }); // numbered after b, also refused
    await assert.rejects(b, (e: { code?: string }) => e.code === 'UNAVAILABLE');
    full = false;
    await assert.rejects(c, (e: { code?: string; message?: string }) => e.code === 'UNAVAILABLE' && /fails with it/.test(e.message ?? ''));
    const d = await p.sendBatch('t', [{ value: 'd' }], { partition: 0 });
    const e = await p.sendBatch('t', [{ value: 'e' }], { partition: 0 });
    assert.deepEqual([d.baseOffset, e.baseOffset], [1, 2]);
    const all = await r.client.fetch('t', 0, 0);
    assert.deepEqual(all.map((m) => m.value.toString()), ['a', 'd', 'e']);
  });

  it('deliveryTimeoutMs also bounds a batch the broker took and never answers', async () => {
    r = await startServer();
    await r.client.createTopic('t');
    publishOf(r).publish = () => new Promise(() => undefined); // a disk that hangs
    const p = r.client.producer({ deliveryTimeoutMs: 300 });
    const t0 = Date.now();
    await assert.rejects(p.send('t', { value: 'x' }), (e: { code?: string }) => e.code === 'UNAVAILABLE');
    assert.ok(Date.now() - t0 < 5000, 'rejected near its deadline');
  });

  it('a batch failed with an earlier one after its connection broke unanswered says it may have been written (it may be in the log)', async () => {
    r = await startServer();
    await r.client.createTopic('t');
    const srv = publishOf(r);
    const orig = srv.publish.bind(srv);
    // The first batch is never answered nor written; the second is written, its ack never sent.
    let n = 0;
    srv.publish = (req) => (n++ === 0 ? new Promise(() => undefined) : orig(req).then(() => new Promise(() => undefined)));
    const proxy = await tcpProxy(r.server.port);
    const c = await connect(`127.0.0.1:${proxy.port}`);
    try {
      const p = c.producer({ deliveryTimeoutMs: 1500 });
      const a = p.sendBatch('t', [{ value: 'a' }], { partition: 0 }).catch((e: UringmqError) => e);
      const b = p.sendBatch('t', [{ value: 'b' }], { partition: 0 }).catch((e: UringmqError) => e);
      await waitFor(async () => (await r.client.describeTopic('t')).partitions[0]!.endOffset === 1, 5000, 'b written');
      proxy.mode = 'refuse';
      proxy.cut(); // both go unanswered; reconnects fail past a's deadline
      const ea = (await a) as UringmqError;
      assert.match(ea.message, /may still be written/);
      const eb = (await b) as UringmqError;
      assert.match(eb.message, /fails with it/);
      assert.match(eb.message, /this one was sent on a connection that broke before its answer came and may have been written/);
      assert.deepEqual((await r.client.fetch('t', 0, 0)).map((m) => m.value.toString()), ['b']);
    } finally {
      await c.close();
      await proxy.close();
    }
  });

  it('deliveryTimeoutMs also bounds batches queued behind a stream the server stopped reading (its disk hangs): none waits for good', async () => {
    r = await startServer({ maxInFlightPerStream: 1 });
    await r.client.createTopic('t');
    publishOf(r).publish = () => new Promise(() => undefined); // a disk that hangs
    const p = r.client.producer({ deliveryTimeoutMs: 1000 });
    // Past the stream's 16 MiB HTTP/2 window: the rest waits in the producer's queue.
    const big = Buffer.alloc(900 << 10, 1);
    const sends = Array.from({ length: 30 }, () => p.sendBatch('t', [{ value: big }], { partition: 0 }).then(() => 'acked', (e: UringmqError) => e.code));
    const got = await Promise.race([Promise.all(sends), sleep(10_000).then(() => null)]);
    assert.ok(got, 'every send settled');
    assert.deepEqual(new Set(got), new Set(['UNAVAILABLE']));
  });

  it('connections past maxConnections are closed on arrival: the client gets UNAVAILABLE, open ones keep working, a new one gets in once one closes', async () => {
    const s = await startServer({ maxConnections: 2 }); // its own client's channel is one
    const extra: Array<{ close(): Promise<void> }> = [];
    // A second connection: a bare HTTP/2 session (clients made with the same options
    // in one process share grpc-js's connection, so connect() would not open one).
    const session = http2.connect(`http://${s.address}`);
    session.on('error', () => undefined);
    try {
      await new Promise((resolve) => session.once('connect', resolve));
      const until = Date.now() + 5000;
      while (s.server.openConnections < 2 && Date.now() < until) await sleep(10);
      assert.equal(s.server.openConnections, 2);
      // Options unlike the first client's: a connection of its own, refused.
      await assert.rejects(connect(s.address, { connectTimeoutMs: 1500, maxMessageBytes: 8 << 20 }), (e: unknown) => e instanceof UringmqError && e.code === 'UNAVAILABLE');
      assert.ok(s.server.refusedConnections >= 1, `refused ${s.server.refusedConnections}`);
      // A producer's stream needs a connection of its own: refused the same way, and
      // the send fails with UNAVAILABLE once its delivery timeout is spent.
      await s.client.createTopic('t', { partitions: 1 });
      const p = s.client.producer({ lingerMs: 0, deliveryTimeoutMs: 1500 });
      await assert.rejects(p.send('t', { value: 'x' }), (e: unknown) => e instanceof UringmqError && e.code === 'UNAVAILABLE' && /it last failed with UNAVAILABLE/.test(e.message));
      await p.close().catch(() => undefined);
      // The admitted connections still serve.
      assert.deepEqual(await s.client.listTopics(), ['t']);
      assert.ok(!session.destroyed);
      const registry = metricsRegistry(s.broker, { server: s.server, processMetrics: false });
      const refusedBefore = s.server.refusedConnections;
      const text = await registry.metrics();
      assert.match(text, /^uringmq_grpc_open_connections 2$/m);
      const refused = Number(/^uringmq_grpc_connections_refused_total (\d+)$/m.exec(text)?.[1]);
      // The producer's stream may still be retrying: between the counts before and after.
      assert.ok(refused >= refusedBefore && refused <= s.server.refusedConnections, `${refusedBefore} ≤ ${refused} ≤ ${s.server.refusedConnections}`);
      session.close();
      while (s.server.openConnections > 1 && Date.now() < until + 5000) await sleep(10);
      const c3 = await connect(s.address, { maxMessageBytes: 8 << 20 });
      extra.push(c3);
      assert.deepEqual(await c3.listTopics(), ['t']);
      assert.equal((await s.broker.describeTopic('t')).partitions[0]!.endOffset, 0, 'nothing written by the refused producer');
    } finally {
      session.destroy();
      for (const c of extra) await c.close();
      await s.stop();
    }
  });

  it('a send that times out because the server refuses its stream says why (RESOURCE_EXHAUSTED at the stream limit)', async () => {
    const s = await startServer({ maxConcurrentStreams: 1 });
    try {
      await s.client.createTopic('t', { partitions: 1 });
      const c = s.client.consumer({ topic: 't', group: 'g' }); // takes the one stream
      const it = c[Symbol.asyncIterator]();
      const first = it.next();
      const until = Date.now() + 10_000;
      while (s.server.openStreams < 1 && Date.now() < until) await sleep(10);
      const p = s.client.producer({ lingerMs: 0, deliveryTimeoutMs: 1500 });
      await assert.rejects(p.send('t', { value: 'x' }), (e: unknown) => e instanceof UringmqError && e.code === 'UNAVAILABLE' && /last failed with RESOURCE_EXHAUSTED/.test(e.message));
      await p.close().catch(() => undefined);
      await c.close();
      void first.catch(() => undefined);
    } finally {
      await s.stop();
    }
  });

  it('a consumer refused its stream at the stream limit (RESOURCE_EXHAUSTED without uringmq-limit: load) retries, and consumes once a stream frees', async () => {
    const s = await startServer({ maxConcurrentStreams: 1 });
    try {
      await s.client.createTopic('t', { partitions: 1 });
      const holder = s.client.consumer({ topic: 't', group: 'g' }); // takes the one stream
      void holder[Symbol.asyncIterator]().next().catch(() => undefined);
      await waitFor(() => s.server.openStreams >= 1, 10_000, 'the first stream');
      const events: ConnectionEvent[] = [];
      const c = s.client.consumer({ topic: 't', group: 'h', from: 'earliest', onConnectionState: (ev) => void events.push(ev) });
      const got = take(c, 1);
      got.catch(() => undefined); // awaited below
      await waitFor(() => events.length > 0, 10_000, 'a connection event');
      const ev = events[0]!;
      assert.equal(ev.state, 'reconnecting');
      if (ev.state === 'reconnecting') {
        assert.equal(ev.error.code, 'RESOURCE_EXHAUSTED');
        assert.match(ev.error.message, /too many open streams/);
        assert.equal(ev.error.limit, undefined);
      }
      await holder.close();
      await s.broker.producer().send('t', { value: 'x' });
      assert.deepEqual((await got).map((m) => m.value.toString()), ['x']);
      assert.ok(events.some((e) => e.state === 'reconnected'));
      await c.close();
    } finally {
      await s.stop();
    }
  });

  it("an address without a port names the broker's default port (50051), not grpc-js's 443; other targets are kept", async () => {
    for (const [a, want] of [
      ['127.0.0.1', '127.0.0.1:50051'],
      ['broker.local', 'broker.local:50051'],
      ['[::1]', '[::1]:50051'],
      ['127.0.0.1:7000', '127.0.0.1:7000'],
      ['[::1]:7000', '[::1]:7000'],
      ['dns:///broker.local:7000', 'dns:///broker.local:7000'],
      ['unix:///run/uringmq.sock', 'unix:///run/uringmq.sock'],
    ] as const)
      assert.equal(withDefaultPort(a), want, a);
    // The client names the address it used.
    const e = await connect('127.0.0.1', { connectTimeoutMs: 200 }).then(
      async (c) => (await c.close(), null), // a broker listens on 50051 here
      (err: UringmqError) => err,
    );
    if (e) assert.match(e.message, /127\.0\.0\.1:50051/);
  });

  it('a connect() that fails closes its channel: no reconnecting in the background', async () => {
    // A listener that takes each connection and closes it: every grpc-js reconnect shows here.
    let accepted = 0;
    const srv = net.createServer((sock) => {
      accepted++;
      sock.destroy();
    });
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
    try {
      const port = (srv.address() as net.AddressInfo).port;
      await assert.rejects(connect(`127.0.0.1:${port}`, { connectTimeoutMs: 600 }), (e: unknown) => e instanceof UringmqError && e.code === 'UNAVAILABLE');
      assert.ok(accepted >= 1);
      const atReject = accepted;
      // grpc-js retries from 100 ms, ×1.6 each time: an open channel would make about
      // three more tries in the next 3 s (at ~0.9, 1.6 and 2.6 s since the first). A
      // closed one may finish the one its backoff had already scheduled, no more.
      await sleep(3000);
      assert.ok(accepted - atReject <= 1, `the failed client kept reconnecting: ${accepted - atReject} more connections`);
    } finally {
      srv.close();
    }
  });

  it('maxConnections counts over every listener of a host name with several addresses', async function () {
    const v6 = net.createServer();
    const hasV6 = await new Promise<boolean>((resolve) => v6.once('error', () => resolve(false)).listen(0, '::1', () => resolve(true)));
    v6.close();
    if (!hasV6) this.skip(); // no IPv6 loopback here
    // grpc-js binds one listener per address a host name resolves to; no name here
    // resolves to two loopback addresses, so one is made up for its resolver.
    const name = 'two-loopbacks.uringmq.test';
    const lookup = dns.promises.lookup;
    let broker: Awaited<ReturnType<typeof openBroker>> | undefined;
    let server: BrokerServer | undefined;
    const sessions: http2.ClientHttp2Session[] = [];
    const open = async (host: string): Promise<{ session: http2.ClientHttp2Session; closed: Promise<void> }> => {
      const session = http2.connect(`http://${host}:${server!.port}`);
      session.on('error', () => undefined);
      sessions.push(session);
      const closed = new Promise<void>((resolve) => session.once('close', () => resolve()));
      await Promise.race([new Promise((resolve) => session.once('connect', resolve)), closed]);
      return { session, closed };
    };
    const settle = async (n: number) => {
      const until = Date.now() + 10_000;
      while (server!.openConnections !== n && Date.now() < until) await sleep(10);
      assert.equal(server!.openConnections, n);
    };
    try {
      (dns.promises as { lookup: unknown }).lookup = (host: string, o?: unknown) =>
        host === name
          ? Promise.resolve([
              { address: '127.0.0.1', family: 4 },
              { address: '::1', family: 6 },
            ])
          : (lookup as (h: string, o?: unknown) => Promise<unknown>)(host, o);
      broker = await openBroker();
      server = await BrokerServer.start({ broker, host: name, port: 0, maxConnections: 2 });
      const listeners = (server as unknown as { server: { http2Servers: Map<net.Server, unknown> } }).server.http2Servers;
      assert.deepEqual([...listeners.keys()].map((l) => (l.address() as net.AddressInfo).address).sort(), ['127.0.0.1', '::1']);
      const a = await open('127.0.0.1');
      await open('[::1]');
      await settle(2);
      // One connection on the IPv6 listener, under its own cap of 2: refused on the total.
      const c = await open('[::1]');
      assert.ok(await Promise.race([c.closed.then(() => true), sleep(10_000).then(() => false)]), 'the third connection was closed on arrival');
      assert.ok(server.refusedConnections >= 1, `refused ${server.refusedConnections}`);
      await settle(2);
      a.session.close();
      await settle(1);
      const d = await open('[::1]');
      await settle(2);
      assert.ok(!d.session.destroyed, 'a slot freed on one listener is taken on the other');
    } finally {
      (dns.promises as { lookup: unknown }).lookup = lookup;
      for (const s of sessions) s.destroy();
      await server?.stop(2000);
      await broker?.close();
    }
  });

  it('maxConnections outside 1..1000000 is refused at start', async () => {
    for (const bad of [0, -1, 1.5, 2_000_000, '10' as unknown as number])
      await assert.rejects(startServer({ maxConnections: bad }), (e: unknown) => e instanceof UringmqError && e.code === 'INVALID_ARGUMENT' && /maxConnections/.test(e.message));
  });

  it('stop() cuts a call still open when its grace ends: every connection is closed when it returns', async () => {
    r = await startServer();
    await r.client.createTopic('t');
    publishOf(r).publish = () => new Promise(() => undefined); // a disk that hangs
    const p = r.client.producer({ deliveryTimeoutMs: 3000 });
    const sent = p.send('t', { value: 'x' }).catch((e: { code?: string }) => e.code);
    await sleep(200); // the request is with the server
    const sessions = (r.server as unknown as { openSessions(): Array<{ destroyed: boolean }> }).openSessions();
    assert.ok(sessions.length >= 1, 'no connection found');
    await r.server.stop(300);
    // grpc-js's forceShutdown left connections it does not track for channelz open.
    assert.deepEqual(sessions.map((s) => s.destroyed), sessions.map(() => true));
    assert.equal(await sent, 'UNAVAILABLE');
  });

  it('stop() does not wait out its grace for an idle connection whose client never answers GOAWAY (a silent raw HTTP/2 peer)', async () => {
    r = await startServer();
    const sock = net.connect(r.server.port, '127.0.0.1');
    sock.on('error', () => undefined);
    sock.on('data', () => undefined); // reads the server's SETTINGS and GOAWAY, answers nothing
    try {
      await new Promise((resolve) => sock.once('connect', resolve));
      // The client preface and an empty SETTINGS frame: a connection, idle, no call.
      sock.write(Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])]));
      await waitFor(() => (r.server as unknown as { openSessions(): unknown[] }).openSessions().length >= 2, 5000, 'the raw connection is a session');
      const closed = new Promise<void>((resolve) => sock.once('close', () => resolve()));
      const t0 = performance.now();
      await r.client.close();
      await r.server.stop(10_000);
      const took = performance.now() - t0;
      assert.ok(took < 5000, `stop() took ${Math.round(took)} ms: it waited out its grace for an idle connection`);
      await Promise.race([closed, sleep(5000).then(() => assert.fail('the idle connection was left open'))]);
    } finally {
      sock.destroy();
    }
  });

  it('stop() called again while the first is under way (a second signal handler) resolves once the broker is closed, not at once', async () => {
    r = await startServer();
    await r.client.createTopic('t');
    await r.client.producer({ lingerMs: 0 }).send('t', { value: 'x' });
    let firstDone = false;
    const first = r.server.stop(2000).then(() => (firstDone = true));
    await r.server.stop(2000);
    // An app's `await server.stop(); process.exit(0)` would exit here: the broker must be closed.
    assert.ok(firstDone, 'the second stop() resolved before the first');
    assert.equal(JSON.parse(fs.readFileSync(path.join(r.broker.dir, 'state.json'), 'utf8')).clean, true);
    await first;
  });

  it("a graceful stop takes the acks a consumer's app made just before it (the client sends them every 5 ms): none of those messages comes again after the restart", async () => {
    r = await startServer();
    await r.client.createTopic('t');
    await r.client.producer().sendBatch('t', Array.from({ length: 10 }, (_, i) => ({ value: `m${i}` })));
    const c = r.client.consumer({ topic: 't', group: 'g', from: 'earliest' });
    for await (const m of c) {
      m.ack();
      // The stop begins in the tick of the last ack, before the client's ack timer sent
      // it; the app goes on (its consumer not closed) while the server stops.
      if (m.offset === 9) {
        await r.server.stop(5000);
        break;
      }
    }
    await c.close();
    const dir = r.broker.dir;
    await r.client.close();
    r = null as unknown as typeof r;
    const b = await openBroker({ dir });
    try {
      assert.deepEqual(await b.committedOffsets('g', 't'), [10], 'acked messages would come again');
    } finally {
      await b.close();
    }
  });

  it('after a lost connection, each of 20 retried batches gets its own offsets back and is written once', async () => {
    r = await startServer();
    await r.client.createTopic('t');
    const srv = publishOf(r);
    const orig = srv.publish.bind(srv);
    let swallow = true;
    // Written, but the acks are lost: the connection then drops.
    srv.publish = (req) => (swallow ? orig(req).then(() => new Promise(() => undefined)) : orig(req));
    const p = r.client.producer();
    const sends = Array.from({ length: 20 }, (_, i) => p.sendBatch('t', [{ value: `m${i}` }], { partition: 0 }));
    const until = Date.now() + 10_000;
    while ((await r.client.describeTopic('t')).partitions[0]!.endOffset < 20 && Date.now() < until) await sleep(20);
    swallow = false;
    // grpc-js's own record of its connections (private; with channelz off it keeps them per listener).
    const listeners = (r.server as unknown as { server: { http2Servers: Map<unknown, { sessions: Set<{ destroy(): void }> }> } }).server.http2Servers;
    let dropped = 0;
    for (const { sessions } of listeners.values()) for (const s of sessions) (s.destroy(), dropped++);
    assert.ok(dropped > 0, 'no connection to drop');
    const got = await Promise.all(sends);
    assert.deepEqual(got.map((x) => x.baseOffset), Array.from({ length: 20 }, (_, i) => i));
    assert.equal((await r.client.describeTopic('t')).partitions[0]!.endOffset, 20, 'written once');
  });

  it('redeliveries bigger than one message go in several: none dead-lettered unread', async () => {
    r = await startServer({ maxMessageBytes: 1 << 20 });
    await r.client.createTopic('t');
    const p = r.client.producer();
    const value = Buffer.alloc(20_000, 0x61);
    for (let i = 0; i < 60; i += 10) await p.sendBatch('t', Array.from({ length: 10 }, () => ({ value })), { partition: 0 });
    const a = r.client.consumer({ topic: 't', group: 'g', from: 'earliest', maxUnacked: 100 });
    const ita = a[Symbol.asyncIterator]();
    for (let i = 0; i < 60; i++) await ita.next(); // held, never acked
    await a.close(); // its 60 messages (1.2 MB) are due for redelivery at once
    const b = r.client.consumer({ topic: 't', group: 'g', from: 'earliest', maxUnacked: 100 });
    const itb = b[Symbol.asyncIterator]();
    const counts: number[] = [];
    const deadline = Date.now() + 20_000;
    while (counts.length < 60 && Date.now() < deadline) {
      const m = await Promise.race([itb.next(), sleep(2000).then(() => null)]);
      if (!m || m.done) continue;
      counts.push(m.value.deliveryCount);
      m.value.ack();
    }
    await b.close();
    assert.equal(counts.length, 60);
    assert.ok(counts.every((c) => c === 2), `delivery counts ${[...new Set(counts)].join(',')}`);
    assert.ok(!(await r.client.listTopics()).includes('t.dlq'), 'messages went to the dead-letter topic');
  });

  it('a consumer ended by a non-retryable error stays ended (no reconnect hides it)', async () => {
    r = await startServer();
    const registry = metricsRegistry(r.broker, { server: r.server, processMetrics: false });
    const c = r.client.consumer({ topic: 'later', group: 'g', from: 'earliest' });
    const it = c.batches()[Symbol.asyncIterator]();
    const first = it.next();
    first.catch(() => undefined); // it rejects before assert.rejects below looks
    // The topic is made once the server has refused the Subscribe (a fixed pause was
    // outlasted by a slow join: the topic was there by then, and nothing was refused).
    const refused = async () => /^uringmq_grpc_streams_ended_total\{method="Subscribe",code="TOPIC_NOT_FOUND"\} [1-9]/m.test(await registry.metrics());
    await waitFor(refused, 10_000, 'the Subscribe refused with TOPIC_NOT_FOUND');
    await r.client.createTopic('later');
    await r.client.producer().send('later', { value: 'x' });
    await assert.rejects(first, (e: { code?: string }) => e.code === 'TOPIC_NOT_FOUND');
    await c.close();
  });

  it('a fatal stream error fails every waiting send at once, also those waiting for an in-flight slot', async () => {
    r = await startServer({ authToken: 'right' });
    const wrong = await connect(r.address, { token: 'wrong' });
    try {
      const p = wrong.producer({ maxInFlight: 2 });
      const t0 = Date.now();
      const sends = Array.from({ length: 12 }, (_, i) => p.sendBatch('t', [{ value: `m${i}` }], { partition: 0 }));
      const results = await Promise.allSettled(sends);
      assert.ok(results.every((x) => x.status === 'rejected' && (x.reason as { code?: string }).code === 'UNAUTHENTICATED'));
      assert.ok(Date.now() - t0 < 10_000, `took ${Date.now() - t0} ms`);
    } finally {
      await wrong.close();
    }
  });

  it('Fetch with maxBytes above the server message limit is capped to fit', async () => {
    r = await startServer({ maxMessageBytes: 1 << 20 });
    await r.client.createTopic('t');
    const value = Buffer.alloc(100_000, 0x62);
    const p = r.client.producer();
    for (let i = 0; i < 30; i++) await p.sendBatch('t', [{ value }], { partition: 0 });
    const got = await r.client.fetch('t', 0, 0, { maxBytes: 20 << 20 });
    assert.ok(got.length > 0 && got.length < 30, `${got.length} messages`);
    assert.deepEqual(got.map((m) => m.offset), Array.from({ length: got.length }, (_, i) => i));
  });
});

describe('gRPC: a per-batch sync on a broker run without it', function () {
  this.timeout(60_000);
  let r: Running;
  let raw: grpc.Client;
  beforeEach(async () => {
    r = await startServer({ brokerOptions: { durability: 'none' } });
    raw = rawClient(r.address);
    await r.client.createTopic('t', { partitions: 2 });
  });
  afterEach(async () => {
    raw.close();
    await r.stop();
  });

  it("a producer with sync: true is acked only after a sync pass, one per batch; other producers' batches make none", async () => {
    const plain = r.client.producer();
    const syncing = r.client.producer({ sync: true });
    const before = r.broker.syncPasses;
    for (let i = 0; i < 3; i++) await plain.sendBatch('t', [{ value: `p${i}` }], { partition: 0 });
    await plain.send('t', { value: 'p', partition: 1 });
    assert.equal(r.broker.syncPasses, before, 'a batch without sync was synced');
    for (let i = 0; i < 3; i++) await syncing.sendBatch('t', [{ value: `s${i}` }], { partition: i % 2 });
    assert.equal(r.broker.syncPasses, before + 3);
    const sent = await syncing.send('t', { value: 'one', partition: 1 });
    assert.equal(r.broker.syncPasses, before + 4);
    assert.equal((await r.client.fetch('t', 1, sent.offset))[0]!.value.toString(), 'one');
    assert.throws(() => r.client.producer({ sync: 'yes' as never }), (e: { code?: string }) => e.code === 'INVALID_ARGUMENT');
  });

  it('PublishRequest.sync from a plain client: plain records and a RecordBatch, each synced before its answer', async () => {
    const before = r.broker.syncPasses;
    await unary(raw, 'publish', { sequence: 1, topic: 't', partition: 0, records: [{ value: Buffer.from('a') }] });
    assert.equal(r.broker.syncPasses, before);
    await unary(raw, 'publish', { sequence: 2, topic: 't', partition: 0, records: [{ value: Buffer.from('b') }], sync: true });
    assert.equal(r.broker.syncPasses, before + 1);
    await unary(raw, 'publish', { sequence: 3, topic: 't', partition: 1, batch: sealBatch(encodeBatch([{ value: 'c' }])), sync: true });
    assert.equal(r.broker.syncPasses, before + 2);
    const got = await r.client.fetch('t', 0, 0);
    assert.deepEqual(got.map((m) => m.value.toString()), ['a', 'b']);
    // A retry with sync of a batch first sent without: a duplicate, answered after a sync pass.
    const idem = sealBatch(encodeBatch([{ value: 'd' }], { producerId: 99, baseSequence: 0 }));
    await unary(raw, 'publish', { sequence: 4, topic: 't', partition: 0, batch: idem });
    assert.equal(r.broker.syncPasses, before + 2);
    const retry = await unary<InstanceType<typeof pb.PublishResponse>>(raw, 'publish', { sequence: 5, topic: 't', partition: 0, batch: idem, sync: true });
    assert.deepEqual([retry.duplicate, Number(retry.base_offset)], [true, 2]);
    assert.equal(r.broker.syncPasses, before + 3);
  });
});

describe('gRPC server: plain records and sequences at their limits', function () {
  this.timeout(60_000);

  /** A varint, for writing fields protobufjs would round (uint64 past 2^53). */
  const varint = (n: bigint) => {
    const out: number[] = [];
    for (; n >= 128n; n >>= 7n) out.push(Number(n & 127n) | 128);
    out.push(Number(n));
    return Buffer.from(out);
  };

  it('a plain-records subscriber is delivered a batch of small records too large as ConsumedRecords for one message: in several, their ranges covering it', async () => {
    // Consistent limits: maxMessageBytes is maxBatchBytes + 64 KiB, and the batch fits in
    // one message; as ConsumedRecords (a few dozen bytes each) its records do not.
    const r = await startServer({ maxMessageBytes: (1 << 20) + (64 << 10), brokerOptions: { maxBatchBytes: 1 << 20 } });
    const c = rawClient(r.address);
    try {
      await r.client.createTopic('t', { partitions: 1 });
      const n = 100_000;
      const batch = sealBatch(encodeBatch(Array.from({ length: n }, (_, i) => ({ value: Buffer.from([i & 0xff]) }))));
      assert.ok(batch.length < 1 << 20);
      await r.broker.publishBatch('t', batch, 0);
      const d = brokerService.subscribe!;
      const s = c.makeBidiStreamRequest(d.path, d.requestSerialize, d.responseDeserialize);
      s.write({ subscribe: { topic: 't', group: 'plain', from: pb.StartFrom.EARLIEST, plain_records: true, max_unacked: 1_000_000, initial_credit: 1_000_000, flow: { min_window: 1_000_000 } } });
      const offsets: number[] = [];
      let next = 0;
      await new Promise<void>((resolve, reject) => {
        s.on('data', (m: InstanceType<typeof pb.SubscribeResponse>) => {
          const dl = m.delivery;
          if (!dl) return;
          assert.equal(Number(dl.from_offset), next, 'the ranges follow each other');
          next = Number(dl.to_offset);
          for (const rec of dl.records ?? []) offsets.push(Number(rec.offset));
          s.write({ acks: { ranges: [{ partition: 0, from_offset: dl.from_offset, to_offset: dl.to_offset }] } });
          if (offsets.length >= n) resolve();
        });
        s.on('error', reject);
      });
      s.end();
      assert.equal(next, n);
      assert.deepEqual(offsets, Array.from({ length: n }, (_, i) => i));
    } finally {
      c.close();
      await r.stop();
    }
  });

  it('a header whose empty value the encoder left out is an empty header', async () => {
    const r = await startServer();
    const c = rawClient(r.address);
    try {
      await r.client.createTopic('t', { partitions: 1 });
      const entry = Buffer.from([0x0a, 0x01, 0x68]); // map entry { key: "h" }, its value left out
      const rec = Buffer.concat([Buffer.from([0x12, 0x01, 0x76, 0x1a, entry.length]), entry]); // Record { value: "v", headers }
      const req = Buffer.concat([Buffer.from([0x12, 0x01, 0x74, 0x2a, rec.length]), rec]); // PublishRequest { topic: "t", records }
      await unary(c, 'publish', req, true);
      const got = await r.broker.read('t', 0, 0);
      assert.deepEqual(got.map((m) => [m.value.toString(), Object.keys(m.headers), m.headers.h?.length]), [['v', ['h'], 0]]);
    } finally {
      c.close();
      await r.stop();
    }
  });

  it('a sequence past 2^53 (not answerable exactly) is INVALID_ARGUMENT: the unary call, and the stream after answering the requests before it; nothing of it is written', async () => {
    const r = await startServer();
    const c = rawClient(r.address);
    try {
      await r.client.createTopic('t', { partitions: 1 });
      const rest = Buffer.from(pb.PublishRequest.encode({ topic: 't', records: [{ value: Buffer.from('v') }] }).finish());
      for (const seq of [2n ** 53n, 2n ** 64n - 1n]) {
        const body = Buffer.concat([Buffer.from([0x08]), varint(seq), rest]);
        const e = await expectStatus(unary(c, 'publish', body, true), grpc.status.INVALID_ARGUMENT);
        assert.match(e.details, /not below 2\^53/);
      }
      const d = brokerService.publishStream!;
      const s = c.makeBidiStreamRequest(d.path, (b: Buffer) => b, d.responseDeserialize, new grpc.Metadata());
      const answers: number[] = [];
      const status = new Promise<grpc.ServiceError | null>((resolve) => {
        s.on('data', (m: { sequence: number }) => answers.push(Number(m.sequence)));
        s.on('error', (e: grpc.ServiceError) => resolve(e));
        s.on('status', (st: grpc.StatusObject) => st.code === grpc.status.OK && resolve(null));
      });
      s.write(Buffer.concat([Buffer.from([0x08]), varint(1n), rest]));
      s.write(Buffer.concat([Buffer.from([0x08]), varint(2n ** 53n + 1n), rest]));
      s.write(Buffer.concat([Buffer.from([0x08]), varint(3n), rest])); // after the bad one: not taken
      s.end();
      assert.equal((await status)?.code, grpc.status.INVALID_ARGUMENT);
      assert.deepEqual(answers, [1]);
      assert.equal((await r.client.describeTopic('t')).partitions[0]!.endOffset, 1);
    } finally {
      c.close();
      await r.stop();
    }
  });

  it("plain records past the broker's maxBatchBytes are refused before they are encoded, and a producer id must be positive", async () => {
    const r = await startServer({ brokerOptions: { maxBatchBytes: 64 * 1024 } });
    const c = rawClient(r.address);
    try {
      await r.client.createTopic('t', { partitions: 1 });
      const records = Array.from({ length: 20 }, () => ({ value: Buffer.alloc(4096) }));
      const e = await expectStatus(unary(c, 'publish', { topic: 't', records }), grpc.status.RESOURCE_EXHAUSTED, 'RECORD_TOO_LARGE');
      assert.match(e.details, /past record 15 of 20/);
      await expectStatus(unary(c, 'publish', { topic: 't', records: [{ value: Buffer.from('x') }], producer_id: -5, base_sequence: 0 }), grpc.status.INVALID_ARGUMENT);
      await expectStatus(unary(c, 'publish', { topic: 't', records: [{ value: Buffer.from('x') }], producer_id: 0, base_sequence: 7 }), grpc.status.INVALID_ARGUMENT);
      assert.equal((await r.client.describeTopic('t')).partitions[0]!.endOffset, 0);
    } finally {
      c.close();
      await r.stop();
    }
  });

  it('a PublishRequest of more than 10000 plain records is refused alone, counted before it is decoded (unary, and on a PublishStream that goes on); nothing of it is written, and 10000 are', async () => {
    const r = await startServer();
    const c = rawClient(r.address);
    try {
      await r.client.createTopic('t', { partitions: 1 });
      const records = (n: number) => Array.from({ length: n }, (_, i) => ({ value: Buffer.from([i & 0xff]) }));
      const e = await expectStatus(unary(c, 'publish', { sequence: 7, topic: 't', partition: 0, records: records(MAX_PLAIN_RECORDS + 1) }), grpc.status.INVALID_ARGUMENT);
      assert.match(e.details, /at most 10000 plain records; this one to t carried 10001/);
      assert.equal((await r.client.describeTopic('t')).partitions[0]!.endOffset, 0);
      await unary(c, 'publish', { topic: 't', partition: 0, records: records(MAX_PLAIN_RECORDS) });
      assert.equal((await r.client.describeTopic('t')).partitions[0]!.endOffset, MAX_PLAIN_RECORDS);

      const d = brokerService.publishStream!;
      const s = c.makeBidiStreamRequest(d.path, d.requestSerialize, d.responseDeserialize, new grpc.Metadata());
      const answers: Array<{ sequence: number; code: string; baseOffset: number }> = [];
      const status = new Promise<grpc.ServiceError | null>((resolve) => {
        s.on('data', (m: InstanceType<typeof pb.PublishResponse>) => answers.push({ sequence: Number(m.sequence), code: m.error?.code ?? '', baseOffset: Number(m.base_offset) }));
        s.on('error', (err: grpc.ServiceError) => resolve(err));
        s.on('status', (st: grpc.StatusObject) => st.code === grpc.status.OK && resolve(null));
      });
      s.write({ sequence: 1, topic: 't', partition: 0, records: records(3 * MAX_PLAIN_RECORDS) });
      s.write({ sequence: 2, topic: 't', partition: 0, records: records(2) });
      s.end();
      assert.equal(await status, null, 'the stream ends cleanly');
      assert.deepEqual(answers, [
        { sequence: 1, code: 'INVALID_ARGUMENT', baseOffset: 0 },
        { sequence: 2, code: '', baseOffset: MAX_PLAIN_RECORDS },
      ]);
      assert.equal((await r.client.describeTopic('t')).partitions[0]!.endOffset, MAX_PLAIN_RECORDS + 2);
    } finally {
      c.close();
      await r.stop();
    }
  });

  it('plain records carrying more than 100000 headers in all are refused alone, counted before they are decoded (unary, and on a PublishStream that goes on); 100000 are taken', async () => {
    const r = await startServer();
    const c = rawClient(r.address);
    try {
      await r.client.createTopic('t', { partitions: 1 });
      const MAX_PLAIN_HEADERS = 100_000;
      // n records of 100 headers each
      const records = (n: number) => {
        const headers: Record<string, Buffer> = {};
        for (let h = 0; h < 100; h++) headers[`h${h}`] = Buffer.from('x');
        return Array.from({ length: n }, () => ({ value: Buffer.from('v'), headers }));
      };
      const over = records(MAX_PLAIN_HEADERS / 100 + 1);
      const decoded = decodePublishRequest(pb.PublishRequest.encode({ sequence: 3, topic: 't', records: over }).finish());
      assert.equal(decoded.records.length, 0, 'not decoded');
      assert.ok(decoded.plainHeadersOver! > MAX_PLAIN_HEADERS);
      const e = await expectStatus(unary(c, 'publish', { sequence: 7, topic: 't', partition: 0, records: over }), grpc.status.INVALID_ARGUMENT);
      assert.match(e.details, /carry at most 100000 headers in all; this one to t carried more/);
      assert.equal((await r.client.describeTopic('t')).partitions[0]!.endOffset, 0);
      await unary(c, 'publish', { topic: 't', partition: 0, records: records(MAX_PLAIN_HEADERS / 100) });
      assert.equal((await r.client.describeTopic('t')).partitions[0]!.endOffset, MAX_PLAIN_HEADERS / 100);

      const d = brokerService.publishStream!;
      const s = c.makeBidiStreamRequest(d.path, d.requestSerialize, d.responseDeserialize, new grpc.Metadata());
      const answers: Array<{ sequence: number; code: string }> = [];
      const status = new Promise<grpc.ServiceError | null>((resolve) => {
        s.on('data', (m: InstanceType<typeof pb.PublishResponse>) => answers.push({ sequence: Number(m.sequence), code: m.error?.code ?? '' }));
        s.on('error', (err: grpc.ServiceError) => resolve(err));
        s.on('status', (st: grpc.StatusObject) => st.code === grpc.status.OK && resolve(null));
      });
      s.write({ sequence: 1, topic: 't', partition: 0, records: over });
      s.write({ sequence: 2, topic: 't', partition: 0, records: records(2) });
      s.end();
      assert.equal(await status, null, 'the stream ends cleanly');
      assert.deepEqual(answers, [
        { sequence: 1, code: 'INVALID_ARGUMENT' },
        { sequence: 2, code: '' },
      ]);
      assert.equal((await r.client.describeTopic('t')).partitions[0]!.endOffset, MAX_PLAIN_HEADERS / 100 + 2);
    } finally {
      c.close();
      await r.stop();
    }
  });

  it('a PublishRequest or SubscribeRequest repeating a field millions of times is refused before protobufjs decodes it (it held the event loop seconds)', async () => {
    // n empty fields of one tag: protobuf lets a field come again, the last one counting
    const repeated = (tag: number, n: number) => {
      const b = Buffer.alloc(2 * n);
      for (let i = 0; i < n; i++) b[2 * i] = tag;
      return b;
    };
    const n = 4_000_000;
    assert.throws(() => decodePublishRequest(repeated(0x12, n)), /more than 64 fields besides the records/); // topic
    const record = repeated(0x12, n); // one record of n `value`s
    const len: number[] = [];
    for (let v = record.length; ; v = Math.floor(v / 128)) {
      if (v < 0x80) {
        len.push(v);
        break;
      }
      len.push((v & 0x7f) | 0x80);
    }
    assert.throws(() => decodePublishRequest(Buffer.concat([Buffer.from([0x2a, ...len]), record])), /a record with more than 64 fields besides its headers/);
    assert.throws(() => decodeSubscribeRequest(repeated(0x0a, n)), /a SubscribeRequest with more than 64 fields/); // subscribe
    // A request of a few fields each way decodes as before.
    assert.equal(decodePublishRequest(Buffer.concat([repeated(0x12, 3), Buffer.from(pb.PublishRequest.encode({ topic: 't', records: [{ value: Buffer.alloc(30_000) }] }).finish())])).topic, 't');
    const r = await startServer();
    const c = rawClient(r.address);
    try {
      const e = await expectStatus(unary(c, 'publish', repeated(0x12, n), true), grpc.status.INVALID_ARGUMENT);
      assert.match(e.details, /more than 64 fields besides the records/);
    } finally {
      c.close();
      await r.stop();
    }
  });

  it('repeats nested in a request (inside a record, a header, an Acks, a range, a SubscribeInit), a group or a truncation behind millions of records, and a wire type protobufjs would misread are refused before protobufjs decodes them', () => {
    const SIZE = 16 << 20;
    const varint = (n: number) => {
      const o: number[] = [];
      for (; n >= 0x80; n = Math.floor(n / 128)) o.push((n & 0x7f) | 0x80);
      o.push(n);
      return o;
    };
    const ld = (tag: number, body: Buffer) => Buffer.concat([Buffer.from([tag, ...varint(body.length)]), body]);
    /** `unit` again and again, `bytes` at most */
    const rep = (unit: number[], bytes: number) => {
      const n = Math.floor(bytes / unit.length);
      const b = Buffer.alloc(n * unit.length);
      for (let i = 0; i < n; i++) b.set(unit, i * unit.length);
      return b;
    };
    const RECORD = 0x2a;
    const HEADER = 0x1a;
    // Each 16 MB; how long protobufjs (or the walk before it) held the event loop before
    // these were refused, 2026-12-06: in the comments.
    const cases: Array<[string, () => Uint8Array, (b: Uint8Array) => unknown, RegExp]> = [
      // 2.4 s (a walk per record), now counted: refused for the records bound
      ['8M empty records', () => rep([RECORD, 0], SIZE), decodePublishRequest, /^$/],
      // 15 s: the walk gave up at the group, protobufjs decoded the records and skipped it
      ['8M empty records, then a group', () => Buffer.concat([rep([RECORD, 0], SIZE - 2), Buffer.from([0x4b, 0x4c])]), decodePublishRequest, /malformed PublishRequest: wire type 3 \(field 9\)/],
      // 12 s, then "index out of range"
      ['8M empty records, then a truncated one', () => Buffer.concat([rep([RECORD, 0], SIZE - 4), Buffer.from([RECORD, 0x05, 0x01])]), decodePublishRequest, /malformed PublishRequest: field 5 at byte \d+ runs past the end/],
      // 61 ms
      ['a header of 8M empty keys', () => ld(RECORD, ld(HEADER, rep([0x0a, 0], SIZE - 16))), decodePublishRequest, /a header with more than 64 fields/],
      // 1.9 s: 8M headers, protobufjs past the walk's group
      ['a record of 8M headers, then a group', () => Buffer.concat([ld(RECORD, rep([HEADER, 0], SIZE - 10)), Buffer.from([0x4b, 0x4c])]), decodePublishRequest, /malformed PublishRequest: wire type 3/],
      // the walk took `key` (field 1) as a varint, protobufjs as a length: 16 MB of what the walk saw as one unknown field decoded as 8M headers
      ['a varint key before 8M headers', () => ld(RECORD, Buffer.concat([Buffer.from([0x08, ...varint(SIZE - 40)]), ld(0x7a, rep([HEADER, 0], SIZE - 40))])), decodePublishRequest, /malformed record: field 1 has wire type 0, not 2/],
      // 128 ms
      ['an Acks of 8M unknown fields', () => ld(0x12, rep([0x10, 0], SIZE - 8)), decodeSubscribeRequest, /an Acks with more than 64 fields besides its ranges/],
      // 243 ms
      ['an AckRange of 8M partitions', () => ld(0x12, ld(0x0a, rep([0x08, 0], SIZE - 16))), decodeSubscribeRequest, /an AckRange with more than 64 fields/],
      // 260 ms
      ['a SubscribeInit of 8M topics', () => ld(0x0a, rep([0x0a, 0], SIZE - 8)), decodeSubscribeRequest, /a SubscribeInit with more than 64 fields/],
      // 247 ms
      ['a Nack of 8M fields', () => ld(0x1a, rep([0x08, 0], SIZE - 8)), decodeSubscribeRequest, /a Nack with more than 64 fields/],
      // 254 ms
      ['a ReturnedRange of 8M fields', () => ld(0x3a, ld(0x0a, rep([0x08, 0], SIZE - 16))), decodeSubscribeRequest, /a ReturnedRange with more than 64 fields/],
      // 3.3 s
      ['an Acks of 8M ranges, then a group', () => Buffer.concat([ld(0x12, rep([0x0a, 0], SIZE - 10)), Buffer.from([0x4b, 0x4c])]), decodeSubscribeRequest, /malformed SubscribeRequest: wire type 3/],
    ];
    const report: string[] = [];
    for (const [name, make, decode, why] of cases) {
      const b = make();
      const t0 = performance.now();
      let err: Error | null = null;
      let res: unknown;
      try {
        res = decode(b);
      } catch (e) {
        err = e as Error;
      }
      report.push(`${name}: ${(performance.now() - t0).toFixed(1)} ms`);
      if (why.source === '^$') assert.equal((res as { plainRecordsOver?: number }).plainRecordsOver, SIZE / 2, name);
      else assert.match(err?.message ?? `decoded: ${JSON.stringify(res).slice(0, 100)}`, why, name);
    }
    console.log(`      event loop held per 16 MB request: ${report.join('; ')}`);
  });

  it('a large request as another encoder may write it (fields in any order, defaults present, unknown fields of every wire type at every level) is walked and decoded as protobufjs decodes it', () => {
    // What a newer .proto or another language's encoder may send: the walk (done past
    // 2 * MAX_PLAIN_RECORDS bytes, or 2 * MAX_ACK_RANGES) must not refuse any of it.
    const W = () => pb.PublishRequest.encode({}); // a protobufjs Writer
    const unknowns = (w: ReturnType<typeof W>) => w.uint32((100 << 3) | 0).uint64(5).uint32((101 << 3) | 1).fixed64(7).uint32((102 << 3) | 2).bytes(Buffer.from('abc')).uint32((103 << 3) | 5).fixed32(9);
    const record = (i: number) => {
      const w = unknowns(W()).uint32((4 << 3) | 0).int64(0); // a default, present
      for (let h = 0; h < 3; h++) {
        // a map entry with its value before its key
        const e = unknowns(W().uint32((2 << 3) | 2).bytes(Buffer.from('v')).uint32((1 << 3) | 2).string(`k${h}`));
        w.uint32((3 << 3) | 2).bytes(e.finish());
      }
      return w.uint32((2 << 3) | 2).bytes(Buffer.alloc(20, i)).uint32((1 << 3) | 2).bytes(Buffer.from(`key${i}`)).finish();
    };
    const w = unknowns(W()).uint32((8 << 3) | 0).bool(false).uint32((7 << 3) | 0).int32(-1).uint32((6 << 3) | 0).int64(0);
    for (let i = 0; i < 2000; i++) w.uint32((5 << 3) | 2).bytes(record(i));
    w.uint32((3 << 3) | 0).uint32(0).uint32((2 << 3) | 2).string('t').uint32((1 << 3) | 0).uint64(0).uint32((4 << 3) | 2).bytes(Buffer.alloc(0));
    const req = w.finish();
    assert.ok(req.length > 2 * MAX_PLAIN_RECORDS);
    assert.deepEqual(decodePublishRequest(req), pb.PublishRequest.decode(req));
    assert.deepEqual(Object.keys(decodePublishRequest(req).records[1999]!.headers!), ['k0', 'k1', 'k2']);
    // Subscribe: ranges with their fields reversed and unknown fields, in Acks and Returned, and a SubscribeInit with every field.
    const ranges = (n: number, fields: number) => {
      const a = unknowns(W());
      for (let i = 0; i < n; i++) {
        const r = W();
        for (let f = fields; f >= 1; f--) r.uint32(f << 3).uint64(f === 2 ? i : f === 3 ? i + 1 : 1);
        a.uint32((1 << 3) | 2).bytes(unknowns(r).finish());
      }
      return a.finish();
    };
    for (const [field, n] of [[2, 4], [7, 5]] as const) {
      const s = unknowns(W()).uint32((field << 3) | 2).bytes(ranges(30_000, n)).finish();
      assert.ok(s.length > 2 * MAX_ACK_RANGES);
      assert.deepEqual(decodeSubscribeRequest(s), pb.SubscribeRequest.decode(s));
    }
    const flow = unknowns(W().uint32(5 << 3).uint32(1).uint32(1 << 3).uint32(16)).finish();
    const init = unknowns(W().uint32(12 << 3).bool(false).uint32((11 << 3) | 2).bytes(flow).uint32(10 << 3).uint32(0).uint32(9 << 3).bool(true))
      .uint32((8 << 3) | 2).string('').uint32(7 << 3).uint32(5).uint32(6 << 3).uint32(0).uint32(5 << 3).uint32(0).uint32(4 << 3).int64(-1).uint32(3 << 3).uint32(1)
      .uint32((2 << 3) | 2).string('g').uint32((1 << 3) | 2).string('t').uint32((200 << 3) | 2).bytes(Buffer.alloc(2 * MAX_ACK_RANGES)) // a large unknown field
      .finish();
    const sub = W().uint32((1 << 3) | 2).bytes(init).finish();
    assert.deepEqual(decodeSubscribeRequest(sub), pb.SubscribeRequest.decode(sub));
  });

  it('the server decodes a PublishRequest over the plain-records bound to its other fields, and refuses a malformed one', () => {
    const fields = { sequence: 9, topic: 'tt', partition: 3, producer_id: 5, base_sequence: 11, sync: true };
    const over = decodePublishRequest(pb.PublishRequest.encode({ ...fields, records: Array.from({ length: MAX_PLAIN_RECORDS + 5 }, () => ({ value: Buffer.from('v'), headers: { h: Buffer.from('x') } })) }).finish());
    assert.equal(over.plainRecordsOver, MAX_PLAIN_RECORDS + 5);
    assert.deepEqual([Number(over.sequence), over.topic, over.partition, Number(over.producer_id), over.base_sequence, over.sync, over.records.length], [9, 'tt', 3, 5, 11, true, 0]);
    const within = decodePublishRequest(pb.PublishRequest.encode({ ...fields, records: [{ value: Buffer.from('v') }] }).finish());
    assert.equal(within.plainRecordsOver, undefined);
    assert.equal(within.records.length, 1);
    // Malformed past the size the walk takes: refused by the walk, which says where
    // (protobufjs read to the end before it said so: see the next test).
    const body = Buffer.from(pb.PublishRequest.encode({ ...fields, records: Array.from({ length: MAX_PLAIN_RECORDS + 1 }, () => ({ value: Buffer.from('v') })) }).finish());
    for (const [bad, why] of [
      [body.subarray(0, body.length - 1), /malformed PublishRequest: a truncated varint at byte \d+/],
      [Buffer.concat([body, Buffer.from([0x2a, 0x05, 0x01])]), /malformed PublishRequest: field 5 at byte \d+ runs past the end of its message/],
      [Buffer.concat([body, Buffer.from([0x0b])]), /malformed PublishRequest: wire type 3 \(field 1\)/],
    ] as const) {
      assert.throws(() => pb.PublishRequest.decode(bad), 'malformed');
      assert.throws(() => decodePublishRequest(bad), why);
    }
  });

  it('a plain-records Fetch answers at most 10000 records, however many fit, and the next fetch goes on', async () => {
    const r = await startServer();
    const c = rawClient(r.address);
    try {
      await r.client.createTopic('t', { partitions: 1 });
      await r.broker.publishBatch('t', sealBatch(encodeBatch(Array.from({ length: 25_000 }, () => ({ value: Buffer.from('v') })))), 0);
      const got: number[] = [];
      for (let offset = 0, calls = 0; offset < 25_000 && calls < 10; calls++) {
        const res = await unary<{ records: Array<{ offset: number }> }>(c, 'fetch', { topic: 't', partition: 0, offset, plain_records: true, max_bytes: 8 << 20 });
        got.push(res.records.length);
        offset = Number(res.records[res.records.length - 1]!.offset) + 1;
      }
      assert.deepEqual(got, [MAX_PLAIN_RECORDS, MAX_PLAIN_RECORDS, 5000]);
    } finally {
      c.close();
      await r.stop();
    }
  });

  it('a plain-records Fetch answer always fits in maxMessageBytes, however small the records: as many as fit, and the next fetch goes on', async () => {
    const r = await startServer({ maxMessageBytes: 64 * 1024 });
    const c = rawClient(r.address);
    try {
      await r.client.createTopic('t', { partitions: 2 });
      for (let i = 0; i < 200; i++) await r.broker.publishBatch('t', sealBatch(encodeBatch(Array.from({ length: 127 }, () => ({ value: Buffer.alloc(0) })))), 1);
      let offset = 0;
      for (let calls = 0; offset < 200 * 127 && calls < 1000; calls++) {
        const res = await unary<{ records: Array<{ offset: number }> }>(c, 'fetch', { topic: 't', partition: 1, offset, plain_records: true });
        assert.ok(res.records.length > 0, `no records at ${offset}`);
        assert.equal(Number(res.records[0]!.offset), offset);
        offset = Number(res.records[res.records.length - 1]!.offset) + 1;
      }
      assert.equal(offset, 200 * 127);
    } finally {
      c.close();
      await r.stop();
    }
  });
});

describe('gRPC server: Fetch long-polls', function () {
  this.timeout(60_000);
  it('are bounded in number (more are answered at once) and end when their connection goes', async () => {
    const r = await startServer();
    try {
      await r.client.createTopic('t', { partitions: 1 });
      const body = pb.FetchRequest.encode({ topic: 't', partition: 0, offset: 0, max_wait_ms: 30_000 }).finish();
      const framed = Buffer.alloc(5 + body.length);
      framed.writeUInt32BE(body.length, 1);
      framed.set(body, 5);
      const headers = { ':method': 'POST', ':path': '/uringmq.v1.Broker/Fetch', 'content-type': 'application/grpc', te: 'trailers' };
      const session = http2.connect(`http://${r.address}`);
      session.on('error', () => undefined);
      let answered = 0;
      for (let i = 0; i < 1100; i++) {
        const st = session.request(headers);
        st.on('error', () => undefined);
        st.on('response', () => undefined);
        st.on('end', () => answered++);
        st.resume();
        st.end(framed);
        if (i % 100 === 99) await sleep(10);
      }
      const longPolls = (r.server as unknown as { longPolls: { size: number } }).longPolls;
      const until = Date.now() + 10_000;
      while (longPolls.size + answered < 1100 && Date.now() < until) await sleep(20);
      assert.equal(longPolls.size, 1024);
      assert.equal(answered, 1100 - 1024, 'the ones past the bound are answered at once');
      session.destroy();
      while (longPolls.size > 0 && Date.now() < until) await sleep(20);
      assert.equal(longPolls.size, 0, 'long-polls of a connection that went keep waiting');
    } finally {
      await r.stop();
    }
  });

  it("end with TOPIC_NOT_FOUND when their topic is deleted, also made again and written meanwhile: not empty at their deadline, nor with the new topic's records", async () => {
    const r = await startServer();
    try {
      const longPolls = (r.server as unknown as { longPolls: { size: number } }).longPolls;
      for (const again of [false, true]) {
        await r.client.createTopic('t', { partitions: 1 });
        await r.client.producer().send('t', { value: 'old' });
        let timer: NodeJS.Timeout | undefined;
        const polled = Promise.race([
          r.client.fetch('t', 0, 1, { maxWaitMs: 30_000 }).then(
            (msgs) => `answered ${JSON.stringify(msgs.map((m) => m.value.toString()))}`,
            (e: UringmqError) => e.code,
          ),
          // Far inside its 30 s: a poll the delete does not end is still waiting here.
          new Promise<string>((resolve) => (timer = setTimeout(() => resolve('still waiting after 10 s'), 10_000))),
        ]);
        await waitFor(() => longPolls.size === 1, 10_000, 'the fetch waits');
        await r.client.deleteTopic('t');
        if (again) {
          await r.client.createTopic('t', { partitions: 1 });
          await r.client.producer().sendBatch('t', [{ value: 'new0' }, { value: 'new1' }]);
        }
        assert.equal(await polled, 'TOPIC_NOT_FOUND', again ? 'deleted and made again' : 'deleted');
        clearTimeout(timer);
        assert.equal(longPolls.size, 0);
        await r.client.deleteTopic('t').catch(() => undefined);
      }
    } finally {
      await r.stop();
    }
  });
});

describe('gRPC client producer: send order, retries and close', function () {
  this.timeout(60_000);

  it('a batch refused for a full write queue keeps its place: batches waiting for the in-flight slot, or sent after, land after it', async () => {
    // A slow disk and a small queue: another client's 200 KiB batch leaves no room for 100 KiB more for 300 ms.
    const r = await startServer({ brokerOptions: { testIoDelayMs: 300, maxQueuedBytes: 256 * 1024, writeHighWaterBytes: 256 * 1024 } });
    const other = await connect(r.address);
    try {
      await r.client.createTopic('t', { partitions: 2 });
      for (const idempotent of [true, false]) {
        const before = (await r.client.describeTopic('t')).partitions[0]!.endOffset;
        const p = r.client.producer({ idempotent, lingerMs: 0, maxInFlight: 1 });
        await p.sendBatch('t', [{ value: 'X0' }], { partition: 0 });
        const filler = other.producer({ lingerMs: 0 }).sendBatch('t', [{ value: Buffer.alloc(200 * 1024) }], { partition: 1 });
        for (let i = 0; i < 1000 && r.broker.queuedBytes === 0; i++) await sleep(1);
        assert.ok(r.broker.queuedBytes > 0, 'the filler is waiting for the disk');
        const x1 = p.sendBatch('t', [{ value: Buffer.alloc(100 * 1024, 'a') }], { partition: 0 }); // refused, retried after 100 ms
        const x2 = p.sendBatch('t', [{ value: 'X2' }], { partition: 0 }); // waits for the slot
        await sleep(30);
        const x3 = p.sendBatch('t', [{ value: 'X3' }], { partition: 0 }); // called while X1 waits to go again
        await Promise.all([x1, x2, x3, filler]);
        const got = (await r.client.fetch('t', 0, before)).map((m) => (m.value.length > 100 ? 'X1' : m.value.toString()));
        assert.deepEqual(got, ['X0', 'X1', 'X2', 'X3'], `idempotent ${idempotent}`);
      }
    } finally {
      await other.close();
      await r.stop();
    }
  });

  it('a sendBatch called after a send to the same partition lands after it, and before a send called after it, also when the first waits for a partition count', async () => {
    const r = await startServer();
    try {
      await r.client.createTopic('t', { partitions: 1 });
      await r.client.createTopic('other', { partitions: 1 });
      const p = r.client.producer({ lingerMs: 0 });
      await r.client.describeTopic('t'); // t's partition count is known to the client, other's is not
      const sends = [
        p.send('other', { value: 'o' }), // waits for other's partition count: the sends after it wait in line
        p.send('t', { value: 'A', partition: 0 }),
        p.sendBatch('t', [{ value: 'B' }], { partition: 0 }),
        p.send('t', { value: 'C', partition: 0 }),
      ];
      await Promise.all(sends);
      // With nothing in line: a sendBatch cuts the records sent before it, and goes before those sent after.
      const d = p.send('t', { value: 'D', partition: 0 });
      const e = p.sendBatch('t', [{ value: 'E' }], { partition: 0 });
      const f = p.send('t', { value: 'F', partition: 0 });
      await Promise.all([d, e, f]);
      assert.deepEqual((await r.client.fetch('t', 0, 0)).map((m) => m.value.toString()), ['A', 'B', 'C', 'D', 'E', 'F']);
    } finally {
      await r.stop();
    }
  });

  it('a batch handed a freed in-flight slot keeps its place: a batch cut in the same turn, before it resumes, does not take its sequence first', async () => {
    // A slow disk: batches sent while another client's batch is written are acked
    // together, and the client handles those acks in one turn: the first frees a slot
    // for W2 (a waiter), the next cuts X's accumulator while W2 has not resumed yet.
    const r = await startServer({ brokerOptions: { testIoDelayMs: 100 } });
    const other = await connect(r.address);
    try {
      await r.client.createTopic('t', { partitions: 2 });
      await r.client.describeTopic('t');
      await other.describeTopic('t');
      const filler = other.producer({ lingerMs: 0 });
      for (let round = 0; round < 5; round++) {
        const p = r.client.producer({ lingerMs: 0, maxInFlight: 4 });
        const start = (await r.client.describeTopic('t')).partitions[0]!.endOffset;
        const sends: Array<Promise<unknown>> = [filler.sendBatch('t', [{ value: 'filler' }], { partition: 1 })];
        await sleep(10);
        for (let i = 0; i < 4; i++) sends.push(p.sendBatch('t', [{ value: `A${i}` }], { partition: 0 }));
        sends.push(p.sendBatch('t', [{ value: 'W1' }], { partition: 0 })); // wait for a slot
        sends.push(p.sendBatch('t', [{ value: 'W2' }], { partition: 0 }));
        await sleep(5);
        sends.push(p.send('t', { value: 'X', partition: 0 })); // its linger ends with every slot taken
        await Promise.all(sends);
        assert.deepEqual((await r.client.fetch('t', 0, start)).map((m) => m.value.toString()), ['A0', 'A1', 'A2', 'A3', 'W1', 'W2', 'X'], `round ${round}`);
        await p.close();
      }
    } finally {
      await other.close();
      await r.stop();
    }
  });

  it('a send that waits for its topic\'s partition count through a short outage lands once the server is back, as sends with a known count do', async () => {
    const r = await startServer();
    const proxy = await tcpProxy(r.server.port); // refuses connections for a while
    const c = await connect(`127.0.0.1:${proxy.port}`);
    try {
      await r.client.createTopic('known');
      await r.client.createTopic('fresh');
      const p = c.producer({ deliveryTimeoutMs: 20_000 });
      await p.send('known', { value: 'k0' });
      proxy.mode = 'refuse';
      proxy.cut();
      await sleep(100);
      const known = p.send('known', { value: 'k1' });
      const fresh = p.send('fresh', { value: 'f1' }); // its partition count is not known yet
      const settled = Promise.allSettled([known, fresh]);
      await sleep(1000);
      proxy.mode = 'forward';
      const [k, f] = await settled;
      assert.equal(k.status, 'fulfilled');
      assert.equal(f.status, 'fulfilled', `the send to a topic whose partition count was unknown failed: ${String((f as PromiseRejectedResult).reason)}`);
      assert.deepEqual((await r.client.fetch('fresh', 0, 0)).map((m) => m.value.toString()), ['f1']);
    } finally {
      await c.close();
      await proxy.close();
      await r.stop();
    }
  });

  it("a send waiting for its topic's partition count behind a network gone silent fails at its deliveryTimeoutMs, not at the lookup's own 30 s deadline", async () => {
    const r = await startServer();
    const proxy = await tcpProxy(r.server.port);
    const c = await connect(`127.0.0.1:${proxy.port}`);
    try {
      await r.client.createTopic('t');
      const p = c.producer({ deliveryTimeoutMs: 1500 });
      proxy.mode = 'silent'; // connections up, nothing passes: the lookup goes unanswered
      proxy.pause();
      const t0 = Date.now();
      const sent = p.send('t', { value: 'x' }).then(
        () => 'acked',
        (e: UringmqError) => e,
      );
      const flushed = p.flush().then(() => Date.now() - t0);
      const e = await sent;
      const took = Date.now() - t0;
      assert.ok(e instanceof UringmqError && e.code === 'UNAVAILABLE', String(e));
      assert.match(e.message, /partition count of t was not known within deliveryTimeoutMs \(1500 ms\)/);
      // Well short of the 30 s a describeTopic waits: it failed at its own deadline.
      assert.ok(took < 15_000, `the send failed after ${took} ms`);
      assert.ok((await flushed) < 15_000, 'flush() waited as long');
    } finally {
      await c.close({ timeoutMs: 500 });
      await proxy.close();
      await r.stop();
    }
  });

  it("a send with little time left does not cut short the partition-count lookup that sends with more time share", async () => {
    // The lookup is one per topic, whoever asks: it was made with the deadline of the
    // send that began it, and failed with it every send that had joined it, however
    // much longer they had (each then waited a backoff and made it again, and failed
    // if its own deadline came before that; sends with short deadlines that keep
    // beginning lookups kept every other send from ever learning the count).
    const r = await startServer();
    const proxy = await tcpProxy(r.server.port);
    const c = await connect(`127.0.0.1:${proxy.port}`);
    try {
      await r.client.createTopic('t');
      await c.listTopics(); // the connection is up: paused, it holds what is sent until resumed
      let lookups = 0;
      const describe = c.describeTopic.bind(c);
      c.describeTopic = (...args: Parameters<Client['describeTopic']>) => (lookups++, describe(...args));
      const hurried = c.producer({ deliveryTimeoutMs: 300 });
      const patient = c.producer({ deliveryTimeoutMs: 60_000 });
      proxy.pause();
      const failed = hurried.send('t', { value: 'a' }).then(
        () => 'acked',
        (e: unknown) => e,
      );
      const sent = patient.send('t', { value: 'b' });
      const e = await failed;
      assert.ok(e instanceof UringmqError && e.code === 'UNAVAILABLE', String(e));
      // The patient send goes on waiting for the same lookup (failed with the hurried
      // one, it made another after a 100 ms backoff).
      await waitFor(() => lookups > 1, 1000).catch(() => undefined);
      assert.equal(lookups, 1, 'the lookup ended with the hurried send, and was made again');
      proxy.resume();
      assert.equal((await sent).offset, 0);
      assert.equal(lookups, 1);
      await Promise.all([hurried.close(), patient.close()]);
    } finally {
      await c.close({ timeoutMs: 500 });
      await proxy.close();
      await r.stop();
    }
  });

  it('a send called while close() flushes is refused, and no stream opens after close', async () => {
    const r = await startServer();
    try {
      await r.client.createTopic('t', { partitions: 1 });
      const p = r.client.producer({ lingerMs: 1000 });
      await r.client.describeTopic('t');
      const a = p.send('t', { value: 'a', partition: 0 });
      const closing = p.close();
      await sleep(0);
      await assert.rejects(p.send('t', { value: 'b', partition: 0 }), (e: UringmqError) => e.code === 'BROKER_CLOSED');
      await assert.rejects(p.sendBatch('t', [{ value: 'c' }], { partition: 0 }), (e: UringmqError) => e.code === 'BROKER_CLOSED');
      await closing;
      assert.equal((await a).offset, 0);
      await sleep(1100); // past the linger a late record would have waited
      assert.equal((p as unknown as { stream: unknown }).stream, null);
      assert.deepEqual((await r.client.fetch('t', 0, 0)).map((m) => m.value.toString()), ['a']);
    } finally {
      await r.stop();
    }
  });
});

// Embedded, an ack or nack names the partition's commitOffset count it was delivered
// under (test/10, "late acks and nacks after commitOffset moved the partition"); over
// gRPC it named offsets only, so a member delivered an offset again after a
// CommitOffset rewind had its ack of the first delivery taken for the second.
describe('gRPC Subscribe: acks, nacks and returned ranges after CommitOffset moved the partition (Delivery.epoch)', function () {
  this.timeout(60_000);
  let r: Running;
  let raw: grpc.Client;
  beforeEach(async () => {
    r = await startServer();
    raw = rawClient(r.address);
    await r.client.createTopic('t', { partitions: 1 });
    await r.broker.producer().sendBatch('t', [{ value: 'a' }, { value: 'b' }], { partition: 0 });
  });
  afterEach(async () => {
    raw.close();
    await r.stop();
  });

  const committed = async () => (await r.broker.committedOffsets('g', 't'))[0];
  const unacked = () => r.broker.groups.describe('t').find((g) => g.group === 'g')?.members[0]?.unacked;

  type Delivery = NonNullable<InstanceType<typeof pb.SubscribeResponse>['delivery']>;
  /** A Subscribe stream of a client written from the .proto alone, and the deliveries it got. */
  function rawSubscriber(maxDeliveries: number, plain = false) {
    const d = brokerService.subscribe!;
    const s = raw.makeBidiStreamRequest(d.path, d.requestSerialize, d.responseDeserialize);
    const got: Delivery[] = [];
    let err: unknown = null;
    s.on('data', (m: InstanceType<typeof pb.SubscribeResponse>) => {
      if (m.delivery) got.push(m.delivery);
    });
    s.on('error', (e) => (err = e));
    s.write({ subscribe: { topic: 't', group: 'g', from: pb.StartFrom.EARLIEST, ack_deadline_ms: 60_000, max_deliveries: maxDeliveries, plain_records: plain } });
    const next = async (n: number) => {
      await waitFor(() => got.length >= n || err !== null, 10_000, `delivery ${n}`);
      assert.equal(err, null, `stream failed: ${(err as grpc.ServiceError | null)?.details}`);
      return got[n - 1]!;
    };
    return { s, next };
  }

  for (const how of ['ack', 'nack'] as const)
    it(`the client's late ${how} of a delivery before a rewind does not reach the one the rewind made to the same member`, async () => {
      const c = r.client.consumer({ topic: 't', group: 'g', from: 'earliest', ackDeadlineMs: 60_000, maxDeliveries: 1 });
      try {
        const it = c[Symbol.asyncIterator]();
        const before = [(await it.next()).value!, (await it.next()).value!];
        await r.client.commitOffset('g', 't', 0, 0); // process them again
        const again = [(await it.next()).value!, (await it.next()).value!];
        assert.deepEqual(
          again.map((m) => [m.offset, m.deliveryCount]),
          [
            [0, 1],
            [1, 1],
          ],
        );
        if (how === 'ack') before[0]!.ack();
        else before[0]!.nack();
        again[1]!.ack(); // queued right after: one range [0, 2) unless the epochs keep them apart
        // The ack of 1 is taken once the broker got it; the late ack or nack came first.
        await waitFor(() => (unacked() ?? 2) <= 1, 10_000, 'the ack of offset 1');
        await sleep(300); // (a nack's dead-letter move, had it been taken)
        assert.equal(unacked(), 1, `the late ${how} took the delivery of offset 0 under way`);
        assert.equal(await committed(), 0, 'the late ack took the delivery still being processed');
        assert.ok(!(await r.broker.listTopics()).includes('t.dlq'), 'the late nack dead-lettered the delivery under way');
        again[0]!.ack();
        await waitFor(async () => (await committed()) === 2, 10_000, 'the commit of both');
      } finally {
        await c.close();
      }
    });

  for (const plain of [false, true])
    it(`a raw client${plain ? ' of plain records' : ''}: Delivery.epoch grows with each CommitOffset; an ack of another epoch is ignored, of epoch 0 (unchecked) taken as before`, async () => {
      const { s, next } = rawSubscriber(1, plain);
      const first = await next(1);
      const epoch = first.epoch ?? 0;
      assert.ok(epoch >= 1, `Delivery.epoch ${epoch}`);
      assert.deepEqual([Number(first.from_offset), Number(first.to_offset)], [0, 2]);
      await r.client.commitOffset('g', 't', 0, 0);
      const second = await next(2);
      assert.deepEqual([Number(second.from_offset), Number(second.to_offset), second.epoch], [0, 2, epoch + 1]);
      s.write({ acks: { ranges: [{ partition: 0, from_offset: 0, to_offset: 1, epoch }] } }); // late: ignored
      s.write({ acks: { ranges: [{ partition: 0, from_offset: 1, to_offset: 2, epoch: second.epoch }] } });
      await waitFor(() => unacked() === 1, 10_000, 'the ack of offset 1');
      assert.equal(await committed(), 0, 'an ack of the epoch before the rewind was taken');
      s.write({ nack: { partition: 0, offset: 0, delivery_count: 1, epoch } }); // late: ignored (max_deliveries 1 would dead-letter it)
      s.write({ acks: { ranges: [{ partition: 0, from_offset: 0, to_offset: 1 }] } }); // no epoch: whatever is outstanding, as before the field
      await waitFor(async () => (await committed()) === 2, 10_000, 'the commit of both');
      assert.ok(!(await r.broker.listTopics()).includes('t.dlq'), 'the late nack dead-lettered the delivery under way');
      s.end();
    });

  for (const [what, stale, counts] of [
    ['of the epoch before a rewind is ignored: that delivery counts', true, [2, 2]],
    ['without an epoch is taken as before: that delivery is not counted', false, [1, 1]],
  ] as const)
    it(`a returned range ${what}`, async () => {
      const { s, next } = rawSubscriber(5);
      const first = await next(1);
      await r.client.commitOffset('g', 't', 0, 0);
      await next(2);
      s.write({ returned: { ranges: [{ partition: 0, from_offset: 0, to_offset: 2, delivery_count: 1, epoch: stale ? first.epoch : 0 }] } });
      await new Promise<void>((resolve) => s.on('status', () => resolve())); // the member left: the broker ended the call
      const c = r.client.consumer({ topic: 't', group: 'g', from: 'earliest', ackDeadlineMs: 60_000, maxDeliveries: 5 });
      try {
        const got = await take(c, 2);
        assert.deepEqual(
          got.map((m) => m.deliveryCount),
          counts,
        );
      } finally {
        await c.close();
      }
    });
});

describe('gRPC client consumer: a membership lost with a broken or stalled connection', function () {
  this.timeout(60_000);
  // A server, and a client that reaches it through a TCP proxy the tests can cut or pause.
  let r: Running;
  let proxy: Awaited<ReturnType<typeof tcpProxy>>;
  let c: Client;
  beforeEach(async () => {
    r = await startServer();
    proxy = await tcpProxy(r.server.port);
    c = await connect(`127.0.0.1:${proxy.port}`);
  });
  afterEach(async () => {
    await c.close();
    await proxy.close();
    await r.stop();
  });
  /** The consumer's next message is `value`: it went on, neither ended nor stuck. */
  async function goesOnWith(it: AsyncIterator<{ value: Buffer }>, value: string): Promise<void> {
    const next = await Promise.race([it.next().then((x) => x, (e: UringmqError) => e), sleep(15_000).then(() => 'timeout' as const)]);
    assert.ok(!(next instanceof Error), `the consumer ended: ${String(next)}`);
    assert.notEqual(next, 'timeout');
    assert.equal((next as IteratorResult<{ value: Buffer }>).value?.value.toString(), value);
  }

  it('a consumer whose stream ended with an error that ends it (its topic deleted) hands out nothing more that came on it: the error comes next', async () => {
    await r.client.createTopic('t', { partitions: 1 });
    const p = r.client.producer();
    const consumer = r.client.consumer({ topic: 't', group: 'g', from: 'earliest' });
    const it = consumer[Symbol.asyncIterator]();
    await p.send('t', { value: 'm0' });
    assert.equal((await it.next()).value!.offset, 0);
    // Two more deliveries, each its own, buffered while the app holds the first.
    const buffered = consumer as unknown as { chunks: unknown[]; fatal: unknown };
    for (let i = 1; i <= 2; i++) {
      await p.send('t', { value: `m${i}` });
      await waitFor(() => buffered.chunks.length === i, 10_000, `delivery ${i} arrives`);
    }
    await r.client.deleteTopic('t');
    await waitFor(() => buffered.fatal !== null, 10_000, 'the stream ends');
    await assert.rejects(it.next(), (e: unknown) => e instanceof UringmqError && e.code === 'TOPIC_NOT_FOUND');
  });

  it('after its stream broke, a consumer does not hand out the rest of a batch that came on it: those come again, in offset order, marked redelivered', async () => {
    await r.client.createTopic('t', { partitions: 1 });
    await r.client.producer().sendBatch('t', Array.from({ length: 10 }, (_, i) => ({ value: `m${i}` })));
    const consumer = c.consumer({ topic: 't', group: 'g', from: 'earliest' });
    const it = consumer[Symbol.asyncIterator]();
    const first = (await it.next()).value!;
    assert.deepEqual([first.offset, first.deliveryCount], [0, 1]);
    const session = () => (consumer as unknown as { session: number }).session;
    const s0 = session();
    proxy.cut(); // first is not acked; offsets 1..9 wait in the batch being handed out
    await waitFor(() => session() > s0, 10_000, 'the consumer subscribes again');
    const got: Array<[number, number]> = [];
    for (let i = 0; i < 10; i++) {
      const m = (await it.next()).value!;
      got.push([m.offset, m.deliveryCount]);
      m.ack();
    }
    assert.deepEqual(got, Array.from({ length: 10 }, (_, i) => [i, 2]), JSON.stringify(got));
    await it.return?.();
  });

  it('an onConnectionState that is an async function and rejects does not crash the process (an unhandled rejection); the consumer reconnects and is told so', async () => {
    const unhandled = await unhandledRejectionsDuring(async () => {
      await r.client.createTopic('t', { partitions: 1 });
      const states: string[] = [];
      const consumer = c.consumer({
        topic: 't',
        group: 'g',
        from: 'earliest',
        onConnectionState: async (ev) => {
          states.push(ev.state);
          throw new Error(`observer failed on ${ev.state}`);
        },
      });
      const it = consumer[Symbol.asyncIterator]();
      await r.client.producer().send('t', { value: 'a' });
      (await it.next()).value!.ack();
      await sleep(50);
      proxy.cut();
      await waitFor(() => states.includes('reconnected'), 10_000, 'the consumer reconnects');
      await r.client.producer().send('t', { value: 'b' });
      let m = (await it.next()).value!;
      if (m.value.toString() === 'a') m = (await it.next()).value!; // its ack may not have gone before the cut
      assert.equal(m.value.toString(), 'b');
      await it.return?.();
    });
    assert.deepEqual(unhandled, []);
  });

  it("an ack sent in time that waited on the server's socket while its event loop was blocked past the ack deadline counts: the message is not delivered again", async () => {
    await r.client.createTopic('t', { partitions: 1 });
    const consumer = c.consumer({ topic: 't', group: 'g', from: 'earliest', ackDeadlineMs: 1000 });
    try {
      const it = consumer[Symbol.asyncIterator]();
      await r.client.producer().send('t', { value: 'a' });
      const first = (await it.next()).value!;
      first.ack(); // goes out now or at the next turn, and waits on the server's socket
      const busyUntil = performance.now() + 1500;
      while (performance.now() < busyUntil); // server and client share this event loop
      await r.client.producer().send('t', { value: 'b' });
      const next = (await it.next()).value!;
      assert.deepEqual([next.value.toString(), next.deliveryCount], ['b', 1], 'the acked message came again (its deadline expired before its ack was read)');
      next.ack();
    } finally {
      await consumer.close();
    }
  });

  it('a consumer whose connection stalled past its session timeout (the server expelled it) rejoins and goes on (the stream ended with SESSION_EXPIRED), instead of ending', async () => {
    await r.client.createTopic('t', { partitions: 1 });
    const consumer = c.consumer({ topic: 't', group: 'g', from: 'earliest' });
    const it = consumer[Symbol.asyncIterator]();
    await r.client.producer().send('t', { value: 'a' });
    const first = await it.next();
    assert.equal(first.value?.value.toString(), 'a');
    first.value!.ack();
    await sleep(100);
    // Silence for longer than the session timeout (10 s): no heartbeat reaches the server.
    proxy.pause();
    await sleep(11_500);
    proxy.resume();
    await r.client.producer().send('t', { value: 'b' });
    await goesOnWith(it, 'b');
    await it.return?.();
  });

  it('a broker of an earlier release expels a silent member with FAILED_PRECONDITION (no SESSION_EXPIRED yet): the consumer still rejoins and goes on, as before', async () => {
    await r.client.createTopic('t', { partitions: 1 });
    const consumer = r.client.consumer({ topic: 't', group: 'g', from: 'earliest' });
    const it = consumer[Symbol.asyncIterator]();
    await r.client.producer().send('t', { value: 'a' });
    const first = await it.next();
    assert.equal(first.value?.value.toString(), 'a');
    first.value!.ack();
    await sleep(100);
    // What such a broker ended the stream with: its code was FAILED_PRECONDITION (in
    // the status and the uringmq-code trailer), the expiry told by the message alone.
    const coord = (r.broker as unknown as { groups: { groups: Map<string, { members: Map<string, unknown> }>; leave(m: unknown, e: UringmqError): void } }).groups;
    const members = [...coord.groups.values()].flatMap((gs) => [...gs.members.entries()]);
    assert.equal(members.length, 1);
    const [id, m] = members[0]!;
    coord.leave(m, new UringmqError('FAILED_PRECONDITION', `member ${id} of group g missed its session timeout (10000 ms)`));
    await r.client.producer().send('t', { value: 'b' });
    await goesOnWith(it, 'b');
    await it.return?.();
  });
});
