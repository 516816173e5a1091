// @peculiar/x509 builds and signs certificates; it needs the Reflect metadata polyfill loaded
// before it (its ASN.1 schemas use decorators) and a WebCrypto provider, node's own.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

export { x509 };
export const subtle = webcrypto.subtle;

/** ECDSA P-256 with SHA-256: small keys, fast handshakes, accepted by every TLS stack we target. */
export const EC_P256 = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
