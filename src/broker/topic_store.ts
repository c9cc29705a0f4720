/**
 * Topic metadata on disk: <dir>/topics/<name>/topic.json, written atomically
 * (temp file, fsync, rename, fsync dir). A topic directory without topic.json is a
 * create that crashed half-way and is removed on open.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { UringmqError } from '../errors';
import { validateTopicName } from './validate';

export interface TopicConfig {
  name: string;
  partitions: number;
  segmentBytes: number;
  retention: { maxBytes?: number; maxAgeMs?: number };
  createdAt: number;
}

export async function fsyncDir(dir: string): Promise<void> {
  const fh = await fs.open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * mkdir -p that reports why a directory could not be made: Node's recursive mkdir
 * answers ENOENT for a parent that exists when the real cause is another (ENOSPC on a
 * full disk), and that cause decides the error code a caller gives (writeError).
 */
export async function makeDir(dir: string): Promise<void> {
  try {
    await fs.mkdir(dir, { recursive: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    await makeDir(path.dirname(dir));
    await fs.mkdir(dir).catch((e2: NodeJS.ErrnoException) => {
      if (e2.code !== 'EEXIST') throw e2;
    });
  }
}

let tmpSeq = 0;

/** The names writeFileDurable gives its temp files (never a topic's, group's or partition's file: those have suffixes or are digits). */
const WRITE_TEMP_RE = /^\.tmp-\d+-\d+$/;

/**
 * Removes the temp files of writes a crash interrupted (writeFileDurable's, in `dir`):
 * called at open on every directory it writes in, which only this process holds then.
 * What cannot be listed or removed is left (a later open tries again).
 */
export async function removeWriteTemps(dir: string): Promise<void> {
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  for (const f of names) if (WRITE_TEMP_RE.test(f)) await fs.rm(path.join(dir, f), { force: true, recursive: true }).catch(() => undefined);
}

export async function writeFileDurable(file: string, data: string | Uint8Array): Promise<void> {
  // A name of its own per write: two writes of one file never share a temp file.
  // Short, in the same directory: `${file}.tmp` could pass the 255-byte name limit.
  const tmp = path.join(path.dirname(file), `.tmp-${process.pid}-${++tmpSeq}`);
  try {
    const fh = await fs.open(tmp, 'w', 0o644);
    try {
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fs.rename(tmp, file);
  } catch (e) {
    await fs.rm(tmp, { force: true }).catch(() => undefined);
    throw e;
  }
  await fsyncDir(path.dirname(file));
}

/** The most partitions a topic has (createTopic's limit; a topic.json naming more is damaged). */
export const MAX_PARTITIONS = 4096;
/** A segment's size bounds (createTopic's limits). */
export const MIN_SEGMENT_BYTES = 4096;
export const MAX_SEGMENT_BYTES = 1 << 30;

/**
 * What is wrong with a topic.json's fields (null: nothing), held to what createTopic
 * writes: a value it never takes (edited by hand, or damaged) would otherwise reach the
 * partitions' open, which fails part-way with an error that names no file (or, for a
 * huge partition count, makes thousands of partition directories first), or be taken
 * (a negative retention) and reported as the topic's setting. createdAt is not checked:
 * one that is not a positive safe integer stands for none (topicIncarnation), and the
 * broker gives the topic one when it opens it.
 */
function configProblem(cfg: unknown): string | null {
  if (cfg === null || typeof cfg !== 'object' || Array.isArray(cfg)) return 'not a JSON object';
  const c = cfg as Record<string, unknown>;
  try {
    validateTopicName(c.name);
  } catch {
    return `name ${JSON.stringify(c.name)} is not a topic name`;
  }
  if (!Number.isSafeInteger(c.partitions) || (c.partitions as number) < 1 || (c.partitions as number) > MAX_PARTITIONS)
    return `partitions ${JSON.stringify(c.partitions)} is not an integer from 1 to ${MAX_PARTITIONS}`;
  if (!Number.isSafeInteger(c.segmentBytes) || (c.segmentBytes as number) < MIN_SEGMENT_BYTES || (c.segmentBytes as number) > MAX_SEGMENT_BYTES)
    return `segmentBytes ${JSON.stringify(c.segmentBytes)} is not an integer from ${MIN_SEGMENT_BYTES} to ${MAX_SEGMENT_BYTES}`;
  const r = c.retention;
  if (r === null || typeof r !== 'object' || Array.isArray(r)) return `retention ${JSON.stringify(r)} is not an object`;
  for (const k of ['maxBytes', 'maxAgeMs'] as const) {
    const v = (r as Record<string, unknown>)[k];
    if (v !== undefined && !(Number.isSafeInteger(v) && (v as number) >= 0)) return `retention.${k} ${JSON.stringify(v)} is not a non-negative integer`;
  }
  return null;
}

export async function readTopicConfig(topicDir: string): Promise<TopicConfig | null> {
  let text: string;
  try {
    text = await fs.readFile(path.join(topicDir, 'topic.json'), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new UringmqError('IO_ERROR', `cannot read ${path.join(topicDir, 'topic.json')}: ${(e as Error).message}`);
  }
  try {
    const cfg = JSON.parse(text) as TopicConfig;
    const problem = configProblem(cfg);
    if (problem !== null) throw new Error(problem);
    return cfg;
  } catch (e) {
    // Not guessed from the partition directories: retention and segment size live only
    // here, and a wrong guess would delete data. The message says how to go on.
    throw new UringmqError(
      'IO_ERROR',
      `corrupt topic metadata ${path.join(topicDir, 'topic.json')}: ${(e as Error).message}. Restore the file (JSON: ` +
        `{"name","partitions","segmentBytes","retention":{"maxBytes"?,"maxAgeMs"?},"createdAt"}), or move ${topicDir} ` +
        `out of the data directory to open the broker without that topic`,
    );
  }
}
