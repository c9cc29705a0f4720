/**
 * Runs bench/native/freeze_probe.cc: one real-time thread per CPU that wakes every 2 ms
 * and records how late it was. A wake-up late by more than 4 ms on a thread nothing in
 * the guest outranks means its vCPU was off the CPU (see the .cc's header). Built with
 * g++ on first use into build/freeze_probe (g++ is already needed for the addon).
 */
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface FreezeResult {
  seconds: number;
  cpus: number;
  /** Whether the probes got SCHED_FIFO (root or CAP_SYS_NICE); without it they measure the guest's scheduler too. */
  realtime: boolean;
  wakeups: number;
  /** Wake-ups more than 4 ms late, over all CPUs (one per stop: the schedule restarts after it). */
  late: number;
  late8: number;
  /** The first CPU's late wake-ups during which every other CPU's probe was late too: the whole VM stopped. */
  together: number;
  /** Their lateness summed, ms. */
  lateMs: number;
  maxMs: number;
  lateByCpu: number[];
  /** Late wake-ups by where they were due on a 100 ms grid of CLOCK_MONOTONIC, in 10 ms bins. */
  bins: number[];
  /** Whether the writes used O_DIRECT (the file system may refuse it). */
  direct?: boolean;
  writes?: number;
  writeP50?: number;
  writeP99?: number;
  writeP999?: number;
  writeMax?: number;
  writesOver4?: number;
}

/** The repository: this file runs from bench/ (tsx) or dist/bench/ (compiled). */
const ROOT = path.resolve(__dirname, fs.existsSync(path.join(__dirname, '..', 'package.json')) ? '..' : '../..');
const SOURCE = path.join(ROOT, 'bench', 'native', 'freeze_probe.cc');
const BINARY = path.join(ROOT, 'build', 'freeze_probe');

/** The probe's path, built if missing or older than its source. */
export function freezeProbe(): string {
  const stale = !fs.existsSync(BINARY) || fs.statSync(BINARY).mtimeMs < fs.statSync(SOURCE).mtimeMs;
  if (stale) {
    fs.mkdirSync(path.dirname(BINARY), { recursive: true });
    // Built beside it and renamed, so that two benches starting at once never run a half-written file.
    const tmp = `${BINARY}.${process.pid}`;
    try {
      execFileSync('g++', ['-std=c++17', '-O2', '-Wall', '-Wextra', '-pthread', SOURCE, '-o', tmp], { stdio: 'inherit' });
      fs.renameSync(tmp, BINARY);
    } finally {
      fs.rmSync(tmp, { force: true });
    }
  }
  return BINARY;
}

function parse(out: string, args: string[]): FreezeResult {
  const line = out.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(line) as FreezeResult;
  } catch {
    throw new Error(`freeze_probe ${args.join(' ')} printed no result: ${JSON.stringify(out)}`);
  }
}

/** Runs the probe for `seconds` with the given load (--spin K, --write-rate R --file F). */
export function runFreezeProbe(seconds: number, load: string[] = []): FreezeResult {
  const args = ['--seconds', String(seconds), ...load];
  return parse(execFileSync(freezeProbe(), args, { encoding: 'utf8', timeout: (seconds + 30) * 1000 }), args);
}

/** Starts the probe beside something else; stop() ends it and returns what it saw. */
export function startFreezeProbe(): { stop(): Promise<FreezeResult> } {
  const args = ['--until-eof'];
  const child = spawn(freezeProbe(), args, { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  let failure: Error | null = null;
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stdin.on('error', () => undefined); // a probe that died already: its exit code says why
  // 'close', not 'exit': by then stdout has been read to its end.
  const closed = new Promise<number | null>((resolve) => {
    child.once('error', (e) => {
      failure = e;
      resolve(null);
    });
    child.once('close', (code) => resolve(code));
  });
  return {
    async stop() {
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      const code = await closed;
      clearTimeout(timer);
      if (failure) throw new Error(`freeze_probe: ${(failure as Error).message}`);
      if (code !== 0) throw new Error(`freeze_probe exited with ${code}`);
      return parse(out, args);
    },
  };
}

/**
 * The share of late wake-ups in the busiest 20 ms (two adjacent bins, wrapping) of the
 * 100 ms grid: about 0.2 if they fall at random, near 1 if something stops the VM once
 * per 100 ms period. "—" when too few to say.
 */
export function gridShare(r: FreezeResult): string {
  if (r.late < 10) return '—';
  let best = 0;
  for (let i = 0; i < r.bins.length; i++) best = Math.max(best, r.bins[i]! + r.bins[(i + 1) % r.bins.length]!);
  return (best / r.late).toFixed(2);
}

/** "stops of every CPU at once / late wake-ups on any CPU / longest ms / grid share" for a table cell. */
export function freezeCell(r: FreezeResult): string {
  return `${r.together} / ${r.late} / ${r.maxMs.toFixed(1)} / ${gridShare(r)}`;
}
