// Prints the README's configuration tables as the variable declarations describe them; with
// --write, rewrites them in README.md (between their <!-- config-table ... --> markers).
//   node --import tsx scripts/render-config-table.ts [--write]
import { readFileSync, writeFileSync } from 'node:fs';
import { README_TABLES, renderTable, renderTablesInto, type TableName } from '../src/readme/config-tables.ts';

const readmePath = new URL('../README.md', import.meta.url);

if (process.argv.includes('--write')) {
  const before = readFileSync(readmePath, 'utf8');
  const after = renderTablesInto(before);
  writeFileSync(readmePath, after);
  console.log(before === after ? 'README.md: configuration tables already up to date' : 'README.md: configuration tables rewritten');
} else {
  for (const table of Object.keys(README_TABLES) as TableName[]) console.log(`<!-- ${table} -->\n${renderTable(table)}\n`);
}
