// Cursors of the paged lists (nodes, backups, tokens, certificates, deliveries): opaque to clients,
// base64url of `<kind>:<key>`, where the key names the last item of the page before. A cursor of
// another list, or one a client made up, is refused with one clear message rather than misread.
import { AppError } from '../errors.ts';

/** The largest page of every list (api/schemas.ts PAGE_LIMIT_PATTERN says the same to clients). */
export const MAX_PAGE = 200;

export const encodeCursor = (kind: string, key: string) => Buffer.from(`${kind}:${key}`).toString('base64url');

/** The key inside a cursor this list gave; `key` checks its form. */
export function decodeCursor(kind: string, cursor: string, key: RegExp): string {
  const text = /^[A-Za-z0-9_-]{1,256}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const value = text.startsWith(`${kind}:`) ? text.slice(kind.length + 1) : '';
  if (!key.test(value)) throw new AppError('invalid_request', 'cursor is not one this list gave: use nextCursor as it came', { problems: ['cursor'] });
  return value;
}

/** The error for a well-formed cursor whose item is not in this list (another user's, or deleted). */
export const staleCursor = () =>
  new AppError('invalid_request', 'cursor is not one this list gave (or its item is gone): start again without it', { problems: ['cursor'] });

/** Splits the `limit + 1` rows a query fetched into the page and the cursor of the next one. */
export function pageOf<T>(rows: T[], limit: number, cursorOf: (last: T) => string): { items: T[]; nextCursor: string | null } {
  const items = rows.slice(0, limit);
  return { items, nextCursor: rows.length > limit ? cursorOf(items.at(-1)!) : null };
}
