// @peculiar/x509 builds and signs certificates; it needs the Reflect metadata polyfill loaded
// before it (its ASN.1 schemas use decorators) and a WebCrypto provider, node's own. It is a
// large module graph, so certificate-authority.ts loads this file only when it signs something.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

export { x509 };
