import { describe, expect, it } from 'vitest';
import { ProxyHeaderError, readProxyHeader } from './proxy-protocol.ts';

const SIG = '0d0a0d0a000d0a515549540a';
const v2 = (verCmd: string, famProto: string, body: string) => Buffer.from(SIG + verCmd + famProto + (body.length / 2).toString(16).padStart(4, '0') + body, 'hex');
const TLS_HELLO = Buffer.from('160301', 'hex');

describe('reading a PROXY protocol header', () => {
  it('leaves a TLS handshake (or anything else) to the TLS layer', () => {
    expect(readProxyHeader(TLS_HELLO)).toEqual({ kind: 'none' });
    expect(readProxyHeader(Buffer.from('GET / HTTP/1.1\r\n'))).toEqual({ kind: 'none' });
  });

  it('reads version 1 lines, and waits for the rest of one', () => {
    const line = 'PROXY TCP4 203.0.113.9 10.0.0.1 51234 8443\r\n';
    expect(readProxyHeader(Buffer.concat([Buffer.from(line), TLS_HELLO]))).toEqual({ kind: 'header', length: line.length, client: '203.0.113.9' });
    expect(readProxyHeader(Buffer.from('PROXY TCP6 2001:db8:0:0:0:0:0:1 2001:db8::2 1 2\r\n'))).toMatchObject({ client: '2001:db8::1' });
    expect(readProxyHeader(Buffer.from('PROXY UNKNOWN\r\n'))).toEqual({ kind: 'header', length: 15, client: undefined });
    for (const partial of ['P', 'PROX', 'PROXY TCP4 203.0.113.9 ']) expect(readProxyHeader(Buffer.from(partial)), partial).toEqual({ kind: 'incomplete' });
  });

  it('refuses version 1 lines that break the specification', () => {
    for (const line of [
      'PROXY TCP4 not-an-ip 10.0.0.1 1 2\r\n',
      'PROXY TCP4 2001:db8::1 10.0.0.1 1 2\r\n',
      'PROXY TCP4 203.0.113.9 10.0.0.1 1 99999\r\n',
      'PROXY UDP4 203.0.113.9 10.0.0.1 1 2\r\n',
      'PROXY TCP4 203.0.113.9 10.0.0.1 1\r\n',
      `PROXY TCP4 ${'1'.repeat(120)}`,
    ]) {
      expect(() => readProxyHeader(Buffer.from(line)), line).toThrow(ProxyHeaderError);
    }
  });

  it('reads version 2 headers: IPv4, IPv6, TLVs skipped, LOCAL naming no client', () => {
    const ipv4 = v2('21', '11', 'cb007109' + '0a000001' + 'c822' + '20fb' + '0400034142');
    expect(readProxyHeader(Buffer.concat([ipv4, TLS_HELLO]))).toEqual({ kind: 'header', length: ipv4.length, client: '203.0.113.9' });
    const ipv6 = v2('21', '21', '20010db8000000000000000000000009' + '20010db8000000000000000000000001' + '0001' + '0002');
    expect(readProxyHeader(ipv6)).toEqual({ kind: 'header', length: ipv6.length, client: '2001:db8::9' });
    const local = v2('20', '00', '');
    expect(readProxyHeader(local)).toEqual({ kind: 'header', length: 16, client: undefined });
    expect(readProxyHeader(ipv4.subarray(0, 20))).toEqual({ kind: 'incomplete' });
    expect(readProxyHeader(ipv4.subarray(0, 5))).toEqual({ kind: 'incomplete' });
  });

  it('refuses version 2 headers that break the specification or are too long to buffer', () => {
    expect(() => readProxyHeader(v2('11', '11', 'cb0071090a000001c82220fb'))).toThrow(ProxyHeaderError); // version 1 in a v2 header
    expect(() => readProxyHeader(v2('21', '11', 'cb007109'))).toThrow(ProxyHeaderError); // shorter than its addresses
    expect(() => readProxyHeader(Buffer.from(SIG + '2111' + 'ffff', 'hex'))).toThrow(/more than 1024 bytes/);
  });
});
