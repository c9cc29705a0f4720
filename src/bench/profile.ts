/**
 * `uringmq profile`: a bench run with the broker under `perf record -e cpu-clock -g`
 * and `node --perf-basic-prof --interpreted-frames-native-stack` (JIT maps name the
 * JavaScript frames; the addon is built with frame pointers and symbols), then a
 * flamegraph of the broker process.
 *
 * gRPC paths: only the broker child runs under perf, so the load generator does not
 * show up. Embedded path (broker in the bench process): the whole bench runs under
 * perf, as a child of this process.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { UringmqError } from '../errors';
import { BenchAbortedError } from './breaker';
import { flamegraphHtml, foldedText, PerfFolder } from './flamegraph';
import { nodeScriptArgs } from './node_script';
import { packageRoot, type BenchResults } from './results';
import { runBench, type BenchOutcome, type RunOptions } from './runner';
import type { Workload } from './workload';

export interface ProfileOptions {
  frequency: number;
  keepPerfData: boolean;
  /** The bench arguments as given, for running the whole bench under perf (embedded path). */
  benchArgs: string[];
}

export interface ProfileOutcome {
  outcome: BenchOutcome | null;
  aborted: BenchAbortedError | null;
  flamegraph: string;
  folded: string;
  perfData: string | null;
  notes: string[];
  /** The bench ran as a child that printed its own tables. */
  printed: boolean;
}

/** The JIT map flags; they also switch on V8's code-event log, which would land in the
 *  working directory as isolate-*-v8.log: send it to one file we remove afterwards. */
function nodePerfFlags(v8log: string): string[] {
  return ['--perf-basic-prof', '--interpreted-frames-native-stack', `--logfile=${v8log}`, '--no-logfile-per-isolate'];
}

/** perf's presence and what kernel.perf_event_paranoid allows; throws with what to do. */
export function checkPerf(): { event: string; notes: string[] } {
  const v = spawnSync('perf', ['--version'], { encoding: 'utf8' });
  if (v.error || v.status !== 0)
    throw new UringmqError(
      'FAILED_PRECONDITION',
      'perf is not installed (or not on PATH). Install it: Debian `apt install linux-perf`, Ubuntu `apt install linux-tools-common linux-tools-$(uname -r)`, Fedora/RHEL `dnf install perf`. In a container, perf also needs the host to allow perf_event_open (see README "Profiling with perf"). Without perf, `node --cpu-prof` profiles the JavaScript side only.',
    );
  const notes: string[] = [];
  let paranoid = 2;
  try {
    paranoid = Number(fs.readFileSync('/proc/sys/kernel/perf_event_paranoid', 'utf8').trim());
  } catch {
    notes.push('cannot read /proc/sys/kernel/perf_event_paranoid; assuming 2');
  }
  const root = process.getuid?.() === 0;
  let event = 'cpu-clock';
  if (!root && paranoid >= 3)
    throw new UringmqError(
      'FAILED_PRECONDITION',
      `kernel.perf_event_paranoid is ${paranoid}: unprivileged processes may not use perf at all. Run \`sudo sysctl kernel.perf_event_paranoid=1\` (kernel and user frames) or 2 (user frames only), or run as root.`,
    );
  if (!root && paranoid === 2) {
    event = 'cpu-clock:u';
    notes.push('kernel.perf_event_paranoid is 2: user-space frames only. `sudo sysctl kernel.perf_event_paranoid=1` adds kernel frames (io_uring, fdatasync, TCP).');
  }
  return { event, notes };
}

/** node-gyp-build takes build/Release first, then prebuilds/ (stripped: no C++ names). */
function addonNote(): string | null {
  if (process.env.URINGMQ_ADDON || process.env.PREBUILDS_ONLY) return null;
  const root = packageRoot();
  const release = path.join(root, 'build', 'Release');
  if (fs.existsSync(release) && fs.readdirSync(release).some((f) => f.endsWith('.node'))) return null;
  const pre = path.join(root, 'prebuilds');
  if (fs.existsSync(pre) && fs.readdirSync(pre, { recursive: true }).some((f) => String(f).endsWith('.node')))
    return 'node-gyp-build loads prebuilds/*.node, which are stripped: C++ frames of the addon show as [uringmq.node]. Set URINGMQ_ADDON=build/Release/uringmq.node (npm run build:native) or build-cmake/release/Release/uringmq.node (npm run build:release) for named frames.';
  return null;
}

export async function runProfile(w: Workload, ro: RunOptions, po: ProfileOptions): Promise<ProfileOutcome> {
  const outDir = path.resolve(ro.outDir ?? 'bench-results');
  const d = new Date();
  const p2 = (n: number) => String(n).padStart(2, '0');
  const base = ro.baseName ?? `${w.name}-profile-${d.getFullYear()}${p2(d.getMonth() + 1)}${p2(d.getDate())}-${p2(d.getHours())}${p2(d.getMinutes())}${p2(d.getSeconds())}`;
  const v8log = path.join(outDir, `${base}.v8.log`);
  try {
    return await profile(w, ro, po, outDir, base, v8log);
  } finally {
    fs.rmSync(v8log, { force: true });
  }
}

async function profile(w: Workload, ro: RunOptions, po: ProfileOptions, outDir: string, base: string, v8log: string): Promise<ProfileOutcome> {
  const { event, notes } = checkPerf();
  const addon = addonNote();
  if (addon) notes.push(addon);
  fs.mkdirSync(outDir, { recursive: true });
  const perfData = path.join(outDir, `${base}.perf.data`);
  const perfRecord = ['perf', 'record', '-e', event, '-g', '-F', String(po.frequency), '-o', perfData, '--'];
  const apis = w.kind === 'comparison' ? w.compare.apis : [w.api];
  const inProcess = apis.includes('embedded') || w.broker === 'in-process';

  let outcome: BenchOutcome | null = null;
  let aborted: BenchAbortedError | null = null;
  let results: BenchResults;
  if (!inProcess) {
    try {
      outcome = await runBench(w, { ...ro, outDir, baseName: base, childPrefix: perfRecord, childNodeFlags: nodePerfFlags(v8log) });
    } catch (e) {
      if (!(e instanceof BenchAbortedError)) throw e;
      aborted = e;
    }
    results = outcome ? outcome.results : (JSON.parse(fs.readFileSync(aborted!.resultsPath, 'utf8')) as BenchResults);
  } else {
    // The broker lives in the bench process: run the whole bench under perf.
    const args = [...perfRecord.slice(1), process.execPath, ...nodePerfFlags(v8log), ...nodeScriptArgs(path.join(__dirname, '..', 'cli', 'main')), 'bench', ...stripOwnFlags(po.benchArgs), '--out', outDir, '--name-base', base];
    // perf and the bench under it in their own process group: Ctrl-C in the terminal
    // reaches only this process, which asks perf to stop (SIGINT); perf then sends the
    // bench one SIGTERM, which it takes as an interruption (results written, data dir
    // removed). Both signalled by the terminal, the bench took perf's SIGTERM as a
    // second signal and exited at once, its results lost.
    const code = await new Promise<number | null>((resolve, reject) => {
      const c = spawn('perf', args, { stdio: ['ignore', 'inherit', 'inherit'], detached: true });
      let signals = 0;
      const onSignal = (signal: NodeJS.Signals) => {
        try {
          // A second signal: stop the whole group now.
          if (++signals > 1) process.kill(-c.pid!, 'SIGKILL');
          else c.kill('SIGINT');
        } catch {
          // already gone
        }
        if (signals > 1) process.exit(signal === 'SIGTERM' ? 143 : 130);
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      const done = () => {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      };
      c.once('error', (e) => {
        done();
        reject(e);
      });
      c.once('exit', (code) => {
        done();
        resolve(code);
      });
    });
    const file = path.join(outDir, `${base}.json`);
    if (!fs.existsSync(file)) throw new UringmqError('INTERNAL', `the profiled bench exited with ${code} and wrote no results (${file})`);
    results = JSON.parse(fs.readFileSync(file, 'utf8')) as BenchResults;
    if (results.aborted) aborted = new BenchAbortedError(results.aborted.reason, results.aborted.snapshot, file, path.join(outDir, `${base}.html`));
    else outcome = { results, resultsPath: file, reportPath: path.join(outDir, `${base}.html`) };
  }
  if (!fs.existsSync(perfData)) throw new UringmqError('INTERNAL', `perf wrote no data (${perfData}); see perf's messages above`);

  const pid = results.environment.brokerPid;
  const folder = new PerfFolder(new Set(pid ? [pid] : []), packageRoot());
  const script = spawn('perf', ['script', '-i', perfData, '-F', 'comm,pid,tid,ip,sym,dso'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  script.stderr!.on('data', (b: Buffer) => (err = (err + b.toString()).slice(-4000)));
  const exited = new Promise<number | null>((r) => script.once('exit', (c) => r(c)));
  for await (const l of readline.createInterface({ input: script.stdout!, crlfDelay: Infinity })) folder.line(l);
  const folded = folder.end();
  const code = await exited;
  if (code !== 0 && folder.samples === 0) throw new UringmqError('INTERNAL', `perf script failed (${code}): ${err}`);
  if (folder.samples === 0) notes.push(`no samples of the broker process (pid ${pid}) in ${perfData}`);

  const foldedFile = path.join(outDir, `${base}.folded.txt`);
  fs.writeFileSync(foldedFile, foldedText(folded));
  const title = `uringmq broker flamegraph — ${w.name} (${results.kind}, ${apis.join(' vs ')}), cpu-clock at ${po.frequency} Hz`;
  const flamegraph = path.join(outDir, `${base}.flamegraph.html`);
  fs.writeFileSync(flamegraph, flamegraphHtml(folded, title, notes));
  if (!po.keepPerfData) {
    fs.rmSync(perfData, { force: true });
    // node --perf-basic-prof maps of the processes we started; only perf script reads them.
    for (const p of folder.pidsSeen) if (p === pid) fs.rmSync(`/tmp/perf-${p}.map`, { force: true });
  }
  return { outcome, aborted, flamegraph, folded: foldedFile, perfData: po.keepPerfData ? perfData : null, notes, printed: inProcess };
}

/** Output flags are set by profile itself for the inner bench. */
function stripOwnFlags(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--out' || a === '-o' || a === '--perf-frequency') i++;
    else if (a === '--keep-perf-data' || a.startsWith('--out=') || a.startsWith('--perf-frequency=')) continue;
    else out.push(a);
  }
  return out;
}
