// The lifecycle table of docs/API.md is the rendering of the one in nodes/lifecycle.ts, byte for byte;
// when this fails, run `node --import tsx scripts/render-lifecycle-table.ts` and commit the guide.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LIFECYCLE_GUIDE, lifecycleTableIn, renderLifecycleTable, withLifecycleTable, TABLE_END, TABLE_START } from './lifecycle-table.ts';
import { REQUEST_TYPES } from '../nodes/lifecycle.ts';

const guide = readFileSync(new URL(`../../${LIFECYCLE_GUIDE}`, import.meta.url), 'utf8');

describe(`the ${LIFECYCLE_GUIDE} lifecycle table`, () => {
  it('is exactly the rendering of the lifecycle table', () => {
    expect(lifecycleTableIn(guide)).toBe(renderLifecycleTable());
  });

  it('has one row per request, below a header', () => {
    expect(renderLifecycleTable().split('\n')).toHaveLength(2 + REQUEST_TYPES.length);
  });

  it('is rewritten between its markers and nowhere else', () => {
    const doc = `# Title\n\nbefore\n${TABLE_START}\n| old |\n${TABLE_END}\nafter\n`;
    const rewritten = withLifecycleTable(doc, '| new |');
    expect(rewritten).toBe(`# Title\n\nbefore\n${TABLE_START}\n| new |\n${TABLE_END}\nafter\n`);
    expect(lifecycleTableIn(rewritten)).toBe('| new |');
    expect(() => withLifecycleTable('# no markers', '| new |')).toThrow(/no block/);
  });
});
