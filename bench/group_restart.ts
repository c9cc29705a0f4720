/**
 * What a restart costs a consumer group that held messages delivered and not acked.
 * The group's file keeps how far it was delivered (src/broker/offsets_file.ts), so after
 * the restart those messages come again through the redelivery queue: marked
 * redelivered, each with its delivery count (runs of them as whole batches). Compared,
 * in the same run, with the first delivery of the same messages (the fastest path a
 * group has), which is the ceiling.
 *
 *   npm run bench:group-restart [-- --counts 20000,200000 --dir /path/on/the/disk --repeat 3]
 *
 * Per count: one partition of that many 100-byte records (1000 per batch); a member
 * (maxUnacked 1,000,000) takes them all and acks none; the broker closes and opens
 * again; a new member takes them all again, acking each. Prints the median of
 * --repeat rounds.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Broker } from '../src';
import { arg } from './args';

const COUNTS = arg('counts', '20000,200000').split(',').map(Number);
const BASE = arg('dir', path.join(process.cwd(), '.bench-data'));
const REPEAT = Number(arg('repeat', '3'));
const WINDOW = 1_000_000;

/** Milliseconds until `n` messages of a fresh member came (acking each when `ack`), and how many were marked redelivered. */
async function consume(b: Broker, n: number, ack: boolean): Promise<{ ms: number; redelivered: number }> {
  const t0 = process.hrtime.bigint();
  const c = b.consumer({ topic: 't', group: 'g', from: 'earliest', maxUnacked: WINDOW });
  let got = 0;
  let redelivered = 0;
  for await (const batch of c.batches()) {
    for (const m of batch) {
      if (m.redelivered) redelivered++;
      if (ack) m.ack();
    }
    got += batch.length;
    if (got >= n) break;
  }
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  await c.close();
  return { ms, redelivered };
}

async function round(root: string, n: number): Promise<{ first: number; again: number }> {
  const dir = fs.mkdtempSync(path.join(root, 'r-'));
  try {
    let b = await Broker.open({ dir, durability: 'none' });
    await b.createTopic('t');
    const p = b.producer();
    const value = 'x'.repeat(100);
    for (let i = 0; i < n; i += 1000) await p.sendBatch('t', Array.from({ length: Math.min(1000, n - i) }, () => ({ value })));
    const first = await consume(b, n, false);
    await b.close(); // writes the group's state: all n delivered, none acked
    b = await Broker.open({ dir, durability: 'none' });
    const again = await consume(b, n, true);
    await b.close();
    if (again.redelivered !== n) throw new Error(`${again.redelivered} of ${n} came marked redelivered`);
    return { first: first.ms, again: again.ms };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  fs.mkdirSync(BASE, { recursive: true });
  const root = fs.mkdtempSync(path.join(BASE, 'group-restart-'));
  console.log(`Group restart: unacked messages delivered again; 100-byte records; median of ${REPEAT}; ${new Date().toISOString()}`);
  console.log('\n| unacked at restart | first delivery (ceiling) ms | after the restart ms | × ceiling | after the restart msgs/s |');
  console.log('|---:|---:|---:|---:|---:|');
  try {
    for (const n of COUNTS) {
      const first: number[] = [];
      const again: number[] = [];
      for (let i = 0; i < REPEAT; i++) {
        const r = await round(root, n);
        first.push(r.first);
        again.push(r.again);
      }
      const [a, b] = [median(first), median(again)];
      console.log(`| ${n} | ${a.toFixed(0)} | ${b.toFixed(0)} | ${(a / b).toFixed(2)} | ${Math.round((n / b) * 1000)} |`);
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

void main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
