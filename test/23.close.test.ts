/**
 * close() against a broker that cannot be reached: producer.close({ timeoutMs }) and
 * client.close({ timeoutMs }) bound their wait, and a client's connections to a server
 * that went silent (SIGSTOP: TCP still up, nothing answered) are given up within about
 * a second, over node:http2 (host:port targets) and over grpc-js (other targets) alike,
 * while a live server still gets the final acks written at close, and one merely slow
 * to answer keeps its connection.
 */
import { strict as assert } from 'node:assert';
import type { EventEmitter } from 'node:events';
import * as path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import * as grpc from '@grpc/grpc-js';
import { UringmqError, type Broker } from '../src';
import { connect, type Client } from '../src/client';
import { brokerService } from '../src/grpc/service';
import { spawn } from './fixtures/children';
import { spawnServer, type ServerProcess } from './fixtures/server_process';
import { expectCode, openBroker, sleep, startServer, tcpProxy, tmpDir, waitFor } from './helpers';

const CLOSE_CHILD = path.join(__dirname, 'fixtures', 'close_child.ts');

/** `p`, or a failure after `ms` (before the fix these close()s waited up to 120 s). */
async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** Settles to the error, or fails if `p` resolves. */
async function rejection(p: Promise<unknown>): Promise<UringmqError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof UringmqError, `not a UringmqError: ${String(e)}`);
    return e;
  }
  throw new Error('expected a rejection');
}

describe('close() against a broker that cannot be reached', function () {
  this.timeout(120_000);
  const procs: ServerProcess[] = [];
  const clients: Client[] = [];
  afterEach(async () => {
    for (const p of procs.splice(0)) {
      // A stopped child must be killed (SIGKILL works on a stopped process; SIGCONT first all the same).
      p.child.kill('SIGCONT');
      p.child.kill('SIGKILL');
      await p.exited;
    }
    // Bounded: a close that does not keep its timeout (the bug under test) must not take the next tests with it.
    await Promise.all(clients.splice(0).map((c) => within(c.close({ timeoutMs: 200 }), 3000, 'client.close in afterEach').catch(() => undefined)));
  });

  async function server(): Promise<{ srv: ServerProcess; client: Client }> {
    const srv = await spawnServer(tmpDir());
    procs.push(srv);
    const client = await connect(srv.address);
    clients.push(client);
    await client.createTopic('t', { partitions: 2 });
    return { srv, client };
  }

  for (const how of ['SIGSTOP', 'SIGKILL'] as const) {
    it(`producer.close({ timeoutMs }) with the server ${how === 'SIGSTOP' ? 'stopped' : 'killed'}: resolves about then, every outstanding send rejected with BROKER_CLOSED, later sends too`, async () => {
      const { srv, client } = await server();
      await client.createTopic('never-described');
      const producer = client.producer(); // deliveryTimeoutMs: the default 120 s
      await producer.send('t', { value: 'first' }); // stream open, partition count known
      srv.child.kill(how);
      if (how === 'SIGKILL') await srv.exited;
      const outstanding: Array<Promise<unknown>> = [];
      for (let i = 0; i < 20; i++) outstanding.push(producer.send('t', { key: `k${i}`, value: `v${i}` }));
      outstanding.push(producer.sendBatch('t', [{ value: 'a' }, { value: 'b' }], { partition: 1 }));
      outstanding.push(producer.send('never-described', { value: 'waits for its partition count' }));
      const errors = outstanding.map((p) => rejection(p));
      await sleep(200); // sent (or retrying), not answered
      const t0 = Date.now();
      await within(producer.close({ timeoutMs: 300 }), 5000, 'producer.close({ timeoutMs: 300 })');
      const took = Date.now() - t0;
      assert.ok(took >= 250, `close resolved after ${took} ms, before its timeout`);
      for (const e of await within(Promise.all(errors), 1000, 'the outstanding sends to settle after close')) {
        assert.equal(e.code, 'BROKER_CLOSED', e.message);
        assert.match(e.message, /close\(\)'s timeout of 300 ms passed.*may or may not have been written/);
      }
      await expectCode(producer.send('t', { value: 'late' }), 'BROKER_CLOSED');
      await expectCode(producer.sendBatch('t', [{ value: 'late' }]), 'BROKER_CLOSED');
      await within(producer.close({ timeoutMs: 300 }), 1000, 'a second close'); // nothing left to wait for
      const t1 = Date.now();
      await within(client.close({ timeoutMs: 300 }), 5000, 'client.close({ timeoutMs: 300 })');
      assert.ok(Date.now() - t1 < 3000, `client.close took ${Date.now() - t1} ms`);
    });
  }

  it("client.close({ timeoutMs }) closes its producers with that timeout: their sends rejected, close resolved in about that time", async () => {
    const { srv, client } = await server();
    const producer = client.producer();
    await producer.send('t', { value: 'first' });
    srv.child.kill('SIGSTOP');
    const e = rejection(producer.send('t', { value: 'never answered' }));
    await sleep(100);
    const t0 = Date.now();
    await within(client.close({ timeoutMs: 300 }), 5000, 'client.close({ timeoutMs: 300 })');
    assert.ok(Date.now() - t0 < 3000, `client.close took ${Date.now() - t0} ms`);
    assert.equal((await e).code, 'BROKER_CLOSED');
    assert.ok(client.isClosed);
  });

  /**
   * A close_child on `address`, READY: holding `n` messages of `topic` unacked (its
   * producer publishes to 'side'). With `fetchAddress`, a fetch consumer's (see there).
   */
  async function closeChild(client: Client, address: string, topic: string, group: string, n: number, stallMs = 0, fetchAddress?: string): Promise<{ child: ChildProcess; out: () => string; exited: Promise<number | null> }> {
    await client.createTopic('side');
    const args = [CLOSE_CHILD, address, topic, group, String(n), 'side', String(stallMs), ...(fetchAddress ? [fetchAddress] : [])];
    const child = spawn(process.execPath, ['--require', 'tsx/cjs', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    // 'close', not 'exit': its output is all read by then.
    const exited = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
    try {
      await waitFor(() => out.includes('READY') || child.exitCode !== null, 60_000, 'the close child to be READY');
    } catch (e) {
      child.kill('SIGKILL');
      throw e;
    }
    assert.ok(out.includes('READY'), `the close child failed: ${out}`);
    return { child, out: () => out, exited };
  }

  /** The close child's target: host:port (its streams over node:http2), or ipv4: (everything over grpc-js). */
  const VIA = [
    ['node:http2', (address: string) => address],
    ['grpc-js', (address: string) => `ipv4:${address}`],
  ] as const;

  for (const [via, target] of VIA) {
    // Over grpc-js it took 30 s before: the consumer's close() waited out the leave's 5 s
    // (grpc-js has no ping per call), and both its half-closed calls kept the process.
    it(`a client process whose server is stopped (SIGSTOP) exits soon after client.close(), not after the 10 s destroy timer (${via})`, async () => {
      const { srv, client } = await server();
      const producer = client.producer();
      for (let i = 0; i < 10; i++) await producer.send('t', { value: `m${i}`, partition: 0 });
      const c = await closeChild(client, target(srv.address), 't', 'g-stopped', 3);
      try {
        srv.child.kill('SIGSTOP');
        const t0 = Date.now();
        c.child.stdin!.write('CLOSE\n');
        const code = await within(c.exited, 45_000, 'the child to exit');
        const took = Date.now() - t0;
        assert.equal(code, 0, c.out());
        assert.match(c.out(), /CLOSED \d+/);
        assert.ok(took < 5000, `the child exited ${took} ms after close() (the silent server held it: ${c.out().trim()})`);
      } finally {
        c.child.kill('SIGKILL');
      }
    });

    it(`a client process closing against a live server: its final acks, written at close, are committed (${via})`, async () => {
      await closeAndCheckAcks(target, 0);
    });

    it(`a client process whose own event loop is held 2.5 s right after client.close(): its final acks are still committed (the missed-probe bound is not the server's fault) (${via})`, async () => {
      await closeAndCheckAcks(target, 2500);
    });
  }

  /** The fetch listener of a server spawnServer started (port 0: an ephemeral one, which its start line names). */
  function fetchAddressOf(srv: ServerProcess): string {
    const m = /"fetchPort":(\d+)/.exec(srv.logs());
    assert.ok(m, `no fetchPort in the server's start line: ${srv.logs()}`);
    return `127.0.0.1:${m[1]}`;
  }

  for (const [via, target] of VIA) {
    // Before, its final commit (a unary call) waited out its 30 s deadline against the
    // stopped server, and close() with it: the process exited some 30 s after close().
    it(`a fetch consumer's client process whose server is stopped (SIGSTOP) at close exits soon after client.close(): the final commit is given up at the first unanswered probe (${via})`, async () => {
      const { srv, client } = await server();
      const producer = client.producer();
      for (let i = 0; i < 10; i++) await producer.send('t', { value: `m${i}`, partition: 0 });
      const c = await closeChild(client, target(srv.address), 't', 'g-fetch-stopped', 3, 0, fetchAddressOf(srv));
      try {
        srv.child.kill('SIGSTOP');
        const t0 = Date.now();
        c.child.stdin!.write('CLOSE\n');
        const code = await within(c.exited, 60_000, 'the child to exit');
        const took = Date.now() - t0;
        assert.equal(code, 0, c.out());
        assert.match(c.out(), /CLOSED \d+/);
        assert.ok(took < 15_000, `the child exited ${took} ms after close() (the silent server held it: ${c.out().trim()})`);
      } finally {
        c.child.kill('SIGKILL');
      }
    });

    // 6 s: longer than close() waits for the server (LEAVE_WAIT_MS), which counted the
    // hold against it: the commit was given up before it went out, and nothing committed.
    for (const stallMs of [0, 2500, 6000]) {
      it(`a fetch consumer's client process closing against a live server${stallMs ? `, its event loop held ${stallMs / 1000} s right after client.close()` : ''}: its final commit, made at close, is committed (${via})`, async () => {
        const { srv, client } = await server();
        const producer = client.producer();
        for (let i = 0; i < 10; i++) await producer.send('t', { value: `m${i}`, partition: 0 });
        const c = await closeChild(client, target(srv.address), 't', 'g-fetch-live', 6, stallMs, fetchAddressOf(srv));
        try {
          c.child.stdin!.write('CLOSE\n');
          assert.equal(await within(c.exited, 30_000, 'the child to exit'), 0, c.out());
          // Its commit interval is an hour: only the final commit commits the six acks.
          assert.equal((await client.committedOffsets('g-fetch-live', 't'))[0], 6);
        } finally {
          c.child.kill('SIGKILL');
        }
      });
    }
  }

  it("a fetch consumer closing behind a network gone silent (its gRPC connection up, nothing passing): close() gives up its final commit and its leave at the first unanswered probe, its membership call cancelled, not left open", async () => {
    const r = await startServer();
    const fsrv = await r.broker.startFetchServer({ port: 0 });
    const proxy = await tcpProxy(r.server.port); // in front of the gRPC port only
    const client = await connect(`127.0.0.1:${proxy.port}`, { fetchAddress: `127.0.0.1:${fsrv.port}` });
    try {
      await client.createTopic('t');
      const producer = client.producer();
      for (let i = 0; i < 6; i++) await producer.send('t', { value: `m${i}`, partition: 0 });
      const consumer = client.consumer({ topic: 't', group: 'g-black-hole', from: 'earliest', transport: 'fetch', commitIntervalMs: 3_600_000, maxWaitMs: 100 });
      const it = consumer[Symbol.asyncIterator]();
      const held = [];
      for (let i = 0; i < 6; i++) held.push((await it.next()).value!);
      for (const m of held) m.ack();
      proxy.pause();
      // Before, close() waited out the commit's 30 s deadline.
      await within(consumer.close(), 15_000, 'consumer.close()');
      // Its membership stream was cancelled, not left half-closed: once the network
      // comes back the server reads the cancel and drops the member.
      proxy.resume();
      await waitFor(async () => (await r.broker.describeTopic('t')).groups.every((g) => g.group !== 'g-black-hole' || g.members.length === 0), 10_000, 'the member to be gone');
    } finally {
      await client.close();
      await proxy.close();
      fsrv.close();
      await r.stop();
    }
  });

  it("a fetch consumer given its partitions, closed while its first look-up (describeTopic) is out behind a network gone silent: close() cancels the call, and the iteration ends as closed, not with DEADLINE_EXCEEDED 30 s later", async () => {
    const r = await startServer();
    const fsrv = await r.broker.startFetchServer({ port: 0 });
    const proxy = await tcpProxy(r.server.port); // in front of the gRPC port only
    const client = await connect(`127.0.0.1:${proxy.port}`, { fetchAddress: `127.0.0.1:${fsrv.port}` });
    let release: () => void = () => undefined;
    try {
      await client.createTopic('t');
      const broker = r.broker as unknown as { describeTopic(...a: unknown[]): Promise<unknown> };
      const describeTopic = broker.describeTopic.bind(broker);
      let asked!: () => void;
      const reached = new Promise<void>((resolve) => (asked = resolve));
      // The look-up reaches the server, then the network goes silent: its answer never comes back.
      broker.describeTopic = async (...a: unknown[]) => {
        proxy.pause();
        asked();
        await new Promise<void>((resolve) => (release = resolve));
        return describeTopic(...a);
      };
      const consumer = client.consumer({ topic: 't', group: 'g-start', from: 'earliest', transport: 'fetch', partitions: [0], maxWaitMs: 100 });
      const it = consumer[Symbol.asyncIterator]();
      const first = it.next();
      first.catch(() => undefined);
      await within(reached, 10_000, 'the look-up to reach the server');
      await within(consumer.close(), 15_000, 'consumer.close()');
      // Before, close() resolved at once with the call left open (holding the process),
      // and the iteration failed with DEADLINE_EXCEEDED at its 30 s deadline.
      const res = await within(first, 15_000, 'the iteration to end');
      assert.equal(res.done, true);
    } finally {
      release();
      await client.close();
      await proxy.close();
      fsrv.close();
      await r.stop();
    }
  });

  it('a fetch consumer closing against a live server slow to answer its final commit (2.5 s) waits for it: the server answers the probes meanwhile, and the commit is made, not cancelled', async () => {
    const r = await startServer();
    const fsrv = await r.broker.startFetchServer({ port: 0 });
    const client = await connect(r.address, { fetchAddress: `127.0.0.1:${fsrv.port}` });
    try {
      await client.createTopic('t');
      const producer = client.producer();
      for (let i = 0; i < 6; i++) await producer.send('t', { value: `m${i}`, partition: 0 });
      const consumer = client.consumer({ topic: 't', group: 'g-slow-commit', from: 'earliest', transport: 'fetch', commitIntervalMs: 3_600_000, maxWaitMs: 100 });
      const it = consumer[Symbol.asyncIterator]();
      const held = [];
      for (let i = 0; i < 6; i++) held.push((await it.next()).value!);
      const groups = r.broker.groups as unknown as { commitOffset(...a: unknown[]): Promise<void> };
      const commitOffset = groups.commitOffset.bind(groups);
      let slowed = 0;
      groups.commitOffset = async (...a: unknown[]) => {
        slowed++;
        await sleep(2500);
        return commitOffset(...a);
      };
      for (const m of held) m.ack();
      await within(consumer.close(), 30_000, 'consumer.close()');
      assert.equal(slowed, 1, 'one final commit');
      assert.deepEqual(await r.broker.committedOffsets('g-slow-commit', 't'), [6]);
    } finally {
      await client.close();
      fsrv.close();
      await r.stop();
    }
  });

  it('a consumer closing against a live server slow to answer (stopped 2.5 s at close): close() stops waiting at the missed ping, but the connection is not dropped: the server ends the stream, and the final acks are committed', async () => {
    const { srv, client } = await server(); // keepalive.timeoutMs: the default 10 s
    const producer = client.producer();
    for (let i = 0; i < 6; i++) await producer.send('t', { value: `m${i}`, partition: 0 });
    const consumer = client.consumer({ topic: 't', group: 'g-slow', from: 'earliest', ackDeadlineMs: 60_000 });
    const it = consumer[Symbol.asyncIterator]();
    const held = [];
    for (let i = 0; i < 6; i++) held.push((await it.next()).value!);
    const stream = (consumer as unknown as { stream: { direct?: EventEmitter } | null }).stream?.direct;
    assert.ok(stream, 'a host:port target subscribes over node:http2');
    let ended: string | undefined;
    stream.on('end', () => (ended ??= 'ended by the server'));
    stream.on('error', (e: Error) => (ended ??= `failed: ${e.message}`));
    srv.child.kill('SIGSTOP');
    for (const m of held) m.ack();
    const closing = consumer.close();
    await sleep(2500);
    srv.child.kill('SIGCONT');
    await within(closing, 10_000, 'consumer.close()');
    // Before, the connection was destroyed at the first ping left unanswered 1 s.
    await waitFor(() => ended !== undefined, 15_000, 'the stream to end');
    assert.equal(ended, 'ended by the server');
    let committed: number[] = [];
    await waitFor(async () => (committed = await client.committedOffsets('g-slow', 't'))[0] === 6, 10_000, 'the acks made at close to be committed').catch((e: Error) => {
      throw new Error(`${e.message}; committed ${JSON.stringify(committed)}`);
    });
  });

  /** A close child on `target` holding six messages acks them at close (its loop then held `stallMs`): all six are committed. */
  async function closeAndCheckAcks(target: (address: string) => string, stallMs: number): Promise<void> {
    const { srv, client } = await server();
    const producer = client.producer();
    for (let i = 0; i < 10; i++) await producer.send('t', { value: `m${i}`, partition: 0 });
    const c = await closeChild(client, target(srv.address), 't', 'g-live', 6, stallMs);
    try {
      c.child.stdin!.write('CLOSE\n');
      assert.equal(await within(c.exited, 15_000, 'the child to exit'), 0, c.out());
      let committed: number[] = [];
      // All ten were sent to partition 0: the first six delivered are its offsets 0-5.
      await waitFor(async () => (committed = await client.committedOffsets('g-live', 't'))[0] === 6, 10_000, 'the acks made at close to be committed').catch((e: Error) => {
        throw new Error(`${e.message}; committed ${JSON.stringify(committed)}`);
      });
    } finally {
      c.child.kill('SIGKILL');
    }
  }
});

describe('a producing script exits once its closes resolve: nothing left to hold it, nothing dropped', function () {
  this.timeout(60_000);
  const RECONNECT_CHILD = path.join(__dirname, 'fixtures', 'reconnect_close_child.ts');

  /**
   * A reconnect_close_child through a proxy, paused (the network silent) before the
   * child's second send goes out. Then, unless `silent`, the test cuts the connection
   * and refuses new ones; with `backAfterMs`, the proxy forwards again that long after.
   * `closeTimeoutMs`: the child's second send goes to `sendTo` ('t', whose partition
   * count it knows; 'u', which it has not looked up), and it closes its client with that
   * timeout at once. Resolves once the child has exited: its code, its output, and how
   * long after it printed CLOSED it exited.
   */
  async function producingChild(deliveryTimeoutMs: number, opts: { backAfterMs?: number; silent?: boolean; closeTimeoutMs?: number; sendTo?: 't' | 'u'; grpcJs?: boolean } = {}): Promise<{ code: number | null; out: string; exitedAfterMs: number }> {
    const r = await startServer();
    const proxy = await tcpProxy(r.server.port);
    let child: ChildProcess | undefined;
    try {
      await r.client.createTopic('t');
      await r.client.createTopic('u');
      // An `ipv4:` target: the client speaks through grpc-js, not its own node:http2 streams.
      const args = [RECONNECT_CHILD, `${opts.grpcJs ? 'ipv4:' : ''}127.0.0.1:${proxy.port}`, 't', String(deliveryTimeoutMs), ...(opts.closeTimeoutMs === undefined ? [] : [String(opts.closeTimeoutMs), opts.sendTo ?? 'u'])];
      const c = (child = spawn(process.execPath, ['--require', 'tsx/cjs', ...args], { stdio: ['pipe', 'pipe', 'pipe'] }));
      let out = '';
      let closedAt = 0;
      c.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (!closedAt && out.includes('CLOSED')) closedAt = Date.now();
      });
      c.stderr!.on('data', (d: Buffer) => (out += d.toString()));
      const exited = new Promise<number | null>((res) => c.once('close', (code) => res(code)));
      await waitFor(() => out.includes('READY') || c.exitCode !== null, 60_000, 'the child to be READY');
      assert.ok(out.includes('READY'), `the child failed: ${out}`);
      proxy.pause(); // the next send goes out and is not answered
      c.stdin!.write('SEND\n');
      await waitFor(() => out.includes('SENT') || c.exitCode !== null, 10_000, 'the child to send');
      if (!opts.silent) {
        proxy.mode = 'refuse';
        proxy.cut();
      }
      if (opts.backAfterMs !== undefined) {
        await sleep(opts.backAfterMs);
        proxy.mode = 'forward';
      }
      const code = await within(exited, 45_000, 'the child to exit').catch((e: Error) => {
        throw new Error(`${e.message}: ${out}`);
      });
      return { code, out, exitedAfterMs: Date.now() - closedAt };
    } finally {
      child?.kill('SIGKILL');
      await proxy.close();
      await r.stop();
    }
  }

  // The stream broke with a batch in flight, and every reconnect was refused: the
  // producer waited longer before each (100 ms doubling to 5 s). The batch expired
  // (deliveryTimeoutMs) during a wait of 5 s; the script closed its producer and its
  // client, and its process then waited out the rest of that wait (about 4 s) before it
  // could exit: the wait's timer was cleared only by close()'s timeout.
  it('a script whose sends all settled (expired while the producer waits to reconnect) exits right after producer.close() and client.close(), not once that wait is over', async () => {
    // 7 s: past the waits of 0.2, 0.4, 0.8, 1.6 and 3.2 s (6.2 s), early in the first of 5 s.
    const { code, out, exitedAfterMs } = await producingChild(7000);
    assert.equal(code, 0, out);
    const closed = /CLOSED (\S+) (.*)/.exec(out);
    assert.ok(closed, out);
    assert.equal(closed[1], 'UNAVAILABLE', out); // expired, not acked nor refused
    // What held the event loop once close() had resolved: its pipes, no timer.
    assert.ok(!(JSON.parse(closed[2]!) as string[]).includes('Timeout'), `a timer still held the process after close(): ${closed[2]}`);
    assert.ok(exitedAfterMs < 2500, `the child exited ${exitedAfterMs} ms after its last close() (${out.trim()})`);
  });

  // The other side of it: while a batch waits to reconnect, the wait holds the process
  // (the script awaits only the send's promise, which holds nothing), or it exited with
  // the send neither acked nor failed.
  it('a script awaiting a send whose stream broke is kept alive by the wait to reconnect: the connection comes back, the send is acked', async () => {
    const { code, out } = await producingChild(30_000, { backAfterMs: 700 });
    assert.equal(code, 0, out);
    assert.match(out, /CLOSED acked/);
  });

  // client.close({ timeoutMs }) gave up on the send, waiting for its topic's partition
  // count, but the lookup itself (a unary call) stayed out until its deadline: the
  // process was held some 30 s after close() had resolved.
  it('client.close({ timeoutMs }) with a send waiting for its partition count behind a network gone silent: the process exits right after close(), the lookup cancelled', async () => {
    const { code, out, exitedAfterMs } = await producingChild(120_000, { silent: true, closeTimeoutMs: 300, sendTo: 'u' });
    assert.equal(code, 0, out);
    assert.match(out, /CLOSED BROKER_CLOSED/);
    assert.ok(exitedAfterMs < 5000, `the child exited ${exitedAfterMs} ms after client.close() (${out.trim()})`);
  });

  // close({ timeoutMs }) cancelled the stream with the batch in flight (DirectStream.cancel),
  // which closed its HTTP/2 session and then destroyed it: closed first, the session was
  // ended gracefully, its socket half-closed, waiting for a server that said nothing
  // more. That socket held the process for good (the test's 45 s here).
  for (const grpcJs of [false, true]) {
    it(`client.close({ timeoutMs }) with a batch in flight behind a network gone silent${grpcJs ? ', over grpc-js (an ipv4: target)' : ''}: the process exits right after close(), the connection dropped`, async () => {
      const { code, out, exitedAfterMs } = await producingChild(120_000, { silent: true, closeTimeoutMs: 300, sendTo: 't', grpcJs });
      assert.equal(code, 0, out);
      assert.match(out, /CLOSED BROKER_CLOSED/);
      assert.ok(exitedAfterMs < 5000, `the child exited ${exitedAfterMs} ms after client.close() (${out.trim()})`);
    });
  }

  it('client.close({ timeoutMs }) with a send waiting for its partition count behind a network gone silent, over grpc-js (an ipv4: target): the process exits right after close()', async () => {
    const { code, out, exitedAfterMs } = await producingChild(120_000, { silent: true, closeTimeoutMs: 300, sendTo: 'u', grpcJs: true });
    assert.equal(code, 0, out);
    assert.match(out, /CLOSED BROKER_CLOSED/);
    assert.ok(exitedAfterMs < 5000, `the child exited ${exitedAfterMs} ms after client.close() (${out.trim()})`);
  });
});

/**
 * A raw gRPC server of the uringmq service (the definition built from proto/) that
 * takes DescribeTopic calls and answers none until the test does: a broker whose
 * metadata lookups hang. Every other method is left unimplemented.
 */
async function lookupHangingServer(): Promise<{
  port: number;
  calls: Array<{ cancelled: boolean; answer: (partitions: number) => void }>;
  stop(): Promise<void>;
}> {
  const server = new grpc.Server();
  const calls: Array<{ cancelled: boolean; answer: (partitions: number) => void }> = [];
  server.addService(brokerService, {
    describeTopic: (call: grpc.ServerUnaryCall<{ name: string }, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      let answered = false;
      const c = {
        cancelled: false,
        answer: (n: number) => {
          answered = true;
          callback(null, { name: call.request.name, partitions: Array.from({ length: n }, (_, partition) => ({ partition })) });
        },
      };
      // grpc-js says 'cancelled' whenever the stream closes, an answered call's too.
      call.on('cancelled', () => (c.cancelled ||= !answered));
      calls.push(c);
    },
  });
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
  return { port, calls, stop: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())).then(() => server.forceShutdown()) };
}

// producer.close({ timeoutMs }) without client.close() failed the send waiting for
// its topic's partition count at the timeout, but left the lookup (a unary call with
// a 30 s deadline) and the send's own wait for it (a deliveryTimeoutMs timer) out: the
// process, or the app's connection, was held up to 30 s after the producer had closed.
describe("producer.close({ timeoutMs }) with a send waiting for its topic's partition count, the client left open", function () {
  this.timeout(60_000);

  it('the lookup is cancelled, the send fails with BROKER_CLOSED, and no timer is left: the process exits by itself', async () => {
    const srv = await lookupHangingServer();
    let child: ChildProcess | undefined;
    try {
      const c = (child = spawn(process.execPath, ['--require', 'tsx/cjs', path.join(__dirname, 'fixtures', 'lookup_close_child.ts'), `127.0.0.1:${srv.port}`, 'u', '200'], { stdio: ['pipe', 'pipe', 'pipe'] }));
      let out = '';
      c.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      c.stderr!.on('data', (d: Buffer) => (out += d.toString()));
      const exited = new Promise<number | null>((res) => c.once('close', (code) => res(code)));
      await waitFor(() => (out.includes('READY') && srv.calls.length > 0) || c.exitCode !== null, 60_000, 'the child to ask for the partition count');
      assert.equal(srv.calls.length, 1, out);
      c.stdin!.write('CLOSE\n');
      await waitFor(() => out.includes('CLOSED') || c.exitCode !== null, 30_000, 'the producer to close');
      const closed = /CLOSED (\S+) (.*)/.exec(out);
      assert.ok(closed, out);
      assert.equal(closed[1], 'BROKER_CLOSED', out); // as close() fails the sends it gives up on
      // Neither the call's deadline nor the send's wait for it: what holds the event loop
      // once producer.close() has resolved is its pipes.
      assert.ok(!(JSON.parse(closed[2]!) as string[]).includes('Timeout'), `a timer still held the process after producer.close(): ${closed[2]}`);
      assert.equal(await within(exited, 45_000, 'the child to exit'), 0, out);
      assert.equal(srv.calls[0]!.cancelled, true, 'the server saw the lookup cancelled');
    } finally {
      child?.kill('SIGKILL');
      await srv.stop();
    }
  });

  it("one producer's close does not cancel the lookup another producer of the client still waits for: it is answered, and the count cached", async () => {
    const srv = await lookupHangingServer();
    const client = await connect(`127.0.0.1:${srv.port}`);
    try {
      const a = client.producer();
      const b = client.producer();
      const sentA = rejection(a.send('u', { value: 'a' }));
      const sentB = b.send('u', { value: 'b' }).then(
        () => 'acked',
        (e: unknown) => e,
      );
      await waitFor(() => srv.calls.length > 0, 10_000, 'the lookup');
      await a.close({ timeoutMs: 100 });
      assert.equal((await sentA).code, 'BROKER_CLOSED');
      srv.calls[0]!.answer(3);
      assert.equal(await client.partitionCount('u'), 3);
      assert.equal(srv.calls.length, 1, 'the lookup was made again: the first was cancelled under the producer still waiting for it');
      assert.equal(srv.calls[0]!.cancelled, false);
      await b.close({ timeoutMs: 100 });
      await sentB; // sent (PublishStream is unimplemented here) or given up by close: either way settled
    } finally {
      await client.close({ timeoutMs: 100 });
      await srv.stop();
    }
  });
});

// A count older than 5 s is refreshed while sends go on with it (knownPartitionCount),
// the refresh held by the producer that began it (lookupsHeld). A plain close() lets
// it go once every send is settled; without that release the refresh stayed out, and
// held the process or the app's connection, until the server answered or the call's
// 30 s deadline passed. Only one in flight when close() is called exercises it (a
// count goes stale after 5 s): the server here holds it.
describe('a plain close() while a refresh of a stale partition count is out', function () {
  this.timeout(60_000);
  const STALE_CHILD = path.join(__dirname, 'fixtures', 'stale_close_child.ts');

  for (const what of ['producer', 'client'] as const) {
    it(`${what}.close() resolves with the sends made before it written, the refresh cancelled, nothing left to hold the process${what === 'producer' ? ' (the client left open)' : ''}`, async () => {
      const r = await startServer();
      let child: ChildProcess | undefined;
      // The server answers the first lookup of 's' (the count cached) and holds the next
      // ones (the refresh) until the test lets them go.
      let lookups = 0;
      let letGo!: () => void;
      const held = new Promise<void>((resolve) => (letGo = resolve));
      const describeTopic = r.broker.describeTopic.bind(r.broker);
      r.broker.describeTopic = async (...args: Parameters<typeof describeTopic>) => {
        if (args[0] === 's' && ++lookups > 1) await held;
        return describeTopic(...args);
      };
      try {
        await r.client.createTopic('s', { partitions: 3 });
        const count = 30;
        const c = (child = spawn(process.execPath, ['--require', 'tsx/cjs', STALE_CHILD, r.address, 's', String(count), what], { stdio: ['pipe', 'pipe', 'pipe'] }));
        let out = '';
        c.stdout!.on('data', (d: Buffer) => (out += d.toString()));
        c.stderr!.on('data', (d: Buffer) => (out += d.toString()));
        const exited = new Promise<number | null>((res) => c.once('close', (code) => res(code)));
        await waitFor(() => (out.includes('READY') && lookups > 1) || c.exitCode !== null, 60_000, 'the child to refresh its stale count');
        assert.equal(lookups, 2, `the refresh did not reach the server: ${out}`);
        c.stdin!.write('CLOSE\n');
        await waitFor(() => out.includes('CLOSED') || c.exitCode !== null, 15_000, `${what}.close() with the refresh held`).catch((e: Error) => {
          throw new Error(`${e.message}: ${out}`);
        });
        const closed = /CLOSED (\S+) (\d+) (.*)/.exec(out);
        assert.ok(closed, out);
        // Every send made before close settled, typed; against this live server each is written.
        const outcomes = JSON.parse(closed[1]!) as string[];
        assert.equal(outcomes.length, count, out);
        assert.deepEqual(outcomes.filter((o) => !o.startsWith('acked:')), [], `sends not written: ${out}`);
        assert.equal(closed[2], '0', `a lookup was still under way after ${what}.close(): ${out}`);
        // Neither the refresh's 30 s deadline nor anything else of the client: its pipes.
        assert.ok(!(JSON.parse(closed[3]!) as string[]).includes('Timeout'), `a timer still held the process after ${what}.close(): ${closed[3]}`);
        // The refresh is still held at the server: only its cancel lets the child go.
        assert.equal(await within(exited, 10_000, `the child to exit after ${what}.close() (${out.trim()})`), 0, out);
        assert.doesNotMatch(out, /UNHANDLED/);
        // None lost silently: each value written once (with the first), where its outcome said.
        const written = new Map<string, number[]>();
        for (let p = 0; p < 3; p++) for (const m of await r.client.fetch('s', p, 0, { maxBytes: 1 << 20 })) written.set(m.value.toString(), [...(written.get(m.value.toString()) ?? []), p]);
        assert.deepEqual([...written.keys()].sort(), ['first', ...outcomes.map((_, i) => `v${i}`)].sort());
        outcomes.forEach((o, i) => assert.deepEqual(written.get(`v${i}`), [Number(o.slice('acked:'.length))], `v${i}`));
      } finally {
        child?.kill('SIGKILL');
        letGo();
        await r.stop();
      }
    });
  }
});

describe('close({ timeoutMs }): the option checked; the embedded producer', function () {
  this.timeout(60_000);

  it('producer.close and client.close refuse a timeoutMs that is NaN, negative, fractional, not a number, or options that are not an object, and stay open', async () => {
    const r = await startServer();
    const broker = await openBroker();
    try {
      await r.client.createTopic('t');
      await broker.createTopic('t');
      const bad: unknown[] = [{ timeoutMs: NaN }, { timeoutMs: -1 }, { timeoutMs: 1.5 }, { timeoutMs: '100' }, { timeoutMs: Infinity }, { timeoutMs: 2 ** 31 }, null, 5];
      const remote = r.client.producer();
      const embedded = broker.producer();
      for (const opts of bad) {
        for (const close of [(o: unknown) => remote.close(o as never), (o: unknown) => embedded.close(o as never), (o: unknown) => r.client.close(o as never)]) {
          const e = await expectCode(close(opts), 'INVALID_ARGUMENT');
          assert.ok(e instanceof UringmqError);
        }
      }
      // Still open: a bad option closed nothing.
      assert.equal(r.client.isClosed, false);
      await remote.send('t', { value: 'after' });
      await embedded.send('t', { value: 'after' });
      await remote.close({ timeoutMs: 0 }); // nothing outstanding: resolves, nothing rejected
      await embedded.close({ timeoutMs: 1000 });
      await expectCode(remote.send('t', { value: 'late' }), 'BROKER_CLOSED');
      await expectCode(embedded.send('t', { value: 'late' }), 'BROKER_CLOSED');
      await expectCode(embedded.sendBatch('t', [{ value: 'late' }]), 'BROKER_CLOSED');
    } finally {
      await broker.close();
      await r.stop();
    }
  });

  it("producer.close({ timeoutMs }): a send that was waiting for its topic's partition count at close is sent at once, not after lingerMs", async () => {
    const r = await startServer();
    try {
      await r.client.createTopic('fresh');
      // lingerMs far past the timeout: a send that lingers through close outlives it.
      const p = r.client.producer({ lingerMs: 60_000 });
      const sent = p.send('fresh', { value: 'v' }); // the partition count is not known yet: it waits for the lookup
      const t0 = Date.now();
      // Before the fix the lookup answered after close() had cut the accumulators: the
      // record lingered 60 s in a new one, close waited for it past its timeout, and its
      // timeout left it pending (it rejects only what was handed to the stream or waits).
      // The timeout is long for a lookup and a send on a slow build (1 s was not: a lookup
      // of 1.2 s ran into it, and the send was given up).
      await within(p.close({ timeoutMs: 10_000 }), 20_000, 'close({ timeoutMs: 10_000 })');
      assert.ok(Date.now() - t0 < 9500, `close took ${Date.now() - t0} ms against a live server: it waited out its timeout`);
      assert.equal((await within(sent, 100, 'the send')).offset, 0);
    } finally {
      await r.stop();
    }
  });

  it('the embedded producer: close() sends what lingers and waits for it; close({ timeoutMs }) does the same when the disk keeps up', async () => {
    const broker = await openBroker();
    try {
      await broker.createTopic('t');
      const p = broker.producer({ lingerMs: 60_000 });
      const sent = Array.from({ length: 5 }, (_, i) => p.send('t', { value: `v${i}` }));
      await p.close({ timeoutMs: 30_000 });
      assert.deepEqual((await Promise.all(sent)).map((s) => s.offset), [0, 1, 2, 3, 4]);
      const q = broker.producer({ lingerMs: 60_000 });
      const more = q.send('t', { value: 'v5' });
      await q.close();
      assert.equal((await more).offset, 5);
    } finally {
      await broker.close();
    }
  });

  /**
   * `broker`'s write queue over its high-water mark, as its producers see it, until
   * `writable()`; `restore()` puts the broker's own state back.
   */
  function holdWriteQueue(broker: Broker): { writable: () => void; restore: () => void } {
    const b = broker as unknown as { overHighWater: boolean; whenWritable: () => Promise<void> };
    let over = true;
    let writable!: () => void;
    Object.defineProperty(b, 'overHighWater', { configurable: true, get: () => over });
    const whenWritable = new Promise<void>((r) => (writable = () => ((over = false), r())));
    b.whenWritable = () => whenWritable;
    return {
      writable,
      restore: () => {
        writable();
        delete (b as { overHighWater?: unknown }).overHighWater;
        delete (b as { whenWritable?: unknown }).whenWritable;
      },
    };
  }

  it('the embedded producer: a send held back by the write queue at close() and resumed before its timeout is appended at once, not after lingerMs', async () => {
    const broker = await openBroker();
    let held: ReturnType<typeof holdWriteQueue> | undefined;
    try {
      await broker.createTopic('t');
      held = holdWriteQueue(broker);
      const { writable } = held;
      const p = broker.producer({ lingerMs: 60_000 });
      const sent = p.send('t', { value: 'held' }); // held back
      const closed = p.close({ timeoutMs: 2000 });
      await sleep(50);
      writable();
      const t0 = Date.now();
      // Before the fix the resumed send went into an accumulator made after close()'s
      // flush and lingered 60 s: close resolved at its timeout, the send left pending.
      await within(closed, 5000, 'close({ timeoutMs: 2000 })');
      assert.ok(Date.now() - t0 < 1500, `close took ${Date.now() - t0} ms after the queue drained`);
      assert.equal((await within(sent, 100, 'the held send')).offset, 0);
    } finally {
      held?.restore();
      await broker.close();
    }
  });

  it('the embedded producer: flush() with sends held back by the write queue appends them once let go, together, not after lingerMs', async () => {
    const broker = await openBroker();
    const b = broker as unknown as { appendBatch: (...args: unknown[]) => Promise<unknown> };
    let held: ReturnType<typeof holdWriteQueue> | undefined;
    try {
      await broker.createTopic('t');
      held = holdWriteQueue(broker);
      const { writable } = held;
      let batches = 0;
      const append = b.appendBatch.bind(broker);
      b.appendBatch = (...args: unknown[]) => (batches++, append(...args));
      const p = broker.producer({ lingerMs: 60_000 });
      const sent = Array.from({ length: 20 }, (_, i) => p.send('t', { value: `held ${i}`, partition: 0 })); // held back
      const flushed = p.flush();
      await sleep(50);
      writable();
      // Before the fix the sends let go went into an accumulator made after flush()'s
      // cut and lingered 60 s there, flush() waiting for them.
      await within(flushed, 10_000, 'flush() once the held sends were let go');
      assert.deepEqual(
        (await Promise.all(sent)).map((r) => r.offset),
        Array.from({ length: 20 }, (_, i) => i),
      );
      assert.equal(batches, 1, 'the sends let go together went as one batch');
      // A send after the flush lingers again, as lingerMs says.
      const later = p.send('t', { value: 'later' });
      await sleep(50);
      assert.equal(batches, 1, 'a send after the flush lingers');
      await p.close();
      assert.equal((await later).offset, 20);
    } finally {
      held?.restore();
      delete (b as { appendBatch?: unknown }).appendBatch;
      await broker.close();
    }
  });

  it('the embedded producer: close({ timeoutMs }) with a disk that never answers rejects every send outstanding with BROKER_CLOSED and resolves', async () => {
    const broker = await openBroker();
    const b = broker as unknown as { appendBatch: (...args: unknown[]) => Promise<unknown> };
    try {
      await broker.createTopic('t', { partitions: 2 });
      // A hung disk, as the producer sees it: appends that never complete.
      b.appendBatch = () => new Promise(() => undefined);
      const p = broker.producer({ lingerMs: 60_000 });
      const outstanding = [p.send('t', { value: 'a', partition: 0 }), p.send('t', { value: 'b', partition: 1 }), p.sendBatch('t', [{ value: 'c' }])];
      const errors = outstanding.map((x) => rejection(x));
      const t0 = Date.now();
      await within(p.close({ timeoutMs: 200 }), 5000, 'close({ timeoutMs: 200 })');
      assert.ok(Date.now() - t0 >= 150, 'close resolved before its timeout');
      for (const e of await within(Promise.all(errors), 1000, 'the outstanding sends to settle')) {
        assert.equal(e.code, 'BROKER_CLOSED', e.message);
        assert.match(e.message, /close\(\)'s timeout of 200 ms passed/);
      }
    } finally {
      delete (b as { appendBatch?: unknown }).appendBatch; // the prototype's again
      await broker.close();
    }
  });
});

describe('client.close(): consumers and producers made while it runs', function () {
  this.timeout(30_000);

  it("over grpc-js, a consumer closed while its join takes 2.5 s (a slow read of the group's offsets) still waits for the member to leave: the server answers the probes, so the call is not given up on", async () => {
    const r = await startServer();
    const c = await connect(`ipv4:${r.address}`); // its Subscribe over grpc-js
    const coord = r.broker.groups;
    const join = coord.join.bind(coord);
    try {
      await r.client.createTopic('t');
      let joins = 0;
      coord.join = async (...a: Parameters<typeof join>) => {
        const m = await join(...a);
        joins++;
        await sleep(2500);
        return m;
      };
      const consumer = c.consumer({ topic: 't', group: 'g', from: 'earliest' });
      void consumer[Symbol.asyncIterator]().next().catch(() => undefined); // joins when iterated
      await waitFor(() => joins === 1, 10_000, 'the member to be in');
      await consumer.close();
      // Given up on after a second, close() resolved with the member still in: refused.
      await r.client.deleteGroup('g', 't');
    } finally {
      coord.join = join;
      await c.close();
      await r.stop();
    }
  });

  it('a consumer made and iterated while client.close() is under way does not stay subscribed after it: its iteration ends, no heartbeat timer or stream is left', async () => {
    const r = await startServer();
    try {
      await r.client.createTopic('t', { partitions: 1 });
      const producer = r.client.producer({ lingerMs: 200 });
      void producer.send('t', { value: 'lingering' }); // close() waits for it to land
      const closing = r.client.close();
      let made: ReturnType<typeof r.client.consumer> | null = null;
      let ended: Promise<unknown> = Promise.resolve();
      try {
        made = r.client.consumer({ topic: 't', group: 'g', from: 'latest' });
        const it = made[Symbol.asyncIterator]();
        ended = it.next().then(
          (x) => x,
          (e: unknown) => e,
        );
      } catch (e) {
        assert.ok(e instanceof UringmqError, String(e));
        assert.equal(e.code, 'BROKER_CLOSED');
      }
      await closing;
      const res = await Promise.race([ended, sleep(3000).then(() => 'hang' as const)]);
      assert.notEqual(res, 'hang', 'the iteration of a consumer made during client.close() never ended');
      // Nobody is still a member of the group once the client is closed.
      const d = await waitFor(async () => ((await r.broker.describeTopic('t', { groups: true })).groups ?? []).every((g) => (g.members ?? []).length === 0), 3000).then(() => true, () => false);
      assert.ok(d, 'the consumer made during close() is still a member of its group');
    } finally {
      await r.server.stop(2000);
    }
  });
  it('producer() while client.close() is under way is refused with BROKER_CLOSED, as consumer() is: close() closes only the producers it had when it began', async () => {
    const r = await startServer();
    try {
      await r.client.createTopic('t', { partitions: 1 });
      void r.client.producer({ lingerMs: 200 }).send('t', { value: 'lingering' }); // close() waits for it to land
      const closing = r.client.close();
      assert.throws(() => r.client.producer(), (e: unknown) => e instanceof UringmqError && e.code === 'BROKER_CLOSED');
      await closing;
      assert.deepEqual((await r.broker.read('t', 0, 0)).map((m) => m.value.toString()), ['lingering']);
    } finally {
      await r.server.stop(2000);
    }
  });
});
