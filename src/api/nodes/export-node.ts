// POST /api/nodes/{id}/export {password, confirm}: the node leaves with its owner. A final backup
// with the password; once it is stored the node is EXPORTED and stopped for good. Owner or admin
// only (api/route-roles.ts), confirmed by the node's name.
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userOf } from '../bearer-auth.ts';
import { errorResponses, NodeIdParams } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';
import { nodeParam } from '../audit-route.ts';
import { withPasswordBodies } from './password-body.ts';
import { Backup } from '../backups/schemas.ts';
import { RESTORE_HELP, restoreCommands } from '../../backups/export.ts';

const ExportNodeBody = Type.Object(
  {
    password: Type.String({
      minLength: 1,
      maxLength: 1024,
      description: "The node's wallet password: the node encrypts the final backup with it, and it opens the file elsewhere. Never stored or logged.",
    }),
    confirm: Type.String({ maxLength: 1024, description: "The node's name, exactly: an export stops the node for good." }),
  },
  { additionalProperties: false },
);
type ExportNodeBody = Static<typeof ExportNodeBody>;

const ExportAnswer = Type.Object(
  {
    ...Backup.properties,
    restoreHelp: Type.String({ description: 'The section of the documentation (docs/BACKUPS.md in the repository, "Taking a node away") that explains running the file elsewhere.' }),
    restoreCommands: Type.Array(Type.String(), {
      description:
        'The commands that restore the file on a fresh RLN node elsewhere, in order: download it, start rgb-lightning-node, call its /restore and /unlock. ' +
        '<password> is the export password; <downloadUrl ...> the downloadUrl GET /api/nodes/{id}/backups/{backupId} answers once SUCCEEDED.',
    }),
  },
  { description: "The export's final backup (forExport: true), and how to run its file elsewhere." },
);

export function exportNodeRoute(app: FastifyInstance, { backups }: ApiDeps) {
  withPasswordBodies(
    app,
    (scope) => {
      scope.post<{ Params: NodeIdParams; Body: ExportNodeBody }>(
        '/api/nodes/:id/export',
        {
          config: { audit: { action: 'node.exported', target: nodeParam } },
          schema: {
            operationId: 'exportNode',
            summary: 'Export a node: a final backup, and the node stops here for good',
            description:
              "The node leaves with its owner (owner or admin only; `confirm` must be the node's name, else 400 `export_not_confirmed`). " +
              'A final backup is made with the password, as POST /api/nodes/{id}/backups makes one (an unlocked node is locked for it), ' +
              'and once it is stored the node is EXPORTED: stopped for good, locked, automatic unlock off, never started, upgraded, ' +
              'unlocked or restored here again (409 `node_exported`), taking no plan slot and accruing no time; only destroy is left. ' +
              'NODE_EXPORTED announces it (webhook, event stream). If the backup fails (a wrong password: error.code wrong_password) ' +
              'the node stays as it was, unlocked again if it was unlocked, with NODE_BACKUP_FAILED. Answers 202 with the backup record ' +
              '(IN_PROGRESS); poll GET /api/nodes/{id}/backups/{backupId}, whose downloadUrl gives the file once SUCCEEDED. The file is ' +
              'kept BACKUP_EXPORT_RETENTION_DAYS, after the node is destroyed too; no backup of this wallet is restored here again (409 ' +
              '`wallet_exported`). 409 `node_not_running`, `node_not_initialized`, `build_in_progress`, `backup_in_progress`, ' +
              '`node_superseded`, `node_exported`, `node_destroyed`.',
            tags: ['nodes'],
            params: NodeIdParams,
            body: ExportNodeBody,
            response: { 202: ExportAnswer, ...errorResponses },
          },
        },
        async (request, reply) => {
          const { password, confirm } = request.body;
          const backup = await backups.startExport(userOf(request).accountId, request.params.id, password, confirm);
          return reply.status(202).send({
            ...backup,
            restoreHelp: RESTORE_HELP,
            restoreCommands: restoreCommands(request.params.id, backup.backupId, backup.network ?? 'regtest'),
          });
        },
      );
    },
    '{"password": "...", "confirm": "<the node\'s name>"}',
  );
}
