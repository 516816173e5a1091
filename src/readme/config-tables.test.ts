import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readEnv } from '../env/variable.ts';
import { CONFIGURATION_GUIDE, CONFIG_TABLES, documentedDefault, documentedRows, renderTable, tableInGuide, type TableName } from './config-tables.ts';

const guide = readFileSync(new URL(`../../${CONFIGURATION_GUIDE}`, import.meta.url), 'utf8');
const tables = Object.keys(CONFIG_TABLES) as TableName[];
const FIX = 'run `node --import tsx scripts/render-config-table.ts --write`';

describe.each(tables)(`the ${CONFIGURATION_GUIDE} %s configuration table`, (table) => {
  const text = tableInGuide(guide, table);
  const documented = documentedRows(text ?? '');
  const declared = CONFIG_TABLES[table];

  it('is in the guide between its markers', () => {
    expect(text, `${CONFIGURATION_GUIDE} lacks the ${table} table markers`).toBeDefined();
  });

  it('lists every declared variable, and only those', () => {
    const documentedNames = documented.map((row) => row.name);
    const declaredNames = declared.map((v) => v.name);
    expect(declaredNames.filter((n) => !documentedNames.includes(n)), `declared but not in the guide: ${FIX}`).toEqual([]);
    expect(documentedNames.filter((n) => !declaredNames.includes(n)), `in the guide but not declared: declare it, or ${FIX}`).toEqual([]);
  });

  it('documents each default as declared', () => {
    const wrong = declared
      .map((v) => ({ name: v.name, declared: documentedDefault(v), documented: documented.find((row) => row.name === v.name)?.default }))
      .filter((d) => d.documented !== undefined && d.documented !== d.declared);
    expect(wrong, `defaults differ: ${FIX}`).toEqual([]);
  });

  it('is exactly what the declarations render (wording included)', () => {
    expect(text, FIX).toBe(renderTable(table));
  });
});

describe('the variable declarations', () => {
  const all = tables.flatMap((t) => CONFIG_TABLES[t]);

  it('declare each variable once', () => {
    const names = all.map((v) => v.name);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
  });

  it('have defaults that pass their own checks, and a meaning', () => {
    for (const v of all) {
      const problems: string[] = [];
      readEnv({ v }, {}, problems);
      expect(problems, v.name).toEqual([]);
      expect(v.doc.length, v.name).toBeGreaterThan(0);
      expect(v.default !== undefined || v.unset !== undefined, `${v.name} says neither its default nor what unset means`).toBe(true);
    }
  });
});
