/**
 * Phase 4, write: the plan carried out (write/execute.ts: removals, directories, files in
 * process or on the pool, links), then every write and removal made durable (per the fsync
 * mode) before the index says they happened. From here until the index is committed, a stop
 * leaves the worktree part-way: its error says how to finish (part-way.ts).
 */
import type { Addon } from '../addon.js';
import { PcheckoutError, isErrorCode } from '../errors.js';
import { nativeCheckout, type Conversions } from '../plan/conversion.js';
import type { Plan } from '../plan/plan.js';
import { syncBarrier, writerSync, type FsyncSummary } from '../write/durability.js';
import { execute, type ExecuteOutcome } from '../write/execute.js';
import { checkoutRef, type FilterStepSettings } from '../write/filtered.js';
import type { FilterSession } from '../write/filters.js';
import { descriptorHint } from '../write/write.js';
import { StoreTally, keepBound, type OpenStore, type StoreSummary } from '../write/store.js';
import type { Control } from './control.js';
import type { Job } from './job.js';
import type { CallConfig, Opened } from './open.js';
import type { Planned } from './plan.js';

const STREAM_THRESHOLD = 100 * 1024 * 1024; // larger blobs are streamed to disk, not held whole

export interface Written {
  readonly outcome: ExecuteOutcome;
  readonly durability: FsyncSummary;
  /** The store of worktree-ready files, when the call named one. */
  readonly fileStore: StoreSummary | null;
}

/** What git does to a filtered file's blob before its smudge filter: ident, eol, encoding. */
function toWorktree(
  addon: Addon,
  conversions: Conversions,
  plan: Plan,
): FilterStepSettings['toWorktree'] {
  const { result } = plan;
  return (k, blob) => {
    const native = nativeCheckout(conversions.profiles[conversions.ids[k]!]!);
    if (native === null) return { data: null };
    return addon.convertToWorktree(blob, native, Buffer.from(result.oid(k)), result.display(k));
  };
}

/** The first file that failed, as the call's error (the others counted in its message). */
function writeFailure(plan: Plan, outcome: ExecuteOutcome, workers: number): PcheckoutError {
  const first = outcome.failures[0]!;
  const { result } = plan;
  const hint = descriptorHint(outcome.failures.map((f) => f.message).join('\n'), workers);
  return new PcheckoutError(
    isErrorCode(first.code) ? first.code : 'ERR_WRITE_FAILED',
    `${outcome.failures.length} file(s) could not be written; first: ${result.display(first.index)}: ${first.message}${hint}`,
    {
      path: result.display(first.index),
      oid: result.oidHex(first.index),
      written: {
        stage: 'files',
        removed: plan.deletes.length,
        files: plan.files.length + plan.symlinks.length - outcome.failures.length,
        total: plan.files.length + plan.symlinks.length,
      },
    },
  );
}

export async function writeWorktree(
  job: Job,
  config: CallConfig,
  opened: Opened,
  planned: Planned,
  filters: FilterSession,
  control: Control,
): Promise<Written> {
  const { settings } = job;
  const { addon, odb, store, refs, target, mode } = opened;
  const { plan, conversions, filtered, usePool } = planned;
  const { workers } = config;
  const fileStore = job.store;
  const outcome = await execute(odb, plan, {
    root: job.worktree,
    worktree: opened.worktree!,
    dirThreads: workers,
    threads: usePool ? workers : 1,
    readers: (n) => store.readers(n),
    streamThreshold: STREAM_THRESHOLD,
    sync: writerSync(config.fsync),
    concurrentDirs: config.filesystem.network,
    perDir: config.perDir,
    store: fileStore && { root: fileStore.root, link: fileStore.link },
    symlinks: config.symlinks,
    conversions,
    filters:
      filtered === 0
        ? null
        : {
            session: filters,
            ref: target ? checkoutRef(refs, settings.ref, target) : null,
            treeish: target ? (target.commit ?? target.tree) : null,
            // git's checkout-index delays nothing; `git checkout [<rev>] -- <paths>` may.
            canDelay: mode !== 'restore' || settings.paths !== undefined,
            toWorktree: toWorktree(addon, conversions!, plan),
          },
    onProgress: control.wantsProgress
      ? (p) => control.progress(p.done, p.total, p.bytes)
      : undefined,
    signal: control.signal,
    aborted: () => control.aborted,
  });
  await filters.close();
  control.check();
  if (outcome.failures.length > 0) throw writeFailure(plan, outcome, workers);
  const durability = syncBarrier(addon, plan, {
    root: job.worktree,
    mode: config.fsync,
    fs: config.filesystem,
    threads: workers,
    symlinksAsFiles: !config.symlinks,
  });
  return { outcome, durability, fileStore: fileStore && storeSummary(fileStore, outcome) };
}

/** The store's counts, after its bound is kept. */
function storeSummary(store: OpenStore, outcome: ExecuteOutcome): StoreSummary {
  const tally = outcome.store ?? new StoreTally();
  return tally.summary(store.dir, keepBound(store.root, store.maxBytes, tally.insertedBytes));
}
