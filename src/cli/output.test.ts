import { describe, expect, it } from 'vitest';
import { formatHuman } from './output.ts';

describe('the CLI in text mode', () => {
  it('indents nested objects under their key instead of printing inline JSON', () => {
    const lines = formatHuman({ version: 'v2', progress: { upgraded: 3, failed: 0, pending: { count: 2 } }, nodes: [{ id: 'a', error: null, seen: { at: 1 } }], none: [] });
    expect(lines).toEqual([
      'version: v2',
      'progress:',
      '  upgraded: 3',
      '  failed: 0',
      '  pending:',
      '    count: 2',
      'nodes:',
      '  id=a  error=-  seen={at=1}',
      'none: (none)',
    ]);
  });
});
