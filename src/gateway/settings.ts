// Configuration of the node access gateways (bearer and mutual TLS) and their CA; read by config.ts
// with the rest of the environment. What the RLN client and the unlock take (timeouts, body limits,
// chain settings) is rln/settings.ts's, read here too, since the gateways are handed it as one.
import { resolve } from 'node:path';
import { integer, oneOf, text } from '../env/formats.ts';
import { checkSetTogether, readEnv, variable, type Env } from '../env/variable.ts';
import { readRlnSettings, type ChainSettings, type RlnSettings } from '../rln/settings.ts';

export type { ChainSettings };

export interface NodeAccessConfig extends RlnSettings {
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
  /** `on`: a peer TRUSTED_PROXIES names may open a mutual-TLS connection with a PROXY protocol header. */
  mtlsProxyProtocol: 'off' | 'on';
}

export const NODE_ACCESS_VARIABLES = {
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
};

export function readNodeAccessConfig(env: Env, problems: string[]): NodeAccessConfig {
  const values = readEnv(NODE_ACCESS_VARIABLES, env, problems);
  const v = NODE_ACCESS_VARIABLES;
  checkSetTogether(problems, v.caCertFile, values.caCertFile, v.caKeyFile, values.caKeyFile);
  checkSetTogether(problems, v.mtlsCertFile, values.mtlsCertFile, v.mtlsKeyFile, values.mtlsKeyFile);
  const path = (file: string | undefined) => file && resolve(file);
  return {
    ...values,
    ...readRlnSettings(env, problems),
    caCertFile: path(values.caCertFile),
    caKeyFile: path(values.caKeyFile),
    mtlsCertFile: path(values.mtlsCertFile),
    mtlsKeyFile: path(values.mtlsKeyFile),
  };
}
