// The unlock a client sends is RLN's own unlock body, in either of its forms (the flat one of older
// RLN and the current one with `ldk_chain_sync`; client-chain-settings.ts reads their chain
// settings), plus what clients of the original hosted service send besides: `network` (checked
// against the node's network) and `node_endpoint` (accepted and ignored: the service knows where
// its node is). What the client leaves out of the chain settings comes from the operator's
// configuration. This builds the body in the form the node's RLN version takes. The password (and
// the bitcoind RPC password) is carried, never logged, and never part of an error message (not
// even inside a JSON parse error, whose text quotes the input).
import type { ChainSettings } from './settings.ts';
import { AppError } from '../errors.ts';
import { FLAT_CHAIN_FIELDS, mergeChainSettings, readClientChainSettings, type ClientChainSettings } from './client-chain-settings.ts';

export interface UnlockInput {
  password: string;
  announce_alias?: string;
  announce_addresses?: string[];
  /** The network the client believes the node is on; a mismatch is refused, not sent on. */
  network?: string;
  /** Chain settings the client sent (either form): its node gets them unless the operator pins its own. */
  chain?: ClientChainSettings;
}

const FIELDS = new Set<string>(['password', 'announce_alias', 'announce_addresses', 'network', 'node_endpoint', 'ldk_chain_sync', ...FLAT_CHAIN_FIELDS]);
const MAX_ENDPOINT = 2048;
// Generous bounds that still keep a body small: RLN itself checks the exact rules.
const MAX_PASSWORD = 1024;
const MAX_ALIAS = 256;
const MAX_ADDRESSES = 16;
const MAX_ADDRESS = 256;
// The node announces these to the network and writes them to its logs: a NUL or a newline is
// never meant, and is refused as the chain fields refuse it (client-chain-settings.ts). The alias
// may hold spaces and any other text; an address is visible ASCII (a host, an IPv6 literal, an onion).
export const ADDRESS_PATTERN = '^[\\x21-\\x7e]+$';
const CONTROL_CHARACTER = /[\x00-\x1F\x7F-\x9F]/;
const VISIBLE_ADDRESS = new RegExp(ADDRESS_PATTERN);

/** Checks a client's unlock body; every problem is named, no value is ever echoed. */
export function parseUnlockInput(raw: string | unknown): UnlockInput {
  let body: unknown = raw;
  if (typeof raw === 'string') {
    try {
      body = JSON.parse(raw);
    } catch {
      throw new AppError('invalid_json', 'the body is not valid JSON; send {"password": "..."}');
    }
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AppError('invalid_request', 'body must be an object: RLN\'s unlock body, {"password": "...", ...}');
  }
  const b = body as Record<string, unknown>;
  const problems: string[] = [];
  for (const key of Object.keys(b)) {
    if (!FIELDS.has(key)) problems.push(`body has an unknown field "${key.slice(0, 64)}" (RLN's unlock body has no such field)`);
  }
  if (b.password === undefined) problems.push('password is required');
  else if (typeof b.password !== 'string') problems.push('password must be a string');
  else if (b.password.length === 0) problems.push('password must not be empty');
  else if (b.password.length > MAX_PASSWORD) problems.push(`password must be at most ${MAX_PASSWORD} characters`);
  if (
    b.announce_alias !== undefined &&
    b.announce_alias !== null &&
    (typeof b.announce_alias !== 'string' || b.announce_alias.length > MAX_ALIAS || CONTROL_CHARACTER.test(b.announce_alias))
  ) {
    problems.push(`announce_alias must be a string of at most ${MAX_ALIAS} characters, without control characters`);
  }
  if (
    b.announce_addresses !== undefined &&
    (!Array.isArray(b.announce_addresses) ||
      b.announce_addresses.length > MAX_ADDRESSES ||
      !b.announce_addresses.every((a) => typeof a === 'string' && a.length > 0 && a.length <= MAX_ADDRESS && VISIBLE_ADDRESS.test(a)))
  ) {
    problems.push(`announce_addresses must be a list of at most ${MAX_ADDRESSES} "host:port" strings of visible characters (no spaces or control characters)`);
  }
  if (b.network !== undefined && (typeof b.network !== 'string' || !/^(regtest|testnet)$/i.test(b.network))) {
    problems.push('network must be regtest or testnet');
  }
  if (b.node_endpoint !== undefined && (typeof b.node_endpoint !== 'string' || b.node_endpoint.length > MAX_ENDPOINT)) {
    problems.push(`node_endpoint must be a string of at most ${MAX_ENDPOINT} characters`);
  }
  const chain = readClientChainSettings(b, problems);
  if (problems.length > 0) throw new AppError('invalid_request', problems.join('; '), { problems });
  return {
    password: b.password as string,
    ...(b.network !== undefined ? { network: (b.network as string).toLowerCase() } : {}),
    // RLN's announce_alias is optional (null: none), as the wallet sends it when unset.
    ...(typeof b.announce_alias === 'string' ? { announce_alias: b.announce_alias } : {}),
    ...(b.announce_addresses !== undefined ? { announce_addresses: b.announce_addresses as string[] } : {}),
    ...(chain ? { chain } : {}),
  };
}

export type UnlockBodyFormat = 'current' | 'flat';

/** The body RLN's /unlock takes: the current form (ldk_chain_sync) or the older flat form. */
export function buildUnlockBody(
  input: UnlockInput,
  operatorChain: ChainSettings,
  format: UnlockBodyFormat,
  chainSource: 'client' | 'operator' = 'client',
): Record<string, unknown> {
  const chain = mergeChainSettings(operatorChain, input.chain, chainSource);
  const announce = {
    announce_addresses: input.announce_addresses ?? [],
    ...(input.announce_alias !== undefined ? { announce_alias: input.announce_alias } : {}),
  };
  if (format === 'flat') {
    return {
      password: input.password,
      bitcoind_rpc_username: chain.bitcoindRpcUsername,
      bitcoind_rpc_password: chain.bitcoindRpcPassword,
      bitcoind_rpc_host: chain.bitcoindRpcHost,
      bitcoind_rpc_port: chain.bitcoindRpcPort,
      indexer_url: chain.indexerUrl,
      proxy_endpoint: chain.proxyEndpoint,
      ...announce,
    };
  }
  const ldk_chain_sync =
    chain.chainSync === 'indexer'
      ? { mode: 'TransactionSync', config: { indexer_url: chain.indexerUrl } }
      : {
          mode: 'BlockSync',
          config: {
            bitcoind_rpc_username: chain.bitcoindRpcUsername,
            bitcoind_rpc_password: chain.bitcoindRpcPassword,
            bitcoind_rpc_host: chain.bitcoindRpcHost,
            bitcoind_rpc_port: chain.bitcoindRpcPort,
          },
        };
  return { password: input.password, ldk_chain_sync, indexer_url: chain.indexerUrl, ...announce };
}

/** Which form a node takes: older image versions listed by the operator take the flat one. */
export function unlockFormatFor(imageVersion: string, cfg: { unlockBodyFormat: UnlockBodyFormat; unlockFlatVersions: string[] }): UnlockBodyFormat {
  return cfg.unlockFlatVersions.includes(imageVersion) ? 'flat' : cfg.unlockBodyFormat;
}
