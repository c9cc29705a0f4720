import { invalid, type UringmqError } from '../errors';

/**
 * The client's wait before retry number `attempt` (from 0) after a connection was lost
 * or refused: 100 ms doubling to a 5 s ceiling, the same for producers, consumers and
 * lookups, so one outage is waited out alike everywhere.
 */
export function reconnectDelayMs(attempt: number): number {
  return Math.min(100 * 2 ** Math.min(attempt, 6), 5000);
}

/**
 * The broker expelled a group member that stayed silent past its session timeout (its
 * connection stalled, its heartbeats held up): its membership was lost, not refused. A
 * consumer joins again, as after a lost connection; what it held unacked comes again.
 * The broker says so with its own code (the `uringmq-code` trailer SESSION_EXPIRED on a
 * FAILED_PRECONDITION status). Brokers of earlier releases, which a client may meet
 * during a rolling upgrade, send FAILED_PRECONDITION in the trailer too, and tell the
 * expiry by the message alone: that is still taken for one, or such a consumer ended
 * where it used to join again.
 */
export function sessionExpired(e: { code: string; message?: string }): boolean {
  return e.code === 'SESSION_EXPIRED' || (e.code === 'FAILED_PRECONDITION' && typeof e.message === 'string' && /missed its session timeout/.test(e.message));
}

/**
 * A refusal past a cap of the broker's (maxGroups: a new group's join or first commit),
 * which the server marks with the `uringmq-limit` trailer. RESOURCE_EXHAUSTED is
 * otherwise load that passes (too many streams or connections, a full write queue or
 * disk), retried; this one lasts until a group is deleted or expires, or the setting is
 * raised: a consumer that retried it never ended nor threw, and said why only to
 * onConnectionState. It ends the consumer instead, as it ends an embedded one.
 */
export function limitReached(e: { code: string; limit?: string }): boolean {
  return e.code === 'RESOURCE_EXHAUSTED' && e.limit !== undefined;
}

/**
 * A group consumer's connection to the server, for its onConnectionState option: lost
 * and retried (`reconnecting`, once per attempt: what failed, the attempt's number from
 * 1, and the wait before it), or back after one or more such attempts (`reconnected`).
 */
export type ConnectionEvent =
  | { state: 'reconnecting'; error: UringmqError; attempt: number; delayMs: number }
  | { state: 'reconnected'; attempts: number };

/**
 * Tells a consumer's onConnectionState; what it throws is not the consumer's to handle,
 * nor what an async one rejects with (unhandled, that rejection ended the process).
 */
export function tellConnectionState(cb: ((ev: ConnectionEvent) => unknown) | undefined, ev: ConnectionEvent): void {
  if (!cb) return;
  try {
    const r = cb(ev);
    if (r !== null && typeof r === 'object' && typeof (r as PromiseLike<unknown>).then === 'function') (r as PromiseLike<unknown>).then(undefined, () => undefined);
  } catch {
    // an observer's failure must not stop the reconnect
  }
}

/** Checks a consumer's onConnectionState option. */
export function checkConnectionStateOption(cb: unknown): void {
  if (cb !== undefined && typeof cb !== 'function') throw invalid('onConnectionState must be a function');
}
