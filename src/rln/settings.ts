// The settings of the RLN client (how long a call may take, how large a body may be) and of the
// unlock (what the service adds to it for each network: chain sync, indexer, RGB proxy; and the
// form of its body): their types and their environment variables, read by config.ts (through
// gateway/settings.ts, whose gateways are handed them with their own).
import { commaList, integer, oneOf, port, text } from '../env/formats.ts';
import { readEnv, variable, type Env } from '../env/variable.ts';

/** What the service adds to a user's unlock for one network: chain sync, indexer and RGB proxy. */
export interface ChainSettings {
  /** `bitcoind`: RLN syncs blocks from bitcoind (BlockSync); `indexer`: from the indexer (TransactionSync). */
  chainSync: 'bitcoind' | 'indexer';
  bitcoindRpcHost: string;
  bitcoindRpcPort: number;
  bitcoindRpcUsername: string;
  /** A secret: never logged, never shown to users (the gateway only sends it to the node). */
  bitcoindRpcPassword: string;
  indexerUrl: string;
  proxyEndpoint: string;
}

/** The settings an unlock is completed with. */
export interface UnlockSettings {
  chain: { regtest: ChainSettings; testnet: ChainSettings };
  /** The unlock body nodes take: RLN's current one (ldk_chain_sync) or the older flat one. */
  unlockBodyFormat: 'current' | 'flat';
  /** Image versions that take the flat body whatever unlockBodyFormat says (older RLN builds). */
  unlockFlatVersions: string[];
  /** Whose chain settings win where a client's unlock names its own (UNLOCK_CHAIN_SETTINGS). */
  unlockChainSettings: 'client' | 'operator';
}

/** What the RLN client is built with (rln/client.ts: RlnClientOptions). */
export interface RlnClientSettings {
  /** How long a call to a node may take (the gateways answer 504 after it). */
  nodeTimeoutMs: number;
  /** Largest request body forwarded to a node, and largest response body passed back. */
  maxRequestBytes: number;
  maxResponseBytes: number;
}

export type RlnSettings = RlnClientSettings & UnlockSettings;

export const RLN_CLIENT_VARIABLES = {
  nodeTimeoutMs: variable('NODE_API_TIMEOUT_MS', integer(1), {
    default: '60000',
    doc: 'how long the gateways wait on a silent node before answering 504 (`unlock` may sync a while)',
  }),
  maxRequestBytes: variable('GATEWAY_MAX_REQUEST_BYTES', integer(1), {
    default: String(16 * 2 ** 20),
    doc: "largest request body the gateways forward (413 above; RLN's asset media uploads are the large ones)",
  }),
  maxResponseBytes: variable('GATEWAY_MAX_RESPONSE_BYTES', integer(1), {
    default: String(64 * 2 ** 20),
    doc: 'largest node answer passed back (502 when declared larger, the connection cut when it streams past it)',
  }),
};

export const UNLOCK_VARIABLES = {
  unlockBodyFormat: variable('UNLOCK_BODY_FORMAT', oneOf(['current', 'flat']), {
    default: 'current',
    doc: 'the unlock body nodes take: `current` (RLN master, `ldk_chain_sync`) or `flat` (older RLN)',
  }),
  unlockFlatVersions: variable('UNLOCK_FLAT_VERSIONS', commaList(/^.+$/, 'be image versions separated by commas'), {
    default: '',
    doc: 'comma-separated image versions that take the flat body whatever `UNLOCK_BODY_FORMAT` says',
  }),
  // `client` by default: the original hosted service passed a client's chain hosts to its node, and
  // its clients (a wallet that moved its hosts over time) rely on it. Where a node may connect is
  // bounded by its runtime's network, not by this; `operator` is for a service that runs the chain
  // backends itself and wants every node on them.
  unlockChainSettings: variable('UNLOCK_CHAIN_SETTINGS', oneOf(['client', 'operator']), {
    default: 'client',
    doc: "whose chain settings an unlock sends a node: `client` (those in the client's unlock body, the `REGTEST_*`/`TESTNET_*` settings filling in the rest) or `operator` (only those settings; a client's are ignored)",
  }),
};

/**
 * The variables of one network's chain settings (REGTEST_*, TESTNET_*). The defaults point at a
 * local regtest stack (bitcoind, electrs, RGB proxy on their usual ports), what a developer runs
 * beside RLN; a real deployment sets every value for its networks.
 */
export function chainVariables(prefix: 'REGTEST' | 'TESTNET', rpcPort: number, indexerPort: number) {
  const network = prefix.toLowerCase();
  return {
    chainSync: variable(`${prefix}_CHAIN_SYNC`, oneOf(['bitcoind', 'indexer']), {
      default: 'bitcoind',
      doc: `what unlock tells a ${network} node to sync from: \`bitcoind\` (RLN's \`BlockSync\`) or \`indexer\` (\`TransactionSync\`)`,
    }),
    bitcoindRpcHost: variable(`${prefix}_BITCOIND_RPC_HOST`, text(), { default: '127.0.0.1', doc: `bitcoind RPC host added to every ${network} unlock` }),
    bitcoindRpcPort: variable(`${prefix}_BITCOIND_RPC_PORT`, port(), { default: String(rpcPort), doc: 'its RPC port' }),
    bitcoindRpcUsername: variable(`${prefix}_BITCOIND_RPC_USERNAME`, text(), { default: 'user', doc: 'its RPC user' }),
    bitcoindRpcPassword: variable(`${prefix}_BITCOIND_RPC_PASSWORD`, text(), {
      default: 'password',
      doc: 'its RPC password, only ever sent to nodes',
      secret: true,
    }),
    indexerUrl: variable(`${prefix}_INDEXER_URL`, text(), {
      default: `tcp://127.0.0.1:${indexerPort}`,
      doc: `the electrum indexer added to every ${network} unlock`,
    }),
    proxyEndpoint: variable(`${prefix}_PROXY_ENDPOINT`, text(), {
      default: 'rpc://127.0.0.1:3000/json-rpc',
      doc: 'the RGB proxy, added to flat unlock bodies',
    }),
  };
}

export const REGTEST_VARIABLES = chainVariables('REGTEST', 18443, 50001);
export const TESTNET_VARIABLES = chainVariables('TESTNET', 18332, 60001);

export function readRlnSettings(env: Env, problems: string[]): RlnSettings {
  return {
    ...readEnv(RLN_CLIENT_VARIABLES, env, problems),
    ...readEnv(UNLOCK_VARIABLES, env, problems),
    chain: { regtest: readEnv(REGTEST_VARIABLES, env, problems), testnet: readEnv(TESTNET_VARIABLES, env, problems) },
  };
}
