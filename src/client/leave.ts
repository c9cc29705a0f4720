/**
 * How long a consumer's close() waits at most for the server to end the group member's
 * Subscribe stream it half-closed. A live server ends it within a round trip; one that
 * does not answer is given up on sooner, at its first missed liveness probe (about a
 * second: a direct stream's ping, a grpc-js stream's unary probe, see boundGrpcEnd).
 * This bounds the wait on a server that answers the probes but does not end the stream.
 * A fetch consumer's close() keeps to it too, for its final commit and its leave
 * together (see FetchConsumer.closeNow).
 */
export const LEAVE_WAIT_MS = 5_000;

/** A group member's Subscribe stream, either transport's (a grpc-js one through boundGrpcEnd). */
export interface MemberStream {
  end(): void;
  /** 'unanswered': the server did not answer a liveness probe in time (see DirectStream.end). */
  on(event: 'end' | 'unanswered', listener: () => void): unknown;
  on(event: 'error', listener: (e: unknown) => void): unknown;
}

/**
 * Half-closes a member's Subscribe stream and resolves once the server has ended it.
 * The server ends the call only once the member has left (its unacked messages
 * released, the rebalance begun): resolved at the half-close, close() let a
 * deleteGroup right after it find the member still there. An error ends the wait too
 * (the connection lost: the server drops the member itself), and so do a missed
 * liveness probe ('unanswered') and `boundMs`. The stream is not cancelled then, only
 * no longer waited for: it ends as its transport ends it (see DirectStream.end and
 * boundGrpcEnd); a cancel here, at a timer that fired late after the event loop was
 * held, could drop the final acks on their way.
 */
export function endAndAwaitLeave(s: MemberStream, boundMs = LEAVE_WAIT_MS): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, boundMs);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    s.on('end', done);
    s.on('error', done);
    s.on('unanswered', done);
    try {
      s.end();
    } catch {
      done(); // its connection is gone already: so is the member, or it soon will be
    }
  });
}

/** What boundGrpcEnd needs of a grpc-js call's stream (grpc.ClientDuplexStream). */
export interface GrpcCallStream {
  end(): void;
  cancel(): void;
  readonly writableFinished: boolean;
  on(event: 'end' | 'finish', listener: () => void): unknown;
  on(event: 'error', listener: (e: unknown) => void): unknown;
}

/** The liveness of a grpc-js stream's server, as seen on the stream's channel. */
export interface GrpcProbe {
  /**
   * A unary call on the channel: true once the server answered it (whatever the
   * answer), false if it did not within `timeoutMs` or could not be made. `signal`
   * cancels it (what it resolves to then does not matter).
   */
  answered(timeoutMs: number, signal?: AbortSignal): Promise<boolean>;
  /** How long one probe may go unanswered: PROBE_MS, or the keepalive timeout if smaller. */
  readonly timeoutMs: number;
}

/**
 * A grpc-js stream's end(), bounded as a direct stream's (DirectStream.end). grpc-js has
 * no ping for one call, and a call it holds open keeps its connection ref'd: half-closed
 * toward a server that answered nothing (stopped, behind a black hole), a consumer's
 * close() waited out LEAVE_WAIT_MS, and its process, done, was held some 30 s more. So,
 * once grpc-js has taken what was written ('finish'), a unary call on the same channel
 * probes the server, every probe timeout while it answers. The first left unanswered
 * is reported ('unanswered') and the call is cancelled: the final acks and the
 * half-close were written on the same connection a probe timeout before, so a server
 * merely slow still reads them before the reset, and one gone holds nothing. The
 * server ending the stream (or its error) ends the probing; so does `boundMs` after
 * end() (LEAVE_WAIT_MS for a member: then cancelled as well, or the process would be
 * held for a server that answers probes but never ends the stream).
 *
 * With `probe` null (nothing waits on what the server says: a producer's stream, whose
 * batches were all answered) the call is cancelled if the server has not ended it one
 * probe timeout after it went out.
 */
export function boundGrpcEnd(call: GrpcCallStream, probe: GrpcProbe | null, boundMs = LEAVE_WAIT_MS, probeTimeoutMs = probe?.timeoutMs ?? 0): MemberStream {
  const listeners = { end: [] as Array<() => void>, unanswered: [] as Array<() => void>, error: [] as Array<(e: unknown) => void> };
  let over = false;
  const timers = new Set<NodeJS.Timeout>();
  const after = (ms: number, fn: () => void) => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    t.unref(); // the call holds the process while it is open; these only end it
    timers.add(t);
  };
  const stop = () => {
    over = true;
    for (const t of timers) clearTimeout(t);
    timers.clear();
  };
  call.on('end', () => {
    stop();
    for (const l of listeners.end) l();
  });
  call.on('error', (e) => {
    stop();
    for (const l of listeners.error) l(e);
  });
  const giveUp = (unanswered: boolean) => {
    if (over) return;
    stop();
    if (unanswered) for (const l of listeners.unanswered) l();
    // A turn later: a timer that fired late (the event loop held since end()) runs
    // before the connection's pending writes are flushed, and a reset now would drop
    // the final acks still queued behind it. (Its 'error', CANCELLED, follows.)
    setImmediate(() => call.cancel());
  };
  const probing = async () => {
    while (!over) {
      const answered = await probe!.answered(probeTimeoutMs);
      if (over) return;
      if (!answered) return giveUp(true);
      await new Promise<void>((resolve) => after(probeTimeoutMs, resolve));
    }
  };
  // Probed (or timed) from when grpc-js has taken the writes: a client whose own event
  // loop was held after close() does not count that against the server.
  const flushed = () => {
    if (over) return;
    if (probe === null) after(probeTimeoutMs, () => giveUp(false));
    else void probing();
  };
  return {
    end: () => {
      call.end();
      // At most boundMs however it goes (writes that never go out included: a server
      // that reads nothing leaves the connection's window shut).
      after(boundMs, () => giveUp(false));
      if (call.writableFinished) flushed();
      else call.on('finish', flushed);
    },
    on: (event: 'end' | 'unanswered' | 'error', listener: (e?: unknown) => void) => {
      (listeners[event] as Array<(e?: unknown) => void>).push(listener);
      return undefined;
    },
  } as MemberStream;
}
