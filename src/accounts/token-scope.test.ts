import { describe, expect, it } from 'vitest';
import { AppError } from '../errors.ts';
import { relyingPartyOf } from './passkeys.ts';
import { EMAIL_ADDRESS } from './service.ts';
import { allowsNode, isScoped, requireListener, UNSCOPED, type TokenScope } from './token-scope.ts';

const scope = (more: Partial<TokenScope>): TokenScope => ({ ...UNSCOPED, ...more });

describe("an API token's scope", () => {
  it('is limited when it only reads, names nodes or is for one listener', () => {
    expect(isScoped(UNSCOPED)).toBe(false);
    expect(isScoped(scope({ readOnly: true }))).toBe(true);
    expect(isScoped(scope({ nodeIds: [] }))).toBe(true);
    expect(isScoped(scope({ access: 'gateway' }))).toBe(true);
  });

  it('reaches every node of its user, or only those it names (an empty list: none)', () => {
    expect(allowsNode(UNSCOPED, 'n1')).toBe(true);
    expect(allowsNode(scope({ nodeIds: ['n1'] }), 'n1')).toBe(true);
    expect(allowsNode(scope({ nodeIds: ['n1'] }), 'n2')).toBe(false);
    expect(allowsNode(scope({ nodeIds: [] }), 'n1')).toBe(false);
  });

  it('is refused by the listener it is not for, with a 403 forbidden_scope that says which it is for', () => {
    expect(() => requireListener(UNSCOPED, 'api')).not.toThrow();
    expect(() => requireListener(scope({ access: 'api' }), 'api')).not.toThrow();
    const refusal = (s: TokenScope, listener: 'api' | 'gateway') => {
      try {
        requireListener(s, listener);
      } catch (err) {
        return err instanceof AppError ? [err.code, err.status, err.message] : err;
      }
      return 'allowed';
    };
    expect(refusal(scope({ access: 'gateway' }), 'api')).toEqual(['forbidden_scope', 403, 'this API token is limited to the node gateways (access "gateway")']);
    expect(refusal(scope({ access: 'api' }), 'gateway')).toEqual(['forbidden_scope', 403, 'this API token is limited to the management API (access "api")']);
  });
});

describe("the passkeys' relying party", () => {
  it("is the public URL's host name, with its origin (port kept)", () => {
    expect(relyingPartyOf('https://cloud.example.com/')).toEqual({ id: 'cloud.example.com', origin: 'https://cloud.example.com' });
    expect(relyingPartyOf('http://localhost:8080/x')).toEqual({ id: 'localhost', origin: 'http://localhost:8080' });
  });

  it('is none on an IP address, v4 or v6: browsers refuse WebAuthn there', () => {
    expect(relyingPartyOf('http://127.0.0.1:8080')).toBeUndefined();
    expect(relyingPartyOf('http://[::1]:8080')).toBeUndefined();
  });
});

describe('an email address', () => {
  it('has one @ between a local part and a domain, without spaces, within the lengths mail allows', () => {
    for (const ok of ['a@b', 'first.last+tag@example.co.uk']) expect(EMAIL_ADDRESS.test(ok), ok).toBe(true);
    for (const bad of ['', 'a', '@b', 'a@', 'a b@c', 'a@b@c', `${'x'.repeat(65)}@b`, `a@${'x'.repeat(256)}`]) expect(EMAIL_ADDRESS.test(bad), bad).toBe(false);
  });
});
