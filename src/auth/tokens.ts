// API tokens: 256 random bits, shown once, stored only as a SHA-256 hash.
import { createHash, randomBytes } from 'node:crypto';

const TOKEN_PREFIX = 'rlnc_';

export function generateToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Cheap shape check so obviously malformed tokens never reach the database. */
export function looksLikeToken(token: string): boolean {
  return token.startsWith(TOKEN_PREFIX) && token.length === TOKEN_PREFIX.length + 43;
}

/** Identifiers of nodes, users and tokens: 32 lowercase hex characters, 128 random bits. */
export function newId(): string {
  return randomBytes(16).toString('hex');
}

export const ID_PATTERN = '^[0-9a-f]{32}$';
export const isId = (s: string) => /^[0-9a-f]{32}$/.test(s);
