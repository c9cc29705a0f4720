/**
 * A one-line progress bar redrawn in place while stdout is a terminal; log lines
 * print above it. Off a terminal only the log lines are written.
 */
export class Progress {
  private line = '';
  private readonly tty: boolean;
  constructor(
    enabled: boolean,
    private readonly write: ((s: string) => void) | null,
  ) {
    this.tty = enabled && !!process.stdout.isTTY && write !== null;
  }

  /** fraction in [0, 1] or null (unknown length). */
  update(fraction: number | null, text: string): void {
    if (!this.tty) return;
    const width = 24;
    const bar = fraction === null ? '' : `[${'#'.repeat(Math.round(Math.min(1, Math.max(0, fraction)) * width)).padEnd(width, '.')}] ${Math.floor(Math.min(1, fraction) * 100)}% `;
    this.line = `${bar}${text}`;
    const cols = process.stdout.columns || 120;
    this.write!(`\r\x1b[2K${this.line.slice(0, cols - 1)}`);
  }

  log(s: string): void {
    if (!this.write) return;
    if (this.tty) this.write(`\r\x1b[2K${s}\n${this.line.slice(0, (process.stdout.columns || 120) - 1)}`);
    else this.write(`${s}\n`);
  }

  done(): void {
    if (this.tty && this.line) this.write!('\r\x1b[2K');
    this.line = '';
  }
}
