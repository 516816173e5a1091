// The Idempotency-Key header: validated here, and a request fingerprint that does not depend on
// the order of JSON keys, so a retry that serialises the same body differently still matches.
import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';
import type { IdempotencyKey } from '../nodes/service.ts';

const KEY_PATTERN = /^[\x21-\x7E]{1,255}$/;

export function idempotencyKeyOf(request: FastifyRequest, body: unknown): IdempotencyKey | undefined {
  const raw = request.headers['idempotency-key'];
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || !KEY_PATTERN.test(raw)) {
    throw new AppError('invalid_request', 'the Idempotency-Key header must be 1-255 printable ASCII characters without spaces');
  }
  return { key: raw, requestHash: createHash('sha256').update(canonicalJson(body)).digest('hex') };
}

export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
