/**
 * The refusals of a plan, worded as git words them: local changes or untracked files a switch
 * would lose, and an index with unmerged entries.
 */
import { PcheckoutError } from '../errors.js';
import type { CurrentIndex } from './plan.js';

/** A latin1 path (see EntryList.name) for people to read. */
export const display = (latin1: string): string => Buffer.from(latin1, 'latin1').toString('utf8');

/** Conflicts, worded as git words them for `git checkout`. */
export class Conflicts {
  readonly localChanges: string[] = [];
  readonly untrackedOverwritten: string[] = [];
  readonly untrackedRemoved: string[] = [];
  readonly dirsLosingUntracked: string[] = [];

  get count(): number {
    return (
      this.localChanges.length +
      this.untrackedOverwritten.length +
      this.untrackedRemoved.length +
      this.dirsLosingUntracked.length
    );
  }

  error(): PcheckoutError {
    const parts: string[] = [];
    const list = (paths: string[]): string => paths.map((p) => `\t${p}\n`).join('');
    if (this.localChanges.length > 0)
      parts.push(
        `Your local changes to the following files would be overwritten by checkout:\n${list(this.localChanges)}Please commit your changes or stash them before you switch branches.`,
      );
    if (this.dirsLosingUntracked.length > 0)
      parts.push(
        `Updating the following directories would lose untracked files in them:\n${list(this.dirsLosingUntracked)}`,
      );
    if (this.untrackedRemoved.length > 0)
      parts.push(
        `The following untracked working tree files would be removed by checkout:\n${list(this.untrackedRemoved)}Please move or remove them before you switch branches.`,
      );
    if (this.untrackedOverwritten.length > 0)
      parts.push(
        `The following untracked working tree files would be overwritten by checkout:\n${list(this.untrackedOverwritten)}Please move or remove them before you switch branches.`,
      );
    const paths = [
      ...this.localChanges,
      ...this.dirsLosingUntracked,
      ...this.untrackedRemoved,
      ...this.untrackedOverwritten,
    ].sort();
    // Kept apart as git's message groups them: tracked files with local changes, and the
    // untracked ones (or directories holding them) the checkout would overwrite or remove.
    const untracked = [
      ...this.dirsLosingUntracked,
      ...this.untrackedRemoved,
      ...this.untrackedOverwritten,
    ].sort();
    return new PcheckoutError('ERR_WOULD_OVERWRITE', `${parts.join('\n')}\nAborting`, {
      paths,
      ...(paths.length === 1 ? { path: paths[0]! } : {}),
      overwrite: {
        modified: [...this.localChanges].sort(),
        untracked,
        overwritten: [...this.untrackedOverwritten].sort(),
        removed: [...this.untrackedRemoved].sort(),
        directories: [...this.dirsLosingUntracked].sort(),
      },
    });
  }
}

/** git's "you need to resolve your current index first". */
export function assertMerged(index: CurrentIndex): void {
  const { stages } = index;
  // Stages are 0-3 (two bits of the flags): three builtin scans instead of a loop per entry.
  if (stages.indexOf(1) < 0 && stages.indexOf(2) < 0 && stages.indexOf(3) < 0) return;
  const paths: string[] = [];
  for (let i = 0; i < index.entries.count; i++) {
    if (index.stages[i] !== 0) {
      const p = index.entries.display(i);
      if (paths[paths.length - 1] !== p) paths.push(p);
    }
  }
  if (paths.length === 0) return;
  throw new PcheckoutError(
    'ERR_UNMERGED',
    `you need to resolve your current index first\n${paths.map((p) => `${p}: needs merge`).join('\n')}`,
    { paths, ...(paths.length === 1 ? { path: paths[0]! } : {}) },
  );
}
