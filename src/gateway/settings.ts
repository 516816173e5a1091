// Configuration of the node access gateways (bearer and mutual TLS), their CA, and what they add
// to a user's unlock; read by config.ts with the rest of the environment.
import { resolve } from 'node:path';
import { commaList, integer, oneOf, port, text } from '../env/formats.ts';
import { checkSetTogether, readEnv, variable, type Env } from '../env/variable.ts';
import type { ChainSettings } from '../rln/settings.ts';

export type { ChainSettings };

export interface NodeAccessConfig {
  /** How long the gateways wait on a silent node before answering 504. */
  nodeTimeoutMs: number;
  /** Largest request body forwarded to a node, and largest response body passed back. */
  maxRequestBytes: number;
  maxResponseBytes: number;
  /** How long a client may take to send a request's headers and body (slow clients are cut off). */
  clientTimeoutMs: number;
  /** Unset: the CA is created in DATA_DIR/pki at first start. Both or neither. */
  caCertFile: string | undefined;
  caKeyFile: string | undefined;
  /** Unset: the mutual-TLS gateway's server certificate is issued by the CA at each start. */
  mtlsCertFile: string | undefined;
  mtlsKeyFile: string | undefined;
  /** Default (and longest) validity of a client certificate. */
  clientCertDays: number;
  chain: { regtest: ChainSettings; testnet: ChainSettings };
  /** The unlock body nodes take: RLN's current one (ldk_chain_sync) or the older flat one. */
  unlockBodyFormat: 'current' | 'flat';
  /** Image versions that take the flat body whatever unlockBodyFormat says (older RLN builds). */
  unlockFlatVersions: string[];
  /** `client`: chain settings in a client's unlock body win over the operator's; `operator`: only the operator's. */
  unlockChainSettings: 'client' | 'operator';
  /** `on`: a peer TRUSTED_PROXIES names may open a mutual-TLS connection with a PROXY protocol header. */
  mtlsProxyProtocol: 'off' | 'on';
}

export const NODE_ACCESS_VARIABLES = {
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
  clientTimeoutMs: variable('GATEWAY_CLIENT_TIMEOUT_MS', integer(1), {
    default: '30000',
    doc: 'how long a client may take to send a request (headers within at most 10 s); slow clients are cut off',
  }),
  caCertFile: variable('CA_CERT_FILE', text(), {
    unset: 'unset: `DATA_DIR/pki/ca.pem`, created at first start',
    doc: "the certificate of the mutual-TLS gateway's certificate authority (ECDSA P-256 or P-384, PEM), optionally followed by earlier CA certificates whose client certificates are still accepted (a rotation); set with `CA_KEY_FILE`, and share both between replicas",
  }),
  caKeyFile: variable('CA_KEY_FILE', text(), {
    unset: 'unset: `DATA_DIR/pki/ca.key`, created at first start',
    doc: "the certificate authority's private key (PEM); set with `CA_CERT_FILE`",
  }),
  mtlsCertFile: variable('MTLS_CERT_FILE', text(), {
    unset: 'unset: issued by the CA, kept in `DATA_DIR/pki/gateway.pem`',
    doc: "the mutual-TLS gateway's server certificate (PEM), e.g. one from a public CA for `USER_NODE_URL`'s host; set with `MTLS_KEY_FILE`",
  }),
  mtlsKeyFile: variable('MTLS_KEY_FILE', text(), {
    unset: 'unset: issued with the certificate',
    doc: "the server certificate's private key (PEM); set with `MTLS_CERT_FILE`",
  }),
  // Short-lived certificates limit what a lost laptop exposes; 825 days is the browsers' ceiling.
  // Off by default: a header nobody sends would only be something for a stranger to try.
  mtlsProxyProtocol: variable('MTLS_PROXY_PROTOCOL', oneOf(['off', 'on']), {
    default: 'off',
    doc: 'the mutual-TLS gateway behind a TCP load balancer (TLS passthrough): `on` takes the client\'s address from a PROXY protocol header (v1 or v2) sent by a peer `TRUSTED_PROXIES` names, and cuts a connection that sends one from any other peer; needs `TRUSTED_PROXIES` as addresses or ranges',
  }),
  clientCertDays: variable('CLIENT_CERT_DAYS', integer(1, 825, 'be at most 825 days (client certificates are meant to be short-lived)'), {
    default: '30',
    doc: 'validity of a client certificate, default and maximum (at most 825)',
  }),
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

export function readNodeAccessConfig(env: Env, problems: string[]): NodeAccessConfig {
  const values = readEnv(NODE_ACCESS_VARIABLES, env, problems);
  const v = NODE_ACCESS_VARIABLES;
  checkSetTogether(problems, v.caCertFile, values.caCertFile, v.caKeyFile, values.caKeyFile);
  checkSetTogether(problems, v.mtlsCertFile, values.mtlsCertFile, v.mtlsKeyFile, values.mtlsKeyFile);
  const path = (file: string | undefined) => file && resolve(file);
  return {
    ...values,
    caCertFile: path(values.caCertFile),
    caKeyFile: path(values.caKeyFile),
    mtlsCertFile: path(values.mtlsCertFile),
    mtlsKeyFile: path(values.mtlsKeyFile),
    chain: { regtest: readEnv(REGTEST_VARIABLES, env, problems), testnet: readEnv(TESTNET_VARIABLES, env, problems) },
  };
}
