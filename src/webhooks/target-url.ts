// The rules a webhook URL must meet when a user saves it. The address rules are checked again at
// delivery time against the address actually connected to (see guarded-lookup.ts), because DNS
// can answer differently later (DNS rebinding).
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { AppError } from '../errors.ts';
import { refusedAddressKind } from './address-policy.ts';

export const MAX_WEBHOOK_URL_LENGTH = 2048;

export interface WebhookTargetPolicy {
  /** Loopback, private and link-local targets are allowed (a laptop quickstart, tests). */
  allowPrivateTargets: boolean;
  /** Production accepts https only: events describe a user's nodes and must not travel in clear. */
  httpsOnly: boolean;
}

/** Every address a host name resolves to. */
export type ResolveAll = (hostname: string) => Promise<string[]>;

export const systemResolveAll: ResolveAll = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/** The host of a URL as an IP address when it is one (URL keeps IPv6 literals in brackets). */
export function ipLiteralOf(hostname: string): string | undefined {
  const bare = hostname.replace(/^\[(.*)\]$/, '$1');
  return isIP(bare) ? bare : undefined;
}

const invalid = (reason: string) =>
  new AppError('invalid_request', `settings.webhookUrl ${reason}`, { problems: [`settings.webhookUrl ${reason}`] });

/**
 * Checks a webhook URL and returns it normalised (the WHATWG form the service will actually call,
 * so "http://0x7f.1/" is judged as the 127.0.0.1 it means). Throws a 400 naming the reason.
 */
export async function checkWebhookUrl(raw: string, policy: WebhookTargetPolicy, resolveAll: ResolveAll = systemResolveAll): Promise<string> {
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) throw invalid(`must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  if (raw.trim() !== raw || /[\s\x00-\x1f\x7f]/.test(raw)) throw invalid('must not contain whitespace or control characters');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('must be an absolute http(s) URL');
  }
  const schemes = policy.httpsOnly ? ['https:'] : ['http:', 'https:'];
  if (!schemes.includes(url.protocol)) {
    throw invalid(`must use ${policy.httpsOnly ? 'https (the service runs in production mode)' : 'http or https'}, not ${url.protocol}`);
  }
  if (url.username || url.password) throw invalid('must not contain credentials (user:password@)');
  if (!url.hostname) throw invalid('must name a host');
  if (url.href.length > MAX_WEBHOOK_URL_LENGTH) throw invalid(`must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  if (policy.allowPrivateTargets) return url.href;

  const literal = ipLiteralOf(url.hostname);
  if (literal) {
    const kind = refusedAddressKind(literal);
    if (kind) throw invalid(`points to ${literal}, a ${kind} address; webhook targets must be public`);
    return url.href;
  }
  let addresses: string[];
  try {
    addresses = await resolveAll(url.hostname);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // A name that does not exist is the user's mistake; a resolver that is down is ours, and the
    // delivery-time check still protects us, so we accept the URL then.
    if (code === 'ENOTFOUND' || code === 'ENODATA') throw invalid(`host ${url.hostname} does not resolve`);
    return url.href;
  }
  for (const address of addresses) {
    const kind = refusedAddressKind(address);
    if (kind) throw invalid(`host ${url.hostname} resolves to ${address}, a ${kind} address; webhook targets must be public`);
  }
  return url.href;
}
