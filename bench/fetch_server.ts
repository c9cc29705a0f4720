/**
 * Child process for bench/fetch.ts: a uringmq broker with its gRPC server and its
 * native fetch plane, on ephemeral loopback ports. Prints
 * {"broker":port,"fetch":port,...}; a line "fetch <backend>" on stdin restarts the
 * fetch plane with that backend and prints the new line.
 */
import * as readline from 'node:readline';
import { Broker, BrokerServer } from '../src';
import type { FetchServer } from '../src/fetch/server';

async function main(): Promise<void> {
  const [dir, durability] = process.argv.slice(2) as [string, string];
  const broker = await Broker.open({ dir, durability: durability === 'none' ? 'none' : 'sync' });
  const server = await BrokerServer.start({ broker, host: '127.0.0.1', port: 0, maxMessageBytes: 64 << 20 });
  let fetch: FetchServer = await broker.startFetchServer({ port: 0 });
  const report = () =>
    process.stdout.write(`${JSON.stringify({ broker: server.port, fetch: fetch.port, ioBackend: broker.ioBackend, fetchBackend: fetch.ioBackend, stats: fetch.stats() })}\n`);
  report();
  readline.createInterface({ input: process.stdin }).on('line', (line) => {
    const [cmd, arg] = line.trim().split(' ');
    if (cmd === 'fetch') {
      fetch.close();
      void broker.startFetchServer({ port: 0, ioBackend: arg as 'io_uring' | 'thread' }).then((f) => {
        fetch = f;
        report();
      });
    } else if (cmd === 'stats') report();
  });
  process.on('SIGTERM', () => void server.stop(1000).then(() => process.exit(0)));
}

main().catch((e) => {
  process.stderr.write(String((e as Error).stack));
  process.exit(1);
});
