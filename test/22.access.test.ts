/**
 * Access control settings: auth tokens checked where they are set (server, fetch plane,
 * client), and config file errors that must not echo a secret.
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { inspect } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { BrokerServer } from '../src';
import { connect } from '../src/client';
import { brokerService } from '../src/grpc/service';
import { openBroker, startServer, tmpDir } from './helpers';
import { spawnServer } from './fixtures/server_process';

const CLI = path.join(__dirname, '..', 'src', 'cli', 'main.ts');
const run = (args: string[], env: Record<string, string> = {}) => {
  const r = spawnSync(process.execPath, ['--require', 'tsx/cjs', CLI, ...args], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, URINGMQ_LOG_LEVEL: 'warn', ...env } });
  return { code: r.status, out: r.stdout, err: r.stderr };
};

describe('Auth tokens and config files: refused where they are set, never echoed', function () {
  this.timeout(120_000);

  it('URINGMQ_AUTH_TOKEN set but empty (a compose file\'s ${TOKEN} unset) serves without a token, and says so at start', async () => {
    for (const [env, warned] of [[{ URINGMQ_AUTH_TOKEN: '' }, true], [{}, false]] as const) {
      const srv = await spawnServer(path.join(tmpDir(), 'data'), 0, ['--no-fetch', '--no-metrics'], { env });
      try {
        assert.equal(/URINGMQ_AUTH_TOKEN is set but empty: serving without an auth token/.test(srv.logs()), warned, srv.logs());
      } finally {
        srv.child.kill('SIGTERM');
        await srv.exited;
      }
    }
  });

  it('a CLI command without the token (or a wrong one) is refused naming URINGMQ_AUTH_TOKEN; with it, served', async () => {
    const srv = await spawnServer(path.join(tmpDir(), 'data'), 0, ['--no-fetch', '--no-metrics', '--auth-token', 's3cret']);
    try {
      // run() blocks this process: the server is a child of its own, so it answers meanwhile.
      for (const env of [{}, { URINGMQ_AUTH_TOKEN: 'wrong' }] as Array<Record<string, string>>) {
        const r = run(['topics', 'list', '--server', srv.address], env);
        assert.equal(r.code, 2, r.err);
        assert.match(r.err, /UNAUTHENTICATED: .*URINGMQ_AUTH_TOKEN/, r.err);
      }
      const r = run(['topics', 'list', '--server', srv.address], { URINGMQ_AUTH_TOKEN: 's3cret' });
      assert.equal(r.code, 0, r.err);
    } finally {
      srv.child.kill('SIGTERM');
      await srv.exited;
    }
  });

  it('a token over 256 bytes is refused as INVALID_ARGUMENT before the data dir is made', () => {
    const dir = tmpDir();
    const fresh = path.join(dir, 'never-made');
    const r = run(['serve', '--port', '0', '--dir', fresh], { URINGMQ_AUTH_TOKEN: 'x'.repeat(300) });
    try {
      assert.equal(r.code, 2, r.err);
      assert.match(r.err, /INVALID_ARGUMENT/, r.err);
      assert.ok(!fs.existsSync(fresh), `data dir made before refusal: ${r.err}`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a token no gRPC client can send (newline, non-ASCII, a trailing space HTTP/2 trims) is refused at start, and by connect(), without echoing it', async () => {
    const broker = await openBroker();
    try {
      for (const bad of ['tok\nSECRET', 'pässSECRET', 'tokSECRET ']) {
        const e = await BrokerServer.start({ broker, host: '127.0.0.1', port: 0, authToken: bad }).then(
          async (s) => { await s.stop(1000); return null; },
          (x: Error & { code?: string }) => x,
        );
        assert.ok(e, `server started with authToken ${JSON.stringify(bad)}, which no gRPC client can send`);
        assert.equal(e.code, 'INVALID_ARGUMENT', e.message);
        assert.ok(!e.message.includes('SECRET'));
        const c = await connect('127.0.0.1:1', { token: bad, connectTimeoutMs: 200 }).then(
          async (cl) => { await cl.close(); return null; },
          (x: Error & { code?: string }) => x,
        );
        assert.equal(c?.code, 'INVALID_ARGUMENT', c?.message);
        assert.ok(!c!.message.includes('SECRET'), c!.message);
      }
    } finally {
      await broker.close();
    }
  });

  it('embedded fetch server with authToken "" is not an open door', async () => {
    const broker = await openBroker();
    try {
      const r = await Promise.resolve().then(() => broker.startFetchServer({ port: 0, authToken: '' })).then((f) => { f.close(); return 'started'; }, (e: Error) => e.message);
      assert.notEqual(r, 'started', 'authToken "" accepted: the fetch plane runs without auth');
    } finally {
      await broker.close();
    }
  });

  it('a config file with a syntax error does not echo the auth token', () => {
    const dir = tmpDir();
    const cfg = path.join(dir, 'c.json');
    try {
      for (const text of [`{"authToken": 'Sup3rSecretTok'}`, `{"authToken": Sup3rSecretTok}`]) {
        fs.writeFileSync(cfg, text);
        const r = run(['serve', '--config', cfg, '--port', '0', '--dir', path.join(dir, 'data')]);
        assert.equal(r.code, 2, r.err);
        assert.match(r.err, /INVALID_ARGUMENT: config file .* is not valid JSON: Unexpected token/);
        assert.ok(!r.err.includes('up3rSec'), `stderr echoes the token: ${r.err}`);
        assert.ok(!fs.existsSync(path.join(dir, 'data')));
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a config file whose auth token is not a string (a number, an array) does not echo it', () => {
    const dir = tmpDir();
    const cfg = path.join(dir, 'c.json');
    try {
      for (const [text, secret] of [['{"authToken": 847319205}', '847319205'], ['{"authToken": ["Sup3rSecretTok"]}', 'up3rSec'], ['{"authToken": {"value": "Sup3rSecretTok"}}', 'up3rSec']]) {
        fs.writeFileSync(cfg, text);
        const r = run(['serve', '--config', cfg, '--port', '0', '--dir', path.join(dir, 'data')]);
        assert.equal(r.code, 2, r.err);
        assert.match(r.err, /INVALID_ARGUMENT: setting "authToken" in .* must be a string/);
        assert.ok(!r.err.includes(secret), `stderr echoes the token: ${r.err}`);
        assert.ok(!fs.existsSync(path.join(dir, 'data')));
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the server takes the scheme `bearer` in any case and refuses a wrong token of any length; the client does not print its token', async () => {
    const r = await startServer({ authToken: 'Sup3rSecretTok' });
    const raw = new grpc.Client(r.address, grpc.credentials.createInsecure());
    const listWith = (authorization: string) => {
      const d = brokerService.listTopics!;
      const md = new grpc.Metadata();
      md.set('authorization', authorization);
      return new Promise<number>((resolve) =>
        raw.makeUnaryRequest(d.path, d.requestSerialize, d.responseDeserialize, {}, md, { deadline: Date.now() + 10_000 }, (err) => resolve(err ? err.code : grpc.status.OK)),
      );
    };
    try {
      // RFC 9110: the scheme is case-insensitive; curl and many HTTP libraries send it as given.
      for (const scheme of ['Bearer', 'bearer', 'BEARER']) assert.equal(await listWith(`${scheme} Sup3rSecretTok`), grpc.status.OK, scheme);
      for (const wrong of ['Bearer Sup3rSecretTo', 'Bearer Sup3rSecretTokk', 'Bearer sup3rSecretTok', 'Basic Sup3rSecretTok', 'Sup3rSecretTok', 'Bearer', 'Bearer  Sup3rSecretTok'])
        assert.equal(await listWith(wrong), grpc.status.UNAUTHENTICATED, wrong);
      // A destructive admin call too: DeleteGroup without the token deletes nothing.
      await r.broker.createTopic('t');
      await r.broker.commitOffset('g', 't', 0, 0);
      const anon = await connect(r.address);
      try {
        await assert.rejects(anon.deleteGroup('g', 't'), (e: { code?: string }) => e.code === 'UNAUTHENTICATED');
      } finally {
        await anon.close();
      }
      assert.deepEqual(await r.broker.committedOffsets('g', 't'), [0]);
      const client = await connect(r.address, { token: 'Sup3rSecretTok' });
      try {
        assert.deepEqual(await client.listTopics(), ['t']);
        assert.ok(!inspect(client, { depth: 6 }).includes('up3rSecret'), 'console.log(client) prints the token');
      } finally {
        await client.close();
      }
    } finally {
      raw.close();
      await r.stop();
    }
  });
});
