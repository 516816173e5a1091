import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../config.ts';

describe('sign-up and email configuration', () => {
  it('defaults to invite-only on the starter plan, messages kept in the outbox', () => {
    const config = loadConfig({});
    expect(config.signup).toEqual({ mode: 'invite-only', plan: 'starter', maxPerHour: 100, maxPerAddressPerHour: 5 });
    expect(config.mail.smtpUrl).toBeUndefined();
  });

  it.each(['open', 'approval'])('refuses SIGNUP_MODE=%s without SMTP_URL on PostgreSQL', (mode) => {
    expect(() => loadConfig({ SIGNUP_MODE: mode, DATABASE_URL: 'postgres://db/rln' })).toThrow(ConfigError);
    expect(() => loadConfig({ SIGNUP_MODE: mode, DATABASE_URL: 'postgres://db/rln' })).toThrow(/SIGNUP_MODE=.* needs SMTP_URL/);
    expect(loadConfig({ SIGNUP_MODE: mode, DATABASE_URL: 'postgres://db/rln', SMTP_URL: 'smtps://u:p@smtp.example:465' }).signup.mode).toBe(mode);
  });

  it('lets a laptop (embedded PGlite, process runtime) sign people up with messages kept in the outbox', () => {
    expect(loadConfig({ SIGNUP_MODE: 'open' }).signup.mode).toBe('open');
    expect(loadConfig({ SIGNUP_MODE: 'invite-only', DATABASE_URL: 'postgres://db/rln' }).signup.mode).toBe('invite-only');
  });

  it('refuses an SMTP_URL that is not smtp:// or smtps:// without echoing it', () => {
    try {
      loadConfig({ SMTP_URL: 'http://user:secret@mail' });
      expect.unreachable();
    } catch (err) {
      expect((err as Error).message).toMatch(/SMTP_URL must be an smtp:\/\/ or smtps:\/\/ URL/);
      expect((err as Error).message).not.toContain('secret');
    }
  });
});
