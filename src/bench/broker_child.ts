/**
 * The broker process `uringmq bench` starts (broker: 'child'): a Broker and its gRPC
 * server on a loopback port. argv[2] is a JSON config; prints one JSON line
 * {port, pid, ioBackend, ioBackendNote} once listening. Over the IPC channel it
 * answers {type:'stats'} with its heap, event-loop delay and handle count. It stops
 * on SIGTERM, and when the bench process goes away (IPC disconnect), so it is never
 * left behind. SIGINT (Ctrl-C in the terminal) is left to the bench to handle.
 */
import * as v8 from 'node:v8';
import { Broker, type Durability } from '../broker/broker';
import { BrokerServer } from '../grpc/server';
import { SelfMonitor } from './proc_stats';

export interface ChildConfig {
  dir: string;
  durability: Durability;
  ioBackend: 'auto' | 'io_uring' | 'thread';
}

export interface ChildReady {
  port: number;
  pid: number;
  ioBackend: string;
  ioBackendNote: string;
}

export type ChildRequest = { type: 'stats'; id: number; heap?: boolean };

async function main(): Promise<void> {
  const cfg = JSON.parse(process.argv[2] ?? '{}') as ChildConfig;
  const broker = await Broker.open({ dir: cfg.dir, durability: cfg.durability, ioBackend: cfg.ioBackend });
  const server = await BrokerServer.start({ broker, host: '127.0.0.1', port: 0, maxMessageBytes: 64 << 20 });
  const mon = new SelfMonitor();
  process.on('message', (m: ChildRequest) => {
    if (m?.type !== 'stats' || !process.send) return;
    process.send({ type: 'stats', id: m.id, stats: mon.sample(), heap: m.heap ? v8.getHeapStatistics() : undefined });
  });
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    mon.close();
    server.stop(2000).then(
      () => process.exit(0),
      (e: Error) => {
        process.stderr.write(`uringmq bench broker: shutdown failed: ${e.message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('disconnect', stop);
  process.on('SIGINT', () => undefined);
  // The bench went away while the broker opened: 'disconnect' came before the handler.
  if (!process.connected) return stop();
  const ready: ChildReady = { port: server.port, pid: process.pid, ioBackend: broker.ioBackend, ioBackendNote: broker.ioBackendNote };
  process.stdout.write(`${JSON.stringify(ready)}\n`);
}

main().catch((e: Error) => {
  process.stderr.write(`uringmq bench broker: ${(e as { code?: string }).code ?? ''} ${e.message}\n`);
  process.exit(1);
});
