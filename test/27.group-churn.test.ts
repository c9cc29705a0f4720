import { strict as assert } from 'node:assert';
import { Broker, type ConsumedMessage, type GroupConsumerApi, type GroupConsumerOptions, type ProducerApi } from '../src';
import { connect, type Client } from '../src/client';
import { openBroker, seededRandom, sleep, startServer, tcpProxy, tmpDir, waitFor, type Running } from './helpers';

/**
 * A seeded, bounded stress test of one consumer group under membership churn: members
 * join, ack, nack, let ack deadlines pass and leave (or vanish) at seeded times while a
 * producer publishes, then one stable member drains. It checks the at-least-once
 * contract from what the applications saw and what the broker says at the end. A
 * failure names its seed: `CHURN_SEEDS=<seed> npx mocha … test/27.group-churn.test.ts`
 * runs that seed alone.
 */

const SEEDS = process.env.CHURN_SEEDS ? process.env.CHURN_SEEDS.split(',').map(Number) : [1, 20261207, 777];
/** Messages published per run, and how long the churn lasts. */
const N = 6000;
const CHURN_MS = 4000;
const MAX_DELIVERIES = 4;
const MAX_UNACKED = 64;
/** Every POISON-th message is nacked by everyone: it must reach the dead-letter topic. */
const POISON = 997;
const isPoison = (n: number) => n % POISON === 500;

type Kind = 'acker' | 'nacker' | 'staller';
type Exit = 'close' | 'break' | 'closeHolding' | 'clientClose' | 'cut';

interface Seen {
  member: number;
  deliveryCount: number;
  redelivered: boolean;
}

/** One transport: how members are made and made to go. */
interface Harness {
  broker: Broker;
  producer(): ProducerApi;
  /** A member's consumer, and how it ends with `exit` (undefined: exit not offered by this transport). */
  member(o: GroupConsumerOptions): Promise<{ c: GroupConsumerApi; vanish(exit: Exit): Promise<void> | undefined; dispose(): Promise<void> }>;
  exits: Exit[];
  stop(): Promise<void>;
}

async function embedded(): Promise<Harness> {
  const broker = await openBroker({ dir: tmpDir() });
  return {
    broker,
    producer: () => broker.producer(),
    async member(o) {
      const c = broker.consumer({ ...o, sessionTimeoutMs: 1500 });
      return { c, vanish: () => undefined, dispose: async () => undefined };
    },
    exits: ['close', 'break', 'closeHolding'],
    stop: () => broker.close(),
  };
}

async function remote(): Promise<Harness> {
  const r: Running = await startServer({ dir: tmpDir() });
  return {
    broker: r.broker,
    producer: () => r.client.producer(),
    async member(o) {
      // Each member its own connection (through a proxy that can cut it), so that it
      // can go as a process does: a client closed without leaving, or a dead socket.
      const proxy = await tcpProxy(r.server.port);
      const client: Client = await connect(`127.0.0.1:${proxy.port}`);
      const c = client.consumer(o);
      return {
        c,
        vanish(exit) {
          if (exit === 'clientClose') return client.close();
          if (exit === 'cut') {
            proxy.mode = 'refuse'; // no reconnect gets through: the member is gone
            proxy.cut();
            return Promise.resolve();
          }
          return undefined;
        },
        async dispose() {
          await client.close();
          await proxy.close();
        },
      };
    },
    exits: ['close', 'break', 'closeHolding', 'clientClose', 'cut'],
    stop: r.stop,
  };
}

async function churn(h: Harness, seed: number): Promise<string> {
  const rand = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const broker = h.broker;
  const P = 4 + Math.floor(rand() * 3);
  await broker.createTopic('t', { partitions: P });
  const opts: GroupConsumerOptions = { topic: 't', group: 'g', from: 'earliest', maxUnacked: MAX_UNACKED, maxDeliveries: MAX_DELIVERIES };

  // What was published: "p:o" -> message number.
  const numberAt = new Map<string, number>();
  const seen = new Map<string, Seen[]>();
  const appAcked = new Map<string, number>();
  const problems: string[] = [];
  const problem = (s: string) => {
    if (problems.length < 20) problems.push(s);
  };
  let nacks = 0;
  let stalls = 0;
  let departures = 0;
  const lastFresh = new Map<string, number>(); // "member:p" -> last first-delivery offset

  function observe(member: number, m: ConsumedMessage): string {
    const k = `${m.partition}:${m.offset}`;
    if (m.redelivered !== m.deliveryCount > 1) problem(`${k}: redelivered ${m.redelivered} with deliveryCount ${m.deliveryCount}`);
    const list = seen.get(k) ?? [];
    // Each delivery an app sees is counted: no two of one message with one count.
    if (list.some((s) => s.deliveryCount === m.deliveryCount)) problem(`${k}: deliveryCount ${m.deliveryCount} seen twice (members ${list.map((s) => s.member).join(',')} and ${member})`);
    if (m.deliveryCount > MAX_DELIVERIES) problem(`${k}: delivered with count ${m.deliveryCount} > maxDeliveries ${MAX_DELIVERIES}`);
    list.push({ member, deliveryCount: m.deliveryCount, redelivered: m.redelivered });
    seen.set(k, list);
    if (!m.redelivered) {
      const lk = `${member}:${m.partition}`;
      const last = lastFresh.get(lk);
      if (last !== undefined && m.offset <= last) problem(`member ${member} partition ${m.partition}: first delivery of ${m.offset} after ${last}, not marked redelivered`);
      lastFresh.set(lk, m.offset);
    }
    if (Number(m.value.toString()) !== numberAt.get(k) && numberAt.has(k)) problem(`${k}: value ${m.value.toString()} but ${numberAt.get(k)} was published there`);
    return k;
  }

  /** A member: consumes as its kind says until told to go. */
  async function member(id: number, kind: Kind, stable: boolean): Promise<{ go(): Promise<void> }> {
    const o: GroupConsumerOptions = { ...opts, ackDeadlineMs: kind === 'staller' ? 300 : 10_000 };
    const { c, vanish, dispose } = await h.member(o);
    let exit: Exit | null = null;
    let holding = false;
    const loop = (async () => {
      try {
        for await (const m of c) {
          const k = observe(id, m);
          const n = Number(m.value.toString());
          if (exit === 'break') break;
          if (exit === 'closeHolding' && !holding) {
            holding = true; // this one stays unacked: close() must give it back
            void c.close();
            continue;
          }
          if (isPoison(n)) {
            m.nack();
            continue;
          }
          if (!stable && m.deliveryCount === 1 && kind === 'nacker' && rand() < 0.03) {
            nacks++;
            m.nack({ delayMs: 20 });
            continue;
          }
          if (!stable && m.deliveryCount === 1 && kind === 'staller' && rand() < 0.01) {
            stalls++; // never acked: its ack deadline passes
            continue;
          }
          m.ack();
          appAcked.set(k, (appAcked.get(k) ?? 0) + 1);
          if (rand() < 0.02) await sleep(1);
        }
      } catch (e) {
        // A vanished remote member may end with UNAVAILABLE; anything else is a finding.
        const code = (e as { code?: string }).code;
        if (!(exit && (code === 'UNAVAILABLE' || code === 'CANCELLED'))) problem(`member ${id} (${kind}, exit ${exit}) ended with ${code}: ${(e as Error).message}`);
      }
    })();
    return {
      async go() {
        exit = stable ? 'close' : pick(h.exits);
        departures++;
        if (exit === 'break' || exit === 'closeHolding') {
          // Takes effect at the next message; a member given none is closed instead.
          await Promise.race([loop, sleep(500)]);
          await c.close();
        } else {
          const v = vanish(exit);
          if (v) await v;
          else await c.close();
        }
        // A cut member's client retries until closed (as a process that died would stop).
        await dispose();
        if ((await Promise.race([loop.then(() => 'ended'), sleep(10_000)])) !== 'ended') problem(`member ${id} (exit ${exit}): its iteration did not end within 10 s of its close`);
      },
    };
  }

  const producer = h.producer();
  const producing = (async () => {
    let n = 0;
    let b = 0;
    const started = performance.now();
    while (n < N) {
      const count = Math.min(N - n, 10 + Math.floor(rand() * 20));
      const partition = b++ % P;
      const first = n;
      const r = await producer.sendBatch('t', Array.from({ length: count }, (_, i) => ({ value: String(first + i) })), { partition });
      for (let i = 0; i < count; i++) numberAt.set(`${partition}:${r.baseOffset + i}`, first + i);
      n += count;
      // A steady pace: all of N over about the churn's length.
      const due = ((n / N) * CHURN_MS) - (performance.now() - started);
      if (due > 0) await sleep(due);
    }
  })();

  // The churn: 3-5 members at a time, each leaving at a seeded moment for a newcomer.
  const kinds: Kind[] = ['acker', 'nacker', 'staller'];
  let nextId = 0;
  const live: Array<{ id: number; go(): Promise<void>; until: number }> = [];
  const goings: Promise<void>[] = [];
  const t0 = performance.now();
  const target = 3 + Math.floor(rand() * 3);
  while (performance.now() - t0 < CHURN_MS) {
    while (live.length < target) {
      const id = nextId++;
      const m = await member(id, pick(kinds), false);
      live.push({ id, go: m.go, until: performance.now() + 300 + rand() * 1500 });
    }
    for (let i = live.length - 1; i >= 0; i--) {
      if (live[i]!.until <= performance.now()) goings.push(live.splice(i, 1)[0]!.go());
    }
    await sleep(20 + rand() * 80);
  }
  for (const m of live.splice(0)) goings.push(m.go());
  await Promise.all(goings);
  await producing;
  await producer.close();

  // The drain: one stable member until the group has handled every message.
  const ends = async () => (await broker.describeTopic('t')).partitions.map((p) => p.endOffset);
  const committed = async () => (await broker.describeTopic('t')).groups.find((g) => g.group === 'g')?.committed ?? [];
  const drainer = await member(nextId++, 'acker', true);
  const end = await ends();
  let drained = true;
  const group = async () => (await broker.describeTopic('t')).groups.find((g) => g.group === 'g')!;
  const onlyDrainer = async () => {
    const g = await group();
    return g.members.length === 1 && g.members[0]!.partitions.length === P;
  };
  await waitFor(async () => JSON.stringify(await committed()) === JSON.stringify(end), 25_000).catch(() => (drained = false));
  // Only the drainer is left, holding every partition: nobody who left keeps one (a
  // vanished remote member is noticed when its connection breaks, at most a session later).
  await waitFor(onlyDrainer, 15_000).catch(async () =>
    problem(`after the drain the group has members ${JSON.stringify((await group()).members.map((m) => ({ id: m.memberId, p: m.partitions })))}`),
  );
  await drainer.go();
  if (!drained) problem(`committed ${JSON.stringify(await committed())} never reached the ends ${JSON.stringify(end)}`);
  await waitFor(async () => ((await broker.describeTopic('t')).groups.find((g) => g.group === 'g')?.members.length ?? 0) === 0, 10_000).catch(() =>
    problem('a member stayed after every consumer left'),
  );

  // The dead-letter topic: poison messages, each once, each delivered maxDeliveries times.
  const dead = new Map<string, number>();
  const dlq = await broker.read('t.dlq', 0, 0, { maxBytes: 64 << 20 }).catch(() => []);
  for (const d of dlq) {
    const k = `${d.headers['x-uringmq-original-partition']}:${d.headers['x-uringmq-original-offset']}`;
    const count = Number(d.headers['x-uringmq-delivery-count']?.toString());
    if (dead.has(k)) problem(`${k} is in the dead-letter topic twice`);
    dead.set(k, count);
    if (!isPoison(numberAt.get(k) ?? -1)) console.log(`      (not poison: ${k} dead-lettered after ${count} deliveries; apps saw counts ${(seen.get(k) ?? []).map((x) => `${x.deliveryCount}@${x.member}`).join(',')})`);
    if (!(count >= MAX_DELIVERIES)) problem(`${k} dead-lettered after ${count} deliveries (maxDeliveries ${MAX_DELIVERIES})`);
    if (appAcked.has(k)) problem(`${k} was dead-lettered although acked`);
  }

  let duplicates = 0;
  let poison = 0;
  for (const [k, n] of numberAt) {
    const s = seen.get(k) ?? [];
    if (isPoison(n)) {
      poison++;
      if (!dead.has(k)) problem(`poison ${k} (#${n}) is not in the dead-letter topic (seen ${s.length} times)`);
      continue;
    }
    if (!appAcked.has(k) && !dead.has(k)) problem(`${k} (#${n}) was never acked by a member (seen with counts ${s.map((x) => x.deliveryCount).join(',') || 'none'})`);
    duplicates += Math.max(0, s.length - 1);
  }
  if (numberAt.size !== N) problem(`${numberAt.size} offsets recorded for ${N} messages`);
  // Duplicates come from what members held when they went, nacks, and deadlines passed.
  const bound = departures * MAX_UNACKED + nacks + stalls;
  if (duplicates > bound) problem(`${duplicates} duplicates, more than ${bound} (${departures} departures, ${nacks} nacks, ${stalls} stalls)`);
  const summary = `seed ${seed}: ${P} partitions, ${nextId} members, ${duplicates} duplicates (bound ${bound}), ${nacks} nacks, ${stalls} stalls, ${dead.size} dead letters (${poison} poison)`;
  if (problems.length) throw new Error(`${summary}\n  ${problems.join('\n  ')}`);
  return summary;
}

for (const [mode, make] of [['embedded', embedded], ['grpc', remote]] as const) {
  describe(`Consumer groups under membership churn (${mode})`, function () {
    this.timeout(60_000);
    for (const seed of SEEDS) {
      it(`seed ${seed}: every message acked or dead-lettered, in order per member, offsets committed to the end, nobody left holding partitions`, async () => {
        const h = await make();
        try {
          console.log(`      ${await churn(h, seed)}`);
        } catch (e) {
          (e as Error).message = `[churn seed ${seed}, ${mode}] ${(e as Error).message}`;
          throw e;
        } finally {
          await h.stop();
        }
      });
    }
  });
}
