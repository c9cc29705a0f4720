/**
 * `uringmq bench` and `uringmq profile`: flags → workload → runner, then the tables
 * and the paths of what was written. Exit status: 0 done, 3 stopped by the circuit
 * breaker (results and snapshot written), 2 anything else (bad workload, perf missing).
 */
import * as fs from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import { BenchAbortedError } from './breaker';
import { runProfile } from './profile';
import { comparisonTable, stepTable, writeChartSvgs } from './report';
import type { BenchResults } from './results';
import { runBench, type BenchOutcome, type RunOptions } from './runner';
import { API_PATHS, KINDS, PLACEMENTS, parseDurabilityValue, parseRate, readWorkloadFile, resolveWorkload, type Workload, type WorkloadInput } from './workload';

export const EXIT_BREAKER = 3;

const num = (name: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError(`${name} must be a non-negative number`);
  return n;
};
const list = (v: string) => v.split(',').map((s) => s.trim()).filter(Boolean);

interface BenchFlags {
  workload?: string;
  kind?: Workload['kind'];
  api?: Workload['api'];
  broker?: Workload['broker'];
  server?: string;
  brokerPid?: number;
  dir?: string;
  keepData?: boolean;
  rates?: string[];
  stepSeconds?: number;
  warmupSeconds?: number;
  sampleSeconds?: number;
  drainSeconds?: number;
  messageSize?: number;
  topics?: number;
  partitions?: number;
  producers?: number;
  groups?: number;
  consumers?: number;
  durability?: string;
  ioBackend?: Workload['ioBackend'];
  lingerMs?: number;
  consumerDelayMs?: number;
  p99LimitMs?: number;
  breakerSamples?: number;
  maxRssMb?: number;
  maxHandles?: number;
  compare?: string[];
  backlogMessages?: number;
  name?: string;
  out?: string;
  svg?: boolean;
  progress?: boolean;
  quiet?: boolean;
  nameBase?: string;
}

function benchOptions(cmd: Command): Command {
  return cmd
    .argument('[workload]', 'workload file (.json, .yaml); flags override its settings')
    .option('-w, --workload <file>', 'workload file (same as the argument)')
    .addOption(new Option('--kind <kind>', 'what to run').choices(KINDS as string[]))
    .addOption(new Option('--api <path>', 'API path measured').choices(API_PATHS as string[]))
    .addOption(new Option('--broker <where>', 'where the broker this tool starts runs').choices(PLACEMENTS as string[]))
    .option('-s, --server <host:port>', 'measure a running server instead of starting one')
    .option('--broker-pid <pid>', "that server's pid on this machine, for its RSS and CPU", num('broker-pid'))
    .option('-d, --dir <path>', 'data directory for the broker this tool starts (default ./.bench-data/<run>, removed afterwards)')
    .option('--keep-data', 'keep the data directory')
    .option('--rates <list>', 'msgs/s per step, e.g. 1k,5k,10k', list)
    .option('--step-seconds <s>', 'length of each step (of each probe with --kind max-rate)', num('step-seconds'))
    .option('--warmup-seconds <s>', 'discarded start of each step', num('warmup-seconds'))
    .option('--sample-seconds <s>', 'sample interval', num('sample-seconds'))
    .option('--drain-seconds <s>', 'time for consumers to catch up at the end', num('drain-seconds'))
    .option('--message-size <bytes>', 'message value size (≥ 16)', num('message-size'))
    .option('--topics <n>', 'topics', num('topics'))
    .option('--partitions <n>', 'partitions per topic', num('partitions'))
    .option('--producers <n>', 'producers (in all)', num('producers'))
    .option('--groups <n>', 'consumer groups per topic (0: publish only)', num('groups'))
    .option('--consumers <n>', 'consumers per group', num('consumers'))
    .option('--durability <mode>', "'sync', 'none' or a sync interval in ms")
    .addOption(new Option('--io-backend <backend>', 'I/O backend of the broker this tool starts').choices(['auto', 'io_uring', 'thread']))
    .option('--linger-ms <ms>', 'producer linger (batching paths)', num('linger-ms'))
    .option('--consumer-delay-ms <ms>', 'make consumers slow: this long per message', num('consumer-delay-ms'))
    .option('--p99-limit-ms <ms>', 'circuit breaker: p99 latency limit (default 200)', num('p99-limit-ms'))
    .option('--breaker-samples <n>', 'circuit breaker: consecutive samples over the limit (default 5)', num('breaker-samples'))
    .option('--max-rss-mb <n>', 'circuit breaker: RSS limit per process (default 4096)', num('max-rss-mb'))
    .option('--max-handles <n>', 'circuit breaker: active handle limit per process (default 10000)', num('max-handles'))
    .option('--compare <list>', 'API paths for --kind comparison, e.g. grpc-unary,grpc-stream,grpc-batched', list)
    .option('--backlog-messages <n>', 'messages per topic for --kind backlog', num('backlog-messages'))
    .option('--name <name>', 'workload name (names the output files)')
    .option('-o, --out <dir>', 'output directory (default ./bench-results)')
    .option('--svg', 'also write each chart as a standalone .svg')
    .option('--no-progress', 'no progress bar')
    .option('-q, --quiet', 'no per-sample lines')
    .addOption(new Option('--name-base <base>', 'output file base name (used by profile)').hideHelp());
}

/** The workload from the file (if any) with the flags applied. */
export function workloadFromFlags(file: string | undefined, f: BenchFlags): Workload {
  const input: WorkloadInput = file ? readWorkloadFile(file) : {};
  const o: WorkloadInput = {
    name: f.name,
    kind: f.kind,
    api: f.api,
    broker: f.broker,
    rates: f.rates?.map((r) => parseRate(r)),
    stepSeconds: f.stepSeconds,
    warmupSeconds: f.warmupSeconds,
    sampleSeconds: f.sampleSeconds,
    drainSeconds: f.drainSeconds,
    messageSize: f.messageSize,
    topics: f.topics,
    partitions: f.partitions,
    producers: f.producers,
    consumerGroups: f.groups,
    consumersPerGroup: f.consumers,
    durability: f.durability === undefined ? undefined : parseDurabilityValue(f.durability),
    ioBackend: f.ioBackend,
    lingerMs: f.lingerMs,
    consumerDelayMs: f.consumerDelayMs,
  };
  const breaker: Partial<Workload['breaker']> = {};
  if (f.p99LimitMs !== undefined) breaker.p99Ms = f.p99LimitMs;
  if (f.breakerSamples !== undefined) breaker.consecutive = f.breakerSamples;
  if (f.maxRssMb !== undefined) breaker.maxRssMb = f.maxRssMb;
  if (f.maxHandles !== undefined) breaker.maxHandles = f.maxHandles;
  if (Object.keys(breaker).length) o.breaker = { ...(input.breaker ?? {}), ...breaker };
  if (f.compare) o.compare = { apis: f.compare as Workload['api'][] };
  if (f.backlogMessages !== undefined) o.backlog = { ...(input.backlog ?? {}), messages: f.backlogMessages };
  // A max-rate search runs probes, not steps: the step flags set its probes (they were
  // ignored, and checked against the steps' defaults: --step-seconds 5 was refused).
  if ((f.kind ?? input.kind) === 'max-rate' && (f.stepSeconds !== undefined || f.warmupSeconds !== undefined)) {
    o.maxRate = { ...(input.maxRate ?? {}) };
    if (f.stepSeconds !== undefined) o.maxRate.stepSeconds = f.stepSeconds;
    if (f.warmupSeconds !== undefined) o.maxRate.warmupSeconds = f.warmupSeconds;
    o.stepSeconds = o.warmupSeconds = undefined;
  }
  return resolveWorkload(input, o);
}

function runOptions(f: BenchFlags): RunOptions {
  return {
    server: f.server,
    brokerPid: f.brokerPid,
    dir: f.dir,
    keepData: f.keepData,
    outDir: f.out,
    baseName: f.nameBase,
    progress: f.progress !== false,
    log: f.quiet ? null : (s) => void process.stdout.write(s),
    handleSignals: true,
  };
}

function printOutcome(o: BenchOutcome, svg: boolean): void {
  const r = o.results;
  const out: string[] = [''];
  if (r.steps.length) out.push(stepTable(r), '');
  if (r.comparison) out.push(comparisonTable(r), '');
  if (r.maxRate) out.push(`max sustainable rate: ${r.maxRate.sustainableRate ?? 'none'} msgs/s — ${r.maxRate.note}`, '');
  if (r.backlog) out.push(`backlog: ${JSON.stringify(r.backlog)}`, '');
  const t = r.totals;
  out.push(`sent ${t.sent}, acked ${t.acked}, failed ${t.failed}, consumed ${t.consumed} of ${t.expectedConsumed}${t.drained ? '' : ' (consumers had not caught up when the run ended)'}`);
  if (r.errors.length) out.push(`errors:\n  ${r.errors.join('\n  ')}`);
  out.push(`results: ${o.resultsPath}`, `report:  ${o.reportPath}`);
  if (svg) out.push(`charts:  ${writeChartSvgs(r, o.reportPath.replace(/\.html$/, '')).join(', ')}`);
  process.stdout.write(`${out.join('\n')}\n`);
}

function reportAborted(e: BenchAbortedError, svg: boolean): void {
  // The charts of what ran before the stop, as a completed run writes them.
  const charts = svg ? `  charts:   ${writeChartSvgs(JSON.parse(fs.readFileSync(e.resultsPath, 'utf8')) as BenchResults, e.reportPath.replace(/\.html$/, '')).join(', ')}\n` : '';
  process.stderr.write(`uringmq bench: stopped by the circuit breaker: ${e.reason}\n  snapshot: ${e.snapshotPath}\n  results:  ${e.resultsPath}\n  report:   ${e.reportPath}\n${charts}`);
  process.exitCode = EXIT_BREAKER;
}

export function addBenchCommands(prog: Command): void {
  benchOptions(prog.command('bench').description('load-test a broker: stepped rates, max-rate search, backlog, API comparison (see README "Load testing")')).action(
    async (file: string | undefined, f: BenchFlags) => {
      const w = workloadFromFlags(file ?? f.workload, f);
      try {
        printOutcome(await runBench(w, runOptions(f)), !!f.svg);
      } catch (e) {
        if (e instanceof BenchAbortedError) return reportAborted(e, !!f.svg);
        throw e;
      }
    },
  );

  benchOptions(prog.command('profile').description('run a bench with the broker under `perf record` and write a flamegraph (see README "Profiling with perf")'))
    .option('--perf-frequency <hz>', 'samples per second per CPU (default 999)', num('perf-frequency'))
    .option('--keep-perf-data', 'keep perf.data and the JIT map /tmp/perf-<pid>.map (for perf report)')
    .action(async (file: string | undefined, f: BenchFlags & { perfFrequency?: number; keepPerfData?: boolean }) => {
      const w = workloadFromFlags(file ?? f.workload, f);
      if (f.server) throw new InvalidArgumentError('profile starts the broker itself: --server cannot be used');
      const p = await runProfile(w, runOptions(f), { frequency: f.perfFrequency ?? 999, keepPerfData: !!f.keepPerfData, benchArgs: process.argv.slice(process.argv.indexOf('profile') + 1) });
      if (p.outcome && !p.printed) printOutcome(p.outcome, !!f.svg);
      if (p.aborted) {
        if (p.printed) process.exitCode = EXIT_BREAKER;
        else reportAborted(p.aborted, !!f.svg);
      }
      for (const n of p.notes) process.stdout.write(`note: ${n}\n`);
      process.stdout.write(`flamegraph: ${p.flamegraph}\nfolded stacks: ${p.folded}\n`);
      if (p.perfData && fs.existsSync(p.perfData)) process.stdout.write(`perf data: ${p.perfData}\n`);
    });
}
