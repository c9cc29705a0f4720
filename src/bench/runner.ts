/**
 * Runs one bench workload: starts (or reaches) the broker, creates topics, producers
 * and consumer groups, drives the rate schedule open-loop, samples every
 * sampleSeconds, watches the circuit breaker, and writes the JSON results and the
 * HTML report.
 *
 * Every message value carries its scheduled send time and its actual send time
 * (performance.now() of this process, which also hosts the consumers), so each ack
 * and each delivery gives latency both from the schedule (what a user waiting on the
 * broker sees, stalls included) and from the send.
 *
 * Step statistics cover messages *scheduled* inside the step's measured window (the
 * warm-up discarded), whenever they complete; step throughput counts completions
 * inside the window. Steps are finalized after the run drains, so slow messages are
 * not left out of their step's latency.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as v8 from 'node:v8';
import { UringmqError } from '../errors';
import type { GroupConsumerApi } from '../broker/group_consumer';
import { BenchAbortedError, CircuitBreaker } from './breaker';
import { BrokerHost } from './broker_host';
import { distribution, encode, newHistogram, recordMs, summarize, type Histogram } from './latency';
import { openLoop } from './open_loop';
import { createConsumer, createPublisher, type Publisher } from './paths';
import { SelfMonitor, type ProcessStats } from './proc_stats';
import { Progress } from './progress';
import { writeReport } from './report';
import { environment, RESULTS_VERSION, type BacklogResult, type BenchResults, type ComparisonRow, type Environment, type PhaseKind, type Sample, type StepResult } from './results';
import type { ApiPath, Workload } from './workload';

/** Producers at or below this rate (msgs/s each) send each message at its own time. */
const PRECISE_MAX_RATE = 20_000;

export interface RunOptions {
  /** A running server (host:port) instead of a broker this tool starts. */
  server?: string;
  /** That server's pid on this machine (for its RSS and CPU). */
  brokerPid?: number;
  /** Data directory of the broker this tool starts (default ./.bench-data/<run>); removed afterwards unless keepData. */
  dir?: string;
  keepData?: boolean;
  /** Where results go (default ./bench-results). */
  outDir?: string;
  /** File name base (default <workload name>-<timestamp>). */
  baseName?: string;
  /** Progress bar on a TTY stdout (default true). */
  progress?: boolean;
  /** Per-sample lines and messages; null = silent (default: stdout). */
  log?: ((s: string) => void) | null;
  /** SIGINT stops the run like the breaker does, results written (default false). */
  handleSignals?: boolean;
  /** For `uringmq profile`: words before `node` for the broker child, and node flags. */
  childPrefix?: string[];
  childNodeFlags?: string[];
  /** Recorded in the results (default process.argv). */
  command?: string[];
}

export interface BenchOutcome {
  results: BenchResults;
  resultsPath: string;
  reportPath: string;
}

export async function runBench(w: Workload, o: RunOptions = {}): Promise<BenchOutcome> {
  return new BenchRun(w, o).execute();
}

const MB = 1e6;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Measured window of one step; histograms in µs, keyed by scheduled send time. */
interface Window {
  index: number;
  label: string;
  phase: 'step' | 'probe';
  api: ApiPath;
  rate: number;
  seconds: number;
  warmupSeconds: number;
  start: number;
  warmEnd: number;
  end: number;
  /** When the step actually stopped (breaker). */
  stoppedAt: number;
  sent: number;
  acked: number;
  consumed: number;
  failed: number;
  notSent: number;
  pub: Histogram;
  pubSend: Histogram;
  e2e: Histogram;
  e2eSend: Histogram;
  result: StepResult | null;
}

/** Topics, producers and consumers of one API path. */
interface Traffic {
  api: ApiPath;
  topics: string[];
  producers: ProducerState[];
  consumers: ConsumerState[];
  acked: number;
  consumed: number;
}

interface ProducerState {
  traffic: Traffic;
  pub: Publisher;
  outstanding: number;
}

interface ConsumerState {
  group: string;
  consumer: GroupConsumerApi;
  loop: Promise<void>;
  stopped: boolean;
}

interface Phase {
  kind: PhaseKind;
  step: number | null;
  api: ApiPath | null;
  targetRate: number | null;
  warmEnd: number;
  label: string;
  /** progress: 0..1 of the planned run at the phase start, and its share */
  progressBase: number | null;
  progressSpan: number;
  start: number;
  end: number;
}

class BenchRun {
  private host!: BrokerHost;
  private readonly self = new SelfMonitor();
  private readonly breaker: CircuitBreaker;
  private readonly progress: Progress;
  private readonly template: Buffer;
  private readonly runId: string;
  private readonly base: string;
  private readonly outDir: string;
  private t0 = performance.now();
  private stopReason: string | null = null;
  private readonly windows: Window[] = [];
  private readonly samples: Sample[] = [];
  private readonly errors: string[] = [];
  private readonly traffics: Traffic[] = [];
  private readonly topics: string[] = [];
  private phase: Phase;
  private sampleTimer: NodeJS.Timeout | null = null;
  private progressTimer: NodeJS.Timeout | null = null;
  private sampleChain: Promise<void> = Promise.resolve();
  private lastSampleAt = performance.now();
  private plannedSeconds = 0;
  private doneSeconds = 0;
  private backlog: BacklogResult | null = null;
  private maxRate: BenchResults['maxRate'] = null;
  private drained = true;
  // Counters since the last sample, and totals.
  private iv = { sent: 0, acked: 0, failed: 0, consumed: 0 };
  private tot = { sent: 0, acked: 0, failed: 0, consumed: 0, notSent: 0 };
  private readonly ivPub = newHistogram();
  private readonly ivPubSend = newHistogram();
  private readonly ivE2e = newHistogram();
  private readonly ivE2eSend = newHistogram();

  constructor(
    private readonly w: Workload,
    private readonly o: RunOptions,
  ) {
    this.breaker = new CircuitBreaker(w.breaker);
    const log = o.log === undefined ? (s: string) => void process.stdout.write(s) : o.log;
    this.progress = new Progress(o.progress ?? true, log);
    this.template = Buffer.alloc(w.messageSize, 0x78);
    const d = new Date();
    const stamp = `${d.getFullYear()}${p2(d.getMonth() + 1)}${p2(d.getDate())}-${p2(d.getHours())}${p2(d.getMinutes())}${p2(d.getSeconds())}`;
    this.runId = `b${stamp}`;
    this.base = o.baseName ?? `${w.name}-${stamp}`;
    this.outDir = path.resolve(o.outDir ?? 'bench-results');
    this.phase = this.newPhase('setup');
  }

  // ---- hot path -----------------------------------------------------------------

  private send(p: ProducerState, scheduled: number): void {
    const v = Buffer.from(this.template);
    const at = performance.now();
    v.writeDoubleLE(scheduled, 0);
    v.writeDoubleLE(at, 8);
    p.outstanding++;
    this.iv.sent++;
    this.tot.sent++;
    const cur = this.windows[this.windows.length - 1];
    if (cur && at >= cur.warmEnd && at < cur.end) cur.sent++;
    p.pub.send(v, (err) => {
      p.outstanding--;
      if (err) this.onFail(err);
      else this.onAck(p.traffic, scheduled, at);
    });
  }

  private onAck(t: Traffic, scheduled: number, sentAt: number): void {
    const now = performance.now();
    this.iv.acked++;
    this.tot.acked++;
    t.acked++;
    recordMs(this.ivPub, now - scheduled);
    recordMs(this.ivPubSend, now - sentAt);
    const cur = this.windows[this.windows.length - 1];
    if (cur && now >= cur.warmEnd && now < cur.end) cur.acked++;
    const w = this.windowOf(scheduled);
    if (w) {
      recordMs(w.pub, now - scheduled);
      recordMs(w.pubSend, now - sentAt);
    }
  }

  private onFail(err: Error): void {
    this.iv.failed++;
    this.tot.failed++;
    const cur = this.windows[this.windows.length - 1];
    if (cur) cur.failed++;
    const msg = `${(err as { code?: string }).code ?? 'ERROR'}: ${err.message}`;
    if (this.errors.length < 20 && !this.errors.includes(msg)) this.errors.push(msg);
  }

  private onConsume(t: Traffic, value: Buffer, now: number): void {
    this.iv.consumed++;
    this.tot.consumed++;
    t.consumed++;
    if (value.length < 16) return;
    const scheduled = value.readDoubleLE(0);
    const sentAt = value.readDoubleLE(8);
    recordMs(this.ivE2e, now - scheduled);
    recordMs(this.ivE2eSend, now - sentAt);
    const cur = this.windows[this.windows.length - 1];
    if (cur && now >= cur.warmEnd && now < cur.end) cur.consumed++;
    const w = this.windowOf(scheduled);
    if (w) {
      recordMs(w.e2e, now - scheduled);
      recordMs(w.e2eSend, now - sentAt);
    }
  }

  /** The step whose measured window holds time t (windows are disjoint and in order). */
  private windowOf(t: number): Window | null {
    for (let i = this.windows.length - 1; i >= 0; i--) {
      const w = this.windows[i]!;
      if (t >= w.start) return t >= w.warmEnd && t < w.end ? w : null;
    }
    return null;
  }

  // ---- traffic ------------------------------------------------------------------

  private async openTraffic(api: ApiPath, label: string, consumersFrom: 'latest' | 'earliest' | null): Promise<Traffic> {
    const w = this.w;
    const t: Traffic = { api, topics: [], producers: [], consumers: [], acked: 0, consumed: 0 };
    this.traffics.push(t);
    for (let i = 0; i < w.topics; i++) {
      const name = `${this.runId}.${label}.t${i}`;
      await this.host.createTopic(name, w.partitions);
      // The remote producer looks up (and caches) partition counts on first send;
      // look them up now, or every send of a first burst asks the server itself.
      if (api !== 'embedded') await this.host.describeTopic(name);
      t.topics.push(name);
      this.topics.push(name);
    }
    for (let i = 0; i < w.producers; i++) t.producers.push({ traffic: t, pub: await createPublisher(api, this.host, t.topics[i % w.topics]!, w), outstanding: 0 });
    if (consumersFrom) await this.startConsumers(t, consumersFrom, label);
    return t;
  }

  private async startConsumers(t: Traffic, from: 'latest' | 'earliest', label: string): Promise<void> {
    const w = this.w;
    if (w.consumerGroups === 0) return;
    const groups: Array<{ group: string; members: GroupConsumerApi[] }> = [];
    for (const topic of t.topics)
      for (let g = 0; g < w.consumerGroups; g++) {
        const group = `${topic}.${label}.g${g}`;
        const members: GroupConsumerApi[] = [];
        for (let c = 0; c < w.consumersPerGroup; c++) {
          const consumer = await createConsumer(t.api, this.host, topic, group, w, from);
          members.push(consumer);
          t.consumers.push(this.consume(t, group, consumer));
        }
        groups.push({ group, members });
      }
    // Producing starts once every group owns all its partitions: 'latest' then
    // means "everything from now", and no message waits for a rebalance.
    const deadline = Date.now() + 15_000;
    for (const g of groups) {
      for (;;) {
        const owned = new Set<number>();
        let sum = 0;
        for (const m of g.members) {
          for (const p of m.assignment) owned.add(p);
          sum += m.assignment.length;
        }
        if (owned.size === w.partitions && sum === w.partitions) break;
        if (Date.now() > deadline) {
          this.progress.log(`warning: group ${g.group} has ${owned.size} of ${w.partitions} partitions assigned after 15 s; starting anyway`);
          break;
        }
        await sleep(20);
      }
    }
  }

  private consume(t: Traffic, group: string, consumer: GroupConsumerApi): ConsumerState {
    const delay = this.w.consumerDelayMs;
    const st: ConsumerState = { group, consumer, stopped: false, loop: Promise.resolve() };
    st.loop = (async () => {
      try {
        for await (const batch of consumer.batches()) {
          const now = performance.now();
          for (const m of batch) this.onConsume(t, m.value, now);
          // The slow consumer: "processing" takes delay per message, acked afterwards.
          if (delay > 0) await sleep(delay * batch.length);
          for (const m of batch) m.ack();
          if (st.stopped) break;
        }
      } catch (e) {
        if (!st.stopped) this.errors.push(`consumer of ${group}: ${(e as Error).message}`);
      }
    })();
    return st;
  }

  /** `unlessStopped`: after a breaker trip, traffic stays up for the snapshot (execute() closes it). */
  private async closeTraffic(t: Traffic, unlessStopped = false): Promise<void> {
    if (unlessStopped && this.stopReason) return;
    const i = this.traffics.indexOf(t);
    if (i >= 0) this.traffics.splice(i, 1);
    await withTimeout(Promise.allSettled(t.producers.map((p) => p.pub.close())), 10_000);
    for (const c of t.consumers) c.stopped = true;
    await withTimeout(Promise.allSettled(t.consumers.map((c) => c.consumer.close())), 10_000);
    await withTimeout(Promise.allSettled(t.consumers.map((c) => c.loop)), 10_000);
  }

  private lag(): number {
    let lag = 0;
    if (this.w.consumerGroups === 0) return 0;
    for (const t of this.traffics) lag += t.acked * this.w.consumerGroups - t.consumed;
    return Math.max(0, lag);
  }

  private outstanding(): number {
    let n = 0;
    for (const t of this.traffics) for (const p of t.producers) n += p.outstanding;
    return n;
  }

  // ---- phases and samples -------------------------------------------------------

  private newPhase(kind: PhaseKind, x: Partial<Phase> = {}): Phase {
    const now = performance.now();
    return { kind, step: null, api: null, targetRate: null, warmEnd: 0, label: kind, progressBase: null, progressSpan: 0, start: now, end: 0, ...x };
  }

  /** Ends the current sample at the phase boundary and restarts the sample clock. */
  private async beginPhase(p: Phase): Promise<void> {
    await this.sample();
    this.phase = p;
    if (this.sampleTimer) clearInterval(this.sampleTimer);
    this.sampleTimer = setInterval(() => void this.sample(), this.w.sampleSeconds * 1000);
  }

  /**
   * Within a step, samples are cut at start + k × sampleSeconds and the step's last
   * sample runs to its end, at least half an interval long: no sliver of a sample
   * when the step length is a multiple of the interval and timers race.
   */
  private stepSampleClock(start: number, end: number): void {
    if (this.sampleTimer) clearInterval(this.sampleTimer);
    const every = this.w.sampleSeconds * 1000;
    let next = start + every;
    const arm = () => {
      if (next > end - every / 2) {
        this.sampleTimer = null;
        return;
      }
      this.sampleTimer = setTimeout(() => {
        next += every;
        arm();
        void this.sample();
      }, Math.max(0, next - performance.now()));
    };
    arm();
  }

  private sample(): Promise<void> {
    this.sampleChain = this.sampleChain.then(() => this.takeSample()).catch((e: Error) => {
      this.errors.push(`sampling: ${e.message}`);
    });
    return this.sampleChain;
  }

  private async takeSample(): Promise<void> {
    const now = performance.now();
    const dur = (now - this.lastSampleAt) / 1000;
    const iv = this.iv;
    // A phase boundary right after a sample: nothing to say, unless traffic happened.
    if (dur < 0.001 || (dur < 0.05 && iv.sent + iv.acked + iv.consumed + iv.failed === 0)) return;
    const start = this.lastSampleAt;
    this.lastSampleAt = now;
    const ph = this.phase;
    this.iv = { sent: 0, acked: 0, failed: 0, consumed: 0 };
    const size = this.w.messageSize;
    const lat = [summarize(this.ivPub), summarize(this.ivPubSend), summarize(this.ivE2e), summarize(this.ivE2eSend)] as const;
    this.ivPub.reset();
    this.ivPubSend.reset();
    this.ivE2e.reset();
    this.ivE2eSend.reset();
    const client = this.self.sample();
    const broker = await this.host.stats(client).catch(() => null);
    const s: Sample = {
      t: r3((now - this.t0) / 1000),
      durationSec: r3(dur),
      phase: ph.kind,
      step: ph.step,
      api: ph.api,
      targetRate: ph.targetRate,
      // Mostly inside the warm-up (timers may fire a hair early at the boundary).
      warmup: (ph.kind === 'step' || ph.kind === 'probe') && Math.min(now, ph.warmEnd) - start > (now - start) / 2,
      sentPerSec: r1(iv.sent / dur),
      publishedPerSec: r1(iv.acked / dur),
      consumedPerSec: r1(iv.consumed / dur),
      publishMBps: r3((iv.acked * size) / MB / dur),
      consumeMBps: r3((iv.consumed * size) / MB / dur),
      failed: iv.failed,
      outstanding: this.outstanding(),
      lag: this.lag(),
      publishLatencyMs: lat[0],
      publishLatencySinceSendMs: lat[1],
      e2eLatencyMs: lat[2],
      e2eLatencySinceSendMs: lat[3],
      client,
      broker,
    };
    this.samples.push(s);
    if (ph.kind !== 'setup' || iv.sent > 0) this.progress.log(sampleLine(s, this.w));
    const reason = this.breaker.check(s, ph.kind === 'step', this.w.consumerGroups > 0);
    if (reason) this.trip(reason);
  }

  private trip(reason: string): void {
    if (this.stopReason) return;
    this.stopReason = reason;
    this.progress.log(`circuit breaker: ${reason}`);
  }

  private updateProgress(): void {
    const ph = this.phase;
    const now = performance.now();
    const elapsed = (now - this.t0) / 1000;
    let frac: number | null = null;
    if (this.plannedSeconds > 0 && (ph.kind === 'step' || ph.kind === 'probe') && ph.end > ph.start)
      frac = (this.doneSeconds + Math.min(1, (now - ph.start) / (ph.end - ph.start)) * ((ph.end - ph.start) / 1000)) / this.plannedSeconds;
    const last = this.samples[this.samples.length - 1];
    const lat = last ? ` | pub p99 ${last.publishLatencyMs.p99} ms, e2e p99 ${last.e2eLatencyMs.p99} ms` : '';
    this.progress.update(frac, `${ph.label} | ${fmtSec(elapsed)}${lat}`);
  }

  // ---- steps --------------------------------------------------------------------

  /** Runs one step of the open-loop schedule; its result is computed by finalize(). */
  private async runStep(t: Traffic, rate: number, seconds: number, warmupSeconds: number, phase: 'step' | 'probe', label: string): Promise<Window> {
    const index = this.windows.length;
    const p = this.newPhase(phase, { step: index, api: t.api, targetRate: rate, label });
    await this.beginPhase(p);
    const start = performance.now() + 20;
    const win: Window = {
      index,
      label,
      phase,
      api: t.api,
      rate,
      seconds,
      warmupSeconds,
      start,
      warmEnd: start + warmupSeconds * 1000,
      end: start + seconds * 1000,
      stoppedAt: start + seconds * 1000,
      sent: 0,
      acked: 0,
      consumed: 0,
      failed: 0,
      notSent: 0,
      pub: newHistogram(),
      pubSend: newHistogram(),
      e2e: newHistogram(),
      e2eSend: newHistogram(),
      result: null,
    };
    p.warmEnd = win.warmEnd;
    p.start = start;
    p.end = win.end;
    this.windows.push(win);
    this.stepSampleClock(start, win.end);
    const n = t.producers.length;
    const per = rate / n;
    const outcomes = await Promise.all(
      t.producers.map((pr, i) =>
        openLoop({
          rate: per,
          start: start + (i * 1000) / rate, // interleave the producers' schedules
          end: win.end,
          send: (scheduled) => this.send(pr, scheduled),
          // Each message at its own time up to 20k msgs/s a producer; past that 1 ms
          // ticks already carry 20+ messages and a wake-up per 50 µs would cost more.
          precise: per <= PRECISE_MAX_RATE,
          canSend: () => pr.outstanding < this.w.maxOutstanding,
          stopped: () => this.stopReason !== null,
        }),
      ),
    );
    if (this.stopReason) win.stoppedAt = Math.min(win.end, performance.now());
    for (const r of outcomes) win.notSent += r.due - r.sent;
    this.tot.notSent += win.notSent;
    this.doneSeconds += seconds;
    return win;
  }

  private finalize(win: Window): StepResult {
    if (win.result) return win.result;
    const measured = Math.max(0, (Math.min(win.end, win.stoppedAt) - win.warmEnd) / 1000);
    const size = this.w.messageSize;
    const rate = (n: number) => (measured > 0 ? r1(n / measured) : 0);
    const mbps = (n: number) => (measured > 0 ? r3((n * size) / MB / measured) : 0);
    const rel = (x: number) => r3((x - this.t0) / 1000);
    win.result = {
      index: win.index,
      label: win.label,
      phase: win.phase,
      api: win.api,
      targetRate: win.rate,
      seconds: win.seconds,
      warmupSeconds: win.warmupSeconds,
      measuredSeconds: r3(measured),
      startT: rel(win.start),
      warmEndT: rel(win.warmEnd),
      endT: rel(Math.min(win.end, win.stoppedAt)),
      publishedPerSec: rate(win.acked),
      consumedPerSec: rate(win.consumed),
      publishMBps: mbps(win.acked),
      consumeMBps: mbps(win.consumed),
      sent: win.sent,
      acked: win.acked,
      consumed: win.consumed,
      failed: win.failed,
      notSent: win.notSent,
      publishLatencyMs: summarize(win.pub),
      publishLatencySinceSendMs: summarize(win.pubSend),
      e2eLatencyMs: summarize(win.e2e),
      e2eLatencySinceSendMs: summarize(win.e2eSend),
      distribution: { publish: distribution(win.pub), e2e: distribution(win.e2e) },
      histograms: { publish: encode(win.pub), publishSinceSend: encode(win.pubSend), e2e: encode(win.e2e), e2eSinceSend: encode(win.e2eSend) },
    };
    return win.result;
  }

  /** Waits until every send is acked and every group has read everything (or the timeout). */
  private async drain(seconds: number, label = 'draining'): Promise<boolean> {
    await this.beginPhase(this.newPhase('drain', { label }));
    const deadline = performance.now() + seconds * 1000;
    for (;;) {
      if (this.outstanding() === 0 && this.lag() === 0) return true;
      if (this.stopReason || performance.now() > deadline) return false;
      await sleep(20);
    }
  }

  // ---- kinds --------------------------------------------------------------------

  private async stepped(): Promise<void> {
    const w = this.w;
    this.plannedSeconds = w.rates.length * w.stepSeconds;
    const t = await this.openTraffic(w.api, 'steps', 'latest');
    for (let i = 0; i < w.rates.length && !this.stopReason; i++)
      await this.runStep(t, w.rates[i]!, w.stepSeconds, w.warmupSeconds, 'step', `step ${i + 1}/${w.rates.length}: ${fmtRate(w.rates[i]!)} msgs/s`);
    if (!this.stopReason) this.drained = await this.drain(w.drainSeconds);
    await this.closeTraffic(t, true);
  }

  private async comparison(): Promise<void> {
    const w = this.w;
    this.plannedSeconds = w.compare.apis.length * w.rates.length * w.stepSeconds;
    for (const api of w.compare.apis) {
      if (this.stopReason) break;
      const t = await this.openTraffic(api, `cmp-${api}`, 'latest');
      for (let i = 0; i < w.rates.length && !this.stopReason; i++) {
        await this.runStep(t, w.rates[i]!, w.stepSeconds, w.warmupSeconds, 'step', `${api} ${fmtRate(w.rates[i]!)} msgs/s`);
        // Each rate starts from an empty pipeline, so one rate's backlog does not
        // become the next one's latency.
        if (!this.stopReason) this.drained = (await this.drain(w.drainSeconds)) && this.drained;
      }
      await this.closeTraffic(t, true);
    }
  }

  private async maxRateSearch(): Promise<void> {
    const w = this.w;
    const m = w.maxRate;
    const t = await this.openTraffic(w.api, 'maxrate', 'latest');
    const probe = async (rate: number): Promise<boolean> => {
      const win = await this.runStep(t, rate, m.stepSeconds, m.warmupSeconds, 'probe', `max-rate probe ${fmtRate(rate)} msgs/s`);
      const drained = await this.drain(w.drainSeconds);
      const r = this.finalize(win);
      const why: string[] = [];
      if (r.publishedPerSec < m.minRatio * rate) why.push(`published ${r.publishedPerSec}/s < ${m.minRatio} × ${rate}`);
      const wantConsumed = rate * w.consumerGroups;
      if (w.consumerGroups > 0 && r.consumedPerSec < m.minRatio * wantConsumed) why.push(`consumed ${r.consumedPerSec}/s < ${m.minRatio} × ${wantConsumed}`);
      if (r.publishLatencyMs.p99 > m.p99LimitMs) why.push(`publish p99 ${r.publishLatencyMs.p99} ms > ${m.p99LimitMs} ms`);
      if (w.consumerGroups > 0 && r.e2eLatencyMs.p99 > m.p99LimitMs) why.push(`end-to-end p99 ${r.e2eLatencyMs.p99} ms > ${m.p99LimitMs} ms`);
      if (r.failed > 0) why.push(`${r.failed} publishes failed`);
      if (r.notSent > 0) why.push(`${r.notSent} messages not sent (maxOutstanding reached)`);
      if (!drained) why.push(`not drained within ${w.drainSeconds} s`);
      r.ok = why.length === 0 && !this.stopReason;
      r.verdict = r.ok ? 'sustained' : why.join('; ') || `stopped: ${this.stopReason}`;
      this.progress.log(`  ${fmtRate(rate)} msgs/s: ${r.ok ? 'sustained' : `not sustained (${r.verdict})`}`);
      return r.ok;
    };
    let lo: number | null = null;
    let hi: number | null = null;
    let rate = m.startRate;
    // A probe cut short (Ctrl-C, the breaker) says nothing of its rate: not a failure.
    let cutAt: number | null = null;
    while (!this.stopReason) {
      const ok = await probe(rate);
      if (this.stopReason) {
        cutAt = rate;
        break;
      }
      if (!ok) {
        hi = rate;
        break;
      }
      lo = rate;
      if (rate >= m.maxRate) break;
      // A factor close to 1 can round back to the same rate: then one step up, or the
      // search probed one rate forever.
      rate = Math.min(m.maxRate, Math.max(rate + 1, roundRate(rate * m.factor)));
    }
    for (let k = 0; k < m.refineSteps && lo !== null && hi !== null && !this.stopReason; k++) {
      const mid = roundRate((lo + hi) / 2);
      if (mid <= lo || mid >= hi) break;
      const ok = await probe(mid);
      if (this.stopReason) {
        cutAt = mid;
        break;
      }
      if (ok) lo = mid;
      else hi = mid;
    }
    this.maxRate = {
      sustainableRate: lo,
      note:
        cutAt !== null
          ? `search stopped (${this.stopReason}) during the probe at ${cutAt} msgs/s; ` +
            (lo === null ? 'no rate sustained before it' : `highest rate sustained before it: ${lo} msgs/s`)
          : lo === null
          ? `not even the start rate ${m.startRate} msgs/s was sustained`
          : hi === null
            ? `sustained up to the search limit ${m.maxRate} msgs/s`
            : `highest rate sustained; ${hi} msgs/s was not (criteria: ≥ ${m.minRatio} of the target published and consumed, p99 ≤ ${m.p99LimitMs} ms, drained within ${w.drainSeconds} s)`,
    };
    await this.closeTraffic(t, true);
  }

  private async backlogMode(): Promise<void> {
    const w = this.w;
    const b = w.backlog;
    const t = await this.openTraffic(w.api, 'backlog', null);
    const total = b.messages * w.topics;
    await this.beginPhase(this.newPhase('backlog-build', { api: t.api, label: `building a backlog of ${total} messages` }));
    const t1 = performance.now();
    const n = t.producers.length;
    // Closed loop: each producer keeps buildWindow sends outstanding until its share is sent.
    await Promise.all(
      t.producers.map(
        (pr, i) =>
          new Promise<void>((resolve) => {
            let left = Math.floor(total / n) + (i < total % n ? 1 : 0);
            const pump = () => {
              while (left > 0 && pr.outstanding < b.buildWindow && !this.stopReason) {
                left--;
                const now = performance.now();
                this.send(pr, now);
              }
              if ((left === 0 || this.stopReason) && pr.outstanding === 0) resolve();
              else setTimeout(pump, 1);
            };
            pump();
          }),
      ),
    );
    const buildSeconds = (performance.now() - t1) / 1000;
    const built = t.acked;
    if (this.stopReason) return;
    await this.beginPhase(this.newPhase('backlog-drain', { api: t.api, label: `catching up on ${built} messages` }));
    const t2 = performance.now();
    const consumedBefore = t.consumed;
    await this.startConsumers(t, 'earliest', 'backlog');
    const deadline = t2 + b.timeoutSeconds * 1000;
    const want = built * w.consumerGroups;
    const caughtUp = () => t.consumed - consumedBefore >= want;
    let live: Promise<unknown> = Promise.resolve();
    if (b.produceRate > 0)
      live = Promise.all(
        t.producers.map((pr, i) =>
          openLoop({
            rate: b.produceRate / n,
            start: t2 + (i * 1000) / b.produceRate,
            end: deadline,
            send: (s) => this.send(pr, s),
            precise: b.produceRate / n <= PRECISE_MAX_RATE,
            canSend: () => pr.outstanding < w.maxOutstanding,
            stopped: () => this.stopReason !== null || caughtUp(),
          }),
        ),
      );
    while (!caughtUp() && !this.stopReason && performance.now() < deadline) await sleep(10);
    const drainSeconds = (performance.now() - t2) / 1000;
    const read = t.consumed - consumedBefore;
    await live;
    this.backlog = {
      messages: built,
      buildSeconds: r3(buildSeconds),
      buildPerSec: r1(built / buildSeconds),
      buildMBps: r3((built * w.messageSize) / MB / buildSeconds),
      drainSeconds: r3(drainSeconds),
      drainPerSec: r1(read / drainSeconds),
      drainMBps: r3((read * w.messageSize) / MB / drainSeconds),
      caughtUp: caughtUp(),
    };
    this.progress.log(
      `backlog: wrote ${built} messages in ${r3(buildSeconds)} s (${fmtRate(this.backlog.buildPerSec)}/s), ${w.consumerGroups} group(s) read them in ${r3(drainSeconds)} s (${fmtRate(this.backlog.drainPerSec)}/s)${this.backlog.caughtUp ? '' : ' — did NOT catch up'}`,
    );
    if (!this.stopReason) this.drained = await this.drain(w.drainSeconds);
    await this.closeTraffic(t, true);
  }

  // ---- the run ------------------------------------------------------------------

  async execute(): Promise<BenchOutcome> {
    const w = this.w;
    const o = this.o;
    // The results go here at the end: a directory they cannot be written to is said
    // now, not after the whole run.
    try {
      fs.mkdirSync(this.outDir, { recursive: true });
      const probe = path.join(this.outDir, `.uringmq-bench-probe-${process.pid}`);
      fs.writeFileSync(probe, '');
      fs.rmSync(probe);
    } catch (e) {
      throw new UringmqError('INVALID_ARGUMENT', `cannot write results to ${this.outDir}: ${(e as Error).message}`);
    }
    const dataDir = path.resolve(o.dir ?? path.join('.bench-data', this.base));
    const madeDir = !fs.existsSync(dataDir);
    const startedAt = new Date();
    let onSigint: ((signal?: NodeJS.Signals) => void) | null = null;
    let failure: unknown = null;
    let env: Environment | null = null;
    let snapshotPath: string | null = null;
    if (o.handleSignals) {
      let n = 0;
      // SIGTERM as SIGINT: results written, the child broker and the data dir gone.
      // Installed before the broker starts: a signal while it starts stops the run
      // before its first step, and the data dir still goes.
      onSigint = (signal?: NodeJS.Signals) => {
        if (++n > 1) process.exit(signal === 'SIGTERM' ? 143 : 130);
        this.trip(`interrupted (${signal ?? 'SIGINT'})`);
      };
      process.on('SIGINT', onSigint);
      process.on('SIGTERM', onSigint);
    }
    const offSignals = () => {
      if (!onSigint) return;
      process.off('SIGINT', onSigint);
      process.off('SIGTERM', onSigint);
    };
    try {
      this.host = await BrokerHost.start(w, { server: o.server, brokerPid: o.brokerPid, dir: dataDir, childPrefix: o.childPrefix, childNodeFlags: o.childNodeFlags });
    } catch (e) {
      offSignals();
      this.self.close();
      if (madeDir) fs.rmSync(dataDir, { recursive: true, force: true });
      throw e;
    }
    try {
      // A running server (--server) has its own durability, which the workload's does not set.
      env = environment({ ...this.host, dataDir: this.host.dataDir }, this.host.placement === 'external' ? null : w.durability);
      this.progress.log(
        `uringmq bench ${w.name} (${w.kind}, ${w.kind === 'comparison' ? w.compare.apis.join(' vs ') : w.api}), ${w.messageSize} B, durability ${env.durability}, ${this.host.ioBackend}, broker ${this.host.placement}${this.host.address ? ` at ${this.host.address}` : ''}`,
      );
      this.t0 = performance.now();
      this.lastSampleAt = this.t0;
      await this.beginPhase(this.newPhase('setup'));
      this.progressTimer = setInterval(() => this.updateProgress(), 250);
      if (w.kind === 'stepped') await this.stepped();
      else if (w.kind === 'comparison') await this.comparison();
      else if (w.kind === 'max-rate') await this.maxRateSearch();
      else await this.backlogMode();
    } catch (e) {
      failure = e;
    }
    try {
      if (this.sampleTimer) clearInterval(this.sampleTimer);
      if (this.progressTimer) clearInterval(this.progressTimer);
      this.sampleTimer = this.progressTimer = null;
      await this.sample();
      this.progress.done();
      if (this.stopReason && env) snapshotPath = await this.writeSnapshot(env);
      for (const t of [...this.traffics]) await this.closeTraffic(t);
    } finally {
      offSignals();
      this.self.close();
      await this.host.close().catch((e: Error) => this.errors.push(`stopping the broker: ${e.message}`));
      if (madeDir && !o.keepData) fs.rmSync(dataDir, { recursive: true, force: true });
    }
    if (failure) throw failure;
    const results = this.results(env!, startedAt, snapshotPath);
    const resultsPath = path.join(this.outDir, `${this.base}.json`);
    fs.writeFileSync(resultsPath, `${JSON.stringify(results, null, 1)}\n`);
    const reportPath = writeReport(results, path.join(this.outDir, `${this.base}.html`));
    if (this.stopReason) throw new BenchAbortedError(this.stopReason, snapshotPath!, resultsPath, reportPath);
    return { results, resultsPath, reportPath };
  }

  private results(env: Environment, startedAt: Date, snapshot: string | null): BenchResults {
    const steps = this.windows.map((w) => this.finalize(w));
    let comparison: ComparisonRow[] | null = null;
    if (this.w.kind === 'comparison')
      comparison = steps.map((s) => ({
        api: s.api,
        targetRate: s.targetRate,
        step: s.index,
        publishedPerSec: s.publishedPerSec,
        consumedPerSec: s.consumedPerSec,
        publishP50: s.publishLatencyMs.p50,
        publishP99: s.publishLatencyMs.p99,
        publishP999: s.publishLatencyMs.p999,
        e2eP50: s.e2eLatencyMs.p50,
        e2eP99: s.e2eLatencyMs.p99,
        e2eP999: s.e2eLatencyMs.p999,
        e2eMax: s.e2eLatencyMs.max,
      }));
    const finished = new Date();
    return {
      version: RESULTS_VERSION,
      name: this.w.name,
      kind: this.w.kind,
      startedAt: startedAt.toISOString(),
      finishedAt: finished.toISOString(),
      durationSec: r3((finished.getTime() - startedAt.getTime()) / 1000),
      command: this.o.command ?? process.argv,
      environment: env,
      workload: this.w,
      steps,
      maxRate: this.maxRate,
      backlog: this.backlog,
      comparison,
      totals: { ...this.tot, expectedConsumed: this.tot.acked * this.w.consumerGroups, drained: this.drained },
      errors: this.errors,
      samples: this.samples,
      aborted: this.stopReason ? { reason: this.stopReason, snapshot: snapshot ?? '' } : null,
    };
  }

  /** The breaker's diagnostic snapshot: what was configured, what the last samples said, and the broker's own view. */
  private async writeSnapshot(env: Environment): Promise<string> {
    const topics: unknown[] = [];
    for (const name of this.topics) {
      try {
        topics.push(await withTimeout(this.host.describeTopic(name), 5000));
      } catch (e) {
        topics.push({ name, error: (e as Error).message });
      }
    }
    const snapshot = {
      reason: this.stopReason,
      at: new Date().toISOString(),
      runSeconds: r3((performance.now() - this.t0) / 1000),
      workload: this.w,
      options: { server: this.o.server ?? null, brokerPid: this.o.brokerPid ?? null, dir: this.host.dataDir },
      environment: env,
      totals: { ...this.tot, outstanding: this.outstanding(), lag: this.lag() },
      lastSamples: this.samples.slice(-Math.max(10, this.w.breaker.consecutive + 2)),
      topics,
      heapStatistics: { client: v8.getHeapStatistics(), broker: this.host.placement === 'in-process' ? 'same process as the client' : await this.host.heapStatistics().catch(() => null) },
      errors: this.errors,
      brokerOutput: this.host.output().slice(-5000),
    };
    const file = path.join(this.outDir, `${this.base}.breaker.json`);
    fs.writeFileSync(file, `${JSON.stringify(snapshot, null, 1)}\n`);
    return file;
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout;
  return Promise.race([p, new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), ms)))]).finally(() => clearTimeout(timer));
}

const p2 = (n: number) => String(n).padStart(2, '0');
const r1 = (x: number) => Math.round(x * 10) / 10;
const r3 = (x: number) => Math.round(x * 1000) / 1000;

/** 3 significant digits: 12345 → 12300. */
function roundRate(x: number): number {
  const mag = 10 ** Math.max(0, Math.floor(Math.log10(x)) - 2);
  return Math.round(x / mag) * mag;
}

export function fmtRate(n: number): string {
  if (n >= 1e6) return `${+(n / 1e6).toFixed(2)}M`;
  if (n >= 1e3) return `${+(n / 1e3).toFixed(1)}k`;
  return `${+n.toFixed(1)}`;
}

function fmtSec(s: number): string {
  return s >= 60 ? `${Math.floor(s / 60)}m${p2(Math.floor(s % 60))}s` : `${s.toFixed(0)}s`;
}

function fmtProc(p: ProcessStats | null): string {
  if (!p) return '?';
  return `${p.rssMb ?? '?'} MiB ${p.cpuPct ?? '?'}%`;
}

function sampleLine(s: Sample, w: Workload): string {
  const head = `[${s.t.toFixed(1).padStart(7)}s] ${s.phase}${s.step !== null ? ` #${s.step + 1}` : ''}${s.warmup ? ' (warm-up)' : ''}`;
  const rates = `sent ${fmtRate(s.sentPerSec)}/s pub ${fmtRate(s.publishedPerSec)}/s cons ${fmtRate(s.consumedPerSec)}/s`;
  const lat = `pub p50/p99 ${s.publishLatencyMs.p50}/${s.publishLatencyMs.p99} ms` + (w.consumerGroups > 0 ? `, e2e p50/p99 ${s.e2eLatencyMs.p50}/${s.e2eLatencyMs.p99} ms, lag ${s.lag}` : '');
  const res = `client ${fmtProc(s.client)}` + (s.broker && !s.broker.sameProcess ? `, broker ${fmtProc(s.broker)}` : '');
  return `${head.padEnd(24)} ${rates} | ${lat} | ${res}`;
}
