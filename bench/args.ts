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

/**
 * For a script that declares its flags: `--help` prints `usage` and exits 0; a flag
 * not declared (a typo, whose default would run instead), a declared one missing its
 * value, or a stray word exits 2 saying which, before anything runs.
 */
export function checkFlags(usage: string, withValue: readonly string[], bare: readonly string[]): void {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const name = a.startsWith('--') ? a.slice(2) : null;
    let problem: string | null = null;
    if (name !== null && withValue.includes(name)) {
      if (argv[i + 1] === undefined || argv[i + 1]!.startsWith('--')) problem = `${a} needs a value`;
      i++;
    } else if (name === null || !bare.includes(name)) problem = name === null ? `unexpected argument ${JSON.stringify(a)}` : `unknown flag ${a}`;
    if (problem) usageError(usage, problem);
  }
}

/** Exits 2 with `problem` and the usage. */
export function usageError(usage: string, problem: string): never {
  process.stderr.write(`${problem}\n${usage}\n`);
  process.exit(2);
}
