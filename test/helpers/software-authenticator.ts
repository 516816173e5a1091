// A software WebAuthn authenticator for API tests: a P-256 key per credential (node:crypto), an
// attestation of format 'none' at registration, and assertions signed over authenticatorData and
// the hash of clientDataJSON, as a security key or a phone would build them. Every byte is built
// here by the spec (WebAuthn Level 3, §6.1 and §6.5); only CBOR encoding is borrowed.
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

const b64u = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64url');
const sha256 = (bytes: Uint8Array | string) => createHash('sha256').update(bytes).digest();

// Authenticator data flags (§6.1): user present, user verified, attested credential data included.
const UP = 0x01;
const UV = 0x04;
const AT = 0x40;

export interface SoftwareCredential {
  id: string;
  privateKey: KeyObject;
  userHandle: string;
  rpId: string;
  counter: number;
}

export interface Ceremony {
  /** The origin the "browser" puts in clientDataJSON (defaults to the test's). */
  origin?: string;
  /** The relying party id whose hash starts authenticatorData (defaults to the credential's). */
  rpId?: string;
  /** The counter to sign with (defaults to the next one). */
  counter?: number;
  /** Whether the authenticator verified its user (a PIN, a fingerprint); defaults to true. */
  userVerified?: boolean;
}

function authenticatorData(rpId: string, flags: number, counter: number, attested?: Buffer) {
  const count = Buffer.alloc(4);
  count.writeUInt32BE(counter);
  return Buffer.concat([sha256(rpId), Buffer.from([flags]), count, ...(attested ? [attested] : [])]);
}

const clientData = (type: 'webauthn.create' | 'webauthn.get', challenge: string, origin: string) =>
  Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));

export class SoftwareAuthenticator {
  constructor(private readonly origin: string) {}

  /** Answers registration options (their JSON form) with a new credential: what navigator.credentials.create() would give. */
  register(options: { challenge: string; rp: { id?: string }; user: { id: string } }, ceremony: Ceremony = {}) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const id = randomBytes(32);
    // The credential public key in COSE (RFC 9053): EC2, ES256, P-256, x, y.
    const cose = isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x!, 'base64url')],
        [-3, Buffer.from(jwk.y!, 'base64url')],
      ]),
    );
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(id.length);
    const attested = Buffer.concat([Buffer.alloc(16), idLength, id, Buffer.from(cose)]);
    const rpId = ceremony.rpId ?? options.rp.id!;
    const flags = UP | (ceremony.userVerified === false ? 0 : UV) | AT;
    const authData = authenticatorData(rpId, flags, ceremony.counter ?? 0, attested);
    const attestationObject = isoCBOR.encode(new Map<string, unknown>([['fmt', 'none'], ['attStmt', new Map()], ['authData', authData]]) as never);
    const credential: SoftwareCredential = { id: b64u(id), privateKey, userHandle: options.user.id, rpId: options.rp.id!, counter: ceremony.counter ?? 0 };
    const response = {
      id: credential.id,
      rawId: credential.id,
      type: 'public-key' as const,
      response: { clientDataJSON: b64u(clientData('webauthn.create', options.challenge, ceremony.origin ?? this.origin)), attestationObject: b64u(attestationObject), transports: ['internal'] },
      clientExtensionResults: {},
    };
    return { credential, response };
  }

  /** Answers authentication options with `credential`: what navigator.credentials.get() would give. */
  assert(credential: SoftwareCredential, options: { challenge: string }, ceremony: Ceremony = {}) {
    const counter = ceremony.counter ?? credential.counter + 1;
    credential.counter = Math.max(credential.counter, counter);
    const authData = authenticatorData(ceremony.rpId ?? credential.rpId, UP | (ceremony.userVerified === false ? 0 : UV), counter);
    const data = clientData('webauthn.get', options.challenge, ceremony.origin ?? this.origin);
    const signature = sign('sha256', Buffer.concat([authData, sha256(data)]), credential.privateKey);
    return {
      id: credential.id,
      rawId: credential.id,
      type: 'public-key' as const,
      response: { clientDataJSON: b64u(data), authenticatorData: b64u(authData), signature: b64u(signature), userHandle: credential.userHandle },
      clientExtensionResults: {},
    };
  }
}
