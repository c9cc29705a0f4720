/**
 * How a bench process starts a script of this repository as a child: the compiled .js
 * when it runs compiled (`npm run bench*`, the installed CLI), or the .ts with tsx's
 * loader when it runs from the TypeScript sources (tsx, mocha). src/ and bench/ are
 * compiled together, so this file's own extension tells which.
 */
import * as path from 'node:path';

/** Node arguments that run `script` (a path without its extension). */
export function nodeScriptArgs(script: string): string[] {
  const ext = path.extname(__filename);
  return [...(ext === '.ts' ? ['--require', require.resolve('tsx/cjs')] : []), `${script}${ext}`];
}
