/**
 * Where end-to-end latency goes: `npm run bench:latency-parts [-- --rate 10000 --seconds 5]`.
 *
 * The same open-loop traffic as bench:grpc's e2e case (100 B records, `sync`, one
 * send() per scheduled time, producer lingerMs 0, a group consumer acking each
 * message, client and server in separate processes). Each record carries its send
 * time and sequence number; the server child (latency_parts_server.ts) notes when its request reached
 * the handler and when its append was durable, all on CLOCK_MONOTONIC, so every
 * message's latency splits into client → server handler, the server's append, and
 * durable → consumer (and durable → publish ack). Then the embedded path alone (send → durable ack, no gRPC) at
 * the same rate, and the server main thread's CPU. Percentiles in ms; the first
 * second is discarded.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Broker } from '../src';
import { connect } from '../src/client';
import { openLoop } from '../src/bench/open_loop';
import { SERVER_NODE_FLAGS } from '../src/cli/node_flags';
import { nodeScriptArgs } from '../src/bench/node_script';
import { MARK, SENT_AT, SEQ_AT, TimeTable, monoMs } from './latency_parts_mark';
import { arg } from './args';

const RATE = Number(arg('rate', '10000'));
const SECONDS = Number(arg('seconds', '5'));
const RECORD = 100;

/** Messages the run sends at most: the tables' size (warm-up and a margin included). */
const CAPACITY = Math.ceil(RATE * (SECONDS + 3));

/** A 100-byte value: the marker, the send time, the message's sequence number. */
function stamped(seq: number): Buffer {
  const v = Buffer.alloc(RECORD);
  MARK.copy(v, 0);
  v.writeDoubleLE(monoMs(), SENT_AT);
  v.writeUInt32LE(seq, SEQ_AT);
  return v;
}

function pct(xs: number[]): string {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number) => (s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))]!.toFixed(2) : '—');
  return `${q(0.5)} | ${q(0.9)} | ${q(0.99)}`;
}

const threadCpuMs = (pid: number): number => Number(fs.readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;

async function overGrpc(dir: string): Promise<void> {
  const trace = path.join(dir, 'server-trace.txt');
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, ...nodeScriptArgs(path.join(__dirname, 'latency_parts_server')), path.join(dir, 'grpc'), trace, String(CAPACITY)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      let out = '';
      child.once('exit', (code) => reject(new Error(`server exited (${code})`)));
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /^\{"broker":(\d+)\}$/m.exec(out);
        if (m) resolve(Number(m[1]));
      });
    });
    const client = await connect(`127.0.0.1:${port}`);
    await client.createTopic('parts', { partitions: 1 });
    const producer = client.producer({ lingerMs: 0 });
    const consumer = client.consumer({ topic: 'parts', group: 'parts', from: 'latest' });
    const start = performance.now() + 300;
    const warmEnd = monoMs() + 300 + 1000; // in the marker's clock
    const end = start + 1000 + SECONDS * 1000;
    // By sequence number: the send time, when the consumer got it, when its publish ack came.
    const sentAt = new TimeTable(CAPACITY);
    const received = new TimeTable(CAPACITY);
    const acked = new TimeTable(CAPACITY);
    let stop = false;
    const consuming = (async () => {
      for await (const m of consumer) {
        m.ack();
        received.set(m.value.readUInt32LE(SEQ_AT), monoMs());
        if (stop) break;
      }
    })();
    await new Promise((r) => setTimeout(r, 300));
    let next = 0;
    const cpu0 = threadCpuMs(child.pid!);
    const t0 = performance.now();
    await openLoop({
      rate: RATE,
      start,
      end,
      precise: true,
      send: () => {
        const seq = next++;
        if (seq >= CAPACITY) return;
        const v = stamped(seq);
        sentAt.set(seq, v.readDoubleLE(SENT_AT));
        void producer.send('parts', { value: v, partition: 0 }).then(() => acked.set(seq, monoMs()));
      },
    });
    const cpu = (threadCpuMs(child.pid!) - cpu0) / (performance.now() - t0);
    await producer.flush();
    await new Promise((r) => setTimeout(r, 500));
    stop = true;
    await consumer.close();
    await Promise.race([consuming, new Promise((r) => setTimeout(r, 2000))]);
    await client.close();
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    const arrivedAt = new TimeTable(CAPACITY);
    const durableAt = new TimeTable(CAPACITY);
    for (const line of fs.readFileSync(trace, 'utf8').split('\n')) {
      const [seq, a, d] = line.split(' ').map(Number);
      if (seq !== undefined && a !== undefined && d !== undefined) {
        arrivedAt.set(seq, a);
        durableAt.set(seq, d);
      }
    }
    const total: number[] = [];
    const toServer: number[] = [];
    const append: number[] = [];
    const toConsumer: number[] = [];
    const ackTotal: number[] = [];
    const toAck: number[] = [];
    for (let seq = 0; seq < Math.min(next, CAPACITY); seq++) {
      const s = sentAt.get(seq);
      if (!(s >= warmEnd)) continue;
      const [arrived, durable, got, ack] = [arrivedAt.get(seq), durableAt.get(seq), received.get(seq), acked.get(seq)];
      if (!Number.isNaN(ack)) {
        ackTotal.push(ack - s);
        if (!Number.isNaN(durable)) toAck.push(ack - durable);
      }
      if (Number.isNaN(got) || Number.isNaN(durable)) continue;
      total.push(got - s);
      toServer.push(arrived - s);
      append.push(durable - arrived);
      toConsumer.push(got - durable);
    }
    console.log(`over gRPC: ${total.length} messages; server main thread ${(cpu * 100).toFixed(0)}% of a core, ${((cpu * 1000) / (RATE / 1000)).toFixed(1)} µs per message\n`);
    console.log('| part | p50 | p90 | p99 |');
    console.log('|---|---:|---:|---:|');
    console.log(`| end to end, send() → consumer | ${pct(total)} |`);
    console.log(`| client → server handler | ${pct(toServer)} |`);
    console.log(`| server append (handler → durable) | ${pct(append)} |`);
    console.log(`| durable → consumer | ${pct(toConsumer)} |`);
    console.log(`| publish ack, send() → ack | ${pct(ackTotal)} |`);
    console.log(`| durable → publish ack | ${pct(toAck)} |`);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}

async function embedded(dir: string): Promise<void> {
  const broker = await Broker.open({ dir: path.join(dir, 'embedded') });
  try {
    await broker.createTopic('parts');
    const producer = broker.producer({ lingerMs: 0 });
    const lat: number[] = [];
    const start = performance.now() + 200;
    const warmEnd = start + 1000;
    await openLoop({
      rate: RATE,
      start,
      end: warmEnd + SECONDS * 1000,
      precise: true,
      send: (scheduled) => {
        const t = performance.now();
        void producer.send('parts', { value: Buffer.alloc(RECORD), partition: 0 }).then(() => {
          if (scheduled >= warmEnd) lat.push(performance.now() - t);
        });
      },
    });
    await producer.flush();
    console.log(`| embedded, send() → durable ack (no gRPC) | ${pct(lat)} |`);
  } finally {
    await broker.close();
  }
}

async function main(): Promise<void> {
  fs.mkdirSync('.bench-data', { recursive: true });
  const dir = fs.mkdtempSync(path.join('.bench-data', 'parts-'));
  console.log(`uringmq bench:latency-parts — ${new Date().toISOString()}, ${os.cpus().length}× ${os.cpus()[0]?.model}, node ${process.version}`);
  console.log(`${RECORD}-byte records, durability sync, ${RATE} msgs/s for ${SECONDS}s after a 1s warm-up; latency in ms\n`);
  try {
    await overGrpc(dir);
    await embedded(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
