#!/usr/bin/env -S node --initial-old-space-size=128 --no-parallel-scavenge
/**
 * uringmq command line: serve | topics | produce | consume | bench | profile. Commands other than
 * `serve` work against a server (--server host:port) or directly on a data
 * directory (--dir), which must not be open by a running server.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { X509Certificate } from 'node:crypto';
import { isIPv6 } from 'node:net';
import { constants as osConstants } from 'node:os';
import { createSecureContext } from 'node:tls';
import { Command, InvalidArgumentError, Option } from 'commander';
import { setLogger as setGrpcLogger } from '@grpc/grpc-js';
import { format } from 'node:util';
import pino from 'pino';
import { Broker, type BrokerOptions, type Durability } from '../broker/broker';
import type { ConsumedMessage } from '../broker/group_consumer';
import type { Message, TopicDescription } from '../broker/broker';
import { BrokerServer, type ServerOptions } from '../grpc/server';
import { connect, type Client, type ConnectionEvent } from '../client';
import { UringmqError } from '../errors';
import { addBenchCommands } from '../bench/cli';
import { packageVersion } from '../bench/results';
import { MetricsServer, metricsRegistry } from '../metrics';
import { logDestination } from './log_destination';
import { fdHungUp } from '../native';
import { checkAuthToken } from '../fetch/protocol';
import { setTimeout as sleep } from 'node:timers/promises';

const DEFAULT_DIR = './uringmq-data';
/** With --server the record limit is the server's: no record is larger than its largest possible batch (64 MiB). */
const MAX_RECORD_LINE_BYTES = 64 * 1024 * 1024;
/** produce --timeout's default: how long a line may wait for the server's ack, retries included. */
const PRODUCE_TIMEOUT_MS = 30_000;
/** produce waits for its lines sent once they hold this many bytes (or number 10,000). */
const PRODUCE_PENDING_BYTES = 32 << 20;

/**
 * stdin's lines as bytes: split at \n only (a \r\n ending loses its \r), the last one
 * kept without a newline. readline would also split at a lone \r and decode the bytes
 * as UTF-8, replacing what is not.
 */
async function* stdinLines(maxLineBytes: number): AsyncGenerator<Buffer> {
  // stdin's chunks are fresh buffers, never reused: lines are views of them. A line
  // spanning chunks is joined once, at its end: joining the rest to each new chunk
  // copied a long line over and over (a 30 MB line without a newline took 27 s). One
  // longer than any record can be is refused as it grows past that, not held whole
  // (a binary file piped in by mistake need not have a newline at all).
  const line = (b: Buffer, end: number) => b.subarray(0, end > 0 && b[end - 1] === 0x0d ? end - 1 : end);
  let parts: Buffer[] = [];
  let held = 0;
  // A stdin that cannot be read (opened write-only: `0>file`, EBADF) is an I/O error of
  // the input, not an INTERNAL one of uringmq's.
  const input = (async function* () {
    try {
      yield* process.stdin as AsyncIterable<Buffer>;
    } catch (e) {
      throw e instanceof UringmqError ? e : new UringmqError('IO_ERROR', `cannot read stdin: ${e instanceof Error ? e.message : String(e)}`);
    }
  })();
  for await (const chunk of input) {
    let buf: Buffer = chunk;
    for (let at = buf.indexOf(0x0a); at >= 0; at = buf.indexOf(0x0a)) {
      if (parts.length > 0) {
        parts.push(buf.subarray(0, at + 1));
        const joined = Buffer.concat(parts);
        parts = [];
        held = 0;
        yield line(joined, joined.length - 1);
      } else yield line(buf, at);
      buf = buf.subarray(at + 1);
    }
    if (buf.length > 0) {
      parts.push(buf);
      held += buf.length;
      if (held > maxLineBytes + 1) throw new UringmqError('RECORD_TOO_LARGE', `longer than ${maxLineBytes} bytes, more than a record may hold`); // produce names the line (it said it twice)
    }
  }
  // The last line, without a newline: a \r at its end is a lone one, kept. Only at the
  // input's real end: produce's signal destroys stdin, the loop above then throws (a
  // premature close), and a line still waiting for its newline is not sent.
  if (parts.length > 0) yield Buffer.concat(parts);
}

function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function stdinIsDirectory(): boolean {
  try {
    return fs.fstatSync(0).isDirectory();
  } catch {
    return false; // no stdin at all (closed): it reads as empty, as before
  }
}

/** A non-negative integer written in decimal digits, else NaN: Number() would also take '', ' ', '0x10' and '1e3'. */
const count = (v: string): number => (/^[0-9]+$/.test(v) && Number.isSafeInteger(Number(v)) ? Number(v) : NaN);

const int = (name: string) => (v: string) => {
  const n = count(v);
  if (Number.isNaN(n)) throw new InvalidArgumentError(`${name} must be a non-negative integer`);
  return n;
};

function checkPort(name: string, v: unknown): void {
  if (!Number.isInteger(v) || (v as number) < 0 || (v as number) > 65535) throw new UringmqError('INVALID_ARGUMENT', `${name} must be an integer between 0 and 65535, got ${JSON.stringify(v)}`);
}

function parseDurability(v: string): Durability {
  if (v === 'sync' || v === 'none') return v;
  const ms = count(v);
  if (ms > 0) return { intervalMs: ms };
  throw new InvalidArgumentError("durability is 'sync', 'none' or a sync interval in ms");
}

/** A value's parse error (commander's type, for flags) as INVALID_ARGUMENT naming where it came from. */
function named<T>(where: string, parse: () => T): T {
  try {
    return parse();
  } catch (e) {
    throw new UringmqError('INVALID_ARGUMENT', `${where}: ${(e as Error).message}`);
  }
}

export interface ServeConfig {
  dir: string;
  host: string;
  port: number;
  durability: Durability;
  ioBackend: 'auto' | 'io_uring' | 'thread';
  keepaliveTimeMs?: number;
  keepaliveTimeoutMs?: number;
  permitWithoutStream?: boolean;
  maxConnectionAgeMs?: number;
  maxConnectionAgeGraceMs?: number;
  maxMessageBytes?: number;
  maxConcurrentStreams?: number;
  maxConnections?: number;
  maxPartialMessageBytes?: number;
  maxPartialMessageBytesPerConnection?: number;
  /** write-queue backpressure (BrokerOptions) */
  writeHighWaterBytes?: number;
  maxQueuedBytes?: number;
  /** the largest RecordBatch the broker takes (BrokerOptions) */
  maxBatchBytes?: number;
  /** the largest encoded record the broker takes (BrokerOptions) */
  maxRecordBytes?: number;
  /** newest bytes of each partition read at start to refill the idempotent-producer table (BrokerOptions) */
  producerStateScanBytes?: number;
  /** free space appends leave on the data directory's file system (BrokerOptions) */
  minFreeBytes?: number;
  /** group commit: the shortest time between the log's write cycles, µs (BrokerOptions) */
  groupCommitUs?: number;
  /** with sync: bytes of preallocated space kept zeroed ahead of each written partition's data (BrokerOptions) */
  zeroAheadBytes?: number;
  groupRetentionMs?: number;
  /** the most topics, partitions over all topics, and groups' states (one per group and topic), the broker keeps (BrokerOptions) */
  maxTopics?: number;
  maxPartitions?: number;
  maxGroups?: number;
  /** idempotent batches remembered over all partitions' producer tables (BrokerOptions) */
  maxProducerStateBatches?: number;
  /** the newest bytes each partition keeps in memory for tailing readers, and all partitions together (BrokerOptions) */
  tailCacheBytes?: number;
  tailCacheTotalBytes?: number;
  tlsCert?: string;
  tlsKey?: string;
  logLevel: string;
  /** the native fetch plane: its port (0: any free one), or off */
  fetch: boolean;
  fetchPort: number;
  /** shared secret for gRPC calls and fetch hellos */
  authToken?: string;
  /** Prometheus metrics and health on their own HTTP port (0: any free one), or off */
  metrics: boolean;
  metricsPort: number;
  /** metricsPort was given (flag, environment or file), not the default */
  metricsPortSet?: boolean;
  /** fetchPort was given (flag, environment or file), not the default */
  fetchPortSet?: boolean;
  /** URINGMQ_AUTH_TOKEN is in the environment but empty (taken as unset, as every empty variable) */
  emptyAuthTokenEnv?: boolean;
}

/** The settings a config file may hold, with their JSON types (exported for test/26: the README's table lists them). */
export const FILE_SETTINGS: Record<string, 'string' | 'number' | 'boolean' | 'durability'> = {
  dir: 'string',
  host: 'string',
  port: 'number',
  durability: 'durability',
  ioBackend: 'string',
  keepaliveTimeMs: 'number',
  keepaliveTimeoutMs: 'number',
  permitWithoutStream: 'boolean',
  maxConnectionAgeMs: 'number',
  maxConnectionAgeGraceMs: 'number',
  maxMessageBytes: 'number',
  maxConcurrentStreams: 'number',
  maxConnections: 'number',
  maxPartialMessageBytes: 'number',
  maxPartialMessageBytesPerConnection: 'number',
  writeHighWaterBytes: 'number',
  maxBatchBytes: 'number',
  maxRecordBytes: 'number',
  maxQueuedBytes: 'number',
  producerStateScanBytes: 'number',
  minFreeBytes: 'number',
  groupCommitUs: 'number',
  zeroAheadBytes: 'number',
  groupRetentionMs: 'number',
  maxTopics: 'number',
  maxPartitions: 'number',
  maxGroups: 'number',
  maxProducerStateBatches: 'number',
  tailCacheBytes: 'number',
  tailCacheTotalBytes: 'number',
  tlsCert: 'string',
  tlsKey: 'string',
  logLevel: 'string',
  fetch: 'boolean',
  fetchPort: 'number',
  authToken: 'string',
  metrics: 'boolean',
  metricsPort: 'number',
};

/**
 * Test hook: another default for the fetch plane's or the metrics' port. The tests of
 * what happens when a default port is taken hold one of their own: a fixed port such
 * as 50052 may be taken, and freed, by another socket at any moment (it is in the
 * ephemeral range). Still a default: a port taken warns instead of failing the start.
 */
function testDefaultPort(which: 'FETCH' | 'METRICS'): number | undefined {
  const v = process.env[`URINGMQ_TEST_DEFAULT_${which}_PORT`];
  return v && /^[1-9][0-9]{0,4}$/.test(v) && Number(v) <= 65535 ? Number(v) : undefined;
}

/** A config file's settings, each checked for its name and JSON type (ranges are checked where the value is used). */
interface ConfigFile {
  path: string;
  values: Record<string, unknown>;
}

/** The config file named by --config, else by URINGMQ_CONFIG; null when neither names one. */
function readConfigFile(flag: unknown): ConfigFile | null {
  // An empty --config (`--config "$UNSET"`) is a mistake, not "no file": it ran on the defaults.
  if (flag === '') throw new UringmqError('INVALID_ARGUMENT', '--config needs a file');
  const file = (flag as string | undefined) ?? process.env.URINGMQ_CONFIG;
  if (!file) return null;
  let j: Record<string, unknown>;
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new UringmqError('INVALID_ARGUMENT', `cannot read config file ${file}: ${(e as Error).message}`);
  }
  try {
    j = JSON.parse(text) as Record<string, unknown>;
  } catch (e) {
    // V8 quotes the file's text around the error (`..."thToken": 's3cr"...`), and the
    // file may hold the auth token: the message keeps what precedes the quote only.
    const why = (e as Error).message.replace(/^(Unexpected token) .*? is not valid JSON$/s, '$1 (the text around it is not repeated: it may hold a secret)');
    throw new UringmqError('INVALID_ARGUMENT', `config file ${file} is not valid JSON: ${why}`);
  }
  if (j === null || typeof j !== 'object' || Array.isArray(j)) throw new UringmqError('INVALID_ARGUMENT', `config file ${file} must hold a JSON object`);
  const values: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(j)) {
    const where = `setting "${k}" in ${file}`;
    // Own keys only: "constructor" or "toString" would find Object.prototype's members.
    const type = Object.hasOwn(FILE_SETTINGS, k) ? FILE_SETTINGS[k] : undefined;
    if (!type) throw new UringmqError('INVALID_ARGUMENT', `unknown setting "${k}" in ${file}`);
    // The type here; ranges where the value is used (BrokerServer, Broker.open).
    if (type === 'durability' ? typeof v !== 'string' && typeof v !== 'number' && (v === null || typeof v !== 'object') : typeof v !== type)
      // A token of the wrong type (a number, ["…"]) is still the secret: its type only.
      throw new UringmqError('INVALID_ARGUMENT', `${where} must be a ${type === 'durability' ? "'sync', 'none' or a number of ms" : type}, got ${k === 'authToken' ? (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : `a ${typeof v}`) : JSON.stringify(v)}`);
    values[k] = k === 'durability' && typeof v !== 'object' ? named(where, () => parseDurability(String(v))) : v;
  }
  return { path: file, values };
}

/** An environment variable holding a count; unset or empty: undefined. */
function envInt(k: string): number | undefined {
  const v = process.env[k];
  if (v === undefined || v === '') return undefined;
  const n = count(v);
  if (Number.isNaN(n)) throw new UringmqError('INVALID_ARGUMENT', `${k} must be a non-negative integer, got ${JSON.stringify(v)}`);
  return n;
}

function envBool(k: string): boolean | undefined {
  const v = process.env[k];
  if (v === undefined || v === '') return undefined;
  if (v === '1' || v === 'true') return true;
  if (v === '0' || v === 'false') return false;
  throw new UringmqError('INVALID_ARGUMENT', `${k} must be 1, 0, true or false, got ${JSON.stringify(v)}`);
}

/** The settings that are the broker's own (BrokerOptions), with their environment variables where they are counts. */
const BROKER_COUNTS = {
  writeHighWaterBytes: 'URINGMQ_WRITE_HIGH_WATER_BYTES',
  maxQueuedBytes: 'URINGMQ_MAX_QUEUED_BYTES',
  maxBatchBytes: 'URINGMQ_MAX_BATCH_BYTES',
  maxRecordBytes: 'URINGMQ_MAX_RECORD_BYTES',
  producerStateScanBytes: 'URINGMQ_PRODUCER_STATE_SCAN_BYTES',
  minFreeBytes: 'URINGMQ_MIN_FREE_BYTES',
  groupCommitUs: 'URINGMQ_GROUP_COMMIT_US',
  zeroAheadBytes: 'URINGMQ_ZERO_AHEAD_BYTES',
  groupRetentionMs: 'URINGMQ_GROUP_RETENTION_MS',
  maxTopics: 'URINGMQ_MAX_TOPICS',
  maxPartitions: 'URINGMQ_MAX_PARTITIONS',
  maxGroups: 'URINGMQ_MAX_GROUPS',
  maxProducerStateBatches: 'URINGMQ_MAX_PRODUCER_STATE_BATCHES',
  tailCacheBytes: 'URINGMQ_TAIL_CACHE_BYTES',
  tailCacheTotalBytes: 'URINGMQ_TAIL_CACHE_TOTAL_BYTES',
} as const;
const BROKER_SETTINGS = ['dir', 'durability', 'ioBackend', ...(Object.keys(BROKER_COUNTS) as Array<keyof typeof BROKER_COUNTS>)] as const;
type BrokerConfig = Pick<ServeConfig, (typeof BROKER_SETTINGS)[number]>;

/**
 * The broker's settings, defaults < config file < environment (flags, the caller's).
 * `serve` and the --dir commands both open their broker with these. The commands ran
 * on the defaults: a `topics create --dir` passed the maxTopics the server kept to, and
 * a `produce --dir` synced what the server was told not to (durability none).
 */
function brokerConfig(file: ConfigFile | null): BrokerConfig {
  const cfg: BrokerConfig = { dir: DEFAULT_DIR, durability: 'sync', ioBackend: 'auto' };
  if (file) for (const k of BROKER_SETTINGS) if (Object.hasOwn(file.values, k)) (cfg as unknown as Record<string, unknown>)[k] = file.values[k];
  const env = process.env;
  if (env.URINGMQ_DIR) cfg.dir = env.URINGMQ_DIR;
  if (env.URINGMQ_DURABILITY) cfg.durability = named('URINGMQ_DURABILITY', () => parseDurability(env.URINGMQ_DURABILITY!));
  // Checked here too, as URINGMQ_DURABILITY is: the error names the variable, not only the setting.
  if (env.URINGMQ_IO_BACKEND) cfg.ioBackend = named('URINGMQ_IO_BACKEND', () => ioBackendOf(env.URINGMQ_IO_BACKEND!));
  for (const [k, v] of Object.entries(BROKER_COUNTS) as Array<[keyof typeof BROKER_COUNTS, string]>) cfg[k] = envInt(v) ?? cfg[k];
  return cfg;
}

/** Broker.open's options from a config's broker settings (serve's config holds its server's too). */
function brokerOptions(cfg: BrokerConfig): BrokerOptions {
  const o: Record<string, unknown> = {};
  for (const k of BROKER_SETTINGS) o[k] = cfg[k];
  return o as unknown as BrokerOptions;
}

/** defaults < config file < environment < flags (exported for test/26: the README's table names the variables it reads) */
export function serveConfig(flags: Record<string, unknown>): ServeConfig {
  const file = readConfigFile(flags.config);
  const cfg: ServeConfig = { ...brokerConfig(file), host: '127.0.0.1', port: 50051, logLevel: 'info', fetch: true, fetchPort: testDefaultPort('FETCH') ?? 50052, metrics: true, metricsPort: testDefaultPort('METRICS') ?? 9464 };
  // The server's own settings from the file (the broker's are in already, under the environment's).
  if (file) for (const [k, v] of Object.entries(file.values)) if (!(BROKER_SETTINGS as readonly string[]).includes(k)) (cfg as unknown as Record<string, unknown>)[k] = v;
  const env = process.env;
  if (env.URINGMQ_HOST) cfg.host = env.URINGMQ_HOST;
  cfg.port = envInt('URINGMQ_PORT') ?? cfg.port;
  if (env.URINGMQ_LOG_LEVEL) cfg.logLevel = named('URINGMQ_LOG_LEVEL', () => logLevelOf(env.URINGMQ_LOG_LEVEL!));
  cfg.keepaliveTimeMs = envInt('URINGMQ_KEEPALIVE_TIME_MS') ?? cfg.keepaliveTimeMs;
  cfg.keepaliveTimeoutMs = envInt('URINGMQ_KEEPALIVE_TIMEOUT_MS') ?? cfg.keepaliveTimeoutMs;
  cfg.maxConnectionAgeMs = envInt('URINGMQ_MAX_CONNECTION_AGE_MS') ?? cfg.maxConnectionAgeMs;
  cfg.maxConnectionAgeGraceMs = envInt('URINGMQ_MAX_CONNECTION_AGE_GRACE_MS') ?? cfg.maxConnectionAgeGraceMs;
  cfg.maxMessageBytes = envInt('URINGMQ_MAX_MESSAGE_BYTES') ?? cfg.maxMessageBytes;
  cfg.maxConcurrentStreams = envInt('URINGMQ_MAX_CONCURRENT_STREAMS') ?? cfg.maxConcurrentStreams;
  cfg.maxConnections = envInt('URINGMQ_MAX_CONNECTIONS') ?? cfg.maxConnections;
  cfg.maxPartialMessageBytes = envInt('URINGMQ_MAX_PARTIAL_MESSAGE_BYTES') ?? cfg.maxPartialMessageBytes;
  cfg.maxPartialMessageBytesPerConnection = envInt('URINGMQ_MAX_PARTIAL_MESSAGE_BYTES_PER_CONNECTION') ?? cfg.maxPartialMessageBytesPerConnection;
  if (env.URINGMQ_TLS_CERT) cfg.tlsCert = env.URINGMQ_TLS_CERT;
  if (env.URINGMQ_TLS_KEY) cfg.tlsKey = env.URINGMQ_TLS_KEY;
  cfg.fetchPort = envInt('URINGMQ_FETCH_PORT') ?? cfg.fetchPort;
  cfg.fetch = envBool('URINGMQ_FETCH') ?? cfg.fetch;
  cfg.metricsPort = envInt('URINGMQ_METRICS_PORT') ?? cfg.metricsPort;
  cfg.metrics = envBool('URINGMQ_METRICS') ?? cfg.metrics;
  if (env.URINGMQ_AUTH_TOKEN) cfg.authToken = env.URINGMQ_AUTH_TOKEN;
  cfg.permitWithoutStream = envBool('URINGMQ_PERMIT_WITHOUT_STREAM') ?? cfg.permitWithoutStream;
  // Flags carry the same names as the file's settings (those without a flag stay undefined).
  for (const k of Object.keys(FILE_SETTINGS))
    if (k !== 'fetch' && k !== 'metrics' && flags[k] !== undefined) (cfg as unknown as Record<string, unknown>)[k] = flags[k];
  if (flags.fetch === false) cfg.fetch = false; // commander sets `fetch: true` unless --no-fetch
  if (flags.metrics === false) cfg.metrics = false;
  // An ephemeral gRPC port (tests, scripts) gets an ephemeral fetch port too, unless
  // one was given: a fixed default would collide between such servers.
  const fetchPortSet = flags.fetchPort !== undefined || (env.URINGMQ_FETCH_PORT ?? '') !== '' || (file !== null && Object.hasOwn(file.values, 'fetchPort'));
  if (cfg.port === 0 && !fetchPortSet) cfg.fetchPort = 0;
  cfg.fetchPortSet = fetchPortSet;
  cfg.emptyAuthTokenEnv = env.URINGMQ_AUTH_TOKEN === '';
  const metricsPortSet = flags.metricsPort !== undefined || (env.URINGMQ_METRICS_PORT ?? '') !== '' || (file !== null && Object.hasOwn(file.values, 'metricsPort'));
  if (cfg.port === 0 && !metricsPortSet) cfg.metricsPort = 0;
  cfg.metricsPortSet = metricsPortSet;
  // `[::1]`, as an address writes it: the listeners want the bare IPv6 address.
  const bracketed = /^\[(.*)\]$/.exec(cfg.host)?.[1];
  if (bracketed !== undefined && isIPv6(bracketed)) cfg.host = bracketed;
  checkPort('metricsPort', cfg.metricsPort);
  checkPort('fetchPort', cfg.fetchPort);
  logLevelOf(cfg.logLevel);
  return cfg;
}

function logLevelOf(v: string): string {
  if (!Object.hasOwn(pino.levels.values, v) && v !== 'silent')
    throw new UringmqError('INVALID_ARGUMENT', `logLevel must be one of ${[...Object.keys(pino.levels.values), 'silent'].join(', ')}, got ${JSON.stringify(v)}`);
  return v;
}

function ioBackendOf(v: string): ServeConfig['ioBackend'] {
  if (v !== 'auto' && v !== 'io_uring' && v !== 'thread') throw new UringmqError('INVALID_ARGUMENT', `ioBackend must be 'auto', 'io_uring' or 'thread', got ${JSON.stringify(v)}`);
  return v;
}

/** 127.0.0.0/8, ::1 and localhost: addresses no other host reaches. */
function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** The same signal again within this of the first is that one delivered twice (see serve), not a second. */
const REPEATED_SIGNAL_MS = 250;

/**
 * host:port as a client takes it back: an IPv6 address in brackets. `::1:50051` (what
 * joining them gave) is read by gRPC as an address without a port, and a script that
 * connected to the ports line's `listening` waited out its connect timeout.
 */
const hostPort = (host: string, port: number): string => `${isIPv6(host) ? `[${host}]` : host}:${port}`;

async function serve(flags: Record<string, unknown>): Promise<void> {
  const cfg = serveConfig(flags);
  const logs = logDestination();
  const log = pino({ level: cfg.logLevel, base: { service: 'uringmq' } }, logs.stream);
  // grpc-js writes its own messages to stderr as bare lines: a port in use added
  // "E No address added out of total 1 resolved" to the one-line error the start ends
  // with. They go to the log (JSON lines, as every other); its info and debug lines
  // come only when GRPC_VERBOSITY or GRPC_TRACE asks for them.
  setGrpcLogger({
    error: (msg: unknown, ...rest: unknown[]) => log.warn({ source: 'grpc-js' }, format(msg, ...rest)),
    info: (msg: unknown, ...rest: unknown[]) => log.info({ source: 'grpc-js' }, format(msg, ...rest)),
    debug: (msg: unknown, ...rest: unknown[]) => log.info({ source: 'grpc-js' }, format(msg, ...rest)),
  });
  // Signal handlers before anything is opened: a SIGTERM while the broker opens its
  // data directory (seconds, for a large one) took the default action, and the run
  // ended without its clean close (state.json kept saying it crashed). During startup a
  // signal is noted, and the start stops at its next step, closing what it had opened.
  let broker: Broker | null = null;
  let server: BrokerServer | null = null;
  let metrics: MetricsServer | null = null;
  let started = false;
  let stopSignal: NodeJS.Signals | null = null;
  let signals = 0;
  let firstSignal: { sig: NodeJS.Signals; at: number } | null = null;
  const shutdown = () => {
    // server.stop() closes the broker (and its fetch plane) once its calls are done.
    const closing = server ? Promise.all([server.stop(), metrics?.close()]) : Promise.all([metrics?.close(), broker?.close()]);
    closing.then(
      () => logs.close().then(() => process.exit(0)),
      (e) => {
        log.error({ err: e }, 'shutdown failed');
        return logs.close().then(() => process.exit(1));
      },
    );
  };
  const onSignal = (sig: NodeJS.Signals) => {
    // One Ctrl-C, or one `systemctl stop`, can arrive twice: the terminal (or systemd)
    // signals the whole process group, and a parent that forwards signals (npm start,
    // npx: npm passes SIGINT and SIGTERM on to its child, which is this process when
    // the shell execs the command, as bash does and npm start's `exec` makes every shell
    // do) sends it again a few ms later. Taken as
    // the second signal it exited at once, status 1, the data dir left marked crashed.
    if (firstSignal && sig === firstSignal.sig && performance.now() - firstSignal.at < REPEATED_SIGNAL_MS) return;
    firstSignal ??= { sig, at: performance.now() };
    signals++;
    if (signals > 1) {
      log.warn({ signal: sig }, 'second signal: exiting now');
      // The warning is written (at most 200 ms), not lost with the buffered lines.
      void logs.close(200).finally(() => process.exit(1));
      return;
    }
    if (!started) {
      stopSignal = sig;
      log.info({ signal: sig }, 'signal during startup: stopping once the step under way is done, closing what was opened');
      return;
    }
    log.info({ signal: sig }, 'shutting down: finishing in-flight publishes, syncing');
    shutdown();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  // A closed terminal (or an ssh session that dropped) sends SIGHUP, whose default action
  // ended the run without its clean close. `nohup` does not help a Node process: Node
  // resets an inherited ignored SIGHUP to the default at start. It stops as SIGTERM does.
  process.on('SIGHUP', onSignal);
  /** A signal came during startup: close what was opened, exit 0. The caller returns at once. */
  const stoppedEarly = (): boolean => {
    if (stopSignal === null) return false;
    shutdown();
    return true;
  };
  // The server's settings and TLS files are checked before the data directory is
  // opened (and perhaps created): a bad value leaves nothing behind.
  const serverOpts: Omit<ServerOptions, 'broker'> = { host: cfg.host, port: cfg.port, logger: log, authToken: cfg.authToken };
  // A variable meant to hold the token but left empty (a compose file's `${TOKEN}` with
  // TOKEN unset) serves every client without one: said, not silently open.
  if (cfg.emptyAuthTokenEnv && cfg.authToken === undefined) log.warn('URINGMQ_AUTH_TOKEN is set but empty: serving without an auth token (give the token, or unset the variable)');
  // Given empty (`--tls-cert "$UNSET"`, "" in the file) is a mistake, not plaintext.
  if (cfg.tlsCert !== undefined || cfg.tlsKey !== undefined) {
    if (!cfg.tlsCert || !cfg.tlsKey) throw new UringmqError('INVALID_ARGUMENT', 'TLS needs both --tls-cert and --tls-key, neither empty');
    const read = (file: string, what: string) => {
      try {
        return fs.readFileSync(file);
      } catch (e) {
        throw new UringmqError('INVALID_ARGUMENT', `cannot read the TLS ${what} ${file}: ${(e as Error).message}`);
      }
    };
    serverOpts.tls = { cert: read(cfg.tlsCert, 'certificate'), key: read(cfg.tlsKey, 'key') };
    // Their contents too (PEM, and a key that matches the certificate): grpc-js checks
    // them only when it binds, after the data directory was made, and that failure read
    // as "cannot listen".
    try {
      createSecureContext({ cert: serverOpts.tls.cert, key: serverOpts.tls.key });
    } catch (e) {
      throw new UringmqError('INVALID_ARGUMENT', `the TLS certificate ${cfg.tlsCert} and key ${cfg.tlsKey} cannot be used: ${(e as Error).message}`);
    }
    // An expired certificate binds and serves, but every gRPC client verifies it and
    // fails the handshake with an error that names neither the file nor the date.
    let leaf: X509Certificate;
    try {
      leaf = new X509Certificate(serverOpts.tls.cert); // the first of a chain is the server's
    } catch (e) {
      throw new UringmqError('INVALID_ARGUMENT', `the TLS certificate ${cfg.tlsCert} cannot be read: ${(e as Error).message}`);
    }
    const validTo = Date.parse(leaf.validTo);
    const validFrom = Date.parse(leaf.validFrom);
    const now = Date.now();
    if (validTo < now) throw new UringmqError('INVALID_ARGUMENT', `the TLS certificate ${cfg.tlsCert} expired on ${new Date(validTo).toISOString()}: clients would refuse it`);
    if (validFrom > now) log.warn(`the TLS certificate ${cfg.tlsCert} is not valid before ${new Date(validFrom).toISOString()}: until then, clients whose clock agrees with this host's refuse it`);
    else if (validTo - now < 7 * 86_400_000) log.warn(`the TLS certificate ${cfg.tlsCert} expires on ${new Date(validTo).toISOString()}`);
  }
  for (const k of ['keepaliveTimeMs', 'keepaliveTimeoutMs', 'permitWithoutStream', 'maxConnectionAgeMs', 'maxConnectionAgeGraceMs', 'maxMessageBytes', 'maxConcurrentStreams', 'maxConnections', 'maxPartialMessageBytes', 'maxPartialMessageBytesPerConnection'] as const)
    if (cfg[k] !== undefined) (serverOpts as unknown as Record<string, unknown>)[k] = cfg[k];
  BrokerServer.checkOptions(serverOpts);
  // The broker's too: a bad one was refused by Broker.open after the log had said
  // "opening the data directory", which nothing then opened.
  const brokerOpts = brokerOptions(cfg);
  Broker.checkOptions(brokerOpts);
  log.info({ dir: cfg.dir }, 'opening the data directory');
  broker = await Broker.open(brokerOpts);
  log.info({ ioBackend: broker.ioBackend, note: broker.ioBackendNote, durability: cfg.durability }, 'broker opened');
  if (stoppedEarly()) return;
  const opts: ServerOptions = { ...serverOpts, broker };
  try {
    server = await BrokerServer.start(opts);
  } catch (e) {
    await broker.close();
    if (e instanceof UringmqError && e.code === 'INVALID_ARGUMENT') throw e; // a bad setting, named in the message
    throw new UringmqError('UNAVAILABLE', `cannot listen on ${hostPort(cfg.host, cfg.port)}: ${(e as Error).message}`);
  }
  if (stoppedEarly()) return;
  let fetchPort: number | undefined;
  if (cfg.fetch) {
    try {
      const f = await broker.startFetchServer({ host: cfg.host, port: cfg.fetchPort, authToken: cfg.authToken });
      fetchPort = f.port;
      log.info({ address: hostPort(cfg.host, f.port), ioBackend: f.ioBackend, note: f.ioBackendNote }, 'fetch plane listening');
      // TLS asked for gRPC reads as "the data is encrypted": the fetch plane carries
      // records (and the auth token) in clear, so say so where others can reach it.
      if (serverOpts.tls && !isLoopback(cfg.host))
        log.warn({ address: hostPort(cfg.host, f.port) }, 'the fetch plane has no TLS: it serves records and takes the auth token in plaintext on this address (--no-fetch turns it off)');
    } catch (e) {
      const why = `cannot start the fetch plane on ${hostPort(cfg.host, cfg.fetchPort)}: ${(e as Error).message} (--fetch-port, or --no-fetch)`;
      // As with the metrics port below: the default port may be another broker's (a
      // second one on this host), and gRPC serves every call without the fetch plane.
      // A port asked for is a setting to keep, and any other failure is one to see.
      const taken = /Address already in use|EADDRINUSE/.test((e as Error).message);
      if (cfg.fetchPortSet || !taken) {
        await server.stop(1000);
        throw new UringmqError('UNAVAILABLE', why);
      }
      log.warn(`${why}; serving without it`);
    }
  }
  if (stoppedEarly()) return;
  if (cfg.metrics) {
    try {
      metrics = await MetricsServer.start(broker, metricsRegistry(broker, { server }), { host: cfg.host, port: cfg.metricsPort });
      log.info({ address: hostPort(cfg.host, metrics.port), paths: ['/metrics', '/healthz'] }, 'metrics listening');
    } catch (e) {
      const why = `cannot serve metrics on ${hostPort(cfg.host, cfg.metricsPort)}: ${(e as Error).message} (--metrics-port, or --no-metrics)`;
      // The default port may be another program's (9464 is a common exporter port):
      // without metrics the broker still serves. A port asked for is a setting to keep.
      if (cfg.metricsPortSet) {
        await server.stop(1000);
        throw new UringmqError('UNAVAILABLE', why);
      }
      log.warn(why);
    }
  }
  if (stoppedEarly()) return;
  // Started: a signal from now on shuts down at once. Then the line that tells scripts
  // we are up: a signal sent right after it must find the shutdown in place.
  started = true;
  // Machine-readable line for scripts and tests that start the server with port 0.
  process.stdout.write(
    `${JSON.stringify({ listening: hostPort(cfg.host, server.port), port: server.port, ...(fetchPort !== undefined ? { fetchPort } : {}), ...(metrics ? { metricsPort: metrics.port } : {}) })}\n`,
  );
}

/**
 * Once stdout's reader has gone (EPIPE: `uringmq consume … | head`), print() says so
 * and its command ends cleanly (status 0, as Unix tools do), where Node's default
 * is an uncaught 'error' and a stack trace. `serve` goes on: only its ports line goes
 * to process.stdout, and its logs stop by themselves (log_destination.ts).
 */
let stdoutClosed = false;
function watchStdout(): void {
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (stdoutClosed) return; // later writes fail too
    // Anything else (ENOSPC: a file on a full disk) is said, and the status will be 2;
    // the command still ends as on EPIPE, closing its data directory or client (an
    // exit here left the directory marked crashed, and dropped acks not yet written).
    if (e.code !== 'EPIPE') {
      process.stderr.write(`uringmq: cannot write to stdout: ${e.message}\n`);
      process.exitCode = 2;
    }
    stdoutClosed = true;
  });
}

/** How often consume checks that its stdout still has a reader (see watchStdoutReader). */
const STDOUT_PROBE_MS = 250;

/**
 * A pipe's writer hears that its reader is gone only from a write's EPIPE: `consume
 * --from latest | head -0`, or a reader gone while nothing arrives, waited (a group
 * member holding its partitions) until a message came to fail on. poll() tells without
 * a write (a pipe with no reader, a socket whose peer closed); `gone` is called once then.
 */
function watchStdoutReader(gone: () => void): () => void {
  const timer = setInterval(() => {
    const hungUp = fdHungUp(1);
    if (hungUp === false) return;
    clearInterval(timer); // true, or null: an addon built before fdHungUp, and the writes still tell
    if (hungUp && !stdoutClosed) {
      stdoutClosed = true;
      gone();
    }
  }, STDOUT_PROBE_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Prints one message; resolves false once stdout takes no more. Waits for the write
 * (on Linux a pipe's or a file's write is done, or has failed, by its callback), so
 * that a message is acked only once it was printed.
 */
function print(line: string | Buffer): Promise<boolean> {
  if (stdoutClosed) return Promise.resolve(false);
  return new Promise((resolve) => process.stdout.write(line, (e) => resolve(!e && !stdoutClosed)));
}

interface Target {
  broker?: Broker;
  client?: Client;
}

/**
 * grpc-js names the server to TLS by the --server host, and Node warns (DEP0123, once,
 * on stderr) when that is an IP address, as it is for a broker on 127.0.0.1. The
 * certificate is still checked against the address (its IP SANs), so to a CLI user
 * the warning is noise about a library's internals; other warnings pass.
 */
function quietIpServername(): void {
  const emit = process.emitWarning.bind(process) as (...args: unknown[]) => void;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const opts = rest[0];
    const code = typeof opts === 'object' && opts !== null ? (opts as { code?: unknown }).code : rest[1];
    if (code !== 'DEP0123') emit(warning, ...rest);
  }) as typeof process.emitWarning;
}

async function target(flags: { server?: string; dir?: string; config?: string; tls?: boolean; tlsCa?: string }, create = false, connectTimeoutMs?: number): Promise<Target> {
  // An empty --server (`--server "$UNSET"`) is not "no server": it would silently mean
  // the default data directory here, and produce would write there.
  if (flags.server !== undefined && flags.server.trim() === '') throw new UringmqError('INVALID_ARGUMENT', '--server needs a host:port');
  if (flags.server !== undefined && flags.dir !== undefined) throw new UringmqError('INVALID_ARGUMENT', 'give --server (a running broker) or --dir (a data directory), not both');
  // An empty --tls-ca (`--tls-ca "$UNSET"`) is not "no CA": it connected in plaintext.
  if (flags.tlsCa === '') throw new UringmqError('INVALID_ARGUMENT', '--tls-ca needs a file');
  // The environment's CA is for --server commands: ignored with --dir (as the token is).
  const caFile = flags.tlsCa ?? (flags.server ? process.env.URINGMQ_TLS_CA || undefined : undefined);
  if (!flags.server) {
    if (flags.tls || caFile) throw new UringmqError('INVALID_ARGUMENT', '--tls and --tls-ca are for --server');
  } else {
    // The file's settings are a broker's: one reached by --server runs on its own (and
    // URINGMQ_CONFIG is ignored then, as URINGMQ_TLS_CA is with --dir).
    if (flags.config !== undefined) throw new UringmqError('INVALID_ARGUMENT', '--config is for --dir: the server reached by --server runs on its own settings');
    let tls: boolean | { ca: Buffer } = !!flags.tls;
    if (caFile) {
      try {
        tls = { ca: fs.readFileSync(caFile) };
      } catch (e) {
        throw new UringmqError('INVALID_ARGUMENT', `cannot read the TLS CA certificate ${caFile}: ${(e as Error).message}`);
      }
    }
    if (tls) quietIpServername();
    const token = process.env.URINGMQ_AUTH_TOKEN || undefined;
    // Checked here as well: connect() names its option, `token`, which a CLI user never set.
    if (token !== undefined) checkAuthToken(token, 'URINGMQ_AUTH_TOKEN');
    return { client: await connect(flags.server, { token, tls, connectTimeoutMs }) };
  }
  // Empty: a flag given empty is a mistake; the variable empty is unset, as serve takes it.
  if (flags.dir === '') throw new UringmqError('INVALID_ARGUMENT', '--dir needs a path');
  // The broker's settings as serve takes them, checked as strictly, before anything is opened.
  const cfg = brokerConfig(readConfigFile(flags.config));
  if (flags.dir !== undefined) cfg.dir = flags.dir;
  const dir = cfg.dir;
  // Only `topics create` makes a data directory: `topics list --dir <typo>` made an
  // empty one at the typo and listed nothing, as if the topics were gone.
  if (!create && !fs.existsSync(dir))
    throw new UringmqError('INVALID_ARGUMENT', `no data directory at ${dir} (\`uringmq topics create\` makes one; a running server is reached with --server)`);
  // One that exists but is something else (`--dir ~`, `--dir /etc`): opening it made the
  // broker's files there (.lock, .flush/, topics/, trash/, state.json) and listed nothing.
  // Every open makes topics/ first, so a data directory always has it.
  if (!create && !isDirectory(path.join(dir, 'topics')))
    throw new UringmqError('INVALID_ARGUMENT', `${dir} is not a uringmq data directory (it has no topics/ directory); nothing was written there (\`uringmq topics create\` makes one)`);
  // A signal while a large directory opens (seconds) took the default action, and the
  // next open found state.json saying the run crashed, and scanned the logs. It is
  // noted; once the open is done the directory is closed cleanly and the command exits
  // as a shell reports a signal (128 + its number). A second signal exits at once.
  let signaled: NodeJS.Signals | null = null;
  let signaledAt = 0;
  const note = (sig: NodeJS.Signals) => {
    if (signaled === null) {
      signaled = sig;
      signaledAt = performance.now();
    } else if (sig !== signaled || performance.now() - signaledAt >= REPEATED_SIGNAL_MS) process.exit(1);
  };
  for (const sig of OPEN_SIGNALS) process.on(sig, note);
  let broker: Broker;
  try {
    broker = await Broker.open(brokerOptions(cfg));
  } catch (e) {
    // The library's message speaks of Brokers; here it is nearly always a server.
    if (!(e instanceof UringmqError && e.code === 'DIR_LOCKED')) throw e;
    const abs = path.resolve(dir);
    let pid = '';
    try {
      pid = fs.readFileSync(path.join(abs, '.lock'), 'utf8').trim(); // written by the holder once it had the lock
    } catch {
      // unreadable: the message names no process
    }
    const holder = /^[1-9][0-9]*$/.test(pid) ? `process ${pid}` : 'another process';
    throw new UringmqError('DIR_LOCKED', `data directory ${abs} is in use by ${holder} (a running server: reach it with --server host:port, or stop it first)`);
  } finally {
    for (const sig of OPEN_SIGNALS) process.off(sig, note);
  }
  if (signaled) {
    await broker.close();
    process.stderr.write(`uringmq: stopped by ${signaled} while the data directory opened; closed it cleanly\n`);
    process.exit(128 + osConstants.signals[signaled]);
  }
  return { broker };
}

/** Partitions `consume --server` without a group polls at once. */
const CONSUME_FETCH_WORKERS = 64;

/** The signals a command stops on (see serve), also while its data directory opens. */
const OPEN_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

async function done(t: Target): Promise<void> {
  await t.client?.close();
  await t.broker?.close();
}

const NEWLINE = Buffer.from('\n');

function printTopic(d: TopicDescription): void {
  // tokenRate is Infinity for consumers whose deliveries are not paced.
  process.stdout.write(`${JSON.stringify(d, (_k, v: unknown) => (v === Infinity ? 'unlimited' : v), 2)}\n`);
}

/** One line of output: the value's bytes as stored (produce keeps bytes that are not UTF-8), or a JSON line. */
function formatMessage(m: Message | ConsumedMessage, json: boolean): string | Buffer {
  if (!json) return Buffer.concat([m.value, NEWLINE]);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(m.headers)) headers[k] = v.toString();
  return `${JSON.stringify({ topic: m.topic, partition: m.partition, offset: m.offset, timestamp: m.timestamp, key: m.key?.toString() ?? null, value: m.value.toString(), headers })}\n`;
}

function withTarget(cmd: Command): Command {
  return cmd
    .option('-s, --server <host:port>', 'a running uringmq server')
    .option('--tls', 'connect to --server over TLS, trusting the system CAs')
    .option('--tls-ca <file>', "connect to --server over TLS, trusting this CA (or the server's self-signed) certificate; also URINGMQ_TLS_CA")
    .option('-d, --dir <path>', `a data directory (default $URINGMQ_DIR, else the config file's, else ${DEFAULT_DIR}); opened with the broker settings serve takes from URINGMQ_* and the config file`)
    .option('-c, --config <file>', "with --dir: serve's JSON config file (also URINGMQ_CONFIG), for its broker settings");
}

export function program(): Command {
  const prog = new Command('uringmq').description('durable message broker for Node.js').version(packageVersion() ?? 'unknown', '-V, --version', 'print the version').showHelpAfterError('(run with --help for the options)');

  prog
    .command('serve')
    .description('run the gRPC broker')
    .option('-d, --dir <path>', `data directory (default ${DEFAULT_DIR})`)
    .option('--host <host>', 'listen address (default 127.0.0.1)')
    .option('-p, --port <port>', 'listen port, 0 for any free one (default 50051)', int('port'))
    .option('-c, --config <file>', 'JSON config file (same keys as these options)')
    .option('--durability <mode>', "'sync', 'none' or a sync interval in ms", parseDurability)
    .addOption(new Option('--io-backend <backend>', 'I/O backend').choices(['auto', 'io_uring', 'thread']))
    .option('--keepalive-time-ms <ms>', 'ping idle connections this often', int('keepalive-time-ms'))
    .option('--keepalive-timeout-ms <ms>', 'drop a connection whose ping is not answered in time', int('keepalive-timeout-ms'))
    .option('--permit-without-stream', 'accept client pings without active calls (the default)')
    .option('--no-permit-without-stream', 'refuse client pings without active calls')
    .option('--max-connection-age-ms <ms>', 'recycle connections older than this', int('max-connection-age-ms'))
    .option('--max-connection-age-grace-ms <ms>', 'grace for calls on a recycled connection', int('max-connection-age-grace-ms'))
    .option('--max-message-bytes <n>', 'largest gRPC message (default 16 MiB)', int('max-message-bytes'))
    .option('--max-concurrent-streams <n>', 'open streaming calls at most (default 1000)', int('max-concurrent-streams'))
    .option('--max-connections <n>', 'open client connections at most; more are closed on arrival (default 1024)', int('max-connections'))
    .option('--max-partial-message-bytes <n>', 'bytes held at once by requests received in part, over all calls; a call past it gets RESOURCE_EXHAUSTED (default 256 MiB, at least --max-message-bytes)', int('max-partial-message-bytes'))
    .option('--max-partial-message-bytes-per-connection <n>', "of --max-partial-message-bytes, the most one client connection's calls may hold; a call past it gets RESOURCE_EXHAUSTED (default a quarter of it, at least --max-message-bytes)", int('max-partial-message-bytes-per-connection'))
    .option('--max-batch-bytes <n>', 'largest RecordBatch accepted (default 8 MiB; keep it below --max-message-bytes)', int('max-batch-bytes'))
    .option('--max-record-bytes <n>', 'largest encoded record accepted (default 1 MiB; at most --max-batch-bytes - 1024)', int('max-record-bytes'))
    .option('--producer-state-scan-bytes <n>', "bytes appended to a partition between snapshots of its idempotent-producer table, and read at start when it has none (default 16 MiB; 0: off)", int('producer-state-scan-bytes'))
    .option('--min-free-bytes <n>', "free space appends leave on the data directory's file system; past it publishes get RESOURCE_EXHAUSTED until space is freed (default 64 MiB; 0: up to a full disk)", int('min-free-bytes'))
    .option('--group-commit-us <us>', "group commit: the shortest time between the starts of two of the log's write cycles, in µs; appends arriving meanwhile share the next write and flush (default 1000; 0 to 100000)", int('group-commit-us'))
    .option('--zero-ahead-bytes <n>', "with sync: bytes of each written partition's preallocated space the log keeps written with zeros ahead of its data, so a durable write there needs no metadata write (default 2 MiB; 0 to 64 MiB, 0: off)", int('zero-ahead-bytes'))
    .option('--group-retention-ms <ms>', "how long a consumer group's committed offsets on a topic are kept once it has no member there and commits nothing (default 7 days; 0: forever)", int('group-retention-ms'))
    .option('--max-topics <n>', 'topics the broker holds at most; creating one more is refused with RESOURCE_EXHAUSTED (default 10000; topics already there all open)', int('max-topics'))
    .option('--max-partitions <n>', "partitions the broker holds at most over all topics; a create that would pass it is refused with RESOURCE_EXHAUSTED (default an eighth of the open-file limit, which Node raises to the hard one, ulimit -Hn, at most 10000; partitions already there all open)", int('max-partitions'))
    .option('--max-groups <n>', "consumer groups' committed offsets kept at most, a group counting once per topic; a join or commit that would make one more is refused with RESOURCE_EXHAUSTED (default 10000; groups already there all count)", int('max-groups'))
    .option('--max-producer-state-batches <n>', "idempotent producers' batches remembered over all partitions, each partition keeping its share, least recently used producers forgotten first (default 4194304, about 0.5 GB)", int('max-producer-state-batches'))
    .option('--tail-cache-bytes <n>', "the newest bytes of each partition kept in memory, so consumers that keep up read no file (default 1 MiB; 0: none)", int('tail-cache-bytes'))
    .option('--tail-cache-total-bytes <n>', "the most the partitions' tail caches hold together; each keeps its share, at most --tail-cache-bytes (default 256 MiB; 0: none)", int('tail-cache-total-bytes'))
    .option('--tls-cert <file>', 'PEM certificate chain: serve TLS instead of plaintext')
    .option('--tls-key <file>', 'PEM private key for --tls-cert')
    .option('--log-level <level>', 'pino log level (default info)')
    .option('--fetch-port <port>', 'native fetch plane port, 0 for any free one (default 50052; with --port 0, 0)', int('fetch-port'))
    .option('--no-fetch', 'do not start the native fetch plane')
    .option('--metrics-port <port>', 'Prometheus metrics (GET /metrics) and health (GET /healthz) port, 0 for any free one (default 9464; with --port 0, 0)', int('metrics-port'))
    .option('--no-metrics', 'do not serve metrics')
    .option('--auth-token <token>', 'shared secret clients must present (gRPC metadata and fetch hello)')
    .action(async (o: Record<string, unknown>) => serve({ ...o, ioBackend: o.ioBackend }));

  const topics = prog.command('topics').description('manage topics');
  withTarget(topics.command('create <name>'))
    .option('--partitions <n>', 'partitions (default 1)', int('partitions'))
    .option('--retention-bytes <n>', 'delete old segments past this many bytes (0: keep no sealed segment; default: no limit)', int('retention-bytes'))
    .option('--retention-ms <n>', 'delete segments older than this (0: keep no sealed segment; default: no limit)', int('retention-ms'))
    .option('--segment-bytes <n>', 'segment size, 4096 to 1073741824 (default 128 MiB)', int('segment-bytes'))
    .action(async (name: string, o: { partitions?: number; retentionBytes?: number; retentionMs?: number; segmentBytes?: number; server?: string; dir?: string }) => {
      const t = await target(o, true);
      try {
        const retention = { ...(o.retentionBytes !== undefined ? { maxBytes: o.retentionBytes } : {}), ...(o.retentionMs !== undefined ? { maxAgeMs: o.retentionMs } : {}) };
        const opts = { partitions: o.partitions, retention, segmentBytes: o.segmentBytes };
        printTopic(t.client ? await t.client.createTopic(name, opts) : await t.broker!.createTopic(name, opts));
      } finally {
        await done(t);
      }
    });
  withTarget(topics.command('list')).action(async (o: { server?: string; dir?: string }) => {
    const t = await target(o);
    try {
      for (const n of t.client ? await t.client.listTopics() : await t.broker!.listTopics()) process.stdout.write(`${n}\n`);
    } finally {
      await done(t);
    }
  });
  withTarget(topics.command('describe <name>')).action(async (name: string, o: { server?: string; dir?: string }) => {
    const t = await target(o);
    try {
      printTopic(t.client ? await t.client.describeTopic(name) : await t.broker!.describeTopic(name));
    } finally {
      await done(t);
    }
  });
  withTarget(topics.command('delete <name>')).action(async (name: string, o: { server?: string; dir?: string }) => {
    const t = await target(o);
    try {
      await (t.client ? t.client.deleteTopic(name) : t.broker!.deleteTopic(name));
    } finally {
      await done(t);
    }
  });

  const groups = prog.command('groups').description("read, move and delete consumer groups' committed offsets");
  withTarget(groups.command('offsets <topic> <group>').description('print the committed offset of each partition (-1: none)')).action(
    async (topic: string, group: string, o: { server?: string; dir?: string }) => {
      const t = await target(o);
      try {
        const offsets = t.client ? await t.client.committedOffsets(group, topic) : await t.broker!.committedOffsets(group, topic);
        process.stdout.write(`${JSON.stringify(offsets)}\n`);
      } finally {
        await done(t);
      }
    },
  );
  withTarget(
    groups
      .command('commit <topic> <group>')
      .description("set a partition's committed offset (a rewind, or a skip past a damaged batch); members go on from it"),
  )
    .requiredOption('--partition <n>', 'partition', int('partition'))
    .requiredOption('--offset <where>', "an offset, 'earliest' or 'latest' (the partition's start or end)")
    .action(async (topic: string, group: string, o: { partition: number; offset: string; server?: string; dir?: string }) => {
      let offset = o.offset === 'earliest' || o.offset === 'latest' ? -1 : count(o.offset);
      if (Number.isNaN(offset)) throw new UringmqError('INVALID_ARGUMENT', `--offset must be an offset, 'earliest' or 'latest', got '${o.offset}'`);
      const t = await target(o);
      try {
        if (offset < 0) {
          const d = t.client ? await t.client.describeTopic(topic) : await t.broker!.describeTopic(topic, { groups: false });
          const p = d.partitions[o.partition];
          if (!p) throw new UringmqError('INVALID_ARGUMENT', `partition ${o.partition} does not exist in topic ${topic}`);
          offset = o.offset === 'earliest' ? p.startOffset : p.endOffset;
        }
        await (t.client ? t.client.commitOffset(group, topic, o.partition, offset) : t.broker!.commitOffset(group, topic, o.partition, offset));
        process.stderr.write(`committed offset ${offset} of ${topic}/${o.partition} for group ${group}\n`);
      } finally {
        await done(t);
      }
    });
  withTarget(
    groups
      .command('delete <topic> <group>')
      .description("delete a group's committed offsets on a topic (refused while it has members); a consumer joining it later starts at its --from"),
  ).action(async (topic: string, group: string, o: { server?: string; dir?: string }) => {
    const t = await target(o);
    try {
      await (t.client ? t.client.deleteGroup(group, topic) : t.broker!.deleteGroup(group, topic));
      process.stderr.write(`deleted group ${group} on ${topic}\n`);
    } finally {
      await done(t);
    }
  });

  withTarget(prog.command('produce <topic>').description('publish one message per line of stdin'))
    .option('-k, --key <key>', 'key for every message')
    .option('--partition <n>', 'partition', int('partition'))
    .option('--timeout <ms>', `with --server: give up on a line the server has not acknowledged within this long, retries included, and exit 2 naming it (default ${PRODUCE_TIMEOUT_MS})`, int('timeout'))
    .action(async (topic: string, o: { key?: string; partition?: number; timeout?: number; server?: string; dir?: string }) => {
      if (o.timeout !== undefined && (o.timeout < 1 || o.timeout > 2 ** 31 - 1)) throw new UringmqError('INVALID_ARGUMENT', `--timeout must be from 1 to ${2 ** 31 - 1} ms, got ${o.timeout}`);
      if (o.timeout !== undefined && !o.server) throw new UringmqError('INVALID_ARGUMENT', '--timeout applies with --server only (a data directory is written at once)');
      const timeoutMs = o.timeout ?? PRODUCE_TIMEOUT_MS;
      // A --timeout given bounds the connect too: `--timeout 1000` against a server that
      // is down waited the client's 10 s connect timeout, then named neither.
      const t = await target(o, false, o.timeout).catch((e: unknown) => {
        if (o.timeout !== undefined && e instanceof UringmqError && e.code === 'UNAVAILABLE')
          throw new UringmqError('UNAVAILABLE', e.message.replace(/^cannot reach uringmq at (\S+): /, `cannot reach uringmq at $1 within --timeout (${o.timeout} ms): `));
        throw e;
      });
      try {
        // A server that went away is retried (a restart), for --timeout: not for the
        // client's 120 s default, which left the command waiting without a word.
        const producer = t.client ? t.client.producer({ lingerMs: 5, deliveryTimeoutMs: timeoutMs }) : t.broker!.producer({ lingerMs: 5 });
        // Fail fast with TOPIC_NOT_FOUND (over gRPC, each of thousands of queued lines
        // looked the topic up again before the first failure stopped the input).
        const partitions = t.client ? (await t.client.describeTopic(topic, { groups: false })).partitions.length : t.broker!.topicState(topic).config.partitions;
        // Before the input: with none (or before a line came) a partition that does not
        // exist said "produced 0 messages", exit 0.
        if (o.partition !== undefined && o.partition >= partitions)
          throw new UringmqError('INVALID_ARGUMENT', `partition ${o.partition} does not exist in topic ${topic} (${partitions} partitions)`);
        const sends: Array<Promise<unknown>> = [];
        let sentBytes = 0;
        let n = 0;
        let ok = 0;
        // A refused line (too large, a bad partition) stops the input and the command
        // fails naming it; the other lines read so far are still sent and counted. With
        // several failing, the first in input order is named (not the first to fail:
        // a later line's refusal by the client comes before an earlier one's by the
        // server), with how many failed and which.
        const failed: number[] = [];
        let first: { line: number; err: unknown } | null = null;
        const fail = (line: number, err: unknown) => {
          failed.push(line);
          if (!first || line < first.line) first = { line, err };
          // Ends the read under way: with an input that stays open (`tail -f`), a refusal
          // was said only once another line came, and that line was sent too.
          process.stdin.destroy();
        };
        // A line longer than any record may be: refused as it is read (its number in
        // the message), after the lines before it are sent.
        const maxLine = t.broker ? t.broker.maxRecordBytes : MAX_RECORD_LINE_BYTES;
        // A directory as stdin reads as empty: `produce t < dir` said "produced 0" and exited 0.
        if (stdinIsDirectory()) throw new UringmqError('INVALID_ARGUMENT', 'stdin is a directory: give produce its messages as lines of a file or a pipe');
        const lines = stdinLines(maxLine);
        // A signal (Ctrl-C on `tail -f log | uringmq produce t`) stops the input: the
        // lines read so far are still sent and waited for, and the broker or client is
        // closed (with --dir, a run killed by the signal left state.json saying it
        // crashed, and the next open scanned the logs). A second signal exits at once.
        let interrupted: NodeJS.Signals | null = null;
        let interruptedAt = 0;
        const onSignal = (sig: NodeJS.Signals) => {
          // `npx uringmq produce` gets one Ctrl-C twice, as serve does (see REPEATED_SIGNAL_MS).
          if (sig === interrupted && performance.now() - interruptedAt < REPEATED_SIGNAL_MS) return;
          if (interrupted) {
            process.stderr.write(`uringmq: second ${sig}: exiting without waiting for the lines not yet acknowledged\n`);
            process.exit(1);
          }
          interrupted = sig;
          interruptedAt = performance.now();
          process.stdin.destroy(); // ends the read under way
        };
        process.on('SIGINT', onSignal);
        process.on('SIGTERM', onSignal);
        process.on('SIGHUP', onSignal); // a closed terminal: as serve takes it
        const next = () => lines.next().catch((e: unknown) => void (interrupted || first ? undefined : fail(n + 1, e)));
        for (let r = await next(); r && !r.done; r = await next()) {
          if (first) break; // a line read after a refusal is not sent
          const line = r.value;
          const lineNo = ++n;
          let sent: Promise<unknown>;
          try {
            sent = producer.send(topic, { key: o.key, value: line, partition: o.partition });
          } catch (e) {
            sent = Promise.reject(e);
          }
          sends.push(sent.then(() => ok++, (e: unknown) => void fail(lineNo, e)));
          // Bounded in bytes too: a producer holds a line it has not written (an
          // embedded one while the disk is behind), and 10,000 lines of 1 MiB are 10 GB.
          sentBytes += line.length;
          if (sends.length >= 10_000 || sentBytes >= PRODUCE_PENDING_BYTES) {
            await Promise.all(sends.splice(0));
            sentBytes = 0;
          }
          if (interrupted) break;
        }
        await Promise.all(sends);
        await producer.flush();
        process.stderr.write(`produced ${ok} message${ok === 1 ? '' : 's'} to ${topic}${interrupted ? ` (stopped by ${interrupted}: input after that was not sent)` : ''}\n`);
        if (first) {
          const { line, err } = first as { line: number; err: unknown };
          let e = err instanceof UringmqError ? err : new UringmqError('INTERNAL', String(err));
          // The client's timeout is --timeout here, and the server is the one given.
          if (t.client && /deliveryTimeoutMs \(\d+ ms\)/.test(e.message))
            e = new UringmqError(e.code, e.message.replace(/not acknowledged within/, `not acknowledged by ${o.server} within`).replace(/deliveryTimeoutMs \((\d+) ms\)/g, '--timeout ($1 ms)'));
          failed.sort((a, b) => a - b);
          const which = failed.length > 10 ? `${failed.slice(0, 10).join(', ')}, …` : failed.join(', ');
          throw new UringmqError(e.code, `line ${line}: ${e.message}${failed.length > 1 ? ` (${failed.length} lines failed: ${which})` : ''}`);
        }
        if (interrupted) {
          // The copy of a signal npx sends a few ms later, arriving while Node tore the
          // process down (its handlers gone), killed it by SIGINT after a clean close.
          // Exiting here, the handlers still in place, leaves no such window.
          await done(t);
          process.exit(0);
        }
      } finally {
        await done(t);
      }
    });

  withTarget(prog.command('consume <topic>').description('print messages (and ack them, with --group)'))
    .option('-g, --group <group>', 'consume as a member of this group, acking each message')
    .option('--from <where>', "'earliest', 'latest' or an offset", 'latest')
    .option('--partition <n>', 'one partition (without --group)', int('partition'))
    .option('-n, --max <n>', 'exit after this many messages (at least 1)', (v: string) => {
      const n = int('max')(v);
      if (n < 1) throw new InvalidArgumentError('max must be at least 1');
      return n;
    })
    .option('--json', 'print JSON lines with offsets, keys and headers')
    .option('--transport <t>', "with --group and --server: 'grpc' (Subscribe) or 'fetch' (the native fetch plane)", 'grpc')
    .option('--fetch-address <host:port>', "the server's fetch listener, for --transport fetch (default: its host, port 50052)")
    .action(async (topic: string, o: { group?: string; from: string; partition?: number; max?: number; json?: boolean; server?: string; dir?: string; transport: string; fetchAddress?: string }) => {
      const from = o.from === 'earliest' || o.from === 'latest' ? o.from : { offset: count(o.from) };
      if (typeof from === 'object' && Number.isNaN(from.offset))
        throw new UringmqError('INVALID_ARGUMENT', `--from must be 'earliest', 'latest' or an offset, got '${o.from}'`);
      // Empty (`--group "$UNSET"`) is a mistake: it read as no group, printing without acking.
      if (o.group === '') throw new UringmqError('INVALID_ARGUMENT', '--group needs a group name');
      if (o.fetchAddress === '') throw new UringmqError('INVALID_ARGUMENT', '--fetch-address needs a host:port');
      if (o.group !== undefined && o.partition !== undefined)
        throw new UringmqError('INVALID_ARGUMENT', '--partition is for reading without --group: a group member reads the partitions the group assigns it');
      if (o.transport !== 'grpc' && o.transport !== 'fetch') throw new UringmqError('INVALID_ARGUMENT', `--transport must be 'grpc' or 'fetch', got '${o.transport}'`);
      if (o.transport === 'fetch' && (!o.group || !o.server)) throw new UringmqError('INVALID_ARGUMENT', '--transport fetch needs --group and --server');
      const t = await target(o);
      let n = 0;
      const stop = () => {
        void done(t).then(() => process.exit(0));
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
      process.on('SIGHUP', stop); // a closed terminal: as serve takes it
      // Its reader gone: it ends as a signal ends it (nothing printed then, nothing acked).
      const unwatch = watchStdoutReader(stop);
      try {
        if (o.group) {
          // With --max n, no more than n taken at once: messages taken and not acked when
          // it stops count as a delivery each, and a few short runs would send the rest
          // of the backlog to the dead-letter topic.
          const window = o.max !== undefined ? { maxUnacked: Math.max(1, o.max) } : {};
          // A lost server is waited for (a restart: its unacked messages come again), as
          // Kafka's console consumer does; stderr says so, and when it is back.
          const onConnectionState = (ev: ConnectionEvent) =>
            process.stderr.write(
              ev.state === 'reconnected'
                ? `uringmq: reconnected to ${o.server}\n`
                : `uringmq: ${ev.attempt === 1 ? 'lost the connection to' : 'still cannot reach'} ${o.server} (${ev.error.code}: ${ev.error.message}); reconnecting in ${ev.delayMs} ms (attempt ${ev.attempt})\n`,
            );
          const c = t.client
            ? o.transport === 'fetch'
              ? t.client.consumer({ topic, group: o.group, from, transport: 'fetch', fetchAddress: o.fetchAddress, onConnectionState })
              : t.client.consumer({ topic, group: o.group, from, ...window, onConnectionState })
            : t.broker!.consumer({ topic, group: o.group, from, ...window });
          for await (const m of c) {
            // Not printed, not acked: the group redelivers it to whoever reads next.
            if (!(await print(formatMessage(m, !!o.json)))) break;
            m.ack();
            if (o.max !== undefined && ++n >= o.max) break;
          }
        } else if (t.broker) {
          for await (const m of t.broker.consumer({ topic, partition: o.partition, from })) {
            if (!(await print(formatMessage(m, !!o.json)))) break;
            if (o.max !== undefined && ++n >= o.max) break;
          }
        } else {
          // Without a group over gRPC: fetch with long-poll, partition by partition.
          const d = await t.client!.describeTopic(topic, { groups: false });
          if (o.partition !== undefined && !d.partitions[o.partition])
            throw new UringmqError('INVALID_ARGUMENT', `partition ${o.partition} does not exist in topic ${topic} (${d.partitions.length} partitions)`);
          const parts = o.partition !== undefined ? [o.partition] : d.partitions.map((p) => p.partition);
          const pos = parts.map((p) => (from === 'earliest' ? d.partitions[p]!.startOffset : from === 'latest' ? d.partitions[p]!.endOffset : from.offset));
          // Up to 64 partitions are polled at once, each by one worker (so each
          // partition's messages print in order). One loop over all of them, 100 ms a
          // long poll, took a message on the 64th partition 3.5 s to appear; on the
          // 1000th, most of two minutes.
          const workers = Math.min(parts.length, CONSUME_FETCH_WORKERS);
          let stopped = false;
          let failure: unknown = null;
          let wake = () => {};
          const ended = new Promise<void>((resolve) => (wake = resolve));
          const stop = () => {
            stopped = true;
            wake();
          };
          const worker = async (w: number) => {
            const mine = parts.map((_, i) => i).filter((i) => i % workers === w);
            const maxWaitMs = mine.length === 1 ? 1000 : 100;
            while (!stopped)
              for (const i of mine) {
                let msgs: Message[];
                try {
                  msgs = await t.client!.fetch(topic, parts[i]!, pos[i]!, { maxWaitMs });
                } catch (e) {
                  if (!(e instanceof UringmqError && e.code === 'OFFSET_OUT_OF_RANGE')) throw e;
                  // As the consumer on a data directory reads: from the log's start once
                  // retention passed the position, and not before the log reaches it.
                  const p = (await t.client!.describeTopic(topic, { groups: false })).partitions[parts[i]!]!;
                  if (pos[i]! < p.startOffset) pos[i] = p.startOffset;
                  else await sleep(maxWaitMs);
                  continue;
                }
                for (const m of msgs) {
                  if (stopped) return;
                  // Counted before the print: workers printing at once stop at --max exactly.
                  if (o.max !== undefined && ++n > o.max) return stop();
                  if (!(await print(formatMessage(m, !!o.json)))) return stop();
                  pos[i] = m.offset + 1;
                  if (o.max !== undefined && n >= o.max) return stop();
                }
              }
          };
          const runs = Array.from({ length: workers }, (_, w) =>
            worker(w).catch((e: unknown) => {
              if (!stopped) failure = e; // after a stop, the close cancels the polls still out
              stop();
            }),
          );
          await Promise.race([ended, Promise.all(runs)]);
          if (failure !== null) throw failure;
        }
      } finally {
        unwatch();
        await done(t);
      }
    });
  addBenchCommands(prog);
  return prog;
}

if (require.main === module) {
  watchStdout();
  // A failed write to stderr (its terminal closed: EIO, the SIGHUP case; a reader gone:
  // EPIPE) has nowhere to be said. Unhandled, it crashed the command in the middle of
  // its clean close, leaving the data directory marked crashed.
  process.stderr.on('error', () => undefined);
  program()
    .parseAsync(process.argv)
    .catch((e: unknown) => {
      const err = e as UringmqError;
      // The server's message names gRPC metadata and connect(): a CLI user sets a variable.
      const hint = err.code === 'UNAUTHENTICATED' ? ' (uringmq commands send the token in URINGMQ_AUTH_TOKEN)' : '';
      process.stderr.write(`uringmq: ${err.code ? `${err.code}: ` : ''}${err.message}${hint}\n`);
      process.exit(2);
    });
}
