/**
 * The producer's PublishStream over node:http2 (src/client/publish_stream.ts): gRPC
 * framing, statuses and trailers against scripted HTTP/2 servers, dead-peer detection,
 * and the client choosing it (host:port) or grpc-js (other targets) against a broker.
 */
import { strict as assert } from 'node:assert';
import * as http2 from 'node:http2';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { connect } from '../src/client';
import { GRPC_PREFIX_BYTES } from '../src/client/publish_request';
import { PublishStream, parseHostPort, type PublishTarget } from '../src/client/publish_stream';
import type { UringmqError } from '../src/errors';
import { pb } from '../src/grpc/proto';
import { sleep, startServer } from './helpers';

function target(port: number, over: Partial<PublishTarget> = {}): PublishTarget {
  return { host: '127.0.0.1', port, tls: false, token: undefined, keepaliveTimeMs: 0, keepaliveTimeoutMs: 1000, maxMessageBytes: 1 << 20, ...over };
}

/** A gRPC-framed PublishResponse. */
function framedResponse(sequence: number, baseOffset: number): Buffer {
  const body = Buffer.from(pb.PublishResponse.encode({ sequence, partition: 0, base_offset: baseOffset }).finish());
  const out = Buffer.alloc(GRPC_PREFIX_BYTES + body.length);
  out.writeUInt32BE(body.length, 1);
  body.copy(out, GRPC_PREFIX_BYTES);
  return out;
}

/** A request view with room for the prefix in front, as finishRequest makes them. */
function request(bytes: string): Buffer {
  const b = Buffer.alloc(GRPC_PREFIX_BYTES + bytes.length);
  b.write(bytes, GRPC_PREFIX_BYTES);
  return b.subarray(GRPC_PREFIX_BYTES);
}

/** Runs an HTTP/2 server whose stream handler the test scripts. */
async function h2Server(onStream: (s: http2.ServerHttp2Stream, h: http2.IncomingHttpHeaders) => void): Promise<{ port: number; close(): Promise<void> }> {
  const srv = http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  srv.on('session', (s) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
  });
  srv.on('stream', (s, h) => {
    s.on('error', () => undefined); // scripted resets end the stream with an error on this side too
    onStream(s, h);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return {
    port: (srv.address() as AddressInfo).port,
    close: () =>
      new Promise((r) => {
        for (const s of sessions) s.destroy();
        srv.close(() => r());
      }),
  };
}

/** The stream's outcome: the responses it delivered, then its end or its error. */
function outcome(s: PublishStream): Promise<{ responses: Array<{ sequence: number; base_offset: number }>; error: UringmqError | null }> {
  const responses: Array<{ sequence: number; base_offset: number }> = [];
  s.on('data', (r: { sequence: number; base_offset: number }) => responses.push({ sequence: Number(r.sequence), base_offset: Number(r.base_offset) }));
  return new Promise((resolve) => {
    s.on('end', () => resolve({ responses, error: null }));
    s.on('error', (e: UringmqError) => resolve({ responses, error: e }));
  });
}

describe('PublishStream: gRPC over node:http2 for the producer', function () {
  this.timeout(30_000);

  it('parses the targets it serves; anything else is left to grpc-js', () => {
    assert.deepEqual(parseHostPort('127.0.0.1:50051'), { host: '127.0.0.1', port: 50051 });
    assert.deepEqual(parseHostPort('broker-1.internal:9000'), { host: 'broker-1.internal', port: 9000 });
    assert.deepEqual(parseHostPort('[::1]:50051'), { host: '::1', port: 50051 });
    for (const a of ['dns:///localhost:50051', 'unix:/tmp/s.sock', 'ipv4:127.0.0.1:1,127.0.0.1:2', 'localhost', 'host:0', 'host:70000', 'a b:1'])
      assert.equal(parseHostPort(a), null, a);
  });

  it('frames requests, decodes responses split across frames at every byte, ends on status 0', async () => {
    const got: Buffer[] = [];
    let headers: http2.IncomingHttpHeaders = {};
    const srv = await h2Server((s, h) => {
      headers = h;
      s.on('data', (d: Buffer) => got.push(d));
      s.on('end', () => {
        s.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
        s.on('wantTrailers', () => s.sendTrailers({ 'grpc-status': '0' }));
        // Three responses, written one byte per DATA frame.
        const all = Buffer.concat([framedResponse(1, 0), framedResponse(2, 10), framedResponse(3, 20)]);
        for (let i = 0; i < all.length; i++) s.write(all.subarray(i, i + 1));
        s.end();
      });
    });
    try {
      const ps = new PublishStream(target(srv.port, { token: 't0k' }));
      const done = outcome(ps);
      ps.write(request('first'));
      ps.write(request('second!'));
      ps.end();
      const { responses, error } = await done;
      assert.equal(error, null);
      assert.deepEqual(responses, [
        { sequence: 1, base_offset: 0 },
        { sequence: 2, base_offset: 10 },
        { sequence: 3, base_offset: 20 },
      ]);
      assert.equal(headers[':path'], '/uringmq.v1.Broker/PublishStream');
      assert.equal(headers['content-type'], 'application/grpc');
      assert.equal(headers.te, 'trailers');
      assert.equal(headers.authorization, 'Bearer t0k');
      const wire = Buffer.concat(got);
      assert.deepEqual(wire, Buffer.concat([Buffer.from([0, 0, 0, 0, 5]), Buffer.from('first'), Buffer.from([0, 0, 0, 0, 7]), Buffer.from('second!')]));
    } finally {
      await srv.close();
    }
  });

  it('maps statuses: trailers-only with uringmq-code, trailers after data, HTTP errors, compressed or missing framing', async () => {
    const scripts: Array<[string, (s: http2.ServerHttp2Stream) => void, string]> = [
      ['trailers-only, with the uringmq code', (s) => s.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '16', 'grpc-message': 'no%20token', 'uringmq-code': 'UNAUTHENTICATED' }, { endStream: true }), 'UNAUTHENTICATED'],
      ['trailers-only, status alone', (s) => s.respond({ ':status': 200, 'grpc-status': '9', 'grpc-message': 'nope' }, { endStream: true }), 'FAILED_PRECONDITION'],
      ['HTTP 503', (s) => s.respond({ ':status': 503 }, { endStream: true }), 'UNAVAILABLE'],
      ['a compressed response', (s) => { s.respond({ ':status': 200, 'content-type': 'application/grpc' }); const r = framedResponse(1, 0); r[0] = 1; s.write(r); }, 'INTERNAL'],
      ['closed without a status', (s) => { s.respond({ ':status': 200, 'content-type': 'application/grpc' }); s.end(); }, 'UNAVAILABLE'],
      ['reset by the server', (s) => s.close(http2.constants.NGHTTP2_INTERNAL_ERROR), 'UNAVAILABLE'],
    ];
    for (const [what, script, code] of scripts) {
      const srv = await h2Server((s) => script(s));
      try {
        const ps = new PublishStream(target(srv.port));
        const done = outcome(ps);
        ps.write(request('x'));
        const { error } = await done;
        assert.equal(error?.code, code, `${what}: ${error?.message}`);
        if (what.startsWith('trailers-only, with')) assert.equal(error?.message, 'no token');
      } finally {
        await srv.close();
      }
    }
  });

  it('a server that accepts the connection and then says nothing is given up on by keepalive', async () => {
    const silent = net.createServer(() => undefined); // accepts, never speaks HTTP/2
    const socks = new Set<net.Socket>();
    silent.on('connection', (c) => socks.add(c));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const ps = new PublishStream(target((silent.address() as AddressInfo).port, { keepaliveTimeMs: 100, keepaliveTimeoutMs: 200 }));
      const t0 = Date.now();
      const done = outcome(ps);
      ps.write(request('x'));
      const { error } = await done;
      assert.equal(error?.code, 'UNAVAILABLE');
      assert.match(error!.message, /keepalive/);
      assert.ok(Date.now() - t0 < 5000);
    } finally {
      for (const c of socks) c.destroy();
      await new Promise((r) => silent.close(r));
    }
  });

  it('a request over maxMessageBytes fails the stream with RESOURCE_EXHAUSTED before anything is sent', async () => {
    let received = 0;
    const srv = await h2Server((s) => s.on('data', (d: Buffer) => (received += d.length)));
    try {
      const ps = new PublishStream(target(srv.port, { maxMessageBytes: 4 }));
      const done = outcome(ps);
      assert.equal(ps.write(request('12345')), false);
      assert.equal((await done).error?.code, 'RESOURCE_EXHAUSTED');
      await sleep(50);
      assert.equal(received, 0);
    } finally {
      await srv.close();
    }
  });

  it('against a broker: host:port producers publish over node:http2, other targets over grpc-js, and a wrong token is refused on both', async () => {
    const r = await startServer({ authToken: 's3cret' });
    try {
      const fast = await connect(r.address, { token: 's3cret' });
      const viaGrpc = await connect(`dns:///${r.address}`, { token: 's3cret' });
      const wrong = await connect(r.address, { token: 'nope' });
      const wrongGrpc = await connect(`dns:///${r.address}`, { token: 'nope' });
      try {
        assert.ok(fast.publishTarget);
        assert.equal(viaGrpc.publishTarget, null);
        await fast.createTopic('t', { partitions: 1 });
        const a = await fast.producer().sendBatch('t', Array.from({ length: 500 }, (_, i) => ({ value: `fast ${i}` })));
        const b = await viaGrpc.producer().sendBatch('t', Array.from({ length: 500 }, (_, i) => ({ value: `grpc ${i}` })));
        assert.deepEqual([a.baseOffset, b.baseOffset], [0, 500]);
        const msgs = await fast.fetch('t', 0, 0, { maxBytes: 1 << 20 });
        assert.equal(msgs.length, 1000);
        assert.equal(msgs[499]!.value.toString(), 'fast 499');
        assert.equal(msgs[999]!.value.toString(), 'grpc 499');
        // A batch too big for one request is refused alone, before it takes a sequence
        // number: the idempotent producer's next batch still goes through.
        const small = await connect(r.address, { token: 's3cret', maxMessageBytes: 64 << 10 });
        try {
          const p = small.producer({ idempotent: true });
          const big = p.sendBatch('t', [{ value: Buffer.alloc(100 << 10) }]);
          await assert.rejects(big, (e: UringmqError) => e.code === 'RESOURCE_EXHAUSTED' && /maxMessageBytes/.test(e.message));
          assert.equal((await p.sendBatch('t', [{ value: 'after' }])).baseOffset, 1000);
        } finally {
          await small.close();
        }
        for (const c of [wrong, wrongGrpc]) {
          const p = c.producer();
          await assert.rejects(p.send('t', { value: 'x' }), { code: 'UNAUTHENTICATED' });
        }
      } finally {
        await Promise.all([fast.close(), viaGrpc.close(), wrong.close(), wrongGrpc.close()]);
      }
    } finally {
      await r.stop();
    }
  });
});
