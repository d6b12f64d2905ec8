import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PcheckoutError } from '../errors.js';
import { lazyFetchDisabled, promisorRemotes } from './promisor.js';
import type { Repo } from './repo.js';

/**
 * Why an object can be missing from a repository that is not damaged: a partial clone
 * (git clone --filter) holds only what it fetched and is promised the rest by a remote; a
 * shallow clone (git clone --depth) stops at the commits listed in .git/shallow. pcheckout
 * fetches a partial clone's missing blobs (run/fetch.ts), nothing else. Null for a complete
 * repository.
 */
export function incompleteness(repo: Repo): string | null {
  const promisors = promisorRemotes(repo);
  if (promisors.length > 0) {
    const remote = promisors[0]!;
    const filter = repo.config.get(`remote.${remote}.partialclonefilter`);
    const what = `this is a partial clone (${filter ? `--filter=${filter} ` : ''}from remote '${remote}')`;
    if (lazyFetchDisabled()) {
      return `${what} and GIT_NO_LAZY_FETCH turns lazy fetching off, so its missing blobs are not fetched`;
    }
    return `${what}: pcheckout fetches the missing blobs a checkout writes, but not missing commits or trees; fetch them first (a git checkout of the same revision does) or clone with --filter=blob:none or without --filter`;
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
