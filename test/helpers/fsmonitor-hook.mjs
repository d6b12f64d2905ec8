// A file-system monitor for tests: git's query-fsmonitor hook, protocol version 2, that answers
// as a watcher would, from snapshots instead of inotify. Each answer saves a listing of the
// worktree (type, size, mtime, ctime, inode of every path but .git) under a new token; asked
// with a token it knows, it prints the paths created, changed or removed since that listing
// (directories with a trailing '/'), else '/' (everything may have changed), as git's hooks do
// for an unknown token. Run by git as `<hook> 2 <token>` from the worktree's top;
// `.git/fsmonitor-calls` counts the queries.
//
//   node fsmonitor-hook.mjs 2 <token>

import fs from 'node:fs';
import path from 'node:path';

const [version, token = ''] = process.argv.slice(2);
if (version !== '2') process.exit(1);
const top = process.cwd();
const state = path.join(top, '.git', 'fsmonitor-test');
fs.mkdirSync(state, { recursive: true });

function listing() {
  const out = {};
  const walk = (rel) => {
    for (const name of fs.readdirSync(path.join(top, rel))) {
      if (!rel && name === '.git') continue;
      const r = rel ? `${rel}/${name}` : name;
      const st = fs.lstatSync(path.join(top, r), { bigint: true });
      const dir = st.isDirectory();
      out[dir ? `${r}/` : r] = `${st.mode} ${st.size} ${st.mtimeNs} ${st.ctimeNs} ${st.ino}`;
      if (dir) walk(r);
    }
  };
  walk('');
  return out;
}

const calls = path.join(top, '.git', 'fsmonitor-calls');
const n = (fs.existsSync(calls) ? Number(fs.readFileSync(calls, 'utf8')) : 0) + 1;
fs.writeFileSync(calls, String(n));

const now = listing();
const next = `pcfsm:${n}`;
fs.writeFileSync(path.join(state, `${n}.json`), JSON.stringify(now));
const known = /^pcfsm:(\d+)$/.exec(token);
const file = known && path.join(state, `${known[1]}.json`);
let paths = ['/'];
if (file && fs.existsSync(file)) {
  const then = JSON.parse(fs.readFileSync(file, 'utf8'));
  paths = [];
  for (const p of new Set([...Object.keys(then), ...Object.keys(now)])) {
    if (then[p] !== now[p]) paths.push(p);
  }
}
process.stdout.write(`${next}\0${paths.map((p) => `${p}\0`).join('')}`);
