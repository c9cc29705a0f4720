/**
 * Where a power cut may have cut a topic's partitions: <dir>/topics/<name>/cuts.json.
 *
 * With durability other than `sync`, what a run appended and served is not all on disk
 * until a sync, so a power cut can take a partition's unsynced tail. Messages written
 * after the restart then take the lost offsets again. State written before the cut that
 * names offsets past the new end (a consumer group's committed, delivered and acked
 * offsets) would make the group skip those new messages. The log cannot tell a lost
 * tail from a clean end, but it knows when one may have been lost: the open after a
 * run without `sync` that did not stop cleanly. That open records each partition's end
 * here, with the run's number (state.json); group state carries the run that wrote it,
 * and on load anything past the lowest end recorded by a later run is taken as never
 * delivered (delivered again: at least once).
 *
 * The file holds at most MAX_CUTS entries: past that, the two oldest merge into one
 * under the newer run with the lower of their ends, so state written between the two
 * runs is cut more than it need be (more redelivered, nothing skipped).
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { UringmqError } from '../errors';
import { writeFileDurable } from './topic_store';

export const CUTS_FILE = 'cuts.json';
export const MAX_CUTS = 64;

/** The partitions' log ends at the open of `run`, which followed a stop that may have lost unsynced tails. */
export interface LogCut {
  run: number;
  ends: number[];
}

/** A topic's cuts, oldest first; [] when it has none. IO_ERROR when the file cannot be read or is not one this module wrote. */
export async function readLogCuts(topicDir: string, partitions: number): Promise<LogCut[]> {
  const file = path.join(topicDir, CUTS_FILE);
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new UringmqError('IO_ERROR', `cannot read ${file}: ${(e as Error).message}`);
  }
  let cuts: unknown;
  try {
    cuts = (JSON.parse(text) as { cuts?: unknown }).cuts;
  } catch (e) {
    throw new UringmqError('IO_ERROR', `corrupt ${file}: ${(e as Error).message}`);
  }
  const valid =
    Array.isArray(cuts) &&
    cuts.every(
      (c: unknown) =>
        c !== null &&
        typeof c === 'object' &&
        Number.isSafeInteger((c as LogCut).run) &&
        Array.isArray((c as LogCut).ends) &&
        (c as LogCut).ends.length === partitions &&
        (c as LogCut).ends.every((e) => Number.isSafeInteger(e) && e >= 0),
    );
  if (!valid) throw new UringmqError('IO_ERROR', `corrupt ${file}: not a list of { run, ends } of ${partitions} partitions`);
  return cuts as LogCut[];
}

/** The highest run a topic's cuts name; 0 when it has none or they cannot be read (the topic's open reports that). */
export async function highestCutRun(topicDir: string): Promise<number> {
  try {
    const cuts = (JSON.parse(await fs.readFile(path.join(topicDir, CUTS_FILE), 'utf8')) as { cuts?: Array<{ run?: unknown }> }).cuts ?? [];
    return Math.max(0, ...cuts.map((c) => (typeof c.run === 'number' ? c.run : 0)));
  } catch {
    return 0;
  }
}

/** Adds the cut of `run` (its ends at open) to `cuts` and writes the file durably; returns the new list. */
export async function recordLogCut(topicDir: string, cuts: readonly LogCut[], run: number, ends: number[]): Promise<LogCut[]> {
  const out = [...cuts, { run, ends }];
  while (out.length > MAX_CUTS) {
    const [a, b] = out.splice(0, 2) as [LogCut, LogCut];
    out.unshift({ run: b.run, ends: a.ends.map((e, i) => Math.min(e, b.ends[i]!)) });
  }
  await writeFileDurable(path.join(topicDir, CUTS_FILE), JSON.stringify({ cuts: out }));
  return out;
}

/**
 * Per partition, the offset past which state written in run `writtenIn` may name
 * messages a power cut took since (Infinity: none). State of the current run is never
 * cut; state of a run the counter does not know (state.json was lost) is cut by all.
 */
export function cutsAfter(cuts: readonly LogCut[], partitions: number, writtenIn: number, currentRun: number): number[] {
  const bound = new Array<number>(partitions).fill(Infinity);
  if (writtenIn === currentRun) return bound;
  for (const c of cuts) {
    if (writtenIn < currentRun && c.run <= writtenIn) continue;
    for (let i = 0; i < partitions; i++) bound[i] = Math.min(bound[i]!, c.ends[i]!);
  }
  return bound;
}
