import { describe, expect, it } from 'vitest';
import { isPreflight, parseCorsOrigins, preflightHeaders, responseCorsHeaders } from './cors.ts';

describe('CORS', () => {
  it('reads *, none and lists of exact origins, and refuses anything that is not an origin', () => {
    expect(parseCorsOrigins('*')).toEqual({ origins: '*' });
    expect(parseCorsOrigins('none')).toBeNull();
    expect(parseCorsOrigins('https://wallet.example, http://localhost:5173')).toEqual({ origins: new Set(['https://wallet.example', 'http://localhost:5173']) });
    for (const bad of ['wallet.example', 'https://wallet.example/', 'https://wallet.example/app', 'ftp://x.example', '*.example', ',']) {
      expect(parseCorsOrigins(bad), bad).toBeUndefined();
    }
  });

  it('answers a preflight of an allowed origin with what may be sent, cached, never with credentials', () => {
    const policy = { origins: new Set(['https://wallet.example']) };
    const asked = { origin: 'https://wallet.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' };
    expect(isPreflight('OPTIONS', asked)).toBe(true);
    expect(isPreflight('OPTIONS', { origin: 'https://wallet.example' })).toBe(false);
    expect(preflightHeaders(policy, asked)).toEqual({
      'access-control-allow-origin': 'https://wallet.example',
      'access-control-allow-methods': 'GET, POST, PUT, PATCH, DELETE',
      'access-control-allow-headers': 'authorization, content-type',
      'access-control-max-age': '600',
      vary: 'Origin',
    });
    expect(preflightHeaders(policy, { ...asked, origin: 'https://evil.example' })).toEqual({ vary: 'Origin' });
    expect(preflightHeaders({ origins: '*' }, asked)).not.toHaveProperty('access-control-allow-credentials');
    expect(preflightHeaders({ origins: '*' }, asked)['access-control-allow-origin']).toBe('*');
  });

  it('marks answers for an allowed origin only, and says they vary by origin', () => {
    const policy = { origins: new Set(['https://wallet.example']) };
    expect(responseCorsHeaders(policy, 'https://wallet.example')).toMatchObject({ 'access-control-allow-origin': 'https://wallet.example', vary: 'Origin' });
    expect(responseCorsHeaders(policy, 'https://evil.example')).toEqual({ vary: 'Origin' });
    expect(responseCorsHeaders({ origins: '*' }, 'https://any.example')).toMatchObject({ 'access-control-allow-origin': '*' });
    expect(responseCorsHeaders({ origins: '*' }, undefined)).toEqual({});
  });
});
