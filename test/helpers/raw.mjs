// Repositories made byte by byte, for trees git's porcelain would never write: loose objects
// written directly (any tree entry name, any order), a minimal .git around them, and
// snapshots of whole directories (.git and the worktree's parent included) to prove a refused
// checkout wrote nothing anywhere.

import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { tmpDir } from './git.mjs';

/** Writes a loose object into `objectsDir`; returns its id. */
export function writeLoose(objectsDir, type, content) {
  const body = Buffer.isBuffer(content) ? content : Buffer.from(content);
  const raw = Buffer.concat([Buffer.from(`${type} ${body.length}\0`), body]);
  const id = crypto.createHash('sha1').update(raw).digest('hex');
  const file = path.join(objectsDir, id.slice(0, 2), id.slice(2));
  if (!fs.existsSync(file)) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, zlib.deflateSync(raw));
  }
  return id;
}

const MODES = {
  file: '100644',
  exec: '100755',
  symlink: '120000',
  gitlink: '160000',
  dir: '40000',
};

/** Git's tree order: names compared as bytes, a directory as if its name ended in '/'. */
function treeKey([kind, name]) {
  const b = Buffer.isBuffer(name) ? name : Buffer.from(name);
  return kind === 'dir' ? Buffer.concat([b, Buffer.from('/')]) : b;
}

/**
 * A tree object from [kind, name (string or Buffer), id] entries (kind: file, exec, symlink,
 * gitlink, dir). Sorted in git's order unless `sorted: false` (then written as given).
 */
export function writeTree(objectsDir, entries, { sorted = true } = {}) {
  const list = sorted
    ? [...entries].sort((a, b) => Buffer.compare(treeKey(a), treeKey(b)))
    : entries;
  const parts = list.map(([kind, name, id]) =>
    Buffer.concat([
      Buffer.from(`${MODES[kind]} `),
      Buffer.isBuffer(name) ? name : Buffer.from(name),
      Buffer.from([0]),
      Buffer.from(id, 'hex'),
    ]),
  );
  return writeLoose(objectsDir, 'tree', Buffer.concat(parts));
}

let clock = 1_700_000_000;
export function writeCommit(objectsDir, tree, parents = [], message = 'raw') {
  clock += 60;
  const who = `Test Author <author@example.com> ${clock} +0000`;
  const lines = [`tree ${tree}`, ...parents.map((p) => `parent ${p}`), `author ${who}`];
  return writeLoose(objectsDir, 'commit', `${lines.join('\n')}\ncommitter ${who}\n\n${message}\n`);
}

/**
 * A sandbox: `box/` holding `outside/` (a canary directory a hostile path would reach) and
 * `repo/`, a worktree whose .git borrows `objectsDir` through alternates, with branch main at
 * `commit`, no index, and `config` lines added under [core].
 */
export function rawRepo(objectsDir, commit, { prefix = 'raw', core = [] } = {}) {
  const box = tmpDir(prefix);
  fs.mkdirSync(path.join(box, 'outside'));
  fs.writeFileSync(path.join(box, 'outside', 'canary'), 'canary\n');
  const dir = path.join(box, 'repo');
  const gitDir = path.join(dir, '.git');
  fs.mkdirSync(path.join(gitDir, 'objects', 'info'), { recursive: true });
  fs.mkdirSync(path.join(gitDir, 'refs', 'heads'), { recursive: true });
  fs.mkdirSync(path.join(gitDir, 'refs', 'tags'));
  fs.mkdirSync(path.join(gitDir, 'hooks'));
  fs.writeFileSync(path.join(gitDir, 'objects', 'info', 'alternates'), `${objectsDir}\n`);
  fs.writeFileSync(path.join(gitDir, 'HEAD'), 'ref: refs/heads/main\n');
  fs.writeFileSync(path.join(gitDir, 'refs', 'heads', 'main'), `${commit}\n`);
  const extra = core.map((l) => `\t${l}\n`).join('');
  fs.writeFileSync(
    path.join(gitDir, 'config'),
    `[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n${extra}` +
      `[advice]\n\tdetachedHead = false\n[gc]\n\tauto = 0\n`,
  );
  return { box, dir, gitDir };
}

/** A shared object store for raw repositories. */
export function objectStore(prefix = 'objects') {
  const dir = tmpDir(prefix);
  fs.mkdirSync(path.join(dir, 'info'), { recursive: true });
  return dir;
}

/**
 * Everything under `dir` (names as exact bytes, shown latin1), never following a symlink:
 * Map(rel → description with type, mode, size, content hash or link target, inode).
 * `skip(rel)` leaves a subtree out.
 */
export function snapshotAll(dir, skip = () => false) {
  const out = new Map();
  const walk = (rel) => {
    const abs = rel ? Buffer.concat([Buffer.from(`${dir}/`), Buffer.from(rel, 'latin1')]) : dir;
    const names = fs.readdirSync(abs, { encoding: 'buffer' }).map((n) => n.toString('latin1'));
    for (const name of names.sort()) {
      const r = rel ? `${rel}/${name}` : name;
      if (skip(r)) continue;
      const p = Buffer.concat([Buffer.from(`${dir}/`), Buffer.from(r, 'latin1')]);
      const st = fs.lstatSync(p);
      let what;
      if (st.isSymbolicLink())
        what = `link -> ${fs.readlinkSync(p, { encoding: 'buffer' }).toString('latin1')}`;
      else if (st.isDirectory()) what = 'dir';
      else if (st.isFile())
        what = `file ${crypto.createHash('sha1').update(fs.readFileSync(p)).digest('hex')}`;
      else what = 'other';
      // A directory's mtime moves when a lock file comes and goes; its entries are compared.
      const mtime = st.isDirectory() ? '' : ` mtime ${st.mtimeMs}`;
      out.set(r, `${what} mode ${(st.mode & 0o7777).toString(8)} ino ${st.ino}${mtime}`);
      if (st.isDirectory()) walk(r);
    }
  };
  walk('');
  return out;
}

/** The differences between two snapshots, one line each (empty when equal). */
export function snapshotDiff(before, after) {
  const lines = [];
  for (const k of new Set([...before.keys(), ...after.keys()])) {
    if (before.get(k) !== after.get(k))
      lines.push(`${k}: ${before.get(k) ?? 'absent'} -> ${after.get(k) ?? 'absent'}`);
  }
  return lines;
}

/** The worktree (not .git) as path → kind and content, for comparing two checkouts. */
export function worktreeListing(dir) {
  const out = [];
  for (const [rel, desc] of snapshotAll(dir, (r) => r === '.git')) {
    const [kind, detail] = desc.split(' ');
    const mode = / mode (\d+)/.exec(desc)[1];
    out.push(
      `${rel} ${kind} ${kind === 'file' ? `${detail} ${mode}` : kind === 'link' ? desc.split(' mode ')[0] : ''}`,
    );
  }
  return out;
}

/** A version 2 index of [mode, id, path] entries (stat data zero), written as given. */
export function writeRawIndex(gitDir, entries) {
  const header = Buffer.alloc(12);
  header.write('DIRC');
  header.writeUInt32BE(2, 4);
  header.writeUInt32BE(entries.length, 8);
  const parts = [header];
  for (const [mode, id, p] of entries) {
    const name = Buffer.isBuffer(p) ? p : Buffer.from(p);
    const fixed = Buffer.alloc(62);
    fixed.writeUInt32BE(mode, 24);
    Buffer.from(id, 'hex').copy(fixed, 40);
    fixed.writeUInt16BE(Math.min(name.length, 0xfff), 60);
    parts.push(fixed, name, Buffer.alloc(8 - ((62 + name.length) % 8)));
  }
  const body = Buffer.concat(parts);
  const sum = crypto.createHash('sha1').update(body).digest();
  fs.writeFileSync(path.join(gitDir, 'index'), Buffer.concat([body, sum]));
}

/** A file's stat data as an index entry records it: ctime s, ns, mtime s, ns, dev, ino, mode, uid, gid, size. */
export function statWords(file) {
  const st = fs.lstatSync(file, { bigint: true });
  const sec = (ns) => ns / 1_000_000_000n;
  const nsec = (ns) => ns % 1_000_000_000n;
  return [
    sec(st.ctimeNs),
    nsec(st.ctimeNs),
    sec(st.mtimeNs),
    nsec(st.mtimeNs),
    st.dev,
    st.ino,
    st.mode,
    st.uid,
    st.gid,
    st.size,
  ].map((w) => Number(w & 0xffffffffn));
}

/**
 * Rewrites the stat words of entry `rel` in the version 2 index of the repository at `dir`:
 * `edit` gets them (statWords' order) and changes them in place; the checksum is made again.
 * With `stamp` (seconds), the index file's times are set to it afterwards.
 */
export function editIndexStat(dir, rel, edit, { stamp } = {}) {
  const file = path.join(dir, '.git', 'index');
  const buf = fs.readFileSync(file);
  if (buf.readUInt32BE(4) !== 2) throw new Error('editIndexStat: not a version 2 index');
  const want = Buffer.from(rel);
  let pos = 12;
  for (let k = 0; k < buf.readUInt32BE(8); k++) {
    const len = buf.readUInt16BE(pos + 60) & 0xfff;
    if (buf.subarray(pos + 62, pos + 62 + len).equals(want)) {
      const words = Array.from({ length: 10 }, (_, j) => buf.readUInt32BE(pos + 4 * j));
      edit(words);
      words.forEach((w, j) => buf.writeUInt32BE(w >>> 0, pos + 4 * j));
      const body = buf.subarray(0, buf.length - 20);
      crypto
        .createHash('sha1')
        .update(body)
        .digest()
        .copy(buf, buf.length - 20);
      fs.writeFileSync(file, buf);
      if (stamp !== undefined) fs.utimesSync(file, stamp, stamp);
      return;
    }
    pos += (62 + len + 8) & ~7;
  }
  throw new Error(`editIndexStat: ${rel} is not in the index`);
}
