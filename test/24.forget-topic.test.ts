import { strict as assert } from 'node:assert';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { UringmqError } from '../src';
import { connect, type RemoteProducer } from '../src/client';
import { sleep, startServer, waitFor, type Running } from './helpers';

/**
 * A TCP hop (an L4 proxy, or the kernel's retransmit queue after close()): bytes from
 * the client on a connection marked `held` are kept, and forwarded only on release(),
 * even after the client has given the connection up. Connections opened while
 * `holdNew` is set start held.
 */
function proxy(upstreamPort: number) {
  type Conn = { held: boolean; buf: Buffer[]; up: net.Socket; down: net.Socket; downClosed: boolean; release: () => void };
  const px = { holdNew: false, conns: [] as Conn[], srv: null as unknown as net.Server };
  px.srv = net.createServer((down) => {
    const up = net.connect(upstreamPort, '127.0.0.1');
    const c: Conn = {
      held: px.holdNew,
      buf: [],
      up,
      down,
      downClosed: false,
      release() {
        c.held = false;
        for (const b of c.buf.splice(0)) up.write(b);
        if (c.downClosed) up.end();
      },
    };
    px.conns.push(c);
    down.on('data', (d) => (c.held ? c.buf.push(d) : up.write(d)));
    up.on('data', (d) => {
      if (!c.held && !down.destroyed) down.write(d);
    });
    down.on('error', () => undefined);
    up.on('error', () => undefined);
    down.on('close', () => {
      c.downClosed = true;
      if (!c.held) up.end();
    });
    up.on('close', () => down.destroy());
  });
  return px;
}

/** What a producer keeps per topic and partition (`topics` was `accKeys` before it kept per-topic counts). */
function kept(p: RemoteProducer) {
  const x = p as unknown as Record<'sequences' | 'accs' | 'restarted' | 'topics' | 'accKeys', Map<string, unknown> | undefined> & { readyAccs: Set<string> };
  return { topics: (x.topics ?? x.accKeys)!.size, sequences: x.sequences!.size, accs: x.accs!.size, restarted: x.restarted!.size, ready: x.readyAccs.size };
}
const hasTopic = (p: RemoteProducer, topic: string) => ((p as unknown as { topics?: Map<string, unknown>; accKeys?: Map<string, unknown> }).topics ?? (p as unknown as { accKeys: Map<string, unknown> }).accKeys).has(topic);

type Hookable = { publish: (req: { topic: string }, copy?: boolean) => Promise<unknown> };

describe('client producer: forgetting topics deleted elsewhere or idle', function () {
  this.timeout(60_000);
  let r: Running;
  beforeEach(async () => {
    r = await startServer({});
  });
  afterEach(async () => {
    await r.stop();
  });

  it('an attempt on a connection the client gave up on, landing on the topic made again after its retry was refused TOPIC_NOT_FOUND (whose error says it may still be written), does not make the next batch a duplicate', async () => {
    const px = proxy(r.server.port);
    await new Promise<void>((res) => px.srv.listen(0, '127.0.0.1', () => res()));
    const other = r.client; // straight to the server
    await other.createTopic('T', { partitions: 1 });
    const c = await connect(`127.0.0.1:${(px.srv.address() as AddressInfo).port}`, { keepalive: { timeMs: 300, timeoutMs: 500 } });
    const p = c.producer({ idempotent: true, lingerMs: 0 });
    try {
      assert.equal((await p.sendBatch('T', [{ value: 'a' }], { partition: 0 })).baseOffset, 0);
      const pub = px.conns[px.conns.length - 1]!; // the publish stream's connection (the last one opened)
      pub.held = true; // from here the network holds what the client writes on it
      px.holdNew = true; // and on any new one, until the topic is deleted
      const x = p.sendBatch('T', [{ value: 'x' }], { partition: 0 });
      await sleep(50);
      await other.deleteTopic('T');
      px.holdNew = false;
      for (const k of px.conns) if (k !== pub && k.held) k.release();
      // The client's keepalive gives the connection up; x's retry on a new one is refused.
      await assert.rejects(x, (e: UringmqError) => e.code === 'TOPIC_NOT_FOUND' && /may still be written/.test(e.message));
      assert.equal(hasTopic(p, 'T'), false, 'T forgotten once its batches settled');
      await other.createTopic('T', { partitions: 1 });
      pub.release(); // the abandoned connection's bytes reach the server now
      await waitFor(async () => (await other.describeTopic('T', { groups: false })).partitions[0]!.endOffset === 1, 5000, 'x landed late');
      assert.deepEqual((await other.fetch('T', 0, 0)).map((m) => m.value.toString()), ['x']);
      const y = await p.sendBatch('T', [{ value: 'y' }], { partition: 0 });
      assert.equal(y.baseOffset, 1, `y written after the late x, not answered as a duplicate: ${JSON.stringify(y)}`);
      assert.deepEqual((await other.fetch('T', 0, 0)).map((m) => m.value.toString()), ['x', 'y']);
    } finally {
      await p.close({ timeoutMs: 2000 }).catch(() => undefined);
      await c.close();
      px.srv.close();
      for (const k of px.conns) {
        k.up.destroy();
        k.down.destroy();
      }
    }
  });

  it('topics another client deleted, never sent to again, and a live topic left idle are forgotten after topicIdleMs; the live one takes sends again, written', async () => {
    const other = await connect(r.address);
    const p = r.client.producer({ idempotent: true, lingerMs: 0, topicIdleMs: 1000 });
    try {
      await r.client.createTopic('live', { partitions: 1 });
      assert.equal((await p.sendBatch('live', [{ value: 'a' }], { partition: 0 })).baseOffset, 0);
      for (let i = 0; i < 20; i++) {
        await r.client.createTopic(`s${i}`, { partitions: 4 });
        await Promise.all([0, 1, 2, 3].map((partition) => p.send(`s${i}`, { value: 'v', partition })));
        await other.deleteTopic(`s${i}`); // not through this client: the producer is not told
      }
      await p.flush();
      const none = { topics: 0, sequences: 0, accs: 0, restarted: 0, ready: 0 };
      await waitFor(() => JSON.stringify(kept(p)) === JSON.stringify(none), 10_000, `everything forgotten: ${JSON.stringify(kept(p))}`);
      // Forgotten while it still exists: its partition starts again under a fresh producer id.
      assert.equal((await p.sendBatch('live', [{ value: 'b' }], { partition: 0 })).baseOffset, 1);
      assert.deepEqual((await r.client.fetch('live', 0, 0)).map((m) => m.value.toString()), ['a', 'b']);
    } finally {
      await p.close();
      await other.close();
    }
  });

  it('a producer whose sends to a topic another client deleted were refused forgets it once its own sends to it settle, though a send to another topic stays pending throughout', async () => {
    const other = await connect(r.address);
    await r.client.createTopic('t');
    await r.client.createTopic('held');
    // The broker answers sends to `held` only at the end: this producer always has one pending.
    const server = r.server as unknown as Hookable;
    const publish = server.publish;
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    server.publish = (req, copy) => (req.topic === 'held' ? gate.then(() => publish.call(r.server, req, copy)) : publish.call(r.server, req, copy));
    const p = r.client.producer({ idempotent: true, lingerMs: 1 });
    const inflight = (p as unknown as { inflight: { size: number } }).inflight;
    try {
      await p.send('t', { value: 'live' }); // a topic that stays: its entries stay
      let heldDone = false;
      const held = p.send('held', { value: 'waits' }).finally(() => (heldDone = true));
      await waitFor(() => inflight.size === 1, 5000, 'the send to held in flight');
      const live = kept(p);
      for (let i = 0; i < 10; i++) {
        const name = `elsewhere-${i}`;
        await r.client.createTopic(name, { partitions: 2 });
        await Promise.all([0, 1].map((partition) => p.send(name, { value: `v${i}`, partition })));
        await other.deleteTopic(name); // not through this client
        // Routed by the cached count: the first refused, those after it refused as well
        // or failed with it (sent after it to the same partition) without being sent.
        const late = await Promise.allSettled([1, 2, 3].map((j) => p.sendBatch(name, [{ value: `late${j}` }], { partition: 1 })));
        for (const s of late) assert.ok(s.status === 'rejected' && (s.reason as UringmqError).code === 'TOPIC_NOT_FOUND', `${name}: ${JSON.stringify(s)}`);
      }
      await waitFor(() => JSON.stringify(kept(p)) === JSON.stringify(live), 5000, `the gone topics forgotten: ${JSON.stringify(kept(p))} against ${JSON.stringify(live)}`);
      assert.equal(heldDone, false, 'the send to held was pending all along');
      open();
      assert.deepEqual(await held, { partition: 0, offset: 0 });
      // A topic made again under one of the names takes this producer's sends, written.
      await other.createTopic('elsewhere-3', { partitions: 2 });
      assert.deepEqual(await p.send('elsewhere-3', { value: 'again', partition: 1 }), { partition: 1, offset: 0 });
      assert.deepEqual((await r.client.fetch('elsewhere-3', 1, 0)).map((m) => m.value.toString()), ['again']);
    } finally {
      open();
      server.publish = publish;
      await p.close();
      await other.close();
    }
  });

  it('a batch sent before one refused with TOPIC_NOT_FOUND, that lands on the topic made again when it is retried: the next batch is written, not taken for a duplicate', async () => {
    const other = await connect(r.address);
    await r.client.createTopic('remade', { partitions: 1 });
    const p = r.client.producer({ idempotent: true, lingerMs: 0 });
    assert.equal((await p.sendBatch('remade', [{ value: 'a' }], { partition: 0 })).baseOffset, 0);
    // The broker's side of the race, in this order: b refused for now (as for a full write
    // queue: the client retries it after 100 ms); another client deletes the topic and c,
    // sent after b, is refused with TOPIC_NOT_FOUND; the topic is made again, and b's
    // retry lands on it under the producer's id, the next sequence after a's.
    const server = r.server as unknown as Hookable;
    const publish = server.publish;
    let calls = 0;
    let cRefused: Promise<unknown> = Promise.resolve();
    server.publish = (req, copy) => {
      if (req.topic !== 'remade') return publish.call(r.server, req, copy);
      switch (++calls) {
        case 1:
          return Promise.reject(new UringmqError('RESOURCE_EXHAUSTED', 'the write queue is full (held so by the test); retry later'));
        case 2:
          return (cRefused = other.deleteTopic('remade').then(() => publish.call(r.server, req, copy)));
        case 3:
          return cRefused.then(
            () => assert.fail('c was written'),
            () => other.createTopic('remade', { partitions: 1 }).then(() => publish.call(r.server, req, copy)),
          );
        default:
          return publish.call(r.server, req, copy);
      }
    };
    try {
      const b = p.sendBatch('remade', [{ value: 'b' }], { partition: 0 });
      const c = p.sendBatch('remade', [{ value: 'c' }], { partition: 0 });
      await assert.rejects(c, (e: UringmqError) => e.code === 'TOPIC_NOT_FOUND');
      assert.equal((await b).baseOffset, 0, 'b, the first batch on the topic made again');
      assert.equal(calls, 3);
    } finally {
      server.publish = publish;
    }
    try {
      await p.flush();
      await sleep(50);
      const d = await p.sendBatch('remade', [{ value: 'd' }], { partition: 0 });
      assert.equal(d.baseOffset, 1, 'd written after b, not answered as a duplicate');
      assert.deepEqual((await r.client.fetch('remade', 0, 0)).map((m) => m.value.toString()), ['b', 'd']);
    } finally {
      await p.close();
      await other.close();
    }
  });

  it('a record still lingering in its accumulator when its topic is found gone keeps the accumulator: its send settles, and the topic is forgotten after it', async () => {
    const other = await connect(r.address);
    await r.client.createTopic('T', { partitions: 1 });
    const p = r.client.producer({ idempotent: true, lingerMs: 3000 });
    try {
      await p.sendBatch('T', [{ value: 'a' }], { partition: 0 }); // the stream open, the partition count cached
      await other.deleteTopic('T'); // not through this client
      // In one turn: a batch sent now (refused within a few ms), and a record that lingers 3 s.
      const refused = p.sendBatch('T', [{ value: 'b' }], { partition: 0 });
      let lingerDone = false;
      const lingering = p.send('T', { value: 'c', partition: 0 }).finally(() => (lingerDone = true));
      // Its only attempt was answered: nothing of it may land later, and the error does not say it might.
      await assert.rejects(refused, (e: UringmqError) => e.code === 'TOPIC_NOT_FOUND' && !/may still be written/.test(e.message));
      assert.equal(lingerDone, false, 'c still lingering when b was refused');
      assert.equal(hasTopic(p, 'T'), true, 'kept while c lingers');
      await assert.rejects(lingering, (e: UringmqError) => e.code === 'TOPIC_NOT_FOUND');
      await sleep(20);
      assert.equal(hasTopic(p, 'T'), false, 'forgotten once c settled');
    } finally {
      await p.close({ timeoutMs: 5000 });
      await other.close();
    }
  });
  it('the idle sweep keeps a topic with a batch pending: one whose ack was lost and that is retried after longer than topicIdleMs is written once, in order with the next', async () => {
    await r.client.createTopic('T', { partitions: 1 });
    const server = r.server as unknown as Hookable;
    const publish = server.publish;
    let calls = 0;
    server.publish = (req, copy) => {
      // x's first attempt is written, and its ack lost after 2.5 s (two sweeps of a 1 s topicIdleMs).
      if (req.topic === 'T' && ++calls === 1)
        return publish.call(r.server, req, copy).then(() => sleep(2500)).then(() => Promise.reject(new UringmqError('RESOURCE_EXHAUSTED', 'ack lost (the test); retry later')));
      return publish.call(r.server, req, copy);
    };
    const p = r.client.producer({ idempotent: true, lingerMs: 0, topicIdleMs: 1000 });
    try {
      const x = p.sendBatch('T', [{ value: 'x' }], { partition: 0 });
      await sleep(150);
      const y = p.sendBatch('T', [{ value: 'y' }], { partition: 0 });
      assert.equal((await x).baseOffset, 0);
      assert.equal((await y).baseOffset, 1);
      assert.deepEqual((await r.client.fetch('T', 0, 0)).map((m) => m.value.toString()), ['x', 'y']);
    } finally {
      server.publish = publish;
      await p.close({ timeoutMs: 5000 });
    }
  });

  it('a batch waiting for an in-flight slot while its topic is forgotten is numbered under the topic as made again here', async () => {
    await r.client.createTopic('T', { partitions: 1 });
    await r.client.createTopic('hog', { partitions: 1 });
    const server = r.server as unknown as Hookable;
    const publish = server.publish;
    let open!: () => void;
    const gate = new Promise<void>((res) => (open = res));
    let hogArrived = false;
    server.publish = (req, copy) => {
      if (req.topic !== 'hog') return publish.call(r.server, req, copy);
      hogArrived = true;
      return publish.call(r.server, req, copy).then((v) => gate.then(() => v));
    };
    const p = r.client.producer({ idempotent: true, lingerMs: 0, maxInFlight: 1, topicIdleMs: 1000 });
    try {
      assert.equal((await p.sendBatch('T', [{ value: 'a' }], { partition: 0 })).baseOffset, 0);
      const hog = p.sendBatch('hog', [{ value: 'h' }], { partition: 0 }); // holds the only slot
      await waitFor(() => hogArrived, 5000, "hog's publish at the server, holding the slot");
      let bDone = false;
      const b = p.sendBatch('T', [{ value: 'b' }], { partition: 0 }).finally(() => (bDone = true)); // waits for the slot
      await waitFor(() => !hasTopic(p, 'T'), 10_000, 'T forgotten while b waits (nothing of it numbered)');
      assert.equal(bDone, false, 'b still waiting for the slot when T was forgotten');
      open();
      await hog;
      assert.equal((await b).baseOffset, 1);
      assert.deepEqual((await r.client.fetch('T', 0, 0)).map((m) => m.value.toString()), ['a', 'b']);
    } finally {
      open();
      server.publish = publish;
      await p.close({ timeoutMs: 5000 });
    }
  });

  it('keyless sendBatch calls without a partition spread over the partitions (each is a whole batch: the sticky partition moves on)', async () => {
    await r.client.createTopic('rr', { partitions: 4 });
    const p = r.client.producer({ lingerMs: 0 });
    try {
      // The remote producer sticks to a random partition (as Kafka's does), not round-robin:
      // 20 batches all on one of 4 by chance is 4 × 4^-20.
      const parts: number[] = [];
      for (let i = 0; i < 20; i++) parts.push((await p.sendBatch('rr', [{ value: `v${i}` }])).partition);
      assert.ok(new Set(parts).size >= 2, `partitions used: ${parts.join(',')}`);
    } finally {
      await p.close();
    }
  });

  it('a keyless producer whose topic another client made again with fewer partitions, then more, goes on: at most one batch refused (INVALID_ARGUMENT, typed) for a partition gone, the rest written', async () => {
    const c = await connect(r.address);
    try {
      await r.client.createTopic('re', { partitions: 4 });
      const p = c.producer({ lingerMs: 0 });
      for (let i = 0; i < 8; i++) await p.send('re', { value: `old${i}` });
      await r.broker.deleteTopic('re');
      await r.broker.createTopic('re', { partitions: 1 });
      // Its cached count (4) is stale: the sticky partition may be one the topic no longer has.
      let refused = 0;
      let written = 0;
      for (let i = 0; i < 8; i++) {
        try {
          assert.equal((await p.send('re', { value: `new${i}` })).partition, 0);
          written++;
        } catch (e) {
          assert.ok(e instanceof UringmqError && e.code === 'INVALID_ARGUMENT' && /does not exist/.test(e.message), String(e));
          refused++;
          // Not necessarily the first send: the sticky partition (picked from the stale
          // count of 4) may be 0 for a batch or more before it moves on to one gone.
        }
      }
      assert.ok(refused <= 1, `${refused} refused`);
      assert.equal((await r.broker.describeTopic('re')).partitions[0]!.endOffset, written);
      // Made again with more: sent to the partitions it knows until the count is looked up again, never refused.
      await r.broker.deleteTopic('re');
      await r.broker.createTopic('re', { partitions: 3 });
      for (let i = 0; i < 8; i++) assert.ok((await p.send('re', { value: `more${i}` })).partition < 3);
      assert.equal((await r.broker.describeTopic('re')).partitions.reduce((n, x) => n + x.endOffset, 0), 8);
      await p.close();
    } finally {
      await c.close();
    }
  });

  it('topicIdleMs under 1000 ms is refused with INVALID_ARGUMENT (each forget costs the broker a producer id per partition)', () => {
    for (const bad of [0, 999, 1.5, -1]) assert.throws(() => r.client.producer({ topicIdleMs: bad }), (e: UringmqError) => e.code === 'INVALID_ARGUMENT');
  });
});

