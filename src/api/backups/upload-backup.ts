// POST /api/backups/uploads: a backup file streamed as the request body (application/octet-stream),
// stored to restore a node from (POST /api/nodes with restore.backupId).
import type { FastifyInstance } from 'fastify';
import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { Type, type Static } from '@sinclair/typebox';
import { userOf } from '../bearer-auth.ts';
import { errorResponses } from '../schemas.ts';
import type { ApiDeps } from '../deps.ts';
import { tooLarge } from '../../backups/service.ts';
import { AppError } from '../../errors.ts';
import { Backup } from './schemas.ts';
import { NETWORKS } from '../../domain/nodes.ts';

const UploadQuery = Type.Object(
  {
    network: Type.Optional(
      Type.Union(NETWORKS.map((n) => Type.Literal(n)), {
        description:
          'The network the backup is for. Required unless the file is one of your node backups (recognised by its SHA-256), ' +
          'whose network it then takes; a declared network that contradicts it is a 400.',
      }),
    ),
  },
  { additionalProperties: false },
);
type UploadQuery = Static<typeof UploadQuery>;

export function uploadBackupRoute(app: FastifyInstance, { backups, backupLimits }: ApiDeps) {
  void app.register(async (scope) => {
    // The body is the file itself: handed to the route as the request stream, never buffered.
    // Nothing else is parsed here: any other type is 415.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/octet-stream', (_request, payload, done) => done(null, payload));
    scope.post<{ Body: IncomingMessage; Querystring: UploadQuery }>(
      '/api/backups/uploads',
      {
        schema: {
          operationId: 'uploadBackup',
          summary: 'Upload a backup file to restore from',
          description:
            'The body is a backup file as a node wrote it (e.g. one downloaded from GET /api/nodes/{id}/backups/{backupId}), ' +
            'sent as application/octet-stream. Answers 201 with its record (origin "upload", nodeId null); restore it with ' +
            'POST /api/nodes {..., restore: {backupId, password}}. The service cannot read the file (only the node can, with ' +
            'the password): a corrupt file or a wrong password fails the restore, not the upload. A file that is one of your node ' +
            "backups (same SHA-256) is recognised: it takes that backup's network and is tied to its node (sourceNodeId), whose " +
            'fence a restore follows (one live copy of a wallet); any other file needs ?network=regtest|testnet (400 without). ' +
            '413 payload_too_large past BACKUP_UPLOAD_MAX_BYTES; 409 backup_quota_exceeded past BACKUP_UPLOAD_QUOTA_BYTES or ' +
            'BACKUP_UPLOAD_QUOTA_COUNT of stored uploads (list them with GET /api/backups/uploads, delete with DELETE ' +
            '/api/backups/uploads/{backupId}); 415 for another content type.',
          tags: ['backups'],
          querystring: UploadQuery,
          response: { 201: Type.Ref(Backup), ...errorResponses },
        },
      },
      async (request, reply) => {
        const declared = Number(request.headers['content-length']);
        // Refused before a byte is stored when the client says how large it is.
        if (Number.isFinite(declared) && declared > backupLimits.maxUploadBytes) throw tooLarge(backupLimits.maxUploadBytes);
        const sizeBytes = Number.isFinite(declared) && declared > 0 ? declared : undefined;
        // Read through a stream of its own: a refusal mid-way destroys that one, not the request,
        // whose connection then closes gently after the 413 (http/unread-body.ts) instead of
        // being reset under the client's feet.
        const body = request.body.pipe(new PassThrough());
        // pipe() carries neither an abort nor an error on, and a client that half-closes its
        // connection mid-body (the server keeps a half-open socket for the answer) never ends the
        // request: the upload would wait for the rest forever, its staged file on disk. Ended
        // here, the staged file goes with it (backup-file.ts).
        const socket = request.raw.socket;
        const cutShort = () => {
          if (!request.raw.complete) body.destroy(new AppError('invalid_request', 'the upload ended before the body its Content-Length announced'));
        };
        request.raw.once('close', cutShort);
        request.raw.once('error', cutShort);
        socket.once('end', cutShort);
        reply.raw.once('close', () => socket.off('end', cutShort));
        return reply.status(201).send(await backups.uploadBackup(userOf(request).accountId, body, { network: request.query.network, sizeBytes }));
      },
    );
  });
}
