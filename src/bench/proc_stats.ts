/**
 * Resource usage of the bench process and of the broker process: RSS, V8 heap,
 * event-loop delay (perf_hooks.monitorEventLoopDelay), active handles, CPU %.
 * Another process's RSS and CPU come from /proc/<pid>/status and /proc/<pid>/stat,
 * which answer even when that process's event loop is stuck.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

export interface ProcessStats {
  pid: number;
  rssMb: number | null;
  heapUsedMb: number | null;
  /** Event-loop delay over the sample, ms. */
  eventLoopDelayMs: { p50: number; p99: number; max: number } | null;
  /** process.getActiveResourcesInfo().length: sockets, timers, pending requests... */
  activeHandles: number | null;
  /** CPU time over wall time, in % of one core (200 = two cores busy). */
  cpuPct: number | null;
  /** The broker runs inside the bench process: these are the same numbers as the client's. */
  sameProcess?: boolean;
}

const MB = 1024 * 1024;
const ELD_RESOLUTION_MS = 10;
const r1 = (x: number) => Math.round(x * 10) / 10;

/** Samples this process: call sample() once per interval. */
export class SelfMonitor {
  private readonly eld: IntervalHistogram = monitorEventLoopDelay({ resolution: ELD_RESOLUTION_MS });
  private lastCpu = process.cpuUsage();
  private lastAt = performance.now();

  constructor() {
    this.eld.enable();
  }

  sample(): ProcessStats {
    const now = performance.now();
    const cpu = process.cpuUsage();
    const used = cpu.user - this.lastCpu.user + (cpu.system - this.lastCpu.system);
    const wall = (now - this.lastAt) * 1000;
    this.lastCpu = cpu;
    this.lastAt = now;
    const mem = process.memoryUsage();
    // The histogram holds the interval between timer runs, resolution included: the
    // delay is what exceeds the resolution.
    const late = (ns: number) => r1(Math.max(0, ns / 1e6 - ELD_RESOLUTION_MS));
    const eld = this.eld.count > 0 ? { p50: late(this.eld.percentile(50)), p99: late(this.eld.percentile(99)), max: late(this.eld.max) } : null;
    this.eld.reset();
    return {
      pid: process.pid,
      rssMb: r1(mem.rss / MB),
      heapUsedMb: r1(mem.heapUsed / MB),
      eventLoopDelayMs: eld,
      activeHandles: process.getActiveResourcesInfo().length,
      cpuPct: wall > 0 ? r1((used / wall) * 100) : null,
    };
  }

  close(): void {
    this.eld.disable();
  }
}

let clockTicks = 0;
function ticksPerSecond(): number {
  if (clockTicks === 0) {
    const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
    const n = Number(r.stdout?.trim());
    clockTicks = Number.isInteger(n) && n > 0 ? n : 100;
  }
  return clockTicks;
}

/** VmRSS of a process in MiB, or null if it is gone or unreadable. */
export function procRssMb(pid: number): number | null {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? r1(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
}

/** utime + stime of a process in seconds, or null. */
export function procCpuSeconds(pid: number): number | null {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm (field 2) may contain spaces and parentheses: fields after the last ')'.
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / ticksPerSecond(); // fields 14 and 15
  } catch {
    return null;
  }
}

/** CPU % of another process between calls of sample(). */
export class ProcCpu {
  private last: { cpu: number; at: number } | null = null;
  constructor(readonly pid: number) {
    const cpu = procCpuSeconds(pid);
    if (cpu !== null) this.last = { cpu, at: performance.now() };
  }
  sample(): number | null {
    const cpu = procCpuSeconds(this.pid);
    const at = performance.now();
    if (cpu === null) return null;
    const prev = this.last;
    this.last = { cpu, at };
    if (!prev || at <= prev.at) return null;
    return r1(((cpu - prev.cpu) / ((at - prev.at) / 1000)) * 100);
  }
}
