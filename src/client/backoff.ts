/**
 * The client's wait before retry number `attempt` (from 0) after a connection was lost
 * or refused: 100 ms doubling to a 5 s ceiling, the same for producers, consumers and
 * lookups, so one outage is waited out alike everywhere.
 */
export function reconnectDelayMs(attempt: number): number {
  return Math.min(100 * 2 ** Math.min(attempt, 6), 5000);
}
