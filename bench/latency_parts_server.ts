/**
 * Child process for bench/latency_parts.ts: a uringmq gRPC broker whose publishBatch
 * notes, for every record the client marked, when its request reached the handler and
 * when its append was durable (CLOCK_MONOTONIC ms, comparable across processes). On
 * SIGTERM it writes them to the file named in argv ("seq arrived durable" per line)
 * and exits. Prints {"broker":port}.
 */
import * as fs from 'node:fs';
import { Broker, BrokerServer } from '../src';
import { MARK, MARKED_BYTES, SEQ_AT, TimeTable, monoMs } from './latency_parts_mark';

async function main(): Promise<void> {
  const [dir, out, capacity] = process.argv.slice(2) as [string, string, string];
  const broker = await Broker.open({ dir });
  const arrivedAt = new TimeTable(Number(capacity));
  const durableAt = new TimeTable(Number(capacity));
  // Wrapping the instance's publishBatch, the handler's entry into the broker, keeps
  // the measurement out of the product code.
  const publishBatch = broker.publishBatch.bind(broker);
  broker.publishBatch = (topic, batch, partition, opts) => {
    const arrived = monoMs();
    const mine: number[] = []; // young and short-lived: dies before the next scavenge
    for (let i = batch.indexOf(MARK); i >= 0; i = batch.indexOf(MARK, i + MARKED_BYTES)) {
      const seq = batch.readUInt32LE(i + SEQ_AT);
      arrivedAt.set(seq, arrived);
      mine.push(seq);
    }
    const p = publishBatch(topic, batch, partition, opts);
    p.then(
      () => {
        const durable = monoMs();
        for (const s of mine) durableAt.set(s, durable);
      },
      () => undefined,
    );
    return p;
  };
  const server = await BrokerServer.start({ broker, host: '127.0.0.1', port: 0 });
  process.stdout.write(`${JSON.stringify({ broker: server.port })}\n`);
  process.on('SIGTERM', () => {
    const lines: string[] = [];
    for (let s = 0; s < arrivedAt.capacity; s++) if (!Number.isNaN(durableAt.get(s))) lines.push(`${s} ${arrivedAt.get(s)} ${durableAt.get(s)}`);
    fs.writeFileSync(out, lines.join('\n'));
    void server.stop(1000).then(() => process.exit(0));
  });
}

main().catch((e) => {
  process.stderr.write(String((e as Error).stack));
  process.exit(1);
});
