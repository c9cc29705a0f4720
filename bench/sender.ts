/**
 * What the benchmarks' open-loop sender costs by itself: `npm run bench:sender
 * [-- --rate 10000 --seconds 3 --rounds 3] [--module <path>]`.
 *
 * The send does nothing, so the process's CPU time over the schedule is the sender's
 * own (its wake-ups, and for `precise` the addon's ticker thread), and the lag is how
 * late each message left after its scheduled time. Precise and coarse (Node's 1 ms
 * timers) alternate for `--rounds` rounds. `--module` loads another open_loop with
 * the same exports (an older version, for an A/B) in place of src/bench/open_loop: a
 * .js file, or a .ts one when this script runs under tsx (`npx tsx bench/sender.ts`).
 */
import * as path from 'node:path';
import { arg } from './args';
import type { openLoop as OpenLoop } from '../src/bench/open_loop';

const RATE = Number(arg('rate', '10000'));
const SECONDS = Number(arg('seconds', '3'));
const ROUNDS = Number(arg('rounds', '3'));
const MODULE = path.resolve(arg('module', path.join(__dirname, '..', 'src', 'bench', `open_loop${path.extname(__filename)}`)));

async function round(openLoop: typeof OpenLoop, precise: boolean): Promise<string> {
  const lags: number[] = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const start = t0 + 50;
  await openLoop({ rate: RATE, start, end: start + SECONDS * 1000, precise, send: (scheduled) => lags.push(performance.now() - scheduled) });
  const cpu = process.cpuUsage(cpu0);
  const wall = performance.now() - t0;
  lags.sort((a, b) => a - b);
  const q = (p: number) => lags[Math.min(lags.length - 1, Math.floor(p * lags.length))]!.toFixed(3);
  return `| ${precise ? 'precise' : 'coarse (1 ms timers)'} | ${lags.length} | ${(((cpu.user + cpu.system) / 1000 / wall) * 100).toFixed(1)}% | ${q(0.5)} | ${q(0.99)} |`;
}

async function main(): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { openLoop } = require(MODULE) as { openLoop: typeof OpenLoop };
  console.log(`bench:sender — ${new Date().toISOString()}, ${path.relative(process.cwd(), MODULE)}, ${RATE} msgs/s for ${SECONDS}s, a no-op send\n`);
  console.log('| sender | messages | process CPU (of a core) | lag p50 (ms) | lag p99 (ms) |');
  console.log('|---|---:|---:|---:|---:|');
  for (let i = 0; i < ROUNDS; i++) for (const precise of [true, false]) console.log(await round(openLoop, precise));
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
