/**
 * A token bucket: `rate` tokens per second, at most `burst` saved up. One token is
 * one message. Written by hand because it is ten lines and sits on the delivery
 * path; the npm ones are built around timers or promises per take.
 */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private rate: number,
    private burst: number,
    now = performance.now(),
  ) {
    this.tokens = burst;
    this.last = now;
  }

  /** Infinity means unlimited: take() grants everything asked for. */
  get ratePerSec(): number {
    return this.rate;
  }

  setRate(rate: number, burst: number, now = performance.now()): void {
    this.refill(now);
    this.rate = rate;
    this.burst = burst;
    if (this.tokens > burst) this.tokens = burst;
  }

  /** Tokens available now (whole messages). */
  available(now = performance.now()): number {
    if (this.rate === Infinity) return Infinity;
    this.refill(now);
    return Math.floor(this.tokens);
  }

  /** Takes n tokens (the caller checked available()). */
  take(n: number, now = performance.now()): void {
    if (this.rate === Infinity) return;
    this.refill(now);
    this.tokens -= n;
  }

  /** Milliseconds until `n` tokens are there (0 when they are). */
  msUntil(n: number, now = performance.now()): number {
    if (this.rate === Infinity) return 0;
    this.refill(now);
    const missing = Math.min(n, this.burst) - this.tokens;
    return missing <= 0 ? 0 : Math.ceil((missing / this.rate) * 1000);
  }

  private refill(now: number): void {
    const dt = now - this.last;
    this.last = now;
    if (dt > 0) this.tokens = Math.min(this.burst, this.tokens + (this.rate * dt) / 1000);
  }
}
