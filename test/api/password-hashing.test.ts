// Password hashing cannot be turned against the API (issue #36, point 4), over real HTTP: the
// public invitation accept looks the secret up before it hashes the password (an unknown secret
// with a 1 KiB password costs no hash), its failures are limited per client address and per link
// (429 with Retry-After), and hashes run through a capped gate whose small queue, once full,
// refuses sign-ins with 503 server_busy and Retry-After instead of queueing them without bound.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { passwordGate } from '../../src/auth/passwords.ts';

const PASSWORD = 'correct horse battery';
const LONG_PASSWORD = 'x'.repeat(1024);

describe(`password hashing on ${databaseLabel()}`, () => {
  let t: TestServer;
  let owner: TestUser;

  beforeAll(async () => {
    // One hash at a time and one waiting: the cap is reached with three requests.
    t = await startTestServer({ PASSWORD_HASH_CONCURRENCY: '1', PASSWORD_HASH_QUEUE: '1' });
    owner = await t.createUser();
    await t.server.services.accounts.setPassword(owner.email, PASSWORD);
  });
  afterAll(() => t?.stop());
  // Each case starts with no failures counted against this client's address.
  beforeEach(() => t.server.db.query('DELETE FROM sign_in_failures'));

  const unknownSecret = () => randomBytes(32).toString('base64url');
  const accept = (token: string, password = LONG_PASSWORD) => t.call('/api/account/invitations/accept', { method: 'POST', body: { token, password } });
  const invite = async () => {
    const r = await t.call('/api/account/invitations', { method: 'POST', token: owner.token, body: { email: `hash-${randomBytes(4).toString('hex')}@example.com`, role: 'viewer' } });
    expect(r.status, r.text).toBe(201);
    return r.json.invitationUrl.split('#token=')[1] as string;
  };
  const inviteAndRevoke = async () => {
    const r = await t.call('/api/account/invitations', { method: 'POST', token: owner.token, body: { email: `revoked-${randomBytes(4).toString('hex')}@example.com`, role: 'viewer' } });
    expect((await t.call(`/api/account/invitations/${r.json.id}`, { method: 'DELETE', token: owner.token })).status).toBe(204);
    return r.json.invitationUrl.split('#token=')[1] as string;
  };
  const signIn = () => t.call('/api/session', { method: 'POST', body: { email: owner.email, password: PASSWORD } });

  describe('the invitation accept', () => {
    it('answers an unknown, a used and a revoked secret with 404 before hashing the password', async () => {
      const used = await invite();
      const hashesBefore = passwordGate.started;
      expect((await accept(used)).status).toBe(201);
      // The one good accept hashes once.
      expect(passwordGate.started).toBe(hashesBefore + 1);
      const revokedSecret = await inviteAndRevoke();
      const hashesAfterAccept = passwordGate.started;
      for (const secret of [unknownSecret(), used, revokedSecret]) {
        const r = await accept(secret);
        expect(r.status, r.text).toBe(404);
        expect(r.json.error.code).toBe('invitation_not_found');
      }
      expect(passwordGate.started).toBe(hashesAfterAccept);
    });

    it('limits failed accepts per link: the sixth try of one secret in 15 minutes answers 429 with Retry-After', async () => {
      const secret = unknownSecret();
      for (let i = 0; i < 5; i++) expect((await accept(secret)).status).toBe(404);
      const r = await accept(secret);
      expect(r.status, r.text).toBe(429);
      expect(r.json.error.code).toBe('rate_limited');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      // Another link from the same address is still looked at.
      expect((await accept(unknownSecret())).status).toBe(404);
    });

    it('limits failed accepts per client address: the 31st in 15 minutes answers 429 with Retry-After, a good link too', async () => {
      for (let i = 0; i < 30; i++) expect((await accept(unknownSecret())).status).toBe(404);
      const good = await invite();
      const r = await accept(good);
      expect(r.status, r.text).toBe(429);
      expect(r.json.error.code).toBe('rate_limited');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    });
  });

  describe('the hashing cap', () => {
    it('queues what it can and refuses the rest with 503 server_busy and Retry-After; the queued one is answered', async () => {
      // Holds the one slot, as a long hash would.
      let release!: () => void;
      const held = passwordGate.run(() => new Promise<void>((resolve) => (release = resolve)));
      const refusedBefore = passwordGate.refused;
      const queued = signIn();
      // Waits until the first sign-in holds the one place in the queue (it reads the database first).
      for (let i = 0; i < 200 && (passwordGate as unknown as { waiting: unknown[] }).waiting.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      const refused = await Promise.all([signIn(), signIn()]);
      for (const r of refused) {
        expect(r.status, r.text).toBe(503);
        expect(r.json.error.code).toBe('server_busy');
        expect(r.headers.get('retry-after')).toBe('1');
      }
      expect(passwordGate.refused).toBe(refusedBefore + 2);
      release();
      await held;
      expect((await queued).status).toBe(200);
      // A refusal is not a failed sign-in: the address and the email are not throttled for it.
      expect((await signIn()).status).toBe(200);
    });

    it('refuses an accept the same way, and the link stays good for the retry', async () => {
      const secret = await invite();
      let release!: () => void;
      const held = passwordGate.run(() => new Promise<void>((resolve) => (release = resolve)));
      const blocker = passwordGate.run(async () => {});
      const r = await accept(secret);
      expect(r.status, r.text).toBe(503);
      expect(r.json.error.code).toBe('server_busy');
      expect(r.headers.get('retry-after')).toBe('1');
      release();
      await Promise.all([held, blocker]);
      expect((await accept(secret)).status).toBe(201);
    });
  });
});
