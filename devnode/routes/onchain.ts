// POST /address and /btcbalance: an empty on-chain wallet.
import type { Route } from '../route.ts';

export const addressRoute: Route = {
  method: 'POST',
  path: '/address',
  guard: 'unlocked',
  jsonBody: false,
  handle: ({ wallet, network }) => ({ address: wallet.newAddress(network) }),
};

export const btcBalanceRoute: Route = {
  method: 'POST',
  path: '/btcbalance',
  guard: 'unlocked',
  jsonBody: true,
  handle(_ctx, body) {
    // Request {skip_sync}; there is nothing to sync, but a wrong type is still a client error.
    body.optionalBoolean('skip_sync');
    const empty = () => ({ settled: 0, future: 0, spendable: 0 });
    return { vanilla: empty(), colored: empty() };
  },
};
