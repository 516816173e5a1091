import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { clientAddress, parseTrustedProxies, trustsPeer } from './client-address.ts';
import { loadConfig } from '../config.ts';

const request = (peer: string, forwarded?: string) => ({ socket: { remoteAddress: peer }, connection: { remoteAddress: peer }, headers: forwarded ? { 'x-forwarded-for': forwarded } : {} }) as unknown as IncomingMessage;

describe('TRUSTED_PROXIES', () => {
  it('reads nobody, a hop count, or addresses and ranges', () => {
    expect(parseTrustedProxies('')).toEqual({ kind: 'none' });
    expect(parseTrustedProxies('2')).toEqual({ kind: 'hops', hops: 2 });
    expect(parseTrustedProxies(' 10.0.0.0/8, loopback ,fd00::/8,192.168.1.7')).toEqual({ kind: 'cidrs', cidrs: ['10.0.0.0/8', 'loopback', 'fd00::/8', '192.168.1.7'] });
  });

  it('refuses what is not an address, a hop count of 0, and every range that trusts everybody', () => {
    for (const text of ['0', '11', 'proxy.example', '10.0.0.0/33', '0.0.0.0/0', '::/0', '10.0.0.0/0', '1.2.3.4/0.0.0.0', ',', '*', 'true']) {
      expect(parseTrustedProxies(text), text).toBeUndefined();
    }
  });

  it('is a start-up error naming the variable, and MTLS_PROXY_PROTOCOL=on needs addresses', () => {
    expect(() => loadConfig({ TRUSTED_PROXIES: '0.0.0.0/0' })).toThrow(/TRUSTED_PROXIES must be empty \(trust no proxy\)/);
    expect(() => loadConfig({ MTLS_PROXY_PROTOCOL: 'on' })).toThrow(/MTLS_PROXY_PROTOCOL=on needs TRUSTED_PROXIES/);
    expect(() => loadConfig({ MTLS_PROXY_PROTOCOL: 'on', TRUSTED_PROXIES: '1' })).toThrow(/MTLS_PROXY_PROTOCOL=on needs TRUSTED_PROXIES/);
    expect(() => loadConfig({ MTLS_PROXY_PROTOCOL: 'yes' })).toThrow(/MTLS_PROXY_PROTOCOL must be "off" or "on"/);
    expect(loadConfig({ MTLS_PROXY_PROTOCOL: 'on', TRUSTED_PROXIES: '10.0.0.0/8' }).trustedProxies).toEqual({ kind: 'cidrs', cidrs: ['10.0.0.0/8'] });
    expect(loadConfig({}).trustedProxies).toEqual({ kind: 'none' });
  });
});

describe('the client address', () => {
  const lb = parseTrustedProxies('10.0.0.0/8')!;
  it("is the peer's when nobody is trusted, whatever X-Forwarded-For says", () => {
    expect(clientAddress(request('10.0.0.5', '203.0.113.9'), parseTrustedProxies('')!)).toBe('10.0.0.5');
  });
  it('is the forwarded one from a trusted peer, past every trusted hop, and never past an untrusted one', () => {
    expect(clientAddress(request('10.0.0.5', '203.0.113.9'), lb)).toBe('203.0.113.9');
    // A client's own X-Forwarded-For ends up on the left: only the hop the proxy saw counts.
    expect(clientAddress(request('10.0.0.5', '1.1.1.1, 203.0.113.9, 10.2.3.4'), lb)).toBe('203.0.113.9');
    expect(clientAddress(request('198.51.100.1', '203.0.113.9'), lb)).toBe('198.51.100.1');
  });
  it('with a hop count, is that many hops from the peer', () => {
    expect(clientAddress(request('10.0.0.5', '1.1.1.1, 203.0.113.9'), parseTrustedProxies('1')!)).toBe('203.0.113.9');
    expect(clientAddress(request('10.0.0.5', '1.1.1.1, 203.0.113.9'), parseTrustedProxies('2')!)).toBe('1.1.1.1');
  });
  it('trusts a peer for the PROXY protocol only by its address', () => {
    expect(trustsPeer(lb, '10.9.9.9')).toBe(true);
    expect(trustsPeer(lb, '::ffff:10.9.9.9')).toBe(true);
    expect(trustsPeer(lb, '127.0.0.1')).toBe(false);
    expect(trustsPeer(parseTrustedProxies('')!, '10.9.9.9')).toBe(false);
  });
});
