// The backup record as the API answers it (backups/present.ts builds it).
import { Type } from '@sinclair/typebox';
import { ID_PATTERN } from '../schemas.ts';
import { NETWORKS } from '../../domain/nodes.ts';

export const Backup = Type.Object(
  {
    backupId: Type.String({ pattern: ID_PATTERN }),
    nodeId: Type.Union([Type.String({ pattern: ID_PATTERN }), Type.Null()], { description: 'The node backed up; null for an uploaded file.' }),
    origin: Type.Union([Type.Literal('node'), Type.Literal('upload')]),
    network: Type.Union([...NETWORKS.map((n) => Type.Literal(n)), Type.Null()], {
      description: "The network of the node backed up, or the one an upload is for (recognised, or declared on upload); a restore must be into this network.",
    }),
    sourceNodeId: Type.Union([Type.String({ pattern: ID_PATTERN }), Type.Null()], {
      description:
        "The node whose wallet the file holds: the node backed up, or for an upload the node of your backup with the same SHA-256 (null when not recognised). A restore follows that node's fence (one live copy of a wallet).",
    }),
    status: Type.Union([Type.Literal('IN_PROGRESS'), Type.Literal('SUCCEEDED'), Type.Literal('FAILED')]),
    sizeBytes: Type.Union([Type.Integer(), Type.Null()], { description: 'Size of the encrypted file (SUCCEEDED only).' }),
    sha256: Type.Union([Type.String(), Type.Null()], { description: 'SHA-256 of the encrypted file, hex (SUCCEEDED only).' }),
    imageVersion: Type.Union([Type.String(), Type.Null()], { description: "The node's image version when it was backed up." }),
    createdAt: Type.String({ format: 'date-time' }),
    finishedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    forExport: Type.Boolean({
      description: 'The final backup of an export (POST /api/nodes/{id}/export): kept BACKUP_EXPORT_RETENTION_DAYS whatever ordinary retention says; its wallet is never restored here.',
    }),
    error: Type.Optional(
      Type.Object(
        { code: Type.String({ description: 'wrong_password, node_state_conflict, node_error, node_unreachable, backup_interrupted, ...' }), message: Type.String() },
        { description: 'Why it failed (FAILED only).' },
      ),
    ),
    unlockError: Type.Optional(
      Type.String({ description: 'The node was unlocked before the backup and could not be unlocked again after it: why. It is locked now.' }),
    ),
  },
  { $id: 'Backup', description: 'A backup of a node (or a file uploaded to restore from). The password is never stored.' },
);

export const BackupWithDownload = Type.Object(
  {
    ...Backup.properties,
    downloadUrl: Type.Optional(Type.String({ format: 'uri', description: 'SUCCEEDED only: the encrypted file, valid BACKUP_URL_TTL_SECONDS; fresh on every call.' })),
    expiresAt: Type.Optional(Type.String({ format: 'date-time', description: 'When downloadUrl stops working.' })),
  },
  { description: 'The backup, and once it SUCCEEDED a download URL of its encrypted file.' },
);

export const BackupParams = Type.Object({
  id: Type.String({ pattern: ID_PATTERN, description: 'Node id: 32 lowercase hex characters.' }),
  backupId: Type.String({ pattern: ID_PATTERN, description: 'Backup id: 32 lowercase hex characters.' }),
});
