// The API beside password hashing (issue #36, point 4; `npm run bench -- password-hashing`): the
// p99 of GET /api/nodes (100 nodes) at a steady rate alone, then with 50 hash-heavy requests a
// second beside it (sign-ins with the right password: one scrypt each; invitation accepts with
// 1 KiB passwords and unknown secrets: refused before any hash), in one run. The service runs in a
// process of its own (bench/scale-service.ts, npm start's flags) on PostgreSQL, once with the
// hashing gate as configured by default and once with it opened wide (what it was before the gate),
// so the figures sit beside their baseline. Every rate is printed with its answers by status.
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPostgres } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { insertRelease } from '../src/db/releases.ts';
import { AccountService } from '../src/accounts/service.ts';
import { createTestDatabase } from '../test/helpers/database.ts';
import { runAtRate, type LoadResult } from './load.ts';
import { seedNodes } from './seed.ts';
import { startService } from './scale.ts';

export const HASHING_RATIO_AIM = 2;
export const HASH_RATE = 50;
export const READ_RATE = 50;
const LOAD_MS = Number(process.env.BENCH_HASHING_MS ?? 5000);
// Alone, beside sign-ins, beside accepts, and again, in turn: a busy spell of a shared machine
// then lands on one round of each rather than on one row.
const ROUNDS = Number(process.env.BENCH_HASHING_ROUNDS ?? 3);
const PASSWORD = 'bench-password-1';

export interface RateFigures extends LoadResult {
  /** Answers by HTTP status, e.g. {200: 480, 503: 20}. */
  statuses: Record<string, number>;
}

export interface HashingRow {
  gate: string;
  load: 'none' | 'sign-ins' | 'accepts';
  /** One per round. */
  reads: RateFigures[];
  hashing: RateFigures[];
}

/** A keep-alive client that sends one JSON request and answers its status. */
function client(base: string, maxSockets: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  const url = new URL(base);
  return (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
    new Promise<number>((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = http.request(
        { host: url.hostname, port: url.port, path, method, agent, headers: { ...headers, ...(payload ? { 'content-type': 'application/json' } : {}) } },
        (res) => {
          res.on('data', () => {});
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
}

async function atRate(perSecond: number, call: () => Promise<number>): Promise<RateFigures> {
  const statuses: Record<string, number> = {};
  const result = await runAtRate(
    async () => {
      const status = await call().catch(() => 0);
      statuses[status] = (statuses[status] ?? 0) + 1;
    },
    { perSecond, durationMs: LOAD_MS },
  );
  return { ...result, statuses };
}

export async function benchPasswordHashing(): Promise<HashingRow[]> {
  process.env.TEST_DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/postgres';
  const target = await createTestDatabase();
  const db = await openPostgres(target.url!);
  const rows: HashingRow[] = [];
  try {
    await migrate(db);
    await insertRelease(db, 'hashing-v1');
    const accounts = new AccountService(db);
    const user = await accounts.createUser({ email: 'bench@example.com', plan: 'scale', password: PASSWORD });
    const { token } = await accounts.createToken('bench@example.com', 'reader');
    await seedNodes(db, user.id, 100, 5);
    const gates: [string, Record<string, string>][] = [
      ['default (1 at once, 8 waiting)', {}],
      ['2 at once, 8 waiting', { PASSWORD_HASH_CONCURRENCY: '2' }],
      ['opened wide (64 at once, 10,000 waiting: as before the gate)', { PASSWORD_HASH_CONCURRENCY: '64', PASSWORD_HASH_QUEUE: '10000' }],
    ];
    for (const [gate, env] of gates) {
      const dataDir = mkdtempSync(join(tmpdir(), 'rln-bench-hashing-'));
      const service = await startService(target.url!, dataDir, env);
      try {
        const call = client(service.api, 256);
        const read = () => call('GET', '/api/nodes', { authorization: `Bearer ${token}` });
        const loads = {
          'sign-ins': () => call('POST', '/api/session', {}, { email: 'bench@example.com', password: PASSWORD }),
          accepts: () => call('POST', '/api/account/invitations/accept', {}, { token: randomBytes(32).toString('base64url'), password: 'x'.repeat(1024) }),
        };
        // Warm the read path (JIT, query plans, connections) and the hash before measuring.
        await runAtRate(async () => void (await read()), { perSecond: READ_RATE, durationMs: 2000 });
        await loads['sign-ins']();
        const of = (load: HashingRow['load']) => rows.find((r) => r.gate === gate && r.load === load)!;
        for (const load of ['none', 'sign-ins', 'accepts'] as const) rows.push({ gate, load, reads: [], hashing: [] });
        for (let round = 0; round < ROUNDS; round++) {
          of('none').reads.push(await atRate(READ_RATE, read));
          for (const load of ['sign-ins', 'accepts'] as const) {
            // The failed accepts' limit per address (30 in 15 minutes) starts each run afresh.
            await db.query('DELETE FROM sign_in_failures');
            const [reads, hashing] = await Promise.all([atRate(READ_RATE, read), atRate(HASH_RATE, loads[load])]);
            of(load).reads.push(reads);
            of(load).hashing.push(hashing);
          }
        }
      } finally {
        await service.stop();
        rmSync(dataDir, { recursive: true, force: true });
      }
    }
    return rows;
  } finally {
    await db.close();
    await target.drop();
  }
}
