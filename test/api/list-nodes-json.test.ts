// GET /api/nodes, with or without paging, sends the JSON the database writes (db/node-list-json.ts)
// instead of serializing objects: these are the bytes the object path (GET /api/nodes/{id},
// serialized by the Node schema) sends for each node, for every kind of field value: settings with and without a webhook URL, builds in
// progress, failed with and without an error, a runtime's peer host and port or the defaults,
// automatic unlock on or off, names that need escaping, timestamps with microseconds, storage and VSS store measured or not.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { latestRelease } from '../../src/db/releases.ts';
import { newId } from '../../src/auth/tokens.ts';

describe(`GET /api/nodes as the database's JSON, on ${databaseLabel()}`, () => {
  let t: TestServer;
  let alice: TestUser;
  const ids: string[] = [];

  beforeAll(async () => {
    t = await startTestServer();
    alice = await t.createUser('scale');
    const db = t.server.db;
    const version = (await latestRelease(db))!.version;
    const nodes = [
      { name: 'plain', settings: '{}', peerHost: null, peerPort: null, sealed: null },
      { name: 'with "quotes", \\ and \u00e9\u4e2d\ud83d\ude00 \n\t\u0001', settings: '{"webhookUrl":"https://example.com/h?a=1&b=\\"x\\""}', peerHost: 'peer.example', peerPort: 19735, sealed: 'sealed' },
      { name: 'null url', settings: '{"webhookUrl":null}', peerHost: null, peerPort: 20001, sealed: null },
    ];
    for (const [i, n] of nodes.entries()) {
      const id = newId();
      ids.push(id);
      await db.query(
        `INSERT INTO nodes (id, user_id, name, network, status, desired_state, image_version, settings, rest_port, peer_port, peer_host,
                            auto_unlock_sealed, locked, initialized, created_at, updated_at)
         VALUES ($1, $2, $3, 'testnet', 'PAUSED', 'stopped', $4, $5, $6, $7, $8, $9, $10, $11,
                 '2026-01-02 03:04:05.678901+00'::timestamptz + make_interval(secs => $12), now())`,
        [id, alice.id, n.name, version, n.settings, 40_000 + i * 2, n.peerPort, n.peerHost, n.sealed, i % 2 === 0, i > 0, i],
      );
    }
    // A measured node (past 2^32 bytes, microseconds in the time) beside ones never measured (null).
    await db.query(
      `UPDATE nodes SET storage_used_bytes = 12345678901, storage_capacity_bytes = 10737418240000, storage_available_bytes = 0,
              storage_measured_at = '2026-01-03 04:05:06.789012+00' WHERE id = $1`,
      [ids[1]],
    );
    // A VSS store measured (past 2^32 bytes too) on another node.
    await db.query(`UPDATE nodes SET vss_bytes = 5368709121, vss_measured_at = '2026-01-04 05:06:07.890123+00' WHERE id = $1`, [ids[2]]);
    // Phases: a finished build shows its outcome whatever step it was last on; one in progress its
    // step, or QUEUED before the first.
    const builds = [
      { node: 0, status: 'SUCCESS', error: null, finished: true, phase: 'WAITING_FOR_DAEMON' },
      { node: 0, status: 'FAILURE', error: 'the image "x" could not be pulled\n', finished: true, phase: 'ROLLING_BACK' },
      { node: 0, status: 'FAILURE', error: '', finished: true, phase: null },
      { node: 0, status: 'IN_PROGRESS', error: null, finished: false, phase: null },
      { node: 1, status: 'SUCCESS', error: null, finished: true, phase: null },
      { node: 1, status: 'IN_PROGRESS', error: null, finished: false, phase: 'RESTORING_BACKUP' },
    ];
    for (const [i, b] of builds.entries()) {
      await db.query(
        `INSERT INTO builds (node_id, build_number, action, status, image_version, error, started_at, finished_at, phase)
         VALUES ($1, (SELECT count(*) + 1 FROM builds WHERE node_id = $1), 'upgrade', $2, $3, $4, now() - interval '1 hour 0.0005 seconds',
                 CASE WHEN $5 THEN now() - make_interval(secs => $6 / 1000.0) END, $7)`,
        [ids[b.node], b.status, version, b.error, b.finished, i * 1.2345, b.phase],
      );
    }
  });
  afterAll(async () => t?.stop());

  /** The object path's bytes for a node: GET /api/nodes/{id}'s `data`, serialized by the Node schema. */
  const objectPathNode = async (token: string, id: string) => {
    const r = await t.call(`/api/nodes/${id}`, { token });
    expect(r.status, r.text).toBe(200);
    expect(r.text.startsWith('{"data":')).toBe(true);
    return r.text.slice('{"data":'.length, -1);
  };
  /** The object path's bytes for these nodes as one list. */
  const objectPathText = async (token: string, nodeIds = ids) =>
    `{"nodes":[${(await Promise.all(nodeIds.map((id) => objectPathNode(token, id)))).join(',')}]}`;

  it('answers the same bytes as the object path, with the same content type', async () => {
    const r = await t.call('/api/nodes', { token: alice.token });
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(r.json.nodes.map((n: { nodeId: string }) => n.nodeId)).toEqual(ids);
    expect(r.json.nodes[0].builds).toHaveLength(4);
    expect(r.json.nodes.flatMap((n: any) => n.builds.map((b: any) => b.currentPhase))).toEqual(['DONE', 'FAILED', 'FAILED', 'QUEUED', 'DONE', 'RESTORING_BACKUP']);
    expect(r.json.nodes[1].builds.map((b: any) => b.id)).toEqual([`${ids[1]}-1`, `${ids[1]}-2`]);
    expect(r.json.nodes[0]).toMatchObject({ port: t.config.nodeApiPort, protocol: 'http' });
    expect(r.text).toBe(await objectPathText(alice.token));
  });

  it('lists only the nodes of a token limited to some, and an empty list for a user without nodes', async () => {
    const { token } = await t.server.services.accounts.createToken(alice.email, 'two nodes', undefined, { nodeIds: [ids[0]!, ids[2]!] });
    const r = await t.call('/api/nodes', { token });
    expect(r.json.nodes.map((n: { nodeId: string }) => n.nodeId)).toEqual([ids[0], ids[2]]);
    expect(r.text).toBe(await objectPathText(token, [ids[0]!, ids[2]!]));
    const bob = await t.createUser();
    const empty = await t.call('/api/nodes', { token: bob.token });
    expect(empty.text).toBe('{"nodes":[]}');
  });

  it('answers each page with the same bytes for its nodes, and the cursor of the next', async () => {
    const first = await t.call('/api/nodes?limit=2', { token: alice.token });
    expect(first.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const cursor = first.json.nextCursor as string;
    expect(typeof cursor).toBe('string');
    expect(first.text).toBe(`${(await objectPathText(alice.token, ids.slice(0, 2))).slice(0, -1)},"nextCursor":${JSON.stringify(cursor)}}`);
    const second = await t.call(`/api/nodes?limit=2&cursor=${encodeURIComponent(cursor)}`, { token: alice.token });
    expect(second.text).toBe(`${(await objectPathText(alice.token, ids.slice(2))).slice(0, -1)},"nextCursor":null}`);
    const limited = await t.server.services.accounts.createToken(alice.email, 'one node', undefined, { nodeIds: [ids[1]!] });
    const only = await t.call('/api/nodes?limit=5', { token: limited.token });
    expect(only.text).toBe(`${(await objectPathText(limited.token, [ids[1]!])).slice(0, -1)},"nextCursor":null}`);
  });
});
