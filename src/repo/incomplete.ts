import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PcheckoutError } from '../errors.js';
import type { Repo } from './repo.js';

/**
 * Why an object can be missing from a repository that is not damaged: a partial clone
 * (git clone --filter) holds only what it fetched and is promised the rest by a remote; a
 * shallow clone (git clone --depth) stops at the commits listed in .git/shallow. Neither is
 * fetched by pcheckout. Null for a complete repository.
 */
export function incompleteness(repo: Repo): string | null {
  const promisors = [...repo.config.keys()]
    .filter((k) => /^remote\..*\.promisor$/.test(k) && repo.config.getBool(k) === true)
    .map((k) => k.slice('remote.'.length, -'.promisor'.length));
  if (promisors.length > 0 || repo.config.get('extensions.partialclone') !== undefined) {
    const remote = promisors[0] ?? repo.config.get('extensions.partialclone')!;
    const filter = repo.config.get(`remote.${remote}.partialclonefilter`);
    return `this is a partial clone (${filter ? `--filter=${filter} ` : ''}from remote '${remote}'): its missing objects are fetched on demand by git, not by pcheckout; fetch them first (a git checkout of the same revision does) or clone without --filter`;
  }
  let shallow = '';
  try {
    shallow = readFileSync(join(repo.commonDir, 'shallow'), 'latin1').trim();
  } catch {
    /* not shallow */
  }
  if (shallow !== '') {
    return 'this is a shallow clone: objects beyond its shallow boundary (.git/shallow) are not in it; deepen it first (git fetch --deepen=<n> or --unshallow)';
  }
  return null;
}

/** A missing-object error, with the reason the repository may lack the object when it has one. */
export function explainMissing(err: unknown, repo: Repo): unknown {
  if (!(err instanceof PcheckoutError) || err.code !== 'ERR_MISSING_OBJECT') return err;
  const why = incompleteness(repo);
  if (why === null) return err;
  return new PcheckoutError('ERR_MISSING_OBJECT', `${err.message}: ${why}`, {
    ...(err.path !== undefined ? { path: err.path } : {}),
    ...(err.oid !== undefined ? { oid: err.oid } : {}),
    ...(err.paths !== undefined ? { paths: err.paths } : {}),
    cause: err,
  });
}
