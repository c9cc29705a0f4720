import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawn as spawnChild } from './fixtures/children';
import { Broker, encodeBatch, sealBatch, type BrokerOptions, type ConsumedMessage, type GroupConsumerApi, type ProducerApi, type ProducerRecord, type UringmqError } from '../src';

const made: string[] = [];

/** A fresh temp dir, removed after the test file finishes. */
export function tmpDir(prefix = 'uringmq-test-'): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(d);
  return d;
}

export function cleanupTmpDirs(): void {
  for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true });
}

/** Opens a broker; the I/O backend comes from URINGMQ_IO_BACKEND (CI runs both). */
export function openBroker(opts: Partial<BrokerOptions> = {}): Promise<Broker> {
  return Broker.open({ dir: opts.dir ?? tmpDir(), ...opts });
}

export async function expectCode(p: Promise<unknown> | (() => unknown), code: string): Promise<Error> {
  try {
    if (typeof p === 'function') await p();
    else await p;
  } catch (e) {
    const got = (e as { code?: string }).code;
    if (got !== code) throw new Error(`expected error code ${code}, got ${String(got)}: ${(e as Error).message}`);
    return e as Error;
  }
  throw new Error(`expected error code ${code}, but it succeeded`);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A seeded PRNG in [0, 1) (mulberry32: small, and the same sequence for a seed on every
 * platform), so a failing seed of a randomized test replays the same choices.
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A loopback port the OS had free a moment ago, for a child that must be told its port before it prints it. */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const l = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (l.address() as net.AddressInfo).port;
      l.close(() => resolve(p));
    });
  });
}

/** Listens on a free loopback port to keep it taken, for a test of a port that is not free. */
export async function holdPort(): Promise<{ port: number; release(): void }> {
  const l = net.createServer();
  await new Promise<void>((resolve, reject) => {
    l.once('error', reject);
    l.listen(0, '127.0.0.1', resolve);
  });
  return { port: (l.address() as net.AddressInfo).port, release: () => void l.close() };
}

type ProxyMode = 'forward' | 'refuse' | 'silent';

/**
 * A TCP proxy on loopback in front of `upstreamPort`, for tests of a network that fails.
 * `mode` is what a new connection gets: forwarded, closed at once (`refuse`), or
 * accepted and never answered (`silent`); or, when `modeOf` is set, what it says for the
 * connection's number (from 1; `connections` counts them). The live connections can be
 * paused (the network goes silent, the connections stay up), resumed, or cut.
 */
export async function tcpProxy(upstreamPort: number) {
  const socks = new Set<net.Socket>();
  const srv = net.createServer((c) => {
    const mode = px.modeOf?.(++px.connections) ?? px.mode;
    if (mode === 'refuse') return void c.destroy();
    socks.add(c);
    c.on('error', () => undefined).on('close', () => socks.delete(c));
    if (mode === 'silent') return;
    const u = net.connect(px.upstreamPort, '127.0.0.1');
    socks.add(u);
    u.on('error', () => undefined).on('close', () => (socks.delete(u), c.destroy()));
    c.on('close', () => u.destroy());
    c.pipe(u).pipe(c);
  });
  const px = {
    mode: 'forward' as ProxyMode,
    modeOf: undefined as ((connection: number) => ProxyMode) | undefined,
    connections: 0,
    port: 0,
    /** Where connections from now on go (a server restarted on another port, say). */
    upstreamPort,
    pause: () => socks.forEach((s) => s.pause()),
    resume: () => socks.forEach((s) => s.resume()),
    cut: () => socks.forEach((s) => s.destroy()),
    close: async () => {
      px.cut();
      await new Promise<void>((resolve) => srv.close(() => resolve()));
    },
  };
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  px.port = (srv.address() as net.AddressInfo).port;
  return px;
}

/** One system call a traced child made: its name, the file it names (its path argument, or what its descriptor was opened as), every path among its arguments, and its result. */
export interface TracedCall {
  call: string;
  file: string | undefined;
  paths: string[];
  result: number;
}

/** strace runs here (tests that need it skip without it). */
export const hasStrace = (): boolean => spawnSync('strace', ['-V']).status === 0;

/**
 * Runs `script` in a child Node (with tsx, so it may require ../src) under strace and
 * returns the calls named in `syscalls`, in the order they finished, across all its
 * threads: for tests of the order of syscalls that durability rests on (what a power cut
 * can keep). Throws when the child fails.
 */
export function straceNode(script: string, syscalls: readonly string[], env: NodeJS.ProcessEnv = process.env): TracedCall[] {
  const trace = path.join(tmpDir(), 'trace');
  const r = spawnSync('strace', ['-f', '-qq', '-o', trace, '-e', `trace=${[...new Set(['openat', 'close', ...syscalls])].join(',')}`, process.execPath, '--require', 'tsx/cjs', '-e', script], {
    encoding: 'utf8',
    timeout: 60_000,
    env,
  });
  if (r.status !== 0) throw new Error(`the traced child failed (${r.status ?? r.signal}): ${r.stderr}`);
  return parseTrace(fs.readFileSync(trace, 'utf8'), syscalls);
}

/**
 * The calls named in `syscalls` of an `strace -f` trace (openat and close traced too),
 * in the order they finished, each with the file it names (see TracedCall).
 */
export function parseTrace(text: string, syscalls: readonly string[]): TracedCall[] {
  const wanted = new Set(syscalls);
  const fdPath = new Map<number, string>();
  const unfinished = new Map<string, string>(); // thread -> the start of a call another thread's line interrupted
  const out: TracedCall[] = [];
  for (const line of text.split('\n')) {
    const m = /^(\d+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const [, tid, rest] = m as unknown as [string, string, string];
    if (rest.endsWith('<unfinished ...>')) {
      const start = rest.slice(0, -'<unfinished ...>'.length).trimEnd();
      unfinished.set(tid, start);
      // A close frees its descriptor as it begins: another thread's openat may get that
      // number before this close is seen to finish, and that file's mapping must stay.
      const cl = /^close\((\d+)$/.exec(start);
      if (cl) fdPath.delete(Number(cl[1]));
      continue;
    }
    const resumed = /^<\.\.\. \w+ resumed>(.*)$/.exec(rest);
    const whole = resumed ? (unfinished.get(tid) ?? '') + resumed[1] : rest;
    unfinished.delete(tid);
    const c = /^(\w+)\((.*)\)\s+=\s+(-?\d+)/.exec(whole);
    if (!c) continue;
    const [, call, args, res] = c as unknown as [string, string, string, string];
    const result = Number(res);
    const paths = [...args.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((x) => x[1]!);
    const fdArg = /^(\d+)(?:,|$)/.exec(args);
    const fd = fdArg ? Number(fdArg[1]) : undefined;
    // A *at call with a directory descriptor and a relative name (openat, unlinkat,
    // renameat): the file is the name in that directory, as it was when opened.
    const atDir = fd !== undefined && call.endsWith('at') && paths[0] !== undefined && !paths[0].startsWith('/') ? fdPath.get(fd) : undefined;
    const file = atDir !== undefined ? path.join(atDir, paths[0]!) : fd !== undefined ? fdPath.get(fd) : paths[0];
    if (call === 'openat' && result >= 0 && file !== undefined) fdPath.set(result, file);
    if (wanted.has(call)) out.push({ call, file, paths, result });
    if (call === 'close' && fd !== undefined && !resumed) fdPath.delete(fd); // (a resumed one's was at its start)
  }
  return out;
}

/**
 * Runs `script` in a child Node (with tsx) under strace with a fault injected into the
 * calls that touch `paths` (`inject` as strace's `-e inject=` takes it:
 * 'pwrite64:error=EIO', 'openat:error=EIO:when=1', 'unlink,unlinkat:delay_enter=3000000')
 * and returns what it printed: for tests of what an I/O error or a stall at one file
 * does. Throws when the child fails.
 */
export function faultNode(script: string, paths: readonly string[], inject: string, env: NodeJS.ProcessEnv = process.env): string {
  const calls = inject.split(':')[0]!;
  const r = spawnSync('strace', ['-f', '-qq', '-o', '/dev/null', ...paths.flatMap((p) => ['-P', p]), '-e', `trace=${calls}`, '-e', `inject=${inject}`, process.execPath, '--require', 'tsx/cjs', '-e', script], {
    encoding: 'utf8',
    timeout: 60_000,
    env,
  });
  if (r.status !== 0) throw new Error(`the child under fault injection failed (${r.status ?? r.signal}): ${r.stderr}`);
  return r.stdout;
}

/**
 * The id of this process's thread named `name` (pthread_setname_np) that is not in
 * `except`; waits for it, as a thread names itself once it runs.
 */
export async function threadNamed(name: string, except: readonly number[] = []): Promise<number> {
  let found: number[] = [];
  await waitFor(() => (found = fs.readdirSync('/proc/self/task').map(Number).filter((t) => !except.includes(t) && threadName(t) === name)).length > 0, 5000, `a thread named ${name}`);
  assert.equal(found.length, 1, `one new thread named ${name}, found ${found.length}`);
  return found[0]!;
}
/** The name of this process's thread `tid`; '' once it has gone. */
export function threadName(tid: number): string {
  try {
    return fs.readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

/**
 * Attaches strace to one thread of this process (`tid`: only that thread, not its
 * process) with a fault injected into its calls that touch `paths` (`inject` as
 * faultNode takes it), e.g. the fetch plane's thread with 'pread64:error=EIO': the
 * broker and the test stay in one process, and no other thread's calls are touched.
 * Resolves once the thread is traced; stop() detaches (the thread runs on untraced)
 * and resolves with the calls strace saw. Needs ptrace rights over this process (root,
 * or a Yama ptrace_scope of 0).
 */
export async function injectIntoThread(tid: number, paths: readonly string[], inject: string): Promise<{ stop(): Promise<string> }> {
  const calls = inject.split(':')[0]!;
  const trace = path.join(tmpDir(), 'trace');
  const child = spawnChild('strace', ['-y', '-p', String(tid), '-o', trace, ...paths.flatMap((p) => ['-P', p]), '-e', `trace=${calls}`, '-e', `inject=${inject}`], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM'); // strace detaches on SIGTERM
    await exited;
    return fs.existsSync(trace) ? fs.readFileSync(trace, 'utf8') : '';
  };
  // strace says "Process N attached" once its options (the injection with them) are set.
  const deadline = Date.now() + 10_000;
  while (!/attached/.test(err)) {
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`strace could not attach to thread ${tid}: ${err}`);
    }
    await sleep(10);
  }
  return { stop };
}

/**
 * Runs `fn` with the process's unhandled rejections caught here instead of by mocha
 * (Node ends a process on one), and returns the messages of those seen while it ran and
 * for 100 ms after.
 */
export async function unhandledRejectionsDuring(fn: () => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  const onUnhandled = (e: unknown) => void seen.push(String((e as Error)?.message ?? e));
  const listeners = process.listeners('unhandledRejection');
  process.removeAllListeners('unhandledRejection');
  process.on('unhandledRejection', onUnhandled);
  try {
    await fn();
    await sleep(100);
  } finally {
    process.off('unhandledRejection', onUnhandled);
    for (const l of listeners) process.on('unhandledRejection', l);
  }
  return seen;
}

/** The log files of one partition. */
export function partitionDir(dir: string, topic: string, p: number): string {
  return path.join(dir, 'topics', topic, String(p));
}

/** Removes a partition's producer-state snapshot, as if the broker had crashed before writing one: its open reads the log's window instead. */
export function dropProducerSnapshot(dir: string, topic: string, p = 0): void {
  fs.rmSync(path.join(partitionDir(dir, topic, p), 'producers.snap'), { force: true });
}

export function segmentFiles(dir: string, topic: string, p: number, ext = '.log'): string[] {
  const pd = partitionDir(dir, topic, p);
  return fs.readdirSync(pd).filter((f) => f.endsWith(ext)).sort().map((f) => path.join(pd, f));
}

after(cleanupTmpDirs);

import { BrokerServer, type ServerOptions } from '../src';
import { connect, type Client } from '../src/client';

export interface Running {
  broker: Broker;
  server: BrokerServer;
  address: string;
  client: Client;
  stop(): Promise<void>;
}

/** An in-process server on an ephemeral loopback port, and a connected client. */
export async function startServer(opts: Partial<ServerOptions> & { dir?: string; brokerOptions?: Partial<BrokerOptions> } = {}): Promise<Running> {
  const broker = await openBroker({ dir: opts.dir ?? tmpDir(), ...(opts.brokerOptions ?? {}) });
  const server = await BrokerServer.start({ ...opts, broker, host: '127.0.0.1', port: 0 });
  const address = `127.0.0.1:${server.port}`;
  const client = await connect(address);
  return {
    broker,
    server,
    address,
    client,
    async stop() {
      await client.close();
      await server.stop(2000);
    },
  };
}

/** Appends 40 batches of one ~510-byte record (`old0-xxx…`) to a partition: a log a power cut can take half of (powerCut). */
export async function publishOld(b: Broker, topic: string, partition: number): Promise<void> {
  for (let i = 0; i < 40; i++) await b.publishBatch(topic, sealBatch(encodeBatch([{ value: `old${i}-${'x'.repeat(500)}` }])), partition);
}

/**
 * Leaves `dir` (its broker closed) as a power cut would after a run without `sync`:
 * state.json says the run was going, and each partition of `topic` lost the unsynced
 * second half of the `bytes[p]` it held (read before the close), zeros in its place.
 */
export function powerCut(dir: string, topic: string, bytes: readonly number[]): void {
  const stateFile = path.join(dir, 'state.json');
  fs.writeFileSync(stateFile, JSON.stringify({ ...JSON.parse(fs.readFileSync(stateFile, 'utf8')), clean: false }));
  bytes.forEach((n, p) => {
    const seg = segmentFiles(dir, topic, p)[0]!;
    const cutAt = Math.floor(n / 2 / 4096) * 4096;
    overwriteAt(seg, cutAt, Buffer.alloc(fs.statSync(seg).size - cutAt));
  });
}

/** Writes `bytes` over `file` at byte `pos` (a torn or corrupted log, made by hand). */
export function overwriteAt(file: string, pos: number, bytes: Uint8Array): void {
  const fd = fs.openSync(file, 'r+');
  try {
    fs.writeSync(fd, bytes, 0, bytes.length, pos);
  } finally {
    fs.closeSync(fd);
  }
}

/** Opens a broker and returns it with the process warnings its open emitted. */
export async function openBrokerWithWarnings(opts: Partial<BrokerOptions> = {}): Promise<{ broker: Broker; warnings: string[] }> {
  const warnings: string[] = [];
  const onWarning = (w: Error) => void warnings.push(w.message);
  process.on('warning', onWarning);
  try {
    const broker = await openBroker(opts);
    await sleep(10); // process.emitWarning delivers on a later tick
    return { broker, warnings };
  } finally {
    process.off('warning', onWarning);
  }
}

/** The first n messages of a fresh iterator, each handled by onMsg (ack by default); fails after timeoutMs. */
export async function take(c: GroupConsumerApi, n: number, onMsg: (m: ConsumedMessage) => void = (m) => m.ack(), timeoutMs = 20_000): Promise<ConsumedMessage[]> {
  const out: ConsumedMessage[] = [];
  if (n === 0) return out;
  const it = c[Symbol.asyncIterator]();
  const deadline = Date.now() + timeoutMs;
  while (out.length < n) {
    const r = await Promise.race([it.next(), sleep(Math.max(0, deadline - Date.now())).then(() => 'timeout' as const)]);
    if (r === 'timeout') throw new Error(`got ${out.length} of ${n} messages`);
    if (r.done) break;
    out.push(r.value);
    onMsg(r.value);
  }
  return out;
}

/** Waits until `cond` holds, polling every 20 ms; fails after `timeoutMs`. */
export async function waitFor(cond: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = cond.toString()): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms: ${what}`);
    await sleep(20);
  }
}

/**
 * `p`, failing with a message that names `what` if it has not settled in `ms`: a step
 * that hangs fails the test saying which one, not at mocha's timeout saying nothing.
 */
export async function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish in ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A send() whose value, key or header bytes are transferred (their ArrayBuffer detached)
 * while the send lingers fails alone with INVALID_ARGUMENT; the records batched with it
 * are written, with offsets in order. A view detached before its send() is written empty.
 * `topic` has a partition 0 with nothing in it.
 */
export async function checkSendOfTransferredBytes(p: ProducerApi, broker: Broker, topic: string): Promise<void> {
  const detachLater: ArrayBuffer[] = [];
  const bytes = (s: string) => {
    const b = Buffer.from(new ArrayBuffer(s.length)); // not from Buffer's shared pool
    b.write(s);
    detachLater.push(b.buffer as ArrayBuffer);
    return b;
  };
  const detached = () => {
    const b = Buffer.from(new ArrayBuffer(4));
    structuredClone(b.buffer, { transfer: [b.buffer as ArrayBuffer] });
    return b;
  };
  const sends = [
    p.send(topic, { value: 'first', partition: 0 } as ProducerRecord),
    p.send(topic, { value: bytes('value'), partition: 0 } as ProducerRecord),
    p.send(topic, { value: 'second', key: bytes('key'), partition: 0 } as ProducerRecord),
    p.send(topic, { value: 'third', headers: { h: 'kept', lost: bytes('header') }, partition: 0 } as ProducerRecord),
    p.send(topic, { value: detached(), partition: 0 } as ProducerRecord), // detached before its send(): written empty
    p.send(topic, { value: 'fourth', headers: { h: detached() }, partition: 0 } as ProducerRecord), // the same for a header
    p.send(topic, { value: 'last', partition: 0 } as ProducerRecord),
  ];
  for (const ab of detachLater) structuredClone(ab, { transfer: [ab] }); // while they linger
  const settled = await Promise.allSettled(sends);
  const failed = settled.map((s) => (s.status === 'rejected' ? (s.reason as UringmqError) : null));
  assert.deepEqual(settled.map((s) => s.status), ['fulfilled', 'rejected', 'rejected', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled'], JSON.stringify(failed.map((e) => e?.message)));
  for (const [i, field] of [[1, 'value'], [2, 'key'], [3, 'header "lost"']] as const) {
    assert.equal(failed[i]!.code, 'INVALID_ARGUMENT');
    assert.match(failed[i]!.message, new RegExp(`send to ${topic}: the record's ${field} was detached \\(its ArrayBuffer transferred\\) after send\\(\\) took it`));
  }
  const offsets = settled.map((s) => (s.status === 'fulfilled' ? s.value.offset : -1));
  assert.deepEqual(offsets, [0, -1, -1, -1, 1, 2, 3]);
  const log = await broker.read(topic, 0, 0);
  assert.deepEqual(log.map((m) => m.value.toString()), ['first', '', 'fourth', 'last']);
  assert.deepEqual(log[2]!.headers, { h: Buffer.alloc(0) });
}

/**
 * A sendBatch the producer holds back (the caller arranged that: the embedded write
 * queue past its high-water mark, a remote producer's first batches to a topic waiting
 * for its partition count) keeps the caller's records: one whose value or header bytes
 * are transferred (the ArrayBuffer detached) while it is held is refused whole with
 * INVALID_ARGUMENT, nothing written; a view detached before the call is written empty,
 * as send()'s is. `topic`'s partition 0 must be empty.
 */
export async function checkHeldSendBatchOfTransferredBytes(p: ProducerApi, broker: Broker, topic: string): Promise<void> {
  const fresh = (s: string) => {
    const b = Buffer.from(new ArrayBuffer(s.length)); // not from Buffer's shared pool
    b.write(s);
    return b;
  };
  const detached = () => {
    const b = Buffer.from(new ArrayBuffer(4));
    structuredClone(b.buffer, { transfer: [b.buffer as ArrayBuffer] });
    return b;
  };
  const lost = fresh('lost');
  const header = fresh('header');
  const sends = [
    p.sendBatch(topic, [{ value: 'a' }, { value: lost }], { partition: 0 }),
    p.sendBatch(topic, [{ value: 'b', headers: { h: header } }], { partition: 0 }),
    p.sendBatch(topic, [{ value: detached() }, { value: 'c' }], { partition: 0 }), // detached before the call: written empty
  ];
  for (const ab of [lost.buffer, header.buffer]) structuredClone(ab, { transfer: [ab as ArrayBuffer] }); // while held
  const settled = await Promise.allSettled(sends);
  const errs = settled.map((s) => (s.status === 'rejected' ? (s.reason as UringmqError) : null));
  assert.deepEqual(settled.map((s) => s.status), ['rejected', 'rejected', 'fulfilled'], JSON.stringify(errs.map((e) => e?.message)));
  for (const e of errs.slice(0, 2)) {
    assert.equal(e!.code, 'INVALID_ARGUMENT');
    assert.match(e!.message, new RegExp(`sendBatch to ${topic}: a record's value, key or header was detached \\(its ArrayBuffer transferred\\) after sendBatch\\(\\) took it .*nothing was written`));
  }
  const log = await broker.read(topic, 0, 0);
  assert.deepEqual(log.map((m) => m.value.toString()), ['', 'c']);
}

/**
 * What a producer's send() writes is the record as it was when sent: an object reused or
 * changed while it lingers changes neither it nor the records batched with it, and a
 * record without a timestamp gets the clock of its send(), not of its batch's cut
 * (Kafka's producer stamps at send() too). Partition 0 of `topic`, empty, read back
 * through `broker`; the producer lingers at least 100 ms.
 */
export async function checkSendTakesRecordAsSent(p: ProducerApi, broker: Broker, topic: string): Promise<void> {
  const r: { value: unknown; key?: unknown; headers?: Record<string, unknown>; partition: number } = { value: 'a', key: 'k1', headers: { h: 'one' }, partition: 0 };
  const s1 = p.send(topic, r as { value: string });
  const sentBy = Date.now();
  r.value = 'b';
  r.key = 'k2';
  r.headers!.h = 'two';
  await sleep(30); // still lingering
  const secondAt = Date.now();
  const s2 = p.send(topic, r as { value: string });
  assert.deepEqual([(await s1).offset, (await s2).offset], [0, 1]);
  const got = await broker.read(topic, 0, 0);
  assert.deepEqual(
    got.map((m) => [m.value.toString(), m.key?.toString(), m.headers.h?.toString()]),
    [
      ['a', 'k1', 'one'],
      ['b', 'k2', 'two'],
    ],
  );
  assert.ok(got[0]!.timestamp <= sentBy && got[0]!.timestamp < secondAt, `the first record's timestamp ${got[0]!.timestamp} is not its send()'s (by ${sentBy}; the second sent at ${secondAt})`);
  assert.ok(got[1]!.timestamp >= secondAt, `the second record's timestamp ${got[1]!.timestamp} is before its send() at ${secondAt}`);
  // A record made invalid after its send was accepted: the send was checked and
  // taken; neither it nor the record batched with it is refused.
  const bad: { value: unknown; partition: number } = { value: 'x', partition: 0 };
  const sends = [p.send(topic, { value: 'innocent', partition: 0 }), p.send(topic, bad as { value: string })];
  bad.value = 42;
  const settled = await Promise.allSettled(sends);
  assert.deepEqual(settled.map((x) => x.status), ['fulfilled', 'fulfilled'], JSON.stringify(settled));
  assert.deepEqual((await broker.read(topic, 0, 2)).map((m) => m.value.toString()), ['innocent', 'x']);
}

