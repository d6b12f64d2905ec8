/**
 * What a call changes, by path, for a caller that invalidates caches by path (a build system)
 * instead of walking the tree: the plan read against the index it replaces.
 */
import type { IndexFile } from '../index/read.js';
import type { Plan } from '../plan/plan.js';

const display = (latin1: string): string => Buffer.from(latin1, 'latin1').toString('utf8');
const bytewise = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

export interface Changes {
  /** Paths written that the index did not have (a fresh checkout: every path). */
  created: string[];
  /** Paths the index had, rewritten: new content, mode or type, or restored where missing or modified. */
  updated: string[];
  /** Paths the index had and the new one does not (removed from the worktree where they were). */
  deleted: string[];
}

/**
 * The plan's changes by path (UTF-8, relative to the worktree top, in index order): a merge of
 * the old index's names with the new one's, both sorted as git sorts them (bytewise).
 */
export function changesOf(plan: Plan, current: IndexFile | null): Changes {
  const { result, write } = plan;
  const old = current?.entries ?? null;
  const changes: Changes = { created: [], updated: [], deleted: [] };
  let i = 0;
  const oldCount = old?.count ?? 0;
  for (let k = 0; k < result.count; k++) {
    const name = result.name(k);
    // Old entries sorting before this one are gone (stages of one path: counted once).
    while (i < oldCount && old!.name(i) < name) {
      const gone = old!.name(i);
      changes.deleted.push(old!.display(i));
      while (i < oldCount && old!.name(i) === gone) i++;
    }
    const had = i < oldCount && old!.name(i) === name;
    if (had) while (i < oldCount && old!.name(i) === name) i++;
    if (write[k] !== 1) continue;
    (had ? changes.updated : changes.created).push(result.display(k));
  }
  for (; i < oldCount;) {
    const gone = old!.name(i);
    changes.deleted.push(old!.display(i));
    while (i < oldCount && old!.name(i) === gone) i++;
  }
  // Entries the index keeps but the worktree loses (leaving a sparse checkout's cone).
  const listed = new Set(changes.deleted);
  const more = plan.deletes.map((d) => display(d.path)).filter((p) => !listed.has(p));
  if (more.length > 0) {
    changes.deleted.push(...more);
    changes.deleted.sort(bytewise);
  }
  return changes;
}
