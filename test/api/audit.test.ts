// The audit trail through real HTTP: tokens created and revoked, certificates issued and revoked,
// unlock attempts through the management API and the bearer gateway (wrong and right passwords),
// automatic unlock turned on and off, a backup, a destroy, web sign-ins (failed and not), and the
// operator's own actions; each with its actor, source address and outcome, readable by the owner
// only (GET /api/audit-events, paged) and by the operator (`audit list`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { createNodes, createTenants } from '../helpers/tenants.ts';
import { operatorCommands } from '../../src/operator/commands.ts';
import { backUp, initWallet, PASSWORD } from '../backups/backup-helpers.ts';

describe(`the audit trail, on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let nodeId: string;
  let tokenId: string;
  let serial: string;

  const trail = async (user: TestUser, query = '') => (await t.call(`/api/audit-events${query}`, { token: user.token })).json;
  const post = (path: string, body?: unknown, method = 'POST') => t.call(path, { method, token: alice.token, body });

  beforeAll(async () => {
    t = await startTestServer();
    ({ alice, bob } = await createTenants(t));
    await t.server.services.accounts.setPassword(alice.email, 'alice-web-password');
    [nodeId] = await createNodes(t, alice, [{ name: 'audited' }]);
    await initWallet(t, alice, nodeId);
  });
  afterAll(() => t?.stop());

  it('records what alice does, with her token as actor and her address, successes and failures', async () => {
    const created = await post('/api/tokens', { name: 'ci-bot' });
    expect(created.status).toBe(200);
    tokenId = created.json.data.id;
    expect((await post(`/api/tokens/${tokenId}`, undefined, 'DELETE')).status).toBe(200);
    const cert = await post(`/api/nodes/${nodeId}/generate-cert`);
    serial = cert.json.serial;
    expect((await post(`/api/nodes/${nodeId}/certs/${serial}`, undefined, 'DELETE')).status).toBe(200);
    expect((await post(`/api/nodes/${nodeId}/unlock`, { password: 'not-the-password' })).status).toBe(403);
    expect((await post(`/api/nodes/${nodeId}/unlock`, { password: PASSWORD })).status).toBe(200);
    expect((await post(`/api/nodes/${nodeId}/auto-unlock`, { password: PASSWORD }, 'PUT')).status).toBe(200);
    expect((await post(`/api/nodes/${nodeId}/auto-unlock`, undefined, 'DELETE')).status).toBe(200);
    expect((await backUp(t, alice, nodeId)).status).toBe('SUCCEEDED');

    const { events } = await trail(alice);
    const seen = events.map((e: any) => [e.action, e.target, e.outcome]);
    expect(seen).toEqual([
      ['backup.created', nodeId, 'succeeded'],
      ['node.auto_unlock.disabled', nodeId, 'succeeded'],
      ['node.auto_unlock.enabled', nodeId, 'succeeded'],
      ['node.unlock', nodeId, 'succeeded'],
      ['node.unlock', nodeId, 'failed'],
      ['certificate.revoked', serial, 'succeeded'],
      ['certificate.issued', nodeId, 'succeeded'],
      ['token.revoked', tokenId, 'succeeded'],
      ['token.created', 'ci-bot', 'succeeded'],
    ]);
    for (const e of events) expect(e).toMatchObject({ actor: `token:${alice.tokenId}`, sourceIp: '127.0.0.1', at: expect.any(String) });
    expect(events.find((e: any) => e.outcome === 'failed').details).toEqual({ status: 403, code: 'wrong_password' });
    // Nothing of a password anywhere in the trail.
    expect(JSON.stringify(events)).not.toContain(PASSWORD);
  });

  it('records unlock attempts through the gateway, and web sign-ins failed or not', async () => {
    const lock = await fetch(`${t.config.nodeApiUrl}/${alice.id}/${nodeId}/lock`, { method: 'POST', headers: { authorization: `Bearer ${alice.token}` } });
    expect(lock.status).toBe(200);
    const unlock = await fetch(`${t.config.nodeApiUrl}/${alice.id}/${nodeId}/unlock`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ password: 'wrong-again' }),
    });
    expect(unlock.status).toBe(401);
    for (const password of ['not-hers', 'alice-web-password']) {
      await t.call('/api/session', { method: 'POST', body: { email: alice.email, password } });
    }
    const { events } = await trail(alice, '?limit=3');
    expect(events.map((e: any) => [e.action, e.actor, e.outcome])).toEqual([
      ['session.sign_in', 'session', 'succeeded'],
      ['session.sign_in', 'session', 'failed'],
      ['node.unlock', 'gateway:bearer', 'failed'],
    ]);
    expect(events[2]).toMatchObject({ sourceIp: '127.0.0.1', details: { nodeStatus: 401 } });
  });

  it('keeps each trail to its owner, in pages', async () => {
    expect((await trail(bob)).events).toEqual([]);
    const all = (await trail(alice, '?limit=200')).events.map((e: any) => e.id);
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await trail(alice, `?limit=4${cursor ? `&cursor=${cursor}` : ''}`);
      paged.push(...page.events.map((e: any) => e.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(paged).toEqual(all);
    // Alice's cursor is not Bob's.
    const aliceCursor = (await trail(alice, '?limit=1')).nextCursor;
    expect((await t.call(`/api/audit-events?cursor=${aliceCursor}`, { token: bob.token })).status).toBe(400);
    expect((await t.call('/api/audit-events?limit=0', { token: alice.token })).status).toBe(400);
    expect((await t.call('/api/audit-events')).status).toBe(401);
  });

  it('shows a token limited to some nodes only the events about them, as the event stream does', async () => {
    const [otherNode] = await createNodes(t, alice, [{ name: 'not-in-scope' }]);
    const otherCert = await post(`/api/nodes/${otherNode}/generate-cert`);
    expect((await post(`/api/nodes/${otherNode}/certs/${otherCert.json.serial}`, undefined, 'DELETE')).status).toBe(200);
    expect((await post(`/api/nodes/${otherNode}/unlock`, { password: 'not-the-password' })).status).not.toBe(200);
    // The trail is written once the answer is sent: wait for the last one.
    await expect.poll(async () => (await trail(alice, '?limit=1')).events[0]?.target, { timeout: 3000 }).toBe(otherNode);
    const [inScope, outOfScope] = await Promise.all(
      [[nodeId], [otherNode]].map(async (nodeIds) => (await t.server.services.accounts.createToken(alice.email, 'limited', undefined, { nodeIds })).token),
    );
    const read = async (token: string, query = '?limit=200') => (await t.call(`/api/audit-events${query}`, { token })).json;
    const full = (await trail(alice, '?limit=200')).events;
    const mine = (await read(inScope!)).events;
    const theirs = (await read(outOfScope!)).events;
    // Events about the node (a certificate revoked by its serial too), never tokens, sign-ins or the other node.
    expect(mine.map((e: any) => e.id)).toEqual(full.filter((e: any) => e.target === nodeId || e.target === serial || (e.action === 'node.unlock' && e.target === nodeId)).map((e: any) => e.id));
    expect(mine.length).toBeGreaterThan(5);
    expect(JSON.stringify(mine)).not.toContain(otherNode);
    expect(mine.some((e: any) => e.action.startsWith('token.') || e.action === 'session.sign_in')).toBe(false);
    expect(theirs.map((e: any) => [e.action, e.target])).toEqual([
      ['node.unlock', otherNode],
      ['certificate.revoked', otherCert.json.serial],
      ['certificate.issued', otherNode],
    ]);
    expect(JSON.stringify(theirs)).not.toContain(nodeId);
    // Page by page, the same events.
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await read(inScope!, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      paged.push(...page.events.map((e: any) => e.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(paged).toEqual(mine.map((e: any) => e.id));
    // Unscoped, read-only and api-only tokens read the whole trail.
    const readOnly = (await t.server.services.accounts.createToken(alice.email, 'ro', undefined, { readOnly: true })).token;
    expect((await read(readOnly)).events.map((e: any) => e.id)).toEqual(full.map((e: any) => e.id));
  });

  it('records the code a refused request was answered with: invalid_request, not the validator\'s own', async () => {
    const carol = await t.createUser();
    const refused = await t.call('/api/tokens', { method: 'POST', token: carol.token, body: { name: 'bad', noSuchField: 1 } });
    expect(refused.status).toBe(400);
    expect(refused.json.error.code).toBe('invalid_request');
    await expect.poll(async () => (await trail(carol)).events.length, { timeout: 3000 }).toBe(1);
    expect((await trail(carol)).events[0]).toMatchObject({ action: 'token.created', outcome: 'failed', details: { status: 400, code: 'invalid_request' } });
  });

    it("records a destroy and the operator's actions; the operator reads every trail", async () => {
    expect((await post('/api/nodes', { destroyNodeId: nodeId }, 'DELETE')).status).toBe(200);
    const ctx = t.server.services;
    const args = (positional: string[], options: Record<string, string> = {}) => ({ positional, options });
    const token = (await operatorCommands['token create']!(ctx, args([alice.email], { name: 'by-operator' }))) as { id: string };
    await operatorCommands['release publish']!(ctx, args(['devnode-0.2.0']));
    const mine = (await trail(alice, '?limit=2')).events;
    expect(mine.map((e: any) => [e.action, e.actor, e.target])).toEqual([
      ['token.created', 'operator', token.id],
      ['node.destroyed', `token:${alice.tokenId}`, nodeId],
    ]);
    const everyone = (await operatorCommands['audit list']!(ctx, args([], { limit: '1' }))) as { events: any[] };
    expect(everyone.events).toEqual([expect.objectContaining({ action: 'release.published', actor: 'operator', target: 'devnode-0.2.0' })]);
    const hers = (await operatorCommands['audit list']!(ctx, args([], { user: alice.email, limit: '1' }))) as { events: any[] };
    expect(hers.events[0]).toMatchObject({ action: 'token.created', target: token.id });
  });
});
