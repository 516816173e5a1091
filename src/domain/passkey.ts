// A person's passkey as the accounts part speaks of it (db/passkeys.ts maps it from its row).

export interface StoredPasskey {
  id: string;
  userId: string;
  /** The WebAuthn credential id, base64url. */
  credentialId: string;
  /** The COSE public key, base64url. */
  publicKey: string;
  /** The signature counter last seen (0 for an authenticator that keeps none). */
  counter: number;
  /** What the authenticator said it can be reached over (usb, internal, hybrid, ...). */
  transports: string[];
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}
