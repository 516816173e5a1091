// Receive addresses for POST /address. devnode has no keys, but clients may parse or display the
// address, so it hands out well-formed bech32 (BIP173) P2WPKH addresses of the node's network.
// The 20-byte program of the n-th address is a hash of the wallet's seed (from the mnemonic) and n:
// two nodes with the same mnemonic, such as one restored from a backup, hand out the same
// addresses, as real wallets do. No key hashes to it, so nothing sent there can ever be spent.
import { createHash } from 'node:crypto';
import type { DaemonNetwork } from './args.ts';

const HRP: Record<DaemonNetwork, string> = { mainnet: 'bc', testnet: 'tb', testnet4: 'tb', signet: 'tb', regtest: 'bcrt' };
const CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
const GENERATOR = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];

export function receiveAddress(network: DaemonNetwork, seed: Buffer, index: number): string {
  const program = createHash('sha256').update(seed).update(`/receive/${index}`).digest().subarray(0, 20);
  return encodeSegwitV0(HRP[network], program);
}

/** BIP173 encoding of a version-0 witness program. */
export function encodeSegwitV0(hrp: string, program: Uint8Array): string {
  const data = [0, ...toFiveBitGroups(program)];
  const values = [...expandHrp(hrp), ...data, 0, 0, 0, 0, 0, 0];
  const mod = polymod(values) ^ 1;
  const checksum = Array.from({ length: 6 }, (_, i) => (mod >>> (5 * (5 - i))) & 31);
  return `${hrp}1${[...data, ...checksum].map((v) => CHARSET[v]).join('')}`;
}

function polymod(values: number[]): number {
  let chk = 1;
  for (const v of values) {
    const top = chk >>> 25;
    chk = ((chk & 0x1ffffff) << 5) ^ v;
    for (let i = 0; i < 5; i++) if ((top >>> i) & 1) chk ^= GENERATOR[i]!;
  }
  return chk;
}

function expandHrp(hrp: string): number[] {
  const codes = [...hrp].map((c) => c.charCodeAt(0));
  return [...codes.map((c) => c >>> 5), 0, ...codes.map((c) => c & 31)];
}

function toFiveBitGroups(bytes: Uint8Array): number[] {
  const out: number[] = [];
  let acc = 0;
  let bits = 0;
  for (const b of bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out.push((acc >>> bits) & 31);
    }
    acc &= (1 << bits) - 1;
  }
  if (bits > 0) out.push((acc << (5 - bits)) & 31);
  return out;
}
