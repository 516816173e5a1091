// Cross-origin requests from browsers (CORS) for the management API and the bearer gateway: a
// browser wallet on another origin calls a node with its API token. Both listeners answer
// preflights themselves (before any credential is asked for: a preflight carries none) and mark
// their answers for the allowed origins. Credentials mode is never allowed: the API and the
// gateway authenticate with a bearer header, which CORS does not count as a credential, and the
// web UI's session cookie must never work from another origin (CSRF).
export type CorsPolicy = { origins: '*' } | { origins: ReadonlySet<string> };

/** How long a browser may reuse a preflight's answer. */
export const PREFLIGHT_MAX_AGE_S = 600;
const ALLOWED_METHODS = 'GET, POST, PUT, PATCH, DELETE';
// What a script may read of an answer beyond the CORS-safelisted headers.
// x-rln-cloud-warning: the gateways' unlock warns in it (nodes/unlock/node-identity.ts).
const EXPOSED_HEADERS = 'x-request-id, retry-after, content-disposition, x-rln-cloud-warning';

/** `*`, `none`, or comma-separated origins (`https://wallet.example`); undefined when malformed. */
export function parseCorsOrigins(text: string): CorsPolicy | undefined | null {
  const t = text.trim();
  if (t === '*') return { origins: '*' };
  if (t === 'none') return null;
  const origins = t.split(',').map((o) => o.trim()).filter(Boolean);
  if (origins.length === 0) return undefined;
  for (const o of origins) {
    let url: URL;
    try {
      url = new URL(o);
    } catch {
      return undefined;
    }
    // An origin is scheme, host and port, nothing more: the exact text a browser sends.
    if (!['http:', 'https:'].includes(url.protocol) || url.origin !== o) return undefined;
  }
  return { origins: new Set(origins) };
}

function allowedOrigin(policy: CorsPolicy, origin: string): string | undefined {
  if (policy.origins === '*') return '*';
  return policy.origins.has(origin) ? origin : undefined;
}

/** Whether a request is a CORS preflight (an OPTIONS that asks to send another method). */
export function isPreflight(method: string | undefined, headers: Record<string, string | string[] | undefined>): boolean {
  return method === 'OPTIONS' && typeof headers.origin === 'string' && typeof headers['access-control-request-method'] === 'string';
}

/** The headers of a preflight's answer (204): empty when the origin is not allowed. */
export function preflightHeaders(policy: CorsPolicy, headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const origin = allowedOrigin(policy, String(headers.origin));
  if (!origin) return policy.origins === '*' ? {} : { vary: 'Origin' };
  const requested = headers['access-control-request-headers'];
  return {
    'access-control-allow-origin': origin,
    'access-control-allow-methods': ALLOWED_METHODS,
    // Any header the page asks to send (authorization, content-type, idempotency-key, ...).
    ...(typeof requested === 'string' && requested ? { 'access-control-allow-headers': requested } : {}),
    'access-control-max-age': String(PREFLIGHT_MAX_AGE_S),
    ...(origin === '*' ? {} : { vary: 'Origin' }),
  };
}

/** The headers an ordinary answer to a cross-origin request carries (none for another origin). */
export function responseCorsHeaders(policy: CorsPolicy, origin: string | undefined): Record<string, string> {
  if (origin === undefined) return policy.origins === '*' ? {} : { vary: 'Origin' };
  const allowed = allowedOrigin(policy, origin);
  if (!allowed) return policy.origins === '*' ? {} : { vary: 'Origin' };
  return {
    'access-control-allow-origin': allowed,
    'access-control-expose-headers': EXPOSED_HEADERS,
    ...(allowed === '*' ? {} : { vary: 'Origin' }),
  };
}
