// The plan's node limit holds by every path (issue #37): a restore that supersedes its source and
// fails releases the source, and the account then has two nodes on a one-node plan but never runs
// both; a superseded node takes no slot and accrues no time; concurrent starts at the edge let one
// through. Over real HTTP against real devnode daemons.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { createNodes } from '../helpers/tenants.ts';
import { operatorCommands } from '../../src/operator/commands.ts';
import { backUp, initWallet, nodeRecord, PASSWORD, unlock } from './backup-helpers.ts';

describe(`the node limit across restores and starts, on ${databaseLabel()}`, () => {
  let t: TestServer;
  const run = (command: string, positional: string[]) => operatorCommands[command]!(t.server.services, { positional, options: {} }) as Promise<any>;
  const action = (user: TestUser, nodeId: string, what: 'start' | 'stop' | 'upgrade') =>
    t.call(`/api/nodes/${nodeId}/${what}`, { method: 'POST', token: user.token });
  const nodesUse = async (user: TestUser) => (await t.call('/api/account', { token: user.token })).json.usage.nodes;
  /** Waits until the node's build in progress (if any) is over; answers the node. */
  const settled = async (user: TestUser, nodeId: string) => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const node = await nodeRecord(t, user, nodeId);
      if (['RUNNING', 'PAUSED', 'FAILED'].includes(node.status) && node.builds.every((b: { buildStatus: string }) => b.buildStatus !== 'IN_PROGRESS')) return node;
      if (Date.now() > deadline) throw new Error(`node ${nodeId} still ${node.status}`);
      await new Promise((r) => setTimeout(r, 150));
    }
  };

  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t?.stop());

  it('a failed superseding restore on a one-node plan leaves two nodes of which only one may run, with true counts', async () => {
    const user = await t.createUser('starter');
    const [sourceId] = await createNodes(t, user, [{ name: 'source' }]);
    await initWallet(t, user, sourceId);
    await unlock(t, user, sourceId);
    const backup = await backUp(t, user, sourceId);
    expect(backup.status).toBe('SUCCEEDED');

    const restore = { backupId: backup.backupId, password: 'not-the-password', supersedeSource: true };
    const r = await t.call('/api/nodes', { method: 'POST', token: user.token, body: { name: 'restored', network: 'regtest', restore } });
    expect(r.status, r.text).toBe(200);
    const failedId = r.json.data.nodeId;
    expect((await settled(user, failedId)).status).toBe('FAILED');
    expect(await settled(user, sourceId)).toMatchObject({ status: 'PAUSED' });

    // The source was released: two nodes, one of them (the failed one, still meant to run) running.
    expect(await nodesUse(user)).toEqual({ used: 2, running: 1, limit: 1 });
    const refused = await action(user, sourceId, 'start');
    expect(refused.status, refused.text).toBe(403);
    expect(refused.json.error).toMatchObject({ code: 'plan_limit_reached', details: { limit: 'runningNodes', max: 1, used: 1, plan: 'starter' } });
    expect(refused.json.error.message).toBe('the starter plan allows 1 running node and the account runs 1; stop or destroy one, or change the plan');
    const created = await t.call('/api/nodes', { method: 'POST', token: user.token, body: { name: 'third', network: 'regtest' } });
    expect(created.json.error).toMatchObject({ code: 'plan_limit_reached', details: { limit: 'nodes', max: 1, used: 2 } });
    expect(created.json.error.message).toContain('the account has 2');

    // Stopping the failed node frees the running slot for the source, and then the failed node may not start.
    expect((await action(user, failedId, 'stop')).status).toBe(200);
    await settled(user, failedId);
    expect((await action(user, sourceId, 'start')).status).toBe(200);
    expect((await action(user, failedId, 'start')).json.error).toMatchObject({ code: 'plan_limit_reached', details: { limit: 'runningNodes' } });
    expect(await settled(user, sourceId)).toMatchObject({ status: 'RUNNING' });
    expect(await nodesUse(user)).toEqual({ used: 2, running: 1, limit: 1 });

    // A superseding restore that succeeds: the superseded source takes no slot and is recorded as accruing nothing.
    expect((await t.call('/api/nodes', { method: 'DELETE', token: user.token, body: { destroyNodeId: failedId } })).status).toBe(200);
    await unlock(t, user, sourceId);
    const again = await t.call('/api/nodes', {
      method: 'POST',
      token: user.token,
      body: { name: 'restored', network: 'regtest', restore: { ...restore, password: PASSWORD, confirmOlderBackup: true } },
    });
    expect(again.status, again.text).toBe(200);
    expect((await settled(user, again.json.data.nodeId)).status).toBe('RUNNING');
    expect(await nodesUse(user)).toEqual({ used: 1, running: 1, limit: 1 });
    await settled(user, sourceId);
    const [last] = await t.server.db.query<{ status: string }>(
      'SELECT status FROM node_status_changes WHERE node_id = $1 ORDER BY changed_at DESC, id DESC LIMIT 1',
      [sourceId],
    );
    expect(last!.status).toBe('SUPERSEDED');
    const usage = (await t.call('/api/usage', { token: user.token })).json;
    const sourceTime = usage.nodes.find((n: { nodeId: string }) => n.nodeId === sourceId);
    const before = sourceTime?.pausedSeconds ?? 0;
    await new Promise((r) => setTimeout(r, 1100));
    const later = (await t.call('/api/usage', { token: user.token })).json.nodes.find((n: { nodeId: string }) => n.nodeId === sourceId);
    expect(later?.pausedSeconds ?? 0).toBe(before);
  });

  it('lets one of two concurrent starts through on a plan that allows one running node', async () => {
    const user = await t.createUser('growth');
    const ids = await createNodes(t, user, [{ name: 'a' }, { name: 'b' }]);
    for (const id of ids) expect((await action(user, id, 'stop')).status).toBe(200);
    for (const id of ids) expect(await settled(user, id)).toMatchObject({ status: 'PAUSED' });
    await run('account set-plan', [user.email, 'starter']);
    const answers = await Promise.all(ids.map((id) => action(user, id, 'start')));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 403]);
    expect(await nodesUse(user)).toEqual({ used: 2, running: 1, limit: 1 });
  });
});
