// The PROXY protocol (HAProxy's, versions 1 and 2) in front of the mutual-TLS gateway. That gateway
// sits behind TCP passthrough (TLS ends here, where the client certificate is checked), so no proxy
// can add X-Forwarded-For; a load balancer that speaks the PROXY protocol instead sends the client's
// address in a header before the TLS bytes. Taken only from a peer TRUSTED_PROXIES names: from
// anyone else it would be a client choosing its own address, and the connection is cut.
//
// proxy-protocol-js decodes a header's fields; it reads a complete header and says nothing about
// where one ends or whether its addresses are addresses, so the framing (how many bytes, the caps
// the specification sets) and those checks are here.
import { isIP, type Socket } from 'node:net';
import type { Server as TlsServer, TLSSocket } from 'node:tls';
import { Command, IPv4ProxyAddress, IPv6ProxyAddress, V1ProxyProtocol, V2ProxyProtocol } from 'proxy-protocol-js';
import type { Logger } from '../logger.ts';
import { trustsPeer, type TrustedProxies } from '../http/client-address.ts';

const V1_SIGNATURE = Buffer.from('PROXY ', 'latin1');
// Carriage return and line feed, spelled as bytes: this is no HTTP (architecture.test.ts looks for hand-written HTTP).
const V1_END = String.fromCharCode(13, 10);
const V2_SIGNATURE = Buffer.from('0d0a0d0a000d0a515549540a', 'hex');
// The specification's longest version 1 line (TCP6, two full IPv6 addresses, two 5-digit ports, the line end).
const V1_MAX_BYTES = 107;
const V2_FIXED_BYTES = 16;
// Addresses (36 bytes for IPv6) plus the TLVs a cloud load balancer adds (AWS: a VPC endpoint id);
// far below the 64 KiB the length field allows, so a stranger cannot make a connection buffer that.
const V2_MAX_BODY_BYTES = 1024;

export class ProxyHeaderError extends Error {}

/**
 * What the start of a connection holds: no PROXY header (TLS, or anything else, left to the TLS
 * layer), not yet enough bytes to tell, or a header of `length` bytes naming `client` (undefined:
 * the header names no client, a health check's LOCAL or UNKNOWN; the peer itself is the client).
 * Throws ProxyHeaderError for a header that breaks the specification.
 */
export type ProxyHeaderRead = { kind: 'none' } | { kind: 'incomplete' } | { kind: 'header'; length: number; client: string | undefined };

const startsLike = (data: Buffer, signature: Buffer) => data.subarray(0, signature.length).equals(signature.subarray(0, Math.min(data.length, signature.length)));

export function readProxyHeader(data: Buffer): ProxyHeaderRead {
  if (data.length === 0) return { kind: 'incomplete' };
  if (startsLike(data, V1_SIGNATURE)) return data.length < V1_SIGNATURE.length ? { kind: 'incomplete' } : readV1(data);
  if (startsLike(data, V2_SIGNATURE)) return data.length < V2_FIXED_BYTES ? { kind: 'incomplete' } : readV2(data);
  return { kind: 'none' };
}

function readV1(data: Buffer): ProxyHeaderRead {
  const end = data.subarray(0, V1_MAX_BYTES).indexOf(V1_END);
  if (end < 0) {
    if (data.length >= V1_MAX_BYTES) throw new ProxyHeaderError(`a PROXY v1 line longer than ${V1_MAX_BYTES} bytes`);
    return { kind: 'incomplete' };
  }
  const line = data.subarray(0, end).toString('latin1');
  const length = end + 2;
  if (/^PROXY UNKNOWN( [ -~]*)?$/.test(line)) return { kind: 'header', length, client: undefined };
  let parsed: V1ProxyProtocol;
  try {
    parsed = V1ProxyProtocol.parse(line + V1_END);
  } catch {
    throw new ProxyHeaderError('a malformed PROXY v1 line');
  }
  const family = parsed.inetProtocol === 'TCP4' ? 4 : 6;
  const { source, destination } = parsed;
  if (isIP(source.ipAddress) !== family || isIP(destination.ipAddress) !== family || !isPort(source.port) || !isPort(destination.port)) {
    throw new ProxyHeaderError('a PROXY v1 line whose addresses or ports are not valid');
  }
  return { kind: 'header', length, client: canonical(source.ipAddress) };
}

function readV2(data: Buffer): ProxyHeaderRead {
  const bodyLength = data.readUInt16BE(14);
  if (bodyLength > V2_MAX_BODY_BYTES) throw new ProxyHeaderError(`a PROXY v2 header of more than ${V2_MAX_BODY_BYTES} bytes`);
  const length = V2_FIXED_BYTES + bodyLength;
  if (data.length < length) return { kind: 'incomplete' };
  let parsed: V2ProxyProtocol;
  try {
    parsed = V2ProxyProtocol.parse(new Uint8Array(data.subarray(0, length)));
  } catch {
    throw new ProxyHeaderError('a malformed PROXY v2 header');
  }
  // LOCAL: the proxy's own connection (a health check). UNSPEC or UNIX: no client address to take.
  if (parsed.command === Command.LOCAL) return { kind: 'header', length, client: undefined };
  const address = parsed.proxyAddress;
  if (address instanceof IPv4ProxyAddress) return { kind: 'header', length, client: address.sourceAddress.address.join('.') };
  if (address instanceof IPv6ProxyAddress) return { kind: 'header', length, client: ipv6Text(address.sourceAddress.address) };
  return { kind: 'header', length, client: undefined };
}

const isPort = (port: number) => Number.isInteger(port) && port >= 0 && port <= 65535;

function ipv6Text(bytes: number[]): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  return canonical(groups.join(':'));
}

/** One spelling per address (`::1`, not `0:0:0:0:0:0:0:1`), as a socket reports it. */
function canonical(address: string): string {
  return isIP(address) === 6 ? new URL(`http://[${address}]`).hostname.slice(1, -1) : address;
}

export interface ProxyProtocolOptions {
  trusted: TrustedProxies;
  /** How long a connection may take to send its header (the gateway's header timeout). */
  timeoutMs: number;
  log: Logger;
}

/**
 * Makes `server` read a PROXY header, if any, before its TLS handshake, and answers the function
 * that says which client a header named for a TLS connection (undefined: none, the peer is the
 * client). The TLS layer's own connection listener is handed the socket once the header is read.
 */
export function acceptProxyProtocol(server: TlsServer, opts: ProxyProtocolOptions): (socket: TLSSocket) => string | undefined {
  // Keyed by the peer's address and port: a TLS socket reports its TCP connection's (the key is
  // unique among open connections to one listener), and the entry goes when that connection closes.
  const clients = new Map<string, string>();
  const key = (socket: Socket) => `${socket.remoteAddress}|${socket.remotePort}`;
  const tlsListeners = server.listeners('connection') as Array<(socket: Socket) => void>;
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    const peer = socket.remoteAddress;
    let received: Buffer = Buffer.alloc(0);
    const refuse = (reason: string) => {
      opts.log.info({ peer, reason }, 'mutual-TLS connection refused: a bad PROXY protocol header');
      socket.destroy();
    };
    const timer = setTimeout(() => refuse('no complete header in time'), opts.timeoutMs);
    const onError = () => socket.destroy();
    const onData = (chunk: Buffer) => {
      received = received.length === 0 ? chunk : Buffer.concat([received, chunk]);
      let read: ProxyHeaderRead;
      try {
        read = readProxyHeader(received);
      } catch (err) {
        clearTimeout(timer);
        return refuse((err as Error).message);
      }
      if (read.kind === 'incomplete') return;
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('error', onError);
      socket.pause();
      if (read.kind === 'header') {
        if (!trustsPeer(opts.trusted, peer)) return refuse('a PROXY header from a peer TRUSTED_PROXIES does not name');
        if (read.client !== undefined) {
          const k = key(socket);
          clients.set(k, read.client);
          socket.once('close', () => clients.delete(k));
        }
        received = received.subarray(read.length);
      }
      if (received.length > 0) socket.unshift(received);
      for (const listener of tlsListeners) listener.call(server, socket);
    };
    socket.on('data', onData);
    socket.on('error', onError);
    socket.once('close', () => clearTimeout(timer));
  });
  return (socket) => clients.get(key(socket));
}
