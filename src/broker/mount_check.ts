/**
 * Whether the file system under the data directory can make a write durable at all.
 *
 * Mounted `nobarrier` (or `barrier=0`), ext4 and btrfs send no cache flush to the disk:
 * every fdatasync, RWF_DSYNC write and flush the log makes returns once the disk has the
 * data in its volatile write cache, and a power cut loses what the broker acknowledged
 * as durable. Nothing in the write path can tell; the mount table can. Read once at
 * open, from /proc/self/mountinfo (proc(5)) and the device's queue/write_cache in sysfs.
 */
import * as fs from 'node:fs';

export interface MountEntry {
  majorMinor: string;
  mountPoint: string;
  mountOptions: string;
  fsType: string;
  source: string;
  superOptions: string;
}

/** mountinfo escapes space, tab, newline and backslash as octal (\040 …). */
const unescape = (s: string): string => s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));

/** The entries of a /proc/<pid>/mountinfo text; lines it cannot read are skipped. */
export function parseMountInfo(text: string): MountEntry[] {
  const out: MountEntry[] = [];
  for (const line of text.split('\n')) {
    const f = line.split(' ');
    const sep = f.indexOf('-', 6); // after the optional fields, which end at a lone "-"
    if (f.length < 10 || sep < 0 || sep + 3 >= f.length) continue;
    out.push({
      majorMinor: f[2]!,
      mountPoint: unescape(f[4]!),
      mountOptions: f[5]!,
      fsType: f[sep + 1]!,
      source: unescape(f[sep + 2]!),
      superOptions: f[sep + 3]!,
    });
  }
  return out;
}

/** "major:minor" of a stat's st_dev, as glibc's gnu_dev_major/minor split it. */
export function majorMinor(dev: bigint): string {
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & 0xfffff000n);
  const minor = (dev & 0xffn) | ((dev >> 12n) & 0xffffff00n);
  return `${major}:${minor}`;
}

const NO_BARRIER = new Set(['nobarrier', 'barrier=0']);

/**
 * Why writes to the file system of device `dev` cannot be durable, or null.
 * `writeCache` reads the device's cache mode ("write back", "write through"), or null
 * when unknown: a disk without a volatile cache loses nothing to missing flushes.
 */
export function barrierProblemIn(entries: readonly MountEntry[], dev: string, dir: string, writeCache: (dev: string) => string | null): string | null {
  for (const e of entries) {
    if (e.majorMinor !== dev) continue;
    const opt = [...e.superOptions.split(','), ...e.mountOptions.split(',')].find((o) => NO_BARRIER.has(o));
    if (opt === undefined) continue;
    const cache = writeCache(dev);
    if (cache === 'write through') return null;
    return (
      `the file system of ${dir} (${e.fsType} on ${e.source}, mounted at ${e.mountPoint}) is mounted ${opt}: it sends the disk no cache flushes, ` +
      `and the disk's write cache is ${cache === null ? 'of unknown mode' : `"${cache}"`}, so what the broker acknowledges as durable can be lost to a power cut. ` +
      `Remount it with barriers (mount -o remount,barrier ${e.mountPoint}).`
    );
  }
  return null;
}

function readWriteCache(dev: string): string | null {
  // A partition has no queue of its own: its disk's is one level up.
  for (const p of [`/sys/dev/block/${dev}/queue/write_cache`, `/sys/dev/block/${dev}/../queue/write_cache`]) {
    try {
      return fs.readFileSync(p, 'utf8').trim();
    } catch {
      // not this one
    }
  }
  return null;
}

/** barrierProblemIn for `dir` on this machine; null where the mount table cannot be read. */
export function barrierProblem(dir: string): string | null {
  let text: string;
  let dev: string;
  try {
    text = fs.readFileSync('/proc/self/mountinfo', 'utf8');
    dev = majorMinor(fs.statSync(dir, { bigint: true }).dev);
  } catch {
    return null; // no /proc: nothing to tell from
  }
  return barrierProblemIn(parseMountInfo(text), dev, dir, readWriteCache);
}
