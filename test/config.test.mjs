// Config read as git reads it, against git itself: every value `git config -l` lists (system,
// XDG and ~/.gitconfig, local, worktree, GIT_CONFIG_COUNT, GIT_CONFIG_PARAMETERS as `git -c`
// writes it, include.path and includeIf gitdir:, gitdir/i:, onbranch:, hasconfig:) must be
// pcheckout's too, in order; what git refuses (unreadable files, include loops, bad
// command-line config) pcheckout refuses with ERR_BAD_CONFIG. Then the sources the issue found
// missed, end to end: core.autocrlf=true from an includeIf file (also in the global config),
// from `git -c`, and eol=crlf from the system attributes file (GIT_ATTR_NOSYSTEM off and on).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { GitConfig } from '../dist/repo/config.js';
import { Repo, freshClone, git, gitEnv, tmpDir } from './helpers/git.mjs';
import { CLI, PROJECT } from './helpers/run.mjs';

/** An environment of its own: HOME, XDG and the system file under `root`. */
function envFor(root, extra = {}) {
  const env = { ...gitEnv, HOME: path.join(root, 'home'), XDG_CONFIG_HOME: path.join(root, 'xdg') };
  delete env.GIT_CONFIG_NOSYSTEM;
  env.GIT_CONFIG_SYSTEM = path.join(root, 'system.config');
  return { ...env, ...extra };
}

/** `git config -l` in `dir` as Map(key -> values), valueless keys as 'true'. */
function gitConfigList(dir, env) {
  const r = spawnSync('git', ['config', '-l', '-z'], { cwd: dir, env, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const out = new Map();
  for (const item of r.stdout.split('\0').filter(Boolean)) {
    const nl = item.indexOf('\n');
    const key = nl < 0 ? item : item.slice(0, nl);
    const value = nl < 0 ? 'true' : item.slice(nl + 1);
    if (!out.has(key)) out.set(key, []);
    out.get(key).push(value);
  }
  return out;
}

function ourConfigList(dir, env) {
  const gitDir = path.join(dir, '.git');
  const config = GitConfig.load(gitDir, gitDir, env);
  return new Map([...config.keys()].map((k) => [k, config.getAll(k)]));
}

function write(file, text) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

/** GIT_CONFIG_PARAMETERS exactly as `git -c <args>` sets it for a command it runs. */
function gitDashC(pairs) {
  const args = pairs.flatMap((p) => ['-c', p]);
  const r = spawnSync('git', [...args, '-c', 'alias.show-env=!env', 'show-env'], {
    env: gitEnv,
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  const line = r.stdout.split('\n').find((l) => l.startsWith('GIT_CONFIG_PARAMETERS='));
  return line.slice('GIT_CONFIG_PARAMETERS='.length);
}

/** A repository on branch feature/conf with a config that uses every kind of include. */
function includeRepo() {
  const root = tmpDir('config');
  const repo = Repo.init('config-repo');
  git(repo.dir, ['checkout', '-q', '-b', 'feature/conf']);
  const home = path.join(root, 'home');
  write(
    path.join(root, 'system.config'),
    '[sys]\n\tvalue = system\n[include]\n\tpath = system.inc\n[order]\n\tv = system\n',
  );
  write(path.join(root, 'system.inc'), '[sys]\n\tincluded = yes\n');
  write(path.join(root, 'xdg', 'git', 'config'), '[order]\n\tv = xdg\n[xdg]\n\tv = 1\n');
  write(
    path.join(home, '.gitconfig'),
    [
      '[order]',
      '\tv = global',
      '[include]',
      '\tpath = ~/inc/home.inc',
      '\tpath = missing.inc',
      `[includeIf "gitdir:${repo.dir}/"]`,
      '\tpath = inc/gitdir.inc',
      `[includeIf "gitdir/i:${repo.dir.toUpperCase()}/.GIT"]`,
      '\tpath = inc/gitdir-i.inc',
      `[includeIf "gitdir:${repo.dir.toUpperCase()}/"]`,
      '\tpath = inc/never.inc',
      '[includeIf "onbranch:feature/**"]',
      '\tpath = inc/onbranch.inc',
      '[includeIf "onbranch:main"]',
      '\tpath = inc/never.inc',
      '[includeIf "gitdir:config-repo-*/"]',
      '\tpath = inc/relative-gitdir.inc',
      '[includeIf "hasconfig:remote.*.url:https://example.com/**"]',
      '\tpath = inc/hasconfig.inc',
      '[includeIf "unknown:x"]',
      '\tpath = inc/never.inc',
      '',
    ].join('\n'),
  );
  write(path.join(home, 'inc', 'home.inc'), '\ufeff[home]\n\tinc = "quoted ; value" # c\n');
  write(path.join(home, 'inc', 'gitdir.inc'), '[gd]\n\tv = 1\n[include]\n\tpath = nested.inc\n');
  write(path.join(home, 'inc', 'nested.inc'), '[nested]\n\tv = deep\n');
  write(path.join(home, 'inc', 'gitdir-i.inc'), '[gdi]\n\tv = 1\n');
  write(path.join(home, 'inc', 'onbranch.inc'), '[ob]\n\tv = 1\n');
  write(path.join(home, 'inc', 'relative-gitdir.inc'), '[rel]\n\tv = 1\n');
  write(path.join(home, 'inc', 'hasconfig.inc'), '[hc]\n\tv = 1\n');
  write(path.join(home, 'inc', 'never.inc'), '[never]\n\tv = 1\n');
  const local = path.join(repo.gitDir, 'config');
  fs.appendFileSync(
    local,
    [
      '[remote "origin"]',
      '\turl = https://example.com/repo.git',
      '[order]',
      '\tv = local',
      '[include]',
      '\tpath = ../in-worktree.inc',
      '[Section "SubSection"]',
      '\tKey = Value',
      '\tflag',
      '[extensions]',
      '\tworktreeConfig = true',
      '',
    ].join('\n'),
  );
  // "./" in a condition: the including file's directory (here the worktree top: .git is in it).
  write(
    path.join(repo.dir, 'in-worktree.inc'),
    '[includeIf "gitdir:./"]\n\tpath = .git/local-dot.inc\n',
  );
  write(path.join(repo.gitDir, 'local-dot.inc'), '[dot]\n\tv = 1\n');
  write(path.join(repo.gitDir, 'config.worktree'), '[order]\n\tv = worktree\n');
  return { root, repo };
}

describe('config', () => {
  test('every source, include and includeIf kind: what git config -l lists', () => {
    const { root, repo } = includeRepo();
    const params = gitDashC([
      "x.y=it's",
      'novalue.key',
      'Cmd.Sub.Key=v',
      'order.v=command',
      `include.path=${path.join(root, 'home', 'inc', 'nested.inc')}`,
    ]).concat(" 'includeIf.gitdir:./x.path'='/never.inc'"); // false (git complains)
    const env = envFor(root, {
      GIT_CONFIG_COUNT: '2',
      GIT_CONFIG_KEY_0: 'Count.Key',
      GIT_CONFIG_VALUE_0: 'zero',
      GIT_CONFIG_KEY_1: 'order.v',
      GIT_CONFIG_VALUE_1: 'count',
      GIT_CONFIG_PARAMETERS: params,
    });
    const theirs = gitConfigList(repo.dir, env);
    const ours = ourConfigList(repo.dir, env);
    assert.deepEqual(ours, theirs);
    // The fixture reaches what it means to.
    for (const k of [
      'gd.v',
      'gdi.v',
      'ob.v',
      'rel.v',
      'hc.v',
      'dot.v',
      'nested.v',
      'sys.included',
    ]) {
      assert.ok(theirs.has(k), `git did not include ${k}`);
    }
    assert.ok(!theirs.has('never.v'));
    // GIT_CONFIG_NOSYSTEM, and GIT_CONFIG_GLOBAL instead of HOME's files.
    const env2 = {
      ...env,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: path.join(root, 'system.inc'),
    };
    assert.deepEqual(ourConfigList(repo.dir, env2), gitConfigList(repo.dir, env2));
  });

  test('what git refuses, pcheckout refuses (ERR_BAD_CONFIG)', () => {
    const { root, repo } = includeRepo();
    const cases = [
      [
        'an include loop',
        () =>
          write(path.join(root, 'home', 'inc', 'nested.inc'), '[include]\n\tpath = gitdir.inc\n'),
      ],
      [
        'a bad line in an included file',
        () => write(path.join(root, 'home', 'inc', 'nested.inc'), '[nested\n'),
      ],
      [
        'a relative include from the command line',
        (env) => {
          env.GIT_CONFIG_PARAMETERS = "'include.path'='rel.inc'";
        },
      ],
      [
        'bad quoting in GIT_CONFIG_PARAMETERS',
        (env) => {
          env.GIT_CONFIG_PARAMETERS = "'a.b'='c";
        },
      ],
      [
        'an invalid command-line key',
        (env) => {
          env.GIT_CONFIG_COUNT = '1';
          env.GIT_CONFIG_KEY_0 = 'nodot';
          env.GIT_CONFIG_VALUE_0 = 'x';
        },
      ],
      [
        'a missing GIT_CONFIG_KEY_n',
        (env) => {
          env.GIT_CONFIG_COUNT = '2';
          env.GIT_CONFIG_KEY_0 = 'a.b';
          env.GIT_CONFIG_VALUE_0 = 'x';
        },
      ],
    ];
    for (const [what, setup] of cases) {
      const env = envFor(root);
      const saved = fs.readFileSync(path.join(root, 'home', 'inc', 'nested.inc'));
      setup(env);
      const r = spawnSync('git', ['config', '-l'], { cwd: repo.dir, env, encoding: 'utf8' });
      assert.notEqual(r.status, 0, `${what}: git accepted it`);
      assert.throws(() => ourConfigList(repo.dir, env), { code: 'ERR_BAD_CONFIG' }, what);
      fs.writeFileSync(path.join(root, 'home', 'inc', 'nested.inc'), saved);
    }
  });

  test('unreadable files: local and included ones fail, a global one is skipped (as git)', (t) => {
    // Root reads anything: drop the capabilities that let it (setpriv), in a child process.
    const probe = spawnSync('setpriv', ['--help'], { encoding: 'utf8' });
    if (probe.error || process.getuid?.() !== 0) {
      t.skip('needs root and setpriv to make a file unreadable to a process');
      return;
    }
    const { root, repo } = includeRepo();
    const drop = [
      '--inh-caps=-dac_override,-dac_read_search',
      '--bounding-set=-dac_override,-dac_read_search',
    ];
    const runBoth = (env) => {
      const g = spawnSync('setpriv', [...drop, 'git', 'config', '-l'], {
        cwd: repo.dir,
        env,
        encoding: 'utf8',
      });
      const script = `import('${path.join(PROJECT, 'dist/repo/config.js')}').then(({ GitConfig }) => {
        try { GitConfig.load(process.argv[1], process.argv[1]); console.log('ok'); }
        catch (e) { console.log(e.code); }
      })`;
      const o = spawnSync(
        'setpriv',
        [...drop, process.execPath, '-e', script, path.join(repo.dir, '.git')],
        {
          env,
          encoding: 'utf8',
        },
      );
      return { git: g.status, ours: o.stdout.trim() };
    };
    const lock = (file) => fs.chmodSync(file, 0);
    const unlock = (file) => fs.chmodSync(file, 0o644);
    const env = envFor(root);
    for (const [file, expectOk] of [
      [path.join(root, 'home', '.gitconfig'), true],
      [path.join(root, 'xdg', 'git', 'config'), true],
      [path.join(repo.gitDir, 'config'), false],
      [path.join(root, 'home', 'inc', 'nested.inc'), false],
      [path.join(repo.gitDir, 'config.worktree'), false],
    ]) {
      lock(file);
      try {
        const r = runBoth(env);
        assert.equal(r.git === 0, expectOk, `git on unreadable ${file}: status ${r.git}`);
        assert.equal(r.ours, expectOk ? 'ok' : 'ERR_BAD_CONFIG', `pcheckout on unreadable ${file}`);
      } finally {
        unlock(file);
      }
    }
  });
});

/** A repository of LF text files, and its clone without a checkout. */
function lfRepo(prefix) {
  const repo = Repo.init(prefix);
  repo.write('a.txt', 'one\ntwo\n');
  repo.write('dir/b.txt', 'three\n');
  repo.commit('lf');
  return repo;
}

/** pcheckout's CLI run in `dir` by git itself (so it gets git's environment, `-c` included). */
function runAsGitAlias(dir, args, env) {
  const r = spawnSync(
    'git',
    [...args, '-c', `alias.pc=!"${process.execPath}" "${CLI}" --racy-wait=never`, 'pc'],
    { cwd: dir, env, encoding: 'utf8' },
  );
  assert.equal(r.status, 0, r.stderr);
}

const crlfFiles = (dir) =>
  ['a.txt', 'dir/b.txt'].map((f) => fs.readFileSync(path.join(dir, f), 'utf8'));

describe('the sources the issue found missed', () => {
  test('core.autocrlf=true from an includeIf file (gitdir:, gitdir/i:, onbranch:, global)', () => {
    const src = lfRepo('missed-include');
    for (const [where, condition] of [
      ['local', (dir) => `gitdir:${dir}/.git`],
      ['local', (dir) => `gitdir/i:${dir.toUpperCase()}/`],
      ['local', () => 'onbranch:ma*'],
      ['global', (dir) => `gitdir:${dir}/`],
      ['global', () => 'onbranch:main'],
    ]) {
      const root = tmpDir('missed');
      const env = envFor(root);
      const ours = freshClone(src);
      const theirs = freshClone(src);
      write(path.join(root, 'autocrlf.inc'), '[core]\n\tautocrlf = true\n');
      const section = (dir) =>
        `[includeIf "${condition(dir)}"]\n\tpath = ${path.join(root, 'autocrlf.inc')}\n`;
      for (const dir of [ours, theirs]) {
        // Local: in each clone's config; global: one file naming both clones.
        const file =
          where === 'local'
            ? path.join(dir, '.git', 'config')
            : path.join(root, 'home', '.gitconfig');
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.appendFileSync(file, section(dir));
      }
      const g = spawnSync('git', ['reset', '-q', '--hard'], { cwd: theirs, env, encoding: 'utf8' });
      assert.equal(g.status, 0, g.stderr);
      runAsGitAlias(ours, [], env);
      assert.deepEqual(crlfFiles(theirs), ['one\r\ntwo\r\n', 'three\r\n'], 'oracle wrote CRLF');
      assert.deepEqual(crlfFiles(ours), crlfFiles(theirs), `${where} ${condition(ours)}`);
      const st = spawnSync('git', ['status', '--porcelain'], { cwd: ours, env, encoding: 'utf8' });
      assert.equal(st.stdout, '');
    }
  });

  test('core.autocrlf=true from `git -c` (GIT_CONFIG_PARAMETERS)', () => {
    const src = lfRepo('missed-dash-c');
    const ours = freshClone(src);
    const theirs = freshClone(src);
    git(theirs, ['-c', 'core.autocrlf=true', 'reset', '-q', '--hard']);
    runAsGitAlias(ours, ['-c', 'core.autocrlf=true'], gitEnv);
    assert.deepEqual(crlfFiles(theirs), ['one\r\ntwo\r\n', 'three\r\n']);
    assert.deepEqual(crlfFiles(ours), crlfFiles(theirs));
  });

  test('eol=crlf from the system attributes file; GIT_ATTR_NOSYSTEM turns it off', (t) => {
    // git 2.39 has no variable naming the system attributes file: /etc/gitattributes is given
    // one in a private mount namespace (an overlay on /etc), never on the machine itself.
    const probe = spawnSync('unshare', ['-m', '--propagation', 'private', 'true']);
    if (probe.status !== 0) {
      t.skip('needs unshare -m (root) to give /etc/gitattributes a private content');
      return;
    }
    const src = lfRepo('missed-system');
    const machineBefore = fs.existsSync('/etc/gitattributes');
    for (const nosystem of [false, true]) {
      const work = tmpDir('overlay');
      fs.mkdirSync(path.join(work, 'upper'));
      fs.mkdirSync(path.join(work, 'work'));
      const ours = freshClone(src);
      const theirs = freshClone(src);
      const env = { ...gitEnv, ...(nosystem ? { GIT_ATTR_NOSYSTEM: '1' } : {}) };
      const q = (s) => `'${s.replace(/'/g, "'\\''")}'`;
      const script = [
        `mount -t overlay overlay -o lowerdir=/etc,upperdir=${q(path.join(work, 'upper'))},workdir=${q(path.join(work, 'work'))} /etc`,
        `printf '*.txt eol=crlf\\n' > /etc/gitattributes`,
        `git -C ${q(theirs)} reset -q --hard`,
        `${q(process.execPath)} ${q(CLI)} --racy-wait=never ${q(ours)} 2>&1`,
      ].join(' && ');
      const r = spawnSync('unshare', ['-m', '--propagation', 'private', 'sh', '-c', script], {
        env,
        encoding: 'utf8',
      });
      assert.equal(r.status, 0, r.stderr + r.stdout);
      const expected = nosystem ? ['one\ntwo\n', 'three\n'] : ['one\r\ntwo\r\n', 'three\r\n'];
      assert.deepEqual(crlfFiles(theirs), expected, 'oracle');
      assert.deepEqual(crlfFiles(ours), expected, `GIT_ATTR_NOSYSTEM ${nosystem}`);
    }
    assert.equal(
      fs.existsSync('/etc/gitattributes'),
      machineBefore,
      'the machine is left as it was',
    );
  });
});
