/** The summary of a call, from its phases' hand-offs (and a dry run's, from its plan). */
import type { NativeDecodeStats } from '../addon.js';
import { PcheckoutError } from '../errors.js';
import type { HookResult } from '../hooks.js';
import type { FilterFailure } from '../write/filters.js';
import { changesOf, type Changes } from './changes.js';
import type { Indexed } from './commit.js';
import type { Fetched } from './fetch.js';
import type { Finished } from './finish.js';
import type { Job } from './job.js';
import type { CallConfig, Opened } from './open.js';
import type { Planned } from './plan.js';
import { countKnown, displayFailure, round, type CheckoutSummary, type Stops } from './summary.js';
import type { Written } from './write.js';

export interface Reported {
  job: Job;
  config: CallConfig;
  opened: Opened;
  planned: Planned;
  written: Written;
  indexed: Indexed;
  finished: Finished;
  hook: HookResult | null;
  fetched: Fetched | null;
  decoded: NativeDecodeStats;
  filterFailures: FilterFailure[];
  changes: Changes | null;
  times: { started: number; planTime: number; writeTime: number; indexTime: number };
}

/** What a summary says of the call whatever it did: the settings, the target, the machine. */
function shared(job: Job, config: CallConfig, opened: Opened) {
  return {
    mode: job.materialize ? ('materialize' as const) : opened.mode,
    commit: opened.target?.commit ?? null,
    tree: opened.target?.tree ?? null,
    workers: config.workers,
    threshold: config.threshold,
    inflater: opened.addon.inflater,
    openat2: opened.addon.openat2,
    filesystem: config.filesystem,
    watch: {
      active: opened.watch !== null && opened.watch.stopped === null,
      known: opened.settled?.entries ?? countKnown(opened.knownClean),
      settled: opened.settled !== null,
      stopped: opened.watch?.stopped ?? null,
    },
  };
}

export function summarize(r: Reported): CheckoutSummary {
  const { job, config, opened, planned, written, indexed, finished, times } = r;
  const { plan } = planned;
  const { outcome } = written;
  const headAfter = finished.headAfter;
  return {
    ...shared(job, config, opened),
    dryRun: false,
    ref: headAfter?.symref ?? null,
    detached: !job.materialize && headAfter?.symref === undefined,
    entries: plan.result.count,
    created: plan.counts.created,
    updated: plan.counts.updated,
    deleted: plan.counts.deleted,
    changes: r.changes,
    stops: null,
    files: plan.files.length,
    symlinks: plan.symlinks.length,
    gitlinks: plan.gitlinks.length,
    bytes: outcome.bytes,
    fetched: r.fetched
      ? { blobs: r.fetched.blobs, remote: r.fetched.remote, ms: round(r.fetched.ms) }
      : null,
    pool: { used: planned.usePool, workers: outcome.poolWorkers, files: outcome.poolFiles },
    filters: {
      files: outcome.filteredFiles,
      delayed: outcome.delayedFiles,
      failed: r.filterFailures.map(displayFailure),
    },
    collisions: outcome.collisions,
    racy: indexed.racy,
    newBranch: opened.headUpdate?.newBranch ?? null,
    hook: r.hook,
    store: written.fileStore,
    fsync: written.durability,
    warnings: [...planned.warnings, ...outcome.notices, ...outcome.warnings.map((w) => w.message)],
    decoded: r.decoded,
    timings: {
      plan: round(times.planTime - times.started),
      fetch: round(r.fetched?.ms ?? 0),
      write: round(times.writeTime - times.planTime - (r.fetched?.ms ?? 0)),
      index: round(times.indexTime - times.writeTime),
      total: round(times.indexTime - times.started),
      racyWait: round(indexed.waited),
    },
  };
}

/** What refuses a checkout, for a dry run to report (null: an error a dry run throws). */
export function stopsOf(err: unknown): Stops | null {
  if (!(err instanceof PcheckoutError) || err.code !== 'ERR_WOULD_OVERWRITE') return null;
  const overwrite = err.overwrite;
  return {
    code: err.code,
    message: err.message,
    paths: err.paths ?? [],
    modified: overwrite?.modified ?? [],
    untracked: overwrite?.untracked ?? [],
  };
}

/** What a summary says of a call that wrote nothing (a dry run, a settled call). */
function nothingWritten(job: Job, config: CallConfig, opened: Opened, started: number) {
  const total = round(performance.now() - started);
  return {
    bytes: 0,
    filters: { files: 0, delayed: 0, failed: [] },
    collisions: [],
    racy: {
      policy: job.settings.racyWait,
      entries: 0,
      bytes: 0,
      rehashMs: 0,
      waitMs: 0,
      waited: false,
    },
    store: null,
    fsync: { mode: config.fsync, barrier: 'none' as const, synced: 0, barrierMs: 0 },
    decoded: opened.addon.decodeStats(opened.store.opened()),
    timings: { plan: total, fetch: 0, write: 0, index: 0, total, racyWait: 0 },
  };
}

/**
 * A settled call's summary (open's `settled`): every entry vouched for by the watch, nothing
 * written, HEAD as finishHead left it.
 */
export function settledSummary(
  job: Job,
  config: CallConfig,
  opened: Opened,
  finished: Finished,
  hook: HookResult | null,
  started: number,
): CheckoutSummary {
  const headAfter = finished.headAfter;
  return {
    ...shared(job, config, opened),
    ...nothingWritten(job, config, opened, started),
    dryRun: false,
    ref: headAfter?.symref ?? null,
    detached: !job.materialize && headAfter?.symref === undefined,
    entries: opened.settled?.entries ?? 0,
    created: 0,
    updated: 0,
    deleted: 0,
    changes: job.settings.changes ? { created: [], updated: [], deleted: [] } : null,
    stops: null,
    files: 0,
    symlinks: 0,
    gitlinks: 0,
    fetched: null,
    pool: { used: false, workers: 0, files: 0 },
    newBranch: opened.headUpdate?.newBranch ?? null,
    hook,
    warnings: [],
  };
}

/** A dry run's summary: the plan's counts and paths (or what stops it), nothing written. */
export function dryRunSummary(
  job: Job,
  config: CallConfig,
  opened: Opened,
  planned: Planned | null,
  stops: Stops | null,
  started: number,
): CheckoutSummary {
  const plan = planned?.plan ?? null;
  const head = opened.refs.read('HEAD');
  return {
    ...shared(job, config, opened),
    ...nothingWritten(job, config, opened, started),
    dryRun: true,
    ref: job.materialize ? null : (head?.symref ?? null),
    detached: !job.materialize && head?.symref === undefined,
    entries: plan?.result.count ?? 0,
    created: plan?.counts.created ?? 0,
    updated: plan?.counts.updated ?? 0,
    deleted: plan?.counts.deleted ?? 0,
    changes: plan ? changesOf(plan, opened.current) : null,
    stops,
    files: plan?.files.length ?? 0,
    symlinks: plan?.symlinks.length ?? 0,
    gitlinks: plan?.gitlinks.length ?? 0,
    // Nothing is fetched in a dry run: what would be, and from where git would ask first.
    fetched: planned?.fetch
      ? { blobs: planned.fetch.oids.length, remote: planned.fetch.remotes[0]!, ms: 0 }
      : null,
    pool: { used: planned?.usePool ?? false, workers: 0, files: 0 },
    newBranch: null,
    hook: null,
    warnings: [...(planned?.warnings ?? [])],
  };
}
