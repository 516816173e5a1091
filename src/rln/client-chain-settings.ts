// The chain settings a client may put in RLN's unlock body, in either of RLN's forms: the flat one
// (`bitcoind_rpc_*`, `indexer_url`, `proxy_endpoint` at the top level: older RLN, the original
// hosted service's fork, and the wallet that ran its users' nodes there) and the current one
// (`ldk_chain_sync: {mode, config}` plus `indexer_url`). Whatever the client sends is what its node
// gets; what it leaves out comes from the operator's REGTEST_* / TESTNET_* settings (see
// mergeChainSettings). Hosts are not checked against a list: a node can already be told to open
// channels to any address, so where it may connect is bounded by its runtime's network (docs/NODE-ACCESS.md
// "What a node can reach over the network"), not here. Values are checked for type, length and port range only;
// a secret (the RPC password) is never echoed in an error.
import type { ChainSettings } from './settings.ts';
import { AppError } from '../errors.ts';

export type ClientChainSettings = Partial<ChainSettings>;

/** The top-level fields of the flat form, besides password and the announce fields. */
export const FLAT_CHAIN_FIELDS = ['bitcoind_rpc_username', 'bitcoind_rpc_password', 'bitcoind_rpc_host', 'bitcoind_rpc_port', 'indexer_url', 'proxy_endpoint'] as const;
const BLOCK_SYNC_FIELDS = new Set(['bitcoind_rpc_username', 'bitcoind_rpc_password', 'bitcoind_rpc_host', 'bitcoind_rpc_port']);
const TRANSACTION_SYNC_FIELDS = new Set(['indexer_url']);

const MAX_URL = 2048;
const MAX_HOST = 253;
const MAX_USERNAME = 256;
const MAX_SECRET = 1024;
// Visible characters only: a host or URL with spaces or control characters is a mistake (or an
// attempt to smuggle a second value), whatever RLN would make of it.
const VISIBLE = /^[\x21-\x7e]+$/;

type Problems = string[];

function visibleString(value: unknown, field: string, max: number, problems: Problems): string | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > max || !VISIBLE.test(value)) {
    problems.push(`${field} must be a non-empty string of at most ${max} visible characters (no spaces)`);
    return undefined;
  }
  return value;
}

function secretString(value: unknown, field: string, max: number, problems: Problems): string | undefined {
  if (typeof value !== 'string' || value.length > max) {
    problems.push(`${field} must be a string of at most ${max} characters`);
    return undefined;
  }
  return value;
}

function portNumber(value: unknown, field: string, problems: Problems): number | undefined {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 65535) {
    problems.push(`${field} must be a port number from 1 to 65535`);
    return undefined;
  }
  return value;
}

/** Reads the bitcoind and indexer fields of one object (the body, or ldk_chain_sync.config). */
function readChainFields(source: Record<string, unknown>, prefix: string, problems: Problems): ClientChainSettings {
  const out: ClientChainSettings = {};
  const at = (name: string) => `${prefix}${name}`;
  if (source.bitcoind_rpc_username !== undefined) out.bitcoindRpcUsername = secretString(source.bitcoind_rpc_username, at('bitcoind_rpc_username'), MAX_USERNAME, problems);
  if (source.bitcoind_rpc_password !== undefined) out.bitcoindRpcPassword = secretString(source.bitcoind_rpc_password, at('bitcoind_rpc_password'), MAX_SECRET, problems);
  if (source.bitcoind_rpc_host !== undefined) out.bitcoindRpcHost = visibleString(source.bitcoind_rpc_host, at('bitcoind_rpc_host'), MAX_HOST, problems);
  if (source.bitcoind_rpc_port !== undefined) out.bitcoindRpcPort = portNumber(source.bitcoind_rpc_port, at('bitcoind_rpc_port'), problems);
  if (source.indexer_url !== undefined) out.indexerUrl = visibleString(source.indexer_url, at('indexer_url'), MAX_URL, problems);
  if (source.proxy_endpoint !== undefined) out.proxyEndpoint = visibleString(source.proxy_endpoint, at('proxy_endpoint'), MAX_URL, problems);
  return out;
}

/** `ldk_chain_sync`: `{mode: "BlockSync", config: {bitcoind_rpc_*}}` or `{mode: "TransactionSync", config: {indexer_url}}`. */
function readLdkChainSync(value: unknown, problems: Problems): ClientChainSettings {
  const shape = 'ldk_chain_sync must be {"mode": "BlockSync" | "TransactionSync", "config": {...}}';
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return void problems.push(shape), {};
  const { mode, config, ...rest } = value as Record<string, unknown>;
  for (const key of Object.keys(rest)) problems.push(`ldk_chain_sync has an unknown field "${key.slice(0, 64)}"`);
  if (mode !== 'BlockSync' && mode !== 'TransactionSync') return void problems.push('ldk_chain_sync.mode must be BlockSync or TransactionSync'), {};
  if (typeof config !== 'object' || config === null || Array.isArray(config)) return void problems.push('ldk_chain_sync.config must be an object'), {};
  const allowed = mode === 'BlockSync' ? BLOCK_SYNC_FIELDS : TRANSACTION_SYNC_FIELDS;
  for (const key of Object.keys(config)) {
    if (!allowed.has(key)) problems.push(`ldk_chain_sync.config has a field "${key.slice(0, 64)}" that ${mode} does not take`);
  }
  const fields = readChainFields(config as Record<string, unknown>, 'ldk_chain_sync.config.', problems);
  return { chainSync: mode === 'BlockSync' ? 'bitcoind' : 'indexer', ...fields };
}

/**
 * The chain settings of an unlock body, or undefined when it carries none. Both forms in one body
 * (`ldk_chain_sync` beside a top-level `bitcoind_rpc_*`) are refused: which one would win is a
 * guess. The top-level `indexer_url` belongs to both forms.
 */
export function readClientChainSettings(body: Record<string, unknown>, problems: Problems): ClientChainSettings | undefined {
  const flat = readChainFields(body, '', problems);
  let settings: ClientChainSettings = flat;
  if (body.ldk_chain_sync !== undefined) {
    if (FLAT_CHAIN_FIELDS.some((f) => f.startsWith('bitcoind_') && body[f] !== undefined)) {
      problems.push('send the bitcoind settings either inside ldk_chain_sync.config (current form) or at the top level (flat form), not both');
    }
    const nested = readLdkChainSync(body.ldk_chain_sync, problems);
    if (nested.indexerUrl !== undefined && flat.indexerUrl !== undefined && nested.indexerUrl !== flat.indexerUrl) {
      problems.push('indexer_url and ldk_chain_sync.config.indexer_url differ; send one indexer');
    }
    settings = { ...flat, ...nested };
  }
  const given = Object.fromEntries(Object.entries(settings).filter(([, v]) => v !== undefined)) as ClientChainSettings;
  return Object.keys(given).length > 0 ? given : undefined;
}

/**
 * What the node gets: the client's settings over the operator's, or the operator's alone when pinned.
 * The operator's bitcoind RPC user and password go only to the operator's bitcoind: RLN sends them
 * (HTTP Basic, in the clear) to whatever host and port it is given, so a client naming its own
 * bitcoind must send its own credentials too (400 otherwise).
 */
export function mergeChainSettings(operator: ChainSettings, client: ClientChainSettings | undefined, source: 'client' | 'operator'): ChainSettings {
  if (source === 'operator' || !client) return operator;
  const merged = { ...operator, ...client };
  const elsewhere = merged.bitcoindRpcHost !== operator.bitcoindRpcHost || merged.bitcoindRpcPort !== operator.bitcoindRpcPort;
  if (elsewhere && (client.bitcoindRpcUsername === undefined || client.bitcoindRpcPassword === undefined)) {
    const problem =
      "bitcoind_rpc_username and bitcoind_rpc_password are required with a bitcoind_rpc_host or bitcoind_rpc_port of the client's own: " +
      "the service's bitcoind credentials are sent only to the service's bitcoind";
    throw new AppError('invalid_request', problem, { problems: [problem] });
  }
  return merged;
}
