import { PcheckoutError } from '../errors.js';
import type { Repo } from './repo.js';

/** A local branch `git checkout <name>` creates from `<remote>/<name>` (checkout.guess). */
export interface NewBranch {
  /** refs/heads/<name> */
  branch: string;
  /** The remote-tracking ref it starts from, e.g. refs/remotes/origin/<name>. */
  startPoint: string;
  oid: string;
  /** branch.<name>.remote and branch.<name>.merge, as git's setup_tracking writes them. */
  remote: string;
  merge: string;
}

interface RefLookup {
  resolve(name: string): string | undefined;
}

/** Maps `ref` through one fetch refspec (src:dst, one `*` at most); undefined if it does not match. */
function mapRefspec(spec: string, ref: string): string | undefined {
  const s = spec.startsWith('+') ? spec.slice(1) : spec;
  if (s.startsWith('^')) return undefined; // negative refspec
  const colon = s.indexOf(':');
  if (colon < 0) return undefined;
  const src = s.slice(0, colon);
  const dst = s.slice(colon + 1);
  const star = src.indexOf('*');
  if (star < 0) return src === ref ? dst : undefined;
  const head = src.slice(0, star);
  const tail = src.slice(star + 1);
  if (!ref.startsWith(head) || !ref.endsWith(tail) || ref.length < head.length + tail.length)
    return undefined;
  const middle = ref.slice(head.length, ref.length - tail.length);
  return dst.replace('*', middle);
}

/**
 * git's unique_tracking_name: the remote-tracking branch for `name` when exactly one remote has
 * it, or when checkout.defaultRemote names one of those that do.
 */
export function guessRemoteBranch(
  repo: Repo,
  refs: RefLookup,
  name: string,
): NewBranch | undefined {
  const source = `refs/heads/${name}`;
  const matches: NewBranch[] = [];
  const remotes = new Set<string>();
  for (const key of repo.config.keys()) {
    const m = /^remote\.(.+)\.fetch$/.exec(key);
    if (m) remotes.add(m[1]!);
  }
  for (const remote of remotes) {
    for (const spec of repo.config.getAll(`remote.${remote}.fetch`)) {
      const dst = mapRefspec(spec.trim(), source);
      const oid = dst === undefined ? undefined : refs.resolve(dst);
      if (dst === undefined || oid === undefined) continue;
      matches.push({ branch: source, startPoint: dst, oid, remote, merge: source });
      break;
    }
  }
  if (matches.length <= 1) return matches[0];
  const preferred = repo.config.get('checkout.defaultremote');
  const chosen = matches.find((b) => b.remote === preferred);
  if (chosen) return chosen;
  throw new PcheckoutError(
    'ERR_AMBIGUOUS_REF',
    `'${name}' matched multiple (${matches.length}) remote tracking branches (${matches
      .map((b) => b.startPoint.replace(/^refs\/remotes\//, ''))
      .join(', ')}); set checkout.defaultRemote or name the remote branch`,
  );
}

/** The config entries git's setup_tracking writes for a new branch, per branch.autoSetup*. */
export function trackingConfig(repo: Repo, b: NewBranch): [string, string][] {
  const setup = repo.config.get('branch.autosetupmerge')?.trim().toLowerCase();
  if (setup === 'false' || setup === 'no' || setup === 'off' || setup === '0') return [];
  const entries: [string, string][] = [
    ['remote', b.remote],
    ['merge', b.merge],
  ];
  const rebase = repo.config.get('branch.autosetuprebase')?.trim().toLowerCase();
  if (rebase === 'always' || rebase === 'remote') entries.push(['rebase', 'true']);
  return entries;
}
