/**
 * Where `uringmq serve` writes its pino logs: stdout through sonic-boom, as pino's
 * default destination does, with two differences that matter to a broker whose log
 * reader may stall or go away:
 * - Bounded: past 16 MiB waiting for a slow reader, new lines are dropped (counted,
 *   and said once the reader catches up) rather than held in memory without end.
 * - No synchronous flush at exit. pino's default registers one, and sonic-boom's
 *   flushSync retries a write that failed with EPIPE every 100 ms for ever: a broker
 *   whose log reader had gone (`| head`, a dead log shipper) hung at its exit, with
 *   its main thread asleep in Atomics.wait and every later signal unanswered.
 *   An orderly stop drains the logs asynchronously instead, for at most a second
 *   (close()); a crash may lose its last lines, never hang.
 * Once the reader is gone (EPIPE) logging stops for good; the broker goes on.
 */
import SonicBoom from 'sonic-boom';

const MAX_PENDING = 16 << 20;

export interface LogDestination {
  readonly stream: SonicBoom;
  /** Lines dropped because the reader was too slow or gone. */
  readonly dropped: number;
  /** Writes what is pending, for at most `timeoutMs`, and closes the descriptor. */
  close(timeoutMs?: number): Promise<void>;
}

export function logDestination(fd = 1, maxPending = MAX_PENDING): LogDestination {
  const stream = new SonicBoom({ fd, sync: false, maxLength: maxPending });
  let dropped = 0;
  let droppedSaid = 0;
  let gone = false;
  stream.on('drop', () => dropped++);
  // EPIPE: nobody reads any more. Anything else (EBADF, EIO): no better. Either way
  // the lines have nowhere to go (the write below drops them), and a broker must not
  // stop for its logs.
  stream.on('error', () => (gone = true));
  // Said in the log itself once lines get through again: a 'drop' cannot be logged
  // when it happens (the line saying so would be dropped too). A notice that is
  // dropped itself is neither counted nor taken as said.
  const origWrite = stream.write.bind(stream);
  stream.write = (line: string) => {
    // Ended by close() (a second signal may still log): sonic-boom would throw.
    if ((stream as unknown as { destroyed: boolean }).destroyed || gone) {
      dropped++;
      return true;
    }
    if (dropped > droppedSaid) {
      const before = dropped;
      origWrite(`${JSON.stringify({ level: 40, time: Date.now(), service: 'uringmq', dropped: before - droppedSaid, msg: 'log lines dropped: the log reader was too slow' })}\n`);
      if (dropped === before) droppedSaid = before;
      else dropped = before; // the notice did not fit: say it with the next line
    }
    return origWrite(line);
  };
  return {
    stream,
    get dropped() {
      return dropped;
    },
    close(timeoutMs = 1000) {
      if (gone) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const t = setTimeout(resolve, timeoutMs);
        const done = () => {
          clearTimeout(t);
          resolve();
        };
        stream.once('close', done);
        stream.once('error', done);
        stream.end();
      });
    },
  };
}
