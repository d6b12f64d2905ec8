import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { NativeOdb } from '../addon.js';
import { PcheckoutError, fromSystem } from '../errors.js';
import { LockFile } from '../lock.js';
import { commitTree, isFullHex, readObject } from './objects.js';
import { appendReflog, readReflog, type ReflogEntry } from './reflog.js';
import type { Repo } from './repo.js';
import {
  badRef,
  dwimRef,
  evaluate,
  isRefName,
  nthPriorCheckout,
  peelTags,
  peelToType,
} from './revision.js';
import { guessRemoteBranch, type NewBranch } from './tracking.js';

export { isRefName } from './revision.js';
export type { NewBranch } from './tracking.js';

export interface RefValue {
  oid?: string;
  symref?: string;
}

/** What a revision resolved to, and what HEAD should become if it is checked out. */
export interface Resolved {
  /** The commit, or null when the revision names a tree. */
  commit: string | null;
  tree: string;
  /** The full branch name HEAD should point at, e.g. refs/heads/main; null = detach (or keep). */
  branch: string | null;
  /** True when HEAD is to be left as it is (no revision given, or "HEAD"). */
  keepHead: boolean;
  /** The name for HEAD's reflog ("checkout: moving from X to <name>"), as git writes it. */
  name: string;
  /** A local branch to create from a remote-tracking branch first (git's checkout.guess). */
  create?: NewBranch;
}

export interface ResolveOptions {
  /** Accept a tree (`rev^{tree}`, a tree id, a tag of a tree): for a materialize, not a checkout. */
  allowTree?: boolean;
}

const PER_WORKTREE = /^(HEAD|refs\/bisect\/|refs\/worktree\/|refs\/rewritten\/)/;

export class Refs {
  private packed: Map<string, string> | undefined;

  constructor(readonly repo: Repo) {}

  private loosePath(name: string): string {
    return join(PER_WORKTREE.test(name) ? this.repo.gitDir : this.repo.commonDir, name);
  }

  private packedRefs(): Map<string, string> {
    if (this.packed) return this.packed;
    this.packed = new Map();
    let text = '';
    try {
      text = readFileSync(join(this.repo.commonDir, 'packed-refs'), 'utf8');
    } catch {
      return this.packed;
    }
    for (const line of text.split('\n')) {
      if (line === '' || line.startsWith('#') || line.startsWith('^')) continue; // peeled lines: we peel ourselves
      const m = /^([0-9a-f]{40}) (\S+)$/.exec(line);
      if (m) this.packed.set(m[2]!, m[1]!);
    }
    return this.packed;
  }

  /** The raw value of one ref (one level, no following). */
  read(name: string): RefValue | undefined {
    if (!isRefName(name)) return undefined;
    let text: string | undefined;
    try {
      text = readFileSync(this.loosePath(name), 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR' && code !== 'EISDIR')
        throw fromSystem(err, 'read ref', name);
    }
    if (text !== undefined) {
      const line = text.trim();
      if (line.startsWith('ref:')) return { symref: line.slice(4).trim() };
      if (isFullHex(line)) return { oid: line.toLowerCase() };
      throw new PcheckoutError('ERR_BAD_REF', `ref ${name} is malformed`);
    }
    const packed = this.packedRefs().get(name);
    return packed === undefined ? undefined : { oid: packed };
  }

  /** Follows symbolic refs to an object id; undefined if the ref (or its target) does not exist. */
  resolve(name: string): string | undefined {
    let current = name;
    for (let depth = 0; depth < 6; depth++) {
      const v = this.read(current);
      if (v === undefined) return undefined;
      if (v.oid !== undefined) return v.oid;
      current = v.symref!;
    }
    throw new PcheckoutError('ERR_BAD_REF', `symbolic ref ${name} nests too deeply`);
  }

  exists(name: string): boolean {
    return this.resolve(name) !== undefined;
  }

  /**
   * Takes HEAD.lock and writes the new value into it (a branch makes HEAD symbolic, an object id
   * detaches it). The caller commits the lock once the worktree and index are in place.
   */
  lockHead(value: { branch: string } | { oid: string }): LockFile {
    const lock = new LockFile(join(this.repo.gitDir, 'HEAD'), 'ERR_REF_LOCKED', this.repo.shared);
    try {
      lock.write('branch' in value ? `ref: ${value.branch}\n` : `${value.oid}\n`);
    } catch (err) {
      lock.rollback();
      throw err;
    }
    return lock;
  }

  /** Appends a line to logs/HEAD, as git does when HEAD moves. */
  appendHeadLog(oldOid: string, newOid: string, message: string): void {
    appendReflog(this.repo, 'HEAD', oldOid, newOid, message);
  }

  appendLog(ref: string, oldOid: string, newOid: string, message: string): void {
    appendReflog(this.repo, ref, oldOid, newOid, message);
  }

  readLog(ref: string): ReflogEntry[] {
    return readReflog(this.repo, ref);
  }

  /** The object id of every ref under refs/ (loose and packed), then HEAD's. */
  tips(): string[] {
    const names = new Set(this.packedRefs().keys());
    const walk = (dir: string, prefix: string): void => {
      let entries;
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) {
        if (e.isDirectory()) walk(join(dir, e.name), `${prefix}${e.name}/`);
        else if (e.isFile()) names.add(`${prefix}${e.name}`);
      }
    };
    walk(join(this.repo.commonDir, 'refs'), 'refs/');
    const out: string[] = [];
    for (const name of [...names].sort()) {
      const oid = isRefName(name) ? this.resolve(name) : undefined;
      if (oid !== undefined) out.push(oid);
    }
    const head = this.resolve('HEAD');
    if (head !== undefined) out.push(head);
    return out;
  }
}

/**
 * Resolves a revision as `git checkout` does: a local branch name switches to the branch (so do
 * `-` and `@{-n}` when the previous checkout was of a branch); a name that is nothing else but
 * exists as `<remote>/<name>` creates the local branch tracking it (checkout.guess); anything
 * else (ids, tags, remote branches, `rev~n`, `rev^{/text}`, `:/text`, `ref@{n}`, `@`, …)
 * detaches HEAD at the commit it names. A tree is refused unless `allowTree`.
 */
export function resolveRevision(
  refs: Refs,
  odb: NativeOdb,
  spec: string | undefined,
  options: ResolveOptions = {},
): Resolved {
  if (spec === undefined || spec === 'HEAD') return resolveHead(refs, odb);
  // `-` is `@{-1}`: the branch (or commit) the last checkout left.
  // As git's strbuf_branchname, a leading @{-n} is replaced by the name (also in the reflog).
  let expr = spec === '-' ? '@{-1}' : spec;
  const prior = /^@\{-(\d+)\}/.exec(expr);
  if (prior) {
    const from = Number(prior[1]) > 0 ? nthPriorCheckout(refs, Number(prior[1])) : undefined;
    if (from === undefined) throw badRef(spec, "HEAD's reflog has no such previous checkout");
    expr = from + expr.slice(prior[0].length);
  }
  const branchRef = `refs/heads/${expr}`;
  if (!expr.startsWith('refs/') && isRefName(branchRef) && refs.exists(branchRef)) {
    const commit = peelToType(odb, refs.resolve(branchRef)!, 'commit', spec);
    return {
      commit,
      tree: commitTree(readObject(odb, commit).data, commit),
      branch: branchRef,
      keepHead: false,
      name: expr,
    };
  }
  const guessed = guessBranch(refs, odb, spec, expr);
  if (guessed !== undefined) return guessed;
  const peeled = peelTags(odb, evaluate(refs, odb, expr));
  const obj = readObject(odb, peeled);
  if (obj.type === 'tree') {
    if (!options.allowTree) {
      throw new PcheckoutError(
        'ERR_BAD_REF',
        `Cannot switch branch to a non-commit '${spec}' (${peeled} is a tree)`,
      );
    }
    return { commit: null, tree: peeled, branch: null, keepHead: true, name: spec };
  }
  if (obj.type !== 'commit') throw badRef(spec, `it names a ${obj.type}`);
  return {
    commit: peeled,
    tree: commitTree(obj.data, peeled),
    branch: null,
    keepHead: false,
    name: expr,
  };
}

/** HEAD itself (no revision named): its commit, HEAD left as it is. */
function resolveHead(refs: Refs, odb: NativeOdb): Resolved {
  const head = refs.read('HEAD');
  const oid = refs.resolve('HEAD');
  if (oid === undefined) {
    const target = head?.symref ?? 'HEAD';
    throw new PcheckoutError(
      'ERR_BAD_REF',
      `HEAD does not point to a commit (${target} is unborn); name a revision to check out`,
    );
  }
  const commit = peelToType(odb, oid, 'commit', 'HEAD');
  return {
    commit,
    tree: commitTree(readObject(odb, commit).data, commit),
    branch: null,
    keepHead: true,
    name: 'HEAD',
  };
}

/**
 * checkout.guess: a name that is no branch, ref, id or pattern but exists as
 * `<remote>/<name>` creates the local branch tracking it (guessRemoteBranch says which).
 */
function guessBranch(refs: Refs, odb: NativeOdb, spec: string, expr: string): Resolved | undefined {
  if (
    !isRefName(`refs/heads/${expr}`) ||
    expr.startsWith('refs/') ||
    /[?*[\\]/.test(expr) ||
    dwimRef(refs, expr) !== undefined ||
    isFullHex(expr) ||
    isShortId(odb, expr) ||
    refs.repo.config.getBool('checkout.guess') === false
  )
    return undefined;
  const create = guessRemoteBranch(refs.repo, refs, expr);
  if (create === undefined) return undefined;
  const commit = peelToType(odb, create.oid, 'commit', spec);
  return {
    commit,
    tree: commitTree(readObject(odb, commit).data, commit),
    branch: create.branch,
    keepHead: false,
    name: expr,
    create,
  };
}

function isShortId(odb: NativeOdb, s: string): boolean {
  if (!/^[0-9a-f]{4,39}$/i.test(s)) return false;
  try {
    return odb.resolvePrefix(s.toLowerCase()).count > 0;
  } catch {
    return false;
  }
}
