import { describe, expect, it } from 'vitest';
import { documentText } from './client-files.ts';
import type { OpenApiDocument } from './openapi-document.ts';

describe("the typed client's committed document", () => {
  it('is two-space JSON with a final newline, keys in the order the service serves them', () => {
    const document = { openapi: '3.1.0', paths: { '/b': {}, '/a': {} }, info: { title: 'x' } } as unknown as OpenApiDocument;
    const text = documentText(document);
    expect(text.endsWith('}\n')).toBe(true);
    expect(text.split('\n')[1]).toBe('  "openapi": "3.1.0",');
    expect(text.indexOf('"/b"')).toBeLessThan(text.indexOf('"/a"'));
    expect(JSON.parse(text)).toEqual(document);
  });
});
