import { describe, expect, it } from 'vitest';
import { tokenFromAuthorization } from './authorization-header.ts';

const TOKEN = 'rlnc_' + 'a'.repeat(43);

describe('tokenFromAuthorization', () => {
  it('reads the Bearer scheme in any case', () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) expect(tokenFromAuthorization(`${scheme} ${TOKEN}`)).toBe(TOKEN);
    expect(tokenFromAuthorization(`Bearer   ${TOKEN}  `)).toBe(TOKEN);
  });

  it('reads a bare token, as clients of the original service send it', () => {
    expect(tokenFromAuthorization(TOKEN)).toBe(TOKEN);
    expect(tokenFromAuthorization(` ${TOKEN} `)).toBe(TOKEN);
  });

  it('finds no token in another scheme, an empty value or the scheme alone', () => {
    for (const header of [undefined, '', '   ', 'Bearer', 'bearer ', `Basic ${TOKEN}`, `Token ${TOKEN}`, `${TOKEN} ${TOKEN}`, `Bearer ${TOKEN} extra`]) {
      expect(tokenFromAuthorization(header)).toBeUndefined();
    }
  });
});
