/**
 * Phases 6 and 7, finish and hook: HEAD moved (or, for a materialize, the note beside its
 * index written), a switch's branch state cleared, then the post-checkout hook as git runs it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fromSystem } from '../errors.js';
import { runHook, type HookResult } from '../hooks.js';
import { killPoint } from '../kill-point.js';
import { MATERIALIZE_META } from '../materialize-target.js';
import { ZERO_OID } from '../repo/objects.js';
import type { RefValue, Resolved } from '../repo/refs.js';
import { removeBranchState } from '../repo/state.js';
import type { Job } from './job.js';
import type { CallConfig, Opened } from './open.js';

export interface Finished {
  /** HEAD afterwards (undefined for a materialize). */
  readonly headAfter: RefValue | undefined;
}

/** A note next to a materialized index: where it came from (for people; nothing reads it back). */
function writeMetadata(job: Job, target: Resolved): void {
  const file = join(job.worktree, MATERIALIZE_META, 'pcheckout.json');
  const note = {
    repository: job.repo.worktree || job.repo.gitDir,
    commit: target.commit,
    tree: target.tree,
    paths: job.settings.paths ?? null,
  };
  try {
    writeFileSync(file, `${JSON.stringify(note, null, 2)}\n`);
  } catch (err) {
    throw fromSystem(err, 'write', file);
  }
}

export function finishHead(job: Job, config: CallConfig, opened: Opened): Finished {
  const { refs, headBefore, oldOid, mode } = opened;
  const from = headBefore?.symref?.replace(/^refs\/heads\//, '') ?? oldOid ?? ZERO_OID;
  opened.headUpdate?.commit(oldOid, from, config.fsync !== 'none');
  killPoint();
  if (job.materialize) writeMetadata(job, opened.target!);
  else if (mode === 'switch' || mode === 'force') removeBranchState(job.repo);
  return { headAfter: job.materialize ? undefined : refs.read('HEAD') };
}

/**
 * As git, once the checkout is complete: old and new HEAD and 1 for a checkout of a revision,
 * HEAD twice and 0 for paths; none for checkout-index (a restore) or materialize.
 */
export async function postCheckout(job: Job, opened: Opened): Promise<HookResult | null> {
  const { settings } = job;
  if (!settings.hooks || job.materialize || (opened.mode === 'restore' && !settings.paths)) {
    return null;
  }
  const headNow = opened.refs.resolve('HEAD') ?? ZERO_OID;
  const args = settings.paths ? [headNow, headNow, '0'] : [opened.oldOid ?? ZERO_OID, headNow, '1'];
  return runHook(job.repo, job.start, 'post-checkout', args);
}
