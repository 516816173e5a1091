// GET /api/usage for an account with 1,000 nodes on PostgreSQL (issue #27: p99 under 50 ms). The
// nodes are seeded with a realistic month: each paused and resumed a few times (a change before the
// month, then 8 in it, spread over the days so far), and API and gateway calls on each. One caller at a time, as the account page asks; p99 over the run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { startServer } from '../src/app.ts';
import { createTestDatabase } from '../test/helpers/database.ts';
import { freePort, randomNodePortRange } from '../test/helpers/ports.ts';
import { seedNodes } from './seed.ts';
import { runLoad, type LoadResult } from './load.ts';
import { keepAliveGetter } from './http-client.ts';

export const USAGE_P99_AIM_MS = 50;
const NODES = 1000;
const CHANGES_PER_NODE = 8;

export interface UsageBenchFigures {
  nodes: number;
  statusChanges: number;
  result: LoadResult;
}

export async function benchUsage(durationMs: number): Promise<UsageBenchFigures> {
  process.env.TEST_DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/postgres';
  const target = await createTestDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'rln-bench-usage-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    API_PORT: String(await freePort()),
    NODE_PORT_RANGE: randomNodePortRange(),
    BOOTSTRAP_DEV_USER: 'false',
    DATABASE_URL: target.url,
    LOG_LEVEL: 'silent',
    API_RATE_LIMIT_PER_MINUTE: '1000000',
    API_USER_RATE_LIMIT_PER_MINUTE: '1000000',
    // The process runtime serves a PostgreSQL database from one replica; this bench runs nodes nowhere.
    RUNTIME: 'process',
  });
  const server = await startServer(config, createLogger('silent'));
  try {
    const user = await server.services.accounts.createUser({ email: 'bench-usage@example.com', plan: 'scale' });
    const { token } = await server.services.accounts.createToken('bench-usage@example.com');
    await seedNodes(server.db, user.id, NODES, 1, 'RUNNING');
    // The trigger recorded each node's first status now; the month's history is made by hand: a
    // change before this month, then RUNNING and PAUSED in turn at spread times up to now.
    const month = new Date().toISOString().slice(0, 7);
    await server.db.query('DELETE FROM node_status_changes WHERE account_id = $1', [user.id]);
    await server.db.query(
      `INSERT INTO node_status_changes (node_id, account_id, status, changed_at)
       SELECT n.id, n.user_id, 'RUNNING', date_trunc('month', now()) - interval '3 days' FROM nodes n WHERE n.user_id = $1
       UNION ALL
       SELECT n.id, n.user_id, CASE WHEN k % 2 = 0 THEN 'PAUSED' ELSE 'RUNNING' END,
              date_trunc('month', now()) + (now() - date_trunc('month', now())) * (k::float / ($2 + 1) + random() * 0.01)
         FROM nodes n CROSS JOIN generate_series(1, $2) k WHERE n.user_id = $1
       -- In order: each change ends the node's previous interval (migration 0021's trigger).
       ORDER BY 4`,
      [user.id, CHANGES_PER_NODE],
    );
    await server.db.query(
      `INSERT INTO api_call_counts (account_id, month, node_id, kind, calls)
       SELECT $1, date_trunc('month', now())::date, n.id, kind, 1000 FROM nodes n CROSS JOIN (VALUES ('api'), ('gateway')) k(kind) WHERE n.user_id = $1`,
      [user.id],
    );
    await server.db.query('ANALYZE node_status_changes');
    await server.db.query('ANALYZE api_call_counts');
    await server.db.query('ANALYZE nodes');
    const statusChanges = Number((await server.db.query<{ n: string }>('SELECT count(*) AS n FROM node_status_changes'))[0]!.n);
    const get = keepAliveGetter(config.publicUrl, { authorization: `Bearer ${token}` }, 1);
    const check = await (await fetch(`${config.publicUrl}/api/usage?month=${month}`, { headers: { authorization: `Bearer ${token}` } })).json();
    if ((check as { nodes: unknown[] }).nodes.length !== NODES) throw new Error(`seeding failed: ${JSON.stringify(check).slice(0, 200)}`);
    const call = async () => {
      if ((await get(`/api/usage?month=${month}`)) !== 200) throw new Error('GET /api/usage failed');
    };
    await runLoad(call, { concurrency: 1, durationMs: 1000 });
    return { nodes: NODES, statusChanges, result: await runLoad(call, { concurrency: 1, durationMs }) };
  } finally {
    await server.stop();
    await target.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
