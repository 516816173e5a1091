// Who the client is behind a load balancer or Ingress: one rule (TRUSTED_PROXIES) for every
// listener. The API hands it to Fastify (`trustProxy`, so `request.ip` is the client); the gateways
// run on node:http and ask `clientAddress`; the mutual-TLS gateway asks `trustsPeer` before it takes
// a PROXY protocol header (gateway/proxy-protocol.ts). Both use @fastify/proxy-addr, Fastify's own
// reading of X-Forwarded-For, so the listeners cannot disagree about a request.
import type { IncomingMessage } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';
import { Type } from '@sinclair/typebox';
import { format } from '../env/formats.ts';

/**
 * `none`: the socket's peer is the client (nobody's X-Forwarded-For is believed). `cidrs`: peers in
 * these ranges are proxies, and X-Forwarded-For is read right to left past every trusted address.
 * `hops`: the nearest `hops` addresses are proxies, whoever they are (only where nothing but the
 * proxy can reach the listener).
 */
export type TrustedProxies = { kind: 'none' } | { kind: 'cidrs'; cidrs: string[] } | { kind: 'hops'; hops: number };

export const TRUST_NOBODY: TrustedProxies = { kind: 'none' };

type TrustFn = (address: string, hop: number) => boolean;

const MAX_HOPS = 10;
// The names proxy-addr gives the private and loopback ranges; anything else must be an address or a range.
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** A range that holds every address would make any client's X-Forwarded-For the truth. */
function trustsEverything(item: string): boolean {
  const prefix = item.split('/')[1];
  // "/0", or a netmask of zeros ("/0.0.0.0", "/::").
  return prefix !== undefined && /^[0.:]+$/.test(prefix.trim());
}

/** TRUSTED_PROXIES' text: empty (nobody), a hop count, or comma-separated addresses, CIDR ranges and proxy-addr's named ranges. */
export function parseTrustedProxies(text: string): TrustedProxies | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return TRUST_NOBODY;
  if (/^\d+$/.test(trimmed)) {
    const hops = Number(trimmed);
    return hops >= 1 && hops <= MAX_HOPS ? { kind: 'hops', hops } : undefined;
  }
  const items = trimmed
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  if (items.length === 0 || items.some(trustsEverything)) return undefined;
  try {
    proxyAddr.compile(items.filter((item) => !NAMED_RANGES.has(item)));
  } catch {
    return undefined;
  }
  return { kind: 'cidrs', cidrs: items };
}

export const trustedProxiesFormat = () =>
  format(
    Type.Unknown(),
    `be empty (trust no proxy), a hop count between 1 and ${MAX_HOPS}, or comma-separated addresses and CIDR ranges (e.g. 10.0.0.0/8, loopback); never a range holding every address`,
    parseTrustedProxies,
  );

const trustCache = new WeakMap<TrustedProxies, TrustFn>();

/** proxy-addr's trust function for `trusted`: is the `hop`-th address from the socket (0: the socket's peer) a proxy? */
export function trustFunction(trusted: TrustedProxies): TrustFn {
  let fn = trustCache.get(trusted);
  if (!fn) {
    fn =
      trusted.kind === 'none' ? () => false
      : trusted.kind === 'hops' ? (_address, hop) => hop < trusted.hops
      : proxyAddr.compile(trusted.cidrs);
    trustCache.set(trusted, fn);
  }
  return fn;
}

/**
 * What Fastify's `trustProxy` takes. Always a function: Fastify reads a bare number as "trust
 * nobody" (a hop count cannot vouch for the socket's peer), while TRUSTED_PROXIES=<n> says the
 * operator knows only the proxy reaches the listener.
 */
export function fastifyTrustProxy(trusted: TrustedProxies): TrustFn | false {
  return trusted.kind === 'none' ? false : trustFunction(trusted);
}

/** Whether the connection's own peer is a trusted proxy (the PROXY protocol has no other hop to look past). */
export function trustsPeer(trusted: TrustedProxies, peerAddress: string | undefined): boolean {
  return peerAddress !== undefined && trustFunction(trusted)(peerAddress, 0);
}

/** The client of an HTTP request: its socket's peer, or the address a trusted proxy forwarded. */
export function clientAddress(req: IncomingMessage, trusted: TrustedProxies): string {
  if (trusted.kind === 'none') return req.socket.remoteAddress ?? '';
  return proxyAddr(req, trustFunction(trusted));
}
