// Every endpoint devnode serves, registered explicitly in one place. Anything else is 404 (or 405
// for a known path with the wrong method); RLN's many other endpoints are not simulated.
import { RlnError } from './errors.ts';
import type { Route } from './route.ts';
import { backupRoute, restoreRoute } from './routes/backup.ts';
import { changePasswordRoute, initRoute, lockRoute, shutdownRoute } from './routes/lifecycle.ts';
import { listChannelsRoute, listPeersRoute, networkInfoRoute, nodeInfoRoute } from './routes/node-info.ts';
import { addressRoute, btcBalanceRoute } from './routes/onchain.ts';
import { revokeTokenRoute } from './routes/revoke-token.ts';
import { unlockRoute } from './routes/unlock.ts';
import { vssBackupInfoRoute, vssClearFenceRoute } from './routes/vss.ts';

export const ROUTES: readonly Route[] = [
  initRoute,
  unlockRoute,
  lockRoute,
  changePasswordRoute,
  backupRoute,
  restoreRoute,
  shutdownRoute,
  nodeInfoRoute,
  networkInfoRoute,
  listChannelsRoute,
  listPeersRoute,
  addressRoute,
  btcBalanceRoute,
  vssBackupInfoRoute,
  vssClearFenceRoute,
  revokeTokenRoute,
];

export function knownPath(path: string): boolean {
  return ROUTES.some((r) => r.path === path);
}

export function findRoute(method: string, path: string): Route {
  const samePath = ROUTES.filter((r) => r.path === path);
  if (samePath.length === 0) throw new RlnError('NotFound', path);
  const route = samePath.find((r) => r.method === method);
  if (!route) throw new RlnError('MethodNotAllowed', `${method} ${path}`);
  return route;
}
