// WEBHOOK_SIGNATURE_SCHEMES: both schemes unless the operator names fewer; never none, never an unknown one.
import { describe, expect, it } from 'vitest';
import { readWebhookConfig } from './settings.ts';

const schemesOf = (value: string | undefined) => {
  const problems: string[] = [];
  const config = readWebhookConfig({ WEBHOOK_SIGNATURE_SCHEMES: value }, problems, { dataDir: '/tmp/x', production: true });
  return { schemes: config.signatureSchemes, problems };
};

describe('WEBHOOK_SIGNATURE_SCHEMES', () => {
  it('signs with both schemes by default, and with those named', () => {
    expect(schemesOf(undefined)).toEqual({ schemes: ['thunderstack-rsa-sha256', 'standard-webhooks-v1a'], problems: [] });
    expect(schemesOf('standard-webhooks-v1a')).toEqual({ schemes: ['standard-webhooks-v1a'], problems: [] });
    expect(schemesOf(' standard-webhooks-v1a , thunderstack-rsa-sha256 ').schemes).toEqual(['standard-webhooks-v1a', 'thunderstack-rsa-sha256']);
  });

  it('refuses an unknown scheme, a repeated one and an empty entry', () => {
    for (const bad of ['hmac-sha256', 'standard-webhooks-v1a,standard-webhooks-v1a', 'standard-webhooks-v1a,']) {
      expect(schemesOf(bad).problems.join('\n'), bad).toMatch(/WEBHOOK_SIGNATURE_SCHEMES must be one or both of thunderstack-rsa-sha256, standard-webhooks-v1a/);
    }
  });
});
