import type { NativeOdb } from '../addon.js';
import { PcheckoutError, fromNative } from '../errors.js';
import { commitParents, commitTree, isFullHex, readObject, tagTarget } from './objects.js';
import type { ReflogEntry } from './reflog.js';

/** What the evaluator needs from the refs (Refs implements it). */
export interface RefSource {
  read(name: string): { oid?: string; symref?: string } | undefined;
  resolve(name: string): string | undefined;
  readLog(ref: string): ReflogEntry[];
  /** Every ref's object id (HEAD last), for `:/text`. */
  tips(): string[];
}

export function badRef(spec: string, why?: string): PcheckoutError {
  return new PcheckoutError(
    'ERR_BAD_REF',
    `'${spec}' does not name a commit${why ? ` (${why})` : ''}`,
  );
}

function unsupported(spec: string, what: string): PcheckoutError {
  return new PcheckoutError('ERR_UNSUPPORTED', `'${spec}': ${what} is not supported`);
}

/** git's check_refname_format, reduced to what keeps a name from escaping the refs directory. */
export function isRefName(name: string): boolean {
  if (name === '' || name.startsWith('/') || name.endsWith('/') || name.endsWith('.lock'))
    return false;
  if (/(^|\/)\.|\.\.|\/\/|[\x00-\x20~^:?*[\\\x7f]|@\{/.test(name)) return false;
  return name !== '@';
}

/** The ref a short name means, in git's order (refs/…, tags, heads, remotes, remote HEAD). */
export function dwimRef(refs: RefSource, base: string): string | undefined {
  for (const candidate of [
    base,
    `refs/${base}`,
    `refs/tags/${base}`,
    `refs/heads/${base}`,
    `refs/remotes/${base}`,
    `refs/remotes/${base}/HEAD`,
  ]) {
    if (!isRefName(candidate)) continue;
    // As git: a bare name is a ref by itself only when it is HEAD-like (all caps) or under refs/.
    if (candidate === base && !base.startsWith('refs/') && !/^[A-Z_]+$/.test(base)) continue;
    if (refs.resolve(candidate) !== undefined) return candidate;
  }
  return undefined;
}

/** The branch (or detached commit) the n-th last `git checkout` left: `@{-n}`, `-`. */
export function nthPriorCheckout(refs: RefSource, n: number): string | undefined {
  const log = refs.readLog('HEAD');
  let seen = 0;
  for (let i = log.length - 1; i >= 0; i--) {
    const m = /^checkout: moving from (.*?) to /.exec(log[i]!.message);
    if (m && ++seen === n) return m[1]!;
  }
  return undefined;
}

/**
 * Evaluates a revision expression to an object id of any type, as git's get_oid does: a name
 * (ref, full or abbreviated id, `@`, `ref@{n}`, `@{-n}`), then suffixes applied from the left
 * (`~n`, `^n`, `^{type}`, `^{}`, `^{/regex}`); or `:/regex` on its own.
 */
export function evaluate(refs: RefSource, odb: NativeOdb, spec: string): string {
  if (spec.startsWith(':/')) return searchMessage(odb, refs.tips(), spec.slice(2), spec);
  // rev:path and :n:path name blobs and subtrees; ranges and ^!/^@ are sets of commits.
  // (A colon inside ^{/text} or @{date} is part of those.)
  if (spec.startsWith(':') || /:/.test(spec.replace(/\^\{\/.*?\}|@\{[^}]*\}/g, '')))
    throw unsupported(spec, 'the <rev>:<path> syntax');
  if (/\^[!@-]/.test(spec.replace(/\^\{\/.*?\}/g, ''))) throw unsupported(spec, 'a revision range');
  return evaluateIn(refs, odb, spec, spec);
}

function evaluateIn(refs: RefSource, odb: NativeOdb, name: string, spec: string): string {
  if (name.endsWith('}')) {
    const sp = name.lastIndexOf('^{');
    if (sp >= 0) {
      const inner = name.slice(sp + 2, -1);
      return peelOnion(odb, evaluateIn(refs, odb, name.slice(0, sp), spec), inner, spec);
    }
  }
  let i = name.length;
  while (i > 0 && name.charCodeAt(i - 1) >= 48 && name.charCodeAt(i - 1) <= 57) i--;
  const op = name[i - 1];
  if (i > 0 && (op === '~' || op === '^')) {
    const digits = name.slice(i);
    const n = digits === '' ? 1 : Number(digits);
    let oid = peelToType(odb, evaluateIn(refs, odb, name.slice(0, i - 1), spec), 'commit', spec);
    if (op === '~') for (let k = 0; k < n; k++) oid = nthParent(odb, oid, 1, spec);
    else if (n > 0) oid = nthParent(odb, oid, n, spec);
    return oid;
  }
  return basic(refs, odb, name, spec);
}

function basic(refs: RefSource, odb: NativeOdb, name: string, spec: string): string {
  if (name === '') throw badRef(spec);
  if (name === '@') return headOid(refs, spec);
  const at = name.indexOf('@{');
  if (at >= 0) {
    if (!name.endsWith('}')) throw badRef(spec);
    const ref = name.slice(0, at);
    const inner = name.slice(at + 2, -1);
    const prior = /^-(\d+)$/.exec(inner);
    if (prior && ref === '') {
      const n = Number(prior[1]);
      const from = n > 0 ? nthPriorCheckout(refs, n) : undefined;
      if (from === undefined) throw badRef(spec, `HEAD's reflog has no ${n}th previous checkout`);
      return basic(refs, odb, from, spec);
    }
    if (/^\d+$/.test(inner)) return reflogEntry(refs, ref, Number(inner), spec);
    if (/^(u|upstream|push)$/i.test(inner)) throw unsupported(spec, `@{${inner}}`);
    throw unsupported(spec, `@{${inner}} (a reflog by date)`);
  }
  if (isFullHex(name)) return name.toLowerCase();
  const ref = dwimRef(refs, name);
  if (ref !== undefined) return refs.resolve(ref)!;
  if (/^[0-9a-f]{4,39}$/i.test(name)) {
    let found;
    try {
      found = odb.resolvePrefix(name.toLowerCase());
    } catch (err) {
      throw fromNative(err, `cannot look up ${name}`);
    }
    if (found.count === 2)
      throw new PcheckoutError('ERR_AMBIGUOUS_REF', `short object id ${name} is ambiguous`);
    if (found.count === 1) return found.oid!.toString('hex');
  }
  throw badRef(spec, 'no such branch, tag or object');
}

function headOid(refs: RefSource, spec: string): string {
  const oid = refs.resolve('HEAD');
  if (oid === undefined) throw badRef(spec, 'HEAD is unborn');
  return oid;
}

/** `ref@{n}`: the n-th prior value of a ref; an empty ref is the current branch. */
function reflogEntry(refs: RefSource, ref: string, n: number, spec: string): string {
  let full: string | undefined;
  if (ref === '' || ref === '@') {
    full = ref === '' ? (refs.read('HEAD')?.symref ?? 'HEAD') : 'HEAD';
  } else {
    for (const candidate of [
      ref,
      `refs/${ref}`,
      `refs/tags/${ref}`,
      `refs/heads/${ref}`,
      `refs/remotes/${ref}`,
      `refs/remotes/${ref}/HEAD`,
    ]) {
      if (isRefName(candidate) && refs.readLog(candidate).length > 0) {
        full = candidate;
        break;
      }
    }
  }
  const log = full === undefined ? [] : refs.readLog(full);
  if (log.length === 0) throw badRef(spec, `no reflog for '${ref || 'HEAD'}'`);
  if (n >= log.length)
    throw badRef(spec, `log for '${ref || full}' only has ${log.length} entries`);
  return log[log.length - 1 - n]!.new;
}

function peelOnion(odb: NativeOdb, oid: string, inner: string, spec: string): string {
  if (inner === '') return peelTags(odb, oid);
  if (inner === 'object') {
    readObject(odb, oid); // it must exist
    return oid;
  }
  if (inner === 'commit' || inner === 'tree' || inner === 'blob' || inner === 'tag')
    return peelToType(odb, oid, inner, spec);
  if (inner.startsWith('/'))
    return searchMessage(odb, [peelToType(odb, oid, 'commit', spec)], inner.slice(1), spec);
  throw badRef(spec, `unknown peel ^{${inner}}`);
}

export function peelTags(odb: NativeOdb, oid: string): string {
  let current = oid;
  for (let depth = 0; depth < 20; depth++) {
    const obj = readObject(odb, current);
    if (obj.type !== 'tag') return current;
    current = tagTarget(obj.data, current).target;
  }
  throw new PcheckoutError('ERR_CORRUPT_OBJECT', `tag chain from ${oid} is too long`, { oid });
}

/** git's peel_to_type: follow tags (and a commit to its tree) until an object of `want`. */
export function peelToType(odb: NativeOdb, oid: string, want: string, spec: string): string {
  let current = oid;
  for (let depth = 0; depth < 20; depth++) {
    const obj = readObject(odb, current);
    if (obj.type === want) return current;
    if (obj.type === 'tag') current = tagTarget(obj.data, current).target;
    else if (obj.type === 'commit' && want === 'tree') return commitTree(obj.data, current);
    else throw badRef(spec, `${current} is a ${obj.type}, not a ${want}`);
  }
  throw new PcheckoutError('ERR_CORRUPT_OBJECT', `tag chain from ${oid} is too long`, { oid });
}

function nthParent(odb: NativeOdb, commit: string, n: number, spec: string): string {
  const parents = commitParents(readObject(odb, commit).data, commit);
  const p = parents[n - 1];
  if (p === undefined) throw badRef(spec, `${commit} has no parent ${n}`);
  return p;
}

function committerTime(data: Buffer): number {
  const end = data.indexOf('\n\n');
  const head = data.toString('latin1', 0, end < 0 ? data.length : end);
  const m = /^committer .*> (\d+) [-+]\d{4}$/m.exec(head);
  return m ? Number(m[1]) : 0;
}

/**
 * The youngest commit reachable from `starts` whose message matches `pattern` (an extended
 * regular expression, `.` matching newlines as with regexec); `!-` negates, `!!` is a literal `!`.
 * Commits are visited newest first by committer date, as git's get_oid_oneline does.
 */
function searchMessage(odb: NativeOdb, starts: string[], pattern: string, spec: string): string {
  let negate = false;
  let text = pattern;
  if (text.startsWith('!')) {
    if (text.startsWith('!-')) {
      negate = true;
      text = text.slice(2);
    } else if (text.startsWith('!!')) {
      text = text.slice(1);
    } else {
      throw unsupported(spec, `the ':/!' modifier '${text.slice(0, 2)}'`);
    }
  }
  let regex: RegExp;
  try {
    regex = new RegExp(text, 's');
  } catch (err) {
    throw badRef(spec, `bad regular expression: ${(err as Error).message}`);
  }
  interface Item {
    oid: string;
    time: number;
    data: Buffer;
  }
  const queue: Item[] = [];
  const seen = new Set<string>();
  const push = (oid: string): void => {
    if (seen.has(oid)) return;
    seen.add(oid);
    const obj = readObject(odb, oid);
    if (obj.type !== 'commit') return;
    const item = { oid, time: committerTime(obj.data), data: obj.data };
    // After every item of the same or a later date, as commit_list_insert_by_date.
    let k = 0;
    while (k < queue.length && queue[k]!.time >= item.time) k++;
    queue.splice(k, 0, item);
  };
  for (const s of starts) {
    try {
      push(peelTags(odb, s));
    } catch {
      /* a ref to something that is not a commit */
    }
  }
  while (queue.length > 0) {
    const item = queue.shift()!;
    const at = item.data.indexOf('\n\n');
    const message = at < 0 ? null : item.data.toString('utf8', at + 2);
    if (negate !== (message !== null && regex.test(message))) return item.oid;
    for (const p of commitParents(item.data, item.oid)) push(p);
  }
  throw badRef(spec, 'no commit message matches');
}
