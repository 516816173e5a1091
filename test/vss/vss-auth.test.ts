// VSS authentication and the hosting binding over real HTTP (docs/VSS.md): "sigs" tokens signed
// independently (node:crypto), refused with AUTH_EXCEPTION 401 when malformed, badly signed or
// stale; each URL's store bound to the first key that writes to it, and refused to every other
// key, to another node's URL, to another account's node, and once its node is destroyed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { createNodes } from '../helpers/tenants.ts';
import { databaseLabel } from '../helpers/database.ts';
import { newVssKey, vssClient } from '../helpers/vss-client.ts';
import { parseExposition, series } from '../helpers/metrics.ts';

const AUTH = 5;
const v = (s: string) => Buffer.from(s);

describe(`VSS authentication and binding, on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let urls: { a1: string; a2: string; b1: string };
  let nodes: string[];

  beforeAll(async () => {
    t = await startTestServer();
    alice = await t.createUser();
    bob = await t.createUser();
    const [a1, a2] = await createNodes(t, alice, [{ name: 'a1' }, { name: 'a2' }], { untilRunning: false });
    const [b1] = await createNodes(t, bob, [{ name: 'b1' }], { untilRunning: false });
    nodes = [a1, a2, b1];
    const issue = (account: string, node: string) => t.server.services.vss.issueUrl(account, node);
    urls = { a1: await issue(alice.id, a1), a2: await issue(alice.id, a2), b1: await issue(bob.id, b1) };
  }, 60_000);
  afterAll(() => t?.stop());

  const refused = (answer: { status: number; body: any }) => {
    expect(answer.status).toBe(401);
    expect(answer.body.errorCode).toBe(AUTH);
  };

  it('accepts a token signed as vss-client signs it, and refuses a bad signature, a stale time and a malformed header', async () => {
    const key = newVssKey();
    expect((await vssClient(urls.a1, key).put('s', [{ key: 'k', version: 0, value: v('x') }])).status).toBe(200);
    const good = key.token();
    // The signature of another time, with this time: does not verify.
    const now = Math.floor(Date.now() / 1000);
    const forged = `${key.token(now - 5).slice(0, 194)}${now}`;
    refused(await vssClient(urls.a1, key, { token: () => forged }).get('s', 'k'));
    // A flipped signature byte.
    const flipped = good.slice(0, 70) + (good[70] === '0' ? '1' : '0') + good.slice(71);
    refused(await vssClient(urls.a1, key, { token: () => flipped }).get('s', 'k'));
    // The same signature with s in the high half (n - s): valid for OpenSSL, not for libsecp256k1.
    const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    const highS = (N - BigInt(`0x${good.slice(130, 194)}`)).toString(16).padStart(64, '0');
    refused(await vssClient(urls.a1, key, { token: () => `${good.slice(0, 130)}${highS}${good.slice(194)}` }).get('s', 'k'));
    // More than a day old, and more than a day ahead, though well signed.
    refused(await vssClient(urls.a1, key, { token: () => key.token(now - 24 * 3600 - 60) }).get('s', 'k'));
    refused(await vssClient(urls.a1, key, { token: () => key.token(now + 24 * 3600 + 60) }).get('s', 'k'));
    for (const header of ['', 'Bearer abc', good.slice(0, 150), `${good}x`]) {
      refused(await vssClient(urls.a1, key, { token: () => header }).get('s', 'k'));
    }
    // A time within the day is accepted (clocks are not exact).
    expect((await vssClient(urls.a1, key, { token: () => key.token(now - 3600) }).get('s', 'k')).status).toBe(200);
  });

  it("binds a node's store to the first key that writes; another key there is refused, also for reads", async () => {
    const first = newVssKey();
    const second = newVssKey();
    // Reading an unbound store binds nothing.
    expect((await vssClient(urls.a2, second).list('s')).status).toBe(200);
    expect((await vssClient(urls.a2, first).put('s', [{ key: 'k', version: 0, value: v('x') }])).status).toBe(200);
    refused(await vssClient(urls.a2, second).put('s', [{ key: 'k', version: -1, value: v('y') }]));
    refused(await vssClient(urls.a2, second).get('s', 'k'));
    refused(await vssClient(urls.a2, second).list('s'));
    refused(await vssClient(urls.a2, second).delete('s', { key: 'k', version: -1 }));
    expect((await vssClient(urls.a2, first).get('s', 'k')).body.value.value.toString()).toBe('x');
  });

  it("refuses a bound key at another node's URL and at another account's node, and a URL with a wrong credential", async () => {
    const bobKey = newVssKey();
    expect((await vssClient(urls.b1, bobKey).put('s', [{ key: 'k', version: 0, value: v('bob') }])).status).toBe(200);
    // Alice's a2 key at bob's node, bob's key at alice's nodes.
    refused(await vssClient(urls.b1, newVssKey()).get('s', 'k'));
    refused(await vssClient(urls.a2, bobKey).get('s', 'k'));
    // Bob's node id with alice's credential, and a made-up credential.
    const credentialOf = (url: string) => url.split('/').pop()!;
    const [, , b1] = nodes;
    const mixed = urls.b1.replace(credentialOf(urls.b1), credentialOf(urls.a1));
    refused(await vssClient(mixed, bobKey).get('s', 'k'));
    refused(await vssClient(`${t.base}/vss/${b1}/not-a-credential`, bobKey).get('s', 'k'));
  });

  it('a new URL for a node keeps its store and key, and ends the old URL', async () => {
    const [, , b1] = nodes;
    const bobKey = newVssKey();
    const url = await t.server.services.vss.issueUrl(bob.id, b1!);
    // b1 is bound to the key of the test before: a new key is still refused at the new URL.
    refused(await vssClient(url, bobKey).get('s', 'k'));
    refused(await vssClient(urls.b1, bobKey).get('s', 'k'));
  });

  it("refuses every request once the URL's node is destroyed", async () => {
    const [node] = await createNodes(t, alice, [{ name: 'doomed' }], { untilRunning: false });
    const url = await t.server.services.vss.issueUrl(alice.id, node);
    const key = newVssKey();
    expect((await vssClient(url, key).put('s', [{ key: 'k', version: 0, value: v('x') }])).status).toBe(200);
    await t.server.db.query(`UPDATE nodes SET status = 'DESTROYED' WHERE id = $1`, [node]);
    refused(await vssClient(url, key).get('s', 'k'));
  });

  it('verifies a header once and reuses the result within its second', async () => {
    const key = newVssKey();
    const header = key.token();
    const verifier = (t.server.services.vss as any).opts.verifier;
    const c = vssClient(urls.a1, key, { token: () => header });
    const before = verifier.verifications;
    const answers = await Promise.all([c.list('s'), c.list('s'), c.list('s')]);
    // All three are answered (a different key than the one bound: refused alike) with at most
    // one verification, or one more if the second turned between them.
    for (const a of answers) expect([200, 401]).toContain(a.status);
    expect(verifier.verifications - before).toBeLessThanOrEqual(2);
  });

  it('counts requests by operation and outcome, written bytes, and refusals by reason', async () => {
    const scrape = async () => parseExposition(await t.server.metrics.registry.metrics()).samples;
    const before = await scrape();
    const [node] = await createNodes(t, alice, [{ name: 'metered' }], { untilRunning: false });
    const url = await t.server.services.vss.issueUrl(alice.id, node);
    const key = newVssKey();
    await vssClient(url, key).put('s', [{ key: 'k', version: 0, value: Buffer.alloc(100) }]);
    await vssClient(url, key).put('s', [{ key: 'k', version: 0, value: Buffer.alloc(100) }]);
    await vssClient(url, newVssKey()).get('s', 'k');
    const after = await scrape();
    const moved = (name: string, labels: Record<string, string> = {}) => (after.get(series(name, labels)) ?? 0) - (before.get(series(name, labels)) ?? 0);
    expect(moved('rlncloud_vss_requests_total', { operation: 'putObjects', outcome: 'ok' })).toBe(1);
    expect(moved('rlncloud_vss_requests_total', { operation: 'putObjects', outcome: 'conflict' })).toBe(1);
    expect(moved('rlncloud_vss_requests_total', { operation: 'getObject', outcome: 'refused' })).toBe(1);
    expect(moved('rlncloud_vss_refusals_total', { reason: 'other_key' })).toBe(1);
    expect(moved('rlncloud_vss_written_bytes_total')).toBe(100);
    expect(moved('rlncloud_vss_request_duration_seconds_count', { operation: 'putObjects' })).toBe(2);
  });

  it("counts a store's value bytes in its account's usage (GET /api/usage vssBytes), and no other account's", async () => {
    const before = (await t.call('/api/usage', { token: bob.token })).json.vssBytes;
    const [node] = await createNodes(t, bob, [{ name: 'counted' }], { untilRunning: false });
    const client = vssClient(await t.server.services.vss.issueUrl(bob.id, node), newVssKey());
    await client.put('s', [{ key: 'a', version: 0, value: Buffer.alloc(1000) }, { key: 'b', version: 0, value: Buffer.alloc(300 * 1024) }]);
    await client.put('s', [{ key: 'a', version: 1, value: Buffer.alloc(10) }]);
    const usage = await t.call('/api/usage', { token: bob.token });
    expect(usage.status).toBe(200);
    expect(usage.json.vssBytes - before).toBe(10 + 300 * 1024);
    const aliceBefore = (await t.call('/api/usage', { token: alice.token })).json.vssBytes;
    await client.delete('s', { key: 'b', version: -1 });
    expect((await t.call('/api/usage', { token: bob.token })).json.vssBytes - before).toBe(10);
    expect((await t.call('/api/usage', { token: alice.token })).json.vssBytes).toBe(aliceBefore);
  });
});
