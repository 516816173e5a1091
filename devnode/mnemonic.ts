// devnode's stand-in for BIP39 mnemonics. It holds no keys, so a mnemonic only needs to look like
// one: 12 words drawn from a small built-in list (real BIP39 words, so it reads naturally).
import { randomInt } from 'node:crypto';

const WORDS = [
  'abandon', 'ability', 'absorb', 'acoustic', 'actor', 'adapt', 'aerobic', 'album',
  'anchor', 'animal', 'arctic', 'armor', 'artist', 'autumn', 'bamboo', 'banana',
  'basket', 'beach', 'bicycle', 'blanket', 'bridge', 'bronze', 'cactus', 'canyon',
  'carbon', 'castle', 'cherry', 'circle', 'coconut', 'comet', 'coral', 'cotton',
  'dolphin', 'dragon', 'eagle', 'echo', 'fabric', 'falcon', 'forest', 'galaxy',
  'garden', 'glacier', 'harbor', 'horizon', 'island', 'jungle', 'kitten', 'ladder',
  'lemon', 'magnet', 'meadow', 'napkin', 'ocean', 'orbit', 'pepper', 'planet',
  'quartz', 'rocket', 'saddle', 'tunnel', 'umbrella', 'velvet', 'walnut', 'yellow',
];

/** BIP39 phrase lengths; RLN would also check the words and checksum, devnode cannot. */
const ALLOWED_LENGTHS = [12, 15, 18, 21, 24];

export function generateMnemonic(): string {
  return Array.from({ length: 12 }, () => WORDS[randomInt(WORDS.length)]!).join(' ');
}

/** Normalises a caller's mnemonic, or returns undefined when it cannot be a BIP39 phrase. */
export function normalizeMnemonic(input: string): string | undefined {
  const words = input.trim().split(/\s+/);
  if (!ALLOWED_LENGTHS.includes(words.length)) return undefined;
  if (!words.every((w) => /^[a-z]+$/.test(w))) return undefined;
  return words.join(' ');
}

export const MNEMONIC_RULE = `must be ${ALLOWED_LENGTHS.join(', ')} lowercase words`;
