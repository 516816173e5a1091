// Rewrites the README's lifecycle table from the one in src/nodes/lifecycle.ts:
//   node --import tsx scripts/render-lifecycle-table.ts
import { readFileSync, writeFileSync } from 'node:fs';
import { renderLifecycleTable, withLifecycleTable } from '../src/readme/lifecycle-table.ts';

const readme = new URL('../README.md', import.meta.url);
const before = readFileSync(readme, 'utf8');
const after = withLifecycleTable(before, renderLifecycleTable());
if (after === before) console.log('README.md: the lifecycle table is up to date');
else {
  writeFileSync(readme, after);
  console.log('README.md: the lifecycle table was rewritten');
}
