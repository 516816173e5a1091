// Conversions between PEM text, node KeyObjects and WebCrypto keys. Keys given by an operator may
// come as PKCS#8 ("PRIVATE KEY") or SEC1 ("EC PRIVATE KEY"); node:crypto reads both, and the
// signing library wants WebCrypto keys, so everything goes through PKCS#8 DER.
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';

// The global Web Crypto (typed with the global CryptoKey the x509 library takes).
const subtle = globalThis.crypto.subtle;

export type EcCurve = 'P-256' | 'P-384';

const NODE_CURVES: Record<string, EcCurve> = { prime256v1: 'P-256', secp384r1: 'P-384' };

export function ecCurveOf(key: KeyObject): EcCurve | undefined {
  if (key.asymmetricKeyType !== 'ec') return undefined;
  return NODE_CURVES[key.asymmetricKeyDetails?.namedCurve ?? ''];
}

export async function importEcPrivateKey(pem: string): Promise<{ key: CryptoKey; curve: EcCurve; keyObject: KeyObject }> {
  const keyObject = createPrivateKey(pem);
  const curve = ecCurveOf(keyObject);
  if (!curve) throw new Error('the key must be an ECDSA key on P-256 or P-384');
  const der = keyObject.export({ format: 'der', type: 'pkcs8' });
  const key = await subtle.importKey('pkcs8', der, { name: 'ECDSA', namedCurve: curve }, false, ['sign']);
  return { key, curve, keyObject };
}

export async function privateKeyPem(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await subtle.exportKey('pkcs8', key));
  return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }).export({ format: 'pem', type: 'pkcs8' }).toString();
}

export async function publicKeyPem(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await subtle.exportKey('spki', key));
  return createPublicKey({ key: der, format: 'der', type: 'spki' }).export({ format: 'pem', type: 'spki' }).toString();
}
