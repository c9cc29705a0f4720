/**
 * Child process for bench/latency_parts.ts: a uringmq gRPC broker whose publishBatch
 * notes, for every record the client marked, when its request reached the handler and
 * when its append was durable (CLOCK_MONOTONIC ms, comparable across processes). On
 * SIGTERM it writes them to the file named in argv and exits.
 * Prints {"broker":port}.
 */
import * as fs from 'node:fs';
import { Broker, BrokerServer } from '../src';
import { MARK, monoMs } from './latency_parts_mark';

async function main(): Promise<void> {
  const [dir, out] = process.argv.slice(2) as [string, string];
  const broker = await Broker.open({ dir });
  const rows: string[] = [];
  // Wrapping the instance's publishBatch, the handler's entry into the broker, keeps
  // the measurement out of the product code.
  const publishBatch = broker.publishBatch.bind(broker);
  broker.publishBatch = (topic, batch, partition, opts) => {
    const arrived = monoMs();
    const sent: number[] = [];
    for (let i = batch.indexOf(MARK); i >= 0; i = batch.indexOf(MARK, i + MARK.length + 8)) sent.push(batch.readDoubleLE(i + MARK.length));
    const p = publishBatch(topic, batch, partition, opts);
    p.then(
      () => {
        const durable = monoMs();
        for (const s of sent) rows.push(`${s} ${arrived} ${durable}`);
      },
      () => undefined,
    );
    return p;
  };
  const server = await BrokerServer.start({ broker, host: '127.0.0.1', port: 0 });
  process.stdout.write(`${JSON.stringify({ broker: server.port })}\n`);
  process.on('SIGTERM', () => {
    fs.writeFileSync(out, rows.join('\n'));
    void server.stop(1000).then(() => process.exit(0));
  });
}

main().catch((e) => {
  process.stderr.write(String((e as Error).stack));
  process.exit(1);
});
