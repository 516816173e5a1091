// GET /api/nodes/{id}/health against real devnode daemons: a fresh locked node is up (RLN's 403),
// an unlocked one reports its chain, a stopped one is not asked, and a daemon that hangs (stopped
// with SIGSTOP) is reported as not answering within the probe's bound instead of holding the call.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseLabel } from '../helpers/database.ts';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { rawRequest } from '../gateway/gateway-client.ts';

describe(`node health on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let nodeId: string;
  const health = async () => {
    const r = await t.call(`/api/nodes/${nodeId}/health`, { token: alice.token });
    expect(r.status, r.text).toBe(200);
    return r.json.data;
  };
  const gateway = (route: string, body: object) =>
    rawRequest(t.config.nodeApiUrl, `/${alice.id}/${nodeId}/${route}`, { method: 'POST', body: JSON.stringify(body), headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json' } });

  beforeAll(async () => {
    t = await startTestServer();
    alice = await t.createUser();
    nodeId = (await t.call('/api/nodes', { method: 'POST', token: alice.token, body: { name: 'h', network: 'regtest' } })).json.data.nodeId;
    await t.waitForStatus(alice, nodeId, 'RUNNING');
  }, 60_000);
  afterAll(() => t?.stop());

  it('reports a fresh node RUNNING, locked, with its create build, and its daemon up', async () => {
    const h = await health();
    expect(h).toMatchObject({
      nodeId,
      status: 'RUNNING',
      locked: true,
      initialized: false,
      imageVersion: 'devnode-0.1.0',
      lastBuild: { id: `${nodeId}-1`, buildNumber: 1, action: 'create', buildStatus: 'SUCCESS', buildComplete: true, currentPhase: 'DONE' },
      daemon: { checked: true, answering: true, httpStatus: 403, error: null, height: null },
    });
    expect(h.daemon.latencyMs).toBeGreaterThanOrEqual(0);
  });

  it("reports an unlocked node's chain", async () => {
    expect((await gateway('init', { password: 'health-password-1' })).status).toBe(200);
    expect((await gateway('unlock', { password: 'health-password-1' })).status).toBe(200);
    const h = await health();
    expect(h).toMatchObject({ locked: false, initialized: true, daemon: { answering: true, httpStatus: 200, network: expect.any(String), height: expect.any(Number) } });
  });

  it('answers within the probe bound when the daemon hangs, saying it does not answer', async () => {
    const pid = (await t.server.runtime.status(nodeId)).pid!;
    process.kill(pid, 'SIGSTOP');
    try {
      const t0 = Date.now();
      const h = await health();
      expect(Date.now() - t0).toBeLessThan(5_000);
      expect(h.daemon).toMatchObject({ checked: true, answering: false, httpStatus: null, error: expect.any(String) });
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    expect((await health()).daemon.answering).toBe(true);
  });

  it('does not ask the daemon of a stopped node', async () => {
    expect((await t.call(`/api/nodes/${nodeId}/stop`, { method: 'POST', token: alice.token })).status).toBe(200);
    await t.waitForStatus(alice, nodeId, 'PAUSED');
    expect(await health()).toMatchObject({ status: 'PAUSED', lastBuild: { action: 'stop' }, daemon: { checked: false, answering: false } });
  });
});
