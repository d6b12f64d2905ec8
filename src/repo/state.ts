import { unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { Repo } from './repo.js';

// What an interrupted merge, cherry-pick, revert or squash leaves in the git directory.
const BRANCH_STATE = [
  'MERGE_HEAD',
  'MERGE_RR',
  'MERGE_MSG',
  'MERGE_MODE',
  'AUTO_MERGE',
  'SQUASH_MSG',
  'CHERRY_PICK_HEAD',
  'REVERT_HEAD',
];

/**
 * A successful `git checkout` ends any merge, cherry-pick or revert in progress by removing
 * its state files (git's remove_branch_state); a switch or forced checkout does the same.
 */
export function removeBranchState(repo: Repo): void {
  for (const name of BRANCH_STATE) {
    try {
      unlinkSync(join(repo.gitDir, name));
    } catch {
      /* not there */
    }
  }
}
