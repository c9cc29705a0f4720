import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { spawn } from './fixtures/children';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BrokerServer } from '../src';
import { connect } from '../src/client';
import { openBroker, tmpDir } from './helpers';

describe('TLS', function () {
  this.timeout(60_000);

  it('serves and connects over TLS with a self-signed certificate; plaintext clients are refused', async function () {
    const dir = tmpDir();
    const key = path.join(dir, 'key.pem');
    const cert = path.join(dir, 'cert.pem');
    try {
      execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1',
        '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'], { stdio: 'ignore' });
    } catch {
      this.skip(); // no openssl on this machine
    }
    const broker = await openBroker({ dir: path.join(dir, 'data') });
    const server = await BrokerServer.start({ broker, host: '127.0.0.1', port: 0, tls: { key: fs.readFileSync(key), cert: fs.readFileSync(cert) } });
    try {
      const client = await connect(`127.0.0.1:${server.port}`, { tls: { ca: fs.readFileSync(cert) } });
      await client.createTopic('secure');
      const r = await client.producer().send('secure', { value: 'over tls' });
      assert.equal((await client.fetch('secure', 0, r.offset))[0]!.value.toString(), 'over tls');
      await client.close();
      await assert.rejects(connect(`127.0.0.1:${server.port}`, { connectTimeoutMs: 1500 }), (e: Error & { code?: string }) => {
        assert.equal(e.code, 'UNAVAILABLE');
        assert.match(e.message, /if the server uses TLS, connect with the `tls` option/);
        return true;
      });
      // A certificate the client does not trust is named, not only "the deadline passed".
      await assert.rejects(connect(`127.0.0.1:${server.port}`, { tls: true, connectTimeoutMs: 1500 }), (e: Error & { code?: string }) => {
        assert.equal(e.code, 'UNAVAILABLE');
        assert.match(e.message, /before the deadline \(last error: self[- ]signed certificate/);
        return true;
      });
      // The CLI: --tls-ca (or URINGMQ_TLS_CA) names the certificate to trust.
      // Not spawnSync: the server runs in this process, and must answer meanwhile.
      const cli = (args: string[], env: Record<string, string> = {}) =>
        new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
          const child = spawn(process.execPath, ['--require', 'tsx/cjs', path.join(__dirname, '..', 'src', 'cli', 'main.ts'), ...args], { env: { ...process.env, ...env } });
          let stdout = '';
          let stderr = '';
          child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
          child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
          const kill = setTimeout(() => child.kill('SIGKILL'), 60_000);
          child.on('close', (status) => {
            clearTimeout(kill);
            resolve({ status, stdout, stderr });
          });
          child.stdin.end('via env\n');
        });
      let c = await cli(['topics', 'list', '--server', `127.0.0.1:${server.port}`, '--tls-ca', cert]);
      assert.equal(c.status, 0, c.stderr);
      assert.equal(c.stderr, '', 'no warning about the IP address the certificate is checked against');
      assert.equal(c.stdout.trim(), 'secure');
      c = await cli(['produce', 'secure', '--server', `127.0.0.1:${server.port}`], { URINGMQ_TLS_CA: cert });
      assert.equal(c.status, 0, c.stderr);
      assert.match(c.stderr, /produced 1 message to secure/);
      c = await cli(['topics', 'list', '--server', `127.0.0.1:${server.port}`, '--tls-ca', path.join(dir, 'missing.pem')]);
      assert.equal(c.status, 2);
      assert.match(c.stderr, /INVALID_ARGUMENT: cannot read the TLS CA certificate/);
    } finally {
      await server.stop(1000);
    }
  });
});
