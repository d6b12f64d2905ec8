/**
 * Which files go through external filters: each path's `filter` attribute naming a driver that
 * filters (write/filters.ts). For the write, the plan's files split into filtered and plain;
 * for the dirty check, the clean step git applies before hashing a file.
 */
import type { NativeOdb } from '../addon.js';
import type { Repo } from '../repo/repo.js';
import type { FilterDriver, FilterSession } from '../write/filters.js';
import { Attributes, filterAttributes } from './attributes.js';
import type { EntryList } from './entries.js';
import type { FileTask } from './locate.js';
import type { ToGit } from './probe.js';

/** plan.files split: the entries an external filter handles, and the rest (pool or in process). */
export interface FilterPartition {
  /** In index order, with their drivers. */
  filtered: { task: FileTask; driver: FilterDriver }[];
  /** In plan order (pack order). */
  plain: FileTask[];
}

interface Where {
  repo: Repo;
  odb: NativeOdb;
  worktree: string;
  warn: (message: string) => void;
}

/**
 * Splits the files to write by their `filter` attribute, read as git reads it for this write:
 * from the new index first for a checkout of a tree (unpack_trees), from the worktree first for
 * a checkout from the index or of paths.
 */
export function partitionFiltered(
  where: Where,
  session: FilterSession,
  result: EntryList,
  files: FileTask[],
  direction: 'checkout' | 'checkin',
): FilterPartition {
  if (session.drivers.size === 0) return { filtered: [], plain: files };
  const attributes = new Attributes({ ...where, list: result, direction }, ['filter']);
  const names = filterAttributes(
    attributes,
    result,
    files.map((f) => f.index),
  );
  const filtered: FilterPartition['filtered'] = [];
  const plain: FileTask[] = [];
  for (const task of files) {
    const driver = session.driver(names[task.index]);
    if (driver) filtered.push({ task, driver });
    else plain.push(task);
  }
  filtered.sort((a, b) => a.task.index - b.task.index);
  return { filtered, plain };
}

/**
 * The dirty check's clean step: for a path whose `filter` attribute names a configured driver,
 * its content through that driver (git's convert_to_git, attributes read worktree first).
 */
export function cleanStep(where: Where, session: FilterSession, index: EntryList | null): ToGit {
  if (session.drivers.size === 0) return () => null;
  let attributes: Attributes | undefined;
  return (path) => {
    attributes ??= new Attributes({ ...where, list: index, direction: 'checkin' }, ['filter']);
    const name = attributes.lookup(path)[0];
    return typeof name === 'string' && session.drivers.has(name)
      ? (content) => session.clean(name, path, content)
      : null;
  };
}
