import { describe, expect, it } from 'vitest';
import { encodeSegwitV0, newUnspendableAddress } from './address.ts';

describe('addresses', () => {
  it('encodes the BIP173 P2WPKH test vector', () => {
    const program = Buffer.from('751e76e8199196d454941c45d1b3a323f1433bd6', 'hex');
    expect(encodeSegwitV0('bc', program)).toBe('bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4');
  });

  it('uses the network prefix and a fresh program each time', () => {
    expect(newUnspendableAddress('regtest')).toMatch(/^bcrt1q[02-9ac-hj-np-z]{38}$/);
    expect(newUnspendableAddress('testnet4')).toMatch(/^tb1q/);
    expect(newUnspendableAddress('mainnet')).not.toBe(newUnspendableAddress('mainnet'));
  });
});
