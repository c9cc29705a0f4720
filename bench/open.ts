/**
 * What the idempotent-producer scan adds to Broker.open: the open reads the
 * idempotent batches among the newest `producerStateScanBytes` of each partition
 * (checking their CRCs) to refill the duplicate table (src/broker/idempotence.ts).
 * Compared, in the same run, with the open of the same data directory with the
 * scan off (0), which is the floor.
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

async function openMs(dir: string, scan: number, cold: boolean): Promise<number> {
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
  console.log('\n| log | batches in log | cache | open, scan off (floor) ms | open, scan on ms | added ms |');
  console.log('|---|---:|---|---:|---:|---:|');
  try {
    const cases = [
      { perBatch: 1, partitions: 1, mib: LOG_MIB },
      { perBatch: 1000, partitions: 1, mib: LOG_MIB },
      { perBatch: 1, partitions: 64, mib: 2 }, // many partitions: they open four at a time
    ];
    for (const { perBatch, partitions, mib } of cases) {
      const dir = path.join(root, `per-batch-${perBatch}-x${partitions}`);
      const { batches, bytes } = await writeLog(dir, perBatch, partitions, mib);
      for (const cold of caches) {
        const off: number[] = [];
        const on: number[] = [];
        for (let i = 0; i < REPEAT; i++) {
          // Alternate which goes first, so neither always meets the cache the other left.
          if (i % 2 === 0) {
            off.push(await openMs(dir, 0, cold));
            on.push(await openMs(dir, SCAN, cold));
          } else {
            on.push(await openMs(dir, SCAN, cold));
            off.push(await openMs(dir, 0, cold));
          }
        }
        const [a, b] = [median(off), median(on)];
        console.log(
          `| ${partitions > 1 ? `${partitions} partitions, ` : ''}${perBatch} record${perBatch > 1 ? 's' : ''}/batch, ${(bytes / MiB).toFixed(1)} MiB | ${batches} | ${cold ? 'cold' : 'warm'} | ${a.toFixed(1)} | ${b.toFixed(1)} | ${(b - a).toFixed(1)} |`,
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
