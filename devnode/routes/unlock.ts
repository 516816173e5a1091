// POST /unlock. RLN's unlock body changed over time and the service must work with both:
//   current: {password, ldk_chain_sync: {mode, config}, indexer_url, announce_addresses, announce_alias}
//   older (and the original hosted service's fork): {password, bitcoind_rpc_username,
//     bitcoind_rpc_password, bitcoind_rpc_host, bitcoind_rpc_port, indexer_url?, proxy_endpoint?,
//     announce_addresses, announce_alias?}
// devnode syncs no chain, so it needs only the password; the other known fields are type-checked
// when present (a client bug then shows up here too) and unknown fields are ignored, like serde.
import type { Route } from '../route.ts';
import type { BodyFields } from '../request-body.ts';

export type UnlockBodyShape = 'current' | 'flat' | 'password only';

export interface UnlockRequest {
  password: string;
  shape: UnlockBodyShape;
}

const FLAT_FIELDS = ['bitcoind_rpc_username', 'bitcoind_rpc_password', 'bitcoind_rpc_host', 'bitcoind_rpc_port', 'proxy_endpoint'];

export function parseUnlockRequest(body: BodyFields): UnlockRequest {
  const password = body.requiredString('password');
  for (const name of ['indexer_url', 'announce_alias', 'bitcoind_rpc_username', 'bitcoind_rpc_password', 'bitcoind_rpc_host', 'proxy_endpoint']) {
    body.optionalString(name);
  }
  body.optionalPort('bitcoind_rpc_port');
  body.optionalStringList('announce_addresses');
  const chainSync = body.optionalObject('ldk_chain_sync');
  if (chainSync) {
    chainSync.requiredString('mode');
    chainSync.optionalObject('config');
  }
  const shape: UnlockBodyShape = chainSync ? 'current' : FLAT_FIELDS.some((f) => body.has(f)) ? 'flat' : 'password only';
  return { password, shape };
}

export const unlockRoute: Route = {
  method: 'POST',
  path: '/unlock',
  guard: 'lifecycle',
  jsonBody: true,
  async handle({ wallet, log }, body) {
    const request = parseUnlockRequest(body);
    // Only the shape is logged, never the values: the body holds passwords.
    log.info(`unlock requested (${request.shape} body)`);
    await wallet.unlock(request.password);
    return {};
  },
};
