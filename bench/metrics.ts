/**
 * What a Prometheus scrape costs the broker's main thread (src/metrics): the registry
 * describes every topic and its groups and formats the text. Compared, in the same
 * run, with describing every topic alone (what `topics describe` costs), the ceiling.
 *
 *   npm run bench:metrics [-- --topics 20 --partitions 200 --grouped-topics 5 --groups 4 --repeat 5]
 *
 * `--groups` members each join `--grouped-topics` of the topics (a group per member and
 * topic, all partitions), so there are groups × grouped-topics × partitions group
 * series. Prints the median of --repeat scrapes after one to warm up.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Broker } from '../src';
import { metricsRegistry } from '../src/metrics';
import { arg } from './args';

const TOPICS = Number(arg('topics', '20'));
const PARTITIONS = Number(arg('partitions', '200'));
const GROUPED = Number(arg('grouped-topics', '5'));
const GROUPS = Number(arg('groups', '4'));
const REPEAT = Number(arg('repeat', '5'));
const BASE = arg('dir', path.join(process.cwd(), '.bench-data'));

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;

async function main(): Promise<void> {
  fs.mkdirSync(BASE, { recursive: true });
  const dir = fs.mkdtempSync(path.join(BASE, 'metrics-'));
  // Past maxPartitions' default where the open-file hard limit Node runs with (`ulimit -Hn`) is below 32,000 (4,000 partitions by default).
  const broker = await Broker.open({ dir, durability: 'none', maxPartitions: Math.max(1, TOPICS * PARTITIONS) });
  try {
    const registry = metricsRegistry(broker, { processMetrics: false });
    for (let t = 0; t < TOPICS; t++) await broker.createTopic(`t${t}`, { partitions: PARTITIONS });
    const consumers = [];
    for (let t = 0; t < Math.min(GROUPED, TOPICS); t++) for (let g = 0; g < GROUPS; g++) consumers.push(broker.consumer({ topic: `t${t}`, group: `g${g}`, from: 'earliest' }));
    // Joining is asynchronous: wait until every group is described.
    const until = Date.now() + 30_000;
    while (Date.now() < until) {
      let joined = 0;
      for (let t = 0; t < Math.min(GROUPED, TOPICS); t++) joined += (await broker.describeTopic(`t${t}`)).groups.length;
      if (joined === consumers.length) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const describe: number[] = [];
    const scrape: number[] = [];
    let lines = 0;
    for (let i = 0; i <= REPEAT; i++) {
      let t0 = process.hrtime.bigint();
      for (const n of await broker.listTopics()) await broker.describeTopic(n);
      const d = ms(t0);
      t0 = process.hrtime.bigint();
      const text = await registry.metrics();
      const s = ms(t0);
      lines = text.split('\n').filter((l) => l && !l.startsWith('#')).length;
      if (i === 0) continue; // warm-up
      describe.push(d);
      scrape.push(s);
    }
    console.log(`uringmq bench:metrics — ${new Date().toISOString()}`);
    console.log(`${TOPICS} topics × ${PARTITIONS} partitions; ${GROUPS} groups on each of ${Math.min(GROUPED, TOPICS)} topics; ${lines} series; median of ${REPEAT} scrapes\n`);
    console.log('| what | ms of the main thread | × describing alone |');
    console.log('|---|---:|---:|');
    console.log(`| describe every topic (ceiling) | ${median(describe).toFixed(1)} | 1.00 |`);
    console.log(`| scrape (describe, fill the gauges, format the text) | ${median(scrape).toFixed(1)} | ${(median(scrape) / median(describe)).toFixed(2)} |`);
    for (const c of consumers) await c.close();
  } finally {
    await broker.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
