import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { spawn } from './fixtures/children';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { tmpDir, expectCode } from './helpers';
import { BenchAbortedError } from '../src/bench/breaker';
import { PerfFolder, flamegraphHtml, foldedText } from '../src/bench/flamegraph';
import { checkPerf } from '../src/bench/profile';
import { openLoop } from '../src/bench/open_loop';
import { workloadFromFlags } from '../src/bench/cli';
import { createTicker } from '../src/native';
import { runBench, type RunOptions } from '../src/bench/runner';
import type { BenchResults, Sample, StepResult } from '../src/bench/results';
import { readWorkloadFile, resolveWorkload, type WorkloadInput } from '../src/bench/workload';
import { freezeProbe, runFreezeProbe } from '../bench/freeze_probe';
import { histogram, lat, latCell, roundTrips, type Echo } from '../bench/round_trips';
import { Broker, BrokerServer } from '../src';

const CLI = path.join(__dirname, '..', 'src', 'cli', 'main.ts');

/** Small, short workloads: structure and message flow are asserted, never timings. */
function smoke(x: WorkloadInput) {
  return resolveWorkload({
    name: 'smoke',
    broker: 'in-process',
    messageSize: 100,
    rates: [300, 600],
    stepSeconds: 1.2,
    warmupSeconds: 0.3,
    sampleSeconds: 0.4,
    drainSeconds: 15,
    ...x,
  });
}

function opts(): RunOptions & { outDir: string } {
  const d = tmpDir('uringmq-bench-');
  return { outDir: path.join(d, 'out'), dir: path.join(d, 'data'), log: null, progress: false };
}

function assertLatency(l: unknown, what: string): void {
  const s = l as Record<string, number>;
  for (const k of ['count', 'p50', 'p90', 'p99', 'p999', 'max', 'mean']) assert.equal(typeof s[k], 'number', `${what}.${k}`);
  assert.ok(s.p50! <= s.p99! && s.p99! <= s.max!, `${what}: p50 ≤ p99 ≤ max`);
}

function assertSample(s: Sample): void {
  for (const k of ['t', 'durationSec', 'sentPerSec', 'publishedPerSec', 'consumedPerSec', 'publishMBps', 'consumeMBps', 'outstanding', 'lag'] as const) assert.equal(typeof s[k], 'number', k);
  assertLatency(s.publishLatencyMs, 'sample.publishLatencyMs');
  assertLatency(s.publishLatencySinceSendMs, 'sample.publishLatencySinceSendMs');
  assertLatency(s.e2eLatencyMs, 'sample.e2eLatencyMs');
  assertLatency(s.e2eLatencySinceSendMs, 'sample.e2eLatencySinceSendMs');
  assert.equal(s.client.pid, process.pid);
  assert.ok(s.client.rssMb! > 0 && s.client.heapUsedMb! > 0);
  assert.equal(typeof s.client.activeHandles, 'number');
  assert.equal(typeof s.client.cpuPct, 'number');
}

function assertStep(s: StepResult): void {
  assert.equal(typeof s.targetRate, 'number');
  assert.ok(s.measuredSeconds > 0);
  for (const k of ['publishLatencyMs', 'publishLatencySinceSendMs', 'e2eLatencyMs', 'e2eLatencySinceSendMs'] as const) assertLatency(s[k], `step.${k}`);
  assert.ok(s.acked > 0, 'messages acked in the measured window');
  assert.ok(s.publishLatencyMs.count > 0 && s.e2eLatencyMs.count > 0, 'latency recorded for the step');
  assert.ok(s.distribution.publish.length > 0 && s.distribution.e2e.length > 0);
  assert.ok(s.histograms.publish.length > 0);
}

/** Every acked message reached every group; nothing failed. */
function assertFlowed(r: BenchResults): void {
  const t = r.totals;
  assert.ok(t.sent > 0);
  assert.equal(t.failed, 0, r.errors.join('; '));
  assert.equal(t.acked, t.sent);
  assert.equal(t.expectedConsumed, t.acked * r.workload.consumerGroups);
  assert.equal(t.consumed, t.expectedConsumed, 'consumed everything that was acked');
  assert.equal(t.drained, true);
}

function assertEnvironment(r: BenchResults): void {
  const e = r.environment;
  assert.equal(r.version, 1);
  for (const k of ['date', 'kernel', 'cpuModel', 'node', 'ioBackend', 'durability'] as const) assert.ok(typeof e[k] === 'string' && e[k].length > 0, k);
  assert.ok(e.cpuCount > 0);
  assert.ok('gitCommit' in e);
  assert.equal(e.durability, 'sync');
}

/** The report embeds the results and each chart's data next to its SVG. */
function reportCharts(file: string): Map<string, { series: Array<{ name: string; points: Array<[number, number]> }> }> {
  const html = fs.readFileSync(file, 'utf8');
  assert.match(html, /<svg /);
  assert.doesNotMatch(html, /<script src=|<link /, 'self-contained');
  const embedded = /<script type="application\/json" id="bench-results">([\s\S]*?)<\/script>/.exec(html);
  assert.ok(embedded, 'results embedded');
  assert.equal((JSON.parse(embedded[1]!) as BenchResults).name, 'smoke');
  const charts = new Map<string, { series: Array<{ name: string; points: Array<[number, number]> }> }>();
  for (const m of html.matchAll(/<script type="application\/json" class="chart-data" data-chart="([^"]+)">([\s\S]*?)<\/script>/g)) charts.set(m[1]!, JSON.parse(m[2]!));
  return charts;
}

describe('bench harness (uringmq bench)', function () {
  this.timeout(60_000);

  it('stepped load with the broker in a child process: results, samples, report', async () => {
    const o = opts();
    const { results: r, resultsPath, reportPath } = await runBench(smoke({ kind: 'stepped', broker: 'child', api: 'grpc-batched' }), o);
    assert.deepEqual(JSON.parse(fs.readFileSync(resultsPath, 'utf8')).totals, r.totals);
    assertEnvironment(r);
    assert.equal(r.environment.brokerPlacement, 'child');
    assert.notEqual(r.environment.brokerPid, process.pid);
    assert.equal(r.steps.length, 2);
    r.steps.forEach(assertStep);
    assert.deepEqual(r.steps.map((s) => s.targetRate), [300, 600]);
    assert.ok(r.samples.length >= 4);
    r.samples.forEach(assertSample);
    const inSteps = r.samples.filter((s) => s.phase === 'step');
    assert.ok(inSteps.some((s) => s.warmup) && inSteps.some((s) => !s.warmup));
    // The child's resources, from /proc and over IPC.
    assert.ok(inSteps.every((s) => s.broker && s.broker.pid === r.environment.brokerPid && s.broker.rssMb! > 0));
    assert.ok(inSteps.some((s) => typeof s.broker!.heapUsedMb === 'number' && typeof s.broker!.cpuPct === 'number'));
    assertFlowed(r);
    assert.equal(r.aborted, null);
    assert.ok(!fs.existsSync(o.dir!), 'data directory removed');
    const charts = reportCharts(reportPath);
    for (const id of ['throughput', 'publish-latency', 'e2e-latency', 'publish-distribution', 'e2e-distribution', 'memory', 'cpu', 'handles']) assert.ok(charts.has(id), id);
    const tput = charts.get('throughput')!.series.find((s) => s.name.startsWith('published'))!;
    assert.ok(tput.points.length >= 4 && tput.points.some(([, y]) => y > 0));
    assert.equal(charts.get('e2e-distribution')!.series.length, 2, 'one distribution per step');
    assert.ok(charts.get('memory')!.series.some((s) => s.name === 'broker RSS' && s.points.length > 0));
  });

  it('a running server (--server): the results do not claim a durability the tool cannot know', async () => {
    const broker = await Broker.open({ dir: tmpDir(), durability: 'none' });
    const server = await BrokerServer.start({ broker, host: '127.0.0.1', port: 0 });
    try {
      const o = opts();
      const { results: r, reportPath } = await runBench(smoke({ api: 'grpc-batched', rates: [300] }), { ...o, server: `127.0.0.1:${server.port}` });
      assert.equal(r.environment.brokerPlacement, 'external');
      assert.equal(r.workload.durability, 'sync', "the workload's default, which the server was not started with");
      assert.match(r.environment.durability, /unknown/);
      assert.doesNotMatch(fs.readFileSync(reportPath, 'utf8'), /durability sync/);
    } finally {
      await server.stop(1000);
      await broker.close();
    }
  });

  it('max-rate search: probes with verdicts and a sustainable rate', async () => {
    const { results: r } = await runBench(
      smoke({ kind: 'max-rate', api: 'embedded', maxRate: { startRate: 200, factor: 2, maxRate: 400, refineSteps: 1, stepSeconds: 1, warmupSeconds: 0.2, p99LimitMs: 5000 } }),
      opts(),
    );
    assert.ok(r.maxRate);
    assert.ok(r.steps.length >= 1 && r.steps.length <= 3);
    for (const s of r.steps) {
      assert.equal(s.phase, 'probe');
      assert.equal(typeof s.ok, 'boolean');
      assert.equal(typeof s.verdict, 'string');
    }
    const passed = r.steps.filter((s) => s.ok).map((s) => s.targetRate);
    assert.equal(r.maxRate.sustainableRate, passed.length ? Math.max(...passed) : null);
    assert.equal(r.totals.failed, 0);
    assert.equal(r.totals.consumed, r.totals.acked);
  });

  it('backlog: builds it with no consumer, then groups catch up from the earliest offset', async () => {
    const { results: r, reportPath } = await runBench(smoke({ kind: 'backlog', api: 'grpc-batched', partitions: 2, producers: 2, consumerGroups: 2, backlog: { messages: 3000 } }), opts());
    assert.ok(r.backlog);
    assert.equal(r.backlog.messages, 3000);
    assert.equal(r.backlog.caughtUp, true);
    assert.ok(r.backlog.buildPerSec > 0 && r.backlog.drainPerSec > 0);
    assert.ok(r.samples.some((s) => s.phase === 'backlog-build') && r.samples.some((s) => s.phase === 'backlog-drain'));
    assertFlowed(r);
    assert.equal(r.totals.consumed, 6000);
    assert.match(fs.readFileSync(reportPath, 'utf8'), /<h2>Backlog<\/h2>/);
  });

  it('comparison: unary vs stream vs batched at the same rates, as a table in the report', async () => {
    const { results: r, reportPath } = await runBench(smoke({ kind: 'comparison', rates: [300], stepSeconds: 1, warmupSeconds: 0.2 }), opts());
    assert.deepEqual(
      r.steps.map((s) => s.api),
      ['grpc-unary', 'grpc-stream', 'grpc-batched'],
    );
    r.steps.forEach(assertStep);
    assert.equal(r.comparison!.length, 3);
    assert.deepEqual(new Set(r.comparison!.map((c) => c.targetRate)), new Set([300]));
    assertFlowed(r);
    const html = fs.readFileSync(reportPath, 'utf8');
    assert.match(html, /Comparison: grpc-unary vs grpc-stream vs grpc-batched/);
    for (const api of ['grpc-unary', 'grpc-stream', 'grpc-batched']) assert.match(html, new RegExp(`<td>${api}</td>`));
  });

  it('the circuit breaker stops a run whose consumer is too slow and writes its snapshot', async () => {
    const o = opts();
    const w = smoke({ kind: 'stepped', api: 'embedded', rates: [300], stepSeconds: 30, warmupSeconds: 0, sampleSeconds: 0.3, consumerDelayMs: 20, breaker: { p99Ms: 100, consecutive: 2 } });
    let err: unknown = null;
    try {
      await runBench(w, o);
    } catch (e) {
      err = e;
    }
    assert.ok(err instanceof BenchAbortedError, `expected BenchAbortedError, got ${String(err)}`);
    assert.equal(err.code, 'BENCH_ABORTED');
    // On a slow build (ASan) a sample can find nothing consumed yet: the breaker says so.
    assert.match(err.reason, /p99 end-to-end (\(nothing consumed, \d+ messages waiting\) )?latency .* above 100 ms for 2 consecutive samples/);
    const snap = JSON.parse(fs.readFileSync(err.snapshotPath, 'utf8'));
    assert.equal(snap.reason, err.reason);
    assert.equal(snap.workload.consumerDelayMs, 20);
    assert.ok(snap.lastSamples.length >= 2);
    assert.ok(snap.heapStatistics.client.total_heap_size > 0);
    assert.equal(snap.topics.length, 1);
    assert.equal(snap.topics[0].groups.length, 1, 'describe output includes the group');
    assert.equal(snap.topics[0].groups[0].members.length, 1, 'taken while the consumer was still a member');
    assert.ok(snap.topics[0].partitions[0].endOffset > 0);
    const r = JSON.parse(fs.readFileSync(err.resultsPath, 'utf8')) as BenchResults;
    assert.equal(r.aborted!.reason, err.reason);
    assert.match(fs.readFileSync(err.reportPath, 'utf8'), /Stopped by the circuit breaker/);
    assert.ok(!fs.existsSync(o.dir!));
  });

  it('the CLI exits non-zero with the reason when the breaker trips', () => {
    const o = opts();
    const r = spawnSync(
      process.execPath,
      ['--require', 'tsx/cjs', CLI, 'bench', '--api', 'embedded', '--rates', '300', '--step-seconds', '30', '--warmup-seconds', '0', '--sample-seconds', '0.3', '--consumer-delay-ms', '20', '--p99-limit-ms', '100', '--breaker-samples', '2', '--out', o.outDir, '--dir', o.dir!, '--name', 'cli-breaker', '--no-progress'],
      { encoding: 'utf8', timeout: 60_000 },
    );
    assert.equal(r.status, 3, r.stderr);
    // On a slow build (ASan) the first samples may have nothing consumed yet: "p99 end-to-end
    // (nothing consumed, N messages waiting) latency ∞", the same breaker on the same number.
    assert.match(r.stderr, /stopped by the circuit breaker: p99 end-to-end (\(nothing consumed, \d+ messages waiting\) )?latency/);
    const snapshot = /snapshot: (\S+)/.exec(r.stderr)![1]!;
    assert.ok(fs.existsSync(snapshot));
    assert.match(r.stdout, /\[\s*[\d.]+s\] step #1/, 'per-sample lines');
  });

  /** `uringmq bench|profile ...` as a child in its own process group; resolves on exit. */
  function benchChild(args: string[]) {
    const c = spawn(process.execPath, ['--require', 'tsx/cjs', CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    c.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    c.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => c.once('exit', (code) => resolve(code)));
    const kill = setTimeout(() => {
      try {
        process.kill(-c.pid!, 'SIGKILL');
      } catch {
        // gone
      }
    }, 120_000);
    void exited.then(() => clearTimeout(kill));
    return {
      child: c,
      exited,
      out: () => stdout,
      err: () => stderr,
      async until(what: () => boolean, ms: number): Promise<void> {
        const end = Date.now() + ms;
        while (!what() && Date.now() < end && c.exitCode === null) await new Promise((r) => setTimeout(r, 5));
        assert.ok(what(), `not seen within ${ms} ms; stdout: ${stdout}\nstderr: ${stderr}`);
      },
    };
  }

  it('SIGTERM stops a run as Ctrl-C does: results, report and --svg charts written, the data dir gone', async () => {
    const o = opts();
    const b = benchChild(['bench', '--api', 'embedded', '--rates', '300', '--step-seconds', '60', '--warmup-seconds', '0', '--sample-seconds', '0.3', '--out', o.outDir, '--dir', o.dir!, '--name', 'sigterm', '--no-progress', '--svg']);
    await b.until(() => /step #1/.test(b.out()), 60_000);
    b.child.kill('SIGTERM');
    assert.equal(await b.exited, 3, b.err());
    assert.match(b.err(), /stopped by the circuit breaker: interrupted \(SIGTERM\)/);
    const r = JSON.parse(fs.readFileSync(/results: +(\S+)/.exec(b.err())![1]!, 'utf8')) as BenchResults;
    assert.equal(r.aborted!.reason, 'interrupted (SIGTERM)');
    assert.ok(r.totals.sent > 0);
    const charts = /charts: +(.+)/.exec(b.err())![1]!.split(', ');
    assert.ok(charts.length > 0 && charts.every((f) => f.endsWith('.svg') && fs.readFileSync(f, 'utf8').includes('<svg')), 'charts written');
    assert.ok(!fs.existsSync(o.dir!), 'data dir left');
  });

  it('a signal while the broker child starts stops the run before its first step, and the data dir still goes', async () => {
    const o = opts();
    const b = benchChild(['bench', '--api', 'grpc-stream', '--broker', 'child', '--rates', '300', '--step-seconds', '60', '--warmup-seconds', '0', '--out', o.outDir, '--dir', o.dir!, '--name', 'sigstart', '--no-progress']);
    // The broker child makes the data dir as it opens; the bench says its first line once it is up.
    await b.until(() => fs.existsSync(o.dir!), 60_000);
    const starting = !/uringmq bench sigstart/.test(b.out());
    b.child.kill('SIGTERM');
    const code = await b.exited;
    assert.equal(code, 3, `exit ${code}: ${b.err()}`);
    assert.match(b.err(), /interrupted \(SIGTERM\)/);
    assert.ok(!fs.existsSync(o.dir!), 'data dir left');
    if (starting) assert.doesNotMatch(b.out(), /step #1/, 'a step ran after the interruption');
  });

  it('profile of an in-process run, stopped by Ctrl-C (SIGINT to its process group): results and flamegraph written, no perf.data or data dir left', async function () {
    try {
      checkPerf();
    } catch (e) {
      this.skip(); // no perf here: nothing to profile with
    }
    const probe = spawnSync('perf', ['record', '-e', 'cpu-clock', '-o', '/dev/null', '--', 'true'], { encoding: 'utf8' });
    if (probe.status !== 0) this.skip(); // perf_event_open not allowed (a container)
    const o = opts();
    const b = benchChild(['profile', '--api', 'embedded', '--rates', '300', '--step-seconds', '60', '--warmup-seconds', '0', '--sample-seconds', '0.3', '--out', o.outDir, '--dir', o.dir!, '--name', 'prof', '--no-progress', '--perf-frequency', '99']);
    await b.until(() => /step #1/.test(b.out()), 90_000);
    process.kill(-b.child.pid!, 'SIGINT'); // as the terminal does: the whole foreground group
    const code = await b.exited;
    assert.equal(code, 3, `exit ${code}: ${b.err()}`);
    assert.match(b.err(), /interrupted \(SIG(INT|TERM)\)/); // perf passes it on as SIGTERM
    const flamegraph = /flamegraph: (\S+)/.exec(b.out())?.[1];
    assert.ok(flamegraph && fs.existsSync(flamegraph), `no flamegraph: ${b.out()}`);
    const left = fs.readdirSync(o.outDir);
    assert.ok(left.some((f) => f.endsWith('.json')), 'results written');
    assert.ok(!left.some((f) => f.endsWith('.perf.data')), `perf.data left: ${left.join(', ')}`);
    assert.ok(!fs.existsSync(o.dir!), 'data dir left');
  });

  it('workloads: files (JSON, YAML), defaults and precise errors', async () => {
    const d = tmpDir();
    const y = path.join(d, 'w.yaml');
    fs.writeFileSync(y, 'kind: max-rate\nrates: [1k, "5k"]\nmaxRate:\n  startRate: 2k\nbreaker:\n  p99Ms: 50\n');
    const w = resolveWorkload(readWorkloadFile(y));
    assert.equal(w.name, 'w');
    assert.equal(w.kind, 'max-rate');
    assert.deepEqual(w.rates, [1000, 5000]);
    assert.equal(w.maxRate.startRate, 2000);
    assert.equal(w.maxRate.factor, 2, 'unset fields keep their defaults');
    assert.equal(w.breaker.p99Ms, 50);
    assert.equal(w.breaker.consecutive, 5);
    const dflt = resolveWorkload();
    assert.deepEqual([dflt.messageSize, dflt.durability, dflt.rates, dflt.stepSeconds, dflt.warmupSeconds, dflt.sampleSeconds], [100, 'sync', [1000, 5000, 10000], 120, 30, 10]);
    for (const f of fs.readdirSync(path.join(__dirname, '..', 'bench', 'workloads'))) resolveWorkload(readWorkloadFile(path.join(__dirname, '..', 'bench', 'workloads', f)));
    await expectCode(() => resolveWorkload({ bogus: 1 } as WorkloadInput), 'INVALID_ARGUMENT');
    await expectCode(() => resolveWorkload({ messageSize: 8 }), 'INVALID_ARGUMENT');
    await expectCode(() => resolveWorkload({ stepSeconds: 10, warmupSeconds: 10 }), 'INVALID_ARGUMENT');
    await expectCode(() => resolveWorkload({ api: 'carrier-pigeon' as never }), 'INVALID_ARGUMENT');
    await expectCode(() => resolveWorkload({ maxRate: { bogus: 1 } as never }), 'INVALID_ARGUMENT');
    await expectCode(() => runBench(smoke({ api: 'embedded' }), { ...opts(), server: '127.0.0.1:1' }), 'INVALID_ARGUMENT');
    // A rate that rounds to 0 msgs/s is refused here, not by the sender's ticker mid-run.
    await expectCode(() => resolveWorkload({ rates: [0.4] }), 'INVALID_ARGUMENT');
    assert.deepEqual(resolveWorkload({ rates: [0.6] }).rates, [1]);
    // A file's name with characters a workload name may not hold names it anyway.
    const spaced = path.join(d, 'my test (2).json');
    fs.writeFileSync(spaced, '{}');
    assert.equal(resolveWorkload(readWorkloadFile(spaced)).name, 'my-test--2-');
    // With --kind max-rate the step flags set the probes (they were ignored, and --step-seconds 5 refused).
    const probes = workloadFromFlags(undefined, { kind: 'max-rate', stepSeconds: 5, warmupSeconds: 1 } as Parameters<typeof workloadFromFlags>[1]);
    assert.deepEqual([probes.maxRate.stepSeconds, probes.maxRate.warmupSeconds], [5, 1]);
    assert.equal(workloadFromFlags(undefined, { kind: 'max-rate', stepSeconds: 8 } as Parameters<typeof workloadFromFlags>[1]).maxRate.stepSeconds, 8);
    // A results directory that cannot be written is said before the run, not after it.
    await assert.rejects(runBench(smoke({ api: 'embedded' }), { ...opts(), outDir: '/proc/self' }), (e: Error & { code?: string }) => e.code === 'INVALID_ARGUMENT' && /cannot write results to \/proc\/self/.test(e.message));
  });

  it('max-rate search: a factor that rounds back to the same rate still climbs, one msg/s at a time', async () => {
    const { results: r } = await runBench(
      smoke({ kind: 'max-rate', api: 'embedded', drainSeconds: 5, maxRate: { startRate: 200, factor: 1.001, maxRate: 202, refineSteps: 0, stepSeconds: 0.5, warmupSeconds: 0, p99LimitMs: 5000 } }),
      opts(),
    );
    assert.deepEqual(r.steps.map((s) => s.targetRate).slice(0, 3), [200, 201, 202].slice(0, r.steps.length), 'the rates probed');
    assert.ok(r.steps.length <= 3, `${r.steps.length} probes for 200..202 msgs/s`);
  });

  it('open loop with the precise ticker: every due message once, in schedule order, through back-pressure, and it stops', async () => {
    for (const precise of [false, true]) {
      const scheduled: number[] = [];
      let refused = 0;
      const start = performance.now() + 20;
      // Sends refused for a while in the middle (the next 20 asks once 200 were sent):
      // they wait, keeping their times. Counted, not timed: a window of 50 ms by the
      // clock was missed whole when the process stalled across it (the CI's ASan stage).
      const r = await openLoop({
        rate: 2000,
        start,
        end: start + 300,
        precise,
        canSend: () => {
          if (scheduled.length < 200 || refused >= 20) return true;
          refused++;
          return false;
        },
        send: (t) => scheduled.push(t),
      });
      assert.equal(r.due, 600, `due (precise ${precise})`);
      assert.ok(refused > 0, 'the back-pressure window was hit');
      assert.equal(r.sent, 600, `sent (precise ${precise})`);
      assert.equal(scheduled.length, 600);
      scheduled.forEach((t, i) => assert.equal(t, start + i / 2, `message ${i} keeps its slot`));
      const stopped = await openLoop({ rate: 2000, start: performance.now(), end: performance.now() + 10_000, precise, stopped: () => true, send: () => assert.fail('sent after stop') });
      assert.equal(stopped.sent, 0);
    }
  });

  it('open loop held back past its end ends on time, the rest unsent, with either ticker (a stalled target must not run the step on)', async () => {
    for (const precise of [false, true]) {
      const start = performance.now() + 20;
      const end = start + 200;
      let open = true;
      // The target takes the first 100 ms of the schedule (200 messages), counted: cut at
      // start + 100 ms by the clock, a stall across that moment (a late tick, 60 ms at
      // the 130th shown) left the loop no time to catch up, and fewer than 150 were sent.
      let n = 0;
      // What the clock-cut target also told (and the count cannot): a loop that sent
      // ahead of the schedule went past 260. Not timed: a stall only makes sends later.
      const early: string[] = [];
      const send = (t: number) => {
        const now = performance.now();
        if (now < t - 0.001) early.push(`message ${n} sent ${(t - now).toFixed(3)} ms before it was due`);
        n++;
      };
      const r = await Promise.race([
        openLoop({ rate: 2000, start, end, precise, canSend: () => open && n < 200, send }),
        new Promise<null>((resolve) => setTimeout(() => resolve(null), 2000)),
      ]);
      open = false;
      assert.ok(r, `the schedule did not end within 2 s of a 0.2 s step (precise ${precise})`);
      assert.equal(r.due, 400, `due (precise ${precise})`);
      assert.ok(r.sent >= 150 && r.sent <= 200, `sent ${r.sent}: about the first 100 ms (precise ${precise})`);
      assert.deepEqual(early.slice(0, 3), [], `${early.length} messages sent before they were due (precise ${precise})`);
      assert.ok(performance.now() - end < 500, `ended ${(performance.now() - end).toFixed(0)} ms past its end (precise ${precise})`);
    }
  });

  it('native ticker: never fires before its first time, keeps firing, stops, and rejects bad arguments', async () => {
    const times: bigint[] = [];
    let wake: (() => void) | null = null;
    const ticker = createTicker((err) => {
      assert.equal(err, undefined);
      times.push(process.hrtime.bigint());
      if (times.length >= 5) wake?.();
    });
    await expectCode(() => ticker.start(0, 1e6), 'INVALID_ARGUMENT');
    await expectCode(() => ticker.start(1, 10), 'INVALID_ARGUMENT');
    const first = process.hrtime.bigint() + 20_000_000n;
    ticker.start(Number(first), 1e6);
    await expectCode(() => ticker.start(Number(first), 1e6), 'INVALID_ARGUMENT');
    await new Promise<void>((resolve, reject) => {
      wake = resolve;
      setTimeout(() => reject(new Error(`only ${times.length} ticks in 5 s`)), 5000);
    });
    ticker.stop();
    const n = times.length;
    assert.ok(times[0]! >= first - 1000n, 'first tick not early'); // double rounding of the ns time
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(times.length, n, 'no tick after stop');
    ticker.stop(); // idempotent
    // Stopping lets go of the callback (its closure holds the ticker): no second start.
    await expectCode(() => ticker.start(Number(process.hrtime.bigint()), 1e6), 'INVALID_ARGUMENT');
  });

  it('native ticker: runs on the loop that started it, so a worker can exit with one ticking, and a throw in its callback is uncaught like any I/O callback', async () => {
    // createTicker as src/native.ts gives it, loaded in a worker or a child through tsx as test 06 does.
    const native = JSON.stringify(path.resolve(__dirname, '../src/native.ts'));
    const { Worker } = await import('node:worker_threads');
    const timerfds = () => fs.readdirSync('/proc/self/fd').filter((fd) => {
      try {
        return fs.readlinkSync(`/proc/self/fd/${fd}`) === 'anon_inode:[timerfd]';
      } catch {
        return false; // closed meanwhile (readdir's own fd)
      }
    }).length;
    const before = timerfds();
    // Terminated from outside while ticking, and exiting from inside a tick: both must
    // close the ticker's poll handle on the worker's loop (else Node aborts the process).
    const terminated = new Worker(
      `const { createTicker } = require(${native}); const { parentPort } = require('node:worker_threads'); let n = 0;
      createTicker(() => { if (++n === 3) parentPort.postMessage(n); }).start(Number(process.hrtime.bigint()) + 1e6, 1e6);`,
      { eval: true, execArgv: ['--require', 'tsx/cjs'] },
    );
    assert.equal(await new Promise((resolve, reject) => (terminated.once('message', resolve), terminated.once('error', reject))), 3);
    assert.equal(await terminated.terminate(), 1);
    const exiting = new Worker(`const { createTicker } = require(${native}); createTicker(() => process.exit(7)).start(Number(process.hrtime.bigint()) + 1e6, 1e6);`, {
      eval: true,
      execArgv: ['--require', 'tsx/cjs'],
    });
    assert.equal(await new Promise((resolve) => exiting.once('exit', resolve)), 7);
    assert.equal(timerfds(), before, "the workers' timerfds are closed with them");
    const r = spawnSync(process.execPath, ['--require', 'tsx/cjs', '-e', `const { createTicker } = require(${native});
      const t = createTicker(() => { throw new Error('tick threw'); });
      process.on('uncaughtException', (e) => { t.stop(); console.log('uncaught: ' + e.message); });
      t.start(Number(process.hrtime.bigint()) + 1e6, 1e6);`], { encoding: 'utf8', timeout: 10_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'uncaught: tick threw');
  });

  it('freeze probe (bench:host): builds, wakes on every CPU, runs its write load and removes the file; bad arguments exit 2', function () {
    this.timeout(120_000);
    const dir = tmpDir();
    const file = path.join(dir, 'probe.bin');
    const r = runFreezeProbe(1, ['--spin', '1', '--write-rate', '200', '--file', file]);
    assert.equal(r.cpus, os.cpus().length);
    assert.equal(r.lateByCpu.length, r.cpus);
    // 500 wake-ups a second on each CPU are due; a handful means the probe is not waking.
    assert.ok(r.wakeups >= 10 * r.cpus, `wake-ups ${r.wakeups}`);
    assert.equal(r.bins.reduce((a, b) => a + b, 0), r.late);
    assert.equal(r.lateByCpu.reduce((a, b) => a + b, 0), r.late);
    assert.ok(r.together >= 0 && r.together <= r.lateByCpu[0]!);
    assert.equal(typeof r.direct, 'boolean');
    // 200 are due in the second; a paced writer never writes more.
    assert.ok(r.writes! >= 1 && r.writes! <= 201, `writes ${r.writes}`);
    assert.ok(r.writeP50! > 0 && r.writeP50! <= r.writeMax!);
    assert.ok(!fs.existsSync(file), 'the write load removes its file');
    for (const bad of [['--write-rate', '10'], ['--bogus'], ['--seconds'], ['--seconds', 'abc'], ['--seconds', '-1'], ['--spin', '2x']]) {
      const res = spawnSync(freezeProbe(), bad, { encoding: 'utf8' });
      assert.equal(res.status, 2, `${bad.join(' ')}: ${res.stderr}`);
      assert.match(res.stderr, /^freeze_probe: /);
    }
  });

  it('flamegraph: folds perf script output, naming JavaScript, addon, native and kernel frames', () => {
    const text = [
      'node 100/100 ',
      '\tffffffff8158c3e1 do_syscall_64 ([kernel.kallsyms])',
      '\t    7f0000001000 uringmq::LogEngine::Append (/x/build/Release/uringmq.node)',
      '\t    7f0000002000 JS:*send file:///pkg/src/broker/producer.ts:10:3 (/tmp/perf-100.map)',
      '\t          915ae1 uv_run (/usr/bin/node)',
      '',
      'uringmq-io 100/101 ',
      '\t    7f0000003000 [unknown] ([unknown])',
      '\t    7f0000003000 [unknown] ([unknown])',
      '',
      'node 200/200 ',
      '\t          915ae1 uv_run (/usr/bin/node)',
      '',
    ];
    const f = new PerfFolder(new Set([100]), '/pkg');
    for (const l of text) f.line(l);
    const folded = f.end();
    assert.equal(f.samples, 2, 'only the broker pid');
    assert.deepEqual([...f.pidsSeen].sort(), [100, 200]);
    assert.deepEqual(
      [...folded.keys()].sort(),
      ['thread:node;native:uv_run;js:*send src/broker/producer.ts:10:3;addon:uringmq::LogEngine::Append;kernel:do_syscall_64', 'thread:uringmq-io;native:[unknown]'].sort(),
    );
    assert.match(foldedText(folded), /^node;uv_run;\*send src\/broker\/producer\.ts:10:3_\[j\];uringmq::LogEngine::Append;do_syscall_64_\[k\] 1$/m);
    const html = flamegraphHtml(folded, 'test');
    const data = JSON.parse(/<script type="application\/json" id="flame-data">([\s\S]*?)<\/script>/.exec(html)![1]!);
    assert.equal(data.v, 2);
    assert.deepEqual(data.c.map((c: { n: string }) => c.n).sort(), ['node', 'uringmq-io']);
  });
});

describe('bench:grpc (bench/grpc.ts)', function () {
  this.timeout(120_000);
  const GRPC_BENCH = path.join(__dirname, '..', 'bench', 'grpc.ts');

  /** The bench run from a scratch directory (its data goes under ./.bench-data), bounded. */
  function grpcBench(args: string[]) {
    const cwd = tmpDir('uringmq-bench-grpc-');
    const r = spawnSync(process.execPath, ['--require', require.resolve('tsx/cjs'), GRPC_BENCH, ...args], { cwd, encoding: 'utf8', timeout: 90_000, killSignal: 'SIGKILL' });
    const dataDirs = fs.existsSync(path.join(cwd, '.bench-data')) ? fs.readdirSync(path.join(cwd, '.bench-data')) : [];
    return { ...r, dataDirs };
  }

  /** An echo answering each frame after `delayMs`, or never when `drop` says so; it counts what it sent and dropped. */
  function fakeEcho(delayMs: number, drop: (i: number) => boolean) {
    const timers = new Set<NodeJS.Timeout>();
    const seen = { sent: 0, dropped: 0 };
    const open = (answered: (scheduled: number) => void): Echo => ({
      send(scheduled) {
        if (drop(seen.sent++)) return void seen.dropped++;
        const t = setTimeout(() => (timers.delete(t), answered(scheduled)), delayMs);
        timers.add(t);
      },
      close() {
        for (const t of timers) clearTimeout(t);
      },
      failure: () => null,
    });
    return { seen, open };
  }

  it('latency floors count a round trip never answered, or answered after the wait, as late as the wait, and say how many (they were left out)', async () => {
    const base = { what: 'fake', rate: 200, seconds: 1, warmupMs: 0, precise: false, drainMs: 200 };
    const half = fakeEcho(0, (i) => i % 2 === 1);
    const a = (await roundTrips({ ...base, open: half.open })).lat;
    assert.ok(a.sent > 100, `${a.sent} sent`);
    assert.equal(a.sent, half.seen.sent, 'the warm-up is 0: every send is measured');
    assert.equal(a.unanswered, half.seen.dropped);
    assert.ok(a.p99 >= 150 && a.max >= 150, `the unanswered are in the percentiles, as late as the 200 ms wait: ${latCell(a)}`);
    assert.match(latCell(a), new RegExp(`\\(${half.seen.dropped} of ${a.sent} unanswered, counted as late as the wait\\)$`));
    // Answers later than the wait: all of them count as unanswered, none is left out.
    const late = fakeEcho(5000, () => false);
    const b = (await roundTrips({ ...base, open: late.open })).lat;
    assert.equal(b.unanswered, b.sent);
    assert.ok(b.p50 >= 150, latCell(b));
    // Every one answered: no note.
    const c = (await roundTrips({ ...base, seconds: 0.3, open: fakeEcho(0, () => false).open })).lat;
    assert.equal(c.unanswered, 0);
    assert.match(latCell(c), /^\d+\.\d\d \/ \d+\.\d\d \/ \d+\.\d\d$/);
  });

  it('a latency with no sample prints n/a, not 0.00', () => {
    assert.equal(latCell(lat(histogram())), 'n/a / n/a / n/a');
  });

  it('a server that fails to start fails the run: its error, a non-zero exit, no data dir left', () => {
    const r = grpcBench(['--only', 'e2e', '--rates', '1000', '--group-commit-us', 'abc']);
    assert.equal(r.error, undefined, `the bench did not end: ${r.error?.message}`);
    assert.notEqual(r.status, 0, `exit status ${r.status}, stdout: ${r.stdout}`);
    assert.match(r.stderr, /groupCommitUs/);
    assert.deepEqual(r.dataDirs, []);
  });

  it('--help prints the usage; a mistyped flag or a value it does not take exits 2 before any case runs', () => {
    const help = grpcBench(['--help']);
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /^usage: npm run bench:grpc/);
    assert.deepEqual(help.dataDirs, [], 'no server started');
    for (const [args, said] of [
      [['--rate', '1000'], /unknown flag --rate/],
      [['--durability', 'interval'], /--durability takes sync or none/], // the server would run `sync` labeled `interval`
      [['--only', 'latency'], /--only takes e2e or throughput/], // both kinds would run
      [['--rates', '1k'], /--rates takes/],
      [['--only', 'e2e', '--seconds'], /--seconds needs a value/],
    ] as Array<[string[], RegExp]>) {
      const r = grpcBench(args);
      assert.equal(r.status, 2, `${args.join(' ')}: status ${r.status}, stdout: ${r.stdout.slice(0, 300)}`);
      assert.match(r.stderr, said);
      assert.equal(r.stdout, '');
      assert.deepEqual(r.dataDirs, []);
    }
  });

  it('SIGTERM (or the bench going away) stops its server and removes the data dir', async function () {
    const cwd = tmpDir('uringmq-bench-grpc-');
    const bench = spawn(process.execPath, ['--require', require.resolve('tsx/cjs'), GRPC_BENCH, '--only', 'e2e', '--rates', '1000'], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    bench.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    bench.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => bench.once('exit', (code) => resolve(code)));
    // The header is printed once the server is up.
    for (let i = 0; i < 600 && !/^server node flags/m.test(out); i++) await new Promise((r) => setTimeout(r, 50));
    assert.match(out, /^server node flags/m);
    const [dataDir] = fs.readdirSync(path.join(cwd, '.bench-data'));
    // /proc is read here rather than with pgrep: under the ASan stage's LD_PRELOAD, pgrep
    // never returns (checked: procps with libasan preloaded waits forever), and spawnSync
    // held this process with it.
    const serverDir = path.join(cwd, '.bench-data', dataDir!);
    const serverRunning = () =>
      fs.readdirSync('/proc').some((pid) => {
        if (!/^\d+$/.test(pid)) return false;
        let argv: string[];
        try {
          argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        } catch {
          return false; // gone between the listing and the read
        }
        return argv.some((a) => a.includes('grpc_server')) && argv.includes(serverDir);
      });
    assert.ok(serverRunning(), 'the server runs');
    bench.kill('SIGTERM');
    assert.equal(await exited, 143, out);
    for (let i = 0; i < 100 && serverRunning(); i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(!serverRunning(), 'the server is gone');
    assert.deepEqual(fs.readdirSync(path.join(cwd, '.bench-data')), []);
  });
});
