// RLN's fork's VSS endpoints: GET /vssbackupinfo and POST /vssclearfence {password}.
import type { Route } from '../route.ts';

export const vssBackupInfoRoute: Route = {
  method: 'GET',
  path: '/vssbackupinfo',
  guard: 'unlocked',
  jsonBody: false,
  // {backup_exists, server_version, backup_required, pending_kv_writes}
  handle: ({ wallet }) => wallet.vssBackupInfo(),
};

export const vssClearFenceRoute: Route = {
  method: 'POST',
  path: '/vssclearfence',
  guard: 'lifecycle',
  jsonBody: true,
  async handle({ wallet, log }, body) {
    log.warn('VSS fence clear requested');
    await wallet.clearVssFence(body.requiredString('password'));
    return {};
  },
};
