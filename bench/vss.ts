// npm run bench -- vss (issue #42): putObjects of 4 KiB and 64 KiB values from 1,000 node
// identities at once on PostgreSQL, over HTTP, beside a bare PostgreSQL upsert of the same rows in
// the same run; then p99 at a steady 500 writes/s; signature checks counted and timed apart.
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logger.ts';
import { startServer } from '../src/app.ts';
import { verifySigsSignature } from '../src/vss/sigs-auth.ts';
import { createTestDatabase } from '../test/helpers/database.ts';
import { freePort, randomNodePortRange } from '../test/helpers/ports.ts';
import { newVssKey, type VssKey } from '../test/helpers/vss-client.ts';
import { seedNodes } from './seed.ts';
import { runAtRate, runLoad, type LoadResult } from './load.ts';

export const VSS_RATIO_AIM = 0.5;
export const VSS_P99_AIM_MS = 20;
export const VSS_STEADY_RATE = 500;
const IDENTITIES = 1000;
const CONCURRENCY = 64;
// A payment makes a node write several keys at once (its channel monitor updates, the manager,
// the payment): each identity writes in bursts of this many puts, sent together.
export const VSS_BURST = 4;

export interface VssBenchRow {
  valueBytes: number;
  vss: LoadResult;
  bareUpsert: LoadResult;
  verifications: number;
}

export interface VssBenchFigures {
  rows: VssBenchRow[];
  steady: LoadResult;
  verifyMs: number;
}

export async function benchVss(durationMs: number): Promise<VssBenchFigures> {
  process.env.TEST_DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/postgres';
  const target = await createTestDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'rln-bench-vss-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    API_PORT: String(await freePort()),
    NODE_PORT_RANGE: randomNodePortRange(),
    BOOTSTRAP_DEV_USER: 'false',
    DATABASE_URL: target.url,
    LOG_LEVEL: 'silent',
    RUNTIME: 'process',
  });
  const server = await startServer(config, createLogger('silent'));
  try {
    const user = await server.services.accounts.createUser({ email: 'bench-vss@example.com', plan: 'scale' });
    await seedNodes(server.db, user.id, IDENTITIES, 1, 'RUNNING');
    const nodeIds = (await server.db.query<{ id: string }>('SELECT id FROM nodes WHERE user_id = $1 ORDER BY id', [user.id])).map((r) => r.id);
    const identities: Array<{ nodeId: string; path: string; key: VssKey; token: Cached }> = [];
    for (const nodeId of nodeIds) {
      const url = new URL(await server.services.vss.issueUrl(user.id, nodeId));
      const key = newVssKey();
      identities.push({ nodeId, path: `${url.pathname}/putObjects`, key, token: cachedToken(key) });
    }
    const post = poster(config.publicUrl, CONCURRENCY);
    const verifier = (server.services.vss as any).opts.verifier as { verifications: number };
    const type = protobuf.loadSync(new URL('../src/vss/vss.proto', import.meta.url).pathname).lookupType('vss.PutObjectRequest');

    const rows: VssBenchRow[] = [];
    for (const valueBytes of [4096, 65536]) {
      const value = Buffer.alloc(valueBytes, 1);
      let next = 0;
      const before = verifier.verifications;
      const vss = await runLoad(
        async () => {
          const n = next++;
          const id = identities[Math.floor(n / VSS_BURST) % IDENTITIES]!;
          const item = { key: `key_${n % VSS_BURST}`, version: -1, value };
          const body = Buffer.from(type.encode(type.fromObject({ storeId: id.key.publicKey.toString('hex'), transactionItems: [item] })).finish());
          const status = await post(id.path, id.token(), body);
          if (status !== 200) throw new Error(`putObjects answered ${status}`);
        },
        { concurrency: CONCURRENCY, durationMs },
      );
      const verifications = verifier.verifications - before;
      // The same rows written straight to PostgreSQL, through the service's own pool.
      const bareUpsert = await runLoad(
        async () => {
          const n = next++;
          const id = identities[Math.floor(n / VSS_BURST) % IDENTITIES]!;
          await server.db.query(
            `INSERT INTO vss_objects (node_id, store_id, key, version, value, bytes) VALUES ($1, $2, $5, 1, $3, $4)
             ON CONFLICT (node_id, store_id, key) DO UPDATE SET version = 1, value = EXCLUDED.value, bytes = EXCLUDED.bytes, updated_at = now()`,
            [id.nodeId, id.key.publicKey.toString('hex'), value, valueBytes, `key_${n % VSS_BURST}`],
          );
        },
        { concurrency: CONCURRENCY, durationMs },
      );
      rows.push({ valueBytes, vss, bareUpsert, verifications });
    }

    const value = Buffer.alloc(4096, 2);
    let next = 0;
    const steady = await runAtRate(
      async () => {
        const n = next++;
        const id = identities[Math.floor(n / VSS_BURST) % IDENTITIES]!;
        const body = Buffer.from(type.encode(type.fromObject({ storeId: 's', transactionItems: [{ key: `key_${n % VSS_BURST}`, version: -1, value }] })).finish());
        await post(id.path, id.token(), body);
      },
      { perSecond: VSS_STEADY_RATE, durationMs },
    );

    // One verification alone, as the server would do it without the reuse.
    const key = identities[0]!.key;
    const header = key.token();
    const sig = Buffer.from(header.slice(66, 194), 'hex');
    const t0 = performance.now();
    for (let i = 0; i < 200; i++) verifySigsSignature(key.publicKey, sig, header.slice(194));
    const verifyMs = (performance.now() - t0) / 200;
    return { rows, steady, verifyMs };
  } finally {
    await server.stop();
    await target.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

type Cached = () => string;

// LDK's clients sign with libsecp256k1, whose signatures are deterministic (RFC 6979): one key
// sends one header per second. node:crypto's are not, so the bench signs once per second per key.
function cachedToken(key: VssKey): Cached {
  let second = 0;
  let token = '';
  return () => {
    const now = Math.floor(Date.now() / 1000);
    if (now !== second) {
      second = now;
      token = key.token(now);
    }
    return token;
  };
}

function poster(base: string, maxSockets: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  const url = new URL(base);
  return (path: string, authorization: string, body: Buffer) =>
    new Promise<number>((resolve, reject) => {
      const req = http.request(
        { host: url.hostname, port: url.port, path, method: 'POST', agent, headers: { authorization, 'content-type': 'application/octet-stream', 'content-length': body.length } },
        (res) => {
          res.on('data', () => {});
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
}
