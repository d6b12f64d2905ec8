/**
 * What may have changed in a worktree since a warm engine last looked at it, so that a restore
 * or a forced checkout need not lstat every tracked file again (git's fsmonitor idea, with
 * inotify and no daemon). Only a warm engine keeps one: a one-shot checkout would pay for
 * arming the watches and never use them.
 *
 * The rule: a checkout that compared every index entry with the worktree (restore, force,
 * fresh) records, per entry of the index it wrote, whether the file matched (or was written),
 * next to that index file's identity. The next call trusts that record for an entry only when
 * the index is still that file, the kernel's event queue did not overflow, the entry's
 * directory and all above it were watched before the record's probe, and no event names the
 * entry's path or a directory above it. Everything else is probed as usual. Watches are armed
 * after the events are read and before the probe, so a change between the two is seen by the
 * probe, and a change after it is in the queue for the next call.
 *
 * What inotify cannot see is not covered: a file changed through a hard link in a directory
 * that is not watched, writes through a shared memory mapping, and changes made on another
 * machine (network filesystems, FUSE) — those filesystems get no watch (see resources.ts).
 * `createEngine({ watch: false })` turns it off.
 */
import { readFileSync, statSync } from 'node:fs';
import { constants } from 'node:os';
import { STAT_PRESENT, STAT_WORDS, type Addon, type NativeWatch } from '../addon.js';
import { fileIdentity } from '../index/read.js';
import { hasStatData, sameStatData } from '../index/write.js';
import { pathList } from '../worktree.js';
import type { EntryList } from './entries.js';
import { dirsOf } from './rows.js';

const { ENOENT, ENOTDIR, ELOOP } = constants.errno;
/** What add() says where there is no real directory to watch (nothing, a file, a link). */
const NOT_A_DIRECTORY = new Set([ENOENT, ENOTDIR, ELOOP]);

/** The index file's identity: a rename over it changes the inode, any write its ctime. */
export function indexIdentity(path: string): string | null {
  const st = statSync(path, { bigint: true, throwIfNoEntry: false });
  return st ? fileIdentity(st) : null;
}

/**
 * Every leading directory of the entries' paths, each once, latin1, with '' for the root:
 * found natively (rows.ts dirsOf), a string made once per directory. A loop over a million
 * paths in JavaScript took ~235 ms of each warm call at that scale.
 */
function leadingDirs(entries: EntryList): string[] {
  return ['', ...dirsOf(entries, null)];
}

/** The first entry whose path is not below `key` in git's (byte) order. */
function lowerBound(entries: EntryList, key: Buffer): number {
  let lo = 0;
  let hi = entries.count;
  const { paths, starts } = entries;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (paths.compare(key, 0, key.length, starts[mid]!, starts[mid + 1]! - 1) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Clears the marks of the entry at `path` (all its stages), and of everything below it. */
function unmark(entries: EntryList, marks: Uint8Array, path: string, andBelow: boolean): void {
  if (path === '') {
    marks.fill(0);
    return;
  }
  const key = Buffer.from(path, 'latin1');
  const { paths, starts } = entries;
  for (let k = lowerBound(entries, key); k < entries.count; k++) {
    if (paths.compare(key, 0, key.length, starts[k]!, starts[k + 1]! - 1) !== 0) break;
    marks[k] = 0;
  }
  if (!andBelow) return;
  // Below the path: from `path/` up to (not including) `path0`, '0' being the byte after '/'.
  const from = lowerBound(entries, Buffer.from(`${path}/`, 'latin1'));
  const to = lowerBound(entries, Buffer.from(`${path}0`, 'latin1'));
  marks.fill(0, from, Math.max(from, to));
}

/** Events kept for a worktree between its calls; beyond, they are dropped and it starts afresh. */
const MAX_INBOX = 200_000;

/**
 * How often the hub reads the kernel's queue while it holds watches. The queue holds
 * fs.inotify.max_queued_events (16,384 by default) and then drops events; a 1% switch of a
 * million files makes ~60,000 of its own, and a queue that overflowed costs every watch being
 * armed again. Read every 20 ms, the queue takes ~800,000 events a second.
 */
const PUMP_MS = 20;

/** The files a call wrote (positions in the index it wrote) and the stat data its writers took. */
export interface OwnWrites {
  readonly positions: readonly number[];
  /** STAT_WORDS per entry of the index written. */
  readonly stats: Uint32Array;
  /** Threads for the lstats. */
  readonly threads: number;
}

/** What a record keeps of OwnWrites: the positions with stat data, and those words, copied. */
interface KeptWrites {
  readonly positions: Int32Array;
  /** STAT_WORDS per kept position. */
  readonly stats: Uint32Array;
  readonly threads: number;
}

/**
 * Beyond this many files written, a record keeps none of them (40 bytes each, held between
 * calls): a call that wrote that much is a fresh or forced checkout, whose directories were
 * mostly made after the watches were armed and are looked at again anyway.
 */
const MAX_KEPT_WRITES = 200_000;

function keepOwn(own: OwnWrites | null): KeptWrites | null {
  if (own === null || own.positions.length > MAX_KEPT_WRITES) return null;
  const { stats } = own;
  const kept = own.positions.filter((k) => hasStatData(stats, k));
  const words = new Uint32Array(kept.length * STAT_WORDS);
  kept.forEach((k, j) =>
    words.set(stats.subarray(k * STAT_WORDS, (k + 1) * STAT_WORDS), j * STAT_WORDS),
  );
  return { positions: Int32Array.from(kept), stats: words, threads: own.threads };
}

/** One event of a worktree's, as the hub hands it over. */
interface WatchEvent {
  dir: string;
  mask: number;
  name: string;
}

/**
 * The engine's one inotify instance (closing an instance that holds watches costs
 * milliseconds, an RCU grace period, so worktrees share it): reads every event and hands each
 * to the worktree watch its descriptor belongs to.
 */
export class WatchHub {
  private native: NativeWatch | null;
  private readonly owners = new Map<number, { watch: WorktreeWatch; dir: string }>();
  private readonly watches = new Set<WorktreeWatch>();
  /** Reads the queue between reads of a call (unref'd: it keeps no process alive). */
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(readonly addon: Addon) {
    try {
      this.native = new addon.Watch();
    } catch {
      this.native = null; // no inotify here (or no descriptor left): every call probes
    }
  }

  get usable(): boolean {
    return this.native !== null;
  }

  /** A watch descriptor for `dir` of `watch`'s worktree, or -errno. */
  add(watch: WorktreeWatch, dir: string): number {
    if (this.native === null) return -constants.errno.EBADF;
    this.watches.add(watch);
    const wd = this.native.add(watch.root, Buffer.from(dir, 'latin1'));
    if (wd >= 0) this.owners.set(wd, { watch, dir });
    if (wd >= 0 && this.timer === null) {
      this.timer = setInterval(() => this.pump(), PUMP_MS);
      this.timer.unref();
    }
    return wd;
  }

  remove(wd: number): void {
    this.owners.delete(wd);
    this.native?.remove(wd);
  }

  /** Forgets a watch dropped by the kernel (IN_IGNORED): nothing to remove. */
  forget(wd: number): void {
    this.owners.delete(wd);
  }

  /** Stops watching a worktree: its watches removed, its root's handle closed. */
  release(watch: WorktreeWatch, wds: Iterable<number>): void {
    for (const wd of wds) this.remove(wd);
    this.native?.forgetRoot(watch.root);
    this.watches.delete(watch);
  }

  /** Hands every queued event to its worktree; false when the kernel's queue overflowed. */
  pump(): boolean {
    const native = this.native;
    if (native === null) return false;
    let events: ReturnType<NativeWatch['drain']>;
    try {
      events = native.drain();
    } catch {
      this.close();
      return false;
    }
    let pos = 0;
    for (let e = 0; e < events.wds.length; e++) {
      const end = events.names.indexOf(0, pos);
      const name = events.names.toString('latin1', pos, end);
      pos = end + 1;
      const owner = this.owners.get(events.wds[e]!);
      if (owner) owner.watch.deliver({ dir: owner.dir, mask: events.masks[e]!, name });
    }
    // Lost events could have been anyone's.
    if (!events.complete) for (const watch of this.watches) watch.lose();
    return events.complete;
  }

  close(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    for (const watch of [...this.watches]) watch.close();
    this.native?.close();
    this.native = null;
    this.owners.clear();
  }
}

export class WorktreeWatch {
  private readonly wdOf = new Map<string, number>();
  /** The directories the recorded index needs watched. */
  private wanted: readonly string[] = [''];
  /** The index file `wanted` was made for (its identity), so it is not made again for it. */
  private wantedFor: string | null = null;
  /**
   * What the last call knew: the index file it left, per entry whether the worktree matched,
   * and `settled`, the tree the index and worktree were then exactly (every entry verified,
   * every directory watched from before it was looked at), or null.
   */
  private recorded: {
    identity: string;
    clean: Uint8Array;
    settled: string | null;
    /** The files and symlinks the call wrote, with the stat data its writers took. */
    own: KeptWrites | null;
  } | null = null;
  private inbox: WatchEvent[] = [];
  /**
   * Paths known not to exist, by directory (names in it): looked for while the directory was
   * watched, and no event since names them or took the directory's watch away. A switch looks
   * for a .gitattributes in every directory it writes in (35,000 lstats at a million files).
   */
  private absent = new Map<string, string[]>(); // a name or two each: arrays, not sets
  private lost = false;
  private closed = false;
  private stoppedWhy: string | null = null;

  constructor(
    private readonly hub: WatchHub,
    readonly root: string,
  ) {}

  /** An event of this worktree's (from the hub); a worktree not checked out for long keeps few. */
  deliver(event: WatchEvent): void {
    if (this.lost) return;
    if (this.inbox.length >= MAX_INBOX) this.lose();
    else this.inbox.push(event);
  }

  /**
   * Why the watch stopped for good (it cannot vouch for anything any more), or null: the
   * kernel's inotify limit below the worktree's directories, or no descriptors left.
   */
  get stopped(): string | null {
    return this.stoppedWhy;
  }

  /** Events were lost: nothing recorded can be trusted, and no watch where it was armed. */
  lose(): void {
    this.lost = true;
    this.inbox = [];
  }

  /**
   * Reads the events since the last call and arms the watches this index needs. Returns, per
   * entry of `entries`, 1 where the worktree is known to match it (no lstat needed), or null
   * when nothing is known (then every entry is probed, as without a watch).
   */
  knownClean(entries: EntryList | null, identity: string | null): Uint8Array | null {
    const record = this.recorded;
    this.recorded = null; // one use: the next call needs this call's own record
    if (this.closed || !this.hub.usable) return null;
    this.hub.pump();
    const events = this.inbox;
    const complete = !this.lost;
    this.inbox = [];
    this.lost = false;
    if (!complete) {
      // A lost event may have been a directory moving away with its watch: start afresh.
      for (const wd of this.wdOf.values()) this.hub.remove(wd);
      this.wdOf.clear();
      this.absent.clear();
    }
    const { isDir, ignored, deleteSelf, moveSelf } = this.hub.addon.watchFlags;
    // Sets: one file usually has several events (created, written, its mode changed).
    const exact = new Set<string>();
    const below = new Set<string>();
    for (const { dir, mask, name } of events) {
      if ((mask & (ignored | deleteSelf | moveSelf)) !== 0) {
        below.add(dir); // the directory itself went away (or moved): all below is unknown
        if ((mask & ignored) !== 0) this.forget(dir);
        continue;
      }
      if (name === '') continue; // the directory's own metadata: no entry changed
      if (this.absent.has(dir)) this.forgetAbsent(dir, name);
      const path = dir === '' ? name : `${dir}/${name}`;
      if ((mask & isDir) !== 0) below.add(path);
      else exact.add(path);
    }
    // Watches inside a directory that went or moved see another place now: drop them.
    if (below.size > 0) this.unwatchBelow(below);

    const trusted =
      complete &&
      record !== null &&
      entries !== null &&
      identity !== null &&
      identity === record.identity &&
      entries.count === record.clean.length;
    if (!trusted && entries !== null && (identity === null || identity !== this.wantedFor)) {
      this.wanted = leadingDirs(entries);
      this.wantedFor = identity;
    }
    // Arm what is not watched; what is below a directory armed only now was not covered.
    for (const dir of this.wanted) {
      if (this.wdOf.has(dir)) continue;
      const wd = this.hub.add(this, dir);
      if (wd >= 0) {
        this.wdOf.set(dir, wd);
      } else if (!NOT_A_DIRECTORY.has(-wd)) {
        // Out of watches or descriptors: watching part of the tree is worth nothing; stop.
        this.stoppedWhy = whyStopped(-wd, this.wanted.length);
        this.close();
        return null;
      }
      below.add(dir);
    }
    if (!trusted) return null;
    const known = record.clean.slice();
    for (const path of exact) if (!below.has(path)) unmark(entries, known, path, false);
    for (const path of below) unmark(entries, known, path, true);
    if (record.own !== null) this.remarkOwn(entries, known, record.own);
    return known;
  }

  /**
   * Marks again the files the last call wrote itself that events unmarked (its own writes made
   * them: a switch's writes would otherwise unmark every file it wrote, and the switch back
   * would look at, and where racy hash, exactly those), where the lstat now is the stat data
   * the writer took: the same inode with the same ctime to the nanosecond has not been written
   * since, whatever happened to the directories above it. Looked at after the watches are armed,
   * as the probe would be: a change from now on is in the queue for the next call.
   */
  private remarkOwn(entries: EntryList, known: Uint8Array, own: KeptWrites): void {
    const at: number[] = [];
    const paths: string[] = [];
    for (let j = 0; j < own.positions.length; j++) {
      const k = own.positions[j]!;
      if (known[k] === 0) {
        at.push(j);
        paths.push(entries.name(k));
      }
    }
    if (paths.length === 0) return;
    const now = this.hub.addon.statFiles({
      root: this.root,
      paths: pathList(paths),
      threads: own.threads,
    });
    for (let n = 0; n < at.length; n++) {
      if (now.status[n] === STAT_PRESENT && sameStatData(now.stats, n, own.stats, at[n]!))
        known[own.positions[at[n]!]!] = 1;
    }
  }

  /**
   * Which of the worktree paths `rels` (latin1) exist: those the watch knows are not there
   * answered without a look, the others looked for with `look`, and those not found in a
   * watched directory known from then on (a change from now on is in the queue).
   */
  exist(rels: readonly string[], look: (rels: string[]) => boolean[]): boolean[] {
    const out = new Array<boolean>(rels.length).fill(false);
    if (this.closed) return look([...rels]);
    const ask: number[] = [];
    const split = (rel: string): [string, string] => {
      const slash = rel.lastIndexOf('/');
      return slash < 0 ? ['', rel] : [rel.slice(0, slash), rel.slice(slash + 1)];
    };
    for (let k = 0; k < rels.length; k++) {
      const [dir, name] = split(rels[k]!);
      if (this.absent.get(dir)?.includes(name) !== true) ask.push(k);
    }
    if (ask.length === 0) return out;
    const found = look(ask.map((k) => rels[k]!));
    for (let n = 0; n < ask.length; n++) {
      const k = ask[n]!;
      out[k] = found[n]!;
      if (found[n]) continue;
      const [dir, name] = split(rels[k]!);
      if (!this.wdOf.has(dir)) continue;
      const names = this.absent.get(dir);
      if (names === undefined) this.absent.set(dir, [name]);
      else if (!names.includes(name)) names.push(name);
    }
    return out;
  }

  /** An event names `dir`/`name`: it may exist now. */
  private forgetAbsent(dir: string, name: string): void {
    const names = this.absent.get(dir)!.filter((n) => n !== name);
    if (names.length > 0) this.absent.set(dir, names);
    else this.absent.delete(dir);
  }

  /** Whether the last call left a settled record (settledFor may say yes). */
  get recordedSettled(): boolean {
    return this.recorded?.settled != null;
  }

  /**
   * Whether nothing happened since the last call: it left the index (still the file
   * `identity` names) and the worktree exactly `tree`, and since then no event names anything
   * in the worktree and none was lost. A checkout of that same tree then has nothing to look
   * at. Returns the index's entry count (the record is kept for the next call), or null: the
   * events stay for knownClean, the call goes the usual way.
   */
  settledFor(identity: string | null, tree: string): number | null {
    const record = this.recorded;
    if (this.closed || !this.hub.usable || record === null || record.settled !== tree) return null;
    if (identity === null || identity !== record.identity) return null;
    this.hub.pump();
    if (this.lost) return null;
    const { ignored, deleteSelf, moveSelf } = this.hub.addon.watchFlags;
    const gone = ignored | deleteSelf | moveSelf;
    // A directory's own metadata (its times, as its entries change) names no entry.
    if (this.inbox.some((e) => e.name !== '' || (e.mask & gone) !== 0)) return null;
    this.inbox = [];
    return record.clean.length;
  }

  /**
   * After the index is committed: what this call knows of the worktree, per entry of the
   * index it wrote (`verified`: 1 where the file matched or was written), or null when it
   * did not look at every entry (a switch). `sameEntries`: the index holds the same paths as
   * the one read (a restore), so the directories to watch are those already wanted. `tree`:
   * the tree the index written holds exactly (a forced or fresh checkout of a whole tree, no
   * sparse checkout), else null; it is the record's `settled` where every entry was verified
   * and every directory of the index was watched before this call looked at it.
   */
  record(
    identity: string | null,
    entries: EntryList,
    verified: Uint8Array | null,
    sameEntries: boolean,
    tree: string | null,
    own: OwnWrites | null = null,
  ): void {
    if (this.closed) return;
    if (!sameEntries) this.wanted = leadingDirs(entries);
    this.wantedFor = identity;
    if (identity === null || verified === null) {
      this.recorded = null;
      return;
    }
    const settled = tree !== null && !verified.includes(0) && this.watchesAll() ? tree : null;
    this.recorded = { identity, clean: verified.slice(), settled, own: keepOwn(own) };
  }

  /** Whether every directory wanted has a watch (armed at the start of a call, before its probe). */
  private watchesAll(): boolean {
    for (const dir of this.wanted) if (!this.wdOf.has(dir)) return false;
    return true;
  }

  /** Stops watching: the watches are removed from the engine's instance. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.hub.release(this, this.wdOf.values());
    this.recorded = null;
    this.inbox = [];
    this.wdOf.clear();
    this.absent.clear();
  }

  /** A watch the kernel dropped (its directory was removed). */
  private forget(dir: string): void {
    const wd = this.wdOf.get(dir);
    if (wd === undefined) return;
    this.hub.forget(wd);
    this.wdOf.delete(dir);
    this.absent.delete(dir);
  }

  private unwatchBelow(gone: Set<string>): void {
    for (const [dir, wd] of this.wdOf) {
      let hit = false;
      for (let d = dir; ; d = d.slice(0, Math.max(0, d.lastIndexOf('/')))) {
        if (gone.has(d)) {
          hit = true;
          break;
        }
        if (d === '') break;
      }
      if (!hit) continue;
      this.hub.remove(wd);
      this.wdOf.delete(dir);
      this.absent.delete(dir);
    }
  }
}

/** The reason a watch of `dirs` directories could not be armed, from add's errno. */
function whyStopped(errno: number, dirs: number): string {
  const { ENOSPC, EMFILE, ENFILE, ENOMEM } = constants.errno;
  if (errno === ENOSPC) {
    let limit = 'fs.inotify.max_user_watches';
    try {
      limit += ` (${readFileSync('/proc/sys/fs/inotify/max_user_watches', 'utf8').trim()})`;
    } catch {
      // the limit's number is a courtesy
    }
    return `out of inotify watches: the worktree has ${dirs} directories to watch, above ${limit} less the watches in use; raise the limit to watch it`;
  }
  if (errno === EMFILE || errno === ENFILE) return 'out of file descriptors for the watch';
  if (errno === ENOMEM) return 'out of kernel memory for inotify watches';
  return `inotify_add_watch failed (errno ${errno})`;
}
