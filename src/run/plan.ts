/**
 * Phase 3, plan: the merge of target, index and worktree (plan/plan.ts, which probes the
 * worktree where a decision depends on it), then what each written file's bytes go through and
 * whether the writes go to the pool. Nothing on disk changes here.
 */
import { STAT_ABSENT } from '../addon.js';
import { checkinConversions, planConversions, type Conversions } from '../plan/conversion.js';
import { Excludes } from '../plan/ignore.js';
import { missingBlobError } from '../plan/locate.js';
import { makePlan, type Plan } from '../plan/plan.js';
import { probe } from '../plan/probe.js';
import { inCone, readCone, type Cone } from '../plan/sparse.js';
import { MODE_SYMLINK } from '../plan/tree.js';
import { fetchBlobsSync, lazyFetchDisabled, promisorRemotes } from '../repo/promisor.js';
import type { Repo } from '../repo/repo.js';
import type { FilterSession } from '../write/filters.js';
import { pathList } from '../worktree.js';
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
  /** The blobs a partial clone must fetch before the write (run/fetch.ts); null: none. */
  readonly fetch: ToFetch | null;
}

/** What a partial clone lacks for this call, fetched in one batch before anything is written. */
export interface ToFetch {
  /** The promisor remotes, in the order git asks them. */
  readonly remotes: readonly string[];
  /** The blobs (hex ids, each once): files and symlinks to write, `.gitattributes` read. */
  readonly oids: readonly string[];
  /** Some `.gitattributes` blob was missing: the conversions are worked out again after. */
  readonly reconvert: boolean;
  /** The warnings from before the conversions (theirs are made again with them). */
  readonly warningsBefore: readonly string[];
}

/** The promisor remotes a call may fetch from: none when git's lazy fetch is turned off. */
function fetchRemotes(repo: Repo): string[] {
  return lazyFetchDisabled() ? [] : promisorRemotes(repo);
}

/** The result positions of the regular files a plan writes (located or missing), in order. */
export function regularFiles(plan: Plan): number[] {
  const out = plan.files.map((f) => f.index);
  for (const k of plan.missing) if (plan.result.modes[k] !== MODE_SYMLINK) out.push(k);
  return out.sort((a, b) => a - b);
}

/**
 * Which of the worktree paths `rels` exist, in one native batch on the threads: one lstat at a
 * time from JavaScript cost ~17 µs each on a local filesystem (a 1% switch of a million files
 * looks for .gitattributes in 35,000 directories: 0.6 s), a round trip each on a network one.
 */
function existIn(job: Job, config: CallConfig, opened: Opened): (rels: string[]) => boolean[] {
  const look = (rels: string[]): boolean[] => {
    const { status } = opened.addon.statFiles({
      root: job.worktree,
      paths: pathList(rels),
      threads: config.workers,
      ...(config.probePerThread > 0 ? { perThread: config.probePerThread } : {}),
    });
    return [...status].map((s) => s !== STAT_ABSENT);
  };
  // A warm engine's watch knows where nothing was found before and nothing happened since.
  const { watch } = opened;
  return watch ? (rels) => watch.exist(rels, look) : look;
}

/** The directories whose worktree .gitattributes the plan deletes ('' for the top's). */
function removedAttributeFiles(plan: Plan): Set<string> {
  const out = new Set<string>();
  for (const { path, dir } of plan.deletes) {
    if (dir) continue;
    if (path === '.gitattributes') out.add('');
    else if (path.endsWith('/.gitattributes')) out.add(path.slice(0, -'/.gitattributes'.length));
  }
  return out;
}

/** What each written file's bytes go through (attributes of the result, as git reads them). */
export function convertFiles(
  job: Job,
  config: CallConfig,
  opened: Opened,
  plan: Plan,
  warn: (message: string) => void,
  { missing, check }: { missing?: (oid: Buffer) => boolean; check?: () => void } = {},
): { conversions: Conversions | null; filtered: number } {
  const { mode } = opened;
  const conversions = planConversions({
    repo: job.repo,
    odb: opened.odb,
    result: plan.result,
    files: regularFiles(plan),
    worktree: mode === 'fresh' || job.materialize ? null : job.worktree,
    direction: mode === 'restore' || mode === 'paths' ? 'checkin' : 'checkout',
    warn,
    ...(missing ? { missing } : {}),
    ...(check ? { check } : {}),
    exist: existIn(job, config, opened),
    removed: removedAttributeFiles(plan),
  });
  // git's threshold counts the entries its parallel queue takes: filtered ones are not.
  return { conversions, filtered: conversions ? countFiltered(conversions, plan) : 0 };
}

/** Whether the regular files (less the filtered ones) go to the pool. */
export function poolFor(config: CallConfig, plan: Plan, filtered: number): boolean {
  return config.workers > 1 && regularFiles(plan).length - filtered > config.threshold;
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
  for (const k of regularFiles(plan)) if (conversions.profiles[conversions.ids[k]!]!.filtered) n++;
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
  const remotes = fetchRemotes(repo);
  // The dirty check decides as it reads: what it lacks is fetched then (never in a dry run).
  const fetchNow =
    remotes.length > 0 && !job.settings.dryRun
      ? (oid: Buffer) => fetchBlobsSync(repo, remotes, [oid.toString('hex')])
      : undefined;
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
        fetchNow,
        existIn(job, config, opened),
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
    ...(config.probePerThread > 0 ? { probePerThread: config.probePerThread } : {}),
    threshold: config.threshold,
    isIgnored: job.materialize ? () => false : lazyExcludes(repo),
    pathspec: job.materialize ? null : walked.pathspec,
    inCone: cone ? (path) => inCone(cone, path) : null,
    probe: async (req) => probe(addon, req, wt!, checkin),
    knownClean: opened.knownClean,
    check: () => control.check(),
    listDir: (dir) => {
      if (wt === null) return null;
      const list = wt.list(dir);
      return typeof list === 'string' ? null : list;
    },
  });
  // A blob the repository lacks: a partial clone fetches it before the write, with the
  // .gitattributes blobs the conversions find missing; anything else is damage.
  if (plan.missing.length > 0 && remotes.length === 0) {
    throw missingBlobError(plan.result, plan.missing[0]!);
  }
  const warningsBefore = [...warnings];
  const missingAttributes = new Set<string>();
  const { conversions, filtered } = convertFiles(job, config, opened, plan, warn, {
    ...(remotes.length > 0
      ? { missing: (oid: Buffer) => (missingAttributes.add(oid.toString('hex')), false) }
      : {}),
    check: () => control.check(),
  });
  const usePool = poolFor(config, plan, filtered);
  const oids = new Set(plan.missing.map((k) => plan.result.oidHex(k)));
  for (const oid of missingAttributes) oids.add(oid);
  const fetch: ToFetch | null =
    oids.size === 0
      ? null
      : { remotes, oids: [...oids], reconvert: missingAttributes.size > 0, warningsBefore };
  // The trees' bases are of no use to the file writers.
  odb.releaseCache();
  return { plan, conversions, filtered, usePool, warnings, cone, fetch };
}
