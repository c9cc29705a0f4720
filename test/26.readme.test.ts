/**
 * README.md against the code a user meets: the Server configuration table against
 * `uringmq serve`'s flags, config keys, environment variables and defaults; the metrics
 * table against the series the registry serves; the README's `import ... from
 * 'uringmq/client'` against the package's type entry points. Each had drifted: --config
 * had no row, the tail caches' series none, and TypeScript's node10 resolution found no
 * types for 'uringmq/client'.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Command, Option } from 'commander';
import { BrokerServer } from '../src';
import { FILE_SETTINGS, program, serveConfig, type ServeConfig } from '../src/cli/main';
import { DEFAULT_GROUP_COMMIT_US, DEFAULT_ZERO_AHEAD_BYTES } from '../src/broker/broker';
import { metricsRegistry } from '../src/metrics';
import { openBroker, tmpDir } from './helpers';

const ROOT = path.resolve(__dirname, '..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** The body of a README section: from its heading to the next heading of any level. */
function section(heading: string): string {
  const at = README.indexOf(`\n${heading}\n`);
  assert.ok(at >= 0, `README has no "${heading}"`);
  const rest = README.slice(at + heading.length + 2);
  const end = rest.search(/^#{1,6} /m);
  return end < 0 ? rest : rest.slice(0, end);
}

/** A Markdown table's body rows as cells (a `|` inside a cell is not used in these tables). */
function tableRows(text: string, header: string): string[][] {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.startsWith(header));
  assert.ok(start >= 0, `no table headed ${header}`);
  const rows: string[][] = [];
  for (const l of lines.slice(start + 2)) {
    if (!l.startsWith('|')) break;
    rows.push(l.slice(1, -1).split('|').map((c) => c.trim()));
  }
  return rows;
}

const ticked = (cell: string, re: RegExp): string[] => [...cell.matchAll(re)].map((m) => m[1]!);

interface ConfigRow {
  flags: string[];
  keys: string[];
  envs: string[];
  dflt: string;
}

const configRows = (): ConfigRow[] =>
  tableRows(section('### Server configuration'), '| flag | config key | environment | default |').map(([f, k, e, d]) => ({
    flags: ticked(f!, /`(--[a-z[\]-]+)`/g),
    keys: ticked(k!, /`([A-Za-z]+)`/g),
    envs: ticked(e!, /`(URINGMQ_[A-Z_]+)/g),
    dflt: d!,
  }));

function serveCommand(): Command {
  const serve = program().commands.find((c) => c.name() === 'serve');
  assert.ok(serve, 'no serve command');
  return serve;
}

/** `--[no-]x` in the table stands for both `--x` and `--no-x`. */
const spelled = (flag: string): string[] => (flag.startsWith('--[no-]') ? [`--${flag.slice(7)}`, `--no-${flag.slice(7)}`] : [flag]);

/** Runs fn with no URINGMQ_* variable set but those given (the suite may run with URINGMQ_IO_BACKEND). */
function withEnv<T>(vars: Record<string, string>, fn: () => T): T {
  const saved = Object.entries(process.env).filter(([k]) => k.startsWith('URINGMQ_'));
  for (const [k] of saved) delete process.env[k];
  Object.assign(process.env, vars);
  try {
    return fn();
  } finally {
    for (const k of Object.keys(process.env)) if (k.startsWith('URINGMQ_')) delete process.env[k];
    for (const [k, v] of saved) process.env[k] = v;
  }
}

/** A value of the setting's type that serveConfig takes as is, and the environment's spelling of it. */
function sample(key: string): { value: unknown; env: string } {
  switch (key) {
    case 'durability':
      return { value: 'none', env: 'none' };
    case 'ioBackend':
      return { value: 'thread', env: 'thread' };
    case 'logLevel':
      return { value: 'warn', env: 'warn' };
  }
  const type = FILE_SETTINGS[key];
  if (type === 'number') return { value: 4242, env: '4242' };
  if (type === 'boolean') return { value: false, env: '0' };
  return { value: `readme-${key}`, env: `readme-${key}` };
}

/** The leading value of a default cell as a number, string or boolean: `16 MiB (…)` is 16777216, `7 days: …` ms. */
function leadingValue(cell: string): unknown {
  const m = /^`?([0-9]+)(?![0-9.])`?(?: (KiB|MiB|days)\b)?/.exec(cell);
  if (m) return Number(m[1]) * (m[2] === 'KiB' ? 1024 : m[2] === 'MiB' ? 1024 * 1024 : m[2] === 'days' ? 86_400_000 : 1);
  if (/^true\b/.test(cell)) return true;
  const s = /^`([^`]+)`/.exec(cell);
  return s ? s[1] : undefined;
}

describe('README: the Server configuration table', () => {
  it('lists every `uringmq serve` flag, and no flag serve lacks', () => {
    const documented = configRows().flatMap((r) => r.flags.flatMap(spelled));
    const options = serveCommand().options.map((o: Option) => o.long!).filter((f) => f !== '--help');
    assert.deepEqual(options.filter((f) => !documented.includes(f)), [], 'serve flags without a row in the README table');
    assert.deepEqual(documented.filter((f) => !options.includes(f)), [], 'README flags serve does not take');
  });

  it("names for each flag the config key it sets, and every key a config file may hold", () => {
    const serve = serveCommand();
    const keys: string[] = [];
    for (const row of configRows()) {
      keys.push(...row.keys);
      row.flags.forEach((flag, i) => {
        if (flag === '--config') return; // names the file, not a key in it
        const option = serve.options.find((o: Option) => o.long === spelled(flag)[0]);
        // `--no-fetch` sets `fetch` (false); commander names its attribute the same.
        assert.equal(option?.attributeName(), row.keys[i], `${flag}'s config key`);
      });
    }
    assert.deepEqual(Object.keys(FILE_SETTINGS).filter((k) => !keys.includes(k)).sort(), [], 'config keys without a row');
    assert.deepEqual(keys.filter((k) => !Object.hasOwn(FILE_SETTINGS, k)), [], 'README config keys a config file refuses');
  });

  it('names the environment variable and config key that set each setting', () => {
    const dir = tmpDir('uringmq-readme-');
    for (const row of configRows()) {
      row.keys.forEach((key, i) => {
        const env = row.envs[i];
        assert.ok(env, `${key} has no environment variable in the table`);
        const { value, env: spelledValue } = sample(key);
        const fromEnv = withEnv({ [env]: spelledValue }, () => serveConfig({})) as unknown as Record<string, unknown>;
        assert.deepEqual(fromEnv[key], value, `${env} sets ${key}`);
        const file = path.join(dir, `${key}.json`);
        fs.writeFileSync(file, JSON.stringify({ [key]: value }));
        const fromFile = withEnv({}, () => serveConfig({ config: file })) as unknown as Record<string, unknown>;
        assert.deepEqual(fromFile[key], value, `config key ${key}`);
      });
    }
    // The row for the file itself: URINGMQ_CONFIG names it.
    const file = path.join(dir, 'host.json');
    fs.writeFileSync(file, JSON.stringify({ host: '::2' }));
    assert.equal(withEnv({ URINGMQ_CONFIG: file }, () => serveConfig({})).host, '::2');
    assert.deepEqual(configRows().find((r) => r.flags.includes('--config'))?.envs, ['URINGMQ_CONFIG']);
  });

  it('states the defaults the code takes', async () => {
    const stated = new Map<string, unknown>();
    // A row of two keys (`fetchPort`, `fetch`) states the first one's default.
    for (const row of configRows()) if (row.keys[0]) stated.set(row.keys[0], leadingValue(row.dflt));
    const cfg: ServeConfig = withEnv({}, () => serveConfig({}));
    const broker = await withEnv({}, () => openBroker());
    try {
      const actual: Record<string, unknown> = {
        dir: cfg.dir,
        host: cfg.host,
        port: cfg.port,
        durability: cfg.durability,
        ioBackend: cfg.ioBackend,
        logLevel: cfg.logLevel,
        fetchPort: cfg.fetchPort,
        metricsPort: cfg.metricsPort,
        permitWithoutStream: true,
        maxBatchBytes: broker.maxBatchBytes,
        maxRecordBytes: broker.maxRecordBytes,
        writeHighWaterBytes: broker.writeHighWaterBytes,
        maxQueuedBytes: broker.maxQueuedBytes,
        tailCacheTotalBytes: broker.tailCacheTotalBytes,
        minFreeBytes: broker.minFreeBytes,
        maxTopics: broker.maxTopics,
        maxGroups: broker.maxGroups,
        maxProducerStateBatches: broker.maxProducerStateBatches,
        groupCommitUs: DEFAULT_GROUP_COMMIT_US,
        zeroAheadBytes: DEFAULT_ZERO_AHEAD_BYTES,
      };
      for (const [key, value] of Object.entries(actual)) assert.deepEqual(stated.get(key), value, `README's default for ${key}`);
    } finally {
      await broker.close();
    }
    // What `serve --help` says in "(default …)" agrees with the table, for the server's
    // own settings too (keepalive, message and connection limits).
    const help = serveCommand().helpInformation();
    for (const row of configRows()) {
      const flag = row.flags[0];
      if (!flag) continue;
      const said = new RegExp(`${spelled(flag)[0]!.replace(/[-[\]]/g, '\\$&')} [^\\n]*?\\(default ([0-9]+(?![0-9.])(?: (?:KiB|MiB|days))?)`).exec(help)?.[1];
      if (said !== undefined) assert.deepEqual(leadingValue(row.dflt), leadingValue(said), `${flag}: README default "${row.dflt.slice(0, 40)}" against --help "${said}"`);
    }
  });
});

describe('README: the metrics table', () => {
  it("names every series the broker's and the server's registry serve", async () => {
    const rows = tableRows(section('### Metrics'), '| series | labels | what |');
    // `uringmq_partition_start_offset`, `_bytes` in one cell: `_bytes` ends a name that
    // begins as the full one before it does (uringmq_partition_bytes).
    const documented = new Set<string>();
    for (const [cell] of rows) {
      let full = '';
      for (const name of ticked(cell!, /`([a-z_*]+)`/g)) {
        if (!name.startsWith('_')) {
          documented.add((full = name));
          continue;
        }
        for (let at = full.indexOf('_'); at >= 0; at = full.indexOf('_', at + 1)) documented.add(full.slice(0, at) + name);
      }
    }
    const broker = await openBroker();
    const server = await BrokerServer.start({ broker, host: '127.0.0.1', port: 0 });
    try {
      const registry = metricsRegistry(broker, { server });
      const names = (await registry.getMetricsAsJSON()).map((m) => m.name);
      // prom-client's process and Node.js metrics are one row: `uringmq_process_*`, `uringmq_nodejs_*`.
      const ours = names.filter((n) => !/^uringmq_(process|nodejs)_/.test(n));
      assert.ok(ours.length > 20, `the registry served ${names.length} series`);
      assert.deepEqual(ours.filter((n) => !documented.has(n)), [], 'series without a row in the README');
    } finally {
      await server.stop(2000);
    }
  });
});

describe("README: `import { connect } from 'uringmq/client'` resolves for TypeScript's node10 resolution", () => {
  it('maps each subpath export to its types through typesVersions too', () => {
    // TypeScript before 7 resolves `module: commonjs` projects with node10 by default,
    // which ignores "exports": without typesVersions, 'uringmq/client' had no types there.
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      exports: Record<string, string | { types?: string }>;
      typesVersions?: Record<string, Record<string, string[]>>;
    };
    const mapped = pkg.typesVersions?.['*'] ?? {};
    for (const [sub, target] of Object.entries(pkg.exports)) {
      if (sub === '.' || typeof target !== 'object' || !target.types) continue;
      const name = sub.slice(2);
      assert.deepEqual(mapped[name]?.map((p) => path.normalize(p)), [path.normalize(target.types)], `typesVersions for ${sub}`);
      assert.ok(fs.existsSync(path.join(ROOT, 'src', `${name}`, 'index.ts')) || fs.existsSync(path.join(ROOT, 'src', `${name}.ts`)), `no source for ${sub}`);
    }
  });
});
