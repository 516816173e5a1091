import { describe, expect, it } from 'vitest';
import { describeValidationError } from './error-handler.ts';
import { ID_PATTERN, NAME_PATTERN } from './schemas.ts';

const e = (keyword: string, instancePath: string, params: Record<string, unknown>) => ({ keyword, instancePath, params });

describe('describeValidationError', () => {
  it('names the field and the problem', () => {
    expect(describeValidationError('body', e('required', '', { missingProperty: 'name' }))).toBe('name is required');
    expect(describeValidationError('body', e('required', '/settings', { missingProperty: 'webhookUrl' }))).toBe('settings.webhookUrl is required');
    expect(describeValidationError('body', e('additionalProperties', '', { additionalProperty: 'x' }))).toBe('body has an unknown field "x"');
    expect(describeValidationError('body', e('type', '/name', { type: 'string' }))).toBe('name must be a string');
    expect(describeValidationError('body', e('minLength', '/name', { limit: 1 }))).toBe('name must not be empty');
    expect(describeValidationError('body', e('maxLength', '/name', { limit: 64 }))).toBe('name must be at most 64 characters');
    expect(describeValidationError('body', e('type', '/nodeIds', { type: 'array' }))).toBe('nodeIds must be an array');
    expect(describeValidationError('body', e('minItems', '/nodeIds', { limit: 1 }))).toBe('nodeIds must have at least 1 item');
    expect(describeValidationError('body', e('maxItems', '/nodeIds', { limit: 100 }))).toBe('nodeIds must have at most 100 items');
  });

  it('explains known patterns in words instead of showing the regex', () => {
    expect(describeValidationError('params', e('pattern', '/id', { pattern: ID_PATTERN }))).toBe('id must be 32 lowercase hexadecimal characters');
    expect(describeValidationError('body', e('pattern', '/name', { pattern: NAME_PATTERN }))).toMatch(/control characters/);
  });
});

describe('NAME_PATTERN', () => {
  const re = new RegExp(NAME_PATTERN, 'u');
  it.each(['a', 'bar-a', 'My node 1', 'ünïcödé ⚡', 'a b'])('accepts %j', (name) => expect(re.test(name)).toBe(true));
  it.each(['', ' a', 'a ', 'a\nb', 'a\u0000', '\t', 'a\u007f', 'a\u0080', 'a\u009b[31mred', '\u009f', 'invoice\u202Efdp.exe', 'a\u2066b', 'a\u200Fb', 'a\u061Cb'])('rejects %j', (name) => expect(re.test(name)).toBe(false));
});
