/**
 * Can this host give a durable round trip a few-ms p99? Runs the freeze probe
 * (bench/native/freeze_probe.cc: one real-time thread per CPU, waking every 2 ms)
 * alone and beside three loads, no broker and no Node in the measured path:
 *
 *   idle; busy CPUs (one spinning thread per CPU); durable writes (4 KiB O_DSYNC |
 *   O_DIRECT, 1000/s, as the log's cycles write); busy CPUs and durable writes.
 *
 * A wake-up more than 4 ms late on a thread nothing in the guest outranks means its vCPU
 * was off the CPU. On the VM this was written on, only the last case had them: one vCPU
 * or both, at the same point of every 100 ms clock period, which is what a durable
 * server under load meets there (bench:grpc --freeze-probe shows the same during its
 * durable cases).
 *
 *   npm run bench:host [-- --seconds 5]
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { arg } from './args';
import { freezeProbe, gridShare, runFreezeProbe, type FreezeResult } from './freeze_probe';

const SECONDS = Number(arg('seconds', '5'));

function main(): void {
  freezeProbe();
  fs.mkdirSync(path.join(process.cwd(), '.bench-data'), { recursive: true });
  const dir = fs.mkdtempSync(path.join(process.cwd(), '.bench-data', 'host-'));
  const cpus = os.cpus().length;
  const write = ['--write-rate', '1000', '--file', path.join(dir, 'probe.bin')];
  const cases: Array<[string, string[]]> = [
    ['idle', []],
    [`busy CPUs (${cpus} spinning threads)`, ['--spin', String(cpus)]],
    ['durable writes (4 KiB O_DSYNC, 1000/s)', write],
    ['busy CPUs and durable writes', ['--spin', String(cpus), ...write]],
  ];
  console.log(`uringmq bench:host — ${new Date().toISOString()}`);
  console.log(`kernel ${os.release()}, ${cpus}× ${os.cpus()[0]?.model}; ${SECONDS}s per case; data dir ${dir}\n`);
  const results: Array<[string, FreezeResult]> = [];
  try {
    for (const [name, load] of cases) results.push([name, runFreezeProbe(SECONDS, load)]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  if (results.some(([, r]) => !r.realtime)) console.log('The probes could not get real-time priority (run as root): their lateness includes the guest\'s own scheduling.\n');
  console.log('Probe wake-ups (every 2 ms on each CPU) more than 4 ms late: how many, over 8 ms, how many of the first CPU\'s');
  console.log('came while every other CPU\'s probe was late too (the whole VM stopped), the time they lost, the latest, the share');
  console.log('due within the busiest 20 ms of a 100 ms clock grid (~0.2 at random, near 1 for a stop once per 100 ms), and the');
  console.log(`writes' own latency in ms as p50 / p99 / p99.9 / max${results.some(([, r]) => r.direct === false) ? ' (without O_DIRECT: this file system refuses it)' : ''}:\n`);
  console.log('| case | wake-ups | late > 4 ms | > 8 ms | all CPUs at once | time lost | latest (ms) | on the 100 ms grid | writes p50 / p99 / p99.9 / max |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const [name, r] of results) {
    const lost = `${((r.lateMs / (r.seconds * 1000 * r.cpus)) * 100).toFixed(1)}%`;
    const writes = r.writes ? `${r.writeP50!.toFixed(2)} / ${r.writeP99!.toFixed(2)} / ${r.writeP999!.toFixed(2)} / ${r.writeMax!.toFixed(2)}` : '—';
    console.log(`| ${name} | ${r.wakeups} | ${r.late} | ${r.late8} | ${r.together} | ${lost} | ${r.maxMs.toFixed(1)} | ${gridShare(r)} | ${writes} |`);
  }
}

main();
