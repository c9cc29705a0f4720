import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { tmpDir } from './helpers';

const ROOT = path.resolve(__dirname, '..');
const npm = (args: string[], cwd: string) =>
  execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 300_000, env: { ...process.env, npm_config_loglevel: 'error' } });

describe('Packaging: prebuilt binary in the npm tarball', function () {
  this.timeout(600_000);

  it('installs from the tarball with --ignore-scripts and opens a broker without compiling', () => {
    npm(['run', 'prebuildify'], ROOT);
    const prebuilt = fs.readdirSync(path.join(ROOT, 'prebuilds', 'linux-x64'));
    assert.ok(prebuilt.some((f) => f.endsWith('.node')), `prebuilds: ${prebuilt.join(', ')}`);

    const out = tmpDir('uringmq-pack-');
    const packed = JSON.parse(npm(['pack', '--json', '--pack-destination', out], ROOT)) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const files = packed[0]!.files.map((f) => f.path);
    assert.ok(files.some((f) => f.startsWith('prebuilds/linux-x64/') && f.endsWith('.node')), 'tarball lacks the prebuilt binary');
    assert.ok(files.includes('dist/src/index.js'), 'tarball lacks the compiled JS');
    assert.ok(!files.some((f) => f.startsWith('build/')), 'tarball carries a local build');

    const app = path.join(out, 'app');
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
    npm(['install', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund', path.join(out, packed[0]!.filename)], app);
    const installed = path.join(app, 'node_modules', 'uringmq');
    assert.ok(!fs.existsSync(path.join(installed, 'build')), 'something compiled the addon');

    const script = `
      const { Broker } = require('uringmq');
      (async () => {
        const b = await Broker.open({ dir: ${JSON.stringify(path.join(out, 'data'))} });
        await b.createTopic('hello');
        const r = await b.producer().send('hello', { value: 'world' });
        const [m] = await b.read('hello', 0, r.offset);
        console.log(JSON.stringify({ backend: b.ioBackend, value: m.value.toString() }));
        await b.close();
      })().catch((e) => { console.error(e); process.exit(1); });`;
    const res = JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: app, encoding: 'utf8', timeout: 60_000 })) as { backend: string; value: string };
    assert.equal(res.value, 'world');
    assert.ok(['io_uring', 'thread'].includes(res.backend));
  });
});
