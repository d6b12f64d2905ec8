// Switching an existing checkout to another commit (git's two-way merge, `git checkout <ref>`),
// compared with git on twin worktrees: type transitions in both directions, local changes
// (refused or carried across), untracked and ignored files in the way, detaching, unmerged
// entries, no-op switches, and the CLI.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { checkout } from '../dist/index.js';
import { Repo, freshClone, git, gitOut, tmpPath } from './helpers/git.mjs';
import { editIndexStat, statWords } from './helpers/raw.mjs';
import { runCli } from './helpers/run.mjs';
import {
  KEEP_FILES,
  WORKER_MATRIX,
  buildSwitchRepo,
  compareWithGit,
  mergeConflict,
} from './helpers/twin.mjs';

const pc = (op) => (dir) => checkout(dir, { ...op, racyWait: false });

/** The CLI as a `run` for compareWithGit: the JSON summary, or { code, message } thrown. */
const cli = (args) => async (dir) => {
  const r = await runCli(['--json', '--no-racy-wait', ...args.map((a) => a ?? dir)]);
  if (r.status === 0) return JSON.parse(r.stdout);
  assert.equal(r.status, 128, `exit status on refusal (git's fatal 128); stderr: ${r.stderr}`);
  // On stdout, the error as JSON; on stderr, the human line as without --json.
  const { schema, error } = JSON.parse(r.stdout);
  assert.equal(schema, 1);
  // One line "pcheckout: CODE: headline", then git's list of paths, each line indented.
  const [line, ...rest] = r.stderr.trimEnd().split('\n');
  for (const more of rest) assert.match(more, /^ {2}/, `unindented line:\n${r.stderr}`);
  const m = /^pcheckout: (ERR_[A-Z_]+): (.*)$/.exec(line);
  assert.ok(m, `stderr is not "pcheckout: ERR_CODE: message": ${line}`);
  assert.equal(error.code, m[1], 'the JSON error and stderr disagree');
  const paths = rest.filter((l) => l.startsWith('  \t')).map((l) => l.slice(3));
  const message = [m[2], ...rest.map((l) => l.slice(2))].join('\n');
  throw Object.assign(new Error(message), { code: m[1], paths: paths.sort() });
};

const append = (dir, rel, text) => fs.appendFileSync(path.join(dir, rel), text);
const write = (dir, rel, text) => {
  fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  fs.writeFileSync(path.join(dir, rel), text);
};
const read = (dir, rel) => fs.readFileSync(path.join(dir, rel), 'utf8');

describe('switch (git checkout <ref>)', () => {
  let src;
  let excludesFile;
  before(() => {
    src = buildSwitchRepo();
    excludesFile = tmpPath('excludes');
    fs.writeFileSync(excludesFile, 'ign-excludesfile.txt\n');
  });

  // Entries written and removed by a clean switch (see buildSwitchRepo).
  const A_TO_B = { files: 15, symlinks: 3, gitlinks: 1, deleted: 8 };
  const B_TO_A = { files: 12, symlinks: 3, gitlinks: 1, deleted: 11 };

  for (const m of WORKER_MATRIX) {
    for (const [from, to, counts] of [
      ['A', 'B', A_TO_B],
      ['B', 'A', B_TO_A],
    ]) {
      test(`${from} → ${to}: every type transition, workers ${m.workers}, threshold ${m.threshold}`, async () => {
        const op = { ref: to, ...m };
        const { summary, twins } = await compareWithGit(src, { at: from, op, run: pc(op) });
        const { files, symlinks, gitlinks, deleted } = summary;
        assert.deepEqual({ files, symlinks, gitlinks, deleted }, counts);
        assert.equal(summary.mode, 'switch');
        assert.equal(summary.ref, `refs/heads/${to}`);
        assert.equal(summary.pool.used, m.workers > 1 && m.threshold === 0, 'summary.pool.used');
        if (to === 'B') {
          // l2d was a symlink to same/: nothing may have been written through it.
          assert.equal(read(twins.pc, 'same/keep-0.txt'), read(twins.git, 'same/keep-0.txt'));
          assert.ok(fs.lstatSync(path.join(twins.pc, 'l2d')).isDirectory());
        }
      });
    }
  }

  test('switching to the same commit writes nothing', async () => {
    const op = { ref: 'A', workers: 2, threshold: 0 };
    const { summary } = await compareWithGit(src, { at: 'A', op, run: pc(op) });
    assert.equal(summary.files + summary.symlinks + summary.gitlinks, 0);
    assert.equal(summary.created + summary.updated + summary.deleted, 0);
    assert.equal(summary.pool.used, false);
  });

  test('switching to HEAD (no ref) with local edits keeps them and writes nothing', async () => {
    const op = { workers: 2, threshold: 0 };
    const { summary } = await compareWithGit(src, {
      at: 'B',
      mutate: (d) => append(d, 'content.txt', 'local\n'),
      op,
      run: pc(op),
    });
    assert.equal(summary.files + summary.symlinks + summary.gitlinks, 0);
  });

  test('local edits to entries that differ: refused, nothing written, the paths listed', async () => {
    const op = { ref: 'B', workers: 2, threshold: 0 };
    const { error } = await compareWithGit(src, {
      at: 'A',
      mutate: (d) => {
        append(d, 'content.txt', 'local\n'); // content changes on B
        append(d, 'f2l', 'local\n'); // becomes a symlink on B
        append(d, 'deep/a/b/c/d/leaf.txt', 'local\n'); // deep becomes a file on B
        append(d, 'only-a.txt', 'local\n'); // removed on B
        fs.chmodSync(path.join(d, 'mode.sh'), 0o755); // the same change as B's, but local
        append(d, 'same/keep-2.txt', 'local\n'); // unchanged on B: not in the way
      },
      op,
      expect: 'ERR_WOULD_OVERWRITE',
      run: pc(op),
    });
    assert.deepEqual(error.paths, [
      'content.txt',
      'deep/a/b/c/d/leaf.txt',
      'f2l',
      'mode.sh',
      'only-a.txt',
    ]);
    assert.match(error.message, /Your local changes to the following files would be overwritten/);
  });

  test('a staged change to an entry that differs: refused', async () => {
    const op = { ref: 'B', workers: 1, threshold: 0 };
    const { error } = await compareWithGit(src, {
      at: 'A',
      mutate: (d) => {
        append(d, 'both.sh', 'staged\n');
        git(d, ['add', 'both.sh']);
      },
      op,
      expect: 'ERR_WOULD_OVERWRITE',
      run: pc(op),
    });
    assert.deepEqual(error.paths, ['both.sh']);
  });

  test('local edits, a deletion and an exec bit on unchanged entries are carried across', async () => {
    const op = { ref: 'B', workers: 2, threshold: 0 };
    const { twins } = await compareWithGit(src, {
      at: 'A',
      mutate: (d) => {
        append(d, KEEP_FILES[3], 'local edit\n');
        fs.chmodSync(path.join(d, KEEP_FILES[4]), 0o755);
        fs.rmSync(path.join(d, KEEP_FILES[5]));
        fs.rmSync(path.join(d, 'same/link'));
        fs.symlinkSync('keep-9.txt', path.join(d, 'same/link'));
        append(d, 'README.md', 'local\n');
      },
      op,
      run: pc(op),
    });
    assert.match(read(twins.pc, KEEP_FILES[3]), /local edit\n$/);
    assert.ok(!fs.existsSync(path.join(twins.pc, KEEP_FILES[5])), 'a local deletion stays');
    assert.equal(fs.readlinkSync(path.join(twins.pc, 'same/link')), 'keep-9.txt');
  });

  test('a locally deleted file whose entry changes is written', async () => {
    const op = { ref: 'B', workers: 2, threshold: 0 };
    await compareWithGit(src, {
      at: 'A',
      mutate: (d) => {
        fs.rmSync(path.join(d, 'content.txt'));
        fs.rmSync(path.join(d, 'f2l'));
        fs.rmSync(path.join(d, 'deep'), { recursive: true });
      },
      op,
      run: pc(op),
    });
  });

  test('staged changes (an edit, a new file, a removal) are carried across', async () => {
    const op = { ref: 'B', workers: 2, threshold: 0 };
    const { twins } = await compareWithGit(src, {
      at: 'A',
      mutate: (d) => {
        append(d, KEEP_FILES[6], 'staged edit\n');
        write(d, 'staged-new.txt', 'new and staged\n');
        git(d, ['add', KEEP_FILES[6], 'staged-new.txt']);
        append(d, KEEP_FILES[6], 'then edited again\n');
        git(d, ['rm', '-q', '--cached', KEEP_FILES[7]]);
      },
      op,
      run: pc(op),
    });
    const staged = gitOut(twins.pc, 'diff', '--cached', '--name-status');
    assert.match(staged, new RegExp(`^M\\t${KEEP_FILES[6]}$`, 'm'));
    assert.match(staged, /^A\tstaged-new\.txt$/m);
    assert.match(staged, new RegExp(`^D\\t${KEEP_FILES[7]}$`, 'm'));
  });

  test('an untracked file in the way: refused and listed', async () => {
    const op = { ref: 'B', workers: 2, threshold: 0 };
    const { error } = await compareWithGit(src, {
      at: 'A',
      mutate: (d) => {
        write(d, 'only-b.txt', 'untracked\n');
        write(d, 'new/p/q/r.txt', 'untracked\n');
        write(d, 'stray.txt', 'untracked, not in the way\n');
      },
      op,
      expect: 'ERR_WOULD_OVERWRITE',
      run: pc(op),
    });
    assert.deepEqual(error.paths, ['new/p/q/r.txt', 'only-b.txt']);
    assert.match(error.message, /untracked working tree files would be overwritten by checkout/);
  });

  test('an untracked file inside a directory that must become a file: refused', async () => {
    const op = { ref: 'B', workers: 2, threshold: 0 };
    const { error } = await compareWithGit(src, {
      at: 'A',
      mutate: (d) => write(d, 'deep/a/b/untracked.txt', 'untracked\n'),
      op,
      expect: 'ERR_WOULD_OVERWRITE',
      run: pc(op),
    });
    assert.deepEqual(error.paths, ['deep']);
    assert.match(error.message, /would lose untracked files/);
  });

  test('B → A: an untracked file inside f2d/ (a file on A): refused', async () => {
    const op = { ref: 'A', workers: 1, threshold: 1e9 };
    const { error } = await compareWithGit(src, {
      at: 'B',
      mutate: (d) => write(d, 'f2d/sub/untracked.txt', 'untracked\n'),
      op,
      expect: 'ERR_WOULD_OVERWRITE',
      run: pc(op),
    });
    assert.deepEqual(error.paths, ['f2d']);
  });

  test('an untracked directory where a new file goes: refused', async () => {
    const op = { ref: 'B', workers: 2, threshold: 0 };
    const { error } = await compareWithGit(src, {
      at: 'A',
      mutate: (d) => write(d, 'only-b.txt/inside.txt', 'untracked\n'),
      op,
      expect: 'ERR_WOULD_OVERWRITE',
      run: pc(op),
    });
    assert.deepEqual(error.paths, ['only-b.txt']);
  });

  test('every kind of refusal at once: all paths, sorted, all headlines', async () => {
    const op = { ref: 'B', workers: 2, threshold: 0 };
    const { error } = await compareWithGit(src, {
      at: 'A',
      mutate: (d) => {
        append(d, 'content.txt', 'local\n');
        write(d, 'only-b.txt', 'untracked\n');
        write(d, 'deep/a/untracked.txt', 'untracked\n');
      },
      op,
      expect: 'ERR_WOULD_OVERWRITE',
      run: pc(op),
    });
    assert.deepEqual(error.paths, ['content.txt', 'deep', 'only-b.txt']);
  });

  // Ignored files in the way are expendable: git overwrites them.
  const ignored = {
    '.gitignore': { file: 'ign-gitignore.txt', setup: () => {} },
    '.git/info/exclude': {
      file: 'ign-exclude.txt',
      setup: (d) => write(d, '.git/info/exclude', '/ign-exclude.txt\n'),
    },
    'core.excludesFile (absolute path in the repository config)': {
      file: 'ign-excludesfile.txt',
      setup: (d) => git(d, ['config', 'core.excludesFile', excludesFile]),
    },
  };
  for (const [how, { file, setup }] of Object.entries(ignored)) {
    test(`an ignored file in the way (${how}) is overwritten`, async () => {
      const op = { ref: 'B', workers: 2, threshold: 0 };
      const { twins } = await compareWithGit(src, {
        at: 'A',
        mutate: (d) => {
          setup(d);
          write(d, file, 'ignored, local\n');
          assert.equal(git(d, ['check-ignore', file]), `${file}\n`, `fixture: ${file} not ignored`);
        },
        op,
        run: pc(op),
      });
      assert.equal(read(twins.pc, file), 'tracked on B\n');
    });
  }

  test('the same file, not ignored, is refused', async () => {
    const op = { ref: 'B', workers: 2, threshold: 0 };
    const { error } = await compareWithGit(src, {
      at: 'A',
      mutate: (d) => write(d, 'ign-exclude.txt', 'untracked, not ignored\n'),
      op,
      expect: 'ERR_WOULD_OVERWRITE',
      run: pc(op),
    });
    assert.deepEqual(error.paths, ['ign-exclude.txt']);
  });

  test('ignored files inside directories that must become files are removed', async () => {
    const op = { ref: 'B', workers: 2, threshold: 0 };
    await compareWithGit(src, {
      at: 'A',
      mutate: (d) => {
        write(d, 'deep/a/b/junk.ign', 'ignored\n');
        write(d, 'deep/a/more/junk.ign', 'ignored\n');
        write(d, 'only-b.txt/junk.ign', 'ignored, in a directory where a file goes\n');
      },
      op,
      run: pc(op),
    });
  });

  test('untracked and ignored files in directories that disappear are kept', async () => {
    const op = { ref: 'B', workers: 2, threshold: 0 };
    const { twins } = await compareWithGit(src, {
      at: 'A',
      mutate: (d) => {
        write(d, 'gone/x/untracked.txt', 'untracked\n');
        write(d, 'mixed/sub/junk.ign', 'ignored\n');
      },
      op,
      run: pc(op),
    });
    assert.ok(!fs.existsSync(path.join(twins.pc, 'gone/x/y')), 'emptied directory removed');
    assert.ok(fs.existsSync(path.join(twins.pc, 'gone/x/untracked.txt')));
  });

  test('to an annotated tag: HEAD detached at the tagged commit', async () => {
    const op = { ref: 'vB', workers: 2, threshold: 0 };
    const { summary } = await compareWithGit(src, { at: 'A', op, run: pc(op) });
    assert.equal(summary.detached, true);
    assert.equal(summary.ref, null);
    assert.equal(summary.commit, gitOut(src.dir, 'rev-parse', 'vB^{commit}'));
  });

  test('to a commit id (from a branch): HEAD detached', async () => {
    const id = gitOut(src.dir, 'rev-parse', 'A');
    const op = { ref: id, workers: 1, threshold: 0 };
    const { summary } = await compareWithGit(src, { at: 'B', op, run: pc(op) });
    assert.equal(summary.detached, true);
    assert.equal(summary.commit, id);
  });

  test('to the commit HEAD is on, by id: detached, nothing written', async () => {
    const op = { ref: gitOut(src.dir, 'rev-parse', 'A'), workers: 2, threshold: 0 };
    const { summary } = await compareWithGit(src, { at: 'A', op, run: pc(op) });
    assert.equal(summary.detached, true);
    assert.equal(summary.files + summary.symlinks + summary.gitlinks, 0);
  });

  test('from a detached HEAD to a branch: HEAD symbolic again', async () => {
    const op = { ref: 'B', workers: 2, threshold: 0 };
    const { summary } = await compareWithGit(src, { at: 'vA', op, run: pc(op) });
    assert.equal(summary.ref, 'refs/heads/B');
  });

  test('unmerged entries (a real merge conflict): ERR_UNMERGED', async () => {
    const op = { ref: 'B', workers: 2, threshold: 0 };
    const { error } = await compareWithGit(src, {
      at: 'c1',
      mutate: mergeConflict,
      op,
      expect: 'ERR_UNMERGED',
      run: pc(op),
    });
    assert.equal(error.code, 'ERR_UNMERGED');
  });

  test('CLI: pcheckout <repo> <branch> switches', async () => {
    const op = { ref: 'B' };
    const { summary } = await compareWithGit(src, {
      at: 'A',
      op,
      run: cli([null, 'B']),
      cli: true,
    });
    assert.equal(summary.mode, 'switch');
  });

  test('CLI: refusal exits 1 with "pcheckout: ERR_WOULD_OVERWRITE: …"', async () => {
    const op = { ref: 'B' };
    const { error } = await compareWithGit(src, {
      at: 'A',
      mutate: (d) => append(d, 'content.txt', 'local\n'),
      op,
      expect: 'ERR_WOULD_OVERWRITE',
      run: cli([null, 'B']),
      cli: true,
    });
    assert.equal(error.code, 'ERR_WOULD_OVERWRITE');
  });
});

describe('switch: racy entries the switch keeps', () => {
  // The one case stat data cannot tell: an entry kept by the switch (the same in both commits)
  // whose file changed with its size, times and inode exactly as the index records them, the
  // index being from the file's own second (racy). git hashes it when it writes the new index
  // and, finding it modified, zeroes its size, so that the next look hashes it again; without
  // that, the new index (from a later second) would vouch for the old content.
  test('a racily clean-looking modified file stays modified to git after the switch', async () => {
    const repo = Repo.init('switch-racy');
    repo.write('kept.txt', 'kept: version one\n').write('changed.txt', 'a\n');
    repo.git('add', '-A');
    repo.git('commit', '-q', '-m', 'one');
    repo.git('branch', 'other');
    repo.write('changed.txt', 'b\n');
    repo.git('commit', '-q', '-am', 'two');
    for (const tool of ['git', 'pcheckout']) {
      const dir = freshClone(repo.dir);
      git(dir, ['checkout', '-q', 'main']);
      const file = path.join(dir, 'kept.txt');
      fs.writeFileSync(file, 'kept: version TWO\n'); // same size
      const past = Math.floor(Date.now() / 1000) - 100;
      fs.utimesSync(file, past, past);
      // The index records exactly this file, and is stamped with the file's second (racy).
      const now = statWords(file);
      editIndexStat(dir, 'kept.txt', (words) => words.splice(0, 10, ...now), { stamp: past });
      if (tool === 'git') git(dir, ['checkout', '-q', 'other']);
      else await checkout(dir, { ref: 'other', racyWait: false });
      assert.equal(fs.readFileSync(file, 'utf8'), 'kept: version TWO\n', `${tool}: carried across`);
      assert.equal(git(dir, ['status', '--porcelain']), ' M kept.txt\n', `${tool}: still modified`);
    }
  });
});
