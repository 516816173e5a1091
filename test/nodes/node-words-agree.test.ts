// The Node answer is written in three places for speed and for the document: the presenter
// (nodes/present.ts), the response schema (api/schemas.ts) and the list query's projection
// (db/node-list-json.ts). test/api/list-nodes-json.test.ts holds the query to the presenter's
// bytes; this test holds the presenter to the schema (the same fields, in the schema's order, which
// is the order the serializer and the query write), and the database's CHECK constraints to the
// word lists of domain/nodes.ts, so a status or a network is listed once where code can see it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Build, Node } from '../../src/api/schemas.ts';
import { insertBuild } from '../../src/db/builds.ts';
import { insertNode } from '../../src/db/nodes.ts';
import { insertRelease } from '../../src/db/releases.ts';
import { BUILD_ACTIONS, BUILD_STATUSES, NETWORKS, NODE_STATUSES } from '../../src/domain/nodes.ts';
import { newId } from '../../src/auth/tokens.ts';
import { AccountService } from '../../src/accounts/service.ts';
import { presentNode } from '../../src/nodes/present.ts';
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
    const failed = { ...build, status: 'FAILURE' as const, error: 'it failed', finished_at: new Date() };
    const answer = presentNode(node, [build, failed], { nodeApiUrl: 'http://127.0.0.1:1', peerHost: 'h', nodeApiPort: 1, nodeApiProtocol: 'http' });
    expect(Object.keys(answer)).toEqual(Object.keys(Node.properties));
    // `error` is the one optional field: present only on a failed build.
    const buildFields = Object.keys(Build.properties);
    expect(Object.keys(answer.builds[0]!)).toEqual(buildFields.filter((f) => f !== 'error'));
    expect(Object.keys(answer.builds[1]!)).toEqual(buildFields);
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
