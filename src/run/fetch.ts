/**
 * Phase 3b, fetch (a partial clone only): the blobs the plan found missing — the files and
 * symlinks this call writes, and the `.gitattributes` blobs their conversions read — fetched
 * from the promisor remote in one `git fetch`, as git's checkout prefetches them before it
 * writes (unpack-trees.c, check_updates). Then they are located in the new pack (the readers
 * look for packs again when an id is not in the ones they know), and the conversions worked
 * out again if an attribute file was among them. Nothing on disk but the object store changes.
 */
import { PcheckoutError } from '../errors.js';
import { locateFiles, missingBlobError } from '../plan/locate.js';
import type { Plan } from '../plan/plan.js';
import { fetchBlobs } from '../repo/promisor.js';
import { abortedError, type Control } from './control.js';
import type { Job } from './job.js';
import type { CallConfig, Opened } from './open.js';
import { convertFiles, poolFor, regularFiles, type Planned } from './plan.js';

/** What the fetch did (for the summary). */
export interface Fetched {
  /** The remote that sent the blobs. */
  remote: string;
  blobs: number;
  ms: number;
}

export async function fetchMissing(
  job: Job,
  config: CallConfig,
  opened: Opened,
  planned: Planned,
  control: Control,
): Promise<{ planned: Planned; fetched: Fetched }> {
  const { odb } = opened;
  const want = planned.fetch!;
  const started = performance.now();
  const stillMissing = (oids: readonly string[]): string[] => {
    const ids = Buffer.from(oids.join(''), 'hex');
    const info = odb.info(ids);
    return oids.filter((_, k) => info[4 * k] === -2);
  };
  const remote = await fetchBlobs(job.repo, want.remotes, want.oids, stillMissing, {
    aborted: () => control.aborted,
    abortError: () => abortedError(control.signal?.reason),
  });
  const ms = performance.now() - started;
  const plan = relocate(opened, planned.plan);
  let { conversions, filtered, usePool, warnings } = planned;
  if (want.reconvert) {
    const again = [...want.warningsBefore];
    ({ conversions, filtered } = convertFiles(
      job,
      config,
      opened,
      plan,
      (m) => void again.push(m),
    ));
    usePool = poolFor(config, plan, filtered);
    warnings = again;
  }
  odb.releaseCache();
  return {
    planned: { plan, conversions, filtered, usePool, warnings, cone: planned.cone, fetch: null },
    fetched: { remote, blobs: want.oids.length, ms },
  };
}

/** The plan with its files located again, the fetched ones now among them. */
function relocate(opened: Opened, plan: Plan): Plan {
  const files = locateFiles(opened.odb, plan.result, regularFiles(plan));
  const links = locateFiles(opened.odb, plan.result, plan.symlinks);
  const missing = [...files.missing, ...links.missing];
  if (missing.length > 0) {
    const err = missingBlobError(plan.result, missing[0]!);
    throw new PcheckoutError('ERR_FETCH', `${err.message}: the promisor remote did not send it`, {
      ...(err.path !== undefined ? { path: err.path } : {}),
      ...(err.oid !== undefined ? { oid: err.oid } : {}),
    });
  }
  let fileBytes = 0;
  for (const f of files.files) fileBytes += f.size;
  return { ...plan, files: files.files, missing: [], fileBytes };
}
