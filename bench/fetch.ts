/**
 * Consume throughput through the native fetch plane, against gRPC Subscribe and
 * against the ceiling measured in the same run: a bare sendfile(2) loop from the same
 * segment file to a loopback TCP socket, drained by a native reader thread.
 *
 *   npm run bench:fetch [-- --seconds 3 --mb 200]
 *
 * The broker (gRPC server + fetch plane) runs in a child process; this process
 * writes a backlog of 100-byte records into one segment, warms the page cache with
 * it (every path then reads from memory, as a consumer of recent data mostly does),
 * and reads it back every way. Native readers count bytes; the JavaScript consumers
 * decode every record with the shared codec and ack it.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { connect, FetchConnection, type Client } from '../src/client';
import { benchFetchDrain, benchSendfile } from '../src/native';
import { nodeScriptArgs } from '../src/bench/node_script';
import { arg } from './args';

const SECONDS = Number(arg('seconds', '3'));
const BACKLOG_MB = Number(arg('mb', '200'));
const RECORD = 100;
const BATCH = 1000;

interface ChildInfo {
  broker: number;
  fetch: number;
  ioBackend: string;
  fetchBackend: string;
}

interface Row {
  path: string;
  reader: string;
  mbps: number;
  recPerSec?: number;
}

async function main(): Promise<void> {
  const base = path.join(process.cwd(), '.bench-data');
  fs.mkdirSync(base, { recursive: true });
  const dir = fs.mkdtempSync(path.join(base, 'fetch-'));
  const child = spawn(process.execPath, [...nodeScriptArgs(path.join(__dirname, 'fetch_server')), dir, 'none'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = readline.createInterface({ input: child.stdout! });
  const infos: ChildInfo[] = [];
  let waiter: (() => void) | null = null;
  lines.on('line', (l) => {
    if (!l.startsWith('{"broker"')) return;
    infos.push(JSON.parse(l) as ChildInfo);
    waiter?.();
  });
  const nextInfo = async (): Promise<ChildInfo> => {
    const n = infos.length;
    while (infos.length === n) await new Promise<void>((r) => (waiter = r));
    return infos[infos.length - 1]!;
  };
  let info = await nextInfo();
  const switchFetch = async (backend: string): Promise<ChildInfo> => {
    const p = nextInfo();
    child.stdin!.write(`fetch ${backend}\n`);
    return p;
  };

  const client: Client = await connect(`127.0.0.1:${info.broker}`, { maxMessageBytes: 64 << 20 });
  const rows: Row[] = [];
  try {
    console.log(`uringmq bench:fetch — ${new Date().toISOString()}`);
    console.log(`kernel ${os.release()}, ${os.cpus().length}× ${os.cpus()[0]?.model}, node ${process.version}; broker in a separate process (log backend ${info.ioBackend})`);

    // The backlog: one partition, one segment file.
    await client.createTopic('bench', { partitions: 1, segmentBytes: 1 << 30 });
    const value = Buffer.alloc(RECORD, 0x62);
    const batch = Array.from({ length: BATCH }, () => ({ value }));
    const p = client.producer({ maxInFlight: 64 });
    const target = BACKLOG_MB * 1e6;
    let written = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (written < target) {
          written += BATCH * (RECORD + 6);
          await p.sendBatch('bench', batch, { partition: 0 });
        }
      }),
    );
    const d = (await client.describeTopic('bench')).partitions[0]!;
    const records = d.endOffset;
    const dataBytes = d.bytes;
    const segment = path.join(dir, 'topics', 'bench', '0', '00000000000000000000.log');
    if (d.segments !== 1) throw new Error(`expected one segment, got ${d.segments}`);
    const bytesPerRecord = dataBytes / records;
    warm(segment, dataBytes);
    console.log(
      `backlog: ${records} records of ${RECORD} B in batches of ${BATCH} (${(dataBytes / 1e6).toFixed(0)} MB, one segment file, page cache warm); ${SECONDS} s per case\n`,
    );

    const ceilings: number[] = [];
    const ceiling = async () => {
      const r = await benchSendfile(segment, dataBytes, SECONDS);
      ceilings.push(r.bytes / r.seconds / 1e6);
    };
    await ceiling();

    const native = async (backend: string, maxBytes: number) => {
      const r = await benchFetchDrain({ port: info.fetch, topic: 'bench', partition: 0, fromOffset: 0, maxBytes, seconds: SECONDS });
      rows.push({ path: `fetch plane, ${backend === 'io_uring' ? 'io_uring (linked splice file → pipe → socket)' : 'thread (epoll + sendfile)'}, maxBytes ${maxBytes >> 20} MiB`, reader: 'native', mbps: r.bytes / r.seconds / 1e6, recPerSec: r.records / r.seconds });
    };
    for (const backend of ['io_uring', 'thread']) {
      if (info.fetchBackend !== backend) info = await switchFetch(backend);
      if (info.fetchBackend !== backend) {
        console.log(`(fetch backend ${backend} unavailable here: got ${info.fetchBackend})`);
        continue;
      }
      await native(backend, 1 << 20);
      await native(backend, 8 << 20);
    }
    if (info.fetchBackend !== 'io_uring') info = await switchFetch('io_uring');

    // The same protocol from JavaScript (a net.Socket), bytes only: what Node's socket
    // reads cost before any decoding.
    {
      const conn = await FetchConnection.open('127.0.0.1', info.fetch);
      const t0 = performance.now();
      let bytes = 0;
      let n = 0;
      let off = 0;
      while (performance.now() - t0 < SECONDS * 1000) {
        const { data } = await conn.fetch('bench', 0, off, 1 << 20, 0);
        bytes += data.length;
        if (data.length === 0) {
          off = 0;
          continue;
        }
        let pos = 0;
        while (pos < data.length) {
          const len = data.readUInt32LE(pos + 4);
          const next = Number(data.readBigInt64LE(pos + 8)) + data.readUInt32LE(pos + 24);
          n += next - Math.max(off, next - data.readUInt32LE(pos + 24));
          off = next;
          pos += len;
        }
      }
      const s = (performance.now() - t0) / 1000;
      conn.close();
      rows.push({ path: 'fetch plane, io_uring, FetchConnection (no decoding), maxBytes 1 MiB', reader: 'JavaScript net.Socket', mbps: bytes / s / 1e6, recPerSec: n / s });
    }

    // JavaScript consumers: decode every record, ack it. One pass over the backlog at most.
    const js = async (name: string, make: (group: string) => AsyncIterable<Array<{ ack(): void }>> & { close(): Promise<void> }) => {
      const c = make(`bench-${name.replace(/\W+/g, '-')}-${Date.now()}`);
      const t0 = performance.now();
      let n = 0;
      outer: for await (const b of c) {
        for (const m of b) {
          m.ack();
          if (++n >= records) break outer;
        }
        if (performance.now() - t0 > SECONDS * 1000) break;
      }
      const s = (performance.now() - t0) / 1000;
      await c.close();
      rows.push({ path: name, reader: 'JavaScript client, decode + ack each', mbps: (n * bytesPerRecord) / s / 1e6, recPerSec: n / s });
    };
    const batches = <T extends { batches(): AsyncIterable<Array<{ ack(): void }>>; close(): Promise<void> }>(c: T) =>
      Object.assign(c.batches(), { close: () => c.close() });
    await js('fetch plane, io_uring, FetchConsumer batches()', (group) =>
      batches(client.consumer({ topic: 'bench', group, from: 'earliest', transport: 'fetch', fetchAddress: `127.0.0.1:${info.fetch}`, maxBytes: 1 << 20 })),
    );
    await js('gRPC Subscribe, group consumer batches()', (group) => batches(client.consumer({ topic: 'bench', group, from: 'earliest', maxUnacked: 50_000 })));

    await ceiling();
    const best = Math.max(...ceilings);
    console.log(`Ceiling (sendfile loop, same file → loopback socket → native reader): ${ceilings.map((c) => c.toFixed(0)).join(' MB/s at the start, ')} MB/s at the end; ratios use the faster.\n`);
    console.log('| path | reader | MB/s | records/s | × ceiling |');
    console.log('|---|---|---:|---:|---:|');
    console.log(`| sendfile(2) loop, segment file → loopback socket (ceiling) | native | ${best.toFixed(0)} | — | 1.00 |`);
    for (const r of rows)
      console.log(`| ${r.path} | ${r.reader} | ${r.mbps.toFixed(0)} | ${r.recPerSec ? fmt(r.recPerSec) : '—'} | ${(r.mbps / best).toFixed(2)} |`);
    const stats = await (async () => {
      const s = nextInfo();
      child.stdin!.write('stats\n');
      return (await s) as ChildInfo & { stats: { bytesSpliced: number; bytesCopied: number } };
    })();
    console.log(`\n(last fetch server: ${(stats.stats.bytesSpliced / 1e6).toFixed(0)} MB spliced, ${(stats.stats.bytesCopied / 1e6).toFixed(1)} MB from memory)`);
  } finally {
    await client.close();
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Reads the file once so every path below reads it from the page cache. */
function warm(file: string, bytes: number): void {
  const fd = fs.openSync(file, 'r');
  const buf = Buffer.allocUnsafe(4 << 20);
  for (let pos = 0; pos < bytes; ) {
    const n = fs.readSync(fd, buf, 0, Math.min(buf.length, bytes - pos), pos);
    if (n <= 0) break;
    pos += n;
  }
  fs.closeSync(fd);
}

function fmt(n: number): string {
  return n >= 1e6 ? `${(n / 1e6).toFixed(2)} M` : `${(n / 1e3).toFixed(1)} k`;
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
