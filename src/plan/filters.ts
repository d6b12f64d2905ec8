/**
 * The two filters over a plan's rows: the pathspec (which rows a restore or a checkout of paths
 * touches) and the sparse checkout (which entries get the skip-worktree bit and keep their
 * files away). Each decision here is a plain function of what the planner found, so that it can
 * be tested on its own (test/plan-decisions.test.mjs).
 */
import type { PlanInput } from './plan.js';

/**
 * The rows the pathspec selects, 1 each (all of them when there is none); an item that matched
 * nothing stops the checkout here (git's "pathspec ... did not match any file(s) known to git").
 * Matched against what the entries come from, as git does: the target's tree for a checkout of
 * paths, the index for a restore (`from`: the rows' positions in that list, -1 where absent).
 */
export function pathspecScope(
  pathspec: PlanInput['pathspec'],
  from: Int32Array,
  count: number,
  name: (row: number) => string,
): Uint8Array {
  const scoped = new Uint8Array(count).fill(1);
  if (!pathspec) return scoped;
  for (let r = 0; r < count; r++) scoped[r] = from[r]! >= 0 && pathspec.matches(name(r)) ? 1 : 0;
  pathspec.assertAllMatched();
  return scoped;
}

/**
 * The rows of a checkout of paths whose files are written (1), of those the pathspec selects.
 * git writes them in a second pass whose pathspec match skips an item once it matched a path
 * exactly (its `seen` optimisation): a glob that is also a file name (`lit/star*.txt`) then
 * updates the index for every match but writes only that file. Null without a pathspec.
 */
export function worktreeScope(
  pathspec: PlanInput['pathspec'],
  scoped: Uint8Array,
  name: (row: number) => string,
): Uint8Array | null {
  if (!pathspec) return null;
  const matcher = pathspec.worktreeMatcher();
  const out = new Uint8Array(scoped.length);
  for (let r = 0; r < scoped.length; r++) {
    if (scoped[r] === 1) out[r] = matcher(name(r)) ? 1 : 0;
  }
  return out;
}

/**
 * What becomes of the file of an entry the merge keeps as it is, once the sparse patterns are
 * applied (git's apply_sparse_checkout: "If skip-worktree turns from set to unset, it will add
 * the corresponding file back. If it turns from unset to set, that file will be removed"), git
 * removing only a file that is up to date (a modified one stays, its entry unmarked):
 * - 'check out': back in the cone, the file is written from the index;
 * - 'remove':    leaving the cone, the file goes and the entry is marked skip-worktree;
 * - 'none':      the bit does not change (or the file is modified and stays).
 */
export function sparseForKept(
  skipWorktree: boolean,
  inCone: boolean,
  uptodate: boolean,
): 'check out' | 'remove' | 'none' {
  if (inCone && skipWorktree) return 'check out';
  if (!inCone && !skipWorktree && uptodate) return 'remove';
  return 'none';
}

/**
 * What becomes of the file of a tracked, checked-out entry whose new version lies outside the
 * cone: 'remove' (the entry is recorded skip-worktree without its file) or 'stay' (git leaves a
 * modified file or symlink checked out, the entry written as any other). A forced checkout
 * (`reset`) removes it even when modified: git's oneway_merge marks such an entry for update,
 * and apply_sparse_checkout then removes every file marked so without looking.
 */
export function sparseForUpdated(reset: boolean, modified: boolean): 'remove' | 'stay' {
  return !reset && modified ? 'stay' : 'remove';
}
