/**
 * How long a consumer's close() waits at most for the server to end the group member's
 * Subscribe stream it half-closed. A live server ends it within a round trip; this
 * bounds the wait on one gone silent that nothing has noticed yet (a direct stream's
 * ping probe notices in about a second, a grpc-js stream only by its keepalive).
 */
export const LEAVE_WAIT_MS = 5_000;

/** A group member's Subscribe stream, either transport's. */
export interface MemberStream {
  end(): void;
  on(event: 'end', listener: () => void): unknown;
  on(event: 'error', listener: (e: unknown) => void): unknown;
}

/**
 * Half-closes a member's Subscribe stream and resolves once the server has ended it.
 * The server ends the call only once the member has left (its unacked messages
 * released, the rebalance begun): resolved at the half-close, close() let a
 * deleteGroup right after it find the member still there. An error ends the wait too
 * (the connection lost: the server drops the member itself), and so does `boundMs`.
 * The stream is not cancelled then, only no longer waited for: it ends as it did
 * before close() waited (a direct stream gives up on a silent server by itself, and a
 * cancel at a timer that fired late, after the event loop was held, could drop the
 * final acks on their way).
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
    try {
      s.end();
    } catch {
      done(); // its connection is gone already: so is the member, or it soon will be
    }
  });
}
