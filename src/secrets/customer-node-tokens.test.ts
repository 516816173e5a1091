// How the bearer gateway tells a node token from an API token without a lookup, and reads the
// credential out of the forms clients send (`Bearer x`, `bearer x`, a bare `x`).
import { describe, expect, it } from 'vitest';
import { generateToken } from '../auth/tokens.ts';
import { credentialOf, looksLikeBiscuit } from './customer-node-tokens.ts';

const BISCUIT = 'EuUBCnsKBmN1c3RvbQoDYXBpCgkvbm9kZWluZm8KDC9uZXR3b3JraW5mbxgDIgkKBwgEEgMYgAgiDgoMCAQSAxiBCBIDGIIIIg4KDAgEEgMYgQgS';

describe('node token credentials', () => {
  it('reads the credential from every form a client sends', () => {
    expect(credentialOf(`Bearer ${BISCUIT}`)).toBe(BISCUIT);
    expect(credentialOf(`bearer  ${BISCUIT}`)).toBe(BISCUIT);
    expect(credentialOf(BISCUIT)).toBe(BISCUIT);
    expect(credentialOf(` ${BISCUIT} `)).toBe(BISCUIT);
    expect(credentialOf(undefined)).toBeUndefined();
    expect(credentialOf('Bearer ')).toBe('Bearer');
  });

  it('takes a long base64url credential for a Biscuit, never an API token', () => {
    expect(looksLikeBiscuit(BISCUIT)).toBe(true);
    expect(looksLikeBiscuit(`${BISCUIT}==`)).toBe(true);
    expect(looksLikeBiscuit(generateToken())).toBe(false);
    expect(looksLikeBiscuit('short')).toBe(false);
    expect(looksLikeBiscuit(`${BISCUIT}.x`)).toBe(false);
    expect(looksLikeBiscuit(undefined)).toBe(false);
  });
});
