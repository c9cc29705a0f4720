/**
 * Consumer flow control over time: one group member whose processing speed changes in
 * steps (fast → slow → fast) against a producer publishing at a steady rate. The
 * broker runs in this process with a gRPC server on a loopback port; the consumer
 * goes through the client library (Subscribe, which sends the feedback), the producer
 * is embedded. Samples describeTopic and charts window, token rate, delivered rate,
 * reported latency and lag.
 *
 *   npm run bench:flow [-- --phase-seconds 15 --rate 5000 --slow-delay-ms 5 --readme-svg]
 *
 * Writes bench-results/flow-<timestamp>.html and .svg (and docs/flow-control.svg with --readme-svg).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Broker, BrokerServer } from '../src';
import { connect } from '../src/client';
import { lineChart, type Band, type Series } from '../src/bench/svg_chart';
import { arg, flag } from './args';

const PHASE_S = Number(arg('phase-seconds', '15'));
const RATE = Number(arg('rate', '5000'));
const SLOW_MS = Number(arg('slow-delay-ms', '5'));
const README_SVG = flag('readme-svg');
const FEEDBACK_MS = 500;
const SAMPLE_MS = 250;
const TICK_MS = 10;
const RECORD = 100;
const DRAIN_GRACE_MS = 10_000;
const PHASES = [
  { name: 'fast', delayMs: 0 },
  { name: 'slow', delayMs: SLOW_MS },
  { name: 'fast', delayMs: 0 },
];
const END_S = PHASES.length * PHASE_S;

interface Sample {
  t: number;
  window: number;
  tokenRate: number;
  reportedRate: number;
  latencyMs: number;
  lag: number;
  delivered: number;
  deliveredRate: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
};
const phaseAt = (tSec: number) => Math.min(PHASES.length - 1, Math.floor(tSec / PHASE_S));

async function main(): Promise<void> {
  if (!(PHASE_S > 0) || !(RATE > 0)) throw new Error('--phase-seconds and --rate must be positive');
  fs.mkdirSync(path.join(process.cwd(), '.bench-data'), { recursive: true });
  const dir = fs.mkdtempSync(path.join(process.cwd(), '.bench-data', 'flow-'));
  const broker = await Broker.open({ dir, durability: 'sync' });
  const server = await BrokerServer.start({ broker, host: '127.0.0.1', port: 0 });
  const client = await connect(`127.0.0.1:${server.port}`);
  const cpu = os.cpus();
  console.log(`uringmq bench:flow — ${new Date().toISOString()}`);
  console.log(`kernel ${os.release()}, ${cpu.length}× ${cpu[0]?.model}, node ${process.version}; broker in-process, durability sync`);
  console.log(`consumer: client library over gRPC (127.0.0.1:${server.port}, sends feedback every ${FEEDBACK_MS} ms); producer: embedded, ${RATE} msgs/s open loop, ${RECORD}-byte records every ${TICK_MS} ms`);
  console.log(`phases of ${PHASE_S}s: ${PHASES.map((p) => (p.delayMs ? `${p.name} (${p.delayMs} ms/msg)` : p.name)).join(' → ')}; sampled every ${SAMPLE_MS} ms\n`);

  try {
    await broker.createTopic('flow', { partitions: 1 });
    const producer = broker.producer({ lingerMs: 1 });
    const consumer = client.consumer({ topic: 'flow', group: 'bench', from: 'earliest', flow: { feedbackIntervalMs: FEEDBACK_MS } });
    const t0 = performance.now();
    const now = () => (performance.now() - t0) / 1000;

    // Open-loop producer: every tick sends what the schedule says is due.
    let sent = 0;
    let sendErrors = 0;
    const sends: Array<Promise<unknown>> = [];
    const prodTimer = setInterval(() => {
      const due = Math.min(Math.floor(now() * RATE), Math.round(END_S * RATE)) - sent;
      if (due <= 0) return;
      const records = Array.from({ length: due }, (_, i) => {
        const v = Buffer.alloc(RECORD, 0x61);
        v.writeUInt32LE(sent + i, 0);
        return { value: v };
      });
      sent += due;
      sends.push(producer.sendBatch('flow', records, { partition: 0 }).catch(() => void sendErrors++));
    }, TICK_MS);

    // Consumer: its speed follows the phase it is in.
    const seen = new Set<number>();
    let delivered = 0;
    let duplicates = 0;
    const consuming = (async () => {
      for await (const m of consumer) {
        const seq = m.value.readUInt32LE(0);
        if (seen.has(seq)) duplicates++;
        else seen.add(seq);
        delivered++;
        const d = PHASES[phaseAt(now())]!.delayMs;
        if (d > 0) await sleep(d);
        m.ack();
      }
    })();

    // Sampler.
    const samples: Sample[] = [];
    const history: Array<[number, number]> = [];
    const sample = async () => {
      const t = now();
      const g = (await broker.describeTopic('flow')).groups.find((x) => x.group === 'bench');
      const mem = g?.members[0];
      history.push([t, delivered]);
      while (history.length > 2 && history[0]![0] < t - 0.5) history.shift();
      const [ht, hd] = history[0]!;
      if (!mem) return;
      samples.push({ t, window: mem.window, tokenRate: mem.tokenRate, reportedRate: mem.reportedRate, latencyMs: mem.latencyMs, lag: mem.lag, delivered, deliveredRate: t > ht ? (delivered - hd) / (t - ht) : 0 });
    };
    let drainedAt = NaN;
    for (;;) {
      await sleep(SAMPLE_MS);
      await sample();
      const s = samples[samples.length - 1];
      // Caught up: at most 100 ms of production outstanding.
      if (s && Number.isNaN(drainedAt) && s.t > 2 * PHASE_S && s.lag <= RATE / 10) drainedAt = s.t;
      if (now() >= END_S) break;
    }
    clearInterval(prodTimer);
    await Promise.all(sends);
    const deadline = performance.now() + DRAIN_GRACE_MS;
    while (seen.size < sent && performance.now() < deadline) await sleep(50);
    await sleep(FEEDBACK_MS); // let the last acks reach the broker
    await sample();
    await consumer.close();
    await consuming;

    // Table.
    const fmt = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '∞');
    const lines: string[] = [];
    const out = (l: string) => (console.log(l), lines.push(l));
    out('| phase | seconds | median window | median token rate (msgs/s) | median delivered (msgs/s) | max lag |');
    out('|---|---|---:|---:|---:|---:|');
    PHASES.forEach((p, i) => {
      const ss = samples.filter((s) => s.t >= i * PHASE_S && s.t < (i + 1) * PHASE_S);
      const med = (k: keyof Sample) => median(ss.map((s) => s[k]));
      out(`| ${p.name}${p.delayMs ? ` (${p.delayMs} ms/msg)` : ''} | ${i * PHASE_S}–${(i + 1) * PHASE_S} | ${fmt(med('window'))} | ${fmt(med('tokenRate'))} | ${fmt(med('deliveredRate'))} | ${fmt(Math.max(0, ...ss.map((s) => s.lag)))} |`);
    });
    const last = samples[samples.length - 1];
    const all = seen.size === sent && sendErrors === 0;
    const drained = Number.isNaN(drainedAt) ? `not within the last phase` : `${(drainedAt - 2 * PHASE_S).toFixed(1)}s into the last fast phase (lag ≤ ${fmt(RATE / 10)})`;
    out(`\nproduced ${fmt(sent)}, delivered ${fmt(seen.size)} distinct (${fmt(duplicates)} redelivered), send errors ${sendErrors}, final lag ${fmt(last?.lag ?? NaN)}`);
    out(`lag drained ${drained}; every message delivered: ${all ? 'yes' : 'NO'}`);

    // Chart: stacked panels sharing the time axis; phases are the shaded bands.
    const bands: Band[] = PHASES.map((p, i) => ({ x0: i * PHASE_S, x1: (i + 1) * PHASE_S, label: p.delayMs ? `${p.name}: ${p.delayMs} ms/msg` : `${p.name}: no delay`, kind: 'measured' }));
    const pts = (k: keyof Sample, pos = false) => samples.filter((s) => !pos || s[k] > 0).map((s): [number, number] => [s.t, s[k]]);
    // A paced token rate is drawn in runs; unpaced (Infinity) stretches are gaps.
    const tokenRuns: Series[] = [];
    let run: Array<[number, number]> | null = null;
    for (const s of samples) {
      if (!Number.isFinite(s.tokenRate)) run = null;
      else if (!run) tokenRuns.push({ name: tokenRuns.length ? '' : 'token rate (gap = unlimited)', color: '#d62728', stepped: true, points: (run = [[s.t, s.tokenRate]]) });
      else run.push([s.t, s.tokenRate]);
    }
    const common = { xLabel: 'seconds', bands, width: 920, height: 220 };
    const panels = [
      lineChart({ ...common, title: 'Delivery window (max unacked)', yLabel: 'messages', series: [{ name: 'window', color: '#1f77b4', stepped: true, points: pts('window') }] }),
      lineChart({
        ...common,
        title: 'Rates (log scale)',
        yLabel: 'msgs/s',
        yLog: true,
        series: [
          { name: 'delivered (consumer count)', color: '#2ca02c', points: pts('deliveredRate', true) },
          { name: 'reported by consumer', color: '#9467bd', dashed: true, points: pts('reportedRate', true) },
          { name: 'produced', color: '#7f7f7f', dashed: true, points: [[0, RATE], [END_S, RATE]] },
          ...tokenRuns,
        ],
      }),
      lineChart({ ...common, title: 'Processing latency reported by the consumer (log scale)', yLabel: 'ms', yLog: true, series: [{ name: 'latency', color: '#ff7f0e', points: pts('latencyMs', true) }, { name: 'threshold (100 ms)', color: '#7f7f7f', dashed: true, points: [[0, 100], [END_S, 100]] }] }),
      lineChart({ ...common, title: 'Lag (messages not yet acked by the group)', yLabel: 'messages', series: [{ name: 'lag', color: '#8c564b', points: pts('lag') }] }),
    ].map((svg) => svg.replace(/<line [^>]*\/><text [^>]*><\/text>/g, '')); // unnamed runs: no legend entry
    let y = 0;
    const nested = panels.map((svg) => {
      const h = Number(/height="(\d+)"/.exec(svg)![1]);
      const placed = svg.replace('<svg ', `<svg x="0" y="${y}" `);
      y += h;
      return placed;
    });
    const chart = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 920 ${y}" width="920" height="${y}">${nested.join('')}</svg>`;
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const outDir = path.join(process.cwd(), 'bench-results');
    fs.mkdirSync(outDir, { recursive: true });
    const base = path.join(outDir, `flow-${stamp}`);
    fs.writeFileSync(`${base}.svg`, chart);
    const info = `${PHASES.length} phases of ${PHASE_S}s, producer ${RATE} msgs/s × ${RECORD} B, feedback every ${FEEDBACK_MS} ms, consumer over gRPC; ${os.cpus().length}× ${cpu[0]?.model}, kernel ${os.release()}, node ${process.version}`;
    const table = `<pre>${lines.join('\n').replace(/&/g, '&amp;').replace(/</g, '&lt;')}</pre>`;
    fs.writeFileSync(`${base}.html`, `<!doctype html><meta charset="utf-8"><title>uringmq flow control</title><body style="font-family:sans-serif;max-width:940px"><h2>uringmq flow control: fast → slow → fast consumer</h2><p>${info}</p>${chart}${table}</body>`);
    console.log(`\nwrote ${base}.html and ${base}.svg`);
    if (README_SVG) {
      const docs = path.join(process.cwd(), 'docs', 'flow-control.svg');
      fs.writeFileSync(docs, chart);
      console.log(`wrote ${docs}`);
    }
    if (!all) process.exitCode = 1;
  } finally {
    await client.close();
    await server.stop(1000);
    await broker.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
