// Rate limits through real HTTP: per API token and per user on the management API, per token on
// the node gateway; each answer carries the draft RateLimit fields, and past a limit comes 429
// rate_limited with Retry-After. Other users and tokens keep their own counts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { createTenants } from '../helpers/tenants.ts';

describe(`rate limits, on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let nodeId: string;

  beforeAll(async () => {
    t = await startTestServer({ API_RATE_LIMIT_PER_MINUTE: '6', API_USER_RATE_LIMIT_PER_MINUTE: '9', GATEWAY_RATE_LIMIT_PER_MINUTE: '4' });
    ({ alice, bob } = await createTenants(t));
    // Created and awaited through the service, not the API: the limits below start counting from zero.
    nodeId = (await t.server.services.nodes.createNode(bob.id, { name: 'limited', network: 'regtest' })).body.data.nodeId;
    const deadline = Date.now() + 60_000;
    while ((await t.server.services.nodes.getNode(bob.id, nodeId)).status !== 'RUNNING') {
      if (Date.now() > deadline) throw new Error(`node ${nodeId} did not reach RUNNING`);
      await new Promise((r) => setTimeout(r, 100));
    }
  });
  afterAll(() => t?.stop());

  it('allows API_RATE_LIMIT_PER_MINUTE requests per token, then answers 429 with Retry-After', async () => {
    const answers = [];
    for (let i = 0; i < 7; i++) answers.push(await t.call('/api/tokens', { token: alice.token }));
    expect(answers.slice(0, 6).map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect(answers[0]!.headers.get('ratelimit-policy')).toBe('"token";q=6;w=60');
    expect(answers.slice(0, 6).map((r) => r.headers.get('ratelimit')?.match(/r=(\d+)/)?.[1])).toEqual(['5', '4', '3', '2', '1', '0']);
    const refused = answers[6]!;
    expect(refused.status).toBe(429);
    expect(refused.json.error).toMatchObject({ code: 'rate_limited', message: expect.stringContaining('this API token') });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers.get('ratelimit')).toMatch(/^"token";r=0;t=\d+$/);
  });

  it("counts every token of a user against API_USER_RATE_LIMIT_PER_MINUTE; other users keep theirs", async () => {
    const second = await t.server.services.accounts.createToken(alice.email, 'second');
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await t.call('/api/tokens', { token: second.token })).status);
    // 6 of alice's 9 went to the first token (the refused 7th counted for neither limit): 3 left.
    expect(statuses).toEqual([200, 200, 200, 429]);
    const refused = await t.call('/api/tokens', { token: second.token });
    expect(refused.json.error.message).toContain('your account');
    expect(refused.headers.get('ratelimit-policy')).toBe('"user";q=9;w=60');
    expect((await t.call('/api/tokens', { token: bob.token })).status).toBe(200);
  });

  it('limits the node gateway per token with GATEWAY_RATE_LIMIT_PER_MINUTE', async () => {
    const call = () => fetch(`${t.config.nodeApiUrl}/${bob.id}/${nodeId}/nodeinfo`, { headers: { authorization: `Bearer ${bob.token}` } });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await call()).status);
    expect(statuses).toEqual([403, 403, 403, 403]); // the locked node's own answer, passed through
    const refused = await call();
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(refused.headers.get('ratelimit-policy')).toBe('"gateway";q=4;w=60');
    // The gateway's own answer, in RLN's shape with the service's code under rln_cloud.
    const body = await refused.json();
    expect(body).toMatchObject({ error: expect.stringContaining('too many requests'), code: 429, name: 'RateLimited', rln_cloud: { code: 'rate_limited' } });
    // The fields are the answer's head; the body does not repeat them (issue #37).
    expect(body.rln_cloud.details).toEqual({ retryAfterSeconds: expect.any(Number) });
  });
});
