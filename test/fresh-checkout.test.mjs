// The matrix: every object storage kind × worker counts × thresholds, each compared with git.

import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { checkout } from '../dist/index.js';
import { checkoutMatchesGit } from './helpers/compare.mjs';
import { richStorageVariants } from './helpers/git.mjs';

const KINDS = ['ofs', 'ref', 'loose', 'mixed'];
const WORKERS = [1, 2, 8];
const THRESHOLDS = [0, 1e9];

describe('fresh checkout of HEAD matches git', () => {
  let variants;
  before(() => {
    // > 150 regular files, exec bits, symlinks, gitlinks, empty files, 30-level nesting,
    // UTF-8 names, and HEAD blobs stored as deltas (depth > 1) in the packed kinds.
    variants = richStorageVariants(KINDS);
  });

  for (const kind of KINDS) {
    for (const workers of WORKERS) {
      for (const threshold of THRESHOLDS) {
        test(`${kind} objects, workers ${workers}, threshold ${threshold}`, async () => {
          const opts = { workers, threshold };
          const { summary } = await checkoutMatchesGit(checkout, variants[kind], opts);
          assert.equal(summary.pool.used, workers > 1 && threshold === 0, 'summary.pool.used');
          assert.ok(summary.files > 100, `fixture too small: ${summary.files} files`);
        });
      }
    }
  }

  // An older commit through an annotated tag: other blobs, other delta chains (bases of the
  // HEAD deltas, and deltas whose bases are not in the checked-out tree).
  for (const kind of KINDS) {
    test(`${kind} objects, tag v1.0 (older tree), workers 2, threshold 0`, async () => {
      const opts = { ref: 'v1.0', workers: 2, threshold: 0 };
      const { summary } = await checkoutMatchesGit(checkout, variants[kind], opts);
      assert.equal(summary.detached, true);
      assert.equal(summary.pool.used, true);
    });
  }
});
