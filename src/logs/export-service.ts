// Log exports as users see them: start one for a node (a durable job does the work) and ask for
// its state; a finished export answers fresh download URLs, one per gzip part, every time.
import type { LogsConfig } from './settings.ts';
import type { Database } from '../db/database.ts';
import { insertJob } from '../db/jobs.ts';
import { findUserNode, lockUserNode } from '../db/nodes.ts';
import { findLogExportInProgress, findNodeLogExport, insertLogExport, type LogExportRow } from '../db/log-exports.ts';
import { AppError, nodeNotFound } from '../errors.ts';
import { newId } from '../auth/tokens.ts';
import type { BlobStore } from '../blobs/blob-store.ts';
import { LOG_EXPORT_JOB } from '../jobs/catalog.ts';

export type LogExportAnswer =
  | { status: 'IN_PROGRESS'; data: [] }
  | { status: 'FAILED'; data: []; error: { code: string; message: string } }
  | { status: 'SUCCEEDED'; data: string[]; expiresAt: string };

export interface LogExportServiceDeps {
  db: Database;
  blobs: BlobStore;
  config: { logs: LogsConfig };
}

export class LogExportService {
  constructor(private readonly deps: LogExportServiceDeps) {}

  get blobs() {
    return this.deps.blobs;
  }

  /** Starts an export of the node's build history and daemon output in [from, to). */
  async startExport(userId: string, nodeId: string, input: { from?: string; to?: string }): Promise<{ taskId: string }> {
    const from = parseTime('from', input.from);
    const to = parseTime('to', input.to);
    if (from && to && from > to) {
      throw new AppError('invalid_request', 'from must not be after to', { problems: ['from must not be after to'] });
    }
    const task = await this.deps.db.transaction(async (tx) => {
      // The node row lock serialises two concurrent requests for one node.
      const node = await lockUserNode(tx, userId, nodeId);
      if (!node) throw nodeNotFound(nodeId);
      const running = await findLogExportInProgress(tx, nodeId);
      if (running) {
        throw new AppError('log_export_in_progress', `node ${nodeId} has a log export in progress (${running.id}); wait for it to finish`, {
          taskId: running.id,
        });
      }
      const task = await insertLogExport(tx, { id: newId(), nodeId, userId, from: from ?? null, to: to ?? null });
      await insertJob(tx, LOG_EXPORT_JOB.newJob({ v: 1, taskId: task.id }));
      return task;
    });
    return { taskId: task.id };
  }

  async getExport(userId: string, nodeId: string, taskId: string): Promise<LogExportAnswer> {
    if (!(await findUserNode(this.deps.db, userId, nodeId))) throw nodeNotFound(nodeId);
    const task = await findNodeLogExport(this.deps.db, userId, nodeId, taskId);
    if (!task) throw new AppError('log_export_not_found', `log export ${taskId} was not found for node ${nodeId}`);
    return this.answer(task);
  }

  private async answer(task: LogExportRow): Promise<LogExportAnswer> {
    switch (task.status) {
      case 'IN_PROGRESS':
        return { status: 'IN_PROGRESS', data: [] };
      case 'FAILED':
        return { status: 'FAILED', data: [], error: { code: task.error_code ?? 'export_failed', message: task.error_message ?? 'the export failed' } };
      case 'SUCCEEDED': {
        const expiresInSeconds = this.deps.config.logs.exportUrlTtlSeconds;
        const urls = await Promise.all(
          task.parts.map((part, i) =>
            this.deps.blobs.presignGet(part.key, {
              expiresInSeconds,
              filename: `rln-node-${task.node_id}-logs-${task.id}-part-${i + 1}-of-${task.parts.length}.log.gz`,
            }),
          ),
        );
        const expiresAt = urls[0]?.expiresAt ?? new Date(Date.now() + expiresInSeconds * 1000);
        return { status: 'SUCCEEDED', data: urls.map((u) => u.url), expiresAt: expiresAt.toISOString() };
      }
    }
  }
}

function parseTime(field: string, value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) {
    const problem = `${field} must be an ISO 8601 date-time such as 2026-01-02T03:04:05Z`;
    throw new AppError('invalid_request', problem, { problems: [problem] });
  }
  return new Date(ms);
}
