// Rewrites the lifecycle table of docs/API.md from the one in src/nodes/lifecycle.ts:
//   node --import tsx scripts/render-lifecycle-table.ts
import { readFileSync, writeFileSync } from 'node:fs';
import { LIFECYCLE_GUIDE, renderLifecycleTable, withLifecycleTable } from '../src/readme/lifecycle-table.ts';

const guide = new URL(`../${LIFECYCLE_GUIDE}`, import.meta.url);
const before = readFileSync(guide, 'utf8');
const after = withLifecycleTable(before, renderLifecycleTable());
if (after === before) console.log(`${LIFECYCLE_GUIDE}: the lifecycle table is up to date`);
else {
  writeFileSync(guide, after);
  console.log(`${LIFECYCLE_GUIDE}: the lifecycle table was rewritten`);
}
