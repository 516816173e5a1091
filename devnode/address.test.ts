import { describe, expect, it } from 'vitest';
import { encodeSegwitV0, receiveAddress } from './address.ts';

describe('addresses', () => {
  it('encodes the BIP173 P2WPKH test vector', () => {
    const program = Buffer.from('751e76e8199196d454941c45d1b3a323f1433bd6', 'hex');
    expect(encodeSegwitV0('bc', program)).toBe('bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4');
  });

  it('uses the network prefix and a program that follows the seed and the index', () => {
    const seed = Buffer.alloc(32, 1);
    expect(receiveAddress('regtest', seed, 0)).toMatch(/^bcrt1q[02-9ac-hj-np-z]{38}$/);
    expect(receiveAddress('testnet4', seed, 0)).toMatch(/^tb1q/);
    expect(receiveAddress('mainnet', seed, 0)).toBe(receiveAddress('mainnet', Buffer.alloc(32, 1), 0));
    expect(receiveAddress('mainnet', seed, 0)).not.toBe(receiveAddress('mainnet', seed, 1));
    expect(receiveAddress('mainnet', seed, 0)).not.toBe(receiveAddress('mainnet', Buffer.alloc(32, 2), 0));
  });
});
