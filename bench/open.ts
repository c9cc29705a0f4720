/**
 * What refilling the idempotent-producer table (src/broker/idempotence.ts) adds to
 * Broker.open. After a clean close the open reads the partition's snapshot
 * (producers.snap) and the log after it, which is nothing. Without a snapshot (a crash
 * before the first) it reads the idempotent batches among the newest
 * `producerStateScanBytes` of each partition, checking their CRCs. Both compared, in
 * the same run, with the open of the same data directory with the table off (0),
 * which is the floor.
 *
 *   npm run bench:open [-- --mib 24 --dir /path/on/the/disk --repeat 3]
 *
 * Three data directories, each of one topic written by idempotent producers: one
 * partition of --mib MiB of one-record batches; the same of 1000-record batches (the
 * scan reads the whole window of both); 64 partitions of 2 MiB of one-record
 * batches (the broker opens a topic's partitions four at a time). Each open is
 * timed with the page cache warm and, when this process may write
 * /proc/sys/vm/drop_caches (root), cold. Prints the median of --repeat opens per
 * cell.
 */
import { execSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Broker, encodeBatch, sealBatch } from '../src';
import { PRODUCER_SNAPSHOT_FILE } from '../src/broker/producer_snapshot';
import { arg } from './args';

const MiB = 1 << 20;
const LOG_MIB = Number(arg('mib', '24'));
const BASE = arg('dir', path.join(process.cwd(), '.bench-data'));
const REPEAT = Number(arg('repeat', '3'));
const SCAN = 16 * MiB;

/** A topic of `partitions`, each holding `mib` MiB of batches of one idempotent producer. */
async function writeLog(dir: string, recordsPerBatch: number, partitions: number, mib: number): Promise<{ batches: number; bytes: number }> {
  const b = await Broker.open({ dir, durability: 'none' });
  await b.createTopic('t', { partitions });
  const value = 'x'.repeat(100);
  let batches = 0;
  for (let p = 0; p < partitions; p++) {
    let seq = 0;
    const inflight: Array<Promise<unknown>> = [];
    while ((await b.describeTopic('t')).partitions[p]!.bytes < mib * MiB) {
      for (let i = 0; i < 256; i++) {
        const recs = Array.from({ length: recordsPerBatch }, () => ({ value }));
        inflight.push(b.publishBatch('t', sealBatch(encodeBatch(recs, { producerId: 4242 + p, baseSequence: seq })), p));
        seq = (seq + recordsPerBatch) % 2 ** 31;
        batches++;
      }
      await Promise.all(inflight.splice(0));
    }
  }
  const bytes = (await b.describeTopic('t')).partitions.reduce((n, x) => n + x.bytes, 0);
  await b.close();
  return { batches, bytes };
}

function canDropCaches(): boolean {
  try {
    fs.accessSync('/proc/sys/vm/drop_caches', fs.constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** The partitions' snapshots: taken away for the window's opens, put back for the snapshot's. */
function snapshots(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const tdir = path.join(dir, 'topics', 't');
  for (const p of fs.readdirSync(tdir)) {
    const f = path.join(tdir, p, PRODUCER_SNAPSHOT_FILE);
    if (fs.existsSync(f)) out.set(f, fs.readFileSync(f));
  }
  return out;
}

type Mode = 'off' | 'snapshot' | 'window';

async function openMs(dir: string, mode: Mode, saved: Map<string, Buffer>, cold: boolean): Promise<number> {
  for (const [f, bytes] of saved) {
    if (mode === 'window') fs.rmSync(f, { force: true });
    else fs.writeFileSync(f, bytes);
  }
  const scan = mode === 'off' ? 0 : SCAN;
  if (cold) execSync('sync && echo 3 > /proc/sys/vm/drop_caches');
  const t0 = process.hrtime.bigint();
  const b = await Broker.open({ dir, producerStateScanBytes: scan });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  await b.close();
  return ms;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  fs.mkdirSync(BASE, { recursive: true });
  const root = fs.mkdtempSync(path.join(BASE, 'open-'));
  const caches = canDropCaches() ? [false, true] : [false];
  console.log(`Broker.open, scan window ${SCAN / MiB} MiB per partition; median of ${REPEAT}; ${new Date().toISOString()}`);
  if (caches.length === 1) console.log('(cold-cache rows skipped: /proc/sys/vm/drop_caches is not writable)');
  console.log('\n| log | batches in log | cache | table off (floor) ms | from the snapshot ms | added ms | from the window (no snapshot) ms | added ms |');
  console.log('|---|---:|---|---:|---:|---:|---:|---:|');
  try {
    const cases = [
      { perBatch: 1, partitions: 1, mib: LOG_MIB },
      { perBatch: 1000, partitions: 1, mib: LOG_MIB },
      { perBatch: 1, partitions: 64, mib: 2 }, // many partitions: they open four at a time
    ];
    for (const { perBatch, partitions, mib } of cases) {
      const dir = path.join(root, `per-batch-${perBatch}-x${partitions}`);
      const { batches, bytes } = await writeLog(dir, perBatch, partitions, mib);
      const saved = snapshots(dir);
      if (saved.size !== partitions) throw new Error(`${saved.size} snapshots for ${partitions} partitions`);
      for (const cold of caches) {
        const ms: Record<Mode, number[]> = { off: [], snapshot: [], window: [] };
        const modes: Mode[] = ['off', 'snapshot', 'window'];
        for (let i = 0; i < REPEAT; i++) {
          // Rotate which goes first, so none always meets the cache another left.
          for (let k = 0; k < modes.length; k++) {
            const mode = modes[(i + k) % modes.length]!;
            ms[mode].push(await openMs(dir, mode, saved, cold));
          }
        }
        const [a, s, w] = [median(ms.off), median(ms.snapshot), median(ms.window)];
        console.log(
          `| ${partitions > 1 ? `${partitions} partitions, ` : ''}${perBatch} record${perBatch > 1 ? 's' : ''}/batch, ${(bytes / MiB).toFixed(1)} MiB | ${batches} | ${cold ? 'cold' : 'warm'} | ${a.toFixed(1)} | ${s.toFixed(1)} | ${(s - a).toFixed(1)} | ${w.toFixed(1)} | ${(w - a).toFixed(1)} |`,
        );
      }
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

void main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
