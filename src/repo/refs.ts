import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import type { NativeOdb } from '../addon.js';
import { PcheckoutError, fromNative, fromSystem } from '../errors.js';
import { LockFile } from '../lock.js';
import { commitParents, commitTree, isFullHex, readObject, tagTarget } from './objects.js';
import type { Repo } from './repo.js';

interface RefValue {
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
}

const PER_WORKTREE = /^(HEAD|refs\/bisect\/|refs\/worktree\/|refs\/rewritten\/)/;

export class Refs {
  private packed: Map<string, string> | undefined;

  constructor(private readonly repo: Repo) {}

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
    const lock = new LockFile(join(this.repo.gitDir, 'HEAD'), 'ERR_REF_LOCKED');
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
    const logPath = join(this.repo.gitDir, 'logs', 'HEAD');
    const enabled =
      this.repo.config.getBool('core.logallrefupdates') ??
      this.repo.config.getBool('core.bare') !== true;
    if (!enabled && !existsSync(logPath)) return;
    const name =
      process.env['GIT_COMMITTER_NAME'] ?? this.repo.config.get('user.name') ?? safeUser();
    const email =
      process.env['GIT_COMMITTER_EMAIL'] ??
      this.repo.config.get('user.email') ??
      `${safeUser()}@${hostname()}`;
    const now = Math.floor(Date.now() / 1000);
    const offset = -new Date().getTimezoneOffset();
    const tz = `${offset >= 0 ? '+' : '-'}${String(Math.floor(Math.abs(offset) / 60)).padStart(2, '0')}${String(Math.abs(offset) % 60).padStart(2, '0')}`;
    try {
      mkdirSync(dirname(logPath), { recursive: true });
      appendFileSync(logPath, `${oldOid} ${newOid} ${name} <${email}> ${now} ${tz}\t${message}\n`);
    } catch {
      // The reflog is a convenience; a failure to append must not fail a finished checkout.
    }
  }
}

function safeUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

/** git's check_refname_format, reduced to what keeps a name from escaping the refs directory. */
function isRefName(name: string): boolean {
  if (name === '' || name.startsWith('/') || name.endsWith('/') || name.endsWith('.lock'))
    return false;
  if (/(^|\/)\.|\.\.|\/\/|[\x00-\x20~^:?*[\\\x7f]|@\{/.test(name)) return false;
  return true;
}

/**
 * Resolves a revision as `git checkout` does: a local branch name switches to the branch;
 * anything else (object id, abbreviated id, tag, remote branch, `rev~n`, `rev^n`, `rev^{type}`)
 * detaches HEAD at the commit it names.
 */
export function resolveRevision(refs: Refs, odb: NativeOdb, spec: string | undefined): Resolved {
  if (spec === undefined || spec === 'HEAD') {
    const head = refs.read('HEAD');
    const oid = refs.resolve('HEAD');
    if (oid === undefined) {
      const target = head?.symref ?? 'HEAD';
      throw new PcheckoutError(
        'ERR_BAD_REF',
        `HEAD does not point to a commit (${target} is unborn); name a revision to check out`,
      );
    }
    const commit = peelTo(odb, oid, 'commit', 'HEAD');
    return {
      commit,
      tree: commitTree(readObject(odb, commit).data, commit),
      branch: null,
      keepHead: true,
    };
  }
  const branchRef = `refs/heads/${spec}`;
  if (!spec.startsWith('refs/') && isRefName(branchRef) && refs.exists(branchRef)) {
    const commit = peelTo(odb, refs.resolve(branchRef)!, 'commit', spec);
    return {
      commit,
      tree: commitTree(readObject(odb, commit).data, commit),
      branch: branchRef,
      keepHead: false,
    };
  }
  const m = /^(.*?)((?:[~^][0-9]*|\^\{[a-z]*\})*)$/.exec(spec)!;
  const base = m[1]!;
  const suffix = m[2]!;
  if (base === '') throw badRef(spec);
  let oid = resolveBase(refs, odb, base, spec);
  let kind: 'commit' | 'tree' = 'commit';
  for (const op of suffix.match(/~[0-9]*|\^\{[a-z]*\}|\^[0-9]*/g) ?? []) {
    if (op.startsWith('^{')) {
      const want = op.slice(2, -1);
      if (want === 'tree') {
        oid = peelTo(odb, oid, 'tree', spec);
        kind = 'tree';
      } else if (want === 'commit' || want === '') {
        oid = want === '' ? peelTags(odb, oid) : peelTo(odb, oid, 'commit', spec);
      } else {
        throw badRef(spec, `unsupported peel ^{${want}}`);
      }
      continue;
    }
    const n = op.length > 1 ? Number(op.slice(1)) : 1;
    oid = peelTo(odb, oid, 'commit', spec);
    if (op.startsWith('~')) {
      for (let i = 0; i < n; i++) oid = nthParent(odb, oid, 1, spec);
    } else if (n > 0) {
      oid = nthParent(odb, oid, n, spec);
    }
  }
  if (kind === 'tree') return { commit: null, tree: oid, branch: null, keepHead: true };
  const peeled = peelTags(odb, oid);
  const obj = readObject(odb, peeled);
  if (obj.type === 'tree') return { commit: null, tree: peeled, branch: null, keepHead: true };
  if (obj.type !== 'commit') throw badRef(spec, `it names a ${obj.type}`);
  return { commit: peeled, tree: commitTree(obj.data, peeled), branch: null, keepHead: false };
}

function badRef(spec: string, why?: string): PcheckoutError {
  return new PcheckoutError(
    'ERR_BAD_REF',
    `'${spec}' does not name a commit${why ? ` (${why})` : ''}`,
  );
}

function resolveBase(refs: Refs, odb: NativeOdb, base: string, spec: string): string {
  if (isFullHex(base)) return base.toLowerCase();
  for (const candidate of [
    base,
    `refs/${base}`,
    `refs/tags/${base}`,
    `refs/heads/${base}`,
    `refs/remotes/${base}`,
    `refs/remotes/${base}/HEAD`,
  ]) {
    if (candidate !== base && !isRefName(candidate)) continue;
    if (
      candidate === base &&
      base !== 'HEAD' &&
      !base.startsWith('refs/') &&
      !/^[A-Z_]+$/.test(base)
    )
      continue;
    const oid = refs.resolve(candidate);
    if (oid !== undefined) return oid;
  }
  if (/^[0-9a-f]{4,39}$/i.test(base)) {
    let found;
    try {
      found = odb.resolvePrefix(base.toLowerCase());
    } catch (err) {
      throw fromNative(err, `cannot look up ${base}`);
    }
    if (found.count === 2)
      throw new PcheckoutError('ERR_AMBIGUOUS_REF', `short object id ${base} is ambiguous`);
    if (found.count === 1) return found.oid!.toString('hex');
  }
  throw badRef(spec, 'no such branch, tag or object');
}

function peelTags(odb: NativeOdb, oid: string): string {
  let current = oid;
  for (let depth = 0; depth < 20; depth++) {
    const obj = readObject(odb, current);
    if (obj.type !== 'tag') return current;
    current = tagTarget(obj.data, current).target;
  }
  throw new PcheckoutError('ERR_CORRUPT_OBJECT', `tag chain from ${oid} is too long`, { oid });
}

function peelTo(odb: NativeOdb, oid: string, want: 'commit' | 'tree', spec: string): string {
  const peeled = peelTags(odb, oid);
  const obj = readObject(odb, peeled);
  if (obj.type === want) return peeled;
  if (want === 'tree' && obj.type === 'commit') return commitTree(obj.data, peeled);
  throw badRef(spec, `${peeled} is a ${obj.type}, not a ${want}`);
}

function nthParent(odb: NativeOdb, commit: string, n: number, spec: string): string {
  const parents = commitParents(readObject(odb, commit).data, commit);
  const p = parents[n - 1];
  if (p === undefined) throw badRef(spec, `${commit} has no parent ${n}`);
  return p;
}
