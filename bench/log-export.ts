// Exporting a node's logs: `sizeMb` of collected daemon output (written through the runtime's
// collector, RotatingLog, which is measured too) exported by the service started with `npm start`
// (PGlite, local blob store). Figures: export throughput (POST to SUCCEEDED) and the service's
// peak resident memory growth during the export, beside a baseline: the same files gzipped by a
// bare read -> gzip -> write stream pipeline at the same level.
import { createReadStream, createWriteStream, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { constants, createGzip } from 'node:zlib';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/open.ts';
import { migrate } from '../src/db/migrate.ts';
import { AccountService } from '../src/accounts/service.ts';
import { acquireDataDirLock } from '../src/db/data-dir-lock.ts';
import { RotatingLog } from '../src/logs/rotating-log.ts';
import { listLogFiles } from '../src/logs/log-files.ts';
import { seedNodes } from './seed.ts';
import { serviceEnv, startServiceProcess } from '../test/helpers/service-process.ts';
import { idleRssMb, withPeakRss } from './rss.ts';

export interface LogExportFigures {
  inputMb: number;
  files: number;
  collectMbPerSecond: number;
  exportSeconds: number;
  exportMbPerSecond: number;
  parts: number;
  outputMb: number;
  rssBaselineMb: number;
  rssPeakGrowthMb: number;
  baselineMbPerSecond: number;
}

const MB = 2 ** 20;

async function prepare(sizeMb: number) {
  const dataDir = mkdtempSync(join(tmpdir(), 'rln-bench-logs-'));
  const config = loadConfig({ DATA_DIR: dataDir });
  const lock = acquireDataDirLock(dataDir, 'cli');
  if (!lock.acquired) throw new Error('lock');
  const db = await openDatabase(config);
  await migrate(db);
  await db.query('INSERT INTO image_versions (version) VALUES ($1) ON CONFLICT DO NOTHING', [config.initialImageVersion]);
  const accounts = new AccountService(db);
  const user = await accounts.createUser({ email: 'bench@example.com', plan: 'scale' });
  const { token } = await accounts.createToken('bench@example.com');
  await seedNodes(db, user.id, 1, 3); // PAUSED: no daemon runs, the logs below are all there is
  const nodeId = (await db.query<{ id: string }>('SELECT id FROM nodes'))[0]!.id;
  await db.close();
  lock.release();

  // Lines shaped like a Lightning node's: mostly repeated words, some ids and numbers.
  const nodeDir = join(dataDir, 'nodes', nodeId);
  const log = new RotatingLog(nodeDir, { maxFileBytes: 50 * MB, maxFiles: 1000 });
  let written = 0;
  let i = 0;
  const started = performance.now();
  while (written < sizeMb * MB) {
    let chunk = '';
    for (let j = 0; j < 500; j++, i++) {
      const id = ((i * 2654435761) >>> 0).toString(16).padStart(8, '0');
      chunk += `2026-01-02T03:04:05.678901Z INFO ldk_node::payment: payment ${id}${id} state updated seq=${i} amount_msat=${(i * 7919) % 100000000}\n`;
    }
    const bytes = Buffer.from(chunk);
    log.write('stdout', bytes);
    written += bytes.length + 500 * 31; // plus the collector's "<time> stdout " prefix per line
  }
  log.close();
  const collectSeconds = (performance.now() - started) / 1000;
  const files = listLogFiles(nodeDir).filter((f) => statSync(f, { throwIfNoEntry: false }));
  const inputBytes = files.reduce((n, f) => n + statSync(f).size, 0);
  return { dataDir, token, nodeId, files, inputBytes, collectSeconds };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function benchLogExport(sizeMb: number): Promise<LogExportFigures> {
  const p = await prepare(sizeMb);
  try {
    // Baseline: the bare stream pipeline over the same files.
    const baselineStarted = performance.now();
    const out = join(p.dataDir, 'baseline.gz');
    for (const file of p.files) {
      await pipeline(createReadStream(file), createGzip({ level: constants.Z_BEST_SPEED }), createWriteStream(out, { flags: 'a' }));
    }
    const baselineSeconds = (performance.now() - baselineStarted) / 1000;
    rmSync(out);

    const env = await serviceEnv(p.dataDir, { LOG_LEVEL: 'warn', JOB_POLL_INTERVAL_MS: '100' });
    const service = await startServiceProcess(env);
    try {
      const pid = service.serverPid();
      const headers = { authorization: `Bearer ${p.token}` };
      await sleep(3000); // let start-up garbage settle before taking the baseline
      const rssBaselineMb = await idleRssMb(pid);
      const exported = await withPeakRss(pid, rssBaselineMb, async () => {
        const post = await fetch(`${service.base}/api/nodes/${p.nodeId}/logs`, { method: 'POST', headers });
        const { taskId } = (await post.json()) as { taskId: string };
        for (;;) {
          const r = await fetch(`${service.base}/api/nodes/${p.nodeId}/logs?taskId=${taskId}`, { headers });
          const answer = await r.json();
          if (r.status !== 202) return { taskId, answer };
          await sleep(50);
        }
      });
      const { taskId, answer } = exported.result;
      const exportSeconds = exported.seconds;
      if (answer.status !== 'SUCCEEDED') throw new Error(`export ended ${JSON.stringify(answer)}`);
      const blobDir = join(p.dataDir, 'exports', 'blobs', p.nodeId, taskId);
      const outputBytes = readdirSync(blobDir).reduce((n, f) => n + statSync(join(blobDir, f)).size, 0);
      const inputMb = p.inputBytes / MB;
      return {
        inputMb,
        files: p.files.length,
        collectMbPerSecond: inputMb / p.collectSeconds,
        exportSeconds,
        exportMbPerSecond: inputMb / exportSeconds,
        parts: answer.data.length,
        outputMb: outputBytes / MB,
        rssBaselineMb,
        rssPeakGrowthMb: exported.rssGrowthMb,
        baselineMbPerSecond: inputMb / baselineSeconds,
      };
    } finally {
      await service.stop();
    }
  } finally {
    rmSync(p.dataDir, { recursive: true, force: true });
  }
}
