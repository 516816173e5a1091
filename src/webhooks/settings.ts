// Configuration of webhook delivery, read by config.ts with the rest of the environment (it lives
// here so each setting and its reason sit beside the code using it).
import { join, resolve } from 'node:path';
import { Type } from '@sinclair/typebox';
import { boolean, duration, format, integer, text } from '../env/formats.ts';
import { readEnv, variable, type Env } from '../env/variable.ts';
import { DEFAULT_RETRY_SCHEDULE, parseRetrySchedule } from './retry-policy.ts';
import { SIGNATURE_SCHEMES, type SignatureScheme } from './signature-schemes.ts';

export interface WebhookConfig {
  /**
   * Loopback, private, link-local targets allowed. Safe default: true only outside production,
   * where the service and the receiver are usually on one laptop; production refuses them so a
   * user cannot make the service call internal endpoints (SSRF).
   */
  allowPrivateTargets: boolean;
  /** Plain http:// webhook URLs allowed: outside production, or where the operator says so (a test network). */
  allowHttp: boolean;
  /** Delay before attempt 1, 2, ...; as many attempts as entries. Spans ~32 h by default. */
  retryScheduleMs: number[];
  /** One attempt (connect, send, answer) may take this long; 15 s like other webhook senders. */
  timeoutMs: number;
  /** Deliveries in flight at once; each goes to a different node, so ordering is unaffected. */
  concurrency: number;
  /** The signing keyring (or a bare PEM private key); created at first start when missing. */
  signingKeyFile: string;
  /** How long a rotated-out key keeps signing beside the new one, so receivers can switch over. */
  keyOverlapMs: number;
  /**
   * The signatures every webhook carries. Both by default: the original service's receivers verify
   * X-ThunderStack-Signature, ours verify Standard Webhooks; each costs one signature per attempt.
   */
  signatureSchemes: SignatureScheme[];
}


const retrySchedule = format(
  Type.Array(Type.Integer({ minimum: 0 }), { minItems: 1, maxItems: 50 }),
  'be 1-50 comma-separated durations like 0,5s,5m,2h',
  parseRetrySchedule,
);

const signatureSchemes = format(
  Type.Array(Type.Union(SIGNATURE_SCHEMES.map((s) => Type.Literal(s))), { minItems: 1, uniqueItems: true }),
  `be one or both of ${SIGNATURE_SCHEMES.join(', ')}, comma-separated`,
  (text) => text.split(',').map((s) => s.trim()) as SignatureScheme[],
);

export const WEBHOOK_VARIABLES = {
  // Derived from NODE_ENV in readWebhookConfig; see allowPrivateTargets above for why that is safe.
  allowPrivateTargets: variable('WEBHOOK_ALLOW_PRIVATE_TARGETS', boolean(), {
    unset: '`true` unless `NODE_ENV=production`',
    doc: 'let webhook URLs reach loopback, private and link-local addresses (a laptop); production refuses them (SSRF)',
  }),
  allowHttp: variable('WEBHOOK_ALLOW_HTTP', boolean(), {
    unset: '`true` unless `NODE_ENV=production`',
    doc: 'let webhook URLs use plain `http://`; production requires `https://` unless this says otherwise (a closed test network)',
  }),
  retryScheduleMs: variable('WEBHOOK_RETRY_SCHEDULE', retrySchedule, {
    default: DEFAULT_RETRY_SCHEDULE,
    doc: 'delay before each attempt (`ms`, `s`, `m`, `h`); as many attempts as entries; each delay gets +-20% jitter',
  }),
  timeoutMs: variable('WEBHOOK_TIMEOUT', duration(100), {
    default: '15s',
    doc: 'how long one attempt (connect, send, answer) may take',
  }),
  concurrency: variable('WEBHOOK_CONCURRENCY', integer(1, 1000), {
    default: '32',
    doc: 'webhook POSTs under way at once per replica (one per node at a time); up to as many more are claimed ahead, ready to send',
  }),
  signingKeyFile: variable('WEBHOOK_SIGNING_KEY_FILE', text(), {
    unset: '`<DATA_DIR>/webhook-signing-keys.json`',
    doc: 'the signing keyring (Ed25519, and RSA for `X-ThunderStack-Signature`; mode 0600), created at first start; may be PEM private keys you provide (share one file between replicas)',
  }),
  keyOverlapMs: variable('WEBHOOK_KEY_OVERLAP', duration(0), {
    default: '24h',
    doc: 'how long a rotated-out key keeps signing beside the new one (Standard Webhooks); how long a new RSA key is published before it signs (X-ThunderStack-Signature)',
  }),
  signatureSchemes: variable('WEBHOOK_SIGNATURE_SCHEMES', signatureSchemes, {
    default: SIGNATURE_SCHEMES.join(','),
    doc: "the signatures webhooks carry: `thunderstack-rsa-sha256` (`X-ThunderStack-Signature`, the original service's, for its receivers) and `standard-webhooks-v1a` (`webhook-signature`); leave one out to stop sending it",
  }),
};

export function readWebhookConfig(env: Env, problems: string[], ctx: { dataDir: string; production: boolean }): WebhookConfig {
  const values = readEnv(WEBHOOK_VARIABLES, env, problems);
  return {
    ...values,
    allowPrivateTargets: values.allowPrivateTargets ?? !ctx.production,
    allowHttp: values.allowHttp ?? !ctx.production,
    signingKeyFile: resolve(values.signingKeyFile ?? join(ctx.dataDir, 'webhook-signing-keys.json')),
  };
}
