// Biscuit tokens for RLN's authentication (a node started with --root-public-key), minted with the
// node's root key. A token states RLN's facts and nothing else: role("admin" | "read-only" |
// "custom"), right("api", <route>) for each route a custom token may call, and one check that
// fails after the expiry (RLN's middleware refuses a token any of whose checks fails at the
// current time). Each mint is a new token with its own revocation identifier.
import { randomBytes } from 'node:crypto';
import { biscuits } from '../platform/biscuit-wasm.ts';

export const NODE_TOKEN_ROLES = ['admin', 'read-only', 'custom'] as const;
export type NodeTokenRole = (typeof NODE_TOKEN_ROLES)[number];

export interface NodeTokenClaims {
  role: NodeTokenRole;
  /** The routes (`/nodeinfo`, ...) a custom token may call; ignored by RLN for the other roles. */
  routes?: readonly string[];
  expiresAt: Date;
}

export interface MintedNodeToken {
  /** What goes after `Bearer `. */
  token: string;
  /** The token's revocation identifiers (hex, one per block; a minted token has one). */
  revocationIds: string[];
}

export interface RootKeyPair {
  /** The 32-byte Ed25519 secret; it never leaves the service. */
  privateKey: Buffer;
  /** Hex of the 32-byte public key: the node's --root-public-key. */
  publicKeyHex: string;
}

export function generateRootKey(): RootKeyPair {
  const privateKey = randomBytes(32);
  return { privateKey, publicKeyHex: publicKeyHexOf(privateKey) };
}

export function publicKeyHexOf(privateKey: Uint8Array): string {
  const lib = biscuits();
  const secret = lib.PrivateKey.fromBytes(privateKey, lib.SignatureAlgorithm.Ed25519);
  const pair = lib.KeyPair.fromPrivateKey(secret);
  const publicKey = pair.getPublicKey();
  const out = new Uint8Array(32);
  publicKey.toBytes(out);
  publicKey.free();
  pair.free();
  return Buffer.from(out).toString('hex');
}

export function mintNodeToken(rootPrivateKey: Uint8Array, claims: NodeTokenClaims): MintedNodeToken {
  const lib = biscuits();
  const builder = new lib.BiscuitBuilder();
  const routes = claims.role === 'custom' ? (claims.routes ?? []) : [];
  // Values go in as parameters, never spliced into the Datalog text: a route is the caller's string.
  const parameters: Record<string, unknown> = { role: claims.role, expires: { date: claims.expiresAt.toISOString() } };
  const lines = ['role({role});', 'check if time($time), $time < {expires};'];
  routes.forEach((route, i) => {
    parameters[`route${i}`] = route;
    lines.push(`right("api", {route${i}});`);
  });
  const key = lib.PrivateKey.fromBytes(rootPrivateKey, lib.SignatureAlgorithm.Ed25519);
  try {
    builder.addCodeWithParameters(lines.join('\n'), parameters, {});
  } catch (err) {
    builder.free();
    key.free();
    throw err;
  }
  const token = builder.build(key); // consumes the builder
  try {
    return { token: token.toBase64(), revocationIds: token.getRevocationIdentifiers().map(String) };
  } finally {
    token.free();
    key.free();
  }
}
