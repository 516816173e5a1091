// POST /address and /btcbalance: an empty on-chain wallet.
import type { Route } from '../route.ts';

export const addressRoute: Route = {
  method: 'POST',
  path: '/address',
  guard: 'unlocked',
  jsonBody: false,
  handle: async ({ wallet, network }) => ({ address: await wallet.newAddress(network) }),
};

export const btcBalanceRoute: Route = {
  method: 'POST',
  path: '/btcbalance',
  guard: 'unlocked',
  jsonBody: true,
  async handle(ctx, body) {
    // Request {skip_sync}: RLN syncs with its indexer first unless told to skip it.
    if (body.optionalBoolean('skip_sync') !== true) await ctx.syncWallet();
    const empty = () => ({ settled: 0, future: 0, spendable: 0 });
    return { vanilla: empty(), colored: empty() };
  },
};
