/**
 * The client producer's send() path alone: one process holding an in-process server
 * (durability 'none', so the disk stays out of it) and a client producer with
 * lingerMs 1, 5,000 sends outstanding, 100-byte values. Prints sends per second over
 * 3 s after a second's warm-up. For A/B runs of two builds, alternated: the JS work
 * per send() (validation, the record's copy, its timestamp, the accumulator, encoding)
 * is what differs between them, and a noisy host moves the number by ±15%.
 *
 *   npm run bench:send-path
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Broker, BrokerServer } from '../src';
import { connect } from '../src/client';

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'uringmq-send-path-'));
  const broker = await Broker.open({ dir, durability: 'none' });
  try {
    await broker.createTopic('bench');
    const server = await BrokerServer.start({ broker, host: '127.0.0.1', port: 0 });
    const client = await connect(`127.0.0.1:${server.port}`);
    const producer = client.producer({ lingerMs: 1, maxInFlight: 64 });
    const value = Buffer.alloc(100, 1);
    const run = async (ms: number): Promise<number> => {
      let sent = 0;
      const stopAt = Date.now() + ms;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: 5000 }, async () => {
          while (Date.now() < stopAt) {
            await producer.send('bench', { value, partition: 0 });
            sent++;
          }
        }),
      );
      return sent / ((performance.now() - t0) / 1000);
    };
    await run(1000);
    const rate = await run(3000);
    console.log(`client send() path: ${Math.round(rate / 1000)} k sends/s (lingerMs 1, 5000 outstanding, 100 B, durability none, one process)`);
    await producer.close();
    await client.close();
    await server.stop();
  } finally {
    if (!broker.closed) await broker.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
