/**
 * Child process for bench/grpc.ts: a uringmq gRPC broker and, on a second port, a
 * bare grpc-js bidi stream that answers each bytes message with a 16-byte ack and
 * does nothing else (the transport ceiling for throughput and latency), on a third a
 * TCP echo (the host's own floor for a round trip between two Node processes, no
 * HTTP/2), and on a fourth the same echo as the bare stream spoken over node:http2 on
 * both sides, as the broker's PublishStream and Subscribe are (the floor of the
 * transport the broker's latency rides on); that server also answers a durable echo,
 * each answer sent once the request is on disk (see durableLog). Prints
 * {"broker":port,"raw":port,"tcp":port,"h2":port,"ioBackend":...}.
 */
import * as fs from 'node:fs';
import * as http2 from 'node:http2';
import * as net from 'node:net';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { Broker, BrokerServer } from '../src';
import { GRPC_PREFIX_BYTES, GrpcFrameReader } from '../src/grpc/framing';
import { GcPauseLog, loopDelayMonitor } from '../src/bench/gc_pauses';

/**
 * Requests the device holding `dir` has completed so far (/proc/diskstats: writes, and
 * flushes, which a write with O_DSYNC costs where the disk has no FUA), or null where
 * that file or the device cannot be found.
 */
function diskCounts(dir: string): { writes: number; flushes: number } | null {
  try {
    const dev = fs.statSync(dir).dev;
    const major = (dev >> 8) & 0xfff;
    const minor = (dev & 0xff) | ((dev >> 12) & 0xfff00);
    for (const line of fs.readFileSync('/proc/diskstats', 'utf8').split('\n')) {
      const f = line.trim().split(/\s+/);
      // Flushes are counted from Linux 5.5 on (fields 16 and 17 after the name); NaN before.
      if (Number(f[0]) === major && Number(f[1]) === minor && f.length >= 14) return { writes: Number(f[7]), flushes: f.length >= 19 ? Number(f[18]) : NaN };
    }
  } catch {
    // not Linux, or no access: the bench prints a dash
  }
  return null;
}

async function main(): Promise<void> {
  const gcPauses = new GcPauseLog();
  const loopDelay = loopDelayMonitor();
  const [dir, durability, streams, groupCommit, zeroAhead] = process.argv.slice(2) as [string, string, string | undefined, string | undefined, string | undefined];
  const given = (v: string | undefined) => (v === undefined || v === '' ? undefined : Number(v));
  const broker = await Broker.open({ dir, durability: durability === 'none' ? 'none' : 'sync', groupCommitUs: given(groupCommit), zeroAheadBytes: given(zeroAhead) });
  const server = await BrokerServer.start({ broker, host: '127.0.0.1', port: 0, maxMessageBytes: 64 << 20, directStreams: streams !== 'grpc-js' });
  const raw = new grpc.Server({ 'grpc.max_receive_message_length': 64 << 20, 'grpc.enable_channelz': 0 }) // as the broker's server;
  const id = (b: Buffer) => b;
  raw.addService(
    {
      echo: { path: '/bench.Raw/Stream', requestStream: true, responseStream: true, requestSerialize: id, requestDeserialize: id, responseSerialize: id, responseDeserialize: id },
      unary: { path: '/bench.Raw/Unary', requestStream: false, responseStream: false, requestSerialize: id, requestDeserialize: id, responseSerialize: id, responseDeserialize: id },
    },
    {
      echo: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
        // The ack echoes the message's first 16 bytes (latency probes put their
        // scheduled send time there).
        call.on('data', (m: Buffer) => call.write(m.subarray(0, 16)));
        call.on('end', () => call.end());
      },
      // The same answer to a unary call: the ceiling of one record per call.
      unary: (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) => cb(null, call.request.subarray(0, 16)),
    },
  );
  const rawPort = await new Promise<number>((resolve, reject) =>
    raw.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  // The same HTTP/2 windows and TCP_NODELAY the broker's server uses, so the ceiling
  // is measured with the same transport settings.
  const servers = (raw as unknown as { http2Servers?: Map<import('node:net').Server, unknown> }).http2Servers;
  for (const srv of servers?.keys() ?? []) {
    srv.on('connection', (sock: import('node:net').Socket) => sock.setNoDelay(true));
    srv.on('session', (session: import('node:http2').ServerHttp2Session) => {
      session.settings({ initialWindowSize: 16 << 20 });
      session.setLocalWindowSize(64 << 20);
    });
  }
  const tcp = net.createServer((sock) => {
    sock.setNoDelay(true);
    sock.on('data', (d) => sock.write(d));
    sock.on('error', () => sock.destroy());
  });
  const tcpPort = await listening(tcp);
  // Each request's first 16 bytes back, gRPC-framed; a chunk's answers in one write.
  // On /bench.Raw/DurableEcho the answers wait until the requests' bytes are durable.
  const durable = await durableLog(path.join(dir, 'durable-echo.bin'));
  const h2 = http2.createServer({ settings: { initialWindowSize: 16 << 20 } });
  h2.on('connection', (sock: net.Socket) => sock.setNoDelay(true));
  h2.on('session', (session) => session.on('error', () => undefined));
  h2.on('stream', (stream, headers) => {
    // The broker's write-cycle and append durations so far, and this process's GC pauses that began
    // in [from, to) (Unix ms), as JSON: the bench sets them against its end-to-end window.
    if (headers[':path'] === '/bench.Stats/Loop') {
      // The main thread's event-loop delay since the last ask (then reset): a stall of
      // the server's JavaScript shows here whatever caused it.
      stream.respond({ ':status': 200, 'content-type': 'application/json' });
      stream.end(JSON.stringify(loopDelay()));
      return;
    }
    if (headers[':path'] === '/bench.Stats/Writes') {
      stream.respond({ ':status': 200, 'content-type': 'application/json' });
      stream.end(JSON.stringify({ writes: broker.logWriteLatency, appends: broker.logAppendLatency, zeroed: broker.zeroAheadBytesWritten, disk: diskCounts(dir) }));
      return;
    }
    const stats = /^\/bench\.Stats\/Gc\?from=([\d.]+)&to=([\d.]+)$/.exec(String(headers[':path']));
    if (stats) {
      stream.respond({ ':status': 200, 'content-type': 'application/json' });
      stream.end(JSON.stringify(gcPauses.between(Number(stats[1]), Number(stats[2]))));
      return;
    }
    const frames = new GrpcFrameReader(64 << 20, { side: 'server' });
    const durableEcho = headers[':path'] === '/bench.Raw/DurableEcho';
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' });
    stream.on('data', (chunk: Buffer) => {
      let msgs: Buffer[];
      try {
        msgs = frames.push(chunk);
      } catch {
        return stream.close(http2.constants.NGHTTP2_PROTOCOL_ERROR);
      }
      if (msgs.length === 0) return;
      const out = Buffer.alloc(msgs.length * (GRPC_PREFIX_BYTES + 16));
      msgs.forEach((m, i) => {
        const at = i * (GRPC_PREFIX_BYTES + 16);
        out.writeUInt32BE(16, at + 1);
        m.copy(out, at + GRPC_PREFIX_BYTES, 0, 16);
      });
      if (durableEcho) durable.append(msgs, () => stream.destroyed || stream.write(out));
      else stream.write(out);
    });
    stream.on('end', () => stream.end());
    stream.on('error', () => undefined);
  });
  const h2Port = await listening(h2);
  process.stdout.write(`${JSON.stringify({ broker: server.port, raw: rawPort, tcp: tcpPort, h2: h2Port, ioBackend: broker.ioBackend })}\n`);
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    raw.forceShutdown();
    tcp.close();
    h2.close();
    void server.stop(1000).then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  // stdin is a pipe from the bench: its end means the bench is gone (killed, even
  // with SIGKILL), and a server left running would hold its ports and data dir.
  process.stdin.once('end', stop);
  process.stdin.resume();
}

/**
 * The smallest durable log plain Node can write: appends go to a file opened with
 * O_DSYNC through fs.write (libuv's thread pool), one write in flight, the next one
 * carrying everything that arrived meanwhile (group commit), each caller told when its
 * bytes are durable. The file is written full of zeros first, so appends overwrite
 * allocated blocks as the broker's preallocated segments do, and wraps at its end.
 * With node:http2 in front of it, it is the floor of a durable round trip on this host
 * (transport + disk + one thread hand-off each way), without any broker.
 */
async function durableLog(file: string): Promise<{ append(data: Buffer[], done: () => void): void }> {
  const size = 64 << 20;
  const zeros = Buffer.alloc(1 << 20);
  const fh = await fs.promises.open(file, fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_TRUNC, 0o600);
  for (let at = 0; at < size; at += zeros.length) await fh.write(zeros, 0, zeros.length, at);
  await fh.sync();
  await fh.close();
  const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_DSYNC);
  let pos = 0;
  let writing = false;
  let queued: Buffer[] = [];
  let waiting: Array<() => void> = [];
  const flush = (): void => {
    if (writing || queued.length === 0) return;
    let bytes = Buffer.concat(queued);
    if (bytes.length > size) bytes = bytes.subarray(bytes.length - size);
    if (pos + bytes.length > size) pos = 0;
    const done = waiting;
    queued = [];
    waiting = [];
    writing = true;
    fs.write(fd, bytes, 0, bytes.length, pos, (err) => {
      if (err) throw err; // a probe: a failing disk ends the bench
      pos += bytes.length;
      writing = false;
      for (const d of done) d();
      flush();
    });
  };
  return {
    append(data, done) {
      queued.push(...data);
      waiting.push(done);
      flush();
    },
  };
}

/** Listens on an ephemeral loopback port; resolves with it. */
function listening(server: net.Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port));
  });
}

main().catch((e) => {
  process.stderr.write(String((e as Error).stack));
  process.exit(1);
});
