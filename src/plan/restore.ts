/**
 * The restore: the worktree made to match the index (`git checkout-index -a -f`, or of the
 * entries a pathspec selects). The index is the target: a file that does not match its entry
 * is written from it; skip-worktree entries are left alone, and no entry changes.
 */
import { Decisions } from './decisions.js';
import { allZero, identity, type Planned, type Planner, type Stage } from './stage.js';

/**
 * One entry of a restore: 'keep' where the file matches it (or it is skip-worktree, or known
 * clean: not looked at), else 'checkout' (written from the index, checkout-index's -f).
 */
export function restoreEntry(clean: boolean, skipWorktree: boolean): 'keep' | 'checkout' {
  return clean || skipWorktree ? 'keep' : 'checkout';
}

export const restorePlanner: Planner = {
  joins: { head: false, target: false, pathspecFrom: 'index' },
  mergedOnly: true,
  plan: planRestore,
};

async function planRestore(s: Stage): Promise<Planned> {
  const { rows, index } = s;
  // A restore of the whole index with no entry skipped or known clean (what `--restore`
  // runs in a fresh process): row r is entry r and probe slot r, and every row is compared, so
  // the per-row loops are done with bulk copies and builtin scans instead. A one-shot process
  // runs a loop over 78,000 rows in V8's interpreter, ~8 ms each.
  const whole =
    s.input.pathspec === null &&
    s.knownClean === null &&
    rows.count === s.I!.count &&
    allZero(index!.extFlags);
  if (whole) {
    s.rowProbe.set(identity(rows.count));
    s.probes.addAll(rows.count);
  } else {
    for (let r = 0; r < rows.count; r++) {
      const i = rows.i[r]!;
      if (s.scoped[r] === 1 && !s.skipWorktree(i) && !s.known(i)) s.compareRow(r);
    }
  }
  await s.look(false);
  // The index's skip-worktree bits stay as they are: no cone applies.
  const d = new Decisions(s, { inCone: null, reset: false, smudgeRacy: false });
  if (whole) restoreWhole(s, d);
  else {
    for (let r = 0; r < rows.count; r++) {
      const i = rows.i[r]!;
      if (s.scoped[r] === 0) {
        if (i >= 0) d.keep(r); // outside the pathspec: untouched
      } else if (restoreEntry(s.cleanAt(r), s.skipWorktree(i)) === 'keep') d.keep(r);
      else d.writeEntry(r, true, i, false);
    }
  }
  return { decisions: d, verified: true, replaceInTheWay: true, dirsLooked: null };
}

/**
 * The whole index restored in bulk: every row keeps its entry (result position r, no flags:
 * src and ext stay 0) or is rewritten from it, and is verified either way; a row hashed clean
 * takes its fresh stat data.
 */
function restoreWhole(s: Stage, d: Decisions): void {
  const { rows, found } = s;
  d.idx.set(identity(rows.count));
  d.verified.fill(1, 0, rows.count);
  for (let r = found.clean.indexOf(0); r >= 0; r = found.clean.indexOf(0, r + 1)) {
    d.n = r;
    d.writeEntry(r, true, r, false);
  }
  for (let r = found.hashed.indexOf(1); r >= 0; r = found.hashed.indexOf(1, r + 1))
    d.freshSlot[r] = r;
  d.n = rows.count;
}
