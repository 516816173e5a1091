// What PostgreSQL cannot store, made storable: the one place client text is made fit for the
// database, applied to every statement's parameters (database.ts) and to every JSON value before
// it is serialised for a jsonb column (jsonParam). PostgreSQL's text refuses U+0000 ("invalid
// byte sequence for encoding UTF8: 0x00") and jsonb refuses its escape "\u0000" and a lone
// surrogate's ("\ud800"); a client can send any of them in a JSON string or a percent-encoded URL.
// Both become U+FFFD, the replacement character, as UTF-8 decoders do with what they cannot read:
// the value stays recognisably what was sent, one character for one, and a NUL can never cut a
// value short where it is read later (C strings, logs). Lengths are left alone here: where a
// length matters (the audit trail) the caller bounds it (audit/audit-log.ts).

const REPLACEMENT = '\uFFFD';
// A NUL, or a surrogate that is not half of a pair.
const UNSTORABLE_SOURCE = '\\u0000|[\\uD800-\\uDBFF](?![\\uDC00-\\uDFFF])|(?<![\\uD800-\\uDBFF])[\\uDC00-\\uDFFF]';
const UNSTORABLE = new RegExp(UNSTORABLE_SOURCE);
const UNSTORABLE_ALL = new RegExp(UNSTORABLE_SOURCE, 'g');

/** `text` with U+0000 and lone surrogates replaced by U+FFFD; the same string when it has none. */
export function storableText(text: string): string {
  if (!UNSTORABLE.test(text)) return text;
  return text.replace(UNSTORABLE_ALL, REPLACEMENT);
}

/** A value with every string in it (object keys too) made storable; dates, buffers and numbers as they are. */
export function storableValue(value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (Array.isArray(value)) return value.map(storableValue);
  if (value === null || typeof value !== 'object' || value instanceof Date || ArrayBuffer.isView(value)) return value;
  // toJSON (a class with its own JSON form) is honoured as JSON.stringify would.
  const plain = typeof (value as { toJSON?: unknown }).toJSON === 'function' ? (value as { toJSON(): unknown }).toJSON() : value;
  if (plain !== value) return storableValue(plain);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [storableText(k), storableValue(v)]));
}

/** The text of a jsonb parameter: JSON.stringify of the value made storable first. */
export const jsonParam = (value: unknown): string => JSON.stringify(storableValue(value));

/** A statement's parameters made storable (database.ts calls it for every statement). */
export const storableParams = (params: unknown[]): unknown[] => (params.some(needsCare) ? params.map(storableValue) : params);

const needsCare = (p: unknown) => (typeof p === 'string' ? UNSTORABLE.test(p) : p !== null && typeof p === 'object' && !(p instanceof Date) && !ArrayBuffer.isView(p));
