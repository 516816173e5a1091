// GET /nodeinfo, /networkinfo, /listchannels, /listpeers: what a node with no channels and no
// peers reports. Field names follow RLN's NodeInfoResponse and friends.
import type { DaemonNetwork } from '../args.ts';
import type { Route } from '../route.ts';

// RLN's constants (routes.rs), reported so clients that read them get the real values.
const HTLC_MIN_MSAT = 3_000_000;
const OPENRGBCHANNEL_MIN_SAT = (HTLC_MIN_MSAT / 1000) * 10 + 10;
const OPENCHANNEL_MIN_SAT = 5506;
const OPENCHANNEL_MAX_SAT = 16_777_215;
const U64_MAX = 18_446_744_073_709_551_615n;

/** RLN's BitcoinNetwork names, as /networkinfo spells them. */
const NETWORK_NAMES: Record<DaemonNetwork, string> = {
  regtest: 'Regtest', testnet: 'Testnet', testnet4: 'Testnet4', signet: 'Signet', mainnet: 'Mainnet',
};

// A fixed, plausible chain height: devnode follows no chain.
const PLACEHOLDER_HEIGHT: Record<DaemonNetwork, number> = {
  regtest: 150, testnet: 2_500_000, testnet4: 50_000, signet: 200_000, mainnet: 850_000,
};

export const nodeInfoRoute: Route = {
  method: 'GET',
  path: '/nodeinfo',
  guard: 'unlocked',
  jsonBody: false,
  handle({ identity }) {
    return {
      pubkey: identity!.pubkey,
      num_channels: 0,
      num_usable_channels: 0,
      local_balance_sat: 0,
      eventual_close_fees_sat: 0,
      pending_outbound_payments_sat: 0,
      num_peers: 0,
      onchain_pubkey: identity!.onchainPubkey,
      max_media_upload_size_mb: 5,
      rgb_htlc_min_msat: HTLC_MIN_MSAT,
      rgb_channel_capacity_min_sat: OPENRGBCHANNEL_MIN_SAT,
      channel_capacity_min_sat: OPENCHANNEL_MIN_SAT,
      channel_capacity_max_sat: OPENCHANNEL_MAX_SAT,
      channel_asset_min_amount: 1,
      // u64::MAX in RLN; a bigint so the JSON carries the exact integer (see api-server.ts).
      channel_asset_max_amount: U64_MAX,
      network_nodes: 0,
      network_channels: 0,
    };
  },
};

export const networkInfoRoute: Route = {
  method: 'GET',
  path: '/networkinfo',
  guard: 'unlocked',
  jsonBody: false,
  handle({ network }) {
    return { network: NETWORK_NAMES[network], height: PLACEHOLDER_HEIGHT[network] };
  },
};

export const listChannelsRoute: Route = {
  method: 'GET',
  path: '/listchannels',
  guard: 'unlocked',
  jsonBody: false,
  handle: () => ({ channels: [] }),
};

export const listPeersRoute: Route = {
  method: 'GET',
  path: '/listpeers',
  guard: 'unlocked',
  jsonBody: false,
  handle: () => ({ peers: [] }),
};
