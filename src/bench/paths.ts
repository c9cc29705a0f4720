/**
 * The API paths a bench run publishes and consumes through. Each publisher sends one
 * message at a time and reports its ack through a callback (no promise per message
 * where the path does not make one anyway).
 *
 *   embedded      broker.producer({ lingerMs }).send()               in-process
 *   grpc-batched  client.producer({ lingerMs, maxInFlight }).send()   RecordBatches on a PublishStream
 *   grpc-unary    one unary Publish call per message                 (plain record)
 *   grpc-stream   one PublishStream message per record               (plain record, many in flight)
 *
 * Consumers are group members: embedded for the embedded path, Subscribe otherwise.
 */
import type * as grpc from '@grpc/grpc-js';
import type { GroupConsumerApi } from '../broker/group_consumer';
import { brokerService } from '../grpc/service';
import { fromServiceError } from '../grpc/status';
import { UringmqError } from '../errors';
import type { uringmq } from '../grpc/proto';
import type { BrokerHost } from './broker_host';
import type { ApiPath, Workload } from './workload';

export interface Publisher {
  send(value: Buffer, done: (err?: Error) => void): void;
  /** Waits for what was sent, then releases the path's resources. */
  close(): Promise<void>;
}

export async function createPublisher(api: ApiPath, host: BrokerHost, topic: string, w: Workload): Promise<Publisher> {
  if (api === 'embedded') {
    if (!host.broker) throw new UringmqError('INVALID_ARGUMENT', "the 'embedded' path needs the broker in this process");
    const p = host.broker.producer({ lingerMs: w.lingerMs });
    return {
      send: (value, done) => void p.send(topic, { value }).then(() => done(), done),
      close: () => p.flush(),
    };
  }
  const client = await host.client();
  if (api === 'grpc-batched') {
    // Idempotent up to the 64 batches in flight the broker remembers per producer; a workload asking more runs without.
    const p = client.producer({ lingerMs: w.lingerMs, maxInFlight: w.maxInFlight, idempotent: w.maxInFlight <= 64 });
    return {
      send: (value, done) => void p.send(topic, { value }).then(() => done(), done),
      close: () => p.close(),
    };
  }
  if (api === 'grpc-unary') {
    const def = brokerService.publish!;
    let pending = 0;
    let idle: (() => void) | null = null;
    return {
      send: (value, done) => {
        pending++;
        client.grpc.makeUnaryRequest(def.path, def.requestSerialize, def.responseDeserialize, { topic, records: [{ value }] }, (err: grpc.ServiceError | null) => {
          pending--;
          done(err ? fromServiceError(err) : undefined);
          if (pending === 0) idle?.();
        });
      },
      close: () => (pending === 0 ? Promise.resolve() : new Promise<void>((r) => (idle = r))),
    };
  }
  return streamPublisher(client.grpc, topic);
}

/** One PublishStream, one plain record per message, responses matched by sequence. */
function streamPublisher(ch: grpc.Client, topic: string): Publisher {
  const def = brokerService.publishStream!;
  const pending = new Map<number, (err?: Error) => void>();
  let stream: grpc.ClientDuplexStream<uringmq.v1.PublishRequest.$Properties, uringmq.v1.PublishResponse> | null = null;
  let seq = 0;
  let idle: (() => void) | null = null;
  const settle = (s: number, err?: Error) => {
    const done = pending.get(s);
    if (!done) return;
    pending.delete(s);
    done(err);
    if (pending.size === 0) idle?.();
  };
  const open = () => {
    const s = ch.makeBidiStreamRequest(def.path, def.requestSerialize, def.responseDeserialize) as grpc.ClientDuplexStream<uringmq.v1.PublishRequest.$Properties, uringmq.v1.PublishResponse>;
    s.on('data', (r: uringmq.v1.PublishResponse) => {
      const n = Number(r.sequence);
      settle(n, r.error && r.error.code ? new UringmqError(r.error.code as never, r.error.message ?? 'publish failed') : undefined);
    });
    const broken = (e?: unknown) => {
      if (stream !== s) return;
      stream = null;
      const err = e ? fromServiceError(e) : new UringmqError('UNAVAILABLE', 'PublishStream ended by the server');
      for (const n of [...pending.keys()]) settle(n, err);
    };
    s.on('error', broken);
    s.on('end', () => broken());
    return s;
  };
  return {
    send: (value, done) => {
      stream ??= open();
      const n = ++seq;
      pending.set(n, done);
      stream.write({ sequence: n, topic, records: [{ value }] });
    },
    close: async () => {
      if (pending.size > 0) await new Promise<void>((r) => (idle = r));
      const s = stream;
      stream = null;
      s?.end();
    },
  };
}

export async function createConsumer(api: ApiPath, host: BrokerHost, topic: string, group: string, w: Workload, from: 'earliest' | 'latest'): Promise<GroupConsumerApi> {
  const opts = { topic, group, from, maxUnacked: w.consumerMaxUnacked, ackDeadlineMs: 120_000 };
  if (api === 'embedded' || (host.broker && !host.address)) {
    if (!host.broker) throw new UringmqError('INVALID_ARGUMENT', "the 'embedded' path needs the broker in this process");
    return host.broker.consumer(opts);
  }
  return (await host.client()).consumer(opts);
}
