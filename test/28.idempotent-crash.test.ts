import { strict as assert } from 'node:assert';
import { connect, type Client } from '../src/client';
import { UringmqError } from '../src';
import { cleanupTmpDirs, seededRandom, sleep, tcpProxy, tmpDir } from './helpers';
import { spawnServer, type ServerProcess } from './fixtures/server_process';

const TOPIC = 'ic';
const PARTITIONS = 3;
const KEYS = 12;
/**
 * What a send may reject with here (README, "Idempotent producer" and "Reconnects"):
 * UNAVAILABLE once deliveryTimeoutMs passed ("may still be written" when it went
 * out), OUT_OF_ORDER_SEQUENCE, or the code of an earlier batch of its partition that
 * failed and took it along; BROKER_CLOSED from close()'s timeout.
 */
const DOCUMENTED = new Set(['UNAVAILABLE', 'OUT_OF_ORDER_SEQUENCE', 'BROKER_CLOSED']);

interface Case {
  seed: number;
  what: string;
  /** Per producer, at most the 64 batches the broker remembers per producer and partition (README, "Idempotent producer"). */
  maxInFlight: number;
  producers: number;
  /** The share of sendBatch() calls (1-5 records of one key or partition) among the sends. */
  batches: number;
  /** The share of kills that come within 60 ms of the restart, as the producers' retries arrive, not after 50 more acks. */
  quickKills: number;
  /** The share of kills that come while the proxy holds the server's acks. */
  heldKills: number;
  deliveryTimeoutMs: number;
  /** Longest pause between a kill and the restart (seeded below it). */
  downMs: number;
  serverArgs: string[];
}

const CASES: Case[] = [
  { seed: 0x1dc0, what: 'maxInFlight 8, the table rebuilt from the log alone', maxInFlight: 8, producers: 1, batches: 0, quickKills: 0, heldKills: 0.5, deliveryTimeoutMs: 45_000, downMs: 300, serverArgs: [] },
  {
    seed: 0x5eed2,
    what: 'maxInFlight 64, two producers, sendBatch too, kills as retries arrive, snapshots every 16 KiB: rebuilt from a snapshot and the log after it',
    maxInFlight: 64,
    producers: 2,
    batches: 0.2,
    quickKills: 0.5,
    heldKills: 0.5,
    deliveryTimeoutMs: 45_000,
    downMs: 300,
    serverArgs: ['--producer-state-scan-bytes', '16384'],
  },
  // Down about as long as deliveryTimeoutMs (a restart itself takes most of a second):
  // some batches are given up (their partition starts afresh under a new producer id,
  // and what went out may still be in the log), others retried after the restart.
  {
    seed: 0xc4a54,
    what: 'deliveryTimeoutMs 2 s, down up to 2 s: sends given up on, others retried',
    maxInFlight: 16,
    producers: 1,
    batches: 0.1,
    quickKills: 0,
    heldKills: 1,
    deliveryTimeoutMs: 2000,
    downMs: 2000,
    serverArgs: ['--producer-state-scan-bytes', '16384'],
  },
];

interface Sent {
  i: number;
  /** The ordering group: `k<n>` for a keyed record, `p<n>` for one sent to a partition explicitly. */
  group: string;
  /** Which producer sent it. */
  prod: number;
  result?: { partition: number; offset: number };
  error?: unknown;
}

describe('Idempotent producer across server crashes (seeded)', function () {
  this.timeout(120_000);
  const procs: ServerProcess[] = [];
  const clients: Client[] = [];
  const proxies: Array<Awaited<ReturnType<typeof tcpProxy>>> = [];
  afterEach(async () => {
    await Promise.all(proxies.splice(0).map((px) => px.close()));
    const ps = procs.splice(0);
    ps.forEach((p) => p.child.kill('SIGKILL'));
    await Promise.all(ps.map((p) => p.exited));
    await Promise.all(clients.splice(0).map((c) => c.close({ timeoutMs: 1000 }).catch(() => undefined)));
    cleanupTmpDirs();
  });

  for (const { seed, what, maxInFlight, producers: nProducers, batches, quickKills, heldKills, deliveryTimeoutMs, downMs, serverArgs } of CASES)
    it(`seed ${seed} (${what}): through 3-4 SIGKILLs every resolved send is in the log once, nothing is twice, each key and partition in send order`, async () => {
      // The record mix from one stream, the kill moments from another: the mix stays
      // the same whatever the timing.
      const rand = seededRandom(seed);
      const randKill = seededRandom(seed ^ 0x9e3779b9);
      const dir = tmpDir();
      let srv = await spawnServer(dir, 0, serverArgs);
      procs.push(srv);
      const port = srv.port; // restarted on the same port
      // The producers reach it through a loopback proxy (transparent until paused), so
      // a kill can come while the acks of what the server took are held in the proxy:
      // those batches are on disk, their senders never heard, and their retries must be
      // found in the table the restart rebuilt. (A plain kill loses such acks only when
      // it lands between a write and its ack: often, but not at every kill.)
      const px = await tcpProxy(port);
      proxies.push(px);
      const client = await connect(`127.0.0.1:${px.port}`);
      clients.push(client);
      await client.createTopic(TOPIC, { partitions: PARTITIONS });
      const producers = Array.from({ length: nProducers }, () => client.producer({ idempotent: true, maxInFlight, lingerMs: 1, maxBatchBytes: 4096, deliveryTimeoutMs }));

      const sent: Sent[] = [];
      let stop = false;
      const producing = (async () => {
        const outstanding = new Set<Promise<void>>();
        for (let i = 0; !stop && i < 200_000; ) {
          const keyed = rand() < 0.5;
          const n = Math.floor(rand() * (keyed ? KEYS : PARTITIONS));
          const pi = Math.floor(rand() * producers.length);
          const many = rand() < batches ? 1 + Math.floor(rand() * 5) : 0; // a sendBatch of this many, or one send()
          const batch: Sent[] = [];
          for (let j = 0; j < Math.max(1, many); j++, i++) batch.push({ i, group: keyed ? `k${n}` : `p${n}`, prod: pi });
          sent.push(...batch);
          const recs = batch.map((s) => (keyed ? { key: `k${n}`, value: `r${s.i}` } : { partition: n, value: `r${s.i}` }));
          const p = (many
            ? producers[pi]!.sendBatch(TOPIC, recs, keyed ? {} : { partition: n }).then((r) => batch.forEach((s, j) => (s.result = { partition: r.partition, offset: r.baseOffset === -1 ? -1 : r.baseOffset + j })))
            : producers[pi]!.send(TOPIC, recs[0]!).then((r) => void (batch[0]!.result = r))
          ).then(
            () => undefined,
            (e: unknown) => batch.forEach((s) => (s.error = e)),
          );
          outstanding.add(p);
          void p.finally(() => outstanding.delete(p));
          if (outstanding.size >= 300) await Promise.race(outstanding);
        }
        await Promise.all(outstanding);
      })();

      const kills = 3 + Math.floor(randKill() * 2);
      const resolvedCount = () => sent.reduce((n, s) => n + (s.result ? 1 : 0), 0);
      for (let k = 0; k < kills; k++) {
        // Some acks on this server first (bounded), then a seeded moment of the load;
        // or a kill soon after the restart, while the retries of the last one come in.
        const quick = randKill() < quickKills;
        const base = resolvedCount();
        if (!quick) for (let w = 0; w < 1000 && resolvedCount() < base + 50; w++) await sleep(10);
        await sleep(quick ? Math.floor(randKill() * 60) : 50 + Math.floor(randKill() * 400));
        const held = randKill() < heldKills;
        if (held) {
          px.pause();
          await sleep(50 + Math.floor(randKill() * 100)); // the server writes what reached it
        }
        srv.child.kill('SIGKILL');
        await srv.exited;
        px.cut(); // a paused connection would not notice its server gone
        await sleep(Math.floor(randKill() * downMs));
        srv = await spawnServer(dir, port, serverArgs);
        procs.push(srv);
      }
      const base = resolvedCount();
      for (let w = 0; w < 1000 && resolvedCount() < base + 50; w++) await sleep(10);
      stop = true;
      await producing;
      await Promise.all(producers.map((p) => p.close({ timeoutMs: 5000 })));

      // The whole log, from offset 0 of each partition, on a client of its own: the
      // first's unary calls fail fast (UNAVAILABLE) while its channel still backs off
      // from the last kill, and connect() waits for the server.
      const reader = await connect(srv.address);
      clients.push(reader);
      const where = new Map<string, string[]>(); // value -> every "p/offset" it is at
      const order: number[][] = [];
      for (let p = 0; p < PARTITIONS; p++) {
        order.push([]);
        const end = (await reader.describeTopic(TOPIC)).partitions[p]!.endOffset;
        for (let off = 0; off < end; ) {
          const msgs = await reader.fetch(TOPIC, p, off, { maxBytes: 1 << 20 });
          assert.ok(msgs.length > 0 && msgs[0]!.offset === off, `partition ${p}: a gap at offset ${off}`);
          for (const m of msgs) {
            const v = m.value.toString();
            where.set(v, [...(where.get(v) ?? []), `${p}/${m.offset}`]);
            order[p]!.push(Number(v.slice(1)));
          }
          off = msgs[msgs.length - 1]!.offset + 1;
        }
      }

      const resolved = sent.filter((s) => s.result);
      const rejected = sent.filter((s) => s.error !== undefined);
      const summary = `seed ${seed}: ${sent.length} sent, ${resolved.length} resolved, ${rejected.length} rejected (${rejected.filter((s) => where.has(`r${s.i}`)).length} of them in the log), ${kills} kills`;
      assert.equal(resolved.length + rejected.length, sent.length, summary);
      assert.ok(resolved.length > 200, summary);

      // Nothing twice: a retry after a crash is answered from the table the restart rebuilt.
      const twice = [...where].filter(([, at]) => at.length > 1);
      assert.deepEqual(twice.slice(0, 5), [], `${summary}: ${twice.length} records are in the log more than once`);
      // Every resolved send once, at the offset it was answered with (-1: an older
      // duplicate whose offsets the broker no longer knows, documented).
      const wrong = resolved.filter((s) => {
        const at = where.get(`r${s.i}`);
        const r = s.result!;
        return !at || (r.offset !== -1 && at[0] !== `${r.partition}/${r.offset}`);
      });
      assert.deepEqual(
        wrong.slice(0, 5).map((s) => ({ i: s.i, answered: s.result, at: where.get(`r${s.i}`) })),
        [],
        `${summary}: ${wrong.length} resolved sends are missing or elsewhere`,
      );
      // Nothing in the log that was never sent.
      for (const v of where.keys()) assert.ok(/^r\d+$/.test(v) && Number(v.slice(1)) < sent.length, `${summary}: unknown record ${v}`);
      // Each key, each explicit partition, and so each partition, in each producer's
      // send order: what lands after a batch failed still keeps it (the partition starts
      // afresh).
      const prodOf = new Map(sent.map((s) => [s.i, s.prod]));
      for (let p = 0; p < PARTITIONS; p++)
        for (let pi = 0; pi < nProducers; pi++) {
          const seq = order[p]!.filter((i) => prodOf.get(i) === pi);
          const back = seq.findIndex((v, j) => j > 0 && v < seq[j - 1]!);
          assert.equal(back, -1, `${summary}: partition ${p} out of send order at index ${back}: r${seq[back - 1]} then r${seq[back]}`);
        }
      const groupOf = new Map(sent.map((s) => [`r${s.i}`, s.group]));
      const partOf = new Map<string, number>();
      for (const [v, at] of where) {
        const g = groupOf.get(v)!;
        const p = Number(at[0]!.split('/')[0]);
        if (g.startsWith('p')) assert.equal(p, Number(g.slice(1)), `${summary}: ${v} sent to ${g}, in partition ${p}`);
        else assert.equal(partOf.get(g) ?? p, p, `${summary}: key ${g} in two partitions`);
        partOf.set(g, p);
      }
      // A rejection is typed, with a documented code; one whose record is in the log
      // anyway says that it may have been written.
      for (const s of rejected) {
        assert.ok(s.error instanceof UringmqError, `${summary}: r${s.i} rejected with ${String(s.error)}`);
        assert.ok(DOCUMENTED.has(s.error.code), `${summary}: r${s.i} rejected with ${s.error.code}: ${s.error.message}`);
        if (where.has(`r${s.i}`)) assert.match(s.error.message, /may (have been|still be) written/, `${summary}: r${s.i} is in the log, its rejection said: ${s.error.message}`);
      }
      await reader.close();
      await client.close();
    });
});
