/**
 * Command-line flags of the bench scripts: `--name value` and bare `--name`. By hand
 * rather than commander: a few optional flags per script, documented in each
 * script's header, with nothing to validate or print help for.
 */
const argv = process.argv.slice(2);

/** The value after `--name`, or `dflt` when it is absent. */
export function arg(name: string, dflt: string): string {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] ? argv[i + 1]! : dflt;
}

/** Whether the bare flag `--name` was given. */
export const flag = (name: string): boolean => argv.includes(`--${name}`);
