/**
 * Command-line flags of the bench scripts: `--name value` and bare `--name`. By hand
 * rather than commander: a few optional flags per script, documented in each
 * script's header, with nothing to validate or print help for.
 */
import * as path from 'node:path';

const argv = process.argv.slice(2);

/** The value after `--name`, or `dflt` when it is absent. */
export function arg(name: string, dflt: string): string {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] ? argv[i + 1]! : dflt;
}

/** Whether the bare flag `--name` was given. */
export const flag = (name: string): boolean => argv.includes(`--${name}`);

/**
 * Node arguments that run the bench script `name` (a sibling of this file, without
 * extension) as a child: compiled (`npm run bench:*` builds bench/ and src/ into dist/
 * and runs the JavaScript, so the numbers are those of the code that ships), or from
 * TypeScript with tsx's loader when this script itself runs under tsx. tsx compiles
 * with esbuild's keepNames, which adds an Object.defineProperty call for every closure
 * created: 2.5–4.5% of the broker's and the client's CPU in profiles.
 */
export function benchChild(name: string): string[] {
  const ext = path.extname(__filename);
  return [...(ext === '.ts' ? ['--require', 'tsx/cjs'] : []), path.join(__dirname, `${name}${ext}`)];
}
