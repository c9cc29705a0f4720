import { strict as assert } from 'node:assert';
import { execFileSync, spawnSync, type ChildProcess } from 'node:child_process';
import { spawn } from './fixtures/children';
import * as fs from 'node:fs';
import * as http2 from 'node:http2';
import * as net from 'node:net';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { Broker, UringmqError } from '../src';
import { connect, type Client } from '../src/client';
import { readOffsetsFile } from '../src/broker/offsets_file';
import { brokerService } from '../src/grpc/service';
import { freePort, sleep, tmpDir } from './helpers';
import { spawnServer, type ServerProcess } from './fixtures/server_process';

const CLI = path.join(__dirname, '..', 'src', 'cli', 'main.ts');
const run = (args: string[], input?: string, env?: Record<string, string>) => {
  const r = spawnSync(process.execPath, ['--require', 'tsx/cjs', CLI, ...args], { input, encoding: 'utf8', timeout: 60_000, env: env ? { ...process.env, ...env } : undefined });
  return { code: r.status, out: r.stdout, err: r.stderr };
};

/** A Subscribe stream of its own group on `topic`, and the status it ends with. */
/** Partition 0's end offset of `topic` once it reaches `n` (or after 15 s, whatever it is then). */
async function endOffsetAfter(client: Client, topic: string, n: number): Promise<number> {
  const end = async () => (await client.describeTopic(topic)).partitions[0]!.endOffset;
  for (let i = 0; i < 300 && (await end()) < n; i++) await sleep(50);
  return end();
}

/** Waits (up to 15 s) until the group g of topic gd has `n` members. */
async function waitForMembers(client: Client, n: number): Promise<void> {
  const members = async () => (await client.describeTopic('gd')).groups.find((g) => g.group === 'g')?.members.length ?? 0;
  for (let i = 0; i < 300 && (await members()) !== n; i++) await sleep(50);
  assert.equal(await members(), n);
}

function openSubscribe(raw: grpc.Client, topic: string): { st: grpc.ClientDuplexStream<unknown, unknown>; ended: Promise<grpc.status>; joined: Promise<boolean> } {
  const d = brokerService.subscribe!;
  const st = raw.makeBidiStreamRequest(d.path, d.requestSerialize, d.responseDeserialize);
  const ended = new Promise<grpc.status>((resolve) => {
    st.on('error', (x: grpc.ServiceError) => resolve(x.code));
    st.on('end', () => resolve(grpc.status.OK));
  });
  // Its first answer (the assignment): the server holds the stream from then on.
  const joined = Promise.race([new Promise<boolean>((resolve) => st.once('data', () => resolve(true))), ended.then(() => false)]);
  st.on('data', () => undefined);
  st.write({ subscribe: { topic, group: `g${Math.random()}` } });
  return { st, ended, joined };
}

describe('CLI', function () {
  this.timeout(120_000);
  let srv: ServerProcess | null = null;
  // A server a test left running (it failed before its own stop) is killed, and waited
  // for: the next test starts on a machine with no stray server taking its CPU.
  afterEach(async () => {
    const child = srv?.child;
    srv = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
  });

  /** The CLI flags that aim a command at `dir` itself, or at a server spawned on it. */
  const targetFor = async (where: 'dir' | 'server', dir: string): Promise<string[]> => {
    if (where === 'dir') return ['--dir', dir];
    srv = await spawnServer(dir);
    return ['--server', srv.address];
  };

  for (const where of ['dir', 'server'] as const) {
    it(`topics, produce and consume against --${where}`, async () => {
      const dir = tmpDir();
      const target = await targetFor(where, dir);
      let r = run(['topics', 'create', 'cli', '--partitions', '2', ...target]);
      assert.equal(r.code, 0, r.err);
      assert.equal(JSON.parse(r.out).partitions.length, 2);
      assert.equal(run(['topics', 'list', ...target]).out.trim(), 'cli');
      r = run(['produce', 'cli', '--partition', '1', ...target], 'one\ntwo\nthree\n');
      assert.equal(r.code, 0, r.err);
      r = run(['consume', 'cli', '--group', 'g', '--from', 'earliest', '--max', '3', '--json', ...target]);
      assert.equal(r.code, 0, r.err);
      const lines = r.out.trim().split('\n').map((l) => JSON.parse(l) as { value: string; offset: number; partition: number });
      assert.deepEqual(lines.map((l) => l.value), ['one', 'two', 'three']);
      assert.deepEqual(lines.map((l) => l.partition), [1, 1, 1]);
      const d = JSON.parse(run(['topics', 'describe', 'cli', ...target]).out);
      assert.equal(d.partitions[1].endOffset, 3);
      // The group's consumer is gone; the group is still described, where it stopped.
      const g = (d.groups as Array<{ group: string; committed: number[]; members: unknown[] }>).find((x) => x.group === 'g');
      assert.ok(g, JSON.stringify(d.groups));
      assert.equal(g.committed[1], 3);
      // Its committed offsets, moved back: the group reads again from there.
      assert.deepEqual(JSON.parse(run(['groups', 'offsets', 'cli', 'g', ...target]).out), g.committed);
      r = run(['groups', 'commit', 'cli', 'g', '--partition', '1', '--offset', '1', ...target]);
      assert.equal(r.code, 0, r.err);
      assert.match(r.err, /committed offset 1 of cli\/1 for group g/);
      assert.equal(JSON.parse(run(['groups', 'offsets', 'cli', 'g', ...target]).out)[1], 1);
      r = run(['consume', 'cli', '--group', 'g', '--max', '2', ...target]);
      assert.deepEqual(r.out.trim().split('\n'), ['two', 'three']);
      r = run(['groups', 'commit', 'cli', 'g', '--partition', '1', '--offset', 'earliest', ...target]);
      assert.equal(r.code, 0, r.err);
      assert.equal(JSON.parse(run(['groups', 'offsets', 'cli', 'g', ...target]).out)[1], 0);
      assert.equal(run(['groups', 'commit', 'cli', 'g', '--partition', '1', '--offset', 'latest', ...target]).code, 0);
      assert.equal(JSON.parse(run(['groups', 'offsets', 'cli', 'g', ...target]).out)[1], 3);
      for (const [args, msg] of [
        [['--partition', '1', '--offset', 'x'], /INVALID_ARGUMENT: --offset must be/],
        [['--partition', '1', '--offset', '4'], /OFFSET_OUT_OF_RANGE/],
        [['--partition', '7', '--offset', '0'], /INVALID_ARGUMENT: partition 7 does not exist/],
        [['--partition', '7', '--offset', 'latest'], /INVALID_ARGUMENT: partition 7 does not exist/],
        [['--offset', '0'], /required option '--partition <n>'/],
      ] as const) {
        r = run(['groups', 'commit', 'cli', 'g', ...args, ...target]);
        assert.notEqual(r.code, 0, args.join(' '));
        assert.match(r.err, msg);
      }
      assert.equal(JSON.parse(run(['groups', 'offsets', 'cli', 'g', ...target]).out)[1], 3, 'the refused ones changed nothing');
      if (where === 'server') {
        // The same through the native fetch plane, as a member of another group.
        const fetchPort = Number(/"fetchPort":(\d+)/.exec(srv!.logs())![1]);
        r = run(['consume', 'cli', '--group', 'f', '--from', 'earliest', '--max', '3', '--transport', 'fetch', '--fetch-address', `127.0.0.1:${fetchPort}`, ...target]);
        assert.equal(r.code, 0, r.err);
        assert.deepEqual(r.out.trim().split('\n'), ['one', 'two', 'three']);
      }
      r = run(['consume', 'cli', '--from', 'earliest', '--partition', '1', '--max', '2', ...target]);
      assert.deepEqual(r.out.trim().split('\n'), ['one', 'two']);
      // An offset past a partition's end (partition 0 is empty) waits there, as on a
      // data directory, rather than failing: the other partition is read meanwhile.
      r = run(['consume', 'cli', '--from', '2', '--max', '1', ...target]);
      assert.equal(r.code, 0, r.err);
      assert.equal(r.out, 'three\n');
      r = run(['topics', 'describe', 'nope', ...target]);
      assert.equal(r.code, 2);
      assert.match(r.err, /TOPIC_NOT_FOUND/);
      // Bad arguments: typed errors, exit 2, nothing made or consumed.
      r = run(['produce', 'nope', ...target], Array.from({ length: 20_000 }, (_, i) => `l${i}`).join('\n') + '\n');
      assert.equal(r.code, 2);
      assert.match(r.err, /TOPIC_NOT_FOUND/);
      r = run(['topics', 'create', 'zero', '--partitions', '0', ...target]);
      assert.equal(r.code, 2, 'partitions 0 is refused, not taken for the default');
      assert.match(r.err, /INVALID_ARGUMENT/);
      r = run(['consume', 'cli', '--group', 'g', '--partition', '0', '--max', '1', ...target]);
      assert.equal(r.code, 2);
      assert.match(r.err, /INVALID_ARGUMENT: --partition is for reading without --group/);
      r = run(['consume', 'cli', '--from', 'abc', '--max', '1', ...target]);
      assert.equal(r.code, 2);
      assert.match(r.err, /INVALID_ARGUMENT: --from must be/);
      assert.notEqual(run(['consume', 'cli', '--max', '0', ...target]).code, 0);
      assert.equal(run(['topics', 'list', ...target]).out.trim(), 'cli');
      assert.equal(run(['topics', 'delete', 'cli', ...target]).code, 0);
      assert.equal(run(['topics', 'list', ...target]).out.trim(), '');
    });

    it(`groups delete against --${where}: refused while the group has a member, then its offsets are gone`, async () => {
      const dir = tmpDir();
      const target = await targetFor(where, dir);
      assert.equal(run(['topics', 'create', 'gd', ...target]).code, 0);
      let r = run(['groups', 'commit', 'gd', 'g', '--partition', '0', '--offset', '0', ...target]);
      assert.equal(r.code, 0, r.err);
      if (where === 'server') {
        // A member of the group (a client's consumer): the delete is refused.
        const client = await connect(srv!.address);
        try {
          const c = client.consumer({ topic: 'gd', group: 'g' });
          const it = c[Symbol.asyncIterator]();
          void it.next().catch(() => undefined); // a remote consumer joins when iterated
          await waitForMembers(client, 1);
          r = run(['groups', 'delete', 'gd', 'g', ...target]);
          assert.equal(r.code, 2);
          assert.match(r.err, /FAILED_PRECONDITION: group g has 1 member on topic gd/);
          await c.close();
          await waitForMembers(client, 0);
        } finally {
          await client.close();
        }
      }
      r = run(['groups', 'delete', 'gd', 'g', ...target]);
      assert.equal(r.code, 0, r.err);
      assert.match(r.err, /deleted group g on gd/);
      assert.deepEqual(JSON.parse(run(['groups', 'offsets', 'gd', 'g', ...target]).out), [-1]);
      r = run(['groups', 'delete', 'gd', 'g', ...target]);
      assert.equal(r.code, 2);
      assert.match(r.err, /GROUP_NOT_FOUND/);
      r = run(['groups', 'delete', 'nope', 'g', ...target]);
      assert.equal(r.code, 2);
      assert.match(r.err, /TOPIC_NOT_FOUND/);
    });

    it(`topics create --retention-bytes 0 / --retention-ms 0 against --${where} make a limit of 0, which create and describe print as 0; without them, no limit (no field)`, async () => {
      // Over --server a 0 was refused (0 on the wire meant no limit), and a topic with
      // a limit of 0 was described as having none.
      const dir = tmpDir();
      const target = await targetFor(where, dir);
      for (const [name, flags, retention] of [
        ['z', ['--retention-bytes', '0', '--retention-ms', '0'], { maxBytes: 0, maxAgeMs: 0 }],
        ['zb', ['--retention-bytes', '0'], { maxBytes: 0 }],
        ['n', [], {}],
      ] as const) {
        const r = run(['topics', 'create', name, ...flags, ...target]);
        assert.equal(r.code, 0, r.err);
        assert.deepEqual(JSON.parse(r.out).retention, retention, `create ${name}`);
        assert.deepEqual(JSON.parse(run(['topics', 'describe', name, ...target]).out).retention, retention, `describe ${name}`);
      }
    });
  }

  /** Waits for a child's exit, killing it (and failing) after `ms`. */
  const exitOf = (child: ChildProcess, ms: number): Promise<number | null> =>
    new Promise((resolve, reject) => {
      if (child.exitCode !== null) return resolve(child.exitCode);
      const t = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`no exit within ${ms} ms`));
      }, ms);
      child.once('exit', (code) => {
        clearTimeout(t);
        resolve(code);
      });
    });

  it('a flag the parser refuses (unknown, or missing its value) says so in a line and where help is, not the whole help after it', () => {
    for (const args of [['serve', '--bogus'], ['produce', 't', '--partition'], ['topics', 'create']]) {
      const r = run(args);
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.err}`);
      assert.match(r.err, /^error: /m, args.join(' '));
      assert.match(r.err, /--help/, args.join(' '));
      assert.doesNotMatch(r.err, /^Usage: /m, `${args.join(' ')} printed the whole help: ${r.err}`);
      assert.ok(r.err.split('\n').length <= 4, `${args.join(' ')}: ${r.err}`);
    }
  });

  it('serve keeps serving once its stdout reader is gone (EPIPE from its first line on), and still stops cleanly on SIGTERM', async () => {
    // A free port from the OS, as the ports line that tells it will not be read.
    const port = await freePort();
    const dir = path.join(tmpDir(), 'data');
    const child = spawn(process.execPath, ['--require', 'tsx/cjs', CLI, 'serve', '--dir', dir, '--port', String(port), '--no-fetch', '--no-metrics', '--log-level', 'info'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout!.destroy(); // every line it writes, logs included, now fails with EPIPE
    srv = { child } as ServerProcess; // killed by afterEach if the test fails
    let client: Awaited<ReturnType<typeof connect>> | null = null;
    const until = Date.now() + 30_000;
    while (!client && Date.now() < until) {
      client = await connect(`127.0.0.1:${port}`, { connectTimeoutMs: 1000 }).catch(() => null);
      if (!client) assert.equal(child.exitCode, null, `serve exited: ${stderr}`);
    }
    assert.ok(client, `serve never answered: ${stderr}`);
    try {
      await client.createTopic('t', { partitions: 1 });
      const p = client.producer({ lingerMs: 0 });
      await p.send('t', { value: 'after EPIPE' });
      await p.close();
      assert.equal((await client.describeTopic('t')).partitions[0]!.endOffset, 1);
    } finally {
      await client.close();
    }
    child.kill('SIGTERM');
    assert.equal(await exitOf(child, 30_000), 0, stderr);
    assert.doesNotMatch(stderr, /Error|EPIPE/);
  });

  it('consume --server without a group polls many partitions at once: messages on the 400th print soon, and --max stops at exactly that many', async () => {
    srv = await spawnServer(tmpDir());
    const client = await connect(srv.address);
    try {
      await client.createTopic('wide', { partitions: 400 });
      const p = client.producer({ lingerMs: 0 });
      for (const partition of [0, 100, 200, 399]) await p.send('wide', { value: `on ${partition}`, partition });
      await p.close();
    } finally {
      await client.close();
    }
    // One partition at a time, 100 ms a long poll, a round took 40 s: past this timeout.
    const r = spawnSync(process.execPath, ['--require', 'tsx/cjs', CLI, 'consume', 'wide', '--from', 'earliest', '--max', '3', '--server', srv.address], { encoding: 'utf8', timeout: 20_000 });
    assert.equal(r.status, 0, `status ${r.status} (${r.signal ?? 'no signal'}): ${r.stderr}`);
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines.length, 3, r.stdout);
    for (const l of lines) assert.match(l, /^on (0|100|200|399)$/);
    assert.equal(new Set(lines).size, 3, r.stdout);
    srv.child.kill('SIGTERM');
    assert.equal((await srv.exited).code, 0);
  });

  it('serve stopped by SIGHUP (its terminal closed) closes the data directory cleanly and exits 0', async () => {
    const dir = path.join(tmpDir(), 'data');
    srv = await spawnServer(dir);
    const client = await connect(srv.address);
    try {
      await client.createTopic('t', { partitions: 1 });
      const p = client.producer({ lingerMs: 0 });
      await p.send('t', { value: 'before the hangup' });
      await p.close();
    } finally {
      await client.close();
    }
    srv.child.kill('SIGHUP');
    const { code, signal } = await srv.exited;
    assert.deepEqual({ code, signal }, { code: 0, signal: null }, srv.logs());
    assert.equal((JSON.parse(fs.readFileSync(path.join(dir, 'state.json'), 'utf8')) as { clean: boolean }).clean, true, 'state.json says the run crashed');
  });

  it('consume ends with status 0 once its stdout reader is gone, without acking what it could not print', async () => {
    const dir = path.join(tmpDir(), 'data');
    assert.equal(run(['topics', 'create', 't', '--dir', dir]).code, 0);
    assert.equal(run(['produce', 't', '--dir', dir], Array.from({ length: 2000 }, (_, i) => `line ${i} ${'x'.repeat(200)}`).join('\n')).code, 0);
    const child = spawn(process.execPath, ['--require', 'tsx/cjs', CLI, 'consume', 't', '--group', 'g', '--from', 'earliest', '--dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    // Gone before the first line: nothing it could not print may be acked.
    child.stdout!.destroy();
    assert.equal(await exitOf(child, 30_000), 0, stderr);
    assert.doesNotMatch(stderr, /Error|EPIPE/);
    // The data directory was closed cleanly and the group acked nothing: it starts
    // again from the first line.
    const again = run(['consume', 't', '--group', 'g', '--from', 'earliest', '--dir', dir, '--max', '1']);
    assert.equal(again.code, 0, again.err);
    assert.match(again.out, /^line 0 x+\n$/);
    // A reader that takes the first chunk and goes (`| head -1`): what reached the pipe
    // was acked, the rest was not, and the next reader goes on from there.
    const child2 = spawn(process.execPath, ['--require', 'tsx/cjs', CLI, 'consume', 't', '--group', 'g', '--from', 'earliest', '--dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr2 = '';
    child2.stderr!.on('data', (d: Buffer) => (stderr2 += d.toString()));
    await new Promise((resolve) => child2.stdout!.once('data', resolve));
    child2.stdout!.destroy();
    assert.equal(await exitOf(child2, 30_000), 0, stderr2);
    const third = run(['consume', 't', '--group', 'g', '--from', 'earliest', '--dir', dir, '--max', '1']);
    assert.equal(third.code, 0, third.err);
    // Past what the second reader was given (lines 1 on), short of the end.
    const k = Number(/^line (\d+) x+\n$/.exec(third.out)?.[1]);
    assert.ok(k > 1 && k < 2000, third.out);
  });

  it('consume notices at once that its stdout pipe has no reader (`| head -0`), though no message comes to fail a write, and exits 0, closing cleanly', async () => {
    const dir = path.join(tmpDir(), 'data');
    assert.equal(run(['topics', 'create', 't', '--partitions', '2', '--dir', dir]).code, 0);
    srv = await spawnServer(path.join(tmpDir(), 'served'));
    const client = await connect(srv.address);
    try {
      await client.createTopic('t', { partitions: 2 });
    } finally {
      await client.close();
    }
    const consume = ['--require', 'tsx/cjs', CLI, 'consume', 't', '--from', 'latest'];
    for (const args of [['--dir', dir], ['--dir', dir, '--group', 'g'], ['--server', srv.address], ['--server', srv.address, '--group', 'g']]) {
      // A shell's pipe whose reader is gone before the command starts; its status said on
      // stderr. In a process group of its own: a consume left waiting is killed with it.
      const sh = spawn('sh', ['-c', '{ "$@"; echo "consume exited $?" >&2; } | head -c 0', 'sh', process.execPath, ...consume, ...args], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
      let stderr = '';
      sh.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      try {
        // Nothing is ever produced: before, it waited here for a message to fail a write.
        await exitOf(sh, 30_000);
      } finally {
        try {
          process.kill(-sh.pid!, 'SIGKILL');
        } catch {
          // all gone
        }
      }
      assert.match(stderr, /consume exited 0\n$/, `${args.join(' ')}: ${stderr}`);
      assert.doesNotMatch(stderr, /Error|EPIPE|uringmq:/, args.join(' '));
    }
    // Node's own stdio pipes are socket pairs: the parent's end closed reads as a hangup too.
    const child = spawn(process.execPath, [...consume, '--dir', dir, '--group', 'g'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout!.destroy();
    assert.equal(await exitOf(child, 30_000), 0, stderr);
    assert.doesNotMatch(stderr, /Error|EPIPE|uringmq:/);
    assert.equal((JSON.parse(fs.readFileSync(path.join(dir, 'state.json'), 'utf8')) as { clean: boolean }).clean, true, 'state.json says the run crashed');
  });

  it('consume whose stdout fails (ENOSPC: a full disk) exits 2 saying so, after closing its data directory cleanly', () => {
    const dir = path.join(tmpDir(), 'data');
    assert.equal(run(['topics', 'create', 't', '--dir', dir]).code, 0);
    assert.equal(run(['produce', 't', '--dir', dir], 'one\ntwo\n').code, 0);
    const full = fs.openSync('/dev/full', 'w');
    try {
      const r = spawnSync(process.execPath, ['--require', 'tsx/cjs', CLI, 'consume', 't', '--group', 'g', '--from', 'earliest', '--dir', dir], { stdio: ['ignore', full, 'pipe'], encoding: 'utf8', timeout: 60_000 });
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, /cannot write to stdout: ENOSPC/);
    } finally {
      fs.closeSync(full);
    }
    // It exited at the error, the broker still open: the next open took it for a crash.
    assert.equal((JSON.parse(fs.readFileSync(path.join(dir, 'state.json'), 'utf8')) as { clean: boolean }).clean, true, 'state.json says the run crashed');
    // Nothing was printed, nothing acked.
    const again = run(['consume', 't', '--group', 'g', '--from', 'earliest', '--dir', dir, '--max', '1']);
    assert.equal(again.out, 'one\n', again.err);
  });

  it('serve takes keepalive, connection age and the stream limit from the environment: it pings, refuses a stream past the limit, and sends GOAWAY at the age limit', async () => {
    const env: Record<string, string> = {
      URINGMQ_KEEPALIVE_TIME_MS: '200', // the default is 2 hours: pings in the first second come from this
      URINGMQ_KEEPALIVE_TIMEOUT_MS: '5000',
      URINGMQ_MAX_CONNECTION_AGE_MS: '1500', // the default is none
      URINGMQ_MAX_CONNECTION_AGE_GRACE_MS: '300',
      URINGMQ_MAX_CONCURRENT_STREAMS: '1',
    };
    Object.assign(process.env, env);
    try {
      srv = await spawnServer(path.join(tmpDir(), 'data'));
    } finally {
      for (const k of Object.keys(env)) delete process.env[k];
    }
    // A bare HTTP/2 connection: it counts the server's PINGs and sees its GOAWAY.
    const session = http2.connect(`http://${srv.address}`);
    session.on('error', () => undefined); // the server ends it; that is the point
    const opened = Date.now();
    let pings = 0;
    session.on('ping', () => pings++);
    const goaway = new Promise<number>((resolve) => session.once('goaway', () => resolve(Date.now() - opened)));
    const raw = new grpc.Client(srv.address, grpc.credentials.createInsecure());
    try {
      // The stream limit: one Subscribe fits, the next is refused.
      const admin = await connect(srv.address);
      await admin.createTopic('t');
      await admin.close();
      const first = openSubscribe(raw, 't');
      assert.ok(await first.joined, 'the first Subscribe ended unanswered'); // a fixed 200 ms could be before the server had it
      assert.equal(await openSubscribe(raw, 't').ended, grpc.status.RESOURCE_EXHAUSTED);
      first.st.cancel();
      await first.ended;
      // The connection's age: GOAWAY after about 1.5 s (grpc-js adds up to 10% of jitter),
      // with the keepalive PINGs before it.
      const age = await Promise.race([goaway, sleep(15_000).then(() => -1)]);
      assert.ok(age >= 1000, `GOAWAY ${age < 0 ? 'never came' : `after ${age} ms`}, expected after about 1500 ms`);
      assert.ok(pings >= 2, `${pings} keepalive pings before GOAWAY, expected several at 200 ms`);
    } finally {
      raw.close();
      session.destroy();
    }
    srv.child.kill('SIGTERM');
    assert.equal((await srv.exited).code, 0);
  });

  it('serve reads a config file and environment, and rejects unknown settings and values of the wrong type or range', async () => {
    const dir = tmpDir();
    const cfg = path.join(dir, 'uringmq.json');
    fs.writeFileSync(cfg, JSON.stringify({ durability: 'none', keepaliveTimeMs: 20000, maxConcurrentStreams: 2, maxRecordBytes: 40_000, maxTopics: 1 }));
    process.env.URINGMQ_MAX_MESSAGE_BYTES = '65536';
    process.env.URINGMQ_MAX_GROUPS = '1';
    try {
      srv = await spawnServer(path.join(dir, 'data'), 0, ['--config', cfg]);
    } finally {
      delete process.env.URINGMQ_MAX_MESSAGE_BYTES;
      delete process.env.URINGMQ_MAX_GROUPS;
    }
    assert.match(srv.logs(), /"port":\d+/);
    const client = await connect(srv.address);
    const raw = new grpc.Client(srv.address, grpc.credentials.createInsecure());
    try {
      await client.createTopic('t');
      // maxTopics from the file, maxGroups from the environment.
      assert.match((await client.createTopic('u').then(() => null, (x: UringmqError) => x))?.message ?? 'created', /maxTopics is 1/);
      await client.commitOffset('c1', 't', 0, 0);
      assert.match((await client.commitOffset('c2', 't', 0, 0).then(() => null, (x: UringmqError) => x))?.message ?? 'created', /maxGroups is 1/);
      await client.deleteGroup('c1', 't'); // the Subscribe below makes a group
      // maxMessageBytes from the environment: a 100 KB batch is refused, alone.
      const p = client.producer();
      const e = await p.sendBatch('t', [{ value: Buffer.alloc(100_000) }]).then(() => null, (x: UringmqError) => x);
      assert.equal(e?.code, 'RECORD_TOO_LARGE', e?.message);
      assert.match(e!.message, /maxMessageBytes is 65536/);
      assert.equal((await p.send('t', { value: 'small' })).offset, 0);
      // maxRecordBytes from the file: a 50 KB record fits the message limit, not the record limit.
      const big = await p.send('t', { value: Buffer.alloc(50_000) }).then(() => null, (x: UringmqError) => x);
      assert.equal(big?.code, 'RECORD_TOO_LARGE', big?.message);
      assert.match(big!.message, /maxRecordBytes 40000/);
      // maxConcurrentStreams from the file: the producer's PublishStream is one, one
      // Subscribe fits, the next is refused.
      const first = openSubscribe(raw, 't');
      assert.ok(await first.joined, 'the first Subscribe ended unanswered'); // a fixed 200 ms could be before the server had it
      const second = openSubscribe(raw, 't');
      assert.equal(await second.ended, grpc.status.RESOURCE_EXHAUSTED);
      first.st.cancel();
      await first.ended;
    } finally {
      raw.close();
      await client.close();
    }
    srv.child.kill('SIGTERM');
    assert.equal((await srv.exited).code, 0);
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ bogus: 1 }, /unknown setting "bogus"/],
      [{ maxConcurrentStreams: 'abc' }, /INVALID_ARGUMENT: setting "maxConcurrentStreams" .* must be a number, got "abc"/],
      [{ keepaliveTimeMs: -5 }, /INVALID_ARGUMENT: keepaliveTimeMs must be an integer between 1 and \d+, got -5/],
      [{ maxMessageBytes: 10 }, /INVALID_ARGUMENT: maxMessageBytes must be an integer between 65536/],
      [{ permitWithoutStream: 'yes' }, /INVALID_ARGUMENT: setting "permitWithoutStream" .* must be a boolean/],
      [{ logLevel: 'loud' }, /INVALID_ARGUMENT: logLevel must be one of/],
      [{ fetchPort: 70000 }, /INVALID_ARGUMENT: fetchPort must be an integer between 0 and 65535/],
      [{ producerStateScanBytes: -1 }, /INVALID_ARGUMENT: producerStateScanBytes must be a non-negative integer, got -1/],
      [{ maxRecordBytes: 0 }, /INVALID_ARGUMENT: maxRecordBytes/],
      [{ maxConnections: 0 }, /INVALID_ARGUMENT: maxConnections must be an integer between 1 and 1000000, got 0/],
      [{ maxTopics: 0 }, /INVALID_ARGUMENT: maxTopics must be an integer between 1 and 1000000, got 0/],
      [{ maxGroups: '10k' }, /INVALID_ARGUMENT: setting "maxGroups" .* must be a number, got "10k"/],
      [{ maxPartialMessageBytes: '1G' }, /INVALID_ARGUMENT: setting "maxPartialMessageBytes" .* must be a number, got "1G"/],
      [{ maxPartialMessageBytes: 1 << 20 }, /INVALID_ARGUMENT: maxPartialMessageBytes \(1048576\) must be at least maxMessageBytes \(16777216\)/],
      [{ maxPartialMessageBytesPerConnection: '64M' }, /INVALID_ARGUMENT: setting "maxPartialMessageBytesPerConnection" .* must be a number, got "64M"/],
      [{ maxPartialMessageBytesPerConnection: 1 << 20 }, /INVALID_ARGUMENT: maxPartialMessageBytesPerConnection \(1048576\) must be at least maxMessageBytes \(16777216\)/],
      [{ groupCommitUs: 100_001 }, /INVALID_ARGUMENT: groupCommitUs must be an integer between 0 and 100000, got 100001/],
      [{ zeroAheadBytes: 64 * 1024 * 1024 + 1 }, /INVALID_ARGUMENT: zeroAheadBytes must be an integer between 0 and 67108864, got 67108865/],
      [{ durability: -5 }, /INVALID_ARGUMENT: setting "durability" in .*: durability is 'sync', 'none' or a sync interval in ms/],
    ];
    for (const [settings, err] of bad) {
      fs.writeFileSync(cfg, JSON.stringify(settings));
      const fresh = path.join(dir, 'never-made');
      const r = run(['serve', '--config', cfg, '--port', '0', '--dir', fresh]);
      assert.equal(r.code, 2, `${JSON.stringify(settings)}: ${r.err}`);
      assert.match(r.err, err);
      assert.ok(!fs.existsSync(fresh), `${JSON.stringify(settings)} made the data directory before it was refused`);
    }
    // Out of range from a flag: the same error and status, nothing made.
    const flagged = run(['serve', '--max-connections', '0', '--port', '0', '--dir', path.join(dir, 'never-made')]);
    assert.equal(flagged.code, 2, flagged.err);
    assert.match(flagged.err, /INVALID_ARGUMENT: maxConnections must be an integer between 1 and 1000000, got 0/);
    assert.ok(!fs.existsSync(path.join(dir, 'never-made')));
    const groups = run(['serve', '--max-groups', '1000001', '--port', '0', '--dir', path.join(dir, 'never-made')]);
    assert.equal(groups.code, 2, groups.err);
    assert.match(groups.err, /INVALID_ARGUMENT: maxGroups must be an integer between 1 and 1000000, got 1000001/);
    assert.ok(!fs.existsSync(path.join(dir, 'never-made')));
    const partial = run(['serve', '--max-partial-message-bytes', String(2 << 20), '--max-message-bytes', String(4 << 20), '--port', '0', '--dir', path.join(dir, 'never-made')]);
    assert.equal(partial.code, 2, partial.err);
    assert.match(partial.err, /INVALID_ARGUMENT: maxPartialMessageBytes \(2097152\) must be at least maxMessageBytes \(4194304\)/);
    assert.ok(!fs.existsSync(path.join(dir, 'never-made')));
    const share = run(['serve', '--max-partial-message-bytes-per-connection', String(8 << 20), '--max-partial-message-bytes', String(4 << 20), '--max-message-bytes', String(1 << 20), '--port', '0', '--dir', path.join(dir, 'never-made')]);
    assert.equal(share.code, 2, share.err);
    assert.match(share.err, /INVALID_ARGUMENT: maxPartialMessageBytesPerConnection \(8388608\) must be at most maxPartialMessageBytes \(4194304\)/);
    assert.ok(!fs.existsSync(path.join(dir, 'never-made')));
    // The environment's values are checked as strictly, and the variable is named.
    const badEnv: Array<[Record<string, string>, RegExp]> = [
      [{ URINGMQ_PORT: 'abc' }, /INVALID_ARGUMENT: URINGMQ_PORT must be a non-negative integer, got "abc"/],
      [{ URINGMQ_PORT: ' ' }, /INVALID_ARGUMENT: URINGMQ_PORT must be a non-negative integer, got " "/],
      [{ URINGMQ_MAX_BATCH_BYTES: '0x100000' }, /INVALID_ARGUMENT: URINGMQ_MAX_BATCH_BYTES must be a non-negative integer/],
      [{ URINGMQ_PRODUCER_STATE_SCAN_BYTES: '1e3' }, /INVALID_ARGUMENT: URINGMQ_PRODUCER_STATE_SCAN_BYTES must be a non-negative integer/],
      [{ URINGMQ_DURABILITY: 'bogus' }, /INVALID_ARGUMENT: URINGMQ_DURABILITY: durability is 'sync', 'none'/],
      [{ URINGMQ_GROUP_COMMIT_US: '-1' }, /INVALID_ARGUMENT: URINGMQ_GROUP_COMMIT_US must be a non-negative integer, got "-1"/],
      [{ URINGMQ_ZERO_AHEAD_BYTES: '2M' }, /INVALID_ARGUMENT: URINGMQ_ZERO_AHEAD_BYTES must be a non-negative integer, got "2M"/],
      [{ URINGMQ_FETCH: 'no' }, /INVALID_ARGUMENT: URINGMQ_FETCH must be 1, 0, true or false, got "no"/],
      [{ URINGMQ_PERMIT_WITHOUT_STREAM: 'maybe' }, /INVALID_ARGUMENT: URINGMQ_PERMIT_WITHOUT_STREAM must be 1, 0, true or false/],
      [{ URINGMQ_IO_BACKEND: 'uring' }, /INVALID_ARGUMENT: URINGMQ_IO_BACKEND: ioBackend must be 'auto', 'io_uring' or 'thread', got "uring"/],
      [{ URINGMQ_LOG_LEVEL: 'verbose' }, /INVALID_ARGUMENT: URINGMQ_LOG_LEVEL: logLevel must be one of trace, .*, got "verbose"/],
      [{ URINGMQ_MAX_TOPICS: '0' }, /INVALID_ARGUMENT: maxTopics must be an integer between 1 and 1000000, got 0/],
      [{ URINGMQ_MAX_PARTIAL_MESSAGE_BYTES: '1000' }, /INVALID_ARGUMENT: maxPartialMessageBytes must be an integer between 65536 and \d+, got 1000/],
      [{ URINGMQ_MAX_PARTIAL_MESSAGE_BYTES_PER_CONNECTION: '1000' }, /INVALID_ARGUMENT: maxPartialMessageBytesPerConnection must be an integer between 65536 and \d+, got 1000/],
    ];
    for (const [env, err] of badEnv) {
      const r = run(['serve', '--dir', path.join(dir, 'data')], undefined, env);
      assert.equal(r.code, 2, `${JSON.stringify(env)}: ${r.err}`);
      assert.match(r.err, err);
    }
  });
  it('produce takes one message per \\n line as the bytes given (a lone \\r stays in its line, CRLF loses the \\r, bytes that are not UTF-8 are kept)', async () => {
    const dir = tmpDir();
    assert.equal(run(['topics', 'create', 'b', '--dir', dir]).code, 0);
    const input = Buffer.concat([Buffer.from('progress 10%\rprogress 100%\ncrlf\r\ncaf'), Buffer.from([0xe9]), Buffer.from('\nlast')]);
    const r = spawnSync(process.execPath, ['--require', 'tsx/cjs', CLI, 'produce', 'b', '--dir', dir], { input, timeout: 60_000 });
    assert.equal(r.status, 0, String(r.stderr));
    assert.match(String(r.stderr), /produced 4 messages/);
    const out = run(['consume', 'b', '--from', 'earliest', '--max', '4', '--json', '--dir', dir]);
    const values = out.out.trim().split('\n').map((l) => JSON.parse(l) as { value: string });
    assert.deepEqual(values.map((v) => v.value).slice(0, 2), ['progress 10%\rprogress 100%', 'crlf']);
    assert.equal(values.length, 4);
    const b = await Broker.open({ dir });
    try {
      const msgs = await b.read('b', 0, 2);
      assert.deepEqual(msgs.slice(0, 2).map((m) => m.value.toString('hex')), ['636166e9', Buffer.from('last').toString('hex')]);
    } finally {
      await b.close();
    }
  });

  it('produce keeps a last line\'s lone \\r when the input ends without a newline (it is not a CRLF ending)', async () => {
    const dir = tmpDir();
    assert.equal(run(['topics', 'create', 'r', '--dir', dir]).code, 0);
    const r = run(['produce', 'r', '--dir', dir], 'a\r\nprogress 100%\r');
    assert.equal(r.code, 0, r.err);
    const b = await Broker.open({ dir });
    try {
      assert.deepEqual((await b.read('r', 0, 0)).map((m) => m.value.toString()), ['a', 'progress 100%\r']);
    } finally {
      await b.close();
    }
  });

  it('consume --group --max n takes no more than n at once: repeated short runs walk the backlog, nothing goes to the dead-letter topic', () => {
    const dir = tmpDir();
    assert.equal(run(['topics', 'create', 'w', '--dir', dir]).code, 0);
    assert.equal(run(['produce', 'w', '--dir', dir], Array.from({ length: 8 }, (_, i) => `m${i}`).join('\n') + '\n').code, 0);
    const got: string[] = [];
    for (let i = 0; i < 8; i++) {
      const r = run(['consume', 'w', '--group', 'g', '--from', 'earliest', '--max', '1', '--dir', dir]);
      assert.equal(r.code, 0, r.err);
      got.push(r.out.trim());
    }
    assert.deepEqual(got, Array.from({ length: 8 }, (_, i) => `m${i}`));
    assert.equal(run(['topics', 'list', '--dir', dir]).out.trim(), 'w', 'no dead-letter topic');
  });

  it('URINGMQ_TLS_CA in the environment is for --server commands: a --dir command ignores it', () => {
    const dir = tmpDir();
    const r = run(['topics', 'create', 'e', '--dir', dir], undefined, { URINGMQ_TLS_CA: '/nonexistent/ca.pem' });
    assert.equal(r.code, 0, r.err);
    assert.equal(run(['topics', 'create', 'e2', '--dir', dir, '--tls-ca', '/x.pem']).code, 2, 'the flag itself still is for --server');
  });

  it("--dir commands open the broker with the settings serve takes from the environment and the config file (they ran on the defaults: past the server's maxTopics)", () => {
    const dir = tmpDir();
    const data = path.join(dir, 'data');
    // maxTopics from the environment: the second topic is refused as the server refuses it.
    assert.equal(run(['topics', 'create', 'a', '--dir', data], undefined, { URINGMQ_MAX_TOPICS: '1' }).code, 0);
    const second = run(['topics', 'create', 'b', '--dir', data], undefined, { URINGMQ_MAX_TOPICS: '1' });
    assert.notEqual(second.code, 0, second.out);
    assert.match(second.err, /RESOURCE_EXHAUSTED: topic b was not created: .*maxTopics is 1/);
    assert.equal(run(['topics', 'list', '--dir', data]).out.trim(), 'a');
    // maxPartitions likewise, counted over all topics (a holds one).
    const wide = run(['topics', 'create', 'w', '--partitions', '2', '--dir', data], undefined, { URINGMQ_MAX_PARTITIONS: '2' });
    assert.equal(wide.code, 2, wide.out);
    assert.match(wide.err, /RESOURCE_EXHAUSTED: topic w was not created: its 2 partitions would make 3 and maxPartitions is 2/);
    // Durability from the environment: the clean close records the mode the broker ran in.
    const state = () => (JSON.parse(fs.readFileSync(path.join(data, 'state.json'), 'utf8')) as { durability: unknown }).durability;
    assert.equal(state(), 'sync');
    assert.equal(run(['topics', 'list', '--dir', data], undefined, { URINGMQ_DURABILITY: 'none' }).code, 0);
    assert.equal(state(), 'none');
    // The config file (--config, or URINGMQ_CONFIG): its data directory, maxGroups and
    // maxRecordBytes; the environment wins over it, as for serve; its server settings do not apply.
    const cfg = path.join(dir, 'uringmq.json');
    fs.writeFileSync(cfg, JSON.stringify({ dir: data, port: 1, maxGroups: 1, maxRecordBytes: 4000, maxTopics: 5, durability: 'none' }));
    const commit = (group: string, env?: Record<string, string>) => run(['groups', 'commit', 'a', group, '--partition', '0', '--offset', '0', '--config', cfg], undefined, env);
    assert.equal(commit('g1').code, 0, commit('g1').err);
    const g2 = commit('g2');
    assert.equal(g2.code, 2, g2.out);
    assert.match(g2.err, /RESOURCE_EXHAUSTED: .*maxGroups is 1/);
    assert.equal(commit('g2', { URINGMQ_MAX_GROUPS: '2' }).code, 0, 'the environment wins over the file');
    const big = run(['produce', 'a', '--config', cfg], `${'x'.repeat(5000)}\n`);
    assert.equal(big.code, 2, big.err);
    assert.match(big.err, /RECORD_TOO_LARGE: line 1/);
    const viaEnv = run(['topics', 'create', 'c', '--dir', data], undefined, { URINGMQ_CONFIG: cfg, URINGMQ_MAX_TOPICS: '1' });
    assert.equal(viaEnv.code, 2, viaEnv.out);
    assert.match(viaEnv.err, /maxTopics is 1/);
    assert.equal(run(['topics', 'create', 'c', '--dir', data], undefined, { URINGMQ_CONFIG: cfg }).code, 0, 'maxTopics 5 from the file');
    assert.equal(state(), 'none', "the file's durability");
    // --config is a broker's settings: a server reached with --server has its own.
    const remote = run(['topics', 'list', '--server', '127.0.0.1:1', '--config', cfg]);
    assert.equal(remote.code, 2, remote.err);
    assert.match(remote.err, /INVALID_ARGUMENT: --config is for --dir/);
  });

  it('a --dir command refuses a bad broker setting in the environment or the config file as serve does, before it makes the data directory', () => {
    const dir = tmpDir();
    const fresh = path.join(dir, 'never-made');
    const cfg = path.join(dir, 'uringmq.json');
    const bad: Array<[Record<string, string>, Record<string, unknown> | null, RegExp]> = [
      [{ URINGMQ_MAX_TOPICS: '0' }, null, /INVALID_ARGUMENT: maxTopics must be an integer between 1 and 1000000, got 0/],
      [{ URINGMQ_MAX_GROUPS: '10k' }, null, /INVALID_ARGUMENT: URINGMQ_MAX_GROUPS must be a non-negative integer, got "10k"/],
      [{ URINGMQ_MAX_PARTITIONS: '0' }, null, /INVALID_ARGUMENT: maxPartitions must be an integer between 1 and 1000000, got 0/],
      [{}, { maxProducerStateBatches: 0 }, /INVALID_ARGUMENT: maxProducerStateBatches must be an integer between 1 and 1000000000, got 0/],
      [{ URINGMQ_TAIL_CACHE_TOTAL_BYTES: '-1' }, null, /INVALID_ARGUMENT: URINGMQ_TAIL_CACHE_TOTAL_BYTES must be a non-negative integer/],
      [{}, { tailCacheBytes: 1.5 }, /INVALID_ARGUMENT: tailCacheBytes must be/],
      [{ URINGMQ_DURABILITY: 'bogus' }, null, /INVALID_ARGUMENT: URINGMQ_DURABILITY: durability is 'sync', 'none'/],
      [{ URINGMQ_IO_BACKEND: 'uring' }, null, /INVALID_ARGUMENT: URINGMQ_IO_BACKEND: ioBackend must be 'auto', 'io_uring' or 'thread', got "uring"/],
      [{ URINGMQ_GROUP_COMMIT_US: '100001' }, null, /INVALID_ARGUMENT: groupCommitUs must be an integer between 0 and 100000, got 100001/],
      [{ URINGMQ_MAX_BATCH_BYTES: '0x100000' }, null, /INVALID_ARGUMENT: URINGMQ_MAX_BATCH_BYTES must be a non-negative integer/],
      [{}, { maxTopics: 'x' }, /INVALID_ARGUMENT: setting "maxTopics" .* must be a number, got "x"/],
      [{}, { bogus: 1 }, /INVALID_ARGUMENT: unknown setting "bogus"/],
      [{ URINGMQ_CONFIG: cfg }, { zeroAheadBytes: -1 }, /INVALID_ARGUMENT: zeroAheadBytes must be an integer between 0 and 67108864, got -1/],
    ];
    for (const [env, file, err] of bad) {
      if (file) fs.writeFileSync(cfg, JSON.stringify(file));
      const args = ['topics', 'create', 't', '--dir', fresh, ...(file && !env.URINGMQ_CONFIG ? ['--config', cfg] : [])];
      const r = run(args, undefined, env);
      assert.equal(r.code, 2, `${JSON.stringify([env, file])}: ${r.err}`);
      assert.match(r.err, err);
      assert.ok(!fs.existsSync(fresh), `${JSON.stringify([env, file])} made the data directory before it was refused`);
    }
    // An empty --config is refused, as for serve; a server's own settings do not apply to a data directory.
    const empty = run(['topics', 'create', 't', '--dir', fresh, '--config', '']);
    assert.equal(empty.code, 2, empty.err);
    assert.match(empty.err, /INVALID_ARGUMENT: --config needs a file/);
    assert.equal(run(['topics', 'create', 't', '--dir', fresh], undefined, { URINGMQ_PORT: 'abc', URINGMQ_KEEPALIVE_TIME_MS: 'x' }).code, 0);
  });

  it('serve refuses a bad broker setting (flag, environment, config file) before it logs that it opens the data directory', () => {
    const dir = tmpDir();
    const fresh = path.join(dir, 'never-made');
    const cfg = path.join(dir, 'uringmq.json');
    const tooLong = /INVALID_ARGUMENT: groupCommitUs must be an integer between 0 and 100000, got 100001/;
    const tooSmall = /INVALID_ARGUMENT: maxBatchBytes must be at least 4096, got 1000/;
    const cases: Array<[string[], Record<string, string> | undefined, Record<string, unknown> | null, RegExp]> = [
      [['--group-commit-us', '100001'], undefined, null, tooLong],
      [['--max-batch-bytes', '1000'], undefined, null, tooSmall],
      [[], { URINGMQ_GROUP_COMMIT_US: '100001' }, null, tooLong],
      [[], { URINGMQ_MAX_BATCH_BYTES: '1000' }, null, tooSmall],
      [[], undefined, { groupCommitUs: 100_001 }, tooLong],
      [[], undefined, { maxBatchBytes: 1000 }, tooSmall],
    ];
    for (const [flags, env, file, err] of cases) {
      if (file) fs.writeFileSync(cfg, JSON.stringify(file));
      const r = run(['serve', '--port', '0', '--dir', fresh, ...flags, ...(file ? ['--config', cfg] : [])], undefined, env);
      const what = JSON.stringify([flags, env, file]);
      assert.equal(r.code, 2, `${what}: ${r.err}`);
      assert.match(r.err, err);
      assert.equal(r.err.trim().split('\n').length, 1, `${what}: more than the one-line error: ${r.err}`);
      assert.doesNotMatch(r.out + r.err, /opening the data directory/, `${what} logged that it opened the data directory it then refused to open`);
      assert.ok(!fs.existsSync(fresh), `${what} made the data directory`);
    }
  });

  it('serve refuses a durability interval written other than in decimal digits (flag and environment)', () => {
    for (const [args, env] of [[['--durability', '1e3'], undefined], [[], { URINGMQ_DURABILITY: ' 0x10 ' }]] as const) {
      const r = run(['serve', '--dir', tmpDir(), '--host', '127.0.0.1', '--port', '0', ...args], undefined, env as Record<string, string> | undefined);
      assert.notEqual(r.code, 0, r.out);
      assert.match(r.err, /durability/);
    }
  });

  it('serve --no-permit-without-stream sends GOAWAY (too_many_pings) to a client that keeps pinging with no call open', async () => {
    srv = await spawnServer(tmpDir(), 0, ['--no-permit-without-stream']);
    const session = http2.connect(`http://${srv.address}`);
    session.on('error', () => undefined);
    const goaway = new Promise<number>((resolve) => session.on('goaway', (code) => resolve(code)));
    await new Promise((r) => session.once('connect', r));
    for (let i = 0; i < 5 && !session.destroyed && !session.closed; i++) {
      await new Promise((r) => session.ping(() => r(null)));
      await sleep(20);
    }
    assert.equal(await Promise.race([goaway, sleep(5000).then(() => -1)]), http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
    session.destroy();
  });

  it('consume prints the bytes produce stored, also those that are not UTF-8', () => {
    const dir = tmpDir();
    assert.equal(run(['topics', 'create', 'b', '--dir', dir]).code, 0);
    const input = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a, 0xff, 0xfe, 0x0a]); // "caf\xe9\n\xff\xfe\n"
    assert.equal(spawnSync(process.execPath, ['--require', 'tsx/cjs', CLI, 'produce', 'b', '--dir', dir], { input, timeout: 60_000 }).status, 0);
    const r = spawnSync(process.execPath, ['--require', 'tsx/cjs', CLI, 'consume', 'b', '--from', 'earliest', '--max', '2', '--dir', dir], { timeout: 60_000 });
    assert.equal(r.status, 0, String(r.stderr));
    assert.equal(r.stdout.toString('hex'), input.toString('hex'));
  });

  it('an empty --server, or --server with --dir, is refused (an empty one meant the local data dir: produce wrote there)', () => {
    const cwd = tmpDir();
    const inCwd = (args: string[], input?: string) => spawnSync(process.execPath, ['--require', require.resolve('tsx/cjs'), CLI, ...args], { input, cwd, encoding: 'utf8', timeout: 60_000 });
    const r = inCwd(['produce', 't', '--server', ''], 'meant for the server\n');
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /INVALID_ARGUMENT: .*--server/);
    assert.ok(!fs.existsSync(path.join(cwd, 'uringmq-data')), 'the default data dir was made');
    const dir = path.join(cwd, 'data');
    const both = inCwd(['topics', 'list', '--server', '127.0.0.1:1', '--dir', dir]);
    assert.equal(both.status, 2, both.stderr);
    assert.match(both.stderr, /INVALID_ARGUMENT: .*--server.*--dir/);
    assert.ok(!fs.existsSync(dir));
  });

  it('an empty URINGMQ_DIR is taken as unset, as serve takes it (the default data dir); an empty --dir is refused naming it', () => {
    const cwd = tmpDir();
    const inCwd = (args: string[], env: Record<string, string>) => spawnSync(process.execPath, ['--require', require.resolve('tsx/cjs'), CLI, ...args], { cwd, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60_000 });
    const r = inCwd(['topics', 'create', 't'], { URINGMQ_DIR: '' });
    assert.equal(r.status, 0, r.stderr);
    assert.ok(fs.existsSync(path.join(cwd, 'uringmq-data', 'topics')), 'not the default data dir');
    const e = inCwd(['topics', 'list', '--dir', ''], {});
    assert.equal(e.status, 2, e.stderr);
    assert.match(e.stderr, /INVALID_ARGUMENT: --dir needs/);
    // A mistyped --dir: refused, and nothing made there (only `topics create` makes one).
    for (const args of [['topics', 'list'], ['topics', 'describe', 't'], ['consume', 't', '--from', 'earliest'], ['produce', 't'], ['groups', 'offsets', 't', 'g']]) {
      const typo = inCwd([...args, '--dir', 'uringmq-dta'], {});
      assert.equal(typo.status, 2, `${args.join(' ')}: ${typo.stderr}`);
      assert.match(typo.stderr, /INVALID_ARGUMENT: no data directory at uringmq-dta \(`uringmq topics create` makes one/);
      assert.ok(!fs.existsSync(path.join(cwd, 'uringmq-dta')), `${args.join(' ')} made a data directory at the typo`);
    }
  });

  it('--version (and -V) prints the package version and exits 0', () => {
    const version = (JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }).version;
    for (const flag of ['--version', '-V']) {
      const r = run([flag]);
      assert.equal(r.code, 0, r.err);
      assert.equal(r.out, `${version}\n`);
    }
  });

  it('a command other than topics create refuses a directory that is not a data directory (an existing one, such as a home directory), and leaves nothing in it', () => {
    // `topics list --dir /etc` made .lock, .flush/, topics/, trash/ and state.json there, and listed nothing.
    const dir = tmpDir();
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'mine\n');
    for (const args of [['topics', 'list'], ['topics', 'describe', 't'], ['topics', 'delete', 't'], ['consume', 't', '--from', 'earliest'], ['produce', 't'], ['groups', 'offsets', 't', 'g']]) {
      const r = run([...args, '--dir', dir], '');
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.err}`);
      assert.match(r.err, /INVALID_ARGUMENT: .* is not a uringmq data directory/, args.join(' '));
      assert.deepEqual(fs.readdirSync(dir), ['notes.txt'], `${args.join(' ')} wrote into a directory that is not a data directory`);
    }
    // A data directory still opens; topics create still makes one in an existing directory.
    assert.equal(run(['topics', 'create', 't', '--dir', dir]).code, 0);
    const r = run(['topics', 'list', '--dir', dir]);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out.trim(), 't');
  });

  it('a --dir command on a data directory a running server holds says which process holds it and points to --server', async () => {
    const dir = tmpDir();
    srv = await spawnServer(dir);
    for (const args of [['topics', 'list'], ['topics', 'create', 't'], ['produce', 't']]) {
      const r = run([...args, '--dir', dir], '');
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.err}`);
      assert.equal(r.err, `uringmq: DIR_LOCKED: data directory ${dir} is in use by process ${srv.child.pid} (a running server: reach it with --server host:port, or stop it first)\n`);
    }
  });

  it('produce refuses a line longer than a record may be as it reads it, without waiting for its end (a binary file without newlines)', async () => {
    const dir = tmpDir();
    assert.equal(run(['topics', 'create', 'l', '--dir', dir]).code, 0);
    const child = spawn(process.execPath, ['--require', 'tsx/cjs', CLI, 'produce', 'l', '--dir', dir], { stdio: ['pipe', 'pipe', 'pipe'] });
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const kill = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.stdin!.on('error', () => undefined); // it may exit while we write
    child.stdin!.write('first\n');
    child.stdin!.write(Buffer.alloc(2 << 20, 0x61)); // 2 MiB, no newline, and stdin stays open
    const code = await exited;
    clearTimeout(kill);
    child.stdin!.destroy();
    assert.equal(code, 2, err);
    assert.match(err, /RECORD_TOO_LARGE: line 2: longer than \d+ bytes, more than a record may hold\n/); // the line named once
    assert.match(err, /produced 1 message to l/);
  });

  for (const [signal, copies] of [['SIGINT', 1], ['SIGINT', 2], ['SIGHUP', 1]] as const)
    it(`produce stopped by ${signal === 'SIGHUP' ? 'SIGHUP (its terminal closed)' : `a signal (Ctrl-C on \`tail -f | uringmq produce\`${copies > 1 ? ', delivered twice a few ms apart as under npx' : ''})`} sends the lines it read, closes the data directory cleanly, says how many, and exits 0`, async () => {
      const dir = tmpDir();
      assert.equal(run(['topics', 'create', 'p', '--dir', dir]).code, 0);
      const state = () => JSON.parse(fs.readFileSync(path.join(dir, 'state.json'), 'utf8')) as { clean: boolean };
      const child = spawn(process.execPath, ['--require', 'tsx/cjs', CLI, 'produce', 'p', '--dir', dir], { stdio: ['pipe', 'pipe', 'pipe'] });
      let err = '';
      child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
      const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('exit', (code, sig) => resolve([code, sig])));
      const kill = setTimeout(() => child.kill('SIGKILL'), 60_000);
      try {
        child.stdin!.on('error', () => undefined);
        child.stdin!.write('one\ntwo\nthree\n'); // and stdin stays open, as under `tail -f`
        const until = Date.now() + 30_000;
        while (state().clean !== false && Date.now() < until) await sleep(50); // the broker is open
        await sleep(500); // the lines read and sent
        child.kill(signal);
        for (let i = 1; i < copies; i++) {
          await sleep(5);
          child.kill(signal);
        }
        const [code, sig] = await exited;
        assert.equal(sig, null, `killed by ${sig}: ${err}`);
        assert.equal(code, 0, err);
        assert.match(err, new RegExp(`produced 3 messages to p \\(stopped by ${signal}`));
        assert.equal(state().clean, true, 'state.json says the run crashed');
        const b = await Broker.open({ dir });
        assert.deepEqual((await b.read('p', 0, 0)).map((m) => m.value.toString()), ['one', 'two', 'three']);
        await b.close();
      } finally {
        clearTimeout(kill);
        child.stdin!.destroy();
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
    });

  it('produce stopped by a signal while a line is only partly read sends the lines before it, not that part (its newline had not come)', async () => {
    srv = await spawnServer(tmpDir());
    const client = await connect(srv.address);
    try {
      for (const signal of ['SIGTERM', 'SIGINT'] as const) {
        const topic = `part-${signal}`;
        await client.createTopic(topic, { partitions: 1 });
        const child: ChildProcess = spawn(process.execPath, ['--require', 'tsx/cjs', CLI, 'produce', topic, '--server', srv.address], { stdio: ['pipe', 'pipe', 'pipe'] });
        let err = '';
        child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
        try {
          child.stdin!.on('error', () => undefined);
          child.stdin!.write('one\ntwo\npar'); // and stdin stays open: the rest of the line is still to come
          assert.equal(await endOffsetAfter(client, topic, 2), 2, err);
          child.kill(signal);
          assert.equal(await exitOf(child, 30_000), 0, err);
          assert.match(err, new RegExp(`produced 2 messages to ${topic} \\(stopped by ${signal}`));
          assert.deepEqual((await client.fetch(topic, 0, 0)).map((m) => m.value.toString()), ['one', 'two']);
        } finally {
          child.stdin!.destroy();
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        }
      }
    } finally {
      await client.close();
    }
  });

  it('produce stopped by SIGHUP whose stderr is gone too (a closed terminal: its writes fail) still closes the data directory cleanly', async () => {
    const dir = tmpDir();
    assert.equal(run(['topics', 'create', 'p', '--dir', dir]).code, 0);
    const state = () => JSON.parse(fs.readFileSync(path.join(dir, 'state.json'), 'utf8')) as { clean: boolean };
    const child = spawn(process.execPath, ['--require', 'tsx/cjs', CLI, 'produce', 'p', '--dir', dir], { stdio: ['pipe', 'pipe', 'pipe'] });
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('exit', (code, sig) => resolve([code, sig])));
    const kill = setTimeout(() => child.kill('SIGKILL'), 60_000);
    try {
      child.stdin!.on('error', () => undefined);
      child.stdin!.write('one\ntwo\n');
      const until = Date.now() + 30_000;
      while (state().clean !== false && Date.now() < until) await sleep(50);
      await sleep(500);
      // The terminal is gone: "produced 2 messages" cannot be written (EIO on a hung-up
      // tty, EPIPE here), and that failure must not stop the clean close.
      child.stderr!.destroy();
      child.kill('SIGHUP');
      const [code, sig] = await exited;
      assert.deepEqual({ code, sig }, { code: 0, sig: null });
      assert.equal(state().clean, true, 'state.json says the run crashed');
      const b = await Broker.open({ dir });
      assert.deepEqual((await b.read('p', 0, 0)).map((m) => m.value.toString()), ['one', 'two']);
      await b.close();
    } finally {
      clearTimeout(kill);
      child.stdin!.destroy();
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });

  it('serve refuses a TLS certificate or key it cannot use (garbage, a key of another, expired) with INVALID_ARGUMENT, before the data dir is made', function () {
    const dir = tmpDir();
    const garbage = path.join(dir, 'garbage.pem');
    fs.writeFileSync(garbage, 'not a PEM file\n');
    const pair = (n: string) => {
      execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', path.join(dir, `${n}.key`), '-out', path.join(dir, `${n}.crt`), '-days', '1', '-subj', `/CN=${n}`], { stdio: 'ignore' });
      return { cert: path.join(dir, `${n}.crt`), key: path.join(dir, `${n}.key`) };
    };
    // A certificate that expired in 2020: `openssl req` only makes ones valid from now, `openssl ca` takes dates.
    const expired = () => {
      const ca = path.join(dir, 'ca');
      fs.mkdirSync(ca);
      fs.writeFileSync(path.join(ca, 'index.txt'), '');
      fs.writeFileSync(path.join(ca, 'serial'), '01\n');
      fs.writeFileSync(path.join(ca, 'ca.cnf'), '[ca]\ndefault_ca = d\n[d]\ndatabase = index.txt\nserial = serial\nnew_certs_dir = .\ndefault_md = sha256\npolicy = p\n[p]\ncommonName = supplied\n');
      const issuer = pair('issuer');
      execFileSync('openssl', ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'old.key', '-out', 'old.csr', '-subj', '/CN=old'], { cwd: ca, stdio: 'ignore' });
      execFileSync('openssl', ['ca', '-batch', '-config', 'ca.cnf', '-cert', issuer.cert, '-keyfile', issuer.key, '-in', 'old.csr', '-out', 'old.crt', '-notext', '-startdate', '20200101000000Z', '-enddate', '20200102000000Z'], { cwd: ca, stdio: 'ignore' });
      return { cert: path.join(ca, 'old.crt'), key: path.join(ca, 'old.key') };
    };
    let a: { cert: string; key: string };
    let b: { cert: string; key: string };
    let old: { cert: string; key: string };
    try {
      a = pair('a');
      b = pair('b');
      old = expired();
    } catch {
      return this.skip(); // no openssl on this machine
    }
    for (const [cert, key] of [[garbage, a.key], [a.cert, garbage], [a.cert, b.key], [old.cert, old.key]] as const) {
      const data = path.join(dir, 'never-made');
      const r = run(['serve', '--dir', data, '--port', '0', '--no-fetch', '--no-metrics', '--tls-cert', cert, '--tls-key', key]);
      assert.equal(r.code, 2, r.err);
      assert.match(r.err, /INVALID_ARGUMENT: .*TLS/);
      assert.ok(!fs.existsSync(data), `${cert} / ${key}: the data dir was made before the refusal`);
    }
    assert.match(run(['serve', '--dir', path.join(dir, 'never-made'), '--port', '0', '--no-fetch', '--no-metrics', '--tls-cert', old.cert, '--tls-key', old.key]).err,
      /INVALID_ARGUMENT: the TLS certificate .*old\.crt expired on 2020-01-02T00:00:00\.000Z/);
  });

  it("serve's config file: keys that name Object.prototype's members are unknown settings", () => {
    const dir = tmpDir();
    const cfg = path.join(dir, 'c.json');
    for (const k of ['constructor', 'toString', 'hasOwnProperty', '__proto__']) {
      fs.writeFileSync(cfg, `{"${k}": 1}`);
      const r = run(['serve', '--config', cfg, '--port', '0', '--dir', path.join(dir, 'never-made')]);
      assert.equal(r.code, 2, r.err);
      assert.match(r.err, new RegExp(`INVALID_ARGUMENT: unknown setting "${k}"`));
    }
  });

  it('produce stops at a line it cannot send, names it, exits 2, and keeps the lines before it', () => {
    const dir = tmpDir();
    assert.equal(run(['topics', 'create', 'p', '--partitions', '2', '--dir', dir]).code, 0);
    const good = Array.from({ length: 50 }, (_, i) => `ok${i}`);
    let r = run(['produce', 'p', '--partition', '0', '--dir', dir], `${good.join('\n')}\n${'x'.repeat(1_100_000)}\n`);
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, /RECORD_TOO_LARGE: line 51:/);
    r = run(['consume', 'p', '--from', 'earliest', '--partition', '0', '--max', '50', '--dir', dir]);
    assert.deepEqual(r.out.trim().split('\n'), good);
    r = run(['produce', 'p', '--partition', '9', '--dir', dir], 'one\n');
    assert.equal(r.code, 2);
    assert.match(r.err, /INVALID_ARGUMENT: partition 9 does not exist in topic p/);
  });

  /** serve with a short timeout: a server that starts instead of refusing is stopped (SIGTERM, reaped) and has status 0 or null. */
  const serveBriefly = (args: string[]) => {
    const r = spawnSync(process.execPath, ['--require', 'tsx/cjs', CLI, 'serve', '--port', '0', '--no-fetch', '--no-metrics', '--log-level', 'warn', ...args], { encoding: 'utf8', timeout: 15_000, killSignal: 'SIGKILL' });
    return { code: r.status, out: r.stdout, err: r.stderr };
  };

  it('serve refuses an empty TLS certificate and key (flag or config file) instead of serving plaintext', () => {
    const dir = tmpDir();
    let r = serveBriefly(['--dir', path.join(dir, 'never-made'), '--tls-cert', '', '--tls-key', '']);
    assert.equal(r.code, 2, `served: ${r.out}${r.err}`);
    assert.match(r.err, /INVALID_ARGUMENT: .*TLS/);
    const cfg = path.join(dir, 'c.json');
    fs.writeFileSync(cfg, '{"tlsCert": "", "tlsKey": ""}');
    r = serveBriefly(['--dir', path.join(dir, 'never-made'), '--config', cfg]);
    assert.equal(r.code, 2, `served: ${r.out}${r.err}`);
    assert.match(r.err, /INVALID_ARGUMENT: .*TLS/);
    assert.ok(!fs.existsSync(path.join(dir, 'never-made')));
  });

  it("serve refuses an empty --config instead of running on the defaults (also over URINGMQ_CONFIG)", () => {
    const dir = tmpDir();
    const cfg = path.join(dir, 'c.json');
    fs.writeFileSync(cfg, '{"bogus": 1}');
    let r = serveBriefly(['--dir', path.join(dir, 'never-made'), '--config', '']);
    assert.equal(r.code, 2, `served: ${r.out}${r.err}`);
    assert.match(r.err, /INVALID_ARGUMENT: .*config/);
    // The flag wins over the environment's file: an empty one is not "use the environment's".
    r = run(['serve', '--port', '0', '--no-fetch', '--no-metrics', '--dir', path.join(dir, 'never-made'), '--config', ''], undefined, { URINGMQ_CONFIG: cfg });
    assert.equal(r.code, 2, `served: ${r.out}${r.err}`);
    assert.match(r.err, /INVALID_ARGUMENT: --config/);
    assert.ok(!fs.existsSync(path.join(dir, 'never-made')));
  });

  it("serve on a gRPC port in use exits 2 with one line on stderr, its error: grpc-js's own message about it goes to the log", async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as net.AddressInfo).port;
      const r = run(['serve', '--dir', path.join(tmpDir(), 'data'), '--port', String(port), '--no-fetch', '--no-metrics']);
      assert.equal(r.code, 2, `served: ${r.out}${r.err}`);
      // grpc-js printed "E No address added out of total 1 resolved" there too.
      assert.deepEqual(r.err.split('\n').filter((l) => l !== ''), [`uringmq: UNAVAILABLE: cannot listen on 127.0.0.1:${port}: No address added out of total 1 resolved errors: [listen EADDRINUSE: address already in use 127.0.0.1:${port}]`]);
      assert.match(r.out, /"source":"grpc-js","msg":"No address added out of total 1 resolved"/);
    } finally {
      taken.close();
    }
  });

  it('an empty --tls-ca is refused, not taken for plaintext (nor for URINGMQ_TLS_CA)', async () => {
    srv = await spawnServer(path.join(tmpDir(), 'data')); // plaintext
    const server = `127.0.0.1:${srv.port}`;
    const r = run(['topics', 'list', '--server', server, '--tls-ca', '']);
    assert.equal(r.code, 2, `connected in plaintext: ${r.out}${r.err}`);
    assert.match(r.err, /INVALID_ARGUMENT: --tls-ca/);
  });

  it("consume refuses an empty --group or --fetch-address, not taken for no group (nothing acked) or the default fetch port", () => {
    const dir = tmpDir();
    assert.equal(run(['topics', 'create', 't', '--dir', dir]).code, 0);
    assert.equal(run(['produce', 't', '--dir', dir], 'one\n').code, 0);
    let r = run(['consume', 't', '--group', '', '--from', 'earliest', '--max', '1', '--dir', dir]);
    assert.equal(r.code, 2, `consumed without a group: ${r.out}${r.err}`);
    assert.match(r.err, /INVALID_ARGUMENT: --group/);
    r = run(['consume', 't', '--group', 'g', '--transport', 'fetch', '--fetch-address', '', '--server', '127.0.0.1:1', '--max', '1']);
    assert.equal(r.code, 2);
    assert.match(r.err, /INVALID_ARGUMENT: --fetch-address/);
  });

  /** The CLI as a child with stdin open for the test to write; reaped (afterEach, and the run's end). */
  const startCli = (args: string[], env?: NodeJS.ProcessEnv) => {
    const child = spawn(process.execPath, ['--require', 'tsx/cjs', CLI, ...args], { stdio: ['pipe', 'pipe', 'pipe'], env });
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.stdin!.on('error', () => undefined); // it may exit while we write
    clis.push(child);
    return { child, out: () => out, err: () => err };
  };
  const clis: ChildProcess[] = [];
  afterEach(() => {
    for (const c of clis.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });

  it('produce names the first failing line in input order, and how many failed, whichever failure settled first', async () => {
    const dir = tmpDir();
    srv = await spawnServer(dir);
    const s = srv;
    assert.equal(run(['topics', 'create', 'o', '--server', s.address]).code, 0);
    const client = await connect(s.address);
    try {
      const p = startCli(['produce', 'o', '--server', s.address]);
      p.child.stdin!.write('first\n');
      assert.equal(await endOffsetAfter(client, 'o', 1), 1, p.err());
      // Held, the server answers line 2 (too large for its records: refused there) only
      // once resumed; line 3 (too large for any request) fails in the client meanwhile.
      s.child.kill('SIGSTOP');
      try {
        p.child.stdin!.write(`${'x'.repeat(1_100_000)}\n`);
        p.child.stdin!.end(`${'y'.repeat(17 << 20)}\n`);
        await sleep(1500);
      } finally {
        s.child.kill('SIGCONT');
      }
      assert.equal(await exitOf(p.child, 60_000), 2, p.err());
      assert.match(p.err(), /produced 1 message to o/);
      assert.match(p.err(), /uringmq: RECORD_TOO_LARGE: line 2: .*\(2 lines failed: 2, 3\)/);
    } finally {
      await client.close();
    }
  });

  it('produce stops at a refused line at once, though its input stays open (`tail -f`): it neither waits for the next line to say so nor writes that line', async () => {
    const dir = tmpDir();
    assert.equal(run(['topics', 'create', 'w', '--dir', dir]).code, 0);
    const p = startCli(['produce', 'w', '--dir', dir]);
    // Line 2 is short enough to be read as a line, too large for a record once encoded:
    // the producer refuses it, after the line is read. stdin stays open.
    p.child.stdin!.write(`first\n${'x'.repeat(1 << 20)}\n`);
    const exited = exitOf(p.child, 60_000);
    const early = await Promise.race([exited.then(() => true), sleep(10_000).then(() => false)]);
    // It waited for the next line: that line was written after the refused one.
    if (!early) p.child.stdin!.end('after\n');
    assert.equal(await exited, 2, p.err());
    assert.ok(early, `still running 10 s after the refusal: ${p.err()}`);
    assert.match(p.err(), /produced 1 message to w/);
    assert.match(p.err(), /RECORD_TOO_LARGE: line 2:/);
    const b = await Broker.open({ dir });
    try {
      assert.deepEqual((await b.read('w', 0, 0)).map((m) => m.value.toString()), ['first']);
    } finally {
      await b.close();
    }
  });

  it('produce holds a bounded number of bytes of lines not yet written, not 10,000 lines whatever their size (1500 lines of 900 kB to a data directory)', async () => {
    const dir = tmpDir();
    assert.equal(run(['topics', 'create', 'm', '--dir', dir]).code, 0);
    // Under ASan (the CI's third stage) freed memory waits in a quarantine of 256 MiB
    // before reuse, which the peak would count: a small one keeps the bound meaningful.
    const asan = (process.env.LD_PRELOAD ?? '').includes('asan');
    const p = startCli(['produce', 'm', '--dir', dir], asan ? { ...process.env, ASAN_OPTIONS: `${process.env.ASAN_OPTIONS ?? ''}:quarantine_size_mb=16` } : undefined);
    let peakKb = 0;
    const poll = setInterval(() => {
      try {
        const m = /VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${p.child.pid}/status`, 'utf8'));
        if (m) peakKb = Math.max(peakKb, Number(m[1]));
      } catch {
        // exited
      }
    }, 20);
    try {
      const line = Buffer.alloc(900_001, 0x61);
      line[900_000] = 0x0a;
      for (let i = 0; i < 1500 && p.child.exitCode === null; i++) if (!p.child.stdin!.write(line)) await new Promise((resolve) => p.child.stdin!.once('drain', resolve));
      p.child.stdin!.end();
      assert.equal(await exitOf(p.child, 120_000), 0, p.err());
    } finally {
      clearInterval(poll);
    }
    assert.match(p.err(), /produced 1500 messages to m/);
    // The lines held waited for the disk: 1.35 GB came in faster than it was written.
    assert.ok(peakKb > 0 && peakKb < 450_000, `peak RSS ${Math.round(peakKb / 1024)} MiB`);
  });

  it('serve stopped by SIGTERM while it opens a large data directory closes it cleanly and exits 0 (the handlers come first)', async () => {
    const dir = tmpDir();
    // 1200 partitions: the open takes about a second, long enough to signal during it.
    const b = await Broker.open({ dir, durability: 'none' });
    for (let i = 0; i < 150; i += 10) await Promise.all(Array.from({ length: 10 }, (_, j) => b.createTopic(`t${i + j}`, { partitions: 8, segmentBytes: 1 << 20 })));
    await b.close();
    const run1 = (JSON.parse(fs.readFileSync(path.join(dir, 'state.json'), 'utf8')) as { run: number }).run;
    const child = spawn(process.execPath, ['--require', 'tsx/cjs', CLI, 'serve', '--dir', dir, '--port', '0', '--no-fetch', '--no-metrics', '--log-level', 'info'], { stdio: ['ignore', 'pipe', 'pipe'] });
    srv = { child } as ServerProcess; // killed by afterEach if the test fails
    let logs = '';
    const opening = new Promise<void>((resolve) =>
      child.stdout!.on('data', (d: Buffer) => {
        logs += d.toString();
        if (logs.includes('opening the data directory')) resolve();
      }),
    );
    child.stderr!.on('data', (d: Buffer) => (logs += d.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    const opened = await Promise.race([opening.then(() => true), exited.then(() => false), sleep(30_000).then(() => false)]);
    assert.ok(opened, `no 'opening the data directory' line: ${logs}`);
    child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), 60_000);
    const { code, signal } = await exited;
    clearTimeout(t);
    assert.deepEqual({ code, signal }, { code: 0, signal: null }, logs);
    assert.match(logs, /signal during startup/);
    assert.doesNotMatch(logs, /"listening"/, 'stopped before it listened');
    // Closed cleanly: state.json says so for this run, and the lock is free.
    const state = JSON.parse(fs.readFileSync(path.join(dir, 'state.json'), 'utf8')) as { clean: boolean; run: number };
    assert.equal(state.clean, true, JSON.stringify(state));
    assert.ok(state.run > run1, `the serve's own run (${state.run}) after ${run1}`);
    const again = await Broker.open({ dir });
    assert.equal((await again.listTopics()).length, 150);
    await again.close();
  });

  it('a --dir command stopped by SIGINT while it opens a large data directory closes it cleanly and exits 130', async () => {
    const dir = tmpDir();
    // 1200 partitions: the open takes about a second, long enough to signal during it.
    const b = await Broker.open({ dir, durability: 'none' });
    for (let i = 0; i < 150; i += 10) await Promise.all(Array.from({ length: 10 }, (_, j) => b.createTopic(`t${i + j}`, { partitions: 8, segmentBytes: 1 << 20 })));
    await b.close();
    const state = () => JSON.parse(fs.readFileSync(path.join(dir, 'state.json'), 'utf8')) as { clean: boolean; run: number };
    const run1 = state().run;
    const child = spawn(process.execPath, ['--require', 'tsx/cjs', CLI, 'topics', 'list', '--dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    const kill = setTimeout(() => child.kill('SIGKILL'), 60_000);
    try {
      // The open writes state.json first (its run, not clean), then opens the partitions.
      const until = Date.now() + 30_000;
      while (state().run === run1 && child.exitCode === null && Date.now() < until) await sleep(10);
      assert.notEqual(state().run, run1, `the open never began: ${err}`);
      child.kill('SIGINT');
      assert.deepEqual(await exited, { code: 130, signal: null }, err);
      assert.match(err, /stopped by SIGINT while the data directory opened; closed it cleanly/);
      assert.equal(state().clean, true, 'state.json says the run crashed');
    } finally {
      clearTimeout(kill);
    }
  });

  it('produce --server gives up on a server that went away after --timeout, exits 2 naming the line, the server and the timeout', async () => {
    const dir = tmpDir();
    srv = await spawnServer(dir);
    const s = srv;
    assert.equal(run(['topics', 'create', 'gone', '--server', s.address]).code, 0);
    const client = await connect(s.address);
    let p: ReturnType<typeof startCli>;
    try {
      p = startCli(['produce', 'gone', '--timeout', '2000', '--server', s.address]);
      p.child.stdin!.write('first\n');
      assert.equal(await endOffsetAfter(client, 'gone', 1), 1, p.err());
    } finally {
      await client.close();
    }
    s.child.kill('SIGKILL');
    await s.exited;
    const t0 = Date.now();
    p.child.stdin!.end('second\n');
    assert.equal(await exitOf(p.child, 30_000), 2, p.err());
    const took = Date.now() - t0;
    assert.ok(took >= 1500 && took < 15_000, `gave up after ${took} ms`);
    assert.match(p.err(), /produced 1 message to gone/);
    assert.match(p.err(), new RegExp(`uringmq: UNAVAILABLE: line 2: .*not acknowledged by ${s.address} within --timeout \\(2000 ms\\)`));
    // 0 would fail every line at once; past 2^31 - 1 ms a timer fires at once; without
    // --server there is nothing to wait for.
    for (const [args, want] of [
      [['--timeout', '0', '--server', s.address], /INVALID_ARGUMENT: --timeout must be from 1 to 2147483647 ms, got 0/],
      [['--timeout', '2147483648', '--server', s.address], /INVALID_ARGUMENT: --timeout must be from 1 to 2147483647 ms/],
      [['--timeout', '5000', '--dir', dir], /INVALID_ARGUMENT: --timeout applies with --server only/],
    ] as const) {
      const r = run(['produce', 'gone', ...args], 'x\n');
      assert.equal(r.code, 2, r.err);
      assert.match(r.err, want);
    }
  });

  it('produce --server --timeout gives up on a server it cannot reach at the start after --timeout, not the client\'s 10 s connect timeout', async () => {
    const port = await freePort(); // nothing listens there
    const r = run(['produce', 't', '--server', `127.0.0.1:${port}`, '--timeout', '1000'], 'x\n');
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, new RegExp(`^uringmq: UNAVAILABLE: cannot reach uringmq at 127\\.0\\.0\\.1:${port} within --timeout \\(1000 ms\\): `));
  });

  it('produce --server: a line the server took but answered after --timeout is said to be perhaps written, not only failed', async () => {
    const dir = tmpDir();
    srv = await spawnServer(dir);
    const s = srv;
    assert.equal(run(['topics', 'create', 'late', '--server', s.address]).code, 0);
    const client = await connect(s.address);
    try {
      const p = startCli(['produce', 'late', '--timeout', '1500', '--server', s.address]);
      p.child.stdin!.write('first\n');
      assert.equal(await endOffsetAfter(client, 'late', 1), 1, p.err());
      // Held: line 2 reaches the server, which answers only once resumed, after --timeout.
      s.child.kill('SIGSTOP');
      try {
        p.child.stdin!.end('second\n');
        assert.equal(await exitOf(p.child, 30_000), 2, p.err());
      } finally {
        s.child.kill('SIGCONT');
      }
      // It was written: a message saying only that it failed has it sent again, twice in the topic.
      assert.equal(await endOffsetAfter(client, 'late', 2), 2);
      assert.match(p.err(), new RegExp(`uringmq: UNAVAILABLE: line 2: .*not acknowledged by ${s.address} within --timeout \\(1500 ms\\).*may still be written`));
    } finally {
      await client.close();
    }
  });

  it('consume --group --server waits for a server that went away, saying so on stderr, and goes on once it is back', async () => {
    const dir = tmpDir();
    const port = await freePort();
    srv = await spawnServer(dir, port);
    assert.equal(run(['topics', 'create', 'back', '--server', srv.address]).code, 0);
    assert.equal(run(['produce', 'back', '--server', srv.address], 'before\n').code, 0);
    const c = startCli(['consume', 'back', '--group', 'g', '--from', 'earliest', '--max', '2', '--server', `127.0.0.1:${port}`]);
    const until = async (what: () => boolean, ms: number, why: string) => {
      for (const end = Date.now() + ms; !what(); await sleep(50)) if (Date.now() > end || c.child.exitCode !== null) assert.fail(`${why}; stdout: ${c.out()}; stderr: ${c.err()}`);
    };
    await until(() => c.out() === 'before\n', 30_000, 'the first message was not printed');
    // Its ack committed (else, at least once, it comes again after the crash).
    const client = await connect(srv.address);
    try {
      for (let i = 0; i < 300 && (await client.committedOffsets('g', 'back'))[0] !== 1; i++) await sleep(50);
      assert.deepEqual(await client.committedOffsets('g', 'back'), [1]);
    } finally {
      await client.close();
    }
    // And written: the server answers what it holds, and writes a group's file every
    // 20 ms. A SIGKILL between the two (a busy host: CI with a helper's tests beside it)
    // brought 'before' again after the restart, at least once, as it should.
    const offs = path.join(dir, 'groups', 'g', 'back.offs');
    for (let i = 0; i < 300 && (await readOffsetsFile(offs))?.committed[0] !== 1; i++) await sleep(50);
    assert.equal((await readOffsetsFile(offs))?.committed[0], 1);
    srv.child.kill('SIGKILL');
    await srv.exited;
    await until(() => /lost the connection to 127\.0\.0\.1:\d+ \(UNAVAILABLE: .*\); reconnecting in \d+ ms \(attempt 1\)/.test(c.err()), 30_000, 'no word of the lost connection');
    await until(() => /attempt 2\)/.test(c.err()), 30_000, 'no word of the next attempt');
    srv = await spawnServer(dir, port);
    await until(() => /reconnected to 127\.0\.0\.1:\d+/.test(c.err()), 30_000, 'no word of the reconnect');
    assert.equal(run(['produce', 'back', '--server', srv.address], 'after\n').code, 0);
    assert.equal(await exitOf(c.child, 30_000), 0, c.err());
    assert.equal(c.out(), 'before\nafter\n');
  });

  for (const host of ['::1', '[::1]'])
    it(`serve's ports line on an IPv6 host (--host ${host}) is an address a client connects to ([::1]:port, not ::1:port)`, async function () {
      // A host without IPv6 loopback cannot run it.
      const v6 = await new Promise<boolean>((resolve) => {
        const probe = net.createServer().once('error', () => resolve(false));
        probe.listen(0, '::1', () => probe.close(() => resolve(true)));
      });
      if (!v6) this.skip();
      // In brackets, as an address writes it, it was looked up as a host name and refused.
      srv = await spawnServer(path.join(tmpDir(), 'data'), 0, ['--host', host, '--no-fetch', '--no-metrics']);
      const line = JSON.parse(srv.logs().split('\n').find((l) => l.includes('"listening"'))!) as { listening: string; port: number };
      assert.equal(line.listening, `[::1]:${line.port}`);
      const client = await connect(line.listening, { connectTimeoutMs: 5000 });
      try {
        assert.deepEqual(await client.listTopics(), []);
      } finally {
        await client.close();
      }
      srv.child.kill('SIGTERM');
      assert.equal((await srv.exited).code, 0);
    });

  it('--server with a port past 65535 (or 0) is refused at once, not tried for the connect timeout', () => {
    for (const server of ['127.0.0.1:99999', '[::1]:0', 'localhost:65536']) {
      const t0 = Date.now();
      const r = run(['topics', 'list', '--server', server]);
      assert.equal(r.code, 2, r.err);
      assert.match(r.err, /INVALID_ARGUMENT: the port of .* must be 1 to 65535/);
      assert.ok(Date.now() - t0 < 8_000, 'refused before the 10 s connect timeout');
    }
  });

  it('--server with a port of -1, letters or none, or without a host, is refused at once (grpc-js took them and tried for the connect timeout)', () => {
    for (const [server, said] of [
      ['127.0.0.1:-1', /INVALID_ARGUMENT: the port of "127\.0\.0\.1:-1" must be 1 to 65535/],
      ['localhost:', /INVALID_ARGUMENT: the port of "localhost:" must be 1 to 65535/],
      ['localhost:abc', /INVALID_ARGUMENT: the port of "localhost:abc" must be 1 to 65535/],
      [':50051', /INVALID_ARGUMENT: ":50051" needs a host before its port/],
    ] as const) {
      const t0 = Date.now();
      const r = run(['topics', 'list', '--server', server]);
      assert.equal(r.code, 2, r.err);
      assert.match(r.err, said);
      assert.ok(Date.now() - t0 < 8_000, 'refused before the 10 s connect timeout');
    }
  });

  it('--server given as a URL (http://, grpc://), with a path after its port, or with a space in it is refused at once, not tried for the connect timeout', () => {
    for (const [server, said] of [
      ['http://127.0.0.1:50051', /INVALID_ARGUMENT: "http:\/\/127\.0\.0\.1:50051" is a URL: give host:port/],
      ['grpc://localhost:50051', /INVALID_ARGUMENT: "grpc:\/\/localhost:50051" is a URL: give host:port/],
      ['127.0.0.1:50051/', /INVALID_ARGUMENT: "127\.0\.0\.1:50051\/" has a path after its port: give host:port/],
      [' 127.0.0.1:50051', /INVALID_ARGUMENT: " 127\.0\.0\.1:50051" has a space in it/],
    ] as const) {
      // Refused as it is (INVALID_ARGUMENT), not tried: trying it ended in UNAVAILABLE after the connect timeout.
      const r = run(['topics', 'list', '--server', server]);
      assert.equal(r.code, 2, r.err);
      assert.match(r.err, said);
    }
  });

  it('a --server command with a URINGMQ_AUTH_TOKEN no server could take names the variable, not the client library\'s option', () => {
    const r = run(['topics', 'list', '--server', '127.0.0.1:1'], undefined, { URINGMQ_AUTH_TOKEN: 's3cret\n' });
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, /^uringmq: INVALID_ARGUMENT: URINGMQ_AUTH_TOKEN must be a string of 1 to 256 printable ASCII characters/);
    assert.ok(!r.err.includes('s3cret'), 'the token is not repeated');
  });

  it('produce --partition past the topic\'s partitions is refused before any input (with none it said "produced 0 messages", exit 0)', async () => {
    const dir = path.join(tmpDir(), 'data');
    assert.equal(run(['topics', 'create', 't', '--partitions', '2', '--dir', dir]).code, 0);
    srv = await spawnServer(path.join(tmpDir(), 'served'));
    assert.equal(run(['topics', 'create', 't', '--partitions', '2', '--server', srv.address]).code, 0);
    for (const target of [['--dir', dir], ['--server', srv.address]]) {
      const r = run(['produce', 't', '--partition', '2', ...target], '');
      assert.equal(r.code, 2, `${target[0]}: ${r.err}`);
      assert.match(r.err, /INVALID_ARGUMENT: partition 2 does not exist in topic t \(2 partitions\)/);
      assert.equal(run(['produce', 't', '--partition', '1', ...target], 'ok\n').code, 0, 'the last partition is taken');
    }
  });

  it('produce with a directory as stdin is refused (it read as empty: "produced 0 messages", exit 0)', () => {
    const dir = path.join(tmpDir(), 'data');
    assert.equal(run(['topics', 'create', 't', '--dir', dir]).code, 0);
    const fd = fs.openSync(tmpDir(), 'r');
    try {
      const r = spawnSync(process.execPath, ['--require', 'tsx/cjs', CLI, 'produce', 't', '--dir', dir], { stdio: [fd, 'pipe', 'pipe'], encoding: 'utf8', timeout: 60_000 });
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, /INVALID_ARGUMENT: stdin is a directory/);
    } finally {
      fs.closeSync(fd);
    }
  });

  it('produce with a stdin it cannot read (opened write-only) says it cannot read stdin (IO_ERROR), not INTERNAL', () => {
    const dir = path.join(tmpDir(), 'data');
    assert.equal(run(['topics', 'create', 't', '--dir', dir]).code, 0);
    const fd = fs.openSync(path.join(tmpDir(), 'out'), 'w');
    try {
      const r = spawnSync(process.execPath, ['--require', 'tsx/cjs', CLI, 'produce', 't', '--dir', dir], { stdio: [fd, 'pipe', 'pipe'], encoding: 'utf8', timeout: 60_000 });
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, /^produced 0 messages to t\nuringmq: IO_ERROR: line 1: cannot read stdin: EBADF/);
    } finally {
      fs.closeSync(fd);
    }
  });
});
