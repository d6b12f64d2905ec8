/**
 * Phase 3, plan: the merge of target, index and worktree (plan/plan.ts, which probes the
 * worktree where a decision depends on it), then what each written file's bytes go through and
 * whether the writes go to the pool. Nothing on disk changes here.
 */
import { checkinConversions, planConversions, type Conversions } from '../plan/conversion.js';
import { Excludes } from '../plan/ignore.js';
import { makePlan, type Plan } from '../plan/plan.js';
import { probe } from '../plan/probe.js';
import { inCone, readCone, type Cone } from '../plan/sparse.js';
import type { Repo } from '../repo/repo.js';
import type { FilterSession } from '../write/filters.js';
import type { Control } from './control.js';
import type { Job } from './job.js';
import type { CallConfig, Opened } from './open.js';
import type { Walked } from './walk.js';

export interface Planned {
  readonly plan: Plan;
  /** Per result entry, what its bytes go through (null: nothing for any). */
  readonly conversions: Conversions | null;
  /** Files written through a filter driver (on the orchestrating thread). */
  readonly filtered: number;
  /** Whether the other files go to the pool. */
  readonly usePool: boolean;
  /** git's warnings so far (attribute files, encodings). */
  readonly warnings: readonly string[];
  /** The sparse checkout's cone (null: no sparse checkout), for the index written sparse. */
  readonly cone: Cone | null;
}

/** git's exclude rules, loaded only if a decision needs them. */
function lazyExcludes(repo: Repo): (path: string, isDir: boolean) => boolean {
  let excludes: Excludes | undefined;
  return (path, isDir) => (excludes ??= new Excludes(repo)).isIgnored(path, isDir);
}

/** The files a plan writes through a filter driver. */
function countFiltered(conversions: Conversions, plan: Plan): number {
  if (!conversions.profiles.some((c) => c.filtered)) return 0;
  let n = 0;
  for (const f of plan.files) if (conversions.profiles[conversions.ids[f.index]!]!.filtered) n++;
  return n;
}

export async function planCall(
  job: Job,
  config: CallConfig,
  opened: Opened,
  walked: Walked,
  filters: FilterSession,
  control: Control,
): Promise<Planned> {
  const { repo } = job;
  const { addon, odb, current, mode, worktree: wt } = opened;
  const warnings: string[] = [];
  const warn = (message: string): void => void warnings.push(message);
  // What git converts before hashing a file it must compare with the index (clean filters
  // first, through this run's filter session).
  const checkin = current
    ? checkinConversions(
        repo,
        odb,
        current.entries,
        job.worktree,
        warn,
        addon.blobHasCrlf,
        (driver, path, content) => filters.clean(driver, path, content),
      )
    : undefined;
  const cone = job.materialize ? null : readCone(repo, warn);
  const plan = await makePlan(odb, {
    mode,
    root: job.worktree,
    target: walked.targetEntries,
    index: current,
    head: walked.head,
    fileMode: config.fileMode,
    symlinks: config.symlinks,
    probeThreads: config.workers,
    threshold: config.threshold,
    isIgnored: job.materialize ? () => false : lazyExcludes(repo),
    pathspec: job.materialize ? null : walked.pathspec,
    inCone: cone ? (path) => inCone(cone, path) : null,
    probe: async (req) => probe(addon, req, wt!, checkin),
    knownClean: opened.knownClean,
    listDir: (dir) => {
      if (wt === null) return null;
      const list = wt.list(dir);
      return typeof list === 'string' ? null : list;
    },
  });
  // What each written file's bytes go through (attributes of the result, as git reads them).
  const conversions = planConversions({
    repo,
    odb,
    result: plan.result,
    files: plan.files.map((f) => f.index),
    worktree: mode === 'fresh' || job.materialize ? null : job.worktree,
    direction: mode === 'restore' || mode === 'paths' ? 'checkin' : 'checkout',
    warn,
    check: () => control.check(),
  });
  // git's threshold counts the entries its parallel queue takes: filtered ones are not.
  const filtered = conversions ? countFiltered(conversions, plan) : 0;
  const usePool = config.workers > 1 && plan.files.length - filtered > config.threshold;
  // The trees' bases are of no use to the file writers.
  odb.releaseCache();
  return { plan, conversions, filtered, usePool, warnings, cone };
}
