/**
 * gRPC broker throughput and latency, client and server in separate processes on
 * this machine, 100-byte records, durability 'sync' (override: --durability none).
 *
 *   npm run bench:grpc [-- --seconds 5] [--only e2e|throughput] [--in-flight 64] [--rates 1000,5000,10000] [--coarse-timers] [--server-node-defaults] [--server-streams grpc-js] [--freeze-probe] [--warmup-seconds 2] [--group-commit-us 1000]
 *
 * In the same run, a bare grpc-js stream of equal-sized bytes messages with no broker
 * behind it, with the same HTTP/2 window and TCP settings, gives the transport ceiling
 * each result is compared with; the batched cases are compared with the higher of it
 * measured right before and right after them (the host's speed drifts). The same bare
 * stream spoken over node:http2 (the transport the client's producers use) is printed
 * beside it, for reference. Each throughput case starts from a collected heap
 * (--expose-gc). The latency cases have three floors on the same schedule: the bare
 * grpc-js stream's round trip, the same echo over node:http2 on both sides (the
 * transport the broker's streams use), and a plain TCP echo.
 */
import { openLoop as runOpenLoop } from '../src/bench/open_loop';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http2 from 'node:http2';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { histogram, lat, latCell, roundTrips as measureRoundTrips, type Echo, type Lat, type RoundTripLat } from './round_trips';
import { connect, type Client } from '../src/client';
import { encodeBatch } from '../src/codec/record_batch';
import { GRPC_PREFIX_BYTES, GrpcFrameReader } from '../src/grpc/framing';
import { brokerService } from '../src/grpc/service';
import { SERVER_NODE_FLAGS } from '../src/cli/node_flags';
import { nodeScriptArgs } from '../src/bench/node_script';
import { arg, checkFlags, flag, usageError } from './args';
import { freezeCell, startFreezeProbe, type FreezeResult } from './freeze_probe';
import { GcPauseLog, gcCell, loopDelayMonitor, summarize, type GcPause, type GcSummary, type LoopDelay } from '../src/bench/gc_pauses';
import { DEFAULT_GROUP_COMMIT_US, DEFAULT_ZERO_AHEAD_BYTES, type LogLatency } from '../src/broker/broker';

const USAGE =
  'usage: npm run bench:grpc [-- --seconds 5] [--only e2e|throughput] [--in-flight 64] [--rates 1000,5000,10000] [--durability sync|none] [--coarse-timers] [--server-node-defaults] [--server-streams direct|grpc-js] [--freeze-probe] [--warmup-seconds 2] [--group-commit-us 1000] [--zero-ahead-bytes 2097152]';
checkFlags(USAGE, ['seconds', 'only', 'in-flight', 'rates', 'durability', 'server-streams', 'warmup-seconds', 'group-commit-us', 'zero-ahead-bytes'], ['coarse-timers', 'server-node-defaults', 'freeze-probe']);
const SECONDS = Number(arg('seconds', '5'));
if (!(SECONDS > 0 && Number.isFinite(SECONDS))) usageError(USAGE, `--seconds takes a positive number, not ${arg('seconds', '')}`);
/** The server's durability, 'sync' or 'none' (anything else would run 'sync' under another name). */
const DURABILITY = arg('durability', 'sync');
if (DURABILITY !== 'sync' && DURABILITY !== 'none') usageError(USAGE, `--durability takes sync or none, not ${DURABILITY}`);
/** --only: the latency cases or the throughput cases alone (default both). */
const ONLY = arg('only', '');
if (ONLY !== '' && ONLY !== 'e2e' && ONLY !== 'throughput') usageError(USAGE, `--only takes e2e or throughput, not ${ONLY}`);
/** The end-to-end cases' rates, msgs/s. */
const RATES = arg('rates', '1000,5000,10000').split(',').map(Number);
if (!RATES.every((r) => r > 0 && Number.isFinite(r))) usageError(USAGE, `--rates takes msgs/s separated by commas, not ${arg('rates', '')}`);
/** BrokerOptions.groupCommitUs of the bench server (default: the broker's). */
const GROUP_COMMIT_US = arg('group-commit-us', String(DEFAULT_GROUP_COMMIT_US));
/** BrokerOptions.zeroAheadBytes of the bench server (default: the broker's). */
const ZERO_AHEAD_BYTES = arg('zero-ahead-bytes', String(DEFAULT_ZERO_AHEAD_BYTES));
const RECORD = 100;
const BATCH = 1000;
/** Batches in flight for the batched publish and its bare-stream ceiling alike (the client's default). */
const IN_FLIGHT = Number(arg('in-flight', '64'));
if (!(Number.isInteger(IN_FLIGHT) && IN_FLIGHT > 0)) usageError(USAGE, `--in-flight takes a positive integer, not ${arg('in-flight', '')}`);
/**
 * The open-loop sender sends each message at its own scheduled time, woken by a
 * native timerfd that the client's own event loop polls (src/bench/open_loop.ts): at 10k msgs/s, one
 * send every 100 µs, as evenly spaced traffic arrives. --coarse-timers wakes it on
 * Node's 1 ms timers instead, so messages leave in bursts of ~10 per tick, each
 * having waited up to a tick: in nine alternating pairs at 10k msgs/s (2026-11-30,
 * host noisy) e2e p99 from the schedule read 3.5–7.0 ms precise against 4.7–9.7 ms
 * coarse (lower in 7 of 9), and the bare stream's round trip 1.0–2.3 against 2.5–5.4 ms.
 */
const PRECISE = !flag('coarse-timers');
/** --server-node-defaults: the server without SERVER_NODE_FLAGS, to see what they are for. */
const SERVER_DEFAULTS = flag('server-node-defaults');
/**
 * --server-streams grpc-js: the broker's server leaves PublishStream and Subscribe to
 * grpc-js (directStreams: false) instead of serving them on node:http2 directly.
 */
const SERVER_STREAMS = arg('server-streams', 'direct');
if (SERVER_STREAMS !== 'direct' && SERVER_STREAMS !== 'grpc-js') usageError(USAGE, `--server-streams takes direct or grpc-js, not ${SERVER_STREAMS}`);
/**
 * --freeze-probe: run bench/native/freeze_probe.cc beside each latency case (one
 * real-time thread per CPU, waking every 2 ms) and print how often the host took a
 * vCPU, or all of them, away during it. Off by default: the probe's own wake-ups are load.
 */
const FREEZE_PROBE = flag('freeze-probe');
/**
 * The latency cases' discarded start (--warmup-seconds, default 2), the same for the
 * floors and the broker. A new producer and consumer pair runs slower for its first
 * 1.5–2 s: timelines of every message's latency at 10k msgs/s (2026-12-04) read p99 per
 * 500 ms of 4–10 ms over the first 1.5–2 s of each case and ~2 ms after, with the JIT
 * already warm from the cases before it and the publish ack as slow as the delivery.
 * A 1 s warm-up left that tail in the measured window. The end-to-end table prints the
 * warm-up's own latency beside the measured window's, so it is not hidden.
 */
const WARMUP_MS = Number(arg('warmup-seconds', '2')) * 1000;
if (!(WARMUP_MS >= 0)) usageError(USAGE, '--warmup-seconds takes a number of seconds');

interface Row {
  name: string;
  recPerSec: number;
  ceiling?: number;
  /** The ceiling's samples right before and right after the case (ceiling: the higher). */
  bracket?: [number, number];
  note?: string;
}

/**
 * CPU time of the client (this process) and the server child by thread, from
 * /proc/<pid>/task/<tid>/schedstat (ns on a CPU, ns waiting for one), to say where a
 * case's time goes per record: on two cores the threads compete for them.
 */
const CPU_COLUMNS = ['client main', 'client other', 'server main', 'server I/O', 'server other'] as const;
interface CpuSnap {
  at: number;
  ns: Record<(typeof CPU_COLUMNS)[number], number>;
  /** Context switches (voluntary + involuntary): each a thread going off its vCPU, most of them a wake-up later. */
  switches: Record<(typeof CPU_COLUMNS)[number], number>;
  /** The client's main thread waiting for a CPU while runnable. */
  clientWaitNs: number;
}
let serverPid = 0;

/**
 * Every thread's CPU time and context switches so far, both processes. Read in libuv's
 * pool: synchronous, the /proc reads (1–2 ms) held the messages in flight at a latency
 * window's edges.
 */
async function cpuSnap(): Promise<CpuSnap> {
  const snap = emptySnap();
  await Promise.all(
    snapPids().map(async ([pid, who]) => {
      const tids = await fs.promises.readdir(`/proc/${pid}/task`);
      await Promise.all(
        tids.map(async (tid) => {
          try {
            const read = (f: string) => fs.promises.readFile(`/proc/${pid}/task/${tid}/${f}`, 'utf8');
            const [schedstat, comm, status] = await Promise.all([read('schedstat'), read('comm'), read('status')]);
            addThread(snap, pid, who, tid, schedstat, comm, status);
          } catch {
            // the thread exited meanwhile
          }
        }),
      );
    }),
  );
  return snap;
}

function emptySnap(): CpuSnap {
  const zero = () => ({ 'client main': 0, 'client other': 0, 'server main': 0, 'server I/O': 0, 'server other': 0 });
  return { at: performance.now(), ns: zero(), switches: zero(), clientWaitNs: 0 };
}

function snapPids(): Array<[number, 'client' | 'server']> {
  return serverPid ? [[process.pid, 'client'], [serverPid, 'server']] : [[process.pid, 'client']];
}

/** One thread's run time and context switches into its column of `snap`. */
function addThread(snap: CpuSnap, pid: number, who: 'client' | 'server', tid: string, schedstat: string, comm: string, status: string): void {
  const [run, wait] = schedstat.split(' ').map(Number) as [number, number];
  const main = tid === String(pid);
  const io = !main && comm.trim() === 'uringmq-io';
  const column = `${who} ${main ? 'main' : io ? 'I/O' : 'other'}` as keyof CpuSnap['ns'];
  snap.ns[column] += run;
  snap.switches[column] += Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0) + Number(/^nonvoluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0);
  if (main && who === 'client') snap.clientWaitNs = wait;
}

interface CpuRow {
  name: string;
  records: number;
  from: CpuSnap;
  to: CpuSnap;
}
const cpuRows: CpuRow[] = [];

/** Records/s of `body` over `seconds`, after a 0.5 s warm-up; the body counts into `counter`. */
async function timed(seconds: number, body: (stop: () => boolean) => Promise<unknown>, cpu?: { name: string; recordsPerCount: number }): Promise<number> {
  // Every case starts from a collected heap: the garbage an earlier case left (20 M
  // consumed messages, a million pending promises) would otherwise be collected on the
  // next case's time, the bare stream's too.
  collectGarbage();
  const warm = 500;
  let stopAt = 0;
  let t1 = 0;
  let before = 0;
  let from: Promise<CpuSnap> | null = null;
  counter = 0;
  setTimeout(() => {
    before = counter;
    t1 = Date.now();
    stopAt = t1 + seconds * 1000;
    if (cpu) from = cpuSnap();
  }, warm);
  const stop = () => stopAt > 0 && Date.now() >= stopAt;
  await body(stop);
  const perSec = (counter - before) / ((Date.now() - t1) / 1000);
  if (cpu && from) cpuRows.push({ name: cpu.name, records: (counter - before) * cpu.recordsPerCount, from: await from, to: await cpuSnap() });
  return perSec;
}
let counter = 0;

/** A full GC of this process, if started with --expose-gc (`npm run bench:grpc` is). */
function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (typeof gc === 'function') gc();
}

function rawStream(port: number, msgBytes: number, window: number, stop: () => boolean): Promise<void> {
  const c = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), {
    'grpc.max_send_message_length': 64 << 20,
    'grpc-node.flow_control_window': 16 << 20, // as the uringmq client sets it
    'grpc.enable_channelz': 0, // likewise
  });
  const id = (b: Buffer) => b;
  const s = c.makeBidiStreamRequest('/bench.Raw/Stream', id, id);
  const msg = Buffer.alloc(msgBytes, 0x61);
  let inflight = 0;
  return new Promise((resolve) => {
    const pump = () => {
      while (inflight < window && !stop()) {
        inflight++;
        s.write(msg);
      }
      if (stop() && inflight === 0) {
        s.end();
        c.close();
        resolve();
      }
    };
    s.on('data', () => {
      inflight--;
      counter++;
      pump();
    });
    s.on('error', () => undefined);
    pump();
  });
}

/** Bare grpc-js unary calls of `msgBytes` each, `concurrency` outstanding, on a client of their own. */
function rawUnary(port: number, msgBytes: number, concurrency: number, stop: () => boolean): Promise<void> {
  const c = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), { 'grpc.enable_channelz': 0 });
  const id = (b: Buffer) => b;
  const msg = Buffer.alloc(msgBytes, 0x61);
  return Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (!stop()) {
        await new Promise<void>((resolve, reject) => c.makeUnaryRequest('/bench.Raw/Unary', id, id, msg, (e) => (e ? reject(e) : resolve())));
        counter++;
      }
    }),
  )
    .then(() => undefined)
    .finally(() => c.close());
}

/**
 * The same bare stream, spoken over node:http2 with gRPC framing written by hand: the
 * transport the client library's producers and consumers use (src/client/direct_stream.ts), with no
 * broker and no encoding. Requests wait in this sender, not in transport buffers, as
 * the producer's do.
 */
function rawH2Stream(port: number, msgBytes: number, window: number, stop: () => boolean): Promise<void> {
  const session = http2.connect(`http://127.0.0.1:${port}`, {
    maxSessionMemory: 64,
    createConnection: () => net.connect({ host: '127.0.0.1', port }).setNoDelay(true),
  });
  const s = session.request({ ':method': 'POST', ':path': '/bench.Raw/Stream', 'content-type': 'application/grpc', te: 'trailers' });
  const msg = Buffer.alloc(5 + msgBytes, 0x61);
  msg[0] = 0;
  msg.writeUInt32BE(msgBytes, 1);
  let inflight = 0;
  let blocked = false;
  const frames = new GrpcFrameReader(1 << 20, { side: 'client' });
  return new Promise((resolve) => {
    let done = false;
    const pump = () => {
      while (!blocked && inflight < window && !stop()) {
        inflight++;
        if (!s.write(msg)) blocked = true;
      }
      if (stop() && inflight === 0 && !done) {
        done = true;
        s.end();
        session.close();
        resolve();
      }
    };
    s.on('drain', () => {
      blocked = false;
      pump();
    });
    s.on('data', (d: Buffer) => {
      const acks = frames.push(d).length;
      inflight -= acks;
      counter += acks;
      pump();
    });
    s.on('error', () => undefined);
    session.on('error', () => undefined);
    pump();
  });
}

async function main(): Promise<void> {
  fs.mkdirSync(path.join(process.cwd(), '.bench-data'), { recursive: true }); // absent in a fresh clone
  const dir = fs.mkdtempSync(path.join(process.cwd(), '.bench-data', 'grpc-'));
  // BENCH_SERVER_NODE_ARGS passes V8 flags to the server only (e.g. "--trace-gc").
  const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...(SERVER_DEFAULTS ? [] : SERVER_NODE_FLAGS), ...nodeArgs, ...nodeScriptArgs(path.join(__dirname, 'grpc_server')), dir, DURABILITY, SERVER_STREAMS, GROUP_COMMIT_US, ZERO_AHEAD_BYTES], { stdio: ['pipe', 'pipe', 'inherit'] }); // stdin: its end tells the server this process is gone
  serverPid = child.pid ?? 0;
  // Whether the server has exited (its 'exit' already emitted: waiting for it again would wait forever).
  let serverExited = false;
  child.once('exit', () => (serverExited = true));
  child.once('error', () => (serverExited = true)); // not started: no 'exit' to wait for
  // SIGTERM or SIGINT: the server stopped and the data dir removed before exiting, as at the end of a run.
  for (const sig of ['SIGINT', 'SIGTERM'] as const)
    process.once(sig, () => {
      const done = () => {
        fs.rmSync(dir, { recursive: true, force: true });
        process.exit(sig === 'SIGINT' ? 130 : 143);
      };
      if (serverExited) return done();
      child.once('exit', done);
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 5000).unref();
    });
  try {
    await runCases(child, dir, nodeArgs);
  } finally {
    if (!serverExited) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function runCases(child: ReturnType<typeof spawn>, dir: string, nodeArgs: string[]): Promise<void> {
  // The server's ports, or its exit (a bad option, a broker that cannot open) as the run's failure.
  const ports = await new Promise<{ broker: number; raw: number; tcp: number; h2: number; ioBackend: string }>((resolve, reject) => {
    let out = '';
    let found = false;
    child.stdout!.on('data', (d: Buffer) => {
      if (found) return void process.stderr.write(d); // the server's own output (V8 traces)
      out += d.toString();
      const m = /^\{"broker".*$/m.exec(out);
      if (m) {
        found = true;
        resolve(JSON.parse(m[0]));
      }
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (!found) reject(new Error(`the bench server exited (${signal ?? `status ${code}`}) before it was ready (its error is above)`));
    });
  });
  const rows: Row[] = [];
  let disk: { publishBytes: number; before: number | string; after: number | string } | null = null;
  console.log(`uringmq bench:grpc — ${new Date().toISOString()}`);
  console.log(`kernel ${os.release()}, ${os.cpus().length}× ${os.cpus()[0]?.model}, node ${process.version}; server: separate process, ${ports.ioBackend}, durability ${DURABILITY}, group commit ${GROUP_COMMIT_US} µs, zero ahead ${Number(ZERO_AHEAD_BYTES) / 1024} KiB, PublishStream and Subscribe ${SERVER_STREAMS === 'direct' ? 'on node:http2 directly' : 'through grpc-js'}`);
  console.log(`server node flags: ${[...(SERVER_DEFAULTS ? [] : SERVER_NODE_FLAGS), ...nodeArgs].join(' ') || 'none'}; client (this process): ${process.execArgv.join(' ') || 'none'}`);
  console.log(`${RECORD}-byte records, ${SECONDS}s per case after 0.5s warm-up (latency cases: ${WARMUP_MS / 1000}s; consume: none, timed from the group join to the close that sends its last acks)\n`);
  const client: Client = await connect(`127.0.0.1:${ports.broker}`, { maxMessageBytes: 64 << 20 });
  try {
    await client.createTopic('bench', { partitions: 1, segmentBytes: 1 << 30 });
    await client.createTopic('unary', { partitions: 1 });
    await client.createTopic('e2e', { partitions: 1 });
    const value = Buffer.alloc(RECORD, 0x62);
    const batch = Array.from({ length: BATCH }, () => ({ value }));
    // The size a real batch of them encodes to: the ceiling's messages are as large.
    const batchBytes = encodeBatch(batch).length;

    const only = ONLY;
    // End-to-end latency, open loop, scheduled sends. Run first: after the throughput
    // cases this process (the measuring client) carries the GC aftermath of consuming
    // millions of messages, and its pauses showed as several ms at p99 (7 ms at 10k/s
    // in one run, 2.8 ms with the latency cases first, same code and hour).
    const e2e: Array<E2e & { raw: Floor; h2: Floor; h2Durable: Floor; tcp: Floor; disk: Lat; diskBackToBack: Lat; frozen: Freezes }> = [];
    for (const rate of only === 'throughput' ? [] : RATES) {
      const disk = await diskSyncLatency(dir, Math.min(rate, 1000), 3);
      const diskBackToBack = await diskSyncLatency(dir, 0, 1);
      const frozen: Freezes = {};
      const probed = async <T>(k: keyof Freezes, run: () => Promise<T>): Promise<T> => {
        const probe = FREEZE_PROBE ? startFreezeProbe() : null;
        let result: T;
        try {
          result = await run();
        } catch (e) {
          await probe?.stop().catch(() => undefined); // the case's own error is the one to see
          throw e;
        }
        if (probe) frozen[k] = await probe.stop();
        return result;
      };
      const tcp = await probed('tcp', () => tcpRoundTrip(ports.tcp, rate, Math.max(3, SECONDS)));
      const raw = await probed('raw', () => rawRoundTrip(ports.raw, rate, Math.max(3, SECONDS)));
      const h2 = await probed('h2', () => h2RoundTrip(ports.h2, rate, Math.max(3, SECONDS)));
      const h2Durable = await probed('h2Durable', () => h2RoundTrip(ports.h2, rate, Math.max(3, SECONDS), true));
      e2e.push({ ...(await probed('e2e', () => endToEnd(client, rate, Math.max(3, SECONDS), ports.h2))), raw, h2, h2Durable, tcp, disk, diskBackToBack, frozen });
    }
    if (only !== 'e2e') {
    // Ceiling: bare stream with one bytes message per 1000-record batch. The host's
    // speed drifts within a run (up to 1.5x between two cases a minute apart), so each
    // case compared with it is also bracketed: this stream is measured again right
    // before and right after the case, and the case is set against the higher of the
    // two. Not their mean: the sample after a heavy case can read low while the server
    // process recovers from it (5.75 M against 12.04 M before, 2026-12-01 04:06), and
    // a ceiling that sags with the case under test would flatter it.
    const rawBatched = (await timed(SECONDS, (stop) => rawStream(ports.raw, batchBytes, IN_FLIGHT, stop), { name: `raw grpc-js stream, ${BATCH} records per message`, recordsPerCount: BATCH })) * BATCH;
    rows.push({ name: `raw grpc-js stream, ${BATCH} records (${batchBytes} B) per message`, recPerSec: rawBatched });
    const rawH2 = (await timed(SECONDS, (stop) => rawH2Stream(ports.raw, batchBytes, IN_FLIGHT, stop), { name: `raw gRPC over node:http2, ${BATCH} records per message`, recordsPerCount: BATCH })) * BATCH;
    rows.push({ name: `raw gRPC stream over node:http2 (the producers' transport), ${BATCH} records per message`, recPerSec: rawH2 });
    const rawSingle = await timed(SECONDS, (stop) => rawStream(ports.raw, RECORD + 20, 1000, stop));
    rows.push({ name: 'raw grpc-js stream, 1 record per message', recPerSec: rawSingle });
    const rawUnaryCalls = await timed(SECONDS, (stop) => rawUnary(ports.raw, RECORD + 20, 64, stop));
    rows.push({ name: 'raw grpc-js unary call, 1 record per call, 64 concurrent', recPerSec: rawUnaryCalls });
    const ceilingSample = async () => (await timed(SECONDS / 2, (stop) => rawStream(ports.raw, batchBytes, IN_FLIGHT, stop))) * BATCH;
    const bracketed = (before: number, after: number): Pick<Row, 'ceiling' | 'bracket'> => ({ ceiling: Math.max(before, after), bracket: [before, after] });

    // Client library, batches of 1000 via sendBatch, IN_FLIGHT of them outstanding.
    // With `sync` every byte of it is a durable write: the disk's own durable
    // sequential bandwidth, just before and after, is the other ceiling it has.
    const diskBefore = DURABILITY === 'sync' ? await diskBandwidth(dir) : null;
    const beforeBatched = await ceilingSample();
    // An idempotent producer takes at most 64 in flight (what the broker remembers per
    // producer): past it, the A/B of --in-flight 256 runs without idempotence.
    const p = client.producer({ maxInFlight: IN_FLIGHT, idempotent: IN_FLIGHT <= 64 });
    const pubBatched = await timed(SECONDS, async (stop) => {
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          while (!stop()) {
            await p.sendBatch('bench', batch, { partition: 0 });
            counter += BATCH;
          }
        }),
      );
    }, { name: `publish, sendBatch(${BATCH})`, recordsPerCount: 1 });
    const afterBatched = await ceilingSample();
    rows.push({ name: `publish, client library sendBatch(1000), ${IN_FLIGHT} in flight`, recPerSec: pubBatched, ...bracketed(beforeBatched, afterBatched) });
    if (diskBefore !== null) disk = { publishBytes: (pubBatched / BATCH) * batchBytes, before: diskBefore, after: await diskBandwidth(dir) };

    // Client library send() with its own batching (lingerMs 1).
    const p2 = client.producer({ lingerMs: 1, maxInFlight: 64 });
    const pubSend = await timed(SECONDS, async (stop) => {
      await Promise.all(
        Array.from({ length: 5000 }, async () => {
          while (!stop()) {
            await p2.send('bench', { value, partition: 0 });
            counter++;
          }
        }),
      );
    });
    const afterSend = await ceilingSample();
    rows.push({ name: 'publish, client library send() (batching, 5000 outstanding)', recPerSec: pubSend, ...bracketed(afterBatched, afterSend) });

    // Unary Publish, one plain record per call, 64 concurrent.
    const pubDef = brokerService.publish!;
    const unary = await timed(SECONDS, async (stop) => {
      await Promise.all(
        Array.from({ length: 64 }, async () => {
          while (!stop()) {
            await new Promise<void>((resolve, reject) =>
              client.grpc.makeUnaryRequest(pubDef.path, pubDef.requestSerialize, pubDef.responseDeserialize, { topic: 'unary', partition: 0, records: [{ value }] }, (e) => (e ? reject(e) : resolve())),
            );
            counter++;
          }
        }),
      );
    });
    rows.push({ name: 'publish, unary Publish, 1 record per call, 64 concurrent', recPerSec: unary, ceiling: rawUnaryCalls });

    // PublishStream with one plain record per message, 1000 in flight.
    const streamDef = brokerService.publishStream!;
    const perMsg = await timed(SECONDS, (stop) => {
      const s = client.grpc.makeBidiStreamRequest(streamDef.path, streamDef.requestSerialize, streamDef.responseDeserialize);
      let inflight = 0;
      let seq = 0;
      // A response with `error` set is a batch that was not written: not counted, and
      // the case fails with it (as a failed unary call fails its case).
      let failure: Error | null = null;
      return new Promise<void>((resolve, reject) => {
        const pump = () => {
          while (inflight < 1000 && !stop() && !failure) {
            inflight++;
            s.write({ sequence: ++seq, topic: 'unary', partition: 0, records: [{ value }] });
          }
          if ((stop() || failure) && inflight === 0) {
            s.end();
            if (failure) reject(failure);
            else resolve();
          }
        };
        s.on('data', (r: { error?: { code?: string | null; message?: string | null } | null }) => {
          inflight--;
          if (r.error?.code) failure ??= new Error(`PublishStream: ${r.error.code}: ${r.error.message ?? ''}`);
          else counter++;
          pump();
        });
        s.on('error', reject);
        pump();
      });
    });
    rows.push({ name: 'publish, PublishStream, 1 record per message, 1000 in flight', recPerSec: perMsg, ceiling: rawSingle });

    // Consume with acks: the backlog written above, read by a group.
    const backlog = (await client.describeTopic('bench')).partitions[0]!.endOffset;
    const beforeConsume = await ceilingSample();
    const c = client.consumer({ topic: 'bench', group: 'bench-consume', from: 'earliest', maxUnacked: 50_000 });
    counter = 0;
    const t0 = Date.now();
    const cpuFrom = cpuSnap();
    let n = 0;
    const target = Math.min(backlog, 20_000_000);
    outer: for await (const batch of c.batches()) {
      for (const m of batch) {
        m.ack();
        if (++n >= target) break outer;
      }
      if (Date.now() - t0 > SECONDS * 3000) break;
    }
    // Timed to the close, which sends the last acks and waits for the server to take
    // them: every message counted is acked at the broker, not only queued in the client.
    // (The time also holds the group join before the first delivery: no warm-up here.)
    await c.close();
    const consume = n / ((Date.now() - t0) / 1000);
    cpuRows.push({ name: 'consume, every message acked', records: n, from: await cpuFrom, to: await cpuSnap() });
    const afterConsume = await ceilingSample();
    rows.push({ name: `consume, group consumer batches(), every message acked (${n} records of a backlog)`, recPerSec: consume, ...bracketed(beforeConsume, afterConsume) });

    }

    console.log('| case | records/s | transport ceiling | × ceiling |');
    console.log('|---|---:|---:|---:|');
    for (const r of rows) {
      const ceiling = r.ceiling ? `${fmt(r.ceiling)}${r.bracket ? ` (${fmt(r.bracket[0])} before, ${fmt(r.bracket[1])} after)` : ''}` : '—';
      console.log(`| ${r.name} | ${fmt(r.recPerSec)} | ${ceiling} | ${r.ceiling ? (r.recPerSec / r.ceiling).toFixed(2) : '—'} |`);
    }
    if (disk) {
      const mb = (b: number) => `${(b / 1e6).toFixed(0)} MB/s`;
      const best = Math.max(...[disk.before, disk.after].filter((x): x is number => typeof x === 'number'));
      const said = (x: number | string) => (typeof x === 'number' ? mb(x) : `— (${x})`);
      console.log(
        `\nDurable writes under the batched publish: ${mb(disk.publishBytes)} of batches went to the log with \`${DURABILITY}\`; the disk's own durable` +
          `\nsequential write (dd, ${DISK_BLOCK >> 20} MiB blocks, O_DIRECT + O_DSYNC, ${DISK_BYTES >> 30} GiB) read ${said(disk.before)} before and ${said(disk.after)} after the case` +
          (Number.isFinite(best) ? `: ${(disk.publishBytes / best).toFixed(2)}× the higher.` : '.'),
      );
    }
    if (cpuRows.length) {
      console.log('\nCPU time per record in ns by thread (schedstat over each measured window; "other": GC, JIT and libuv threads),');
      console.log("and how much of the window the client's main thread was runnable but waiting for a CPU:\n");
      console.log(`| case | ${CPU_COLUMNS.join(' | ')} | client main waiting |`);
      console.log(`|---|${CPU_COLUMNS.map(() => '---:').join('|')}|---:|`);
      for (const r of cpuRows) {
        const per = CPU_COLUMNS.map((k) => ((r.to.ns[k] - r.from.ns[k]) / Math.max(1, r.records)).toFixed(0));
        const waitPct = ((r.to.clientWaitNs - r.from.clientWaitNs) / ((r.to.at - r.from.at) * 1e6)) * 100;
        console.log(`| ${r.name} | ${per.join(' | ')} | ${waitPct.toFixed(0)}% |`);
      }
    }
    const f = latCell;
    console.log(`\nLatency in ms as p50 / p99 / max, open-loop schedule, the first ${WARMUP_MS / 1000} s of each case discarded (the last column: the`);
    console.log('broker\'s end to end over that warm-up, not counted: a new producer and consumer). End to end = send → consumer;');
    console.log(`Sender: ${PRECISE ? 'each message at its own time (timerfd wake-ups)' : "Node's 1 ms timers (--coarse-timers), bursts per tick"}.`);
    console.log('"from schedule" counts the sender\'s own lag (coordinated omission), "from send()" starts when send() was called.\n');
    console.log('"disk sync write": 4 KiB O_DSYNC writes rewriting a file\'s tail block, as the log\'s cycles do, just before the case');
    console.log('(at most 1000/s: at higher rates the broker writes several messages per cycle) — the floor a durable ack sits on;');
    console.log('"back to back": the same writes with no pause for 1 s, the CPU never idle between them.');
    console.log('"bare stream": the grpc-js echo stream (grpc-js on both sides, which writes one message per event-loop turn once');
    console.log('messages queue); "bare node:http2": the same echo spoken over node:http2 on both sides, as the broker\'s streams are;');
    console.log('"durable node:http2": that echo answered only once the request is durable in a file (plain Node: O_DSYNC writes');
    console.log('through libuv\'s thread pool, one in flight, group-committed) — a durable round trip with no broker in it.');
    console.log('"TCP echo": the same schedule over a plain loopback TCP socket to the server process, which writes each');
    console.log('chunk back — the round trip this host gives two Node processes with no HTTP/2 at all.');
    console.log('A round trip of a floor not answered within 200 ms of its schedule\'s end counts as late as that wait (its cell says');
    console.log('how many); n/a: no sample at all.\n');
    console.log('| rate (msgs/s) | messages | end to end, from schedule | end to end, from send() | publish ack, from send() | bare grpc-js stream round trip | bare node:http2 round trip | durable node:http2 round trip | TCP echo round trip | disk sync write | disk sync write, back to back | end to end over the warm-up (not counted) |');
    console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const e of e2e) console.log(`| ${e.rate} | ${e.n}${e.missing ? ` (${e.missing} never arrived, counted as late as the wait)` : ''} | ${f(e.sched)} | ${f(e.sent)} | ${f(e.ack)} | ${f(e.raw)} | ${f(e.h2)} | ${f(e.h2Durable)} | ${f(e.tcp)} | ${f(e.disk)} | ${f(e.diskBackToBack)} | ${f(e.warm)} |`);
    if (e2e.some((e) => e.frozen.e2e)) {
      const realtime = e2e.every((e) => Object.values(e.frozen).every((r) => r.realtime));
      console.log('\nHost stops during each latency case (--freeze-probe): one thread per vCPU at real-time priority wakes every 2 ms;');
      console.log('a wake-up more than 4 ms late means its vCPU was off the CPU. Stops of every vCPU at once (the whole VM) / late');
      console.log('wake-ups on any vCPU / the latest in ms / the share of them due within the busiest 20 ms of a 100 ms clock grid');
      console.log(`(~0.2 when they fall at random, near 1 when the host stops the VM once per 100 ms period)${realtime ? '' : '. The probes could not get real-time priority (not root?): their lateness includes the guest\'s own scheduling'}:\n`);
      console.log('| rate (msgs/s) | TCP echo | bare grpc-js stream | bare node:http2 | durable node:http2 | end to end through the broker |');
      console.log('|---:|---:|---:|---:|---:|---:|');
      const cell = (r: FreezeResult | undefined) => (r ? freezeCell(r) : '—');
      for (const e of e2e) console.log(`| ${e.rate} | ${cell(e.frozen.tcp)} | ${cell(e.frozen.raw)} | ${cell(e.frozen.h2)} | ${cell(e.frozen.h2Durable)} | ${cell(e.frozen.e2e)} |`);
    }
    if (e2e.some((e) => e.cpu)) {
      console.log('\nCPU time per message in the end-to-end cases, µs by thread (schedstat from the first measured send to the last;');
      console.log("the sender's wake-ups are the client main thread's), and how much of the 2 vCPUs they used:\n");
      console.log(`| rate (msgs/s) | ${CPU_COLUMNS.join(' | ')} | total | vCPUs busy |`);
      console.log(`|---:|${CPU_COLUMNS.map(() => '---:').join('|')}|---:|---:|`);
      for (const e of e2e) {
        if (!e.cpu) continue;
        const w = e.cpu;
        const busy = (grown(w, 'ns') / ((w.to.at - w.from.at) * 1e6) / os.cpus().length) * 100;
        console.log(`| ${e.rate} | ${CPU_COLUMNS.map((c) => (perMessage(w, 'ns', [c]) / 1000).toFixed(1)).join(' | ')} | ${(perMessage(w, 'ns') / 1000).toFixed(1)} | ${busy.toFixed(0)}% |`);
      }
      console.log('\nContext switches per message in the same windows, by thread (voluntary and involuntary, from /proc: each is a');
      console.log('thread leaving its vCPU, to sleep until a wake-up or preempted — every one a chance to queue for a vCPU):\n');
      console.log(`| rate (msgs/s) | ${CPU_COLUMNS.join(' | ')} | total |`);
      console.log(`|---:|${CPU_COLUMNS.map(() => '---:').join('|')}|---:|`);
      for (const e of e2e) {
        if (!e.cpu) continue;
        const w = e.cpu;
        console.log(`| ${e.rate} | ${CPU_COLUMNS.map((c) => perMessage(w, 'switches', [c]).toFixed(2)).join(' | ')} | ${perMessage(w, 'switches').toFixed(2)} |`);
      }
      console.log('\nThe same two counts for the floors, all threads of both processes summed, each over its own schedule\'s window:');
      console.log("what a message costs the broker next to what a bare and a durable echo cost on the same host (µs of CPU / context switches):\n");
      console.log('| rate (msgs/s) | TCP echo | bare grpc-js stream | bare node:http2 | durable node:http2 | end to end through the broker |');
      console.log('|---:|---:|---:|---:|---:|---:|');
      const cost = (w: CpuWindow | null) => (w ? `${(perMessage(w, 'ns') / 1000).toFixed(1)} / ${perMessage(w, 'switches').toFixed(2)}` : '—');
      for (const e of e2e) console.log(`| ${e.rate} | ${cost(e.tcp.cpu)} | ${cost(e.raw.cpu)} | ${cost(e.h2.cpu)} | ${cost(e.h2Durable.cpu)} | ${cost(e.cpu)} |`);
    }
    if (e2e.length) {
      console.log('\nGC pauses in the end-to-end cases, over the same windows (V8, from perf_hooks: each stops its process\'s main');
      console.log('thread; "young" are scavenges): count / total ms / longest ms, and of them young:\n');
      console.log('| rate (msgs/s) | client | client young | server | server young |');
      console.log('|---:|---:|---:|---:|---:|');
      for (const e of e2e) console.log(`| ${e.rate} | ${gcCell(e.gc.client)} | ${e.gc.client.young} | ${gcCell(e.gc.server)} | ${e.gc.server?.young ?? '—'} |`);
      console.log("\nThe log's write cycles over the same windows (Broker.logWriteLatency: each cycle's writes at the disk, with");
      console.log('`sync` written and flushed; a slow one holds every message in it and queued behind it), and the appends');
      console.log("in the log's core (Broker.logAppendLatency: from the I/O thread's queue to the completion handed back; long");
      console.log('here but not in the writes is the I/O thread, not the disk): count / mean ms / p50 / p99 / longest, in ms as');
      console.log('the upper bound of their power-of-two bucket; the zeros the I/O thread wrote ahead of the data meanwhile');
      console.log('(BrokerOptions.zeroAheadBytes); and the write requests and flushes the data directory\'s device completed');
      console.log('(/proc/diskstats, anything else on the host included) per write cycle:\n');
      console.log('| rate (msgs/s) | write cycles | appends in the core | zeros ahead, KiB | device writes / flushes per cycle |');
      console.log('|---:|---:|---:|---:|---:|');
      const perCycle = (c: CoreLatency | null) =>
        c?.disk && c.writes.count > 0
          ? `${(c.disk.writes / c.writes.count).toFixed(2)} / ${Number.isNaN(c.disk.flushes) ? '—' : (c.disk.flushes / c.writes.count).toFixed(2)}`
          : '—';
      for (const e of e2e) console.log(`| ${e.rate} | ${latencyCell(e.core?.writes)} | ${latencyCell(e.core?.appends)} | ${e.core ? Math.round(e.core.zeroed / 1024) : '—'} | ${perCycle(e.core)} |`);
      console.log('\nEvent-loop delay of both main threads over the same windows (perf_hooks, 1 ms resolution: how late a');
      console.log('ready callback ran, whatever held the thread), p99 / longest in ms:\n');
      console.log('| rate (msgs/s) | client | server |');
      console.log('|---:|---:|---:|');
      const ld = (l: LoopDelay | null) => (l ? `${l.p99.toFixed(2)} / ${l.max.toFixed(2)}` : '—');
      for (const e of e2e) console.log(`| ${e.rate} | ${ld(e.loop.client)} | ${ld(e.loop.server)} |`);
    }
  } finally {
    await client.close();
  }
}

/** The load-test harness's open-loop sender (src/bench/open_loop.ts), same schedule for every case. */
function openLoop(rate: number, start: number, end: number, send: (scheduled: number) => void): Promise<void> {
  return runOpenLoop({ rate, start, end, send, precise: PRECISE }).then(() => undefined);
}

/** Both processes' CPU snapshots at a schedule's first measured send and at its last, and the messages sent between. */
interface CpuWindow {
  from: CpuSnap;
  to: CpuSnap;
  messages: number;
}

type CpuColumns = readonly (typeof CPU_COLUMNS)[number][];

/** How much `k` (CPU ns or context switches) grew over the window, summed over `columns` (all threads by default). */
function grown(w: CpuWindow, k: 'ns' | 'switches', columns: CpuColumns = CPU_COLUMNS): number {
  return columns.reduce((sum, c) => sum + w.to[k][c] - w.from[k][c], 0);
}

/** The same, per message sent in the window. */
function perMessage(w: CpuWindow, k: 'ns' | 'switches', columns: CpuColumns = CPU_COLUMNS): number {
  return grown(w, k, columns) / Math.max(1, w.messages);
}

/** A latency floor's numbers: its round trips, and the CPU they took (the same window the end-to-end case uses). */
interface Floor extends RoundTripLat {
  cpu: CpuWindow | null;
}

/**
 * Snapshots for a schedule's window, taken from its send callback: the first at the
 * first send past the warm-up, the last at the first of the last few sends (a send
 * within 3 intervals of the end; the messages counted up to it), so the window is the
 * schedule's own, without its start or the drain; a snapshot that fails (the server
 * gone) makes the window null.
 */
function cpuWindow(rate: number, warmEnd: number, end: number): { sent(scheduled: number): void; result(): Promise<CpuWindow | null> } {
  let from: Promise<CpuSnap | null> | null = null;
  let to: Promise<CpuSnap | null> | null = null;
  let messages = 0;
  const snap = () => cpuSnap().catch(() => null);
  return {
    sent(scheduled) {
      if (scheduled < warmEnd || to) return;
      from ??= snap();
      messages++;
      if (scheduled + 3000 / rate >= end) to = snap();
    },
    result: async () => {
      const [a, b] = await Promise.all([from, to]);
      return a && b ? { from: a, to: b, messages } : null;
    },
  };
}

/** Open-loop round trips through an echo on the latency cases' schedule (see bench/round_trips.ts). Frames are RECORD + 64 bytes, the scheduled time in their first 8. */
async function roundTrips(what: string, rate: number, seconds: number, open: (answered: (scheduled: number) => void) => Echo | Promise<Echo>): Promise<Floor> {
  const r = await measureRoundTrips({ what, rate, seconds, warmupMs: WARMUP_MS, precise: PRECISE, window: (warmEnd, end) => cpuWindow(rate, warmEnd, end), open });
  return { ...r.lat, cpu: await r.window!.result() };
}

const ECHO_FRAME = RECORD + 64;

/** The bare grpc-js stream's round trip: the transport ceiling's latency. */
function rawRoundTrip(port: number, rate: number, seconds: number): Promise<Floor> {
  return roundTrips('grpc-js', rate, seconds, (answered) => {
    const c = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), { 'grpc-node.flow_control_window': 16 << 20, 'grpc.enable_channelz': 0 });
    const id = (b: Buffer) => b;
    const s = c.makeBidiStreamRequest('/bench.Raw/Stream', id, id);
    let failure: Error | null = null;
    s.on('error', (e: Error) => (failure ??= e));
    s.on('data', (ack: Buffer) => answered(ack.readDoubleLE(0)));
    return {
      send(scheduled) {
        const v = Buffer.alloc(ECHO_FRAME);
        v.writeDoubleLE(scheduled, 0);
        s.write(v);
      },
      close() {
        s.end();
        c.close();
      },
      failure: () => failure,
    };
  });
}

/**
 * The bare echo spoken over node:http2 on both sides (gRPC framing by hand): the floor
 * of the transport the broker's PublishStream and Subscribe use. Its writes go out a
 * turn's worth at a time (node:http2 streams have _writev); grpc-js's stream goes
 * message by message once a few queue, which is most of the bare grpc-js round trip's tail.
 * `durable`: the server answers each request once its bytes are durable in a file
 * (plain Node, group-committed O_DSYNC writes; bench/grpc_server.ts durableLog), the
 * floor of a durable round trip on this host with no broker in it.
 */
function h2RoundTrip(port: number, rate: number, seconds: number, durable = false): Promise<Floor> {
  return roundTrips(durable ? 'durable node:http2' : 'node:http2', rate, seconds, (answered) => {
    const session = http2.connect(`http://127.0.0.1:${port}`, {
      settings: { initialWindowSize: 16 << 20 },
      createConnection: () => net.connect({ host: '127.0.0.1', port }).setNoDelay(true),
    });
    let failure: Error | null = null;
    session.on('error', (e) => (failure ??= e));
    const s = session.request({ ':method': 'POST', ':path': durable ? '/bench.Raw/DurableEcho' : '/bench.Raw/Echo', 'content-type': 'application/grpc', te: 'trailers' });
    s.on('error', (e) => (failure ??= e));
    const frames = new GrpcFrameReader(1 << 20, { side: 'client' });
    s.on('data', (d: Buffer) => {
      for (const m of frames.push(d)) answered(m.readDoubleLE(0));
    });
    return {
      send(scheduled) {
        const v = Buffer.alloc(GRPC_PREFIX_BYTES + ECHO_FRAME);
        v.writeUInt32BE(ECHO_FRAME, 1);
        v.writeDoubleLE(scheduled, GRPC_PREFIX_BYTES);
        s.write(v);
      },
      close() {
        s.close();
        session.destroy();
      },
      failure: () => failure,
    };
  });
}

/**
 * A plain loopback TCP socket (the server echoes every byte): what the host itself
 * gives a round trip between two Node processes. When this floor's p99 is above a
 * latency target, no broker on the host meets it at that hour.
 */
function tcpRoundTrip(port: number, rate: number, seconds: number): Promise<Floor> {
  return roundTrips('TCP echo', rate, seconds, async (answered) => {
    const sock = net.connect(port, '127.0.0.1');
    sock.setNoDelay(true);
    await new Promise<void>((resolve, reject) => {
      sock.once('connect', resolve);
      sock.once('error', reject);
    });
    let failure: Error | null = null;
    sock.on('error', (e) => (failure ??= e));
    // Echoed bytes arrive in arbitrary chunks; a frame split across two is carried over.
    const partial = Buffer.alloc(ECHO_FRAME);
    let have = 0;
    sock.on('data', (d: Buffer) => {
      let at = 0;
      while (at < d.length) {
        const take = Math.min(ECHO_FRAME - have, d.length - at);
        d.copy(partial, have, at, at + take);
        have += take;
        at += take;
        if (have === ECHO_FRAME) {
          have = 0;
          answered(partial.readDoubleLE(0));
        }
      }
    });
    return {
      send(scheduled) {
        const v = Buffer.alloc(ECHO_FRAME);
        v.writeDoubleLE(scheduled, 0);
        sock.write(v);
      },
      close: () => sock.destroy(),
      failure: () => failure,
    };
  });
}

const DISK_BLOCK = 4 << 20;
const DISK_BYTES = 1 << 30;

/**
 * The disk's durable sequential write bandwidth in bytes/s: dd writing DISK_BYTES in
 * DISK_BLOCK blocks with O_DIRECT and O_DSYNC, one at a time (as the log's cycles
 * are). dd, because Node cannot allocate the page-aligned buffers O_DIRECT needs.
 * A string says why it could not be measured (no dd, a file system without O_DIRECT).
 */
async function diskBandwidth(dir: string): Promise<number | string> {
  const file = path.join(dir, 'disk-bandwidth.bin');
  try {
    const r = await new Promise<{ code: number | null; err: string }>((resolve) => {
      const child = spawn('dd', ['if=/dev/zero', `of=${file}`, `bs=${DISK_BLOCK}`, `count=${DISK_BYTES / DISK_BLOCK}`, 'oflag=direct,dsync'], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_ALL: 'C' } });
      let err = '';
      child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
      child.once('error', (e) => resolve({ code: -1, err: e.message }));
      child.once('close', (code) => resolve({ code, err }));
    });
    // "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 1.31 s, 817 MB/s": bytes and seconds.
    const m = /^(\d+) bytes.*copied, ([\d.]+) s/m.exec(r.err);
    if (r.code !== 0 || !m) return `dd: ${r.err.trim().split('\n').pop() || `exit ${r.code}`}`;
    return Number(m[1]) / Number(m[2]);
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/**
 * Latency of the disk under the log's write pattern: each write rewrites the 4 KiB
 * block holding the end of the data (advancing 106 bytes, one record, per write) and
 * returns once it is durable (O_DSYNC), `perSecond` times a second, or back to back
 * (perSecond 0) for `seconds`. Back to back the CPU never idles between writes; paced,
 * it does, and on this VM waking it for each completion is most of a write's tail.
 */
async function diskSyncLatency(dir: string, perSecond: number, seconds: number): Promise<Lat> {
  const h = histogram();
  const file = path.join(dir, 'disk-latency.bin');
  const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_DSYNC, 0o600);
  try {
    const block = Buffer.alloc(4096, 0x62);
    let end = 0;
    const start = performance.now();
    const stop = start + seconds * 1000;
    for (let i = 0; perSecond > 0 ? i < perSecond * seconds : performance.now() < stop; i++) {
      const due = perSecond > 0 ? start + (i * 1000) / perSecond : 0;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const t = performance.now();
      fs.writeSync(fd, block, 0, 4096, end - (end % 4096));
      h.recordValue(Math.max(1, Math.round((performance.now() - t) * 1000)));
      end += 106;
    }
  } finally {
    fs.closeSync(fd);
    fs.rmSync(file, { force: true });
  }
  return lat(h);
}

/** What the freeze probe saw during each latency case (with --freeze-probe). */
type Freezes = Partial<Record<'tcp' | 'raw' | 'h2' | 'h2Durable' | 'e2e', FreezeResult>>;

interface E2e {
  rate: number;
  n: number;
  /** Sent after the warm-up and never received: in `sched` as late as the wait for them. */
  missing: number;
  /** send → consumer, from the scheduled send time (includes sender lag). */
  sched: Lat;
  /** send → consumer over the warm-up, from the scheduled send time: not counted, printed beside. */
  warm: Lat;
  /** send → consumer, from the moment send() was called. */
  sent: Lat;
  /** send() → publish ack, from the moment send() was called. */
  ack: Lat;
  /** CPU of both processes from the first measured send to the last, and the messages sent meanwhile. */
  cpu: CpuWindow | null;
  /** GC pauses of both processes over the measured schedule (the server's null if it could not say). */
  gc: { client: GcSummary; server: GcSummary | null };
  /** The log's write cycles and appends in its core over the same window, by duration (null if the server could not say). */
  core: CoreLatency | null;
  /** Event-loop delay of both main threads over the same window (the server's null if it could not say). */
  loop: { client: LoopDelay; server: LoopDelay | null };
}

async function endToEnd(client: Client, rate: number, seconds: number, statsPort: number): Promise<E2e> {
  const hSched = histogram();
  const hSent = histogram();
  const hAck = histogram();
  const hWarm = histogram();
  // One connection for the server's numbers, opened before the schedule: a connection
  // made as the window opens and closes cost the messages in flight then a few ms.
  const stats = await StatsSession.open(statsPort);
  const producer = client.producer({ lingerMs: 0 });
  const group = `e2e-${rate}`;
  const consumer = client.consumer({ topic: 'e2e', group, from: 'latest' });
  const start = performance.now() + 300;
  const warmEnd = start + WARMUP_MS;
  const end = warmEnd + seconds * 1000;
  let received = 0;
  let measured = 0; // sent after the warm-up: each must be received, or counts as missing
  // The schedule's last message, known once it is sent (computing it from start and
  // end in floating point can be one message off); the consumer stops at it.
  let lastScheduled = -Infinity;
  let final = Infinity;
  let latestSeen = -Infinity;
  const consuming = (async () => {
    for await (const m of consumer) {
      m.ack();
      const now = performance.now();
      const scheduled = m.value.readDoubleLE(0);
      if (scheduled >= warmEnd) {
        hSched.recordValue(Math.max(1, Math.round((now - scheduled) * 1000))); // µs
        hSent.recordValue(Math.max(1, Math.round((now - m.value.readDoubleLE(8)) * 1000)));
        received++;
      } else if (scheduled >= start) hWarm.recordValue(Math.max(1, Math.round((now - scheduled) * 1000)));
      latestSeen = Math.max(latestSeen, scheduled);
      if (latestSeen >= final) break;
    }
  })();
  await new Promise((r) => setTimeout(r, 300));
  // CPU over the schedule's own window, without the consumer's start and the drain after it.
  const cpu = cpuWindow(rate, warmEnd, end);
  // The write cycles and the appends in the core over the same window: the server asked when it opens and when it closes.
  const coreFrom = new Promise<CoreLatency | null>((resolve) =>
    setTimeout(() => {
      clientLoop(); // both event-loop monitors start over with the window
      void stats.get('/bench.Stats/Loop').catch(() => null);
      stats.get<CoreLatency>('/bench.Stats/Writes').then(resolve, () => resolve(null));
    }, warmEnd - performance.now()),
  );
  await openLoop(rate, start, end, (scheduled) => {
    const v = Buffer.alloc(RECORD);
    v.writeDoubleLE(scheduled, 0);
    const t = performance.now();
    v.writeDoubleLE(t, 8);
    void producer.send('e2e', { value: v, partition: 0 }).then(() => {
      if (scheduled >= warmEnd) hAck.recordValue(Math.max(1, Math.round((performance.now() - t) * 1000)));
    });
    lastScheduled = scheduled;
    if (scheduled >= warmEnd) measured++;
    cpu.sent(scheduled);
  });
  final = lastScheduled;
  const coreTo = stats.get<CoreLatency>('/bench.Stats/Writes').catch(() => null);
  const loop = { client: clientLoop(), server: await stats.get<LoopDelay>('/bench.Stats/Loop').catch(() => null) };
  if (latestSeen < final) await Promise.race([consuming, new Promise((r) => setTimeout(r, 10_000))]);
  await consumer.close();
  await producer.close();
  // Messages not received when the wait ended are not left out of the percentiles: each
  // counts as late by at least the time from the schedule's end until now.
  const missing = Math.max(0, measured - received);
  if (missing > 0) hSched.recordValueWithCount(Math.max(1, Math.round((performance.now() - end) * 1000)), missing);
  // The GC pauses that began while the measured messages were sent.
  const from = performance.timeOrigin + warmEnd;
  const to = performance.timeOrigin + end;
  const server = await stats.get<GcPause[]>(`/bench.Stats/Gc?from=${from}&to=${to}`).catch(() => null);
  const gc = { client: summarize(gcPauses.between(from, to)), server: server && summarize(server) };
  const [w0, w1] = await Promise.all([coreFrom, coreTo]);
  const core =
    w0 && w1
      ? {
          writes: between(w0.writes, w1.writes),
          appends: between(w0.appends, w1.appends),
          zeroed: w1.zeroed - w0.zeroed,
          disk: w0.disk && w1.disk ? { writes: w1.disk.writes - w0.disk.writes, flushes: w1.disk.flushes - w0.disk.flushes } : null,
        }
      : null;
  stats.close();
  return { rate, n: received, missing, sched: lat(hSched), warm: lat(hWarm), sent: lat(hSent), ack: lat(hAck), cpu: await cpu.result(), gc, core, loop };
}

/** This process's GC pauses (the bench's client side), from the start. */
const gcPauses = new GcPauseLog();
/** This process's event-loop delay since the last call. */
const clientLoop = loopDelayMonitor();

/** Broker.logWriteLatency and Broker.logAppendLatency of the bench server's broker. */
interface CoreLatency {
  writes: LogLatency;
  appends: LogLatency;
  /** Bytes of zeros written ahead of the data (Broker.zeroAheadBytesWritten). */
  zeroed: number;
  /** Requests completed by the data directory's device, from /proc/diskstats (null: not known). */
  disk: { writes: number; flushes: number } | null;
}

/** What was counted between two readings of one of the core's histograms. */
function between(a: LogLatency, b: LogLatency): LogLatency {
  return { count: b.count - a.count, sumSeconds: b.sumSeconds - a.sumSeconds, le: b.le, counts: b.counts.map((c, i) => c - (a.counts[i] ?? 0)) };
}

/** "cycles / mean / p50 ≤ / p99 ≤ / longest ≤" in ms, from the buckets' upper bounds. */
function latencyCell(w: LogLatency | null | undefined): string {
  if (!w || w.count === 0) return '—';
  const bound = (q: number) => {
    let seen = 0;
    for (let i = 0; i < w.counts.length; i++) {
      seen += w.counts[i]!;
      if (seen >= q * w.count) return i < w.le.length ? `≤ ${(w.le[i]! * 1000).toFixed(3)}` : `> ${(w.le[w.le.length - 1]! * 1000).toFixed(0)}`;
    }
    return '—';
  };
  return `${w.count} / ${((w.sumSeconds / w.count) * 1000).toFixed(3)} / ${bound(0.5)} / ${bound(0.99)} / ${bound(1)}`;
}

/**
 * The bench server's numbers over its node:http2 echo port, as JSON: /bench.Stats/Writes
 * (the broker's write cycles and appends so far, by duration), /bench.Stats/Loop (its
 * event-loop delay since the last ask), /bench.Stats/Gc?from=&to= (its GC pauses that
 * began in [from, to), Unix ms). One session for a case's asks.
 */
class StatsSession {
  private constructor(private readonly session: http2.ClientHttp2Session) {}

  static open(port: number): Promise<StatsSession> {
    return new Promise((resolve, reject) => {
      const session = http2.connect(`http://127.0.0.1:${port}`);
      session.once('error', reject);
      session.once('connect', () => {
        session.off('error', reject);
        session.on('error', () => undefined); // each ask reports its own failure
        resolve(new StatsSession(session));
      });
    });
  }

  get<T>(path: string): Promise<T> {
    return new Promise((resolve, reject) => {
      const req = this.session.request({ ':method': 'GET', ':path': path });
      const chunks: Buffer[] = [];
      req.on('data', (d: Buffer) => chunks.push(d));
      req.on('error', reject);
      req.on('end', () => {
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString()) as T);
        } catch (e) {
          reject(e);
        }
      });
      req.end();
    });
  }

  close(): void {
    this.session.close();
  }
}

function fmt(n: number): string {
  return n >= 1e6 ? `${(n / 1e6).toFixed(2)} M` : `${(n / 1e3).toFixed(1)} k`;
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
