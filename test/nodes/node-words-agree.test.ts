// The Node answer is defined once (domain/node-answer.ts); the presenter (nodes/present.ts) is typed
// by it and the list query's projection (db/node-list-json.ts) is generated from it, so the compiler
// asks both for every field. This test holds their values together: the presenter gives exactly the
// schema's fields in its order (the order the serializer and the query write), and the projection
// the presenter's answer for the same rows, over every field, set and unset
// (test/api/list-nodes-json.test.ts holds the bytes through HTTP). It also holds the database's CHECK
// constraints to the word lists of domain/nodes.ts, so a status or a network is listed once where code can see it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Build, Node } from '../../src/api/schemas.ts';
import { buildsByNode, finishBuild, insertBuild } from '../../src/db/builds.ts';
import { findNode, insertNode } from '../../src/db/nodes.ts';
import { listUserNodesJson } from '../../src/db/node-list-json.ts';
import { insertRelease } from '../../src/db/releases.ts';
import { BUILD_ACTIONS, BUILD_STATUSES, NETWORKS, NODE_STATUSES } from '../../src/domain/nodes.ts';
import { newId } from '../../src/auth/tokens.ts';
import { AccountService } from '../../src/accounts/service.ts';
import { DEFAULT_PEER_PORT, presentNode } from '../../src/nodes/present.ts';
import { databaseLabel, openMigratedTestDb } from '../helpers/database.ts';

describe(`the Node answer and the node words agree, on ${databaseLabel()}`, () => {
  let db: Awaited<ReturnType<typeof openMigratedTestDb>>;

  beforeAll(async () => {
    db = await openMigratedTestDb();
  });
  afterAll(async () => {
    await db?.close();
  });

  it("presents exactly the schema's fields, in its order, for a node and its builds", async () => {
    const user = await new AccountService(db.db).createUser({ email: `words-${Date.now()}@example.com` });
    await insertRelease(db.db, 'v-words');
    const node = await insertNode(db.db, { id: newId(), userId: user.id, name: 'words', network: 'regtest', status: 'STARTING', desiredState: 'running', imageVersion: 'v-words', settings: {}, restPort: null, peerPort: null });
    const build = await insertBuild(db.db, { nodeId: node.id, action: 'create', imageVersion: 'v-words' });
    const failed = { ...build, status: 'FAILURE' as const, error: 'it failed', finishedAt: new Date() };
    const answer = presentNode(node, [build, failed], { nodeApiUrl: 'http://127.0.0.1:1', peerHost: 'h', nodeApiPort: 1, nodeApiProtocol: 'http', vssSoftLimitBytes: 1 });
    expect(Object.keys(answer)).toEqual(Object.keys(Node.properties));
    // `error` is the one optional field: present only on a failed build.
    const buildFields = Object.keys(Build.properties);
    expect(Object.keys(answer.builds[0]!)).toEqual(buildFields.filter((f) => f !== 'error'));
    expect(Object.keys(answer.builds[1]!)).toEqual(buildFields);
  });

  it("renders in the list query exactly presentNode's answer for the same rows, over every field", async () => {
    const user = await new AccountService(db.db).createUser({ email: `projection-${Date.now()}@example.com` });
    await insertRelease(db.db, 'v-projection');
    const insert = (name: string) =>
      insertNode(db.db, { id: newId(), userId: user.id, name, network: 'testnet', status: 'RUNNING', desiredState: 'running', imageVersion: 'v-projection', settings: {}, restPort: null, peerPort: null });
    // One node with every field set, one with every field that can be unset left so.
    const full = await insert('full "quoted" \u00e9');
    const bare = await insert('bare');
    await db.db.query(
      `UPDATE nodes SET locked = false, initialized = true, auto_unlock_sealed = 'sealed', continuous_state = true, peer_host = 'peer.example', peer_port = 19735,
              settings = '{"webhookUrl":"https://example.com/h"}', storage_used_bytes = 12345678901, storage_capacity_bytes = 20000000000,
              storage_available_bytes = 7, storage_measured_at = '2026-01-03 04:05:06.789012+00',
              vss_bytes = 9876543210, vss_measured_at = '2026-01-04 05:06:07.891234+00' WHERE id = $1`,
      [full.id],
    );
    await insertBuild(db.db, { nodeId: full.id, action: 'create', imageVersion: 'v-projection' });
    await finishBuild(db.db, full.id, 1, 'FAILURE', 'it "failed"\n');
    await insertBuild(db.db, { nodeId: full.id, action: 'upgrade', imageVersion: 'v-projection', previousImageVersion: 'v-projection' });
    const opts = { nodeApiUrl: 'https://nodes.example:8443', peerHost: 'public.example', nodeApiPort: 8443, nodeApiProtocol: 'https' as const, vssSoftLimitBytes: 1_073_741_824 };
    const listed = JSON.parse(await listUserNodesJson(db.db, user.id, null, { ...opts, defaultPeerPort: DEFAULT_PEER_PORT })).nodes;
    const builds = await buildsByNode(db.db, [full.id, bare.id]);
    const presented = await Promise.all([full, bare].map(async (n) => presentNode((await findNode(db.db, n.id))!, builds.get(n.id)!, opts)));
    expect(listed).toEqual(JSON.parse(JSON.stringify(presented)));
    for (const node of listed) expect(Object.keys(node)).toEqual(Object.keys(Node.properties));
    // Every field of the answer is told apart between the two nodes but the few that are the same for every node of a user.
    const same = Object.keys(Node.properties).filter((f) => JSON.stringify(listed[0][f]) === JSON.stringify(listed[1][f]));
    expect(same).toEqual(['network', 'status', 'port', 'protocol', 'rln_commit_id']);
    expect(Object.keys(listed[0].builds[0])).toEqual(Object.keys(Build.properties));
  });

  it("allows in the database exactly the statuses, networks and actions the code lists", async () => {
    const allowed = async (table: string, column: string) => {
      const [row] = await db.db.query<{ def: string }>(
        `SELECT pg_get_constraintdef(c.oid) AS def FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
         WHERE t.relname = $1 AND c.contype = 'c' AND pg_get_constraintdef(c.oid) LIKE '%' || $2 || '%'`,
        [table, `(${column} = ANY`],
      );
      expect(row, `${table}.${column} has a CHECK constraint`).toBeDefined();
      return [...row!.def.matchAll(/'([^']+)'::text/g)].map((m) => m[1]).sort();
    };
    expect(await allowed('nodes', 'status')).toEqual([...NODE_STATUSES].sort());
    expect(await allowed('nodes', 'network')).toEqual([...NETWORKS].sort());
    expect(await allowed('builds', 'action')).toEqual([...BUILD_ACTIONS].sort());
    expect(await allowed('builds', 'status')).toEqual([...BUILD_STATUSES].sort());
  });
});
