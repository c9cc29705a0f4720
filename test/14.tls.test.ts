import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
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
      await assert.rejects(connect(`127.0.0.1:${server.port}`, { connectTimeoutMs: 1500 }), { code: 'UNAVAILABLE' });
    } finally {
      await server.stop(1000);
    }
  });
});
