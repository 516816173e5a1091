// Backing up and restoring a node whose storage holds `sizeMb` of data, through the service
// started with `npm start` (PGlite, local blob store, devnode, process runtime). Figures: time from
// the POST to SUCCEEDED (backup) and to RUNNING (a new node restored from it), and the service's
// peak resident memory growth during each, beside the floor: a bare stream copy of the same file
// (what moving the bytes costs at least; the node's own encryption comes on top).
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { idleRssMb, withPeakRss } from './rss.ts';
import { serviceEnv, startServiceProcess, callService, waitForServiceNode, type ServiceProcess } from '../test/helpers/service-process.ts';

export interface BackupFigures {
  storageMb: number;
  backupSeconds: number;
  backupRssGrowthMb: number;
  backupFileMb: number;
  restoreSeconds: number;
  restoreRssGrowthMb: number;
  emptyCreateSeconds: number;
  bareCopySeconds: number;
  rssIdleMb: number;
}

const MB = 2 ** 20;
const PASSWORD = 'bench-backup-password';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function createNode(svc: ServiceProcess, token: string, body: object) {
  const r = await callService(svc, token, '/api/nodes', { method: 'POST', body: { network: 'regtest', ...body } });
  if (r.status !== 200) throw new Error(`create answered ${r.status} ${JSON.stringify(r.json)}`);
  const nodeId = r.json.data.nodeId as string;
  await waitForServiceNode(svc, token, nodeId, 'RUNNING', 600_000, (n) => n?.status === 'RUNNING' || n?.status === 'FAILED');
  return nodeId;
}

export async function benchBackups(sizeMb: number): Promise<BackupFigures> {
  const dataDir = mkdtempSync(join(tmpdir(), 'rln-bench-backups-'));
  const svc = await startServiceProcess(await serviceEnv(dataDir, { LOG_LEVEL: 'warn', JOB_POLL_INTERVAL_MS: '100' }));
  try {
    const token = readFileSync(join(dataDir, 'dev-token'), 'utf8').trim();
    const pid = svc.serverPid();
    const nodeId = await createNode(svc, token, { name: 'bench-source' });
    await callService(svc, token, `/api/nodes/${nodeId}/init`, { method: 'POST', body: { password: PASSWORD } });
    // Incompressible, like a wallet's databases: one random MiB repeated would compress, so all random.
    const ballast = join(dataDir, 'nodes', nodeId, 'storage', 'ballast.bin');
    const out = createWriteStream(ballast);
    for (let i = 0; i < sizeMb; i++) if (!out.write(randomBytes(MB))) await new Promise<void>((r) => out.once('drain', () => r()));
    await new Promise<void>((r) => out.end(() => r()));

    // The floor: a bare stream copy of the same file, on the same disk.
    const copy = join(dataDir, 'copy.bin');
    const copyStarted = performance.now();
    await pipeline(createReadStream(ballast), createWriteStream(copy));
    const bareCopySeconds = (performance.now() - copyStarted) / 1000;
    rmSync(copy);

    await sleep(3000); // let start-up and node creation garbage settle before the idle figure
    const rssIdleMb = await idleRssMb(pid);

    const backup = await withPeakRss(pid, rssIdleMb, async () => {
      const started = await callService(svc, token, `/api/nodes/${nodeId}/backups`, { method: 'POST', body: { password: PASSWORD } });
      for (;;) {
        const r = await callService(svc, token, `/api/nodes/${nodeId}/backups/${started.json.backupId}`);
        if (r.json.status === 'SUCCEEDED') return r.json;
        if (r.json.status === 'FAILED') throw new Error(`backup failed: ${JSON.stringify(r.json.error)}`);
        await sleep(50);
      }
    });
    const emptyCreate = await withPeakRss(pid, rssIdleMb, () => createNode(svc, token, { name: 'bench-empty' }));
    const restore = await withPeakRss(pid, rssIdleMb, () =>
      createNode(svc, token, { name: 'bench-restored', restore: { backupId: backup.result.backupId, password: PASSWORD } }),
    );
    const restored = (await callService(svc, token, `/api/nodes/${restore.result}`)).json.data;
    if (restored.status !== 'RUNNING' || !restored.initialized) throw new Error(`restore ended ${restored.status}`);
    return {
      storageMb: sizeMb,
      backupSeconds: backup.seconds,
      backupRssGrowthMb: backup.rssGrowthMb,
      backupFileMb: backup.result.sizeBytes / MB,
      restoreSeconds: restore.seconds,
      restoreRssGrowthMb: restore.rssGrowthMb,
      emptyCreateSeconds: emptyCreate.seconds,
      bareCopySeconds,
      rssIdleMb,
    };
  } finally {
    await svc.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// Kept for a file-only check by hand: `node --import tsx bench/backups.ts 50`.
if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(await benchBackups(Number(process.argv[2] ?? 50)));
}
