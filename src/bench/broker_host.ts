/**
 * The broker a bench run measures: opened in this process (embedded, or with its
 * gRPC server on a loopback port), started as a child process, or a running server
 * (--server). One interface for creating and describing topics and for the
 * broker's resource usage, whichever it is.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import * as v8 from 'node:v8';
import { Broker, type TopicDescription } from '../broker/broker';
import { SERVER_NODE_FLAGS } from '../cli/node_flags';
import { BrokerServer } from '../grpc/server';
import { connect, type Client } from '../client';
import { UringmqError } from '../errors';
import type { ChildConfig, ChildReady, ChildRequest } from './broker_child';
import { nodeScriptArgs } from './node_script';
import { ProcCpu, procRssMb, type ProcessStats } from './proc_stats';
import type { Workload } from './workload';

export type Placement = 'in-process' | 'child' | 'external';

export interface HostOptions {
  /** A running server: host:port. */
  server?: string;
  /** Its pid on this machine, for RSS and CPU from /proc. */
  brokerPid?: number;
  /** Data directory for a broker this tool starts. */
  dir: string;
  /** Command words put before `node` when starting the child (e.g. perf record ... --). */
  childPrefix?: string[];
  /** Extra node flags for the child (e.g. --perf-basic-prof). */
  childNodeFlags?: string[];
}

const MiB = 1 << 20;

export class BrokerHost {
  private clientPromise: Promise<Client> | null = null;
  private statsSeq = 0;
  private readonly statsWaiters = new Map<number, (m: { stats: ProcessStats; heap?: v8.HeapInfo }) => void>();
  private readonly cpu: ProcCpu | null;
  private closed = false;

  private constructor(
    readonly placement: Placement,
    /** The broker when it runs in this process. */
    readonly broker: Broker | null,
    private readonly server: BrokerServer | null,
    readonly address: string | null,
    readonly pid: number | null,
    readonly ioBackend: string,
    readonly ioBackendNote: string,
    readonly dataDir: string | null,
    private readonly child: ChildProcess | null,
    private readonly childOutput: () => string,
  ) {
    this.cpu = placement !== 'in-process' && pid ? new ProcCpu(pid) : null;
    child?.on('message', (m: { type?: string; id?: number; stats?: ProcessStats; heap?: v8.HeapInfo }) => {
      if (m?.type !== 'stats' || typeof m.id !== 'number') return;
      const w = this.statsWaiters.get(m.id);
      this.statsWaiters.delete(m.id);
      w?.({ stats: m.stats!, heap: m.heap });
    });
  }

  /** Starts (or reaches) the broker `w` needs: in this process if an embedded path is used. */
  static async start(w: Workload, o: HostOptions): Promise<BrokerHost> {
    const apis = w.kind === 'comparison' ? w.compare.apis : [w.api];
    const embedded = apis.includes('embedded');
    const grpc = apis.some((a) => a !== 'embedded');
    if (o.server) {
      if (embedded) throw new UringmqError('INVALID_ARGUMENT', "the 'embedded' API path measures a broker in this process: it cannot be used with --server");
      const h = new BrokerHost('external', null, null, o.server, o.brokerPid ?? null, 'unknown (external server)', '', null, null, () => '');
      await h.client(); // fail fast when unreachable
      return h;
    }
    if (embedded || w.broker === 'in-process') {
      const broker = await Broker.open({ dir: o.dir, durability: w.durability, ioBackend: w.ioBackend });
      let server: BrokerServer | null = null;
      if (grpc) {
        try {
          server = await BrokerServer.start({ broker, host: '127.0.0.1', port: 0, maxMessageBytes: 64 * MiB });
        } catch (e) {
          await broker.close();
          throw e;
        }
      }
      return new BrokerHost('in-process', broker, server, server ? `127.0.0.1:${server.port}` : null, process.pid, broker.ioBackend, broker.ioBackendNote, o.dir, null, () => '');
    }
    return BrokerHost.startChild(w, o);
  }

  private static startChild(w: Workload, o: HostOptions): Promise<BrokerHost> {
    const cfg: ChildConfig = { dir: o.dir, durability: w.durability, ioBackend: w.ioBackend };
    const argv = [...(o.childPrefix ?? []), process.execPath, ...SERVER_NODE_FLAGS, ...(o.childNodeFlags ?? []), ...nodeScriptArgs(path.join(__dirname, 'broker_child')), JSON.stringify(cfg)];
    // Its own process group: Ctrl-C in the terminal is the bench's to handle (it stops
    // the broker when it has written its results); under `perf record` it would also
    // stop perf, which then ends the broker in the middle of the run. It still exits
    // when the bench goes away (IPC disconnect).
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe', 'ipc'], env: { ...process.env, URINGMQ_LOG_LEVEL: 'warn' }, detached: true });
    let out = '';
    const keep = (d: Buffer) => {
      out = (out + d.toString()).slice(-20_000);
    };
    child.stderr!.on('data', keep);
    return new Promise((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(() => fail(new Error('no ready line within 60 s')), 60_000);
      const fail = (e: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        child.kill('SIGKILL');
        reject(new UringmqError('UNAVAILABLE', `bench broker process did not start: ${e.message}\n${out}`));
      };
      let line = '';
      child.stdout!.on('data', (d: Buffer) => {
        if (settled) return keep(d);
        line += d.toString();
        const nl = line.indexOf('\n');
        if (nl < 0) return;
        let ready: ChildReady;
        try {
          ready = JSON.parse(line.slice(0, nl)) as ChildReady;
        } catch {
          return fail(new Error(`unexpected output: ${line.slice(0, 500)}`));
        }
        settled = true;
        clearTimeout(timer);
        keep(Buffer.from(line.slice(nl + 1)));
        resolve(new BrokerHost('child', null, null, `127.0.0.1:${ready.port}`, ready.pid, ready.ioBackend, ready.ioBackendNote, o.dir, child, () => out));
      });
      child.once('error', (e) => fail(e));
      child.once('exit', (code, sig) => fail(new Error(`exited with ${code ?? sig}`)));
    });
  }

  /** The shared gRPC client (gRPC placements only). */
  client(): Promise<Client> {
    if (!this.address) return Promise.reject(new UringmqError('FAILED_PRECONDITION', 'this broker has no gRPC server'));
    this.clientPromise ??= connect(this.address, { maxMessageBytes: 64 * MiB });
    return this.clientPromise;
  }

  async createTopic(name: string, partitions: number): Promise<void> {
    if (this.broker) await this.broker.createTopic(name, { partitions });
    else await (await this.client()).createTopic(name, { partitions });
  }

  async describeTopic(name: string): Promise<TopicDescription> {
    if (this.broker) return this.broker.describeTopic(name);
    return (await this.client()).describeTopic(name);
  }

  private ask(heap: boolean, timeoutMs = 2000): Promise<{ stats: ProcessStats; heap?: v8.HeapInfo } | null> {
    const child = this.child;
    if (!child || !child.connected) return Promise.resolve(null);
    const id = ++this.statsSeq;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.statsWaiters.delete(id);
        resolve(null); // its event loop is busy or stuck: /proc still answers for RSS and CPU
      }, timeoutMs);
      this.statsWaiters.set(id, (m) => {
        clearTimeout(timer);
        resolve(m);
      });
      try {
        child.send({ type: 'stats', id, heap } satisfies ChildRequest);
      } catch {
        clearTimeout(timer);
        this.statsWaiters.delete(id);
        resolve(null);
      }
    });
  }

  /** The broker process's resources over the last sample; `self` when it is this process. */
  async stats(self: ProcessStats): Promise<ProcessStats | null> {
    if (this.placement === 'in-process') return { ...self, sameProcess: true };
    if (!this.pid) return null;
    const rssMb = procRssMb(this.pid);
    const cpuPct = this.cpu?.sample() ?? null;
    const r = await this.ask(false, 1000);
    return {
      pid: this.pid,
      rssMb: rssMb ?? r?.stats.rssMb ?? null,
      heapUsedMb: r?.stats.heapUsedMb ?? null,
      eventLoopDelayMs: r?.stats.eventLoopDelayMs ?? null,
      activeHandles: r?.stats.activeHandles ?? null,
      cpuPct: cpuPct ?? r?.stats.cpuPct ?? null,
    };
  }

  /** v8.getHeapStatistics() of the broker process, where it can be had. */
  async heapStatistics(): Promise<v8.HeapInfo | null> {
    if (this.placement === 'in-process') return v8.getHeapStatistics();
    return (await this.ask(true))?.heap ?? null;
  }

  /** The child's stderr (and anything after its ready line). */
  output(): string {
    return this.childOutput();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.clientPromise) await (await this.clientPromise.catch(() => null))?.close();
    if (this.server) await this.server.stop(2000);
    else if (this.broker) await this.broker.close();
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      // Signal the broker itself: under `perf record` the spawned process is perf,
      // which finishes writing its data once the broker has exited.
      try {
        process.kill(this.pid!, 'SIGTERM');
      } catch {
        child.kill('SIGTERM');
      }
      const timer = setTimeout(() => {
        try {
          process.kill(this.pid!, 'SIGKILL');
        } catch {
          // gone
        }
        child.kill('SIGKILL');
      }, 15_000);
      await exited;
      clearTimeout(timer);
    }
  }
}
