// Prints the configuration tables of docs/CONFIGURATION.md as the variable declarations describe
// them; with --write, rewrites them there (between their <!-- config-table ... --> markers).
//   node --import tsx scripts/render-config-table.ts [--write]
import { readFileSync, writeFileSync } from 'node:fs';
import { CONFIGURATION_GUIDE, CONFIG_TABLES, renderTable, renderTablesInto, type TableName } from '../src/readme/config-tables.ts';

const guidePath = new URL(`../${CONFIGURATION_GUIDE}`, import.meta.url);

if (process.argv.includes('--write')) {
  const before = readFileSync(guidePath, 'utf8');
  const after = renderTablesInto(before);
  writeFileSync(guidePath, after);
  console.log(before === after ? `${CONFIGURATION_GUIDE}: configuration tables already up to date` : `${CONFIGURATION_GUIDE}: configuration tables rewritten`);
} else {
  for (const table of Object.keys(CONFIG_TABLES) as TableName[]) console.log(`<!-- ${table} -->\n${renderTable(table)}\n`);
}
