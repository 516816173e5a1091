// Passwords for the web UI sign-in: scrypt (a slow, memory-hard hash from node:crypto), salted.
// Every hash and check goes through one gate (auth/password-gate.ts) that caps how many run at once.
import { randomBytes, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { PasswordGate } from './password-gate.ts';
import { readPasswordHashingConfig } from './settings.ts';

const scrypt = promisify(scryptCb) as (pw: string, salt: Buffer, len: number, opts: object) => Promise<Buffer>;
const PARAMS = { N: 16384, r: 8, p: 1 };

/**
 * The process's gate: module-level because the threadpool it protects is the process's, and so that
 * every caller (sign-in, accept, set-password, the CLI) goes through it. The limits are the
 * declared defaults until composition/services.ts sets the configured ones.
 */
export const passwordGate = new PasswordGate(readPasswordHashingConfig({}, []));

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await passwordGate.run(() => scrypt(password, salt, 32, PARAMS));
  return `scrypt$${PARAMS.N}$${PARAMS.r}$${PARAMS.p}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await passwordGate.run(() => scrypt(password, Buffer.from(salt, 'base64'), expected.length, { N: Number(n), r: Number(r), p: Number(p) }));
  return timingSafeEqual(actual, expected);
}
