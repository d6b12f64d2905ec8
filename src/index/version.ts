import type { Repo } from '../repo/repo.js';
import type { IndexFile } from './read.js';

/**
 * The index version git would write: an existing index keeps its own (unpack-trees carries it
 * over); a new one takes GIT_INDEX_VERSION, else index.version, else 4 under feature.manyFiles,
 * else 3 — which git (and buildIndex) writes as 2 unless an entry needs extended flags.
 */
export function indexVersion(repo: Repo, current: IndexFile | null): 2 | 3 | 4 {
  const pick = (v: number | undefined): 2 | 3 | 4 | undefined =>
    v === 2 || v === 3 || v === 4 ? v : undefined;
  const version =
    pick(current?.version) ??
    pick(Number(process.env['GIT_INDEX_VERSION'] || NaN)) ??
    pick(repo.config.getInt('index.version')) ??
    (repo.config.getBool('feature.manyfiles') === true ? 4 : 3);
  return version === 3 ? 2 : version;
}
