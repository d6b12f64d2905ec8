/**
 * The executor's step for entries whose conversion goes through a filter driver (the profiles'
 * `filtered`, plan/conversion.ts): written here, on the main thread, one at a time, as git
 * writes them outside its parallel queue (one long-running process per driver; a one-shot
 * command per file). Each blob goes through ident, eol and encoding first, then the smudge
 * filter, as git's convert_to_working_tree. In index order before the other files, then the
 * delayed ones once the rest is written (git's finish_delayed_checkout).
 */
import {
  FILE_COLLIDED,
  FILE_FAILED,
  WRITE_REPLACE,
  type NativeOdb,
  type NativeWriteResult,
} from '../addon.js';
import { PcheckoutError, fromNative } from '../errors.js';
import { STAT_WORDS, newStats } from '../index/write.js';
import type { FilterDriver } from '../plan/drivers.js';
import type { EntryList } from '../plan/entries.js';
import type { FileTask } from '../plan/locate.js';
import { readObject } from '../repo/objects.js';
import type { Refs, Resolved } from '../repo/refs.js';
import { dwimRef } from '../repo/revision.js';
import type { FilterSession, SmudgeMeta } from './filters.js';

export interface FilterStepSettings {
  root: string;
  sync: number;
  session: FilterSession;
  /** The ref and commit checked out, as git names them to a process filter (null: none). */
  ref: string | null;
  treeish: string | null;
  /** Whether a process filter may delay (git checks out with a delayed_checkout). */
  canDelay: boolean;
  /**
   * The conversions git applies before the filter (ident, eol, encoding), per entry: the bytes
   * (null: unchanged) and git's complaint, if any (a failed encoding).
   */
  toWorktree: (k: number, blob: Buffer) => { data: Buffer | null; warning?: string };
}

/** What the step wrote: stat words for its entries, their bytes, and collided paths. */
export interface FilterStepOutcome {
  stats: Uint32Array;
  bytes: number;
  /** Entries whose path was taken: written again (the last one wins), reported as collided. */
  collided: number[];
  /** git's warnings from the conversions before the filter. */
  warnings: { index: number; message: string }[];
}

const EMPTY = Buffer.alloc(0);

export class FilterStep {
  readonly outcome: FilterStepOutcome;
  /** Delayed paths (latin1) and their entries, until the filter hands them back. */
  private readonly delayed = new Map<string, number>();
  /** Files done, for progress. */
  done = 0;
  /** Files a process filter delayed. */
  delayedCount = 0;

  constructor(
    private readonly odb: NativeOdb,
    private readonly entries: EntryList,
    /** The entries to filter, in index order, with their drivers. */
    readonly files: { task: FileTask; driver: FilterDriver }[],
    private readonly replace: Uint8Array,
    private readonly settings: FilterStepSettings,
  ) {
    this.outcome = {
      stats: newStats(entries.count),
      bytes: 0,
      collided: [],
      warnings: [],
    };
  }

  private meta(k: number): SmudgeMeta {
    return {
      ref: this.settings.ref,
      treeish: this.settings.treeish,
      blob: this.entries.oidHex(k),
    };
  }

  private failedRequired(k: number, driver: FilterDriver, message: string): PcheckoutError {
    const path = this.entries.display(k);
    return new PcheckoutError(
      'ERR_FILTER_FAILED',
      `${path}: smudge filter ${driver.name} failed (${message})`,
      { path, oid: this.entries.oidHex(k) },
    );
  }

  private readBlob(k: number): Buffer {
    const blob = readObject(this.odb, this.entries.oidHex(k));
    if (blob.type !== 'blob') {
      throw new PcheckoutError(
        'ERR_CORRUPT_OBJECT',
        `${this.entries.display(k)} points at ${this.entries.oidHex(k)}, which is not a blob`,
        { oid: this.entries.oidHex(k), path: this.entries.display(k) },
      );
    }
    return blob.data;
  }

  /**
   * Every filtered entry once, in index order; stops at a required driver's failure. Each
   * file is written on a libuv thread while the next request goes to its filter (the next
   * blob is read first: the object reader is busy while it writes).
   */
  async writeFirstPass(signal: AbortSignal | undefined): Promise<void> {
    const { session } = this.settings;
    try {
      let blob = this.files.length > 0 ? this.readBlob(this.files[0]!.task.index) : EMPTY;
      for (let n = 0; n < this.files.length; n++) {
        if (signal?.aborted) return;
        const { task, driver } = this.files[n]!;
        const k = task.index;
        const { data, warning } = this.settings.toWorktree(k, blob);
        if (warning !== undefined) this.outcome.warnings.push({ index: k, message: warning });
        const converted = data ?? blob;
        const path = this.entries.name(k);
        const result = await session.run(
          driver,
          'smudge',
          path,
          converted,
          this.meta(k),
          this.settings.canDelay,
        );
        await this.settle();
        if (n + 1 < this.files.length) blob = this.readBlob(this.files[n + 1]!.task.index);
        if (result.status === 'delayed') {
          this.delayed.set(path, k);
          this.delayedCount++;
        } else if (result.status === 'failed') {
          if (driver.required) throw this.failedRequired(k, driver, result.message);
          session.failures.push({ path, driver: driver.name, message: result.message });
          this.startWrite(k, converted);
        } else if (result.status === 'none') {
          // Nothing to smudge with: git writes the converted blob, or dies if required.
          if (driver.required) throw this.failedRequired(k, driver, 'nothing to run');
          this.startWrite(k, converted);
        } else {
          this.startWrite(k, result.data);
        }
      }
      await this.settle();
    } finally {
      await this.settle(true); // a failure above: the write in flight finishes first
    }
  }

  /**
   * Asks each delaying process for what is ready and writes it, until every process says it
   * has nothing more. A delayed file that never comes back fails the checkout, as with git.
   */
  async finishDelayed(): Promise<void> {
    if (this.delayed.size === 0) return;
    try {
      await this.retryDelayed();
      await this.settle();
    } finally {
      await this.settle(true);
    }
  }

  private async retryDelayed(): Promise<void> {
    const { session } = this.settings;
    const problems: string[] = [];
    const byPath = new Map(this.files.map((f) => [this.entries.name(f.task.index), f]));
    let pending = [...session.delaying].sort();
    while (pending.length > 0) {
      const next: string[] = [];
      for (const cmd of pending) {
        const available = await session.listAvailable(cmd);
        if (available === null) {
          problems.push(`external filter '${cmd}' failed while listing available blobs`);
          continue;
        }
        if (available.length === 0) continue;
        let keep = true;
        for (const path of [...new Set(available)].sort()) {
          const k = this.delayed.get(path);
          if (k === undefined) {
            problems.push(
              `external filter '${cmd}' signaled that '${display(path)}' is now available although it has not been delayed earlier`,
            );
            keep = false; // likely buggy: not asked again
            continue;
          }
          this.delayed.delete(path);
          const { driver } = byPath.get(path)!;
          const result = await session.run(driver, 'smudge', path, EMPTY, this.meta(k), false);
          await this.settle();
          if (result.status === 'ok') {
            this.startWrite(k, result.data);
            continue;
          }
          const message =
            result.status === 'failed'
              ? result.message
              : result.status === 'none'
                ? 'nothing to run'
                : 'delayed again';
          if (driver.required) throw this.failedRequired(k, driver, message);
          // git sends no content on the retry, and writes what it has: nothing.
          session.failures.push({ path, driver: driver.name, message });
          this.startWrite(k, EMPTY);
        }
        if (keep) next.push(cmd);
      }
      pending = next;
    }
    for (const path of [...this.delayed.keys()].sort()) {
      problems.push(`'${display(path)}' was not filtered properly`);
    }
    if (problems.length > 0) {
      throw new PcheckoutError('ERR_FILTER_FAILED', problems.join('\n'), {
        paths: [...this.delayed.keys()].map(display).sort(),
      });
    }
  }

  /** The write in flight, if any: the object reader is busy until it settles. */
  private inFlight: Promise<void> | null = null;

  /** Starts writing an entry's content on a libuv thread. */
  private startWrite(k: number, data: Buffer): void {
    this.inFlight = this.write(k, data);
  }

  /** Waits for the write in flight; its failure is thrown unless `quiet` (already failing). */
  private async settle(quiet = false): Promise<void> {
    const w = this.inFlight;
    this.inFlight = null;
    if (w === null) return;
    if (quiet) await w.catch(() => {});
    else await w;
  }

  /** Writes one entry's final content with the native writer (no symlink followed). */
  private async write(k: number, data: Buffer): Promise<void> {
    const res = await this.writeOnce(k, data, this.replace[k] === 1);
    let status = res.status[0];
    let final = res;
    if (status === FILE_COLLIDED) {
      // Something took the name (another entry on a case-insensitive filesystem): the last
      // one wins, as git's sequential checkout has it; reported with the collisions.
      final = await this.writeOnce(k, data, true);
      status = final.status[0];
      this.outcome.collided.push(k);
    }
    if (status === FILE_FAILED) {
      const e = final.errors[0]!;
      throw new PcheckoutError(
        e.code === 'ERR_TOO_LARGE' ? 'ERR_TOO_LARGE' : 'ERR_WRITE_FAILED',
        `${this.entries.display(k)}: ${e.message}`,
        { path: this.entries.display(k), oid: this.entries.oidHex(k) },
      );
    }
    if (status !== FILE_COLLIDED) {
      this.outcome.stats.set(final.stats, k * STAT_WORDS);
      this.outcome.bytes += data.length;
    }
    this.done++;
  }

  private async writeOnce(k: number, data: Buffer, replace: boolean): Promise<NativeWriteResult> {
    try {
      return await this.odb.writeFilesAsync({
        root: this.settings.root,
        paths: Buffer.concat([this.entries.pathBytes(k), Buffer.alloc(1)]),
        oids: Buffer.from(this.entries.oid(k)),
        modes: Uint32Array.of(this.entries.modes[k]!),
        sizes: Float64Array.of(data.length),
        flags: Uint8Array.of(replace ? WRITE_REPLACE : 0),
        streamThreshold: Number.MAX_SAFE_INTEGER,
        sync: this.settings.sync,
        contents: [data],
      });
    } catch (err) {
      throw fromNative(err, `cannot write ${this.entries.display(k)}`);
    }
  }
}

const display = (latin1: string): string => Buffer.from(latin1, 'latin1').toString('utf8');

/** A ref's final name, symbolic refs followed (git's dwim_ref reports that name). */
function finalName(refs: Refs, name: string): string {
  let current = name;
  for (let depth = 0; depth < 6; depth++) {
    const v = refs.read(current);
    if (v?.symref === undefined) return current;
    current = v.symref;
  }
  return current;
}

/**
 * The `ref` git names to a process filter when it checks out `spec` (checkout_metadata): the
 * ref the revision names, symbolic refs followed (detached HEAD stays "HEAD"); none for an
 * expression (`main~1`) or an object id. No revision is a checkout of HEAD as clone and
 * `reset --hard` make it: HEAD's branch, none when detached.
 */
export function checkoutRef(refs: Refs, spec: string | undefined, target: Resolved): string | null {
  if (spec === undefined) return refs.read('HEAD')?.symref ?? null;
  if (target.create) return target.create.startPoint;
  if (target.branch) return target.branch;
  const name = spec === '@' ? 'HEAD' : target.name;
  const found = dwimRef(refs, name);
  return found === undefined ? null : finalName(refs, found);
}
