// The two ways a webhook is signed, each in its own header: Standard Webhooks with Ed25519
// (`webhook-signature`, over id, timestamp and body) and the original hosted service's RSA
// signature over the body alone (`X-ThunderStack-Signature`), so receivers written from its docs
// work unchanged. An operator may turn either off (WEBHOOK_SIGNATURE_SCHEMES).
export const SIGNATURE_SCHEMES = ['thunderstack-rsa-sha256', 'standard-webhooks-v1a'] as const;

export type SignatureScheme = (typeof SIGNATURE_SCHEMES)[number];

/** The request header each scheme's signature travels in. */
export const SCHEME_HEADERS: Record<SignatureScheme, string> = {
  'thunderstack-rsa-sha256': 'X-ThunderStack-Signature',
  'standard-webhooks-v1a': 'webhook-signature',
};
