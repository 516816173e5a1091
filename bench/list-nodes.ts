// GET /api/nodes for a user with 100 nodes of 5 builds each: through HTTP (authentication,
// routing, the answer's bytes included) against the list read in-process (NodeService.listNodes,
// the API objects a caller in this process gets). The route sends the JSON the database writes
// (db/node-list-json.ts), so HTTP can come out ahead of the in-process objects.
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

export interface ListNodesFigures {
  database: string;
  /** The baseline: NodeService.listNodes (rows read, API objects built), in-process. */
  inProcess: LoadResult;
  http: LoadResult;
  bodyBytes: number;
}

/** The aim: GET /api/nodes through HTTP at least this share of in-process listNodes, on both databases. */
export const LIST_NODES_RATIO_AIM = 0.85;

export async function benchListNodes(database: 'PGlite' | 'PostgreSQL', durationMs: number): Promise<ListNodesFigures> {
  if (database === 'PostgreSQL') process.env.TEST_DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/postgres';
  else delete process.env.TEST_DATABASE_URL;
  const target = await createTestDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'rln-bench-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    API_PORT: String(await freePort()),
    NODE_PORT_RANGE: randomNodePortRange(),
    BOOTSTRAP_DEV_USER: 'false',
    DATABASE_URL: target.url,
    LOG_LEVEL: 'silent',
    // The limiters run on every request, as in production, but 8 callers never reach them.
    API_RATE_LIMIT_PER_MINUTE: '1000000',
    API_USER_RATE_LIMIT_PER_MINUTE: '1000000',
  });
  const server = await startServer(config, createLogger('silent'));
  try {
    const user = await server.services.accounts.createUser({ email: 'bench@example.com', plan: 'scale' });
    const { token } = await server.services.accounts.createToken('bench@example.com');
    await seedNodes(server.db, user.id, 100, 5);
    const get = keepAliveGetter(config.publicUrl, { authorization: `Bearer ${token}` }, 8);
    const body = await (await fetch(`${config.publicUrl}/api/nodes`, { headers: { authorization: `Bearer ${token}` } })).text();
    if (JSON.parse(body).nodes.length !== 100) throw new Error('seeding failed');
    const inProcessCall = async () => {
      await server.services.nodes.listNodes(user.id);
    };
    const httpCall = async () => {
      if ((await get('/api/nodes')) !== 200) throw new Error('GET /api/nodes failed');
    };
    // Warm both paths (JIT, query plans, connections) before measuring.
    await runLoad(inProcessCall, { concurrency: 8, durationMs: 1000 });
    await runLoad(httpCall, { concurrency: 8, durationMs: 1000 });
    const inProcess = await runLoad(inProcessCall, { concurrency: 8, durationMs });
    const http = await runLoad(httpCall, { concurrency: 8, durationMs });
    return { database, inProcess, http, bodyBytes: Buffer.byteLength(body) };
  } finally {
    await server.stop();
    await target.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
