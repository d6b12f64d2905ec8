import { join } from 'node:path';
import { PcheckoutError } from '../errors.js';
import { LockFile } from '../lock.js';
import { ConfigEdit } from './config-write.js';
import { ZERO_OID } from './objects.js';
import { makeDirs } from './reflog.js';
import type { Refs, Resolved } from './refs.js';
import { trackingConfig } from './tracking.js';
import { assertNotCheckedOutElsewhere } from './worktrees.js';

/**
 * Everything a checkout changes besides the worktree and the index, prepared (locks taken,
 * checks made) before anything is written and committed at the end, in git's order: the new
 * branch (ref, tracking config, reflog), then HEAD and its reflog.
 */
export class HeadUpdate {
  private readonly head: LockFile;
  private branchLock: LockFile | undefined;
  private config: ConfigEdit | undefined;
  /** The branch this update creates, and the upstream it tracks (null: none configured). */
  readonly newBranch: { name: string; upstream: string | null } | null = null;

  constructor(
    private readonly refs: Refs,
    private readonly target: Resolved,
  ) {
    const repo = refs.repo;
    const headNow = refs.read('HEAD')?.symref;
    if (target.branch !== null && headNow !== target.branch) {
      assertNotCheckedOutElsewhere(repo, target.branch);
    }
    const create = target.create;
    try {
      if (create) {
        if (refs.exists(create.branch)) {
          throw new PcheckoutError(
            'ERR_BAD_REF',
            `a branch named '${create.branch}' already exists`,
          );
        }
        const refPath = join(repo.commonDir, create.branch);
        makeDirs(repo, join(refPath, '..'));
        this.branchLock = new LockFile(refPath, 'ERR_REF_LOCKED', repo.shared);
        this.branchLock.write(`${create.oid}\n`);
        const entries = trackingConfig(repo, create);
        const name = create.branch.replace(/^refs\/heads\//, '');
        if (entries.length > 0) this.config = new ConfigEdit(repo, 'branch', name, entries);
        const upstream = create.startPoint.replace(/^refs\/remotes\//, '');
        this.newBranch = { name, upstream: entries.length > 0 ? upstream : null };
      }
      this.head = refs.lockHead(
        target.branch !== null ? { branch: target.branch } : { oid: target.commit! },
      );
    } catch (err) {
      this.rollback();
      throw err;
    }
  }

  /**
   * Moves HEAD (and creates the branch); `oldOid` and `from` describe HEAD before. `durable`:
   * the new files are fsynced before they are renamed into place (fsync file or batch).
   */
  commit(oldOid: string | undefined, from: string, durable = false): void {
    const { refs, target } = this;
    const create = target.create;
    if (create && this.branchLock) {
      this.branchLock.commit(durable);
      this.config?.commit();
      refs.appendLog(
        create.branch,
        ZERO_OID,
        create.oid,
        `branch: Created from ${create.startPoint}`,
      );
    }
    this.head.commit(durable);
    refs.appendHeadLog(
      oldOid ?? ZERO_OID,
      target.commit!,
      `checkout: moving from ${from} to ${target.name}`,
    );
  }

  rollback(): void {
    // HEAD's lock is unset when the constructor failed before taking it.
    this.head?.rollback();
    this.branchLock?.rollback();
    this.config?.rollback();
  }
}
