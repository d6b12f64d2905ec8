/**
 * One call as a script of phases (docs/Architecture.md): open → walk → plan → (fetch) → write →
 * index → finish → hook, each in its own module with an explicit hand-off; `control` is checked between
 * them (an abort takes effect at the next boundary, or within the write) and told each phase.
 * A dry run stops after the plan. This runs on whatever thread calls it: an orchestrator thread
 * for the API (call/), the process's own for the CLI.
 */
import { PcheckoutError } from '../errors.js';
import { killPoint } from '../kill-point.js';
import { gitChildEnv } from '../repo/child-env.js';
import { explainMissing } from '../repo/incomplete.js';
import { readFilterDrivers } from '../plan/drivers.js';
import type { Resources } from '../resources.js';
import type { EntryList } from '../plan/entries.js';
import { FilterSession } from '../write/filters.js';
import { partWay, type PartWayContext } from '../part-way.js';
import { changesOf } from './changes.js';
import { commitIndex, readsIndexRead } from './commit.js';
import { fetchMissing, type Fetched } from './fetch.js';
import { abortedError, type Control } from './control.js';
import { finishHead, postCheckout } from './finish.js';
import type { Job } from './job.js';
import {
  open,
  release,
  releaseIndexRead,
  resolveConfig,
  type CallConfig,
  type Opened,
} from './open.js';
import { planCall, type Planned } from './plan.js';
import { dryRunSummary, settledSummary, stopsOf, summarize } from './report.js';
import { walkTrees, type Walked } from './walk.js';
import { writeWorktree, type Written } from './write.js';
import type { CheckoutSummary } from './summary.js';

export async function run(
  job: Job,
  resources: Resources,
  control: Control,
): Promise<CheckoutSummary> {
  const { settings } = job;
  const started = performance.now();
  control.phase('open');
  const config = resolveConfig(job);
  let opened: Opened | null = null;
  let partWayContext: PartWayContext | null = null;
  const filters = filterSession(job);
  try {
    opened = open(job, config, resources);
    if (opened.settled !== null) return await settledCall(job, config, opened, control, started);
    // The tree walk and the blob lookup stop within a few thousand items of an abort.
    opened.odb.setCancel(control.flag);
    control.phase('walk');
    const walked = walkTrees(job, opened);
    control.phase('plan', walked.targetEntries?.count ?? opened.current?.entries.count ?? 0);
    let planned: Planned;
    try {
      planned = await planCall(job, config, opened, walked, filters, control);
    } catch (err) {
      const stops = settings.dryRun ? stopsOf(err) : null;
      if (stops === null) throw err;
      return dryRunSummary(job, config, opened, null, stops, started);
    }
    const planTime = performance.now();
    killPoint();
    if (settings.dryRun) return dryRunSummary(job, config, opened, planned, null, started);
    // A partial clone's missing blobs, in one fetch, before anything is written.
    let fetched: Fetched | null = null;
    if (planned.fetch !== null) {
      control.phase('fetch', planned.fetch.oids.length);
      ({ planned, fetched } = await fetchMissing(job, config, opened, planned, control));
      killPoint();
    }
    // The index read, where nothing after the plan reads it again, is let go in two steps:
    // its entries now, its stat data once the writes have taken the kept entries'.
    const { result } = planned.plan;
    const keep = [result.paths, result.oids, result.modes, result.starts];
    const letGo = !settings.changes && !readsIndexRead(job, opened, planned.cone);
    if (letGo) releaseIndexRead(opened, 'entries', keep);
    control.phase('write', planned.plan.files.length);
    partWayContext = {
      mode: job.materialize ? 'materialize' : opened.mode,
      ref: settings.ref,
      paths: settings.paths,
    };
    const written = await writeWorktree(job, config, opened, planned, filters, control);
    const writeTime = performance.now();
    if (letGo) releaseIndexRead(opened, 'stats', [...keep, written.outcome.stats]);
    const decoded = opened.addon.decodeStats(opened.store.opened());
    control.phase('index', planned.plan.result.count);
    const indexed = await commitIndex(job, config, opened, walked, planned, written);
    partWayContext = null;
    const finished = finishHead(job, config, opened);
    const indexTime = performance.now();
    // Done: an abort from here on changes nothing (git's hook runs once the checkout is complete).
    control.phase('hook', 0, false);
    const hook = await postCheckout(job, opened);
    const summary = summarize({
      job,
      config,
      opened,
      planned,
      written,
      indexed,
      finished,
      hook,
      fetched,
      decoded,
      filterFailures: filters.failures,
      changes: settings.changes ? changesOf(planned.plan, opened.current) : null,
      times: { started, planTime, writeTime, indexTime },
    });
    resources.spend(callArrays(opened, walked, planned, written));
    return summary;
  } catch (caught) {
    throw failureOf(caught, job, control, partWayContext);
  } finally {
    // The locks first: a caller told of the end finds the worktree free. (The caches are
    // dropped by whoever ran the call, once it has answered: Resources.idle.)
    release(opened);
    opened?.odb.setCancel(null);
    await filters.close();
  }
}

/** The big arrays of a finished call, nothing after it reads (Resources.spend). */
function callArrays(
  opened: Opened,
  walked: Walked,
  planned: Planned,
  written: Written,
): ArrayBufferView[] {
  const lists = (e: EntryList | null): ArrayBufferView[] =>
    e ? [e.paths, e.oids, e.modes, e.starts] : [];
  const { current } = opened;
  const { plan } = planned;
  return [
    ...lists(current?.entries ?? null),
    ...(current
      ? [current.stats, current.stages, current.extFlags, current.assumeValid, current.offsets]
      : []),
    ...lists(walked.targetEntries),
    ...lists(walked.head),
    ...lists(plan.result),
    plan.extFlags,
    plan.write,
    plan.replace,
    ...(plan.verified ? [plan.verified] : []),
    written.outcome.stats,
  ];
}

/**
 * A warm engine's worktree that is already exactly the target (open's `settled`): nothing to
 * walk, plan, write or index; HEAD moves if the revision is another, and the hook runs, as
 * after any checkout.
 */
async function settledCall(
  job: Job,
  config: CallConfig,
  opened: Opened,
  control: Control,
  started: number,
): Promise<CheckoutSummary> {
  control.phase('index', 0);
  const finished = finishHead(job, config, opened);
  control.phase('hook', 0, false);
  const hook = await postCheckout(job, opened);
  return settledSummary(job, config, opened, finished, hook, started);
}

/**
 * External filters run from the worktree's top, as git runs them; a materialized directory is
 * no repository, so they are told where it is (as git --git-dir --work-tree would). Processes
 * start on first use and are shut down when the run ends, however it ends.
 */
function filterSession(job: Job): FilterSession {
  const { repo } = job;
  return new FilterSession(readFilterDrivers(repo.config), job.worktree, () =>
    job.materialize
      ? { ...process.env, GIT_DIR: repo.gitDir, GIT_WORK_TREE: job.worktree }
      : gitChildEnv(repo, job.start),
  );
}

/**
 * What a failed call throws: a native step that stopped for the abort gives the abort's own
 * error (its reason); a missing object is explained (a partial clone, an alternate gone); a
 * failure during the write says how far the worktree got.
 */
function failureOf(
  caught: unknown,
  job: Job,
  control: Control,
  partWayContext: PartWayContext | null,
): unknown {
  const err =
    (caught as { code?: unknown } | null)?.code === 'ERR_ABORTED' && control.aborted
      ? abortedError(control.signal?.reason)
      : caught;
  const explained = explainMissing(err, job.repo);
  return partWayContext
    ? partWay(explained, err instanceof PcheckoutError ? err.written : undefined, partWayContext)
    : explained;
}
