/**
 * Append throughput of the embedded broker, next to the raw O_DIRECT write
 * bandwidth of the same disk measured in the same run (the ceiling).
 *
 *   npm run bench:append [-- --seconds 5 --dir /path/on/the/disk/to/test --quick
 *                            --sizes 100,1024 --backends io_uring,thread]
 *
 * Prints one table row per (record size, durability, backend, API path): records/s,
 * MB/s of log bytes written, and the ratio of MB/s to the raw disk bandwidth.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Broker, crc32c, probeIoUring } from '../src';
import { arg, flag } from './args';

const SECONDS = Number(arg('seconds', '4'));
const BASE = arg('dir', path.join(process.cwd(), '.bench-data'));
const QUICK = flag('quick');
const BATCH = 1000;

function rawDiskMBps(dir: string): number {
  // dd with O_DIRECT into a preallocated file, 4 MiB blocks, one final fdatasync:
  // the sequential write ceiling for this filesystem and disk.
  const file = path.join(dir, 'raw-direct.bin');
  const mib = 1024;
  execFileSync('fallocate', ['-l', `${mib}M`, file]);
  const t0 = process.hrtime.bigint();
  execFileSync('dd', ['if=/dev/zero', `of=${file}`, 'bs=4M', `count=${mib / 4}`, 'oflag=direct', 'conv=fdatasync,notrunc'], { stdio: 'ignore' });
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  fs.rmSync(file);
  return (mib * 1048576) / secs / 1e6;
}

interface Row {
  size: number;
  durability: string;
  backend: string;
  api: string;
  recPerSec: number;
  mbPerSec: number;
}

async function runCase(size: number, durability: 'sync' | 'none', backend: 'io_uring' | 'thread', api: 'sendBatch' | 'send'): Promise<Row> {
  const dir = fs.mkdtempSync(path.join(BASE, 'case-'));
  const broker = await Broker.open({ dir, durability, ioBackend: backend });
  await broker.createTopic('bench', { partitions: 1, segmentBytes: 1 << 30 });
  const producer = broker.producer({ maxBatchBytes: 4 << 20 });
  const value = Buffer.alloc(size, 0x61);
  const batch = Array.from({ length: BATCH }, () => ({ value }));
  let records = 0;
  let stop = false;
  const warmupMs = 500;
  let t0 = 0n;
  let counted = 0;
  // The measured window starts when the warm-up ends, however late that timer fires:
  // with the stop timer set from the start, one late pair (an event loop held up past
  // both) left a window of milliseconds, and a 1 KiB send() case once read 3.6 M/s.
  setTimeout(() => {
    t0 = process.hrtime.bigint();
    counted = records;
    setTimeout(() => (stop = true), SECONDS * 1000);
  }, warmupMs);

  if (api === 'sendBatch') {
    // A few batches in flight, as a pipelining producer would keep.
    const worker = async () => {
      while (!stop) {
        await producer.sendBatch('bench', batch, { partition: 0 });
        records += BATCH;
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
  } else {
    // Many independent send() calls outstanding; the producer batches them.
    const window = 20000;
    const worker = async () => {
      while (!stop) {
        await producer.send('bench', { value, partition: 0 });
        records++;
      }
    };
    await Promise.all(Array.from({ length: window }, worker));
  }
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  const n = records - counted;
  const info = await broker.describeTopic('bench');
  const bytesPerRecord = info.partitions[0]!.bytes / records;
  await broker.close();
  fs.rmSync(dir, { recursive: true, force: true });
  return { size, durability, backend, api, recPerSec: n / secs, mbPerSec: (n * bytesPerRecord) / secs / 1e6 };
}

/** Checksum throughput of the core's CRC32C (producers, the I/O thread and consumers run it on every batch). */
function crcGBps(): number {
  const buf = Buffer.alloc(1 << 20, 0x5a);
  const t = performance.now();
  let n = 0;
  for (; performance.now() - t < 500; n++) crc32c(buf);
  return (n * buf.length) / ((performance.now() - t) * 1e6);
}

async function main(): Promise<void> {
  fs.mkdirSync(BASE, { recursive: true });
  const backends = (probeIoUring().available ? ['io_uring', 'thread'] : ['thread']).filter((b) => arg('backends', 'io_uring,thread').split(',').includes(b)) as Array<'io_uring' | 'thread'>;
  const fsType = execFileSync('stat', ['-f', '-c', '%T', BASE]).toString().trim();
  console.log(`uringmq bench:append — ${new Date().toISOString()}`);
  console.log(`kernel ${os.release()}, ${os.cpus().length}× ${os.cpus()[0]?.model}, node ${process.version}, fs ${fsType} at ${BASE}`);
  console.log(`batches of ${BATCH} records via sendBatch (16 in flight); send() with 20000 outstanding; ${SECONDS}s per case after 0.5s warm-up\n`);
  console.log(`CRC32C of every batch (native, 1 MiB buffer): ${crcGBps().toFixed(1)} GB/s`);
  const raw = rawDiskMBps(BASE);
  console.log(`raw sequential O_DIRECT write (dd bs=4M, fallocated file, fdatasync): ${raw.toFixed(0)} MB/s\n`);
  const rows: Row[] = [];
  const sizes = arg('sizes', '100,1024').split(',').map(Number);
  const apis: Array<'sendBatch' | 'send'> = QUICK ? ['sendBatch'] : ['sendBatch', 'send'];
  for (const size of sizes)
    for (const durability of ['sync', 'none'] as const)
      for (const backend of backends)
        for (const api of apis) {
          const r = await runCase(size, durability, backend, api);
          rows.push(r);
          console.log(`  ${size} B ${durability} ${backend} ${api}: ${fmt(r.recPerSec)} records/s, ${r.mbPerSec.toFixed(0)} MB/s`);
        }
  const rawAfter = rawDiskMBps(BASE);
  // The disk's speed drifts during a run; compare against the faster of the two
  // measurements so the ratio is never flattered.
  const ceiling = Math.max(raw, rawAfter);
  console.log(`raw sequential O_DIRECT write again at the end: ${rawAfter.toFixed(0)} MB/s; ratios below use ${ceiling.toFixed(0)} MB/s\n`);
  console.log('| record | durability | backend | API | records/s | MB/s | × raw disk |');
  console.log('|---:|---|---|---|---:|---:|---:|');
  for (const r of rows)
    console.log(`| ${r.size} B | ${r.durability} | ${r.backend} | ${r.api} | ${fmt(r.recPerSec)} | ${r.mbPerSec.toFixed(0)} | ${(r.mbPerSec / ceiling).toFixed(2)} |`);
}

function fmt(n: number): string {
  return n >= 1e6 ? `${(n / 1e6).toFixed(2)} M` : `${(n / 1e3).toFixed(0)} k`;
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
