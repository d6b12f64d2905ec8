// Object lookup in a pack index (PackIndex::find): on an index large enough that each
// fanout bucket holds well over a hundred ids, the guided search (two probes around where the
// id's bytes say it sits, then a binary search) must find every id at git's own offset, and no
// id that is not there — also ids sorting just before, between and after the stored ones.

import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { loadAddon } from '../dist/addon.js';
import { Repo, git } from './helpers/git.mjs';

const BLOBS = 40_000; // ~156 ids per first byte

describe('pack index lookup on a large index', () => {
  let repo;
  let stored; // [hex id, offset] as git show-index lists them, sorted by id
  before(() => {
    repo = Repo.init('lookup');
    const stream = [];
    for (let i = 0; i < BLOBS; i++) {
      const body = Buffer.from(`blob ${i}\n`);
      stream.push(Buffer.from(`blob\ndata ${body.length}\n`), body, Buffer.from('\n'));
    }
    git(repo.dir, ['fast-import', '--quiet'], { input: Buffer.concat(stream) });
    const packDir = path.join(repo.gitDir, 'objects', 'pack');
    const idx = fs.readdirSync(packDir).filter((n) => n.endsWith('.idx'));
    assert.equal(idx.length, 1);
    const listing = git(repo.dir, ['show-index'], {
      input: fs.readFileSync(path.join(packDir, idx[0])),
    });
    stored = listing
      .trim()
      .split('\n')
      .map((line) => {
        const [offset, hex] = line.split(' ');
        return [hex, Number(offset)];
      })
      .sort((a, b) => (a[0] < b[0] ? -1 : 1));
    assert.equal(stored.length, BLOBS);
  });

  test('every stored id is found at its offset', () => {
    const odb = new (loadAddon().Odb)([path.join(repo.gitDir, 'objects')], 0);
    try {
      const ids = Buffer.concat(stored.map(([hex]) => Buffer.from(hex, 'hex')));
      const info = odb.info(ids);
      for (let k = 0; k < stored.length; k++) {
        assert.equal(info[4 * k + 1], stored[k][1], `offset of ${stored[k][0]}`);
        assert.equal(info[4 * k + 3], 3, `${stored[k][0]} is a blob`);
      }
    } finally {
      odb.close();
    }
  });

  test('ids next to stored ones, and random ones, are not found', () => {
    const odb = new (loadAddon().Odb)([path.join(repo.gitDir, 'objects')], 0);
    try {
      const have = new Set(stored.map(([hex]) => hex));
      const near = [];
      for (let k = 0; k < stored.length; k += 97) {
        const id = Buffer.from(stored[k][0], 'hex');
        for (const delta of [-1, 1]) {
          const other = Buffer.from(id);
          // The id plus or minus one in its last byte: sorts right beside it.
          other[19] = (other[19] + delta + 256) % 256;
          if (!have.has(other.toString('hex'))) near.push(other);
        }
      }
      for (const edge of ['00', 'ff']) near.push(Buffer.from(edge.repeat(20), 'hex'));
      for (let i = 0; i < 2000; i++) near.push(crypto.createHash('sha1').update(`x${i}`).digest());
      const missing = near.filter((id) => !have.has(id.toString('hex')));
      const info = odb.info(Buffer.concat(missing));
      for (let k = 0; k < missing.length; k++) {
        assert.equal(info[4 * k], -2, `${missing[k].toString('hex')} reported as present`);
      }
    } finally {
      odb.close();
    }
  });
});
