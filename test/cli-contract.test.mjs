// The command line as a contract: --json output validates against the shipped schema
// (schema/summary.schema.json) for a call that ran and for every error code the command line can
// meet; git's exit statuses (128 fatal, 129 usage); "did you mean" for a mistyped option; a
// path that does not exist is named as such.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import Ajv from 'ajv';
import { ErrorCodes } from '../dist/index.js';
import { Repo, freshClone, git, gitEnv, gitOut, tmpDir, tmpPath } from './helpers/git.mjs';
import { CLI, PROJECT } from './helpers/run.mjs';

const SCHEMA_FILE = path.join(PROJECT, 'schema', 'summary.schema.json');
const schema = JSON.parse(fs.readFileSync(SCHEMA_FILE, 'utf8'));
const validate = new Ajv({ strict: true, allErrors: true }).compile(schema);

function cli(args, { cwd = PROJECT, env = {} } = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd,
    env: { ...gitEnv, ...env },
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (r.error) throw r.error;
  return r;
}

/** stdout is one JSON object that the schema accepts: that object. */
function validJson(r) {
  let out;
  assert.doesNotThrow(() => (out = JSON.parse(r.stdout)), `stdout is not JSON:\n${r.stdout}`);
  assert.ok(
    validate(out),
    `output does not validate:\n${JSON.stringify(validate.errors, null, 2)}\n${r.stdout}`,
  );
  assert.equal(out.schema, 1);
  return out;
}

/** A failure with --json: git's exit status, the error on stdout, the coded line on stderr. */
function assertJsonFailure(r, code) {
  assert.equal(r.signal, null, `killed by ${r.signal}: ${r.stderr}`);
  assert.equal(r.status, code === 'ERR_INVALID_OPTION' ? 129 : 128, r.stderr);
  const out = validJson(r);
  assert.ok(out.error, `no error in ${r.stdout}`);
  assert.equal(out.error.code, code, out.error.message);
  assert.match(r.stderr, new RegExp(`^pcheckout: ${code}: `));
  // The message on stdout is the one on stderr (whose further lines are indented).
  assert.equal(
    r.stderr.trimEnd().split('\n')[0],
    `pcheckout: ${code}: ${out.error.message.split('\n')[0]}`,
  );
  return out.error;
}

function looseObject(dir, oid) {
  return path.join(dir, '.git', 'objects', oid.slice(0, 2), oid.slice(2));
}

describe('the schema', () => {
  test('is valid JSON Schema (draft-07) and documents every field it has', () => {
    const undocumented = [];
    const walk = (node, at) => {
      if (node === null || typeof node !== 'object') return;
      for (const [name, sub] of Object.entries(node.properties ?? {})) {
        if (typeof sub.description !== 'string' && sub.$ref === undefined) {
          undocumented.push(`${at}.${name}`);
        }
      }
      for (const [key, sub] of Object.entries(node)) walk(sub, `${at}/${key}`);
    };
    walk(schema, '#');
    assert.deepEqual(undocumented, []);
  });

  test("its error codes are src/errors.ts's table, no more and no fewer", () => {
    assert.deepEqual(schema.definitions.code.enum, Object.keys(ErrorCodes));
  });

  test('is shipped: in "files" and exported', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(PROJECT, 'package.json'), 'utf8'));
    assert.ok(pkg.files.includes('schema/'));
    assert.equal(pkg.exports['./schema/summary.schema.json'], './schema/summary.schema.json');
  });
});

describe('--json summaries validate', () => {
  let base;
  before(() => {
    base = Repo.init('contract-base');
    base.write('a.txt', 'a\n').write('d/b.txt', 'b\n').symlink('link', 'a.txt');
    base.commit('one');
    base.branch('feature');
    git(base.dir, ['checkout', '-q', 'feature']);
    base.write('a.txt', 'feature\n').write('d/c.txt', 'c\n');
    base.commit('two');
    git(base.dir, ['checkout', '-q', 'main']);
  });

  test('fresh, switch, restore, materialize and a dry run', () => {
    const dir = freshClone(base);
    const fresh = validJson(cli(['--json', '--racy-wait=never', dir]));
    assert.equal(fresh.mode, 'fresh');
    assert.equal(fresh.addon.kind, 'build');
    const dry = cli(['--json', '--dry-run', dir, 'origin/feature']);
    assert.equal(dry.status, 0, dry.stderr);
    const d = validJson(dry);
    assert.equal(d.dryRun, true);
    assert.deepEqual(d.changes.created, ['d/c.txt']);
    const sw = validJson(
      cli(['--json', '--racy-wait=never', '-w', '2', '-t', '0', dir, 'feature']),
    );
    assert.equal(sw.mode, 'switch');
    assert.equal(sw.newBranch.name, 'feature');
    fs.rmSync(path.join(dir, 'a.txt'));
    assert.equal(validJson(cli(['--json', '--restore', dir])).mode, 'restore');
    const target = path.join(tmpDir('contract-mat'), 'out');
    assert.equal(validJson(cli(['--json', '--target', target, base.dir])).mode, 'materialize');
  });

  test('a dry run that would stop: the summary with its stops, exit 1 as without --json', () => {
    const dir = freshClone(base);
    fs.writeFileSync(path.join(dir, 'a.txt'), 'in the way\n');
    const r = cli(['--json', '--dry-run', dir]);
    assert.equal(r.status, 1, r.stderr);
    const s = validJson(r);
    assert.equal(s.stops.code, 'ERR_WOULD_OVERWRITE');
    assert.deepEqual(s.stops.untracked, ['a.txt']);
    assert.equal(cli(['--dry-run', dir]).status, 1);
  });
});

describe('every error code: exit 128 (129 for usage), one JSON object on stdout', () => {
  let base;
  before(() => {
    base = Repo.init('codes-base');
    base.write('a.txt', 'a\n').write('d/b.txt', 'b\n');
    base.commit('one');
    base.branch('feature');
    git(base.dir, ['checkout', '-q', 'feature']);
    base.write('a.txt', 'feature\n');
    base.commit('two');
    git(base.dir, ['checkout', '-q', 'main']);
  });
  /** A clone with main checked out by git (an index, a worktree). */
  const checkedOut = (opts) => {
    const dir = freshClone(base, opts);
    git(dir, ['checkout', '-q', '-f', 'main']);
    return dir;
  };
  /** A repository with one commit of `files`. */
  const small = (prefix, files) => {
    const r = Repo.init(prefix);
    for (const [name, text] of Object.entries(files)) r.write(name, text);
    r.commit('small');
    return r;
  };

  // Each code: how the command line meets it. Those it cannot meet are in NOT_FROM_THE_CLI.
  const provoke = {
    ERR_INVALID_OPTION: () => ({ args: ['--workers', 'x', freshClone(base)] }),
    ERR_BAD_CONFIG: () => {
      const dir = freshClone(base);
      git(dir, ['config', 'checkout.workers', 'lots']);
      return { args: [dir] };
    },
    ERR_NOT_A_REPOSITORY: () => ({ args: [tmpDir('codes-plain')] }),
    ERR_UNSUPPORTED: () => {
      const dir = checkedOut();
      return { args: ['HEAD', '--', 'a.txt'], cwd: path.join(dir, 'd') };
    },
    ERR_BAD_REF: () => ({ args: [freshClone(base), 'no-such-ref'] }),
    ERR_AMBIGUOUS_REF: () => {
      const dir = freshClone(base);
      git(dir, ['remote', 'add', 'other', base.dir]);
      git(dir, ['fetch', '-q', 'other']);
      return { args: [dir, 'feature'] };
    },
    ERR_MISSING_OBJECT: () => {
      const dir = freshClone(base, { hardlinks: false });
      fs.rmSync(looseObject(dir, gitOut(dir, 'rev-parse', 'HEAD:a.txt')));
      return { args: [dir] };
    },
    ERR_FETCH: () => {
      // A partial clone whose promisor remote has gone: git's fetch of the missing blobs fails.
      const r = small('codes-fetch', { 'a.txt': 'a\n', 'd/b.txt': 'b\n' });
      git(r.dir, ['config', 'uploadpack.allowFilter', 'true']);
      const dir = tmpPath('codes-fetch-clone');
      git(path.dirname(dir), [
        'clone',
        '-q',
        '--filter=blob:none',
        '--no-checkout',
        `file://${r.dir}`,
        dir,
      ]);
      fs.renameSync(r.dir, `${r.dir}-gone`);
      return { args: [dir] };
    },
    ERR_CORRUPT_OBJECT: () => {
      const dir = freshClone(base, { hardlinks: false });
      const file = looseObject(dir, gitOut(dir, 'rev-parse', 'HEAD:a.txt'));
      fs.rmSync(file);
      fs.writeFileSync(file, 'not zlib data at all');
      return { args: [dir] };
    },
    ERR_CORRUPT_PACK: () => {
      const dir = freshClone(base, { hardlinks: false });
      git(dir, ['repack', '-adq']);
      const packs = path.join(dir, '.git', 'objects', 'pack');
      const idx = fs.readdirSync(packs).find((f) => f.endsWith('.idx'));
      fs.chmodSync(path.join(packs, idx), 0o644);
      fs.truncateSync(path.join(packs, idx), 100);
      return { args: [dir] };
    },
    ERR_UNSAFE_PATH: () => {
      const r = base.copy('codes-dotgit');
      const blob = git(r.dir, ['hash-object', '-w', '--stdin'], { input: 'evil\n' }).trim();
      const tree = git(r.dir, ['mktree'], { input: `100644 blob ${blob}\t.git\n` }).trim();
      const commit = git(r.dir, ['commit-tree', '-m', 'dotgit', tree]).trim();
      return { args: ['--target', tmpPath('codes-mat'), r.dir, commit] };
    },
    ERR_WOULD_OVERWRITE: () => {
      const dir = freshClone(base);
      fs.writeFileSync(path.join(dir, 'a.txt'), 'untracked\n');
      return { args: [dir] };
    },
    ERR_UNMERGED: () => {
      const dir = checkedOut();
      fs.writeFileSync(path.join(dir, 'a.txt'), 'mine\n');
      git(dir, ['commit', '-qam', 'mine']);
      assert.notEqual(
        spawnSync('git', ['merge', '-q', 'origin/feature'], { cwd: dir, env: gitEnv }).status,
        0,
      );
      return { args: [dir, 'origin/feature'] };
    },
    ERR_PATHSPEC: () => ({ args: [checkedOut(), 'HEAD', '--', 'no-such-path'] }),
    ERR_CORRUPT_INDEX: () => {
      const dir = checkedOut();
      fs.writeFileSync(path.join(dir, '.git', 'index'), 'DIRC not an index');
      return { args: [dir, 'feature'] };
    },
    ERR_INDEX_LOCKED: () => {
      const dir = freshClone(base);
      fs.writeFileSync(path.join(dir, '.git', 'index.lock'), '');
      return { args: [dir] };
    },
    ERR_REF_LOCKED: () => {
      const dir = checkedOut();
      git(dir, ['branch', 'feature', 'origin/feature']);
      fs.writeFileSync(path.join(dir, '.git', 'HEAD.lock'), '');
      return { args: [dir, 'feature'] };
    },
    ERR_CONFIG_LOCKED: () => {
      const dir = checkedOut();
      fs.writeFileSync(path.join(dir, '.git', 'config.lock'), '');
      return { args: [dir, 'feature'] }; // creates feature tracking origin/feature
    },
    ERR_BRANCH_CHECKED_OUT: () => {
      const dir = checkedOut();
      git(dir, ['worktree', 'add', '-q', '-b', 'elsewhere', tmpPath('codes-wt')]);
      return { args: [dir, 'elsewhere'] };
    },
    ERR_WRITE_FAILED: () => {
      // A filtered file (written from the filter's output) whose name is longer than any
      // filesystem takes (NAME_MAX 255): only plumbing can commit it.
      const r = Repo.init('codes-long');
      const blob = git(r.dir, ['hash-object', '-w', '--stdin'], { input: 'x\n' }).trim();
      const attrs = git(r.dir, ['hash-object', '-w', '--stdin'], { input: '* filter=cat\n' });
      git(r.dir, ['update-index', '--add', '--cacheinfo', `100644,${attrs.trim()},.gitattributes`]);
      git(r.dir, ['update-index', '--add', '--cacheinfo', `100644,${blob},${'n'.repeat(300)}`]);
      git(r.dir, ['commit', '-q', '-m', 'long name']);
      const dir = freshClone(r);
      git(dir, ['config', 'filter.cat.smudge', 'cat']);
      return { args: [dir] };
    },
    ERR_IO: () => {
      const blocker = path.join(tmpDir('codes-io'), 'file');
      fs.writeFileSync(blocker, 'x');
      return { args: ['--target', path.join(blocker, 'out'), base.dir] };
    },
    ERR_FILTER_FAILED: () => {
      const r = small('codes-filter', { '.gitattributes': '*.f filter=boom\n', 'x.f': 'x\n' });
      const dir = freshClone(r);
      git(dir, ['config', 'filter.boom.smudge', 'false']);
      git(dir, ['config', 'filter.boom.required', 'true']);
      return { args: [dir] };
    },
    ERR_ADDON_LOAD: () => ({
      args: [freshClone(base)],
      env: { PCHECKOUT_ADDON: path.join(tmpDir('codes-no-addon'), 'pcheckout.node') },
    }),
    ERR_BAD_ATTRIBUTE: () => {
      // Plumbing: git itself refuses to add a file under this attribute.
      const r = Repo.init('codes-attr');
      const hash = (text) => git(r.dir, ['hash-object', '-w', '--stdin'], { input: text }).trim();
      const attrs = hash('*.txt working-tree-encoding\n');
      git(r.dir, ['update-index', '--add', '--cacheinfo', `100644,${attrs},.gitattributes`]);
      git(r.dir, ['update-index', '--add', '--cacheinfo', `100644,${hash('a\n')},a.txt`]);
      git(r.dir, ['commit', '-q', '-m', 'attributes']);
      return { args: [freshClone(r)] };
    },
    ERR_TARGET_NOT_OURS: () => {
      const target = tmpDir('codes-not-ours');
      fs.writeFileSync(path.join(target, 'mine.txt'), 'mine\n');
      return { args: ['--target', target, base.dir] };
    },
    ERR_DUBIOUS_OWNERSHIP: () => {
      const dir = freshClone(base);
      fs.chownSync(dir, 12345, 12345);
      fs.chownSync(path.join(dir, '.git'), 12345, 12345);
      return { args: [dir] };
    },
  };
  const NOT_FROM_THE_CLI = {
    ERR_CALLBACK: 'the command line passes no callback of the caller',
    ERR_ABORTED: 'a signal: exit 128 + its number, test/crash.test.mjs',
    ERR_TOO_LARGE: 'an object larger than memory',
    ERR_INTERNAL: "pcheckout's own bug",
  };

  test('every code is provoked here or said to be out of the command line reach', () => {
    assert.deepEqual(
      [...Object.keys(provoke), ...Object.keys(NOT_FROM_THE_CLI)].sort(),
      Object.keys(ErrorCodes).sort(),
    );
  });

  const isRoot = process.getuid?.() === 0;
  for (const code of Object.keys(provoke)) {
    const skip = code === 'ERR_DUBIOUS_OWNERSHIP' && !isRoot ? 'chown needs root' : false;
    test(code, { skip }, () => {
      const { args, cwd, env } = provoke[code]();
      assertJsonFailure(cli(['--json', '--racy-wait=never', ...args], { cwd, env }), code);
    });
  }

  test('without --json: the same status, nothing on stdout', () => {
    const { args } = provoke.ERR_BAD_REF();
    const r = cli(args);
    assert.equal(r.status, 128);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^pcheckout: ERR_BAD_REF: /);
  });
});

describe("git's habits", () => {
  let repo;
  before(() => {
    repo = Repo.init('habits');
    repo.write('a.txt', 'a\n').commit('one');
  });

  for (const [typed, meant] of [
    ['--wrokers', 'workers'],
    ['--wrokers=2', 'workers'],
    ['--jsno', 'json'],
    ['--dryrun', 'dry-run'],
    ['--thresold', 'threshold'],
  ]) {
    test(`${typed}: did you mean --${meant}? (exit 129)`, () => {
      const r = cli([typed, freshClone(repo)]);
      assert.equal(r.status, 129, r.stderr);
      assert.equal(
        r.stderr,
        `pcheckout: ERR_INVALID_OPTION: unknown option '${typed.split('=')[0]}'; did you mean --${meant}? (see pcheckout --help)\n`,
      );
      assert.doesNotMatch(r.stderr, /positional argument/);
    });
  }

  test('an unknown option near nothing: no suggestion', () => {
    const r = cli(['--zz', freshClone(repo)]);
    assert.equal(r.status, 129);
    assert.equal(
      r.stderr,
      "pcheckout: ERR_INVALID_OPTION: unknown option '--zz' (see pcheckout --help)\n",
    );
  });

  test('usage errors exit 129: a bad value, too many arguments, a flag without its value', () => {
    for (const args of [['--fsync', 'always'], ['a', 'b', 'c'], ['--workers'], ['--json=yes']]) {
      const r = cli(args);
      assert.equal(r.status, 129, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /^pcheckout: ERR_INVALID_OPTION: /);
    }
  });

  test('a repository path that does not exist is named, not the directory above it', () => {
    const missing = path.join(tmpDir('habits-missing'), 'nope');
    for (const args of [[missing], [missing, 'main'], [`./${path.relative(PROJECT, missing)}`]]) {
      const r = cli(args);
      assert.equal(r.status, 128, r.stderr);
      assert.match(
        r.stderr,
        /^pcheckout: ERR_NOT_A_REPOSITORY: cannot check out '.*nope': no such directory\n$/,
      );
      assert.doesNotMatch(r.stderr, /not a git repository/);
    }
  });

  test('-C to a directory that does not exist', () => {
    const r = cli(['-C', '/no/such/dir']);
    assert.equal(r.status, 128);
    assert.equal(
      r.stderr,
      "pcheckout: ERR_NOT_A_REPOSITORY: cannot change to '/no/such/dir': no such directory\n",
    );
  });

  test('one argument that is neither a directory nor a revision: both readings said', () => {
    const r = cli(['no/such'], { cwd: freshClone(repo) });
    assert.equal(r.status, 128);
    assert.match(
      r.stderr,
      /^pcheckout: ERR_BAD_REF: cannot check out 'no\/such': no such directory, nor a revision here \(/,
    );
  });

  test('--help documents the exit statuses', () => {
    const r = cli(['--help']);
    assert.match(r.stdout, /128 a fatal error/);
    assert.match(r.stdout, /129 a usage error/);
  });
});
