// RLN's /backup and /restore take a `backup_path` on the daemon's own disk, and RLN writes (creating
// missing folders) or reads whatever path it is given. On the process runtime the daemon runs as the
// service's own OS user, so a path passed through untouched would let a node's user write into
// DATA_DIR or another node's storage, or restore from another user's file; on the kubernetes
// runtime it reaches only its own pod, but a path into the node's own wallet files could still
// clobber them. So the gateways never pass a client's path: `backup_path` must be a plain file
// name, and the gateway sends the daemon a path it chooses for that name, in the node's client
// backups folder as the daemon sees it (runtime storageFiles.clientBackupPath: `<DATA_DIR>/nodes/
// <id>/client-backups/` on the process runtime, `/data/client-backups/` in the pod on kubernetes).
// That folder is beside the storage directory, not in it: RLN zips its whole storage directory into
// every backup, so a backup kept inside would be in every later one and the volume would fill.
//
// The name is prefixed with USER_BACKUP_PREFIX: it cannot name one of the service's backup vehicles
// (`rln-cloud-backup-<32 hex>`). No symbolic link can be in the way: the name is one segment
// without `/`, and nothing a client can call creates a link in the node's folders.
import { AppError } from '../../errors.ts';
import { CLIENT_BACKUP_PREFIX } from '../../runtime/types.ts';

export const USER_BACKUP_PREFIX = CLIENT_BACKUP_PREFIX;

// One segment, no leading dot, short enough for any file system once prefixed.
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/** The node routes whose body names a path on the daemon's disk. */
export const PATH_ROUTES: ReadonlySet<string> = new Set(['backup', 'restore']);

const refused = (message: string) => new AppError('invalid_request', message, { field: 'backup_path' });

/**
 * The body of a /backup or /restore as the client sent it (JSON text), with `backup_path` replaced
 * by `pathFor(<the service's file name>)`; every other field passes unchanged. Throws a 400 for a
 * body that is not a JSON object or a backup_path that is not a plain file name.
 */
export function confineBackupBody(text: string, pathFor: (fileName: string) => string): Buffer {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new AppError('invalid_json', 'the body must be a JSON object {"backup_path": "<file name>", "password": "..."}');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AppError('invalid_json', 'the body must be a JSON object {"backup_path": "<file name>", "password": "..."}');
  }
  const given = (body as { backup_path?: unknown }).backup_path;
  if (typeof given !== 'string') throw refused('backup_path is required: a plain file name, kept on the node');
  if (!NAME.test(given) || given.endsWith('.partial')) {
    throw refused(
      `backup_path must be a plain file name (1-100 of A-Z a-z 0-9 . _ -, not starting with "." and not ending ".partial"), ` +
        `not a path: the gateway keeps the file in the node's client backups folder`,
    );
  }
  return Buffer.from(JSON.stringify({ ...body, backup_path: pathFor(`${USER_BACKUP_PREFIX}${given}`) }));
}
