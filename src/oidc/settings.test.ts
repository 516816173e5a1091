import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../config.ts';

const problems = (env: Record<string, string>) => {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
};

describe('OpenID Connect provider configuration', () => {
  it('has no providers by default', () => {
    expect(loadConfig({}).oidcProviders).toEqual([]);
  });

  it('reads a list, and one provider from OIDC_ISSUER (id "sso"), with verified emails off unless said', () => {
    const config = loadConfig({
      OIDC_PROVIDERS: JSON.stringify([{ id: 'google', issuer: 'https://accounts.google.com/', clientId: 'g', clientSecret: 's', verifiedEmails: true }]),
      OIDC_ISSUER: 'https://login.microsoftonline.com/tenant/v2.0',
      OIDC_CLIENT_ID: 'e',
      OIDC_CLIENT_SECRET: 't',
    });
    expect(config.oidcProviders).toEqual([
      { id: 'google', issuer: 'https://accounts.google.com', clientId: 'g', clientSecret: 's', label: 'Sign in with google', verifiedEmails: true },
      { id: 'sso', issuer: 'https://login.microsoftonline.com/tenant/v2.0', clientId: 'e', clientSecret: 't', label: 'Sign in with single sign-on', verifiedEmails: false },
    ]);
  });

  it('refuses a malformed list, duplicate ids and a half-set single provider, without echoing secrets', () => {
    for (const bad of ['not json', '[{"id": "x"}]', JSON.stringify([1, 2]), JSON.stringify([{ id: 'a', issuer: 'https://a', clientId: 'c', clientSecret: 'hush' }, { id: 'a', issuer: 'https://b', clientId: 'c', clientSecret: 'hush' }])]) {
      const found = problems({ OIDC_PROVIDERS: bad });
      expect(found, bad).toEqual([expect.stringMatching(/^OIDC_PROVIDERS must be a JSON list/)]);
      expect(found.join(' ')).not.toContain('hush');
    }
    expect(problems({ OIDC_ISSUER: 'https://idp.example' })).toEqual(['OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET are set together']);
  });
});
