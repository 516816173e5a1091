// POST /backup and /restore, with RLN's request bodies {backup_path, password}. The path is on the
// node's own disk; the service passes one inside the storage directory and moves the file itself.
import type { Route } from '../route.ts';

export const backupRoute: Route = {
  method: 'POST',
  path: '/backup',
  guard: 'lifecycle',
  jsonBody: true,
  async handle({ wallet }, body) {
    await wallet.backup(body.requiredString('backup_path'), body.requiredString('password'));
    return {};
  },
};

export const restoreRoute: Route = {
  method: 'POST',
  path: '/restore',
  guard: 'lifecycle',
  jsonBody: true,
  async handle({ wallet }, body) {
    await wallet.restore(body.requiredString('backup_path'), body.requiredString('password'));
    return {};
  },
};
