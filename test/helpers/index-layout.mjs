// The layout of a worktree's index file, parsed here (not by pcheckout's reader) for tests that
// compare it with git's: version, entry count, extension signatures in order, and the shared
// index a split index's link extension names (null: none). Versions 2, 3 and 4.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

export function indexLayout(dir) {
  const buf = fs.readFileSync(path.join(dir, '.git', 'index'));
  assert.equal(buf.toString('latin1', 0, 4), 'DIRC');
  const version = buf.readUInt32BE(4);
  assert.ok(version >= 2 && version <= 4, `index version ${version}`);
  const count = buf.readUInt32BE(8);
  let pos = 12;
  for (let i = 0; i < count; i++) {
    const flags = buf.readUInt16BE(pos + 60);
    const fixed = 62 + (flags & 0x4000 ? 2 : 0);
    if (version === 4) {
      let p = pos + fixed;
      while (buf[p] & 0x80) p++; // the strip count's varint
      pos = buf.indexOf(0, p + 1) + 1;
      continue;
    }
    const nul = buf.indexOf(0, pos + fixed);
    pos += (fixed + (nul - pos - fixed) + 8) & ~7;
  }
  const extensions = [];
  let link = null;
  while (pos < buf.length - 20) {
    const sig = buf.toString('latin1', pos, pos + 4);
    extensions.push(sig);
    if (sig === 'link') link = buf.toString('hex', pos + 8, pos + 28);
    pos += 8 + buf.readUInt32BE(pos + 4);
  }
  assert.equal(pos, buf.length - 20, 'extensions end at the checksum');
  return { version, count, extensions, link };
}
