// Notification emails over real HTTP and a real SMTP server the test runs: a node FAILED, a node
// whose storage is lost (its storage directory deleted under its running daemon), a backup failed, the account at 80% and at 100% of its plan's monthly API calls. Each is sent once, to the
// account's owner and admins who have not turned its kind off (GET/PUT /api/notifications), never
// to its developers or viewers, never to another account's members.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.ts';
import { addMember } from '../helpers/members.ts';
import { createNodes } from '../helpers/tenants.ts';
import { upsertPlan } from '../../src/db/plans.ts';
import { backUp, initWallet } from '../backups/backup-helpers.ts';
import { Notifications } from '../../src/notifications/service.ts';
import { Mailer } from '../../src/mail/mailer.ts';
import { createLogger } from '../../src/logger.ts';

/** The notifications of another replica: its own services on the same database. */
const anotherReplicasNotifications = (t: TestServer) =>
  new Notifications({
    db: t.server.db,
    mailer: new Mailer({ config: t.config.mail, publicUrl: t.config.publicUrl, log: createLogger('silent') }),
    publicUrl: t.config.publicUrl,
    connectPageUrl: t.config.connectPageUrl,
    log: createLogger('silent'),
  });

const LIMITED_PLAN = 'notify-ten-calls';
const LIMIT = 10;
const ALL_ON = { nodeFailed: true, nodeStorageLost: true, backupFailed: true, apiCalls80: true, apiCalls100: true };

const settle = (ms = 1500) => new Promise((r) => setTimeout(r, ms));

describe(`notification emails on ${databaseLabel()}`, () => {
  let smtp: TestSmtpServer;
  let t: TestServer;
  let owner: TestUser;
  let admin: TestUser;
  let developer: TestUser;
  let viewer: TestUser;
  let stranger: TestUser;

  const subjects = (to: TestUser) => smtp.received.filter((m) => m.to === to.email).map((m) => m.subject);
  const prefs = (user: TestUser, body?: unknown) =>
    t.call('/api/notifications', body === undefined ? { token: user.token } : { method: 'PUT', token: user.token, body });

  beforeAll(async () => {
    smtp = await startSmtpServer();
    // Every call written at once: each batch answers the account's total.
    t = await startTestServer({ SMTP_URL: smtp.url, SERVICE_NAME: 'Example Cloud', USAGE_FLUSH_INTERVAL_MS: '100', USAGE_FLUSH_BATCH: '1' });
    await upsertPlan(t.server.db, LIMITED_PLAN, { maxNodes: null, apiCallsPerMonth: LIMIT, maxUsers: null, autoUpgrade: false });
    owner = await t.createUser();
    admin = await addMember(t, owner.id, 'admin');
    developer = await addMember(t, owner.id, 'developer');
    viewer = await addMember(t, owner.id, 'viewer');
    stranger = await t.createUser();
  });
  afterAll(async () => {
    await t?.stop();
    await smtp?.stop();
  });

  it('answers every kind on by default, sets the kinds named, and refuses bad input with 400', async () => {
    expect((await prefs(owner)).json).toEqual(ALL_ON);
    const off = await prefs(admin, { apiCalls80: false });
    expect(off.status, off.text).toBe(200);
    expect(off.json).toEqual({ ...ALL_ON, apiCalls80: false });
    expect((await prefs(admin)).json).toEqual({ ...ALL_ON, apiCalls80: false });
    // Another person's preferences are their own: the owner's did not change.
    expect((await prefs(owner)).json).toEqual(ALL_ON);
    for (const body of [{}, { apiCalls80: 'no' }, { everything: false }, [true], JSON.stringify('off')]) {
      const r = await prefs(owner, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json.error.code).toBe('invalid_request');
    }
    expect((await t.call('/api/notifications')).status).toBe(401);
    expect((await t.call('/api/notifications', { token: 'rln_not-a-token' })).status).toBe(401);
  });

  it('lets a viewer set their own (they receive none), and a removed member no longer at all', async () => {
    expect((await prefs(viewer, { nodeFailed: false })).json).toEqual({ ...ALL_ON, nodeFailed: false });
    expect((await prefs(viewer, { nodeFailed: true })).json).toEqual(ALL_ON);
    const leaver = await addMember(t, owner.id, 'developer');
    expect((await t.call(`/api/account/members/${leaver.id}`, { method: 'DELETE', token: owner.token })).status).toBe(204);
    expect((await prefs(leaver, { nodeFailed: false })).status).toBe(401);
  });

  it('tells the owner and admins once when a node becomes FAILED, never a developer, a viewer or another account', async () => {
    // devnode exits at once on versions named fail-*: a new node gets the latest release and fails.
    await t.server.services.releases.publish(`fail-${Date.now()}`, { concurrency: 1, failureBudget: 1 });
    const [failed] = await createNodes(t, owner, [{ name: 'doomed' }], { untilRunning: false });
    await t.waitForStatus(owner, failed, 'FAILED', 60_000);
    await smtp.waitFor(owner.email);
    await smtp.waitFor(admin.email);
    await settle();
    expect(subjects(owner)).toEqual(['Node doomed failed on Example Cloud']);
    expect(subjects(admin)).toEqual(['Node doomed failed on Example Cloud']);
    const [mail] = smtp.received.filter((m) => m.to === owner.email);
    expect(mail!.text).toContain(`${t.config.connectPageUrl}/${failed}`);
    expect(mail!.text).toContain('Account page');
    for (const other of [developer, viewer, stranger]) expect(subjects(other)).toEqual([]);
    // The notice's job run again (a retry after a crash between its emails and its completion): nothing more is sent.
    const [event] = await t.server.db.query<{ id: number }>(
      `SELECT id FROM node_events WHERE node_id = $1 AND event_type = 'NODE_STATUS_UPDATED' AND payload -> 'details' ->> 'status' = 'FAILED'`,
      [failed],
    );
    await t.server.db.query(`INSERT INTO jobs (kind, payload, max_attempts) VALUES ('notification.node-event', $1::jsonb, 1)`, [JSON.stringify({ v: 1, eventId: Number(event!.id) })]);
    for (let i = 0; i < 100 && (await t.server.db.query(`SELECT 1 FROM jobs WHERE kind = 'notification.node-event' AND state IN ('queued', 'running')`)).length > 0; i++) await settle(100);
    expect(await t.server.db.query(`SELECT state FROM jobs WHERE kind = 'notification.node-event' AND state <> 'done'`)).toEqual([]);
    await settle();
    expect(subjects(owner)).toEqual(['Node doomed failed on Example Cloud']);
    // The next release is one that starts: the other tests' nodes come up.
    await t.server.services.releases.publish(`devnode-0.2.${Date.now()}`, { concurrency: 1, failureBudget: 1 });
  });

  it('tells them once when a backup fails, and not the admin who turned that kind off', async () => {
    expect((await prefs(admin, { backupFailed: false })).status).toBe(200);
    const [nodeId] = await createNodes(t, owner, [{ name: 'wallet' }]);
    await initWallet(t, owner, nodeId);
    const done = await backUp(t, owner, nodeId, 'not-the-password');
    expect(done.status).toBe('FAILED');
    await smtp.waitFor(owner.email, 2);
    await settle();
    const backupSubject = 'A backup of node wallet failed on Example Cloud';
    expect(subjects(owner).filter((s) => s === backupSubject)).toHaveLength(1);
    expect(subjects(admin)).not.toContain(backupSubject);
    const mail = smtp.received.find((m) => m.to === owner.email && m.subject === backupSubject)!;
    expect(mail.text).toContain(done.backupId);
    for (const other of [developer, viewer, stranger]) expect(subjects(other)).toEqual([]);
  });

  it('tells them once when a node loses its storage, and not the admin who turned that kind off', async () => {
    expect((await prefs(admin, { nodeStorageLost: false })).json).toMatchObject({ nodeStorageLost: false, nodeFailed: true });
    const [nodeId] = await createNodes(t, owner, [{ name: 'volume' }]);
    const told = subjects(owner).length;
    rmSync(join(t.config.dataDir, 'nodes', nodeId!, 'storage'), { recursive: true, force: true });
    await t.waitForStatus(owner, nodeId!, 'STORAGE_LOST', 60_000);
    const lost = 'Node volume lost its storage on Example Cloud';
    await smtp.waitFor(owner.email, told + 1);
    await settle();
    expect(subjects(owner).filter((s) => s === lost)).toHaveLength(1);
    expect(subjects(admin)).not.toContain(lost);
    for (const other of [developer, viewer, stranger]) expect(subjects(other)).not.toContain(lost);
    const mail = smtp.received.find((m) => m.to === owner.email && m.subject === lost)!;
    expect(mail.text).toContain(`${t.config.connectPageUrl}/${nodeId}`);
    expect(mail.text).toContain("the node's volume is gone");
    expect(mail.text).toContain('Recover it from its page');
    // Not also told as a FAILED node.
    expect(subjects(owner).filter((s) => s === 'Node volume failed on Example Cloud')).toEqual([]);
  });

  it('tells them once at 80% and once at 100% of the month\'s API calls, each by their preference', async () => {
    const limited = await t.createUser(LIMITED_PLAN);
    const limitedAdmin = await addMember(t, limited.id, 'admin');
    const limitedViewer = await addMember(t, limited.id, 'viewer');
    // The first of the account's calls: the admin will not hear of 80%.
    expect((await prefs(limitedAdmin, { apiCalls80: false })).status).toBe(200);
    let refused = 0;
    for (let i = 0; i < LIMIT + 5; i++) {
      const r = await t.call('/api/nodes', { token: limited.token });
      if (r.status === 429) {
        expect(r.json.error.code).toBe('quota_exceeded');
        refused++;
      } else expect(r.status).toBe(200);
    }
    expect(refused).toBeGreaterThanOrEqual(5);
    const reached80 = "Your Example Cloud account has used 80% of this month's API calls";
    const reached100 = "Your Example Cloud account has used all of this month's API calls";
    await smtp.waitFor(limitedAdmin.email);
    await smtp.waitFor(limited.email, 2);
    await settle(2000);
    expect(subjects(limited)).toEqual([reached80, reached100]);
    // The admin turned 80% off, and still hears of 100%.
    expect(subjects(limitedAdmin)).toEqual([reached100]);
    expect(subjects(limitedViewer)).toEqual([]);
    // Nobody of the other account heard of it.
    expect(subjects(owner).filter((s) => s === reached80 || s === reached100)).toEqual([]);
    const mail = smtp.received.find((m) => m.to === limited.email && m.subject === reached100)!;
    expect(mail.text).toContain(`all ${LIMIT} API calls`);
    expect(mail.text).toContain(`${t.base}/account`);

    // Replicas crossing the same threshold at once (this one's service and another built on the
    // same database): one email. A month told already is not told again.
    const replicas = [t.server.services.notifications, anotherReplicasNotifications(t)];
    const month = new Date().toISOString().slice(0, 7);
    await Promise.all(replicas.map((n) => n.notifyApiCalls({ accountId: limited.id, month: '2020-01', calls: 8, limit: LIMIT, percent: 80 })));
    await Promise.all(replicas.map((n) => n.notifyApiCalls({ accountId: limited.id, month, calls: LIMIT, limit: LIMIT, percent: 100 })));
    await smtp.waitFor(limited.email, 3);
    await settle();
    expect(subjects(limited)).toEqual([reached80, reached100, reached80]);
    expect(subjects(limitedAdmin)).toEqual([reached100]);
  });
});
