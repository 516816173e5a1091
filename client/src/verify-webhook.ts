// Checking a webhook the service sent: Standard Webhooks headers with asymmetric Ed25519
// signatures ("v1a"), verified with the standard-webhooks-v1a keys of GET /api/webhook-public-keys
// (GET /api/webhook-public-key answers the RSA key of the original service's header). WebCrypto
// only, so it runs wherever a receiver does (Node, Deno, Bun, edge functions).
import { RlnCloudError, type RlnCloudClient, type WebhookEvent } from './client.ts';

export type WebhookPublicKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

/** Request headers as a fetch Request has them, or as Node's IncomingMessage does. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** The key, or keys, to accept signatures of (importWebhookPublicKey, fetchWebhookPublicKey). */
  publicKey: WebhookPublicKey | WebhookPublicKey[];
  headers: WebhookHeaders;
  /** The body exactly as received: re-serialised JSON does not verify. */
  body: string | Uint8Array;
  /** How far `webhook-timestamp` may be from now, in seconds (default 300): older ones are replays. */
  toleranceSeconds?: number;
  /** Now, for tests; the clock by default. */
  now?: Date;
}

export interface VerifiedWebhook {
  /** `webhook-id`: the event id, the same on every retry and redelivery; deduplicate on it. */
  webhookId: string;
  /** `webhook-timestamp`: unix seconds of this attempt. */
  timestamp: number;
  event: WebhookEvent;
}

export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

/** Imports an Ed25519 PEM public key (a standard-webhooks-v1a `publicKey` of GET /api/webhook-public-keys); do it once, not per request. */
export async function importWebhookPublicKey(pem: string): Promise<WebhookPublicKey> {
  const base64 = pem.replace(/-----(BEGIN|END) PUBLIC KEY-----/g, '').replace(/\s+/g, '');
  return crypto.subtle.importKey('spki', bytesOfBase64(base64), { name: 'Ed25519' }, false, ['verify']);
}

/** The service's current Standard Webhooks key, imported. After a key rotation, fetch it again. */
export async function fetchWebhookPublicKey(client: RlnCloudClient): Promise<WebhookPublicKey> {
  const keys = await standardWebhooksKeys(client);
  return importWebhookPublicKey((keys.find((k) => k.current) ?? keys[0]!).publicKey);
}

/**
 * Every Standard Webhooks key the service signs with now (during a rotation's overlap, the old one
 * too), imported: pass them all to verifyWebhook. When none verifies a webhook, fetch them again.
 */
export async function fetchWebhookPublicKeys(client: RlnCloudClient): Promise<WebhookPublicKey[]> {
  return Promise.all((await standardWebhooksKeys(client)).map((k) => importWebhookPublicKey(k.publicKey)));
}

async function standardWebhooksKeys(client: RlnCloudClient) {
  const { data, error, response } = await client.GET('/api/webhook-public-keys');
  if (data === undefined) throw new RlnCloudError(response.status, error);
  const keys = data.data.filter((k) => k.scheme === 'standard-webhooks-v1a');
  if (keys.length === 0) throw new Error('the service does not sign webhooks with Standard Webhooks: its operator turned the scheme off');
  return keys;
}

/**
 * The event of a webhook whose signature verifies with one of the keys and whose timestamp is
 * recent; otherwise a WebhookVerificationError saying why (answer such a request 400 or 401).
 * During a key rotation the header carries two signatures: one verifying is enough.
 */
export async function verifyWebhook(options: VerifyWebhookOptions): Promise<VerifiedWebhook> {
  const { headers, body, toleranceSeconds = 300, now = new Date() } = options;
  const webhookId = header(headers, 'webhook-id');
  const timestampText = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!/^[0-9]{1,12}$/.test(timestampText)) throw new WebhookVerificationError('webhook-timestamp is not unix seconds');
  const timestamp = Number(timestampText);
  if (Math.abs(now.getTime() / 1000 - timestamp) > toleranceSeconds) {
    throw new WebhookVerificationError(`webhook-timestamp is more than ${toleranceSeconds} s away from now: a replay, or a clock that is off`);
  }
  const bodyBytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  const prefix = new TextEncoder().encode(`${webhookId}.${timestampText}.`);
  const signed = new Uint8Array(prefix.length + bodyBytes.length);
  signed.set(prefix);
  signed.set(bodyBytes, prefix.length);
  const keys = Array.isArray(options.publicKey) ? options.publicKey : [options.publicKey];
  for (const part of signatures.split(' ')) {
    const [version, encoded] = part.split(',', 2);
    if (version !== 'v1a' || !encoded) continue;
    let signature: Uint8Array<ArrayBuffer>;
    try {
      signature = bytesOfBase64(encoded);
    } catch {
      continue;
    }
    for (const key of keys) {
      if (await crypto.subtle.verify({ name: 'Ed25519' }, key, signature, signed)) {
        return { webhookId, timestamp, event: JSON.parse(new TextDecoder().decode(bodyBytes)) as WebhookEvent };
      }
    }
  }
  throw new WebhookVerificationError('no v1a signature in webhook-signature verifies with the public key');
}

function header(headers: WebhookHeaders, name: string): string {
  const value = headers instanceof Headers ? headers.get(name) : (headers[name] ?? headers[Object.keys(headers).find((k) => k.toLowerCase() === name) ?? '']);
  if (Array.isArray(value)) throw new WebhookVerificationError(`${name} is sent more than once`);
  if (typeof value !== 'string' || value === '') throw new WebhookVerificationError(`${name} is missing`);
  return value;
}

function bytesOfBase64(base64: string): Uint8Array<ArrayBuffer> {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
