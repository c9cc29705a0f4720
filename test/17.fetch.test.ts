/**
 * The native fetch plane (docs/FETCH-PROTOCOL.md): whole batches from the file and
 * from memory, long-poll, the FetchConsumer with committed offsets, the auth token,
 * and bad input — garbage, oversize and negative requests, unknown topics, silent
 * clients, clients that vanish mid-reply or stop reading, thousands of connections —
 * answered with an error code or a closed connection, never a crash or an fd leak.
 * Both backends: io_uring (splice) and thread (epoll + sendfile).
 */
import * as assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { spawn } from './fixtures/children';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { Broker, UringmqError, encodeBatch, sealBatch } from '../src';
import { connect } from '../src/client';
import { FetchConnection, FetchConsumer } from '../src/client/fetch_consumer';
import { crc32c } from '../src/native';
import { decodeBatches, readBatchMeta } from '../src/codec/record_batch';
import type { FetchServer, FetchServerOptions } from '../src/fetch/server';
import {
  DEFAULT_FETCH_PORT,
  FETCH_MAGIC,
  RESPONSE_HEADER_SIZE,
  SERVER_HELLO_SIZE,
  decodeResponseHeader,
  decodeServerHello,
  encodeFetch,
  encodeHello,
  fetchError,
  fetchErrorName,
} from '../src/fetch/protocol';
import { BrokerServer } from '../src/grpc/server';
import { metricsRegistry } from '../src/metrics';
import { expectCode, freePort, hasStrace, injectIntoThread, openBroker, overwriteAt, partitionDir, powerCut, publishOld, segmentFiles, sleep, take, tcpProxy, threadNamed, tmpDir, waitFor, within } from './helpers';
import { spawnServer } from './fixtures/server_process';

/** A socket with exact-length reads, for speaking (and mangling) the protocol by hand. */
class Raw {
  private buf = Buffer.alloc(0);
  private waiters: Array<() => void> = [];
  ended = false;
  readonly done: Promise<void>;
  constructor(readonly sock: net.Socket) {
    sock.on('data', (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.wakeAll();
    });
    sock.on('error', () => undefined);
    this.done = new Promise((resolve) =>
      sock.once('close', () => {
        this.ended = true;
        this.wakeAll();
        resolve();
      }),
    );
  }
  static async open(port: number): Promise<Raw> {
    const sock = net.connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => {
      sock.once('connect', resolve);
      sock.once('error', reject);
    });
    return new Raw(sock);
  }
  private wakeAll(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }
  /** Exactly n bytes, or null if the connection ends first. */
  async read(n: number, timeoutMs = 10_000): Promise<Buffer | null> {
    const deadline = Date.now() + timeoutMs;
    while (this.buf.length < n) {
      if (this.ended) return null;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${n} bytes (have ${this.buf.length})`);
      await Promise.race([new Promise<void>((r) => this.waiters.push(r)), sleep(50)]);
    }
    const out = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(n);
    return out;
  }
  async hello(token = '', version?: number): Promise<number> {
    return (await this.helloAs(token, version)).error;
  }
  async helloAs(token = '', version?: number) {
    this.sock.write(encodeHello(token, version));
    const h = await this.read(SERVER_HELLO_SIZE);
    assert.ok(h, 'server hello');
    return decodeServerHello(h);
  }
  async fetch(topic: string, partition: number, offset: number, maxBytes = 1 << 20, maxWaitMs = 0, incarnation = 0) {
    this.sock.write(encodeFetch({ correlationId: 7, topic, partition, offset, maxBytes, maxWaitMs, incarnation }));
    const h = await this.read(RESPONSE_HEADER_SIZE, maxWaitMs + 10_000);
    assert.ok(h, 'reply header');
    const header = decodeResponseHeader(h);
    const data = (await this.read(header.length))!;
    return { header, error: fetchErrorName(header.error), data };
  }
  close(): void {
    this.sock.destroy();
  }
}

/**
 * Open fds of this process, by the kind a fetch connection or server could leak:
 * sockets and pipes (connections, listeners, splice pipes), and for the server's
 * own eventfd/epoll/io_uring, anon inodes. Regular files are left out: closed
 * brokers of earlier tests keep their segment files (and their log engine's anon
 * inodes) until the garbage collector finalizes them, at a time of its choosing.
 */
function fdKinds(): Record<string, number> {
  const m: Record<string, number> = {};
  for (const f of fs.readdirSync('/proc/self/fd')) {
    let k = '?';
    try {
      k = fs.readlinkSync(`/proc/self/fd/${f}`).replace(/\d+/g, 'N');
    } catch {
      // closed while listing
    }
    m[k] = (m[k] ?? 0) + 1;
  }
  return m;
}
const fdCount = (): number => {
  const k = fdKinds();
  return (k['socket:[N]'] ?? 0) + (k['pipe:[N]'] ?? 0);
};
const anonFdCount = (): number => Object.entries(fdKinds()).reduce((n, [k, v]) => n + (k.startsWith('anon_inode:') ? v : 0), 0);
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
/** The count once the garbage collector has nothing more to finalize that changes it. */
async function settledFdCount(): Promise<number> {
  let last = -1;
  let same = 0;
  for (let i = 0; i < 100 && same < 3; i++) {
    gc();
    await sleep(20);
    const n = fdCount();
    same = n === last ? same + 1 : 0;
    last = n;
  }
  return last;
}

/** Every batch whole and CRC-correct; returns the decoded records. */
function checkWhole(data: Buffer, from: number) {
  let pos = 0;
  while (pos < data.length) {
    const m = readBatchMeta(data, pos);
    assert.ok(pos + m.length <= data.length, 'a batch cut off at the end of a reply');
    assert.equal(crc32c(data.subarray(pos + 20, pos + m.length)), data.readUInt32LE(pos + 16), `CRC of the batch at offset ${m.baseOffset}`);
    pos += m.length;
  }
  return decodeBatches(data, from);
}

async function fill(b: Broker, topic: string, n: number, valueOf: (i: number) => string, batch = 50): Promise<void> {
  const p = b.producer();
  for (let i = 0; i < n; i += batch) {
    const recs = [];
    for (let j = i; j < Math.min(n, i + batch); j++) recs.push({ value: valueOf(j) });
    await p.sendBatch(topic, recs, { partition: 0 });
  }
}

/** A gRPC server and a fetch listener (`fetchOpts`) on `broker`, and a client of both; close() stops all four. */
async function fetchStack(broker: Broker, fetchOpts: Omit<FetchServerOptions, 'port'> = {}) {
  const server = await BrokerServer.start({ broker, host: '127.0.0.1', port: 0 });
  const fsrv = await broker.startFetchServer({ port: 0, ...fetchOpts });
  const client = await connect(`127.0.0.1:${server.port}`, { fetchAddress: `127.0.0.1:${fsrv.port}` });
  const close = async () => {
    await client.close();
    fsrv.close();
    await server.stop(2000);
    await broker.close();
  };
  return { server, fsrv, client, close };
}

/**
 * A raw client of a listener that refuses it: sends its hello at once (and a few bytes
 * more), reads until the listener ends the connection. `halfOpen`: never closes its own
 * side, and resolves at the listener's FIN (else it closes on it, as Node does, and
 * resolves once closed). `onData`: called as bytes come.
 */
function refusedClient(port: number, halfOpen = false, onData?: () => void): Promise<{ data: Buffer; ended: boolean; error: NodeJS.ErrnoException | null; sock: net.Socket }> {
  return new Promise((resolve) => {
    const sock = net.connect({ port, host: '127.0.0.1', allowHalfOpen: halfOpen });
    const chunks: Buffer[] = [];
    let ended = false;
    let error: NodeJS.ErrnoException | null = null;
    const done = () => resolve({ data: Buffer.concat(chunks), ended, error, sock });
    sock.on('connect', () => sock.write(Buffer.concat([encodeHello(), Buffer.from('and more')])));
    sock.on('data', (d: Buffer) => {
      chunks.push(d);
      onData?.();
    });
    sock.on('error', (e) => (error = e));
    sock.on('end', () => {
      ended = true;
      if (halfOpen) done();
    });
    sock.on('close', done);
  });
}

/**
 * python3 -c this PORT N: N refused clients whose handshake ACK waits for their first
 * data (TCP_DEFER_ACCEPT on a client socket), so the listener accepts each with its
 * hello already unread; prints [{data: hex of what came, err: errno name or null}].
 */
const DEFERRED_HELLO_CLIENT = `
import errno, json, socket, struct, sys
port, n = int(sys.argv[1]), int(sys.argv[2])
hello = struct.pack('<IHH', 0x${FETCH_MAGIC.toString(16)}, 2, 0) + b'and more'
out = []
for _ in range(n):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_DEFER_ACCEPT, 1)
    s.settimeout(10)
    s.connect(('127.0.0.1', port))
    s.sendall(hello)
    data, err = b'', None
    try:
        while True:
            d = s.recv(4096)
            if not d:
                break
            data += d
    except OSError as e:
        err = errno.errorcode.get(e.errno, str(e))
    s.close()
    out.append({'data': data.hex(), 'err': err})
print(json.dumps(out))
`;

const BACKENDS = ['io_uring', 'thread'] as const;

for (const backend of BACKENDS) {
  describe(`fetch plane (${backend})`, () => {
    let broker: Broker;
    let fsrv: FetchServer;
    afterEach(async () => {
      await broker?.close();
    });

    it('serves whole batches from the files (zero-copy) and from the tail cache, across segments', async () => {
      for (const tailCacheBytes of [0, 1 << 20]) {
        broker = await openBroker({ tailCacheBytes });
        // 8 KiB segments: more than the 32 sealed ones a partition keeps open, so file
        // pieces also come from segments reopened for the read.
        await broker.createTopic('t', { segmentBytes: 8 * 1024 });
        const value = (i: number) => `v${i}-`.padEnd(20 + (i % 300), 'x');
        await fill(broker, 't', 3000, value, 37);
        const d = await broker.describeTopic('t');
        assert.ok(d.partitions[0]!.segments > 40, `${d.partitions[0]!.segments} segments`);
        fsrv = await broker.startFetchServer({ port: 0, ioBackend: backend });
        assert.equal(fsrv.ioBackend, backend);
        for (const maxBytes of [1, 5000, 100_000, 8 << 20]) {
          const c = await Raw.open(fsrv.port);
          assert.equal(await c.hello(), 0);
          let off = 0;
          for (;;) {
            const r = await c.fetch('t', 0, off, maxBytes);
            assert.equal(r.error, 'OK');
            assert.equal(r.header.highWatermark, 3000);
            if (r.header.length === 0) break;
            const recs = checkWhole(r.data, off);
            assert.ok(recs.length > 0);
            // Within maxBytes, unless one batch alone is bigger (then exactly one).
            if (r.data.length > maxBytes) assert.equal(readBatchMeta(r.data).length, r.data.length);
            for (const m of recs) assert.equal(m.value.toString(), value(m.offset));
            assert.equal(recs[0]!.offset, off);
            off = recs[recs.length - 1]!.offset + 1;
          }
          assert.equal(off, 3000);
          c.close();
        }
        const st = fsrv.stats();
        if (tailCacheBytes === 0) assert.ok(st.bytesSpliced > 0, 'bytes went file → socket');
        assert.ok(st.bytesCopied > 0, 'bytes went from memory');
        await broker.close();
      }
    });

    const value = (i: number) => `v${i}-`.padEnd(250, 'x');
    /** A closed broker's directory whose topic t holds 200 records (`value`) in batches of 5 and 8 KiB segments, and its second (sealed) segment's file. */
    async function sealedSegment(): Promise<{ dir: string; seg: string }> {
      const dir = tmpDir();
      broker = await openBroker({ dir, tailCacheBytes: 0 });
      await broker.createTopic('t', { segmentBytes: 8 * 1024 });
      await fill(broker, 't', 200, value, 5);
      await broker.close();
      return { dir, seg: segmentFiles(dir, 't', 0)[1]! };
    }
    /** Opens `dir` again with a fetch listener on this backend, and a connection to it that said hello. */
    async function fetchFrom(dir: string): Promise<Raw> {
      broker = await Broker.open({ dir, tailCacheBytes: 0 });
      fsrv = await broker.startFetchServer({ port: 0, ioBackend: backend });
      const c = await Raw.open(fsrv.port);
      assert.equal(await c.hello(), 0);
      return c;
    }

    it('a wrong sparse-index entry is rebuilt from the batches: the fetch is answered from the right batch', async () => {
      const { dir, seg } = await sealedSegment();
      const index = seg.replace(/\.log$/, '.index');
      const rel = fs.readFileSync(index).readUInt32LE(0);
      const wrong = Buffer.alloc(4);
      wrong.writeUInt32LE(rel - 1); // the entry names the batch before the one it points at
      overwriteAt(index, 0, wrong);
      const c = await fetchFrom(dir);
      const at = Number(path.basename(seg, '.log')) + rel;
      const r = await c.fetch('t', 0, at, 1);
      assert.equal(r.error, 'OK');
      assert.deepEqual(checkWhole(r.data, at).map((m) => m.value.toString()), [0, 1, 2, 3, 4].map((i) => value(at + i)));
      c.close();
    });

    it('fetches past a batch whose header is damaged are answered from the next readable batch; the damaged one is CORRUPT_BATCH', async () => {
      const { dir, seg } = await sealedSegment();
      const data = fs.readFileSync(seg);
      const second = data.readUInt32LE(4);
      const third = second + data.readUInt32LE(second + 4);
      overwriteAt(seg, second + 4, Buffer.from([0xff, 0xff, 0xff, 0x7f])); // its length
      const [secondBase, thirdBase] = [Number(data.readBigInt64LE(second + 8)), Number(data.readBigInt64LE(third + 8))];
      const c = await fetchFrom(dir);
      for (const at of [thirdBase, thirdBase + 2]) {
        const r = await c.fetch('t', 0, at, 1);
        assert.equal(r.error, 'OK');
        assert.equal(readBatchMeta(r.data).baseOffset, thirdBase, 'the whole batch holding it');
        assert.deepEqual(checkWhole(r.data, at).map((m) => m.value.toString()), [0, 1, 2, 3, 4].map((i) => value(thirdBase + i)).slice(at - thirdBase));
      }
      assert.notEqual((await c.fetch('t', 0, secondBase, 1)).error, 'OK');
      c.close();
    });

    /**
     * A broker (no tail cache) whose partition t/0's first segment, of 256 KiB, is cut to
     * `kept` bytes; `bad`: the first record whose batch the cut file no longer holds whole.
     */
    async function truncatedFirstSegment(kept: number): Promise<{ dir: string; seg: string; bad: number }> {
      const dir = tmpDir();
      broker = await openBroker({ dir, tailCacheBytes: 0 });
      await broker.createTopic('t', { segmentBytes: 256 * 1024 });
      await fill(broker, 't', 2000, value, 50);
      const seg = segmentFiles(dir, 't', 0)[0]!;
      const file = fs.readFileSync(seg);
      fs.truncateSync(seg, kept);
      let bad = 0;
      for (let pos = 0; ; ) {
        const m = readBatchMeta(file, pos);
        if (pos + m.length > kept) break;
        pos += m.length;
        bad = m.baseOffset + m.recordCount;
      }
      return { dir, seg, bad };
    }

    it('a reply cut off by a failed read of its segment file (a file shorter than the log says) is counted (readErrors, uringmq_fetch_read_errors_total) and named in a warning, at most every 10 s: not only a closed connection', async function () {
      this.timeout(60_000);
      // The log still says the segment is whole: its reply's header announces all of it,
      // the first 16 KiB go out (the plan reads the first batch's header there), then the file ends.
      const { seg } = await truncatedFirstSegment(16 * 1024);
      fsrv = await broker.startFetchServer({ port: 0, ioBackend: backend });
      const registry = metricsRegistry(broker, { processMetrics: false });
      const warnings: string[] = [];
      const onWarning = (w: Error) => {
        if (w.name === 'UringmqWarning' && w.message.startsWith('fetch plane')) warnings.push(w.message);
      };
      process.on('warning', onWarning);
      try {
        const cutOff = async () => {
          const c = await Raw.open(fsrv.port);
          assert.equal(await c.hello(), 0);
          c.sock.write(encodeFetch({ correlationId: 1, topic: 't', partition: 0, offset: 0, maxBytes: 8 << 20, maxWaitMs: 0 }));
          const h = decodeResponseHeader((await c.read(RESPONSE_HEADER_SIZE))!);
          assert.equal(fetchErrorName(h.error), 'OK');
          assert.ok(h.length > 64 * 1024, `a reply of ${h.length} bytes`);
          assert.equal(await c.read(h.length), null, 'the connection closed before the whole reply');
        };
        await cutOff();
        assert.equal(fsrv.stats().readErrors, 1);
        await waitFor(() => warnings.length > 0, 10_000, 'a warning');
        const t0 = performance.now();
        assert.match(warnings[0]!, /: 1 fetch failed reading a segment file/);
        assert.ok(warnings[0]!.includes(`(the last: t/0, a fetch from offset 0: read ${seg} at byte 16384: the file ends there`), warnings[0]);
        assert.equal(/^uringmq_fetch_read_errors_total (\d+)$/m.exec(await registry.metrics())?.[1], '1');
        // A second one soon after is counted, and held for the next warning (the one at close here).
        await cutOff();
        assert.equal(fsrv.stats().readErrors, 2);
        await sleep(1500);
        if (performance.now() - t0 < 9000) assert.equal(warnings.length, 1, warnings.join('\n'));
        fsrv.close();
        assert.equal(broker.fetchReadErrors, 2, 'the count outlives the server');
        assert.equal(/^uringmq_fetch_read_errors_total (\d+)$/m.exec(await registry.metrics())?.[1], '2');
        await sleep(10); // process.emitWarning delivers on a later tick
        assert.equal(warnings.length, 2, warnings.join('\n'));
        assert.match(warnings[1]!, /: 1 fetch failed reading a segment file .*, the reply cut off and its connection closed\)/);
      } finally {
        process.off('warning', onWarning);
      }
    });

    /**
     * Real read errors on the fetch thread: strace attached to it (only it) fails its
     * calls on one segment file. Partition 0 of 't' is the one faulted, partition 1 the
     * bystander; `segmentBytes` small makes many sealed segments, the oldest of which
     * the log keeps closed (kMaxOpenSealedSegments), so a fetch there opens its file.
     */
    async function faultable(segmentBytes: number) {
      const dir = tmpDir();
      broker = await openBroker({ dir, tailCacheBytes: 0 });
      await broker.createTopic('t', { partitions: 2, segmentBytes });
      const prod = broker.producer();
      for (let i = 0; i < 2000; i += 20)
        for (const partition of [0, 1]) await prod.sendBatch('t', Array.from({ length: 20 }, (_, j) => ({ value: value(i + j) })), { partition });
      const before = fs.readdirSync('/proc/self/task').map(Number);
      fsrv = await broker.startFetchServer({ port: 0, ioBackend: backend });
      const tid = await threadNamed('uringmq-fetch', before);
      // Let Node open whatever it opens lazily, and (io_uring) the server pool a splice pipe.
      const warm = await Raw.open(fsrv.port);
      assert.equal(await warm.hello(), 0);
      assert.equal((await warm.fetch('t', 1, 0)).error, 'OK');
      warm.close();
      await waitFor(() => fsrv.stats().connections === 0);
      const fds = await settledFdCount();
      const files = () => Object.fromEntries(fs.readdirSync(partitionDir(dir, 't', 0)).map((f) => [f, crc32c(fs.readFileSync(path.join(partitionDir(dir, 't', 0), f)))]));
      const warnings: string[] = [];
      const onWarning = (w: Error) => {
        if (w.name === 'UringmqWarning' && w.message.startsWith('fetch plane')) warnings.push(w.message);
      };
      process.on('warning', onWarning);
      return { dir, tid, fds, files, warnings, done: () => process.off('warning', onWarning) };
    }

    /** The fault gone: partition 0 still takes appends (not fenced); closing `conns` leaks no fd. */
    async function endsUnharmed(t: { fds: number }, conns: ReadonlyArray<{ close(): void }>) {
      assert.equal((await broker.producer().send('t', { value: 'after', partition: 0 })).offset, 2000);
      for (const c of conns) c.close();
      await waitFor(() => fsrv.stats().connections === 0);
      assert.equal(await settledFdCount(), t.fds, JSON.stringify(fdKinds()));
    }

    /** A fetch of all of partition 1 from `c`, each record checked. */
    async function servesBystander(c: Raw, what: string, from = 0) {
      let off = from;
      while (off < 2000) {
        const r = await c.fetch('t', 1, off, 1 << 20);
        assert.equal(r.error, 'OK', what);
        const recs = checkWhole(r.data, off);
        for (const m of recs) assert.equal(m.value.toString(), value(m.offset), what);
        off = recs[recs.length - 1]!.offset + 1;
      }
    }

    // strace's path filter (-P) does not match an openat relative to a directory's fd,
    // which is how the log opens its files: every open of the fetch thread fails there,
    // and the bystander reads partition 1 from its newest segments, which stay open.
    for (const [call, inject, segmentBytes, filtered] of [
      ['pread', 'pread64:error=EIO', 256 * 1024, true],
      ['open', 'openat:error=EIO', 8192, false],
    ] as const) {
      it(`a segment file whose ${call} fails (EIO) while a fetch is planned: the fetch is answered IO_ERROR, counted and named in a warning; its connection stays, other partitions and connections are served, nothing is fenced or changed, no fd leaks`, async function () {
        if (!hasStrace()) return this.skip();
        this.timeout(30_000);
        const t = await faultable(segmentBytes);
        try {
          const seg = segmentFiles(t.dir, 't', 0)[1]!; // the second segment: sealed, and (8 KiB segments) closed
          const segs1 = segmentFiles(t.dir, 't', 1);
          const from1 = filtered ? 0 : Number(path.basename(segs1[segs1.length - 8]!, '.log'));
          const at = Number(path.basename(seg, '.log')) + 3; // inside the segment's first batch
          const files = t.files();
          const c = await Raw.open(fsrv.port);
          const other = await Raw.open(fsrv.port);
          assert.equal(await c.hello(), 0);
          assert.equal(await other.hello(), 0);
          const fault = await injectIntoThread(t.tid, filtered ? [seg] : [], inject);
          let trace: string;
          try {
            const r = await c.fetch('t', 0, at);
            assert.equal(r.error, 'IO_ERROR');
            assert.equal(r.header.length, 0);
            assert.equal(r.header.highWatermark, 2000, 'the partition was found: its high watermark is known');
            // The same connection, and another, go on: partition 1 is read whole.
            await servesBystander(c, 'the connection that got IO_ERROR', from1);
            await servesBystander(other, 'another connection', from1);
            // A client library's view of the reply: a typed error naming what it fetched.
            const e = fetchError(r.header.error, `fetching t/0 at offset ${at}`);
            assert.equal(e.code, 'IO_ERROR');
            assert.equal((await c.fetch('t', 0, at)).error, 'IO_ERROR', 'while the file fails, so does every fetch of it');
          } finally {
            trace = await fault.stop();
          }
          assert.match(trace, new RegExp(`^${call}.*${path.basename(seg)}.*= -1 EIO .*\\(INJECTED\\)`, 'm'), `the fault met the fetch thread's ${call}: ${trace}`);
          // Counted and named for the operator: the client's reply carries no more than a code.
          assert.equal(fsrv.stats().readErrors, 2);
          await waitFor(() => t.warnings.length > 0, 10_000, 'a warning');
          // The broker's once-a-second sweep may have warned between the two failed fetches
          // (a slow build: ASan): then the second is in the next warning, which a close
          // (or 10 s) brings; between them they count both, once.
          fsrv.warnReadErrors(true);
          const counted = () => t.warnings.map((w) => Number(/: (\d+) fetch(?:es)? failed reading a segment file \(the last: /.exec(w)?.[1]));
          await waitFor(() => counted().reduce((a, b) => a + b, 0) >= 2, 5_000, 'both failed fetches warned of');
          assert.ok(counted().length <= 2 && counted().reduce((a, b) => a + b, 0) === 2, JSON.stringify(t.warnings));
          assert.ok(t.warnings[0]!.includes(`(the last: t/0, a fetch from offset ${at}: `) && t.warnings[0]!.includes(seg), t.warnings[0]);
          assert.match(t.warnings[0]!, /Input\/output error \(errno 5\), answered IO_ERROR\)/);
          // Once the file reads again, so does the fetch, on the same connection; the
          // log was not fenced, nor its files changed (no index "repaired" from a failed read).
          const r = await c.fetch('t', 0, at);
          assert.equal(r.error, 'OK');
          assert.deepEqual(checkWhole(r.data, at).slice(0, 3).map((m) => m.value.toString()), [at, at + 1, at + 2].map(value));
          assert.deepEqual(t.files(), files);
          await endsUnharmed(t, [c, other]);
        } finally {
          t.done();
        }
      });
    }

    it('a segment file whose sendfile fails (EIO) after the reply header went out: the connection is closed (the header promised bytes that cannot come), counted and named in a warning; others are served, nothing is fenced, no fd leaks, and a FetchConnection sees UNAVAILABLE (on which the FetchConsumer reconnects and fetches again)', async function () {
      if (!hasStrace()) return this.skip();
      // io_uring's file → pipe splice runs in a kernel worker: no syscall strace could fail.
      if (backend !== 'thread') return this.skip();
      this.timeout(30_000);
      const t = await faultable(256 * 1024);
      try {
        const seg = segmentFiles(t.dir, 't', 0)[0]!;
        const other = await Raw.open(fsrv.port);
        assert.equal(await other.hello(), 0);
        const conn = await FetchConnection.open('127.0.0.1', fsrv.port);
        const fault = await injectIntoThread(t.tid, [seg], 'sendfile:error=EIO');
        let trace: string;
        try {
          const e = await conn.fetch('t', 0, 100, 1 << 20, 0).then(
            () => assert.fail('a reply cut off by its file arrived whole'),
            (err: UringmqError) => err,
          );
          assert.equal(e.code, 'UNAVAILABLE', e.message);
          assert.match(e.message, /closed by the server/);
          await servesBystander(other, 'another connection');
        } finally {
          trace = await fault.stop();
        }
        assert.match(trace, /^sendfile\(.*= -1 EIO .*\(INJECTED\)/m, trace);
        assert.equal(fsrv.stats().readErrors, 1);
        await waitFor(() => t.warnings.length > 0, 10_000, 'a warning');
        assert.ok(t.warnings[0]!.includes(`(the last: t/0, a fetch from offset 100: read ${seg} at byte `), t.warnings[0]);
        assert.match(t.warnings[0]!, /Input\/output error \(errno 5\), the reply cut off and its connection closed\)/);
        const again = await FetchConnection.open('127.0.0.1', fsrv.port);
        const r = await again.fetch('t', 0, 100, 1 << 20, 0);
        assert.equal(r.header.error, 0);
        assert.equal(checkWhole(r.data, 100)[0]!.value.toString(), value(100));
        await endsUnharmed(t, [again, other]);
      } finally {
        t.done();
      }
    });

    /** A FetchConsumer of `t`/0 through `fsrv` (from the start, application-assigned), with what it handed out, and a close of it and its client. */
    async function consumerOf(maxBytes?: number, fetchPort = fsrv.port) {
      const server = await BrokerServer.start({ broker, host: '127.0.0.1', port: 0 });
      const client = await connect(`127.0.0.1:${server.port}`, { fetchAddress: `127.0.0.1:${fetchPort}` });
      const c = client.consumer({ topic: 't', group: 'g', from: 'earliest', transport: 'fetch', partitions: [0], maxBytes });
      const seen: number[] = [];
      const read = (n: number) =>
        take(c, n, (m) => {
          seen.push(m.offset);
          assert.equal(m.value.toString(), value(m.offset));
          m.ack();
        }, 30_000);
      const close = async () => {
        await c.close();
        await client.close();
        await server.stop(2000);
      };
      return { consumer: c, read, seen, close };
    }

    it('a FetchConsumer whose fetch from one offset is cut off after its header again and again (a segment file shorter than the log says) hands out the records the file still holds, then fails with IO_ERROR naming the partition and the first offset past them after 5 in a row, instead of reconnecting and fetching it again for ever', async function () {
      this.timeout(60_000);
      // The log says the segment is whole: each reply's header announces all of it, then the file ends.
      const { bad } = await truncatedFirstSegment(16 * 1024);
      assert.ok(bad > 0 && bad < 2000, `${bad}`);
      fsrv = await broker.startFetchServer({ port: 0, ioBackend: backend });
      const c = await consumerOf();
      try {
        // Before: cut off, reconnected, fetched again from 0, for good; nothing ever came, nor an error.
        const e = await expectCode(c.read(2000), 'IO_ERROR');
        // The first reply (from 0) broke off inside the batch holding `bad`: the records
        // before it, which came whole, are handed out (before: none of them, and the
        // error named offset 0, which the file holds).
        assert.match(e.message, new RegExp(`^fetching t/0 at offset ${bad}: the fetch listener at 127\\.0\\.0\\.1:${fsrv.port} cut its reply off 5 times in a row`), e.message);
        assert.match(e.message, /closed by the server, \d+ of the reply's \d+ bytes received$/, e.message);
        assert.ok(fsrv.stats().readErrors >= 5, `${fsrv.stats().readErrors}: a reply cut off once (a broker restarting under it) is fetched again`);
        assert.deepEqual(c.seen, Array.from({ length: bad }, (_, i) => i));
      } finally {
        await c.close();
      }
    });

    it('a FetchConsumer whose fetches from a segment file whose sendfile fails (EIO) on every try hands out every record before it, then fails with IO_ERROR naming the first offset it could not read', async function () {
      if (!hasStrace()) return this.skip();
      if (backend !== 'thread') return this.skip(); // io_uring: no syscall strace could fail (see above)
      this.timeout(60_000);
      const t = await faultable(256 * 1024);
      const seg = segmentFiles(t.dir, 't', 0)[1]!;
      const bad = Number(path.basename(seg, '.log'));
      const c = await consumerOf();
      try {
        const fault = await injectIntoThread(t.tid, [seg], 'sendfile:error=EIO');
        let trace: string;
        try {
          const e = await expectCode(c.read(2000), 'IO_ERROR');
          assert.match(e.message, new RegExp(`^fetching t/0 at offset ${bad}: .* cut its reply off 5 times in a row`), e.message);
        } finally {
          trace = await fault.stop();
        }
        assert.equal((trace.match(/^sendfile\(.*= -1 EIO .*\(INJECTED\)/gm) ?? []).length, 5, trace);
        assert.equal(fsrv.stats().readErrors, 5);
        assert.deepEqual(c.seen, Array.from({ length: bad }, (_, i) => i));
      } finally {
        await c.close();
        t.done();
      }
    });

    it('a FetchConsumer whose replies at one offset are cut off 6 times by a broker that crashed under them, once down (refusing connections) between two of them, waits it out and reads the partition whole, instead of failing with IO_ERROR at the fifth', async function () {
      this.timeout(60_000);
      broker = await openBroker({ tailCacheBytes: 0 });
      await broker.createTopic('t', { segmentBytes: 256 * 1024 });
      await fill(broker, 't', 2000, value, 50);
      fsrv = await broker.startFetchServer({ port: 0, ioBackend: backend });
      // Between the consumer and the listener: each of the first 6 connections passes the
      // hello's answer, a reply's header and 100 bytes of its first batch, then ends (the
      // broker dies under it); the connection after the fourth is refused (it is down
      // then: a restart takes longer than the first reconnect's 100 ms), and the next is
      // let through (it is back). Then connections pass whole. (Not down after every cut:
      // each failure in a row doubles the consumer's reconnect delay.)
      const CUTS = 6;
      let cuts = 0;
      let down = false;
      const socks = new Set<net.Socket>();
      const px = net.createServer((c) => {
        socks.add(c);
        c.on('error', () => undefined).on('close', () => socks.delete(c));
        if (down) {
          down = false;
          return void c.destroy();
        }
        const u = net.connect(fsrv.port, '127.0.0.1');
        socks.add(u);
        u.on('error', () => undefined).on('close', () => (socks.delete(u), c.destroy()));
        c.on('close', () => u.destroy());
        c.pipe(u);
        if (cuts >= CUTS) return void u.pipe(c);
        let passed = 0;
        const allow = SERVER_HELLO_SIZE + RESPONSE_HEADER_SIZE + 100;
        u.on('data', (d: Buffer) => {
          const n = Math.min(d.length, allow - passed);
          if (n > 0) c.write(d.subarray(0, n));
          passed += n;
          if (passed === allow && !c.destroyed) {
            down = ++cuts === 4;
            c.end(() => c.destroy());
            u.destroy();
          }
        });
      });
      await new Promise<void>((resolve) => px.listen(0, '127.0.0.1', resolve));
      const c = await consumerOf(undefined, (px.address() as net.AddressInfo).port);
      try {
        // Before: IO_ERROR "cut its reply off 5 times in a row" at offset 0.
        await c.read(2000);
        assert.equal(cuts, CUTS);
        assert.deepEqual(c.seen, Array.from({ length: 2000 }, (_, i) => i));
      } finally {
        await c.close();
        for (const x of socks) x.destroy();
        await new Promise<void>((resolve) => px.close(() => resolve()));
      }
    });

    it('a FetchConsumer whose fetches from a segment file shorter than the log says are cut off, with a connection refused TOO_MANY_CONNECTIONS by the listener between two of them, still fails with IO_ERROR after 5 in a row: a listener that is up and full is no broker restarting', async function () {
      this.timeout(60_000);
      const { bad } = await truncatedFirstSegment(16 * 1024);
      fsrv = await broker.startFetchServer({ port: 0, ioBackend: backend, maxConnections: 1 });
      // Between the consumer and the listener, passing everything both ways. Before the
      // consumer's fourth connection (its first checks the listener at the start, then two
      // replies were cut off) reaches the listener, the proxy takes the listener's one
      // connection itself: the listener answers that
      // connection TOO_MANY_CONNECTIONS (the consumer's hello held back: unread, it could
      // turn the listener's close into a reset that loses the answer). Then it lets the
      // slot go, and the connections after it wait until the listener has it free.
      const socks = new Set<net.Socket>();
      const REFUSED = 4;
      let conns = 0;
      const held: { hog: FetchConnection | null } = { hog: null };
      const px = net.createServer((c) => {
        socks.add(c);
        c.on('error', () => undefined).on('close', () => socks.delete(c));
        const n = ++conns;
        void (async () => {
          // The listener frees the slot of a connection when it closes it (bounded, in case it is slow).
          for (let i = 0; n >= 2 && fsrv.stats().connections > 0; i++) {
            if (i >= 500) throw new Error('the listener kept its connection');
            await sleep(20);
          }
          if (n === REFUSED) held.hog = await FetchConnection.open('127.0.0.1', fsrv.port);
          const u = net.connect(fsrv.port, '127.0.0.1');
          socks.add(u);
          u.on('error', () => undefined).on('close', () => {
            socks.delete(u);
            if (n !== REFUSED) return void c.destroy();
            c.end();
            held.hog?.close();
          });
          c.on('close', () => u.destroy());
          if (n !== REFUSED) c.pipe(u);
          else c.resume(); // its hello read and dropped
          u.pipe(c);
        })().catch(() => c.destroy());
      });
      await new Promise<void>((resolve) => px.listen(0, '127.0.0.1', resolve));
      const c = await consumerOf(undefined, (px.address() as net.AddressInfo).port);
      try {
        // Before: the refusal started the count over, and a listener refusing one
        // connection in every 5 (full, under many consumers) had the bad offset fetched for ever.
        const e = await expectCode(c.read(2000), 'IO_ERROR');
        assert.match(e.message, new RegExp(`^fetching t/0 at offset ${bad}: .* cut its reply off 5 times in a row`), e.message);
        assert.ok(held.hog !== null, 'a connection was refused');
        assert.equal(conns, 7, 'the first, five cut off and the one refused between');
        assert.deepEqual(c.seen, Array.from({ length: bad }, (_, i) => i));
      } finally {
        await c.close();
        held.hog?.close();
        for (const x of socks) x.destroy();
        await new Promise<void>((resolve) => px.close(() => resolve()));
      }
    });

    it('a FetchConsumer whose fetches from a segment file shorter than the log says are cut off, with a connection the listener took but never said hello on (the handshake timeout) between two of them, still fails with IO_ERROR after 5 in a row: a listener there but stuck is no broker restarting', async function () {
      this.timeout(60_000);
      const { bad } = await truncatedFirstSegment(16 * 1024);
      fsrv = await broker.startFetchServer({ port: 0, ioBackend: backend });
      // The consumer's first connection checks the listener at the start; the next two
      // fetch from 0 (cut off after the records before `bad`) and from `bad` (cut off); the
      // fourth is taken and never answered; the rest are passed (cut off at `bad`).
      const HUNG = 4;
      const px = await tcpProxy(fsrv.port);
      px.modeOf = (n) => (n === HUNG ? 'silent' : 'forward');
      const c = await consumerOf(undefined, px.port);
      try {
        const e = await expectCode(c.read(2000), 'IO_ERROR');
        assert.match(e.message, new RegExp(`^fetching t/0 at offset ${bad}: .* cut its reply off 5 times in a row`), e.message);
        // Taken for a listener down, the handshake timeout started the count over: two cut
        // off before it and five after (9 connections); taken so every few cut-offs, the
        // bad offset was fetched for ever.
        assert.equal(px.connections, 7, 'the first, five cut off and the one never answered between');
        assert.deepEqual(c.seen, Array.from({ length: bad }, (_, i) => i));
      } finally {
        await c.close();
        await px.close();
      }
    });

    it('a FetchConsumer whose reconnect delay grew while the listener was down waits the first delay again after a cut-off reply that handed out records, not the grown one', async function () {
      this.timeout(60_000);
      const { bad } = await truncatedFirstSegment(16 * 1024);
      fsrv = await broker.startFetchServer({ port: 0, ioBackend: backend });
      // The consumer's first connection (its check of the listener) passes; the next three
      // find no listener (closed on arrival), each doubling the reconnect delay; then the
      // listener is back, and its replies are cut off (from 0 after the records before
      // `bad`, then at `bad`).
      const px = await tcpProxy(fsrv.port);
      px.modeOf = (n) => (n >= 2 && n <= 4 ? 'refuse' : 'forward');
      const c = await consumerOf(undefined, px.port);
      // The delays the consumer waits before each reconnect, as it asks for them.
      const delays: number[] = [];
      const inner = c.consumer as unknown as { backoff(ms: number): Promise<void> };
      const backoff = inner.backoff.bind(inner);
      inner.backoff = (ms) => (delays.push(ms), backoff(ms));
      try {
        const e = await expectCode(c.read(2000), 'IO_ERROR');
        assert.match(e.message, new RegExp(`^fetching t/0 at offset ${bad}: .* cut its reply off 5 times in a row`), e.message);
        assert.deepEqual(c.seen, Array.from({ length: bad }, (_, i) => i));
        // Three refused (100, 200, 400 ms), then the reply that moved on: the next delay
        // is the first again (before: 800 ms, and on up to the 5 s ceiling), doubling
        // while its offset is cut off in a row.
        assert.deepEqual(delays, [100, 200, 400, 100, 200, 400, 800]);
        assert.equal(px.connections, 9, 'the first, three refused, five cut off');
      } finally {
        await c.close();
        await px.close();
      }
    });

    // Real read errors of the fetch thread's sendfile (strace, as above), which fail fewer
    // times than the bound at one offset: a fault that passes, or a connection lost now
    // and then, is ridden out however often it strikes overall.
    for (const [what, inject, maxBytes, cuts] of [
      ['4 times at one offset (a fault that passes)', 'sendfile:error=EIO:when=1..4', undefined, (n: number) => n === 4],
      ['once at each of many offsets', 'sendfile:error=EIO:when=2+2', 4096, (n: number) => n > 5],
    ] as const) {
      it(`a FetchConsumer whose replies are cut off after their header ${what} reconnects and reads the partition whole`, async function () {
        if (!hasStrace()) return this.skip();
        if (backend !== 'thread') return this.skip(); // io_uring: no syscall strace could fail (see above)
        this.timeout(60_000);
        const t = await faultable(256 * 1024);
        const c = await consumerOf(maxBytes);
        try {
          const fault = await injectIntoThread(t.tid, [segmentFiles(t.dir, 't', 0)[0]!], inject);
          let trace: string;
          try {
            await c.read(2000);
          } finally {
            trace = await fault.stop();
          }
          assert.deepEqual(c.seen, Array.from({ length: 2000 }, (_, i) => i));
          const n = (trace.match(/^sendfile\(.*= -1 EIO .*\(INJECTED\)/gm) ?? []).length;
          assert.ok(cuts(n), `${n} replies cut off: ${trace}`);
          assert.equal(fsrv.stats().readErrors, n);
        } finally {
          await c.close();
          t.done();
        }
      });
    }

    it('never sends bytes past the published end while appends run, and long-polls wake on new data', async () => {
      broker = await openBroker({ durability: 'none', tailCacheBytes: 0 });
      await broker.createTopic('live', { segmentBytes: 256 * 1024 });
      fsrv = await broker.startFetchServer({ port: 0, ioBackend: backend });
      const c = await Raw.open(fsrv.port);
      assert.equal(await c.hello(), 0);
      const value = (i: number) => `live-${i}`;
      const producing = fill(broker, 'live', 4000, value, 7);
      let off = 0;
      while (off < 4000) {
        const r = await c.fetch('live', 0, off, 64 * 1024, 2000);
        assert.equal(r.error, 'OK');
        const recs = checkWhole(r.data, off);
        for (const m of recs) assert.equal(m.value.toString(), value(m.offset));
        if (recs.length) {
          assert.ok(recs[recs.length - 1]!.offset < r.header.highWatermark, 'nothing past the high watermark');
          off = recs[recs.length - 1]!.offset + 1;
        }
      }
      await producing;
      // At the end: a long-poll that gets its answer when a record is published...
      const t0 = Date.now();
      const waiting = c.fetch('live', 0, 4000, 1 << 20, 10_000);
      await sleep(150);
      await broker.producer().send('live', { value: 'late', partition: 0 });
      const r = await waiting;
      assert.ok(Date.now() - t0 < 3000, 'woken by the publish, not by its timeout');
      assert.deepEqual(checkWhole(r.data, 4000).map((m) => m.value.toString()), ['late']);
      // ...and one that runs out and answers with nothing.
      const t1 = Date.now();
      const empty = await c.fetch('live', 0, 4001, 1 << 20, 300);
      assert.equal(empty.error, 'OK');
      assert.equal(empty.header.length, 0);
      assert.equal(empty.header.highWatermark, 4001);
      assert.ok(Date.now() - t1 >= 250);
      c.close();
    });

    it('a long-poll on a partition that a write error fences is answered IO_ERROR at once, not empty at its deadline', async function () {
      broker = await openBroker({ testUringFault: 'wait', testIoDelayMs: 30 });
      if (broker.ioBackend !== 'io_uring') return this.skip(); // the injected fault is io_uring's
      await broker.createTopic('f', { partitions: 2 }); // the fault needs two writes in one cycle (one goes the plain way)
      fsrv = await broker.startFetchServer({ port: 0, ioBackend: backend });
      const c = await Raw.open(fsrv.port);
      assert.equal(await c.hello(), 0);
      const t0 = Date.now();
      const waiting = c.fetch('f', 0, 0, 1 << 20, 10_000);
      await waitFor(() => fsrv.stats().parked === 1);
      // A cycle's single write goes the plain way; the fault meets the first cycle that
      // writes both partitions through the ring (as in test/03), fencing both.
      const sent = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) => {
          const x = encodeBatch([{ value: Buffer.from(`m${i}`) }]);
          sealBatch(x);
          return broker!.publishBatch('f', x, (i + 1) % 2); // the first, written, to partition 1
        }),
      );
      assert.ok(sent.every((r, i) => (i + 1) % 2 === 1 || r.status === 'rejected'), 'nothing was written to partition 0');
      assert.ok(sent.some((r, i) => (i + 1) % 2 === 0 && r.status === 'rejected' && (r.reason as { code?: string }).code === 'IO_ERROR'), 'a write to partition 0 failed');
      const r = await waiting;
      assert.equal(r.error, 'IO_ERROR');
      assert.ok(Date.now() - t0 < 5000, `answered after ${Date.now() - t0} ms`);
      assert.equal((await c.fetch('f', 0, 0)).error, 'IO_ERROR', 'and so is the next one');
      c.close();
    });

    it('answers bad requests with an error code or a closed connection, and leaks no fds', async () => {
      broker = await openBroker();
      await broker.createTopic('t', { partitions: 2 });
      await fill(broker, 't', 100, (i) => `x${i}`);
      fsrv = await broker.startFetchServer({ port: 0, ioBackend: backend, handshakeTimeoutMs: 300, maxFetchBytes: 1 << 20, maxWaitMs: 5000 });
      const warm = await Raw.open(fsrv.port); // let Node open whatever it opens lazily
      assert.equal(await warm.hello(), 0);
      warm.close();
      await waitFor(() => fsrv.stats().connections === 0);
      const fds = await settledFdCount();

      // Garbage instead of a hello: closed without a word.
      let c = await Raw.open(fsrv.port);
      c.sock.write(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
      assert.equal(await c.read(1), null);
      // A hello with an oversize token length: closed.
      c = await Raw.open(fsrv.port);
      const h = Buffer.alloc(8);
      h.writeUInt32LE(FETCH_MAGIC, 0);
      h.writeUInt16LE(1, 4);
      h.writeUInt16LE(60000, 6);
      c.sock.write(h);
      assert.equal(await c.read(1), null);
      // A newer protocol version: told so, then closed.
      c = await Raw.open(fsrv.port);
      c.sock.write(encodeHello('', 99));
      assert.equal(decodeServerHello((await c.read(SERVER_HELLO_SIZE))!).error, 4);
      assert.equal(await c.read(1), null);

      // Field errors keep the connection; framing errors end it.
      c = await Raw.open(fsrv.port);
      assert.equal(await c.hello(), 0);
      assert.equal((await c.fetch('t', 0, -5)).error, 'INVALID_REQUEST');
      assert.equal((await c.fetch('t', 0, 0, 0)).error, 'INVALID_REQUEST');
      assert.equal((await c.fetch('t', 0, 0, 2 << 20)).error, 'INVALID_REQUEST', 'maxBytes over the limit');
      assert.equal((await c.fetch('t', 0, 0, 1000, 60_000)).error, 'INVALID_REQUEST', 'maxWaitMs over the limit');
      assert.equal((await c.fetch('no-such-topic', 0, 0)).error, 'UNKNOWN_TOPIC_OR_PARTITION');
      assert.equal((await c.fetch('t', 7, 0)).error, 'UNKNOWN_TOPIC_OR_PARTITION');
      assert.equal((await c.fetch('../t', 0, 0)).error, 'INVALID_REQUEST');
      const flagged = encodeFetch({ correlationId: 5, topic: 't', partition: 0, offset: 0, maxBytes: 1000, maxWaitMs: 0 });
      flagged[5] = 2; // no flag but INCARNATION (1) has a meaning in version 2
      c.sock.write(flagged);
      assert.equal(fetchErrorName(decodeResponseHeader((await c.read(RESPONSE_HEADER_SIZE))!).error), 'INVALID_REQUEST', 'a fetch with an unknown flag set');
      const oor = await c.fetch('t', 0, 1000);
      assert.equal(oor.error, 'OFFSET_OUT_OF_RANGE');
      assert.equal(oor.header.highWatermark, 100);
      const ok = await c.fetch('t', 0, 10);
      assert.equal(ok.error, 'OK');
      assert.equal(checkWhole(ok.data, 10)[0]!.offset, 10);
      const big = Buffer.alloc(12);
      big.writeUInt32LE(0xffffffff, 0); // a frame length far over the limit
      big.writeUInt32LE(42, 8);
      c.sock.write(big);
      const bad = decodeResponseHeader((await c.read(RESPONSE_HEADER_SIZE))!);
      assert.equal(fetchErrorName(bad.error), 'INVALID_REQUEST');
      assert.equal(await c.read(1), null, 'closed after a framing error');
      // An unknown request type: the same.
      c = await Raw.open(fsrv.port);
      assert.equal(await c.hello(), 0);
      const odd = encodeFetch({ correlationId: 1, topic: 't', partition: 0, offset: 0, maxBytes: 10, maxWaitMs: 0 });
      odd[4] = 9;
      c.sock.write(odd);
      assert.equal(fetchErrorName(decodeResponseHeader((await c.read(RESPONSE_HEADER_SIZE))!).error), 'INVALID_REQUEST');
      assert.equal(await c.read(1), null);
      // Random bytes after a good hello.
      c = await Raw.open(fsrv.port);
      assert.equal(await c.hello(), 0);
      c.sock.write(Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) & 0xff)));
      await c.read(RESPONSE_HEADER_SIZE).catch(() => null);
      assert.equal(await c.read(1 << 20), null);
      // Connects and never sends: closed after the handshake timeout.
      c = await Raw.open(fsrv.port);
      const t0 = Date.now();
      await c.done;
      assert.ok(Date.now() - t0 >= 250 && Date.now() - t0 < 5000, `closed after ${Date.now() - t0} ms`);
      // A long-poll whose client goes away: the server lets it go.
      c = await Raw.open(fsrv.port);
      assert.equal(await c.hello(), 0);
      c.sock.write(encodeFetch({ correlationId: 1, topic: 't', partition: 0, offset: 100, maxBytes: 1000, maxWaitMs: 5000 }));
      await waitFor(() => fsrv.stats().parked === 1);
      c.close();
      await waitFor(() => fsrv.stats().parked === 0 && fsrv.stats().connections === 0);

      // Others were never affected.
      const good = await Raw.open(fsrv.port);
      assert.equal(await good.hello(), 0);
      assert.equal(checkWhole((await good.fetch('t', 0, 0)).data, 0).length, 100);
      good.close();
      await waitFor(() => fsrv.stats().connections === 0);
      assert.equal(await settledFdCount(), fds, 'every fd of those connections is closed');
      assert.ok(fsrv.stats().badRequests >= 6);
      assert.ok(fsrv.stats().timeouts >= 1);
    });

    it('a peer whose first bytes cannot begin the magic is closed at once, not kept until the handshake timeout; a hello split inside the magic is still read', async () => {
      broker = await openBroker();
      fsrv = await broker.startFetchServer({ port: 0, ioBackend: backend, handshakeTimeoutMs: 60_000 });
      // Three bytes of another protocol, then it waits for the server to speak first.
      for (const bytes of [Buffer.from('GET'), Buffer.from('UMX') /* the magic is UMQF */, Buffer.from([0x16, 0x03]) /* a TLS record */]) {
        const c = await Raw.open(fsrv.port);
        c.sock.write(bytes);
        assert.equal(await c.read(1, 15_000), null, `closed after ${JSON.stringify(bytes.toString('latin1'))}`);
      }
      assert.equal(fsrv.stats().timeouts, 0, 'closed for its bytes, not by the handshake timeout');
      assert.equal(fsrv.stats().badRequests, 3);
      // A good hello that arrives a byte at a time is answered.
      const c = await Raw.open(fsrv.port);
      const hello = encodeHello();
      for (let i = 0; i < hello.length; i++) {
        c.sock.write(hello.subarray(i, i + 1));
        await sleep(20);
      }
      const h = await c.read(SERVER_HELLO_SIZE);
      assert.ok(h);
      assert.equal(decodeServerHello(h).error, 0);
      c.close();
      await waitFor(() => fsrv.stats().connections === 0);
    });

    it('a version-2 fetch naming a topic incarnation that is not the topic under that name is refused (TOPIC_INCARNATION_MISMATCH), never served from the new topic; naming none, or version 1, reads as before', async () => {
      broker = await openBroker();
      const d1 = await broker.createTopic('inc');
      await fill(broker, 'inc', 10, (i) => `old${i}`);
      fsrv = await broker.startFetchServer({ port: 0, ioBackend: backend, maxWaitMs: 5000 });
      const c = await Raw.open(fsrv.port);
      const h = await c.helloAs();
      assert.deepEqual([h.error, h.version], [0, 2], 'a version-2 hello is taken, and answered with version 2');
      const ok = await c.fetch('inc', 0, 3, 1 << 20, 0, d1.createdAt);
      assert.equal(ok.error, 'OK');
      assert.equal(checkWhole(ok.data, 3)[0]!.value.toString(), 'old3');
      const wrong = await c.fetch('inc', 0, 3, 1 << 20, 0, d1.createdAt + 1);
      assert.deepEqual([wrong.error, wrong.header.highWatermark, wrong.header.logStartOffset, wrong.data.length], ['TOPIC_INCARNATION_MISMATCH', -1, -1, 0]);
      assert.equal(fetchError(wrong.header.error, 'x').code, 'TOPIC_NOT_FOUND', 'what the client makes of it');

      // A long-poll parked in the incarnation it names is answered when the topic goes (as before).
      const waiting = c.fetch('inc', 0, 10, 1 << 20, 5000, d1.createdAt);
      await waitFor(() => fsrv.stats().parked === 1);
      await broker.deleteTopic('inc');
      assert.equal((await waiting).error, 'UNKNOWN_TOPIC_OR_PARTITION');
      const d2 = await broker.createTopic('inc'); // at once: within the same millisecond it would still be another incarnation
      assert.ok(d2.createdAt > d1.createdAt, `createdAt ${d2.createdAt} after ${d1.createdAt}`);
      await fill(broker, 'inc', 20, (i) => `new${i}`);
      // The old incarnation at an old position: refused, nothing of the new topic sent; a
      // long-poll naming it is refused at once, not parked on the new topic.
      const stale = await c.fetch('inc', 0, 3, 1 << 20, 0, d1.createdAt);
      assert.deepEqual([stale.error, stale.data.length], ['TOPIC_INCARNATION_MISMATCH', 0]);
      const t0 = Date.now();
      const stalePoll = await c.fetch('inc', 0, 20, 1 << 20, 5000, d1.createdAt);
      assert.equal(stalePoll.error, 'TOPIC_INCARNATION_MISMATCH');
      assert.ok(Date.now() - t0 < 3000, 'answered at once');
      assert.equal(checkWhole((await c.fetch('inc', 0, 3, 1 << 20, 0, d2.createdAt)).data, 3)[0]!.value.toString(), 'new3');
      // Naming none (incarnation 0, no flag): the topic under that name, as before.
      assert.equal(checkWhole((await c.fetch('inc', 0, 3)).data, 3)[0]!.value.toString(), 'new3');
      // A long-poll naming the right one waits and is answered with the new data.
      const poll = c.fetch('inc', 0, 20, 1 << 20, 5000, d2.createdAt);
      await waitFor(() => fsrv.stats().parked === 1);
      await broker.producer().send('inc', { value: 'late' });
      assert.equal(checkWhole((await poll).data, 20)[0]!.value.toString(), 'late');
      // The flag with incarnation 0 names none either.
      const zero = encodeFetch({ correlationId: 3, topic: 'inc', partition: 0, offset: 3, maxBytes: 1 << 20, maxWaitMs: 0, incarnation: d2.createdAt });
      zero.fill(0, 32, 40);
      c.sock.write(zero);
      const zh = decodeResponseHeader((await c.read(RESPONSE_HEADER_SIZE))!);
      assert.equal(fetchErrorName(zh.error), 'OK');
      assert.equal(checkWhole((await c.read(zh.length))!, 3)[0]!.value.toString(), 'new3');
      // The flag set on a frame too short to hold its field: framing, so closed after the reply.
      const short = encodeFetch({ correlationId: 4, topic: 'inc', partition: 0, offset: 0, maxBytes: 1000, maxWaitMs: 0 });
      short[5] = 1;
      c.sock.write(short);
      assert.equal(fetchErrorName(decodeResponseHeader((await c.read(RESPONSE_HEADER_SIZE))!).error), 'INVALID_REQUEST');
      assert.equal(await c.read(1), null, 'closed after a framing error');

      // A version-1 connection is what it was: its hello is answered with version 1, a
      // flag is a field error (the connection kept), and the version-2 layout a framing one.
      const v1 = await Raw.open(fsrv.port);
      const h1 = await v1.helloAs('', 1);
      assert.deepEqual([h1.error, h1.version], [0, 1]);
      const f1 = encodeFetch({ correlationId: 5, topic: 'inc', partition: 0, offset: 0, maxBytes: 1000, maxWaitMs: 0 });
      f1[5] = 1;
      v1.sock.write(f1);
      assert.equal(fetchErrorName(decodeResponseHeader((await v1.read(RESPONSE_HEADER_SIZE))!).error), 'INVALID_REQUEST');
      assert.equal(checkWhole((await v1.fetch('inc', 0, 3)).data, 3)[0]!.value.toString(), 'new3');
      v1.sock.write(encodeFetch({ correlationId: 6, topic: 'inc', partition: 0, offset: 3, maxBytes: 1000, maxWaitMs: 0, incarnation: d1.createdAt }));
      assert.equal(fetchErrorName(decodeResponseHeader((await v1.read(RESPONSE_HEADER_SIZE))!).error), 'INVALID_REQUEST');
      assert.equal(await v1.read(1), null, 'closed after a framing error');
      // FetchConnection on a version-1 connection does not send the incarnation (the
      // server could not check it): the request is a version-1 one.
      const fc = await FetchConnection.open('127.0.0.1', fsrv.port, '', 10_000, undefined, 1);
      assert.equal(fc.version, 1);
      const r1 = await fc.fetch('inc', 0, 3, 1000, 0, d1.createdAt);
      assert.equal(fetchErrorName(r1.header.error), 'OK');
      fc.close();
      const fc2 = await FetchConnection.open('127.0.0.1', fsrv.port);
      assert.equal(fc2.version, 2);
      assert.equal(fetchErrorName((await fc2.fetch('inc', 0, 3, 1000, 0, d1.createdAt)).header.error), 'TOPIC_INCARNATION_MISMATCH');
      fc2.close();
      await waitFor(() => fsrv.stats().connections === 0);
    });

    it('answers pipelined requests each once and in order: with the hello, in one write, or split anywhere', async () => {
      broker = await openBroker();
      await broker.createTopic('t');
      await fill(broker, 't', 20, (i) => `p${i}`, 1); // one batch per offset
      fsrv = await broker.startFetchServer({ port: 0, ioBackend: backend });
      const fetchOf = (corr: number, offset: number) => encodeFetch({ correlationId: corr, topic: 't', partition: 0, offset, maxBytes: 1, maxWaitMs: 0 });
      const expectReply = async (c: Raw, corr: number, offset: number, what: string) => {
        const h = await c.read(RESPONSE_HEADER_SIZE, 3000);
        assert.ok(h, `${what}: connection closed`);
        const r = decodeResponseHeader(h);
        assert.equal(r.correlationId, corr, `${what}: the answer's correlation id`);
        assert.equal(fetchErrorName(r.error), 'OK', what);
        const recs = checkWhole((await c.read(r.length))!, offset);
        assert.equal(recs[0]!.offset, offset, what);
        assert.equal(recs[0]!.value.toString(), `p${offset}`, what);
      };
      // The hello and a first fetch in one write, then a second fetch once both are
      // answered: the receive issued while the first reply went out found its bytes
      // counted where the consumed hello and request had been (on io_uring, every time).
      for (let round = 0; round < 20; round++) {
        const c = await Raw.open(fsrv.port);
        c.sock.write(Buffer.concat([encodeHello(), fetchOf(1, 3)]));
        assert.equal(decodeServerHello((await c.read(SERVER_HELLO_SIZE))!).error, 0);
        await expectReply(c, 1, 3, `round ${round}, first fetch`);
        c.sock.write(fetchOf(1000 + round, round % 20));
        await expectReply(c, 1000 + round, round % 20, `round ${round}, second fetch`);
        c.close();
      }
      // Six fetches at once, cut into pieces at random places (seeded), written apart.
      let seed = 12345;
      const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) % n;
      for (let round = 0; round < 60; round++) {
        const c = await Raw.open(fsrv.port);
        c.sock.setNoDelay(true);
        assert.equal(await c.hello(), 0);
        const offsets = Array.from({ length: 6 }, () => rand(20));
        const bytes = Buffer.concat(offsets.map((o, i) => fetchOf(i + 1, o)));
        for (let at = 0; at < bytes.length; ) {
          const n = 1 + rand(bytes.length - at);
          c.sock.write(bytes.subarray(at, at + n));
          at += n;
          await new Promise((r) => setImmediate(r));
        }
        for (let i = 0; i < offsets.length; i++) await expectReply(c, i + 1, offsets[i]!, `round ${round}, request ${i + 1} of 6`);
        c.close();
      }
      await waitFor(() => fsrv.stats().connections === 0);
      assert.equal(fsrv.stats().badRequests, 0);
    });

    it('sends a file-served reply once descriptors come back, after running out of them mid-reply', async function () {
      // In a child with a low descriptor limit, which it then uses up: on io_uring the
      // reply's splice pipe cannot be made (pipe2: EMFILE) after its header went out,
      // and with no pipe lent out none would come back to wake it; it waited for its
      // send deadline and was cut off there. (The thread backend sends from the file.)
      this.timeout(60_000);
      const dir = tmpDir();
      const code = `
        const fs = require('node:fs');
        const net = require('node:net');
        const { Broker } = require(${JSON.stringify(path.join(__dirname, '../src'))});
        const p = require(${JSON.stringify(path.join(__dirname, '../src/fetch/protocol'))});
        (async () => {
          const broker = await Broker.open({ dir: ${JSON.stringify(dir)}, tailCacheBytes: 0 });
          await broker.createTopic('t');
          const prod = broker.producer();
          for (let i = 0; i < 10; i++) await prod.sendBatch('t', Array.from({ length: 50 }, (_, j) => ({ value: String(i * 50 + j).padEnd(2000, '.') })), { partition: 0 });
          const fsrv = await broker.startFetchServer({ port: 0, ioBackend: '${backend}', sendTimeoutMs: 60000 });
          const sock = net.connect(fsrv.port, '127.0.0.1');
          await new Promise((r, j) => { sock.once('connect', r); sock.once('error', j); });
          let buf = Buffer.alloc(0);
          sock.on('data', (d) => (buf = Buffer.concat([buf, d])));
          sock.write(p.encodeHello(''));
          while (buf.length < p.SERVER_HELLO_SIZE) await new Promise((r) => setTimeout(r, 10));
          buf = buf.subarray(p.SERVER_HELLO_SIZE);
          const hog = [];
          for (;;) { try { hog.push(fs.openSync('/dev/null', 'r')); } catch { break; } }
          sock.write(p.encodeFetch({ correlationId: 9, topic: 't', partition: 0, offset: 0, maxBytes: 1 << 20, maxWaitMs: 0 }));
          await new Promise((r) => setTimeout(r, 300));
          const headerEarly = buf.length >= p.RESPONSE_HEADER_SIZE;
          for (const fd of hog) fs.closeSync(fd);
          const released = Date.now();
          let want = Infinity;
          while (Date.now() - released < 10000) {
            if (want === Infinity && buf.length >= p.RESPONSE_HEADER_SIZE) want = p.RESPONSE_HEADER_SIZE + p.decodeResponseHeader(buf).length;
            if (buf.length >= want) break;
            await new Promise((r) => setTimeout(r, 10));
          }
          const h = buf.length >= p.RESPONSE_HEADER_SIZE ? p.decodeResponseHeader(buf) : null;
          console.log(JSON.stringify({ hogged: hog.length, headerEarly, error: h && h.error, length: h && h.length, got: buf.length - p.RESPONSE_HEADER_SIZE, ms: Date.now() - released }));
          sock.destroy();
          fsrv.close();
          await broker.close();
        })().catch((e) => { console.error(e); process.exit(1); });`;
      const child = spawn('bash', ['-c', 'ulimit -n 256 && exec "$0" --require tsx/cjs -e "$1"', process.execPath, code], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      try {
        assert.equal(await Promise.race([exited, sleep(45_000).then(() => 'timeout')]), 0, err);
        const r = JSON.parse(out.trim().split('\n').pop()!) as { hogged: number; error: number; length: number; got: number; ms: number };
        assert.ok(r.hogged > 100, `the child used up its descriptors (${r.hogged} taken)`);
        assert.equal(r.error, 0);
        assert.ok(r.length > 900_000, `reply of ${r.length} bytes`);
        assert.equal(r.got, r.length, `${r.got} of the reply's ${r.length} bytes arrived within 10 s of the descriptors coming back`);
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        await exited;
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    it('survives clients that vanish mid-reply or stop reading, without leaking fds', async () => {
      broker = await openBroker({ durability: 'none', tailCacheBytes: 0 });
      await broker.createTopic('big', { segmentBytes: 8 << 20 });
      const chunk = 'z'.repeat(1000);
      await fill(broker, 'big', 24_000, () => chunk, 1000); // ~24 MB over three segments
      // Counted with no server: the pool of splice pipes it keeps while running
      // goes when it stops.
      const warmup = await broker.startFetchServer({ port: 0, ioBackend: backend });
      const warm = await Raw.open(warmup.port);
      assert.equal(await warm.hello(), 0);
      warm.close();
      await warm.done;
      warmup.close();
      const fds = await settledFdCount();
      const kinds0 = JSON.stringify(fdKinds());
      fsrv = await broker.startFetchServer({ port: 0, ioBackend: backend, sendTimeoutMs: 500, maxFetchBytes: 64 << 20 });
      const bystander = await FetchConnection.open('127.0.0.1', fsrv.port);
      for (let i = 0; i < 10; i++) {
        const c = await Raw.open(fsrv.port);
        assert.equal(await c.hello(), 0);
        c.sock.write(encodeFetch({ correlationId: 1, topic: 'big', partition: 0, offset: 0, maxBytes: 64 << 20, maxWaitMs: 0 }));
        await c.read(RESPONSE_HEADER_SIZE + i * 10_000); // some of the reply, then gone
        c.close();
      }
      // One that asks for 24 MB and never reads: cut off by the send timeout.
      const stuck = await Raw.open(fsrv.port);
      assert.equal(await stuck.hello(), 0);
      stuck.sock.pause();
      stuck.sock.write(encodeFetch({ correlationId: 1, topic: 'big', partition: 0, offset: 0, maxBytes: 64 << 20, maxWaitMs: 0 }));
      // Meanwhile another client reads the whole partition.
      let off = 0;
      while (off < 24_000) {
        const { header, data } = await bystander.fetch('big', 0, off, 4 << 20, 0);
        assert.equal(header.error, 0);
        const recs = checkWhole(data, off);
        off = recs[recs.length - 1]!.offset + 1;
      }
      // (A paused socket never notices the close: watch the server's side.)
      await waitFor(() => fsrv.stats().timeouts >= 1 && fsrv.stats().connections === 1);
      stuck.close();
      bystander.close();
      await waitFor(() => fsrv.stats().connections === 0);
      assert.ok(fsrv.stats().timeouts >= 1, 'the reader that stopped was timed out');
      assert.equal(fsrv.stats().readErrors, 0, 'peers that went mid-reply are not read errors');
      fsrv.close();
      assert.equal(await settledFdCount(), fds, `${kinds0}\n${JSON.stringify(fdKinds())}`);
    });

    it('a reader that takes a large reply slowly but steadily is not cut off by the send timeout, which measures a stall, not the whole reply', async function () {
      // In a child in its own network namespace whose TCP send buffers are capped at
      // 128 KiB, as on a slow link (loopback's 64 KiB segments grow them to MiBs, so the
      // socket only wakes a sender every MiB or so): the reader takes one 64 KiB read
      // every 150 ms, the send timeout is 1.5 s. On io_uring a file range went out as
      // 1 MiB pipe loads, and only a drained pipe restarted the timer, so the reply was
      // cut off after its first MiB although it moved every 150 ms.
      this.timeout(90_000);
      const ns = netnsFlags();
      if (!ns) return this.skip();
      const dir = tmpDir();
      const code = `
        const net = require('node:net');
        const { Broker } = require(${JSON.stringify(path.join(__dirname, '../src'))});
        const p = require(${JSON.stringify(path.join(__dirname, '../src/fetch/protocol'))});
        (async () => {
          const broker = await Broker.open({ dir: ${JSON.stringify(dir)}, durability: 'none', tailCacheBytes: 0 });
          await broker.createTopic('t', { segmentBytes: 16 << 20 });
          const prod = broker.producer();
          for (let i = 0; i < 3; i++) await prod.sendBatch('t', Array.from({ length: 1000 }, () => ({ value: 'z'.repeat(1000) })), { partition: 0 });
          const fsrv = await broker.startFetchServer({ port: 0, ioBackend: '${backend}', sendTimeoutMs: 1500 });
          const sock = net.connect(fsrv.port, '127.0.0.1');
          await new Promise((r, j) => { sock.once('connect', r); sock.once('error', j); });
          sock.on('error', () => undefined);
          let closed = false;
          sock.once('close', () => (closed = true));
          let buf = Buffer.alloc(0);
          let got = 0;
          sock.on('data', (d) => {
            if (buf.length < p.SERVER_HELLO_SIZE + p.RESPONSE_HEADER_SIZE) buf = Buffer.concat([buf, d.subarray(0, 64)]);
            got += d.length;
            sock.pause(); // one read per tick
          });
          sock.pause();
          sock.write(Buffer.concat([p.encodeHello(''), p.encodeFetch({ correlationId: 1, topic: 't', partition: 0, offset: 0, maxBytes: 16 << 20, maxWaitMs: 0 })]));
          let want = Infinity;
          const t0 = Date.now();
          while (!closed && got < want && Date.now() - t0 < 60000) {
            if (want === Infinity && buf.length >= p.SERVER_HELLO_SIZE + p.RESPONSE_HEADER_SIZE)
              want = p.SERVER_HELLO_SIZE + p.RESPONSE_HEADER_SIZE + p.decodeResponseHeader(buf.subarray(p.SERVER_HELLO_SIZE)).length;
            sock.resume();
            await new Promise((r) => setTimeout(r, 150));
          }
          console.log(JSON.stringify({ want, got, closed, timeouts: fsrv.stats().timeouts }));
          sock.destroy();
          fsrv.close();
          await broker.close();
        })().catch((e) => { console.error(e); process.exit(1); });`;
      const child = spawn('unshare', [ns, 'sh', '-c', `${NETNS_SETUP} && exec "$0" --require tsx/cjs -e "$1"`, process.execPath, code], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      try {
        assert.equal(await Promise.race([exited, sleep(75_000).then(() => 'timeout')]), 0, err);
        const r = JSON.parse(out.trim().split('\n').pop()!) as { want: number; got: number; closed: boolean; timeouts: number };
        assert.ok(r.want > 2_500_000, `a reply of ${r.want} bytes`);
        assert.equal(r.got, r.want, `${r.got} of ${r.want} bytes before the server closed the connection (timeouts: ${r.timeouts})`);
        assert.equal(r.timeouts, 0);
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        await exited;
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });

    it('a reply holds one segment: readers that stop reading keep one segment file and no copy each, and do not stall other replies', async () => {
      broker = await openBroker({ tailCacheBytes: 0 });
      await broker.createTopic('t', { segmentBytes: 8192 });
      const p = broker.producer();
      for (let i = 0; i < 600; i++) await p.sendBatch('t', [{ value: 'x'.repeat(1500) }, { value: 'y'.repeat(1500) }], { partition: 0 });
      assert.ok((await broker.describeTopic('t')).partitions[0]!.segments > 200, 'segments');
      // No copies allowed: a sealed segment's last block goes from the file too.
      fsrv = await broker.startFetchServer({ port: 0, ioBackend: backend, memoryPerConnection: 0, memoryTotal: 0 });
      const logFiles = () =>
        fs.readdirSync('/proc/self/fd').filter((f) => {
          try {
            return fs.readlinkSync(`/proc/self/fd/${f}`).endsWith('.log');
          } catch {
            return false;
          }
        }).length;
      const before = logFiles();
      // 70 readers (more than the 64 large splice pipes) ask for 64 MiB from a segment's start and read nothing.
      const stalled: Raw[] = [];
      for (let k = 0; k < 70; k++) {
        const c = await Raw.open(fsrv.port);
        c.sock.pause();
        c.sock.write(Buffer.concat([encodeHello(), encodeFetch({ correlationId: 1, topic: 't', partition: 0, offset: 4 * (k % 50), maxBytes: 64 << 20, maxWaitMs: 0 })]));
        stalled.push(c);
      }
      await sleep(500);
      assert.ok(logFiles() - before <= 70, `${logFiles() - before} segment files open for 70 replies`);
      // Another reader gets whole replies, one segment each, at once.
      const c = await Raw.open(fsrv.port);
      assert.equal(await c.hello(), 0);
      const t0 = Date.now();
      let off = 0;
      for (let i = 0; i < 5; i++) {
        const r = await c.fetch('t', 0, off, 64 << 20);
        assert.equal(r.error, 'OK');
        const recs = checkWhole(r.data, off);
        assert.ok(r.data.length <= 8192, `a reply of ${r.data.length} bytes spans segments`);
        off = recs[recs.length - 1]!.offset + 1;
      }
      assert.ok(Date.now() - t0 < 5000, `five replies took ${Date.now() - t0} ms`);
      assert.equal(fsrv.stats().bytesCopied, 0);
      for (const s of [...stalled, c]) s.sock.destroy();
      fsrv.close();
    });

    it('a refused connection ends with the refusal hello and a FIN, not a reset, though its client hello came at once: the listener reads and drops it until the client closes', async function () {
      this.timeout(60_000);
      broker = await openBroker();
      fsrv = await broker.startFetchServer({ port: 0, ioBackend: backend, maxConnections: 1 });
      const hog = await Raw.open(fsrv.port);
      assert.equal(await hog.hello(), 0);
      try {
        // Before: the listener closed with the client's hello unread, which sends a reset;
        // a client reads that as a listener that is down, and may lose the hello with it.
        for (let i = 0; i < 30; i++) {
          const r = await refusedClient(fsrv.port);
          assert.equal(r.error, null, `try ${i}: ${r.error?.message}`);
          assert.ok(r.ended, `try ${i}: no clean end`);
          assert.equal(r.data.length, SERVER_HELLO_SIZE, `try ${i}`);
          assert.equal(fetchErrorName(decodeServerHello(r.data).error), 'TOO_MANY_CONNECTIONS');
        }
        // Node's client writes its hello once connected, mostly after the listener has
        // handled the accept; one whose handshake ACK waits for its hello (TCP_DEFER_ACCEPT
        // on the client) is accepted with the hello already in it, every time.
        if (spawnSync('python3', ['-c', 'import socket; socket.TCP_DEFER_ACCEPT']).status === 0) {
          const out = spawnSync('python3', ['-c', DEFERRED_HELLO_CLIENT, String(fsrv.port), '30'], { encoding: 'utf8', timeout: 60_000 });
          assert.equal(out.status, 0, out.stderr);
          const rs = JSON.parse(out.stdout) as Array<{ data: string; err: string | null }>;
          assert.equal(rs.length, 30);
          for (const [i, r] of rs.entries()) {
            assert.equal(r.err, null, `deferred try ${i}`);
            assert.equal(fetchErrorName(decodeServerHello(Buffer.from(r.data, 'hex')).error), 'TOO_MANY_CONNECTIONS', `deferred try ${i}`);
          }
        }
        assert.equal(fsrv.stats().connections, 1, 'refusals count for no slot');
        await waitFor(() => fsrv.stats().lingering === 0);
      } finally {
        hog.close();
        fsrv.close();
      }
    });

    it('a refused client that never closes is closed by the listener after a short linger, and one lingering at stop is closed with it', async function () {
      this.timeout(60_000);
      broker = await openBroker();
      const fds = await settledFdCount();
      fsrv = await broker.startFetchServer({ port: 0, ioBackend: backend, maxConnections: 1 });
      const hog = await Raw.open(fsrv.port);
      assert.equal(await hog.hello(), 0);
      const r = await refusedClient(fsrv.port, true);
      assert.equal(r.error, null);
      assert.equal(fetchErrorName(decodeServerHello(r.data).error), 'TOO_MANY_CONNECTIONS');
      assert.ok(r.ended);
      // Its end of the connection stays open: the listener lets go of its own after the linger (1 s).
      await waitFor(() => fsrv.stats().lingering === 0, 10_000);
      assert.equal(fsrv.stats().timeouts, 0, 'a refusal is no timeout');
      const late = await refusedClient(fsrv.port, true);
      assert.equal(fetchErrorName(decodeServerHello(late.data).error), 'TOO_MANY_CONNECTIONS');
      assert.equal(fsrv.stats().lingering, 1);
      hog.close();
      fsrv.close();
      // Only the two clients' own sockets are left: the listener's side of both went with it.
      await waitFor(() => fdCount() <= fds + 2, 10_000);
      assert.equal(await settledFdCount(), fds + 2, JSON.stringify(fdKinds()));
      r.sock.destroy();
      late.sock.destroy();
      await waitFor(() => fdCount() <= fds, 10_000);
    });

    it('a burst of 200 refused connections that never close: at most 64 linger at once, the rest are closed at once; the listener serves on', async function () {
      this.timeout(60_000);
      raiseFdLimit(1000);
      broker = await openBroker();
      await broker.createTopic('t');
      await fill(broker, 't', 10, (i) => `k${i}`);
      fsrv = await broker.startFetchServer({ port: 0, ioBackend: backend, maxConnections: 1 });
      const hog = await Raw.open(fsrv.port);
      assert.equal(await hog.hello(), 0);
      let most = 0;
      const watch = setInterval(() => (most = Math.max(most, fsrv.stats().lingering)), 2);
      const rs = await Promise.all(Array.from({ length: 200 }, () => refusedClient(fsrv.port, true, () => (most = Math.max(most, fsrv.stats().lingering)))));
      try {
        for (const r of rs) assert.equal(fetchErrorName(decodeServerHello(r.data).error), 'TOO_MANY_CONNECTIONS');
        assert.equal(fsrv.stats().refused, 200);
        assert.equal(fsrv.stats().connections, 1);
        await waitFor(() => fsrv.stats().lingering === 0, 10_000);
        clearInterval(watch);
        assert.ok(most > 0 && most <= 64, `${most} lingering at most`);
        hog.close();
        await waitFor(() => fsrv.stats().connections === 0);
        const c = await Raw.open(fsrv.port);
        assert.equal(await c.hello(), 0);
        assert.equal(checkWhole((await c.fetch('t', 0, 0)).data, 0).length, 10);
        c.close();
      } finally {
        clearInterval(watch);
        for (const r of rs) r.sock.destroy();
        hog.close();
        fsrv.close();
      }
    });

    it('refuses connections past maxConnections with a clear code; thousands of them leak nothing', async function () {
      this.timeout(120_000);
      const want = 2000;
      const n = Math.min(want, raiseFdLimit(2 * want + 500));
      broker = await openBroker();
      await broker.createTopic('t');
      await fill(broker, 't', 10, (i) => `k${i}`);
      const max = Math.floor(n * 0.75);
      fsrv = await broker.startFetchServer({ port: 0, ioBackend: backend, maxConnections: max });
      const warm = await Raw.open(fsrv.port);
      assert.equal(await warm.hello(), 0);
      warm.close();
      await waitFor(() => fsrv.stats().connections === 0);
      const fds = await settledFdCount();
      const conns: Raw[] = [];
      for (let i = 0; i < n; i += 100) conns.push(...(await Promise.all(Array.from({ length: Math.min(100, n - i) }, () => Raw.open(fsrv.port)))));
      for (const c of conns) c.sock.write(encodeHello());
      let ok = 0;
      let refused = 0;
      await Promise.all(
        conns.map(async (c) => {
          const h = await c.read(SERVER_HELLO_SIZE).catch(() => null);
          if (h && decodeServerHello(h).error === 0) ok++;
          else if (!h || decodeServerHello(h).error === 6) refused++; // TOO_MANY_CONNECTIONS, or closed
        }),
      );
      assert.equal(ok, max);
      assert.equal(refused, n - max);
      assert.equal(fsrv.stats().connections, max);
      // Everyone connected can still fetch.
      const sample = conns.filter((c) => !c.ended).slice(0, 50);
      for (const c of sample) assert.equal(checkWhole((await c.fetch('t', 0, 0)).data, 0).length, 10);
      for (const c of conns) c.close();
      await waitFor(() => fsrv.stats().connections === 0, 20_000);
      await waitFor(() => fdCount() <= fds, 10_000); // client sockets close asynchronously
      assert.equal(await settledFdCount(), fds, JSON.stringify(fdKinds()));
    });
  });
}

describe('fetch plane: consumers, groups and the server', () => {
  it('a FetchConsumer refuses a reply whose batches do not follow one another (a damaged base offset, outside the CRC)', async () => {
    const dir = tmpDir();
    let broker = await openBroker({ dir, tailCacheBytes: 0 });
    await broker.createTopic('t', { segmentBytes: 4096 });
    const p = broker.producer();
    for (let b = 0; b < 9; b++) await p.sendBatch('t', Array.from({ length: 5 }, (_, i) => ({ value: `v${b * 5 + i}`.padEnd(250, '.') })), { partition: 0 });
    await broker.close();
    // The second batch of the first (sealed) segment now claims offset 7: the planner
    // checks the batch a reply starts with; the rest of the segment goes out as it is.
    const seg = segmentFiles(dir, 't', 0)[0]!;
    const data = fs.readFileSync(seg);
    const second = data.readUInt32LE(4);
    assert.equal(Number(data.readBigInt64LE(second + 8)), 5);
    const b7 = Buffer.alloc(8);
    b7.writeBigInt64LE(7n);
    overwriteAt(seg, second + 8, b7);
    broker = await Broker.open({ dir, tailCacheBytes: 0 });
    const { server, client, close } = await fetchStack(broker);
    try {
      const c = client.consumer({ topic: 't', group: 'g', from: 'earliest', transport: 'fetch', maxWaitMs: 100 });
      const seen: number[] = [];
      const err = await (async () => {
        for await (const m of c) {
          seen.push(m.offset);
          m.ack();
        }
      })().then(() => null, (e: Error & { code?: string }) => e);
      assert.equal(err?.code, 'CORRUPT_BATCH', String(err));
      assert.match(err!.message, /base offset 7, which does not follow/);
      assert.deepEqual(seen, [], 'nothing of that reply was delivered');
    } finally {
      await close();
    }
  });

  it('FetchConnection.fetch refuses fields a request cannot carry with INVALID_ARGUMENT, instead of wrapping them or throwing a bare RangeError; the connection stays usable', async () => {
    const broker = await openBroker();
    try {
      await broker.createTopic('t');
      await broker.producer().send('t', { value: 'x', partition: 0 });
      const fsrv = await broker.startFetchServer({ port: 0 });
      const conn = await FetchConnection.open('127.0.0.1', fsrv.port);
      const bad: Array<[string, [string, number, number, number, number]]> = [
        ['a fractional offset', ['t', 0, 1.5, 1000, 0]],
        ['an offset that is not a number', ['t', 0, NaN, 1000, 0]],
        ['maxBytes past 2^32 (went out as 1)', ['t', 0, 0, 2 ** 32 + 1, 0]],
        ['a negative partition (went out as 4294967295)', ['t', -1, 0, 1000, 0]],
        ['a fractional partition', ['t', 0.5, 0, 1000, 0]],
        ['maxWaitMs that is not a number (its reply timer fired at once)', ['t', 0, 1, 1000, NaN]],
        ['a negative maxWaitMs', ['t', 0, 0, 1000, -1]],
        ['a topic longer than the length field holds', ['t'.repeat(70_000), 0, 0, 1000, 0]],
        // 250..65535 bytes fit the length field, but no topic has them: the server takes
        // them for bad framing and closes the connection.
        ['a topic name of 250 bytes', ['t'.repeat(250), 0, 0, 1000, 0]],
        ['a topic name of 249 characters that is 250 bytes in UTF-8', ['é' + 't'.repeat(248), 0, 0, 1000, 0]],
        ['a topic name of 65535 bytes', ['t'.repeat(65_535), 0, 0, 1000, 0]],
      ];
      for (const [what, args] of bad) {
        const e = await expectCode(conn.fetch(...args), 'INVALID_ARGUMENT');
        assert.ok(e.message.length > 0, what);
      }
      const ok = await conn.fetch('t', 0, 0, 1000, 0);
      assert.equal(fetchErrorName(ok.header.error), 'OK', 'the connection still answers');
      assert.equal(decodeBatches(ok.data, 0)[0]!.value.toString(), 'x');
      conn.close();
      fsrv.close();
    } finally {
      await broker.close();
    }
  });

  it('FetchConnection.fetch takes a reply that keeps arriving over a slow link as long as it takes, instead of cutting it off at a fixed time (then fetched again, and cut off again, for ever)', async function () {
    this.timeout(120_000);
    const broker = await openBroker();
    const socks = new Set<net.Socket>();
    // A slow link: what the listener sends reaches the client 4 KiB a second.
    const link = net.createServer((c) => {
      const u = net.connect(fsrv.port, '127.0.0.1');
      for (const s of [c, u]) socks.add(s.on('error', () => undefined).on('close', () => (c.destroy(), u.destroy())));
      c.pipe(u);
      let held = Buffer.alloc(0);
      u.on('data', (d: Buffer) => void (held = Buffer.concat([held, d])));
      const tick = setInterval(() => {
        if (c.destroyed) return clearInterval(tick);
        if (held.length > 0) c.write(held.subarray(0, 4096));
        held = held.subarray(Math.min(4096, held.length));
      }, 1000);
    });
    let fsrv!: FetchServer;
    try {
      await broker.createTopic('t');
      const p = broker.producer();
      for (let i = 0; i < 17; i++) await p.send('t', { value: Buffer.alloc(8000, i), partition: 0 });
      fsrv = await broker.startFetchServer({ port: 0 });
      await new Promise<void>((resolve) => link.listen(0, '127.0.0.1', resolve));
      const conn = await FetchConnection.open('127.0.0.1', (link.address() as net.AddressInfo).port);
      const t0 = Date.now();
      // About 136 KB: some 33 s on this link, past the 30 s a reply with no progress is given.
      const r = await conn.fetch('t', 0, 0, 1 << 20, 0);
      assert.ok(Date.now() - t0 > 30_000, `the reply took ${Date.now() - t0} ms`);
      assert.equal(fetchErrorName(r.header.error), 'OK');
      assert.equal(decodeBatches(r.data, 0).length, 17);
      conn.close();
    } finally {
      for (const s of socks) s.destroy();
      await new Promise<void>((resolve) => link.close(() => resolve()));
      fsrv?.close();
      await broker.close();
    }
  });

  it("closing the client twice at once still makes its fetch consumers' final commit", async () => {
    // As the CLI does on SIGINT (the signal handler and the command's own cleanup):
    // the second close() went on and closed the channel under the first, and the
    // consumer, seeing its client closed, skipped the commit.
    const broker = await openBroker();
    const { server, client, close } = await fetchStack(broker);
    try {
      await client.createTopic('orders', { partitions: 2 });
      const p = client.producer();
      for (const part of [0, 1]) await p.sendBatch('orders', Array.from({ length: 100 }, (_, i) => ({ value: `a${part}-${i}` })), { partition: part });
      const c = client.consumer({ topic: 'orders', group: 'g', from: 'earliest', transport: 'fetch', maxWaitMs: 100, commitIntervalMs: 60_000 });
      let n = 0;
      const it = c[Symbol.asyncIterator]();
      while (n < 200) {
        const r = await it.next();
        r.value!.ack();
        n++;
      }
      await Promise.all([client.close(), client.close()]);
      const check = await connect(`127.0.0.1:${server.port}`);
      try {
        assert.deepEqual(await check.committedOffsets('g', 'orders'), [100, 100]);
      } finally {
        await check.close();
      }
    } finally {
      await close();
    }
  });

  it("a FetchConsumer's bad option is refused with INVALID_ARGUMENT naming the value it got (a string shown quoted), as the Subscribe consumer's", async () => {
    const broker = await openBroker();
    const { client, close } = await fetchStack(broker);
    try {
      const bad: Array<[object, RegExp]> = [
        [{ from: 'first' }, /^from must be 'earliest', 'latest' or \{ offset \}, got "first"$/],
        [{ from: null }, /^from must be .*, got null$/],
        [{ from: { offset: -1 } }, /^from\.offset must be a non-negative safe integer, got -1$/],
        [{ from: { offset: '5' } }, /^from\.offset must be .*, got "5"$/],
        [{ maxBytes: '5' }, /^maxBytes must be an integer between 1 and \d+, got "5"$/],
        [{ maxWaitMs: NaN }, /^maxWaitMs must be .*, got NaN$/],
        [{ partitions: [0, 1.5] }, /^partitions must be an array of partition numbers, got \[0,1\.5\]$/],
        [{ partitions: '0' }, /^partitions must be .*, got "0"$/],
      ];
      for (const [opts, msg] of bad)
        assert.throws(
          () => client.consumer({ topic: 't', group: 'g', transport: 'fetch', ...opts } as never),
          (e: UringmqError) => e instanceof UringmqError && e.code === 'INVALID_ARGUMENT' && msg.test(e.message),
          JSON.stringify(opts),
        );
    } finally {
      await close();
    }
  });

  it('a FetchConsumer reads the options it was made with, whatever its caller does to its object afterwards (reused for the next consumer), as the Subscribe consumer does', async () => {
    const broker = await openBroker();
    const { client, close } = await fetchStack(broker);
    try {
      await client.createTopic('t', { partitions: 2 });
      await client.producer().send('t', { value: 'p0', partition: 0 });
      const o = { topic: 't', group: 'g', transport: 'fetch' as const, from: 'earliest' as 'earliest' | 'latest', partitions: [0], maxWaitMs: 50 };
      const c = client.consumer(o);
      // Changed after the checks, before the first iteration reads them.
      o.from = 'latest';
      o.partitions[0] = 1;
      const [m] = await take(c, 1, (x) => x.ack(), 5000);
      assert.equal(`${m!.partition}:${m!.offset}:${m!.value.toString()}`, '0:0:p0');
      assert.deepEqual(c.assignment, [0]);
      await c.close();
    } finally {
      await close();
    }
  });

  it('a FetchConsumer closed while it joins its group (its first iteration under way) leaves no commit timer running after close()', async () => {
    const broker = await openBroker();
    const { client, close } = await fetchStack(broker);
    try {
      await client.createTopic('orders', { partitions: 2 });
      for (const mode of ['member', 'partitions'] as const) {
        const c = client.consumer({ topic: 'orders', group: `g-${mode}`, transport: 'fetch', commitIntervalMs: 20, ...(mode === 'partitions' ? { partitions: [0, 1] } : {}) });
        const internals = c as unknown as { membership: unknown; parts: Map<number, unknown>; commit(): Promise<void> };
        let commits = 0;
        const commit = internals.commit.bind(c);
        internals.commit = () => (commits++, commit());
        const it = c[Symbol.asyncIterator]();
        const first = it.next().then(() => undefined, () => undefined);
        // Closed once the join is under way (member: its Subscribe stream open; partitions: its describe/committed look-ups).
        await waitFor(() => (mode === 'member' ? internals.membership !== null : true), 5000);
        if (mode === 'partitions') await new Promise((r) => setImmediate(r));
        await c.close();
        await first;
        commits = 0;
        await sleep(300);
        assert.equal(commits, 0, `${mode}: ${commits} commits from a timer left running after close()`);
      }
    } finally {
      await close();
    }
  });

  it('close() of a FetchConsumer reconnecting to a listener that went away returns at once: no waiting out a retry delay or a handshake timeout', async () => {
    const broker = await openBroker();
    const server = await BrokerServer.start({ broker, host: '127.0.0.1', port: 0 });
    const fsrv = await broker.startFetchServer({ port: 0 });
    const proxy = await tcpProxy(fsrv.port); // in front of the fetch listener
    const client = await connect(`127.0.0.1:${server.port}`, { fetchAddress: `127.0.0.1:${proxy.port}` });
    try {
      await broker.createTopic('t');
      await broker.producer().send('t', { value: 'a', partition: 0 });
      for (const [i, m] of (['silent', 'refuse'] as const).entries()) {
        proxy.mode = 'forward';
        const c = client.consumer({ topic: 't', group: `g${i}`, transport: 'fetch', from: 'earliest', maxWaitMs: 100 });
        const it = c[Symbol.asyncIterator]();
        const first = await it.next();
        first.value!.ack();
        const next = it.next().catch(() => undefined);
        proxy.mode = m;
        proxy.cut();
        await sleep(m === 'silent' ? 1500 : 7000); // refused: retries 100 ms apart, then 200, ... 3200, then 5000
        const t0 = Date.now();
        await c.close();
        const took = Date.now() - t0;
        await next;
        // (Waiting, it takes seconds: ~4 s of a 5 s retry delay, or ~8.5 s of the 10 s
        // handshake timeout. 55 ms here with the listener silent; ASan's build is slower.)
        assert.ok(took < 2000, `close() took ${took} ms with the listener ${m === 'silent' ? 'silent' : 'refusing'}`);
      }
    } finally {
      await client.close();
      await proxy.close();
      fsrv.close();
      await server.stop(2000);
      await broker.close();
    }
  });

  it('a FetchConsumer closed while its first connection waits for a listener that never answers ends its iteration at once, without an error', async () => {
    const broker = await openBroker();
    const server = await BrokerServer.start({ broker, host: '127.0.0.1', port: 0 });
    const silent = net.createServer((s) => void s.on('error', () => undefined).resume()); // accepts, never says hello
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const client = await connect(`127.0.0.1:${server.port}`, { fetchAddress: `127.0.0.1:${(silent.address() as net.AddressInfo).port}` });
    try {
      await broker.createTopic('t');
      const c = client.consumer({ topic: 't', group: 'g', transport: 'fetch', from: 'earliest' });
      const next = c[Symbol.asyncIterator]()
        .next()
        .then((r) => ({ done: r.done, error: undefined as unknown }), (error: unknown) => ({ done: undefined, error }));
      await sleep(300);
      const t0 = Date.now();
      await c.close();
      const r = await Promise.race([next, sleep(3000).then(() => 'still pending' as const)]);
      assert.notEqual(r, 'still pending', 'the iteration went on after close() (for the 10 s handshake timeout)');
      assert.deepEqual(r, { done: true, error: undefined }, `the iteration ended with ${String((r as { error: unknown }).error)}`);
      assert.ok(Date.now() - t0 < 3000);
    } finally {
      await client.close();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
      await server.stop(2000);
      await broker.close();
    }
  });

  it("a FetchConsumer keeps its fetches within the server's limits (its hello's maxFetchBytes and maxWaitMs), whatever its options ask", async () => {
    const broker = await openBroker();
    const server = await BrokerServer.start({ broker, host: '127.0.0.1', port: 0 });
    const fsrv = await broker.startFetchServer({ port: 0, maxWaitMs: 1000, maxFetchBytes: 1 << 20 });
    const client = await connect(`127.0.0.1:${server.port}`, { fetchAddress: `127.0.0.1:${fsrv.port}` });
    try {
      await broker.createTopic('t');
      await broker.producer().send('t', { value: 'a', partition: 0 });
      for (const [i, o] of [{ maxWaitMs: 120_000 }, { maxBytes: 128 << 20 }].entries()) {
        const c = client.consumer({ topic: 't', group: `g${i}`, transport: 'fetch', from: 'earliest', ...o });
        const got = await take(c, 1, (m) => m.ack(), 10_000);
        assert.deepEqual(got.map((m) => m.value.toString()), ['a']);
        await c.close();
      }
      assert.equal(fsrv.stats().badRequests, 0);
    } finally {
      await client.close();
      fsrv.close();
      await server.stop(2000);
      await broker.close();
    }
  });

  it('an idle FetchConsumer polls, not spins, when no long-poll is allowed (the server\'s maxWaitMs 0, or its own)', async () => {
    const broker = await openBroker();
    const server = await BrokerServer.start({ broker, host: '127.0.0.1', port: 0 });
    const fsrv = await broker.startFetchServer({ port: 0, maxWaitMs: 0 });
    const client = await connect(`127.0.0.1:${server.port}`, { fetchAddress: `127.0.0.1:${fsrv.port}` });
    try {
      await client.createTopic('idle');
      const c = client.consumer({ topic: 'idle', group: 'g', transport: 'fetch', partitions: [0] });
      const it = c[Symbol.asyncIterator]();
      const next = it.next();
      await sleep(300);
      const r0 = fsrv.stats().requests;
      await sleep(1000);
      const reqs = fsrv.stats().requests - r0;
      assert.ok(reqs > 0 && reqs < 50, `${reqs} fetches in one second by an idle consumer`);
      // Still delivers what comes.
      await client.producer().send('idle', { value: 'late', partition: 0 });
      const r = await next;
      assert.equal(r.value!.value.toString(), 'late');
      await it.return!();
    } finally {
      await client.close();
      await server.stop(2000);
      await broker.close();
    }
  });

  it('a FetchConsumer of more than 10 idle partitions raises no MaxListenersExceededWarning (each partition waits on the close signal)', async () => {
    const warnings: string[] = [];
    const onWarn = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarn);
    const broker = await openBroker();
    const server = await BrokerServer.start({ broker, host: '127.0.0.1', port: 0 });
    const fsrv = await broker.startFetchServer({ port: 0, maxWaitMs: 0 });
    const client = await connect(`127.0.0.1:${server.port}`, { fetchAddress: `127.0.0.1:${fsrv.port}` });
    try {
      await client.createTopic('idle16', { partitions: 16 });
      const c = client.consumer({ topic: 'idle16', group: 'g', transport: 'fetch' });
      void c[Symbol.asyncIterator]().next().catch(() => undefined);
      await sleep(1000);
      await c.close();
    } finally {
      process.off('warning', onWarn);
      await client.close();
      await server.stop(2000);
      await broker.close();
    }
    assert.deepEqual(warnings.filter((w) => w.startsWith('MaxListenersExceededWarning')), []);
  });

  it('a FetchConsumer reads through the fetch plane and resumes from committed offsets', async () => {
    const broker = await openBroker();
    const server = await BrokerServer.start({ broker, host: '127.0.0.1', port: 0 });
    const fsrv = await broker.startFetchServer({ port: 0 });
    const client = await connect(`127.0.0.1:${server.port}`, { fetchAddress: `127.0.0.1:${fsrv.port}` });
    try {
      await client.createTopic('orders', { partitions: 2 });
      const p = client.producer();
      for (const part of [0, 1]) await p.sendBatch('orders', Array.from({ length: 250 }, (_, i) => ({ value: `a${part}-${i}` })), { partition: part });
      const c1 = client.consumer({ topic: 'orders', group: 'g', from: 'earliest', transport: 'fetch', maxWaitMs: 100 });
      const seen = new Set<string>();
      for await (const batch of c1.batches()) {
        for (const m of batch) {
          seen.add(m.value.toString());
          m.ack(); // positions commit up to the acked frontier
        }
        if (seen.size === 500) break; // leaving the loop closes the consumer and commits
      }
      assert.equal(seen.size, 500);
      assert.ok(fsrv.stats().requests > 0);
      assert.deepEqual(await client.committedOffsets('g', 'orders'), [250, 250]);
      // The same group again: only what came after the commit.
      for (const part of [0, 1]) await p.sendBatch('orders', Array.from({ length: 5 }, (_, i) => ({ value: `b${part * 5 + i}` })), { partition: part });
      const c2 = client.consumer({ topic: 'orders', group: 'g', transport: 'fetch', maxWaitMs: 100 });
      const again: string[] = [];
      for await (const m of c2) {
        again.push(m.value.toString());
        if (again.length < 10) m.ack();
        if (again.length === 10) break; // the last one unacked: not committed
      }
      assert.deepEqual(again.sort(), Array.from({ length: 10 }, (_, i) => `b${i}`).sort());
      const cg = await client.committedOffsets('g', 'orders');
      assert.deepEqual(cg.sort(), [254, 255], 'acked messages are committed, the unacked one is not');
      // A new group starting at 'latest' sees nothing old; one partition only.
      const c3 = client.consumer({ topic: 'orders', group: 'h', transport: 'fetch', partitions: [1], maxWaitMs: 100 });
      const it = c3[Symbol.asyncIterator]();
      const next = it.next();
      // 'latest' is where the partition ends when the consumer looks (a describe after the
      // fetch handshake): publish only once it has its position.
      const positioned = Date.now() + 10_000;
      while (c3.positions.size === 0 && Date.now() < positioned) await sleep(10);
      await p.send('orders', { value: 'new', partition: 1 });
      const r = await next;
      assert.equal(r.value!.value.toString(), 'new');
      assert.equal(r.value!.partition, 1);
      r.value!.ack();
      await it.return!();
      assert.deepEqual(c3.assignment, [1]);
      assert.deepEqual((await client.committedOffsets('h', 'orders'))[1], 256);
      // A nack rewinds the partition: that message and the rest come again.
      const c4 = client.consumer({ topic: 'orders', group: 'n', from: 'earliest', transport: 'fetch', partitions: [0], maxWaitMs: 100 });
      const order: number[] = [];
      let nacked = false;
      for await (const m of c4) {
        order.push(m.offset);
        if (m.offset === 3 && !nacked) {
          nacked = true;
          m.nack();
        }
        if (order.length >= 12) break;
      }
      assert.deepEqual(order.slice(0, 8), [0, 1, 2, 3, 3, 4, 5, 6], 'offset 3 and what follows came again');
      await expectCode(
        (async () => {
          for await (const _ of client.consumer({ topic: 'nope', group: 'g', transport: 'fetch' })) break;
        })(),
        'TOPIC_NOT_FOUND',
      );
      // No fetch listener at the address: an error, not a consumer that looks idle for ever.
      const nowhere = await freePort();
      const t0 = Date.now();
      const err = await expectCode(
        (async () => {
          for await (const _ of client.consumer({ topic: 'orders', group: 'g', transport: 'fetch', fetchAddress: `127.0.0.1:${nowhere}` })) break;
        })(),
        'UNAVAILABLE',
      );
      assert.match(err.message, new RegExp(`127\\.0\\.0\\.1:${nowhere}.*fetch listener`));
      assert.ok(Date.now() - t0 < 10_000, 'refused at once, not after retries');
    } finally {
      await client.close();
      await server.stop(2000);
    }
    await expectCode(FetchConnection.open('127.0.0.1', fsrv.port), 'UNAVAILABLE'); // stopped with the broker
  });

  /** Makes `client[method]` fail once with `error`, then call through; `failed()`: that failure happened. */
  function failsOnce(client: object, method: 'describeTopic' | 'committedState' | 'commitOffset', error: UringmqError): { failed: () => boolean } {
    const c = client as Record<string, unknown>;
    const real = (c[method] as (...a: unknown[]) => Promise<unknown>).bind(client);
    let failures = 1;
    c[method] = (...a: unknown[]) => (failures-- > 0 ? Promise.reject(error) : real(...a));
    return { failed: () => failures < 0 };
  }

  for (const lookup of ['describeTopic', 'committedState'] as const)
    it(`a fetch member whose ${lookup} call fails for now (a connection dropped) while it takes up its assignment retries it and reads its partitions, instead of ending`, async () => {
      const { client, close } = await fetchStack(await openBroker());
      try {
        await client.createTopic('t', { partitions: 2 });
        const p = client.producer();
        for (const part of [0, 1]) await p.sendBatch('t', Array.from({ length: 20 }, (_, i) => ({ value: `${part}-${i}` })), { partition: part });
        // What a broker killed (or a connection cut) under the call gives: UNAVAILABLE,
        // the membership stream still up or already reconnected.
        const lookupCall = failsOnce(client, lookup, new UringmqError('UNAVAILABLE', 'Connection dropped'));
        const c = client.consumer({ topic: 't', group: 'g', from: 'earliest', transport: 'fetch', maxWaitMs: 50, commitIntervalMs: 50 });
        const seen = new Set<string>();
        const err = await (async () => {
          for await (const m of c) {
            seen.add(m.value.toString());
            m.ack();
            if (seen.size === 40) break;
          }
        })().then(() => null, (e: Error) => e);
        assert.equal(err, null, `the consumer ended with ${String(err)}`);
        assert.ok(lookupCall.failed(), `the ${lookup} call failed once, and was made again`);
        assert.equal(seen.size, 40);
        assert.deepEqual(await client.committedOffsets('g', 't'), [20, 20]);
      } finally {
        await close();
      }
    });

  for (const code of ['BROKER_CLOSED', 'IO_ERROR'] as const)
    it(`a FetchConsumer whose periodic commit is answered ${code} (a server shutting down, a disk refusing a write for now) goes on, and commits with a later round`, async () => {
      const { client, close } = await fetchStack(await openBroker());
      try {
        await client.createTopic('t', { partitions: 1 });
        const p = client.producer();
        await p.sendBatch('t', Array.from({ length: 20 }, (_, i) => ({ value: `a-${i}` })), { partition: 0 });
        const commit = failsOnce(client, 'commitOffset', new UringmqError(code, 'broker is closed'));
        const c = client.consumer({ topic: 't', group: 'g', from: 'earliest', transport: 'fetch', maxWaitMs: 50, commitIntervalMs: 50 });
        const seen = new Set<string>();
        const err = await (async () => {
          for await (const m of c) {
            seen.add(m.value.toString());
            m.ack();
            // The second half only once the failed commit round is over.
            if (seen.size === 20) {
              const t0 = Date.now();
              while (!commit.failed() && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 10));
              await p.sendBatch('t', Array.from({ length: 20 }, (_, i) => ({ value: `b-${i}` })), { partition: 0 });
            }
            if (seen.size === 40) break;
          }
        })().then(() => null, (e: Error) => e);
        assert.equal(err, null, `the consumer ended with ${String(err)}`);
        assert.ok(commit.failed(), 'a commit was answered with the error');
        assert.equal(seen.size, 40);
        assert.deepEqual(await client.committedOffsets('g', 't'), [40]);
      } finally {
        await close();
      }
    });

  it('a FetchConsumer started while the fetch listener is full waits for a slot (the listener answered: it is there)', async () => {
    const broker = await openBroker();
    const server = await BrokerServer.start({ broker, host: '127.0.0.1', port: 0 });
    const fsrv = await broker.startFetchServer({ port: 0, maxConnections: 1 });
    const client = await connect(`127.0.0.1:${server.port}`, { fetchAddress: `127.0.0.1:${fsrv.port}` });
    const hog = await FetchConnection.open('127.0.0.1', fsrv.port);
    try {
      await expectCode(FetchConnection.open('127.0.0.1', fsrv.port), 'RESOURCE_EXHAUSTED'); // full, as the consumer finds it
      await client.createTopic('t', { partitions: 1 });
      await client.producer().send('t', { value: 'x' });
      const c = client.consumer({ topic: 't', group: 'g', from: 'earliest', transport: 'fetch', partitions: [0], maxWaitMs: 100 });
      setTimeout(() => hog.close(), 500);
      for await (const m of c) {
        assert.equal(m.value.toString(), 'x');
        break;
      }
    } finally {
      hog.close();
      await client.close();
      await server.stop(2000);
      await broker.close();
    }
  });

  for (const [fresh, how] of [
    [30, 'its commit is refused (LOG_TRUNCATED)'],
    [10, 'its fetch past the new end'],
  ] as const) {
    it(`a FetchConsumer that outlives a power cut of the broker reads the ${fresh} messages producers wrote over the lost tail: ${how} makes it start over from the cut`, async () => {
      const dir = tmpDir();
      const durability = { intervalMs: 50 };
      let broker = await openBroker({ dir, durability });
      let server = await BrokerServer.start({ broker, host: '127.0.0.1', port: 0 });
      const fetchPort = (await broker.startFetchServer({ port: 0 })).port;
      const { port } = server;
      const client = await connect(`127.0.0.1:${port}`, { fetchAddress: `127.0.0.1:${fetchPort}` });
      await broker.createTopic('t');
      await publishOld(broker, 't', 0);
      const c = client.consumer({ topic: 't', group: 'fg', from: 'earliest', transport: 'fetch', partitions: [0], maxWaitMs: 100, commitIntervalMs: 50 });
      const seen = new Map<string, number>(); // value → offset
      const loop = (async () => {
        for await (const m of c) {
          seen.set(m.value.toString().split('-')[0]!, m.offset);
          m.ack();
        }
      })();
      try {
        const until = Date.now() + 10_000;
        while (seen.size < 40 && Date.now() < until) await sleep(20);
        while ((await broker.groups.committedOffsets('fg', 't'))[0] !== 40 && Date.now() < until) await sleep(20);
        const bytes = broker.partitionInfo(broker.partitionState('t', 0)).bytes;
        await server.stop(2000); // closes the broker too
        powerCut(dir, 't', [bytes]);
        broker = await openBroker({ dir, durability });
        const end = broker.partitionInfo(broker.partitionState('t', 0)).endOffset;
        assert.ok(end > 0 && end < 40, `end offset ${end}`);
        // 30: past the consumer's old position (40), whose next commit is refused; 10: short of it.
        for (let i = 0; i < fresh; i++) await broker.producer().send('t', { value: `new${i}` });
        server = await BrokerServer.start({ broker, host: '127.0.0.1', port });
        await broker.startFetchServer({ port: fetchPort });
        const missed = () => Array.from({ length: fresh }, (_, i) => `new${i}`).filter((v) => seen.get(v) !== end + Number(v.slice(3)));
        const until2 = Date.now() + 15_000;
        while (missed().length > 0 && Date.now() < until2) await sleep(50);
        assert.deepEqual(missed(), [], 'messages written over the lost tail were skipped');
        while ((await broker.groups.committedOffsets('fg', 't'))[0] !== end + fresh && Date.now() < until2) await sleep(20);
        assert.deepEqual(await broker.groups.committedOffsets('fg', 't'), [end + fresh]);
      } finally {
        await c.close();
        await loop.catch(() => undefined);
        await client.close();
        await server.stop(2000);
      }
    });
  }

  it('a partition taken from a FetchConsumer after a power cut is not committed past the cut: the member that gets it reads what was written over the lost tail', async () => {
    const dir = tmpDir();
    const durability = { intervalMs: 50 };
    let broker = await openBroker({ dir, durability });
    let server = await BrokerServer.start({ broker, host: '127.0.0.1', port: 0 });
    const fetchPort = (await broker.startFetchServer({ port: 0 })).port;
    const { port } = server;
    const client = await connect(`127.0.0.1:${port}`, { fetchAddress: `127.0.0.1:${fetchPort}` });
    const client2 = await connect(`127.0.0.1:${port}`, { fetchAddress: `127.0.0.1:${fetchPort}` });
    await broker.createTopic('t', { partitions: 2 });
    for (const p of [0, 1]) await publishOld(broker, 't', p);
    // Group member (no `partitions`); commits only when told to (and on assignment/revoke/close).
    const a = client.consumer({ topic: 't', group: 'fg', from: 'earliest', transport: 'fetch', maxWaitMs: 100, commitIntervalMs: 3_600_000 });
    const seen = [new Map<string, number>(), new Map<string, number>()];
    let openGate!: () => void;
    const gate = new Promise<void>((r) => (openGate = r));
    const loop = (async () => {
      for await (const m of a) {
        const v = m.value.toString().split('-')[0]!;
        seen[m.partition]!.set(v, m.offset);
        if (v.startsWith('new')) await gate; // the app is slow with the first new messages
        m.ack();
      }
    })();
    let b: FetchConsumer | undefined;
    let loopB: Promise<void> | undefined;
    try {
      const until = Date.now() + 10_000;
      while (seen[0]!.size + seen[1]!.size < 80 && Date.now() < until) await sleep(20);
      await sleep(100);
      await a.commit();
      assert.deepEqual(await broker.groups.committedOffsets('fg', 't'), [40, 40]);
      const bytes = [0, 1].map((p) => broker.partitionInfo(broker.partitionState('t', p)).bytes);
      await server.stop(2000);
      powerCut(dir, 't', bytes);
      broker = await openBroker({ dir, durability });
      const ends = [0, 1].map((p) => broker.partitionInfo(broker.partitionState('t', p)).endOffset);
      assert.ok(ends.every((e) => e > 10 && e < 40), `ends ${ends}`);
      for (const p of [0, 1]) for (let i = 0; i < 30; i++) await broker.producer().send('t', { value: `new${i}`, partition: p });
      server = await BrokerServer.start({ broker, host: '127.0.0.1', port });
      await broker.startFetchServer({ port: fetchPort });
      // A rejoins (its assignment's commit has nothing to commit: processed == committed == 40).
      const until1 = Date.now() + 10_000;
      while (Date.now() < until1) {
        const d = await client2.describeTopic('t').catch(() => null);
        if (d?.groups.find((g) => g.group === 'fg')?.members.length === 1 && a.assignment.length === 2) break;
        await sleep(50);
      }
      await sleep(500);
      openGate(); // A acks what it read at 40.. (new messages; those at ends..39 it skipped)
      await sleep(300);
      // B joins: A loses a partition and commits it on revoke.
      b = client2.consumer({ topic: 't', group: 'fg', transport: 'fetch', maxWaitMs: 100, commitIntervalMs: 50 });
      loopB = (async () => {
        for await (const m of b!) {
          seen[m.partition]!.set(m.value.toString().split('-')[0]!, m.offset);
          m.ack();
        }
      })();
      await sleep(1500);
      await a.commit(); // A's kept partition: refused, restarted from the cut (fine)
      const fresh = (p: number) => Array.from({ length: 30 }, (_, i) => `new${i}`).filter((v) => seen[p]!.get(v) !== ends[p]! + Number(v.slice(3)));
      const until2 = Date.now() + 8_000;
      while ((fresh(0).length > 0 || fresh(1).length > 0) && Date.now() < until2) await sleep(50);
      assert.deepEqual([fresh(0), fresh(1)], [[], []], 'messages written over the lost tail were skipped');
    } finally {
      await a.close();
      await b?.close();
      await loop.catch(() => undefined);
      await loopB?.catch(() => undefined);
      await client.close();
      await client2.close();
      await server.stop(2000);
    }
  });

  it('a FetchConsumer drops the acks of messages it read before it lost a partition, when it gets the partition back', async () => {
    const commits: Array<[number, number, number | undefined]> = [];
    let run = 1;
    let committed = 0;
    const fake = {
      address: '127.0.0.1:1', token: undefined, fetchAddress: '127.0.0.1:1', isClosed: false,
      describeTopic: async () => ({ partitions: [{ partition: 0, startOffset: 0, endOffset: 40 }] }),
      committedState: async () => ({ offsets: [committed], run }),
      commitOffset: async (_g: string, _t: string, p: number, o: number, r?: number) => { commits.push([p, o, r]); committed = o; },
      forget: () => undefined,
      grpcProbe: { answered: async () => true, timeoutMs: 1000 },
      bidi: () => { throw new Error('unused'); },
    };
    // Internals, driven by hand: no server behind the fake client.
    const c = new FetchConsumer(fake as never, { topic: 't', group: 'g', transport: 'fetch', partitions: [0] }) as unknown as {
      parts: Map<number, { generation: number; processed: number }>;
      addPartitions(list: number[]): Promise<void>;
      revoke(p: number): Promise<void>;
      ack(p: number, o: number, generation: number): void;
      commit(): Promise<void>;
    };
    await c.addPartitions([0]); // committed 0, run 1
    // run() hands the app a chunk of offsets 0..39 with this acker (fetch_consumer.ts run()):
    const g = c.parts.get(0)!.generation;
    const acker = { ack: (p: number, o: number) => c.ack(p, o, g) };
    // Power cut: run 2, the log cut at 20, the group's committed offset is 0. A rebalance
    // takes the partition away (nothing processed: no commit) and gives it back.
    run = 2;
    await c.revoke(0);
    await c.addPartitions([0]);
    assert.equal(c.parts.get(0)!.processed, 0);
    // The app now acks the old (lost) messages 20..39 it was still working on, then 0..19.
    for (let o = 20; o < 40; o++) acker.ack(0, o);
    for (let o = 0; o < 20; o++) acker.ack(0, o);
    await c.commit();
    // Offsets 20..39 now hold new messages this consumer has not processed.
    assert.deepEqual(commits, [], `committed ${JSON.stringify(commits)}: stale acks counted`);
  });

  it('a FetchConsumer that starts a partition over (fetched past its end) when the topic no longer has that partition drops it, as verifyTopic does, instead of a TypeError swallowed and the fetch retried every 100 ms for good', async () => {
    // Real fetch plane, fake gRPC side: partition 1 is described at offset 50 (the log
    // is empty: its fetch is past the end, and it starts over), and the look-up of that
    // restart finds the topic without it (made again with fewer partitions meanwhile).
    const broker = await openBroker();
    try {
      await broker.createTopic('t', { partitions: 2 });
      const fsrv = await broker.startFetchServer({ port: 0 });
      let lookups = 0; // committedState: once when the partitions are taken, then once per restart
      const fake = {
        address: '127.0.0.1:1', token: undefined, fetchAddress: `127.0.0.1:${fsrv.port}`, isClosed: false,
        describeTopic: async () => ({
          partitions: [{ partition: 0, startOffset: 0, endOffset: 0 }, ...(lookups < 2 ? [{ partition: 1, startOffset: 50, endOffset: 50 }] : [])],
        }),
        committedState: async () => (lookups++, { offsets: [-1, -1], run: 1 }),
        commitOffset: async () => undefined,
        forget: () => undefined,
        grpcProbe: { answered: async () => true, timeoutMs: 1000 },
        bidi: () => { throw new Error('unused'); },
      };
      const c = new FetchConsumer(fake as never, { topic: 't', group: 'g', transport: 'fetch', from: 'earliest', partitions: [0, 1], maxWaitMs: 50 });
      const it = c[Symbol.asyncIterator]();
      const err = await Promise.race([it.next().then(() => null, (e: unknown) => e), sleep(3000).then(() => 'still running')]);
      assert.ok(err instanceof UringmqError && err.code === 'INVALID_ARGUMENT', `${String(err)} after ${lookups - 1} restarts`);
      assert.match(err.message, /partition 1 does not exist in topic t/);
      assert.deepEqual(c.assignment, [0]);
      assert.equal(lookups, 2, 'one restart');
      await c.close();
      fsrv.close();
    } finally {
      await broker.close();
    }
  });

  it('a delayed nack of a message of a partition the FetchConsumer lost and got back meanwhile does not rewind the new holding (its fetched chunks were dropped, the pump stalled)', async () => {
    const fake = {
      address: '127.0.0.1:1', token: undefined, fetchAddress: '127.0.0.1:1', isClosed: false,
      describeTopic: async () => ({ partitions: [{ partition: 0, startOffset: 0, endOffset: 40 }] }),
      committedState: async () => ({ offsets: [0], run: 1 }),
      commitOffset: async () => undefined,
      forget: () => undefined,
      grpcProbe: { answered: async () => true, timeoutMs: 1000 },
      bidi: () => { throw new Error('unused'); },
    };
    type S = { generation: number; position: number; epoch: number; buffered: number; acker: { nack(p: number, o: number, d: number, n: number): void } };
    // Internals, driven by hand: no server behind the fake client (no pumps run).
    const c = new FetchConsumer(fake as never, { topic: 't', group: 'g', transport: 'fetch', partitions: [0] }) as unknown as {
      parts: Map<number, S>;
      chunks: Array<{ partition: number; epoch: number }>;
      addPartitions(list: number[]): Promise<void>;
      revoke(p: number): Promise<void>;
    };
    await c.addPartitions([0]);
    const old = c.parts.get(0)!;
    old.position = 40; // offsets 0..39 fetched and handed to the app
    // The app nacks offset 10 with a delay; meanwhile a rebalance takes the partition away and gives it back.
    old.acker.nack(0, 10, 100, 1);
    await c.revoke(0);
    await c.addPartitions([0]);
    const now = c.parts.get(0)!;
    assert.notEqual(now, old);
    // The new holding's pump fetched a chunk the app has not taken yet.
    now.position = 40;
    now.buffered = 1;
    const chunk = { partition: 0, raw: Buffer.alloc(0), from: 0, to: 40, epoch: now.epoch, acker: now.acker };
    c.chunks.push(chunk);
    const epoch = now.epoch;
    await sleep(300); // the nack's delay passes
    assert.equal(now.epoch, epoch, 'the new holding was rewound by a nack of the old one');
    assert.deepEqual(c.chunks, [chunk], "the new holding's fetched chunk was dropped (its buffered count kept: the pump waits for ever)");
    assert.equal(now.buffered, 1);
  });

  it("a FetchConsumer whose topic was deleted and made again under the same name commits none of the old topic's positions to the new one, and reads the new one from its start", async () => {
    const dir = tmpDir();
    let broker = await openBroker({ dir });
    let server = await BrokerServer.start({ broker, host: '127.0.0.1', port: 0 });
    let fsrv = await broker.startFetchServer({ port: 0 });
    const [port, fetchPort] = [server.port, fsrv.port];
    const client = await connect(`127.0.0.1:${port}`, { fetchAddress: `127.0.0.1:${fetchPort}` });
    try {
      // Made again while the consumer is connected: its close (or its next timed commit)
      // committed its positions in the old topic to the group on the new one, whose
      // first 10 messages of each partition nobody had read.
      for (const partitions of [undefined, [0, 1]]) {
        await broker.createTopic('re', { partitions: 2 });
        for (let i = 0; i < 20; i++) await broker.producer().send('re', { partition: i % 2, value: `old${i}` });
        const c = client.consumer({ topic: 're', group: 'g', from: 'earliest', transport: 'fetch', commitIntervalMs: 3_600_000, ...(partitions ? { partitions } : {}) });
        await take(c, 20);
        await client.deleteTopic('re');
        await client.createTopic('re', { partitions: 2 });
        for (let i = 0; i < 40; i++) await broker.producer().send('re', { partition: i % 2, value: `new${i}` });
        await c.close();
        assert.deepEqual(await client.committedOffsets('g', 're'), [-1, -1], `partitions ${JSON.stringify(partitions)}`);
        await client.deleteTopic('re');
      }
      // Made again while the broker was down: the consumer reconnects to the new topic
      // and reads it from the start (the group has no offsets there), not from where it
      // was in the old one (offset 20: new20 came first).
      await broker.createTopic('re');
      for (let i = 0; i < 20; i++) await broker.producer().send('re', { value: `old${i}` });
      const c = client.consumer({ topic: 're', group: 'h', from: 'earliest', transport: 'fetch', partitions: [0] });
      const it = c[Symbol.asyncIterator]();
      const next = async (n: number): Promise<string[]> => {
        const out: string[] = [];
        while (out.length < n) {
          const r = await it.next();
          if (r.done) break;
          r.value.ack();
          out.push(r.value.value.toString());
        }
        return out;
      };
      assert.equal((await next(20)).length, 20);
      await server.stop(2000);
      await broker.close();
      broker = await openBroker({ dir });
      await broker.deleteTopic('re');
      await broker.createTopic('re');
      for (let i = 0; i < 25; i++) await broker.producer().send('re', { value: `new${i}` });
      server = await BrokerServer.start({ broker, host: '127.0.0.1', port });
      fsrv = await broker.startFetchServer({ port: fetchPort });
      assert.deepEqual(await next(5), ['new0', 'new1', 'new2', 'new3', 'new4']);
      await c.close();
      assert.deepEqual(await client.committedOffsets('h', 're'), [5]);
    } finally {
      await client.close();
      await server.stop(2000);
      await broker.close();
    }
  });

  it("a FetchConsumer closed after its topic was made again, unnoticed while the app held its prefetched chunks, commits nothing of the old topic to the new one", async () => {
    const broker = await openBroker();
    const { client, close } = await fetchStack(broker);
    try {
      await broker.createTopic('re');
      for (let i = 0; i < 30; i++) await broker.producer().send('re', { value: `old${i}` });
      // One batch per fetch: the pump stops at PREFETCH chunks and sends no fetch that
      // would find the topic deleted.
      const c = client.consumer({ topic: 're', group: 'g', from: 'earliest', transport: 'fetch', commitIntervalMs: 3_600_000, partitions: [0], maxBytes: 1 });
      const it = c[Symbol.asyncIterator]();
      for (let i = 0; i < 5; i++) ((await it.next()).value as { ack(): void }).ack();
      // Its pump has its PREFETCH (2) chunks, offsets 5 and 6, and waits for the app.
      await waitFor(() => (c as FetchConsumer).positions.get(0) === 7);
      await client.deleteTopic('re');
      await client.createTopic('re');
      for (let i = 0; i < 40; i++) await broker.producer().send('re', { value: `new${i}` });
      // Its close commits: its position in the old topic (5) would skip new0..new4 for the group.
      await c.close();
      assert.deepEqual(await client.committedOffsets('g', 're'), [-1]);
    } finally {
      await close();
    }
  });

  for (const backend of BACKENDS) {
    it(`a FetchConsumer positioned in a topic that is deleted and made again hands the app no record of the new topic read at its old positions: it starts the new one over from its start (${backend})`, async () => {
      const broker = await openBroker();
      const { client, close } = await fetchStack(broker, { ioBackend: backend });
      try {
        await broker.createTopic('inc');
        for (let i = 0; i < 30; i++) await broker.producer().send('inc', { value: `old${i}` });
        // One batch per fetch, and no commit round before the end: only the fetches can
        // tell the consumer that the topic is another one.
        const c = client.consumer({ topic: 'inc', group: 'g', from: 'earliest', transport: 'fetch', commitIntervalMs: 3_600_000, partitions: [0], maxBytes: 1 });
        const it = c[Symbol.asyncIterator]();
        const seen: string[] = [];
        const next = async () => {
          const r = await it.next();
          assert.ok(!r.done, `the consumer ended after ${JSON.stringify(seen)}`);
          r.value.ack();
          seen.push(r.value.value.toString());
        };
        for (let i = 0; i < 5; i++) await next();
        // Its pump holds its PREFETCH (2) chunks, offsets 5 and 6, and waits for the app:
        // no fetch is parked that the delete would answer.
        await waitFor(() => (c as FetchConsumer).positions.get(0) === 7);
        await client.deleteTopic('inc');
        await client.createTopic('inc');
        for (let i = 0; i < 40; i++) await broker.producer().send('inc', { value: `new${i}` });
        while (seen.filter((v) => v.startsWith('new')).length < 10) await next();
        // The old topic's prefetched messages may come (they are of the topic the consumer
        // was positioned in); then the new topic from its start (the group has no offsets
        // there), never new7.. read at the old positions.
        const old = seen.filter((v) => v.startsWith('old'));
        assert.deepEqual(old, Array.from({ length: old.length }, (_, i) => `old${i}`), `the app was handed ${JSON.stringify(seen)}`);
        assert.deepEqual(seen.slice(old.length), Array.from({ length: 10 }, (_, i) => `new${i}`), `the app was handed ${JSON.stringify(seen)}`);
        await c.close();
        assert.deepEqual(await client.committedOffsets('g', 'inc'), [10], 'what it processed of the new topic');
      } finally {
        await close();
      }
    });
  }

  for (const backend of BACKENDS) {
    it(`a FetchConsumer whose fetch waits at the end of its partition when the topic is deleted ends with TOPIC_NOT_FOUND naming it, not at the end of its wait nor retrying (${backend})`, async () => {
      const broker = await openBroker();
      const { fsrv, client, close } = await fetchStack(broker, { ioBackend: backend });
      try {
        for (const partitions of [[0], undefined]) {
          await broker.createTopic('gone');
          const c = client.consumer({ topic: 'gone', group: 'g', from: 'earliest', transport: 'fetch', maxWaitMs: 30_000, ...(partitions ? { partitions } : {}) });
          let timer: NodeJS.Timeout | undefined;
          const ended = Promise.race([
            c[Symbol.asyncIterator]()
              .next()
              .then(
                (r) => (r.done ? 'done' : `a message: ${r.value.value.toString()}`),
                (e: UringmqError) => `${e.code}: ${e.message}`,
              ),
            // Far inside its 30 s wait: a fetch the delete does not answer is still waiting here.
            new Promise<string>((resolve) => (timer = setTimeout(() => resolve('still waiting after 10 s'), 10_000))),
          ]);
          await waitFor(() => fsrv.stats().parked === 1);
          await client.deleteTopic('gone');
          const r = await ended;
          clearTimeout(timer);
          assert.match(r, /^TOPIC_NOT_FOUND: .*\bgone\b/, `partitions ${JSON.stringify(partitions)}`);
          await c.close();
          assert.equal(fsrv.stats().parked, 0);
        }
      } finally {
        await close();
      }
    });
  }

  it("a FetchConsumer of a topic whose topic.json has no usable createdAt (a string, a fraction: restored by hand) reads it: the broker gives the topic an incarnation, and describeTopic reports the one the fetch plane registered", async () => {
    const dir = tmpDir();
    for (const bad of ['2024-01-01', 1_700_000_000_000.5]) {
      let broker = await openBroker({ dir });
      await broker.createTopic('odd');
      for (let i = 0; i < 5; i++) await broker.producer().send('odd', { value: `m${i}` });
      await broker.close();
      const file = path.join(dir, 'topics', 'odd', 'topic.json');
      fs.writeFileSync(file, JSON.stringify({ ...(JSON.parse(fs.readFileSync(file, 'utf8')) as object), createdAt: bad }));
      broker = await openBroker({ dir });
      const { fsrv, client, close } = await fetchStack(broker);
      try {
        // Over gRPC (an int64) the raw value would arrive as 2024 or 1700000000000: an
        // incarnation the partition was not registered with.
        const given = (await client.describeTopic('odd')).createdAt;
        assert.ok(Number.isSafeInteger(given) && given > 1_700_000_000_000, `createdAt ${given} for ${JSON.stringify(bad)}`);
        assert.equal((await broker.describeTopic('odd')).createdAt, given);
        const c = client.consumer({ topic: 'odd', group: 'g', from: 'earliest', transport: 'fetch', partitions: [0] });
        // Before: every fetch refused TOPIC_INCARNATION_MISMATCH, restarted, refused again (a
        // busy loop of fetches, describeTopic and committed-offset calls), nothing read.
        assert.deepEqual((await take(c, 5, undefined, 5000)).map((m) => m.value.toString()), ['m0', 'm1', 'm2', 'm3', 'm4'], `createdAt ${JSON.stringify(bad)}`);
        assert.ok(fsrv.stats().requests < 50, `${fsrv.stats().requests} fetches for 5 messages`);
        await c.close();
        await client.deleteTopic('odd');
      } finally {
        await close();
      }
    }
  });

  it("a topic whose topic.json has no createdAt (an older release's, restored by hand) is given one when the broker opens it, kept across restarts: a FetchConsumer positioned in it when it is deleted and made again hands the app no record of the new topic read at its old positions", async () => {
    const dir = tmpDir();
    let broker = await openBroker({ dir });
    await broker.createTopic('inc');
    for (let i = 0; i < 30; i++) await broker.producer().send('inc', { value: `old${i}` });
    await broker.close();
    const file = path.join(dir, 'topics', 'inc', 'topic.json');
    const { createdAt: _, ...withoutCreatedAt } = JSON.parse(fs.readFileSync(file, 'utf8')) as { createdAt: number };
    fs.writeFileSync(file, JSON.stringify(withoutCreatedAt));
    broker = await openBroker({ dir });
    const given = (await broker.describeTopic('inc')).createdAt;
    assert.ok(given > 0, `createdAt ${given}: an incarnation the fetches can name`);
    assert.equal((JSON.parse(fs.readFileSync(file, 'utf8')) as { createdAt: unknown }).createdAt, given, 'written to topic.json');
    await broker.close();
    broker = await openBroker({ dir });
    assert.equal((await broker.describeTopic('inc')).createdAt, given, 'the same after a restart');
    const { client, close } = await fetchStack(broker);
    try {
      // As the test of a topic made again above: one batch per fetch, no commit round
      // before the end, so only the fetches can tell the consumer.
      const c = client.consumer({ topic: 'inc', group: 'g', from: 'earliest', transport: 'fetch', commitIntervalMs: 3_600_000, partitions: [0], maxBytes: 1 });
      const it = c[Symbol.asyncIterator]();
      const seen: string[] = [];
      const next = async () => {
        const r = await it.next();
        assert.ok(!r.done, `the consumer ended after ${JSON.stringify(seen)}`);
        r.value.ack();
        seen.push(r.value.value.toString());
      };
      for (let i = 0; i < 5; i++) await next();
      await waitFor(() => (c as FetchConsumer).positions.get(0) === 7);
      await client.deleteTopic('inc');
      await client.createTopic('inc');
      for (let i = 0; i < 40; i++) await broker.producer().send('inc', { value: `new${i}` });
      while (seen.filter((v) => v.startsWith('new')).length < 10) await next();
      const old = seen.filter((v) => v.startsWith('old'));
      assert.deepEqual(old, Array.from({ length: old.length }, (_, i) => `old${i}`), `the app was handed ${JSON.stringify(seen)}`);
      assert.deepEqual(seen.slice(old.length), Array.from({ length: 10 }, (_, i) => `new${i}`), `the app was handed ${JSON.stringify(seen)}`);
      await c.close();
    } finally {
      await close();
    }
  });

  it("a FetchConsumer whose fetchAddress is another broker's fetch listener (a topic of the same name, another incarnation) fails with FAILED_PRECONDITION naming it, instead of refetching for good", async () => {
    const a = await openBroker();
    const b = await openBroker();
    const { client, close } = await fetchStack(a);
    const other = await b.startFetchServer({ port: 0 });
    try {
      await a.createTopic('same');
      await sleep(5); // another millisecond: another createdAt
      await b.createTopic('same');
      for (let i = 0; i < 3; i++) await b.producer().send('same', { value: `b${i}` });
      const wrong = await connect(client.address, { fetchAddress: `127.0.0.1:${other.port}` });
      try {
        const c = wrong.consumer({ topic: 'same', group: 'g', from: 'earliest', transport: 'fetch', partitions: [0] });
        // Before: refused, described (the same createdAt), restarted, refused again, for good.
        const e = await expectCode(take(c, 1, undefined, 15_000), 'FAILED_PRECONDITION');
        assert.match(e.message, /fetchAddress/);
        assert.ok(other.stats().requests < 50, `${other.stats().requests} fetches`);
        await c.close();
      } finally {
        await wrong.close();
      }
    } finally {
      other.close();
      await close();
      await b.close();
    }
  });

  it('fetch consumers of one group share its partitions, and take over those of a member that leaves', async () => {
    const broker = await openBroker();
    const server = await BrokerServer.start({ broker, host: '127.0.0.1', port: 0 });
    const fsrv = await broker.startFetchServer({ port: 0 });
    const client = await connect(`127.0.0.1:${server.port}`, { fetchAddress: `127.0.0.1:${fsrv.port}` });
    try {
      await client.createTopic('shared', { partitions: 4 });
      const p = client.producer();
      const send = async (tag: string) => {
        for (let part = 0; part < 4; part++) await p.sendBatch('shared', Array.from({ length: 100 }, (_, i) => ({ value: `${tag}-${part}-${i}` })), { partition: part });
      };
      await send('a');
      const seen = [new Set<string>(), new Set<string>()];
      const consumers = [0, 1].map(() => client.consumer({ topic: 'shared', group: 'fg', from: 'earliest', transport: 'fetch', maxWaitMs: 50 }));
      const loops = consumers.map((c, k) =>
        (async () => {
          for await (const batch of c.batches()) for (const m of batch) {
            seen[k]!.add(m.value.toString());
            m.ack();
          }
        })(),
      );
      await waitFor(() => seen[0]!.size + seen[1]!.size >= 400 && consumers.every((c) => c.assignment.length === 2), 15_000);
      assert.deepEqual([...consumers[0]!.assignment, ...consumers[1]!.assignment].sort(), [0, 1, 2, 3], 'disjoint, and all of them');
      assert.equal(new Set([...seen[0]!, ...seen[1]!]).size, 400);
      const d = await client.describeTopic('shared');
      const members = d.groups.find((g) => g.group === 'fg')!.members;
      assert.equal(members.length, 2);
      assert.deepEqual(members.map((m) => m.memberId).sort(), consumers.map((c) => c.memberId!).sort());
      // One leaves (committing what it processed): the other takes all four.
      await consumers[0]!.close();
      await loops[0];
      await waitFor(() => consumers[1]!.assignment.length === 4, 15_000);
      await send('b');
      const b = () => [...seen[1]!].filter((v) => v.startsWith('b-')).length;
      await waitFor(() => b() === 400, 15_000);
      assert.equal(b(), 400, 'every message after the hand-over reached the remaining member');
      await consumers[1]!.close();
      await loops[1];
      assert.deepEqual(await client.committedOffsets('fg', 'shared'), [200, 200, 200, 200]);
    } finally {
      await client.close();
      await server.stop(2000);
    }
  });

  it('after await close() of a FetchConsumer its group member is gone: a deleteGroup issued right after it is not refused for members', async () => {
    const broker = await openBroker();
    const server = await BrokerServer.start({ broker, host: '127.0.0.1', port: 0 });
    const fsrv = await broker.startFetchServer({ port: 0 });
    const client = await connect(`127.0.0.1:${server.port}`, { fetchAddress: `127.0.0.1:${fsrv.port}` });
    try {
      await client.createTopic('t');
      await client.producer().sendBatch('t', Array.from({ length: 10 }, (_, i) => ({ value: `m${i}` })), { partition: 0 });
      const refused: string[] = [];
      for (let round = 0; round < 3; round++) {
        const c = client.consumer({ topic: 't', group: `g${round}`, from: 'earliest', transport: 'fetch', maxWaitMs: 50 });
        assert.equal((await take(c, 1)).length, 1);
        await c.close();
        await client.deleteGroup(`g${round}`, 't').catch((e: unknown) => refused.push(`round ${round}: ${String(e)}`));
      }
      assert.deepEqual(refused, [], 'deleteGroup right after close() failed');
    } finally {
      await client.close();
      await server.stop(2000);
    }
  });

  it("a FetchConsumer's iterator returned while its next() waits for messages, or thrown into, leaves the group, as the Subscribe consumer's does; a second iteration is refused when it is asked for", async () => {
    const broker = await openBroker();
    const { client, close } = await fetchStack(broker);
    try {
      await client.createTopic('t');
      const members = async (group: string) => (await client.describeTopic('t')).groups.find((x) => x.group === group)?.members.length ?? 0;
      const until = async (group: string, n: number) => {
        for (let i = 0; i < 100 && (await members(group)) !== n; i++) await sleep(50);
        return members(group);
      };
      for (const how of ['messages', 'batches'] as const) {
        const c = client.consumer({ topic: 't', group: `wait-${how}`, transport: 'fetch', maxWaitMs: 50 });
        const it: AsyncIterator<unknown> = how === 'messages' ? c[Symbol.asyncIterator]() : c.batches()[Symbol.asyncIterator]();
        const waiting = it.next();
        assert.equal(await until(`wait-${how}`, 1), 1, 'joined on iteration');
        const returned = it.return!(undefined);
        assert.equal((await within(10_000, `${how}: the waiting next() after return()`, waiting)).done, true);
        assert.equal((await within(10_000, `${how}: return()`, returned)).done, true);
        assert.equal(await until(`wait-${how}`, 0), 0, `${how}: the member of the returned iterator stayed in the group`);
      }
      const t = client.consumer({ topic: 't', group: 'thrown', transport: 'fetch', maxWaitMs: 50 });
      const it = t[Symbol.asyncIterator]();
      const waiting = it.next();
      waiting.catch(() => undefined);
      assert.equal(await until('thrown', 1), 1, 'joined on iteration');
      const boom = new Error('boom');
      await within(10_000, 'throw()', assert.rejects(it.throw!(boom), (e) => e === boom));
      assert.equal(await until('thrown', 0), 0, 'the member of the iterator thrown into stayed in the group');
      // Iterated once: the second iterator is refused when asked for, as the Subscribe consumer's.
      const once = client.consumer({ topic: 't', group: 'once', transport: 'fetch' });
      once[Symbol.asyncIterator]();
      assert.throws(() => once[Symbol.asyncIterator](), (e: UringmqError) => e.code === 'INVALID_ARGUMENT');
      assert.throws(() => once.batches(), (e: UringmqError) => e.code === 'INVALID_ARGUMENT');
      await once.close();
    } finally {
      await close();
    }
  });

  it('a second close() of a FetchConsumer waits for the first: its member is gone once either resolves, and a client.close() right behind a close() keeps its final commit', async () => {
    const broker = await openBroker();
    const { client, close } = await fetchStack(broker);
    try {
      await client.createTopic('t');
      await client.producer().sendBatch('t', Array.from({ length: 10 }, (_, i) => ({ value: `m${i}` })), { partition: 0 });
      const c = client.consumer({ topic: 't', group: 'g', from: 'earliest', transport: 'fetch', maxWaitMs: 50 });
      assert.equal((await take(c, 3)).length, 3);
      const first = c.close();
      await c.close(); // returned at once, the member still in the group
      await client.deleteGroup('g', 't');
      await first;
      // client.close() closes the consumers it has, with close() again: it went on to
      // close the channel under the commit the first close() was about to send.
      const c2 = client.consumer({ topic: 't', group: 'g2', from: 'earliest', transport: 'fetch', maxWaitMs: 50 });
      assert.equal((await take(c2, 4)).length, 4);
      const closing = c2.close();
      await client.close();
      await closing;
      assert.deepEqual(await broker.committedOffsets('g2', 't'), [4]);
    } finally {
      await close();
    }
  });

  it("a fetch member's commit of a partition it lost to a Subscribe member (its revocation commit, landing late) acks what it processed, and rewinds nothing the new owner was delivered", async () => {
    const { client, fsrv, close } = await fetchStack(await openBroker());
    const fclient = await connect(client.address, { fetchAddress: `127.0.0.1:${fsrv.port}` });
    let open = () => {};
    try {
      await client.createTopic('moved', { partitions: 2 });
      const p = client.producer();
      for (let part = 0; part < 2; part++) await p.sendBatch('moved', Array.from({ length: 200 }, (_, i) => ({ value: `${part}-${i}` })), { partition: part });
      // The fetch member's commits of partition 1 wait at a gate (a slow network, a busy process).
      const gate = new Promise<void>((r) => (open = r));
      const commitOffset = fclient.commitOffset.bind(fclient);
      let held = 0;
      const landed: Array<Promise<void>> = [];
      fclient.commitOffset = (...a: Parameters<typeof commitOffset>) => {
        if (a[2] !== 1 || a[3] === 0) return commitOffset(...a);
        held++;
        const r = gate.then(() => commitOffset(...a));
        landed.push(r.catch(() => undefined));
        return r;
      };
      const f = fclient.consumer({ topic: 'moved', group: 'g', from: 'earliest', transport: 'fetch', maxWaitMs: 50, commitIntervalMs: 3_600_000 });
      let fAcked = 0;
      const fl = (async () => {
        for await (const m of f) {
          if (m.partition === 1 && m.offset >= 50) continue; // processes 50 of partition 1's 200
          m.ack();
          if (m.partition === 1) fAcked++;
        }
      })();
      await waitFor(() => f.assignment.length === 2 && fAcked === 50, 15_000);
      // A Subscribe member joins: partition 1 is its now; it reads and acks all of it.
      const s = client.consumer({ topic: 'moved', group: 'g', from: 'earliest' });
      const got: Array<{ offset: number; redelivered: boolean }> = [];
      const sl = (async () => {
        for await (const m of s) {
          if (m.partition === 1) got.push({ offset: m.offset, redelivered: m.redelivered });
          m.ack();
        }
      })();
      let committed = -1;
      const poll = async () => (committed = (await client.committedOffsets('g', 'moved'))[1]!);
      for (let i = 0; i < 300 && (await poll()) !== 200; i++) await sleep(50);
      assert.equal(committed, 200);
      await waitFor(() => held > 0, 15_000); // the fetch member's revocation commit, of 50
      open();
      await Promise.all(landed);
      assert.equal(await poll(), 200, 'the late commit of 50 did not move the committed offset back');
      await p.sendBatch('moved', [{ value: 'next' }], { partition: 1 });
      await waitFor(() => got.some((g) => g.offset === 200), 15_000);
      await s.close();
      await sl;
      await f.close();
      await fl;
      assert.deepEqual(
        got.map((g) => g.offset),
        Array.from({ length: 201 }, (_, i) => i),
        'each message of partition 1 reached the Subscribe member once, in order',
      );
    } finally {
      open();
      await fclient.close();
      await close();
    }
  });

  it('a FetchConsumer whose group members come and go keeps a fetch loop per partition it holds, not one per partition it was ever given', async () => {
    const { client, close } = await fetchStack(await openBroker());
    try {
      await client.createTopic('churn', { partitions: 4 });
      const a = client.consumer({ topic: 'churn', group: 'fg', from: 'earliest', transport: 'fetch', maxWaitMs: 50 });
      const loop = (async () => {
        for await (const m of a) m.ack();
      })();
      const pumps = () => (a as unknown as { pumps: Set<Promise<void>> }).pumps.size;
      await waitFor(() => a.assignment.length === 4, 15_000);
      // Each member that joins takes two partitions from `a` and gives them back when it leaves.
      for (let i = 0; i < 10; i++) {
        const b = client.consumer({ topic: 'churn', group: 'fg', from: 'earliest', transport: 'fetch', maxWaitMs: 50 });
        const bl = (async () => {
          for await (const m of b) m.ack();
        })();
        await waitFor(() => a.assignment.length === 2 && b.assignment.length === 2, 15_000);
        await b.close();
        await bl;
        await waitFor(() => a.assignment.length === 4, 15_000);
      }
      // The loops of the partitions taken away end (their connections close at once).
      await waitFor(() => pumps() <= 4, 5000).catch(() => undefined);
      assert.equal(pumps(), 4, 'one fetch loop per partition held');
      await a.close();
      await loop;
    } finally {
      await close();
    }
  });

  it('with an auth token, gRPC calls and fetch hellos without it are refused', async () => {
    const broker = await openBroker();
    const server = await BrokerServer.start({ broker, host: '127.0.0.1', port: 0, authToken: 's3cret' });
    const fsrv = await broker.startFetchServer({ port: 0, authToken: 's3cret' });
    const anon = await connect(`127.0.0.1:${server.port}`);
    const wrong = await connect(`127.0.0.1:${server.port}`, { token: 'nope' });
    const good = await connect(`127.0.0.1:${server.port}`, { token: 's3cret', fetchAddress: `127.0.0.1:${fsrv.port}` });
    try {
      await expectCode(anon.listTopics(), 'UNAUTHENTICATED');
      await expectCode(wrong.createTopic('x'), 'UNAUTHENTICATED');
      await good.createTopic('x');
      await good.producer().send('x', { value: 'hi' });
      await expectCode(FetchConnection.open('127.0.0.1', fsrv.port), 'UNAUTHENTICATED');
      await expectCode(FetchConnection.open('127.0.0.1', fsrv.port, 'nope'), 'UNAUTHENTICATED');
      const c = good.consumer({ topic: 'x', group: 'g', from: 'earliest', transport: 'fetch', maxWaitMs: 100 });
      for await (const m of c) {
        assert.equal(m.value.toString(), 'hi');
        break;
      }
      // The Subscribe transport too.
      const sub = anon.consumer({ topic: 'x', group: 'g2', from: 'earliest' });
      await expectCode(
        (async () => {
          for await (const _ of sub) break;
        })(),
        'UNAUTHENTICATED',
      );
    } finally {
      await Promise.all([anon.close(), wrong.close(), good.close()]);
      await server.stop(2000);
    }
  });

  it('answers a long-poll on a deleted topic, and stops with the broker', async () => {
    const broker = await openBroker();
    await broker.createTopic('gone');
    const before = fdCount() + anonFdCount();
    const fsrv = await broker.startFetchServer({ port: 0 });
    await expectCode(broker.startFetchServer({ port: 0 }), 'INVALID_ARGUMENT'); // one per broker
    const c = await FetchConnection.open('127.0.0.1', fsrv.port);
    const waiting = c.fetch('gone', 0, 0, 1000, 10_000);
    await waitFor(() => fsrv.stats().parked === 1);
    const t0 = Date.now();
    await broker.deleteTopic('gone');
    const r = await waiting;
    assert.equal(fetchErrorName(r.header.error), 'UNKNOWN_TOPIC_OR_PARTITION');
    assert.ok(Date.now() - t0 < 3000, 'answered when the topic went, not at the deadline');
    await broker.createTopic('gone'); // a new topic of the same name is a different log
    await broker.producer().send('gone', { value: 'new' });
    const fresh = await c.fetch('gone', 0, 0, 1000, 0);
    assert.equal(decodeBatches(fresh.data)[0]!.value.toString(), 'new');
    await broker.close();
    assert.ok(fsrv.closed);
    await expectCode(c.fetch('gone', 0, 0, 1000, 0), 'UNAVAILABLE');
    await expectCode(FetchConnection.open('127.0.0.1', fsrv.port), 'UNAVAILABLE');
    // Its listener, eventfd, ring or epoll, pipes and connections are all closed.
    c.close();
    await waitFor(() => fdCount() + anonFdCount() <= before);
  });

  it('uringmq serve starts it (--fetch-port), and --no-fetch does not', async () => {
    const dir = tmpDir();
    let srv = await spawnServer(dir, 0, ['--fetch-port', '0']);
    try {
      const m = /"fetchPort":(\d+)/.exec(srv.logs());
      assert.ok(m, srv.logs());
      const port = Number(m[1]);
      assert.notEqual(port, DEFAULT_FETCH_PORT);
      const c = await FetchConnection.open('127.0.0.1', port);
      assert.equal(fetchErrorName((await c.fetch('none', 0, 0, 10, 0)).header.error), 'UNKNOWN_TOPIC_OR_PARTITION');
      c.close();
    } finally {
      srv.child.kill('SIGTERM');
      assert.equal((await srv.exited).code, 0);
    }
    srv = await spawnServer(dir, 0, ['--no-fetch']);
    try {
      assert.doesNotMatch(srv.logs(), /fetchPort/);
    } finally {
      srv.child.kill('SIGTERM');
      await srv.exited;
    }
  });
});

/** Moves a shell into a network namespace of its own: loopback up, TCP send buffers capped at 128 KiB (a slow link's, not loopback's MiBs). */
const NETNS_SETUP = "ip link set lo up && sysctl -q -w net.ipv4.tcp_wmem='4096 16384 131072'";
/** The unshare(1) flags that make such a namespace here (`-rn` without root), or null where none can be made. */
function netnsFlags(): string | null {
  for (const flags of ['-n', '-rn']) {
    const probe = spawnSync('unshare', [flags, 'sh', '-c', NETNS_SETUP], { stdio: 'ignore', timeout: 10_000 });
    if (probe.status === 0) return flags;
  }
  return null;
}

/**
 * Makes room for `want` open files in this process (soft RLIMIT_NOFILE up to the
 * hard limit, with prlimit(1) where the soft limit is lower) and returns how many
 * client connections fit (each costs this process two fds: client and server side).
 */
function raiseFdLimit(want: number): number {
  const limits = fs.readFileSync('/proc/self/limits', 'utf8');
  const m = /Max open files\s+(\d+|unlimited)\s+(\d+|unlimited)/.exec(limits);
  let soft = m && m[1] !== 'unlimited' ? Number(m[1]) : Infinity;
  const hard = m && m[2] !== 'unlimited' ? Number(m[2]) : Infinity;
  if (soft < want && hard > soft) {
    try {
      const to = Math.min(want, hard);
      execFileSync('prlimit', ['--pid', String(process.pid), `--nofile=${to}:${hard === Infinity ? 'unlimited' : hard}`]);
      soft = to;
    } catch {
      // no prlimit here: use what we have
    }
  }
  return Math.max(100, Math.floor((soft - fdCount() - 200) / 2));
}
