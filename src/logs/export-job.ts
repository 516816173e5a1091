// The durable job that builds one log export: header and build history, then the node's daemon
// output in the range, compressed into gzip parts that go to the blob store. It is idempotent:
// after a crash at any point the next attempt deletes what the last one left and starts over, so
// a restart of the service finishes the export (or, after the last attempt, marks it FAILED with
// the reason). The export janitor fails any export that outlives LOG_EXPORT_TIMEOUT_MINUTES.
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { LogsConfig } from './settings.ts';
import type { Database } from '../db/database.ts';
import { buildsByNode } from '../db/builds.ts';
import { findNode } from '../db/nodes.ts';
import { findLogExport, markLogExportFailed, markLogExportSucceeded, type LogExportPart } from '../db/log-exports.ts';
import { recordNodeEvent } from '../db/node-events.ts';
import type { Logger } from '../logger.ts';
import type { NodeLogReader } from './collected-logs.ts';
import type { BlobStore } from '../blobs/blob-store.ts';
import { exponentialBackoff, type JobDefinition } from '../jobs/worker.ts';
import { exportContent } from './export-content.ts';
import { partFileName, writeGzipParts } from './gzip-parts.ts';
import { LOG_EXPORT_JOB, type LogExportJobPayload } from '../jobs/catalog.ts';

/** Blob keys of an export: one folder per task, under its node. */
export const exportBlobPrefix = (nodeId: string, taskId: string) => `${nodeId}/${taskId}/`;

/** Where an export's parts are written before they go to the blob store. */
export const exportStagingDir = (dataDir: string, taskId?: string) =>
  taskId ? join(dataDir, 'exports', 'staging', taskId) : join(dataDir, 'exports', 'staging');

export interface LogExportJobDeps {
  db: Database;
  /**
   * Where the daemon's collected output is read from, chosen once at start-up: the process
   * runtime's files, or the segments every replica shares (Kubernetes; collected-logs.ts).
   */
  logs: NodeLogReader;
  blobs: BlobStore;
  config: { dataDir: string; logs: LogsConfig };
  log: Logger;
}

export function logExportJob(deps: LogExportJobDeps): JobDefinition<LogExportJobPayload> {
  return {
    ...LOG_EXPORT_JOB,
    // Short, and renewed every 5 s while the export runs: a crashed replica's export is taken over
    // within seconds on PostgreSQL (embedded PGlite releases leases at start anyway).
    leaseMs: 15_000,
    backoffMs: exponentialBackoff(2_000, 30_000),
    async handle(p, job) {
      const task = await findLogExport(deps.db, p.taskId);
      if (!task || task.status !== 'IN_PROGRESS') return; // finished before a crash, timed out, or expired
      const node = await findNode(deps.db, task.node_id);
      if (!node) return; // purged: the task went with it
      const log = deps.log.child({ taskId: task.id, nodeId: node.id });
      log.info({ attempt: job.attempts }, 'log export running');
      const started = performance.now();

      const prefix = exportBlobPrefix(node.id, task.id);
      const staging = exportStagingDir(deps.config.dataDir, task.id);
      // Whatever an interrupted attempt left behind goes first, so parts never mix attempts.
      await deps.blobs.deletePrefix(prefix);
      await rm(staging, { recursive: true, force: true });
      await mkdir(staging, { recursive: true });
      try {
        const range = { from: task.range_from ?? undefined, to: task.range_to ?? undefined };
        const builds = (await buildsByNode(deps.db, [node.id])).get(node.id) ?? [];
        const source = exportContent(
          { taskId: task.id, node, builds, range, exportedAt: new Date() },
          deps.logs.readLogs(node.id, range),
        );
        const parts: LogExportPart[] = [];
        const result = await writeGzipParts(source, {
          partBytes: deps.config.logs.exportPartBytes,
          dir: staging,
          async onPart({ index, path, bytes }) {
            const key = prefix + partFileName(index);
            await deps.blobs.putFile(key, path, 'application/gzip');
            parts.push({ key, bytes });
          },
        });
        await deps.db.transaction(async (tx) => {
          const done = await markLogExportSucceeded(tx, task.id, parts, result.inputBytes);
          if (done) {
            await recordNodeEvent(tx, node, 'LOG_EXPORT_READY', {
              taskId: task.id,
              parts: parts.length,
              bytes: result.outputBytes,
              from: task.range_from?.toISOString() ?? null,
              to: task.range_to?.toISOString() ?? null,
            });
          }
        });
        const seconds = (performance.now() - started) / 1000;
        log.info({ parts: parts.length, inputBytes: result.inputBytes, outputBytes: result.outputBytes, seconds }, 'log export finished');
      } finally {
        await rm(staging, { recursive: true, force: true });
      }
    },
    async onGiveUp(p, error) {
      const failed = await markLogExportFailed(deps.db, p.taskId, 'export_failed', `the export failed: ${error.message}`);
      // Parts of the failed attempt are of no use to anyone.
      if (failed) await deps.blobs.deletePrefix(exportBlobPrefix(failed.node_id, failed.id)).catch(() => {});
    },
  };
}
