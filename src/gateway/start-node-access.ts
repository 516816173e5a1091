// Composition of node access: the two gateway listeners, given the certificate authority, the RLN
// client and what a node's path means (nodes/paths/node-paths.ts), built by the composition root
// (composition/node-calls.ts). Started by app.ts;
// stop() drains both listeners (see http/drain.ts); the RLN client is closed by its owner.
import { X509Certificate } from 'node:crypto';
import http from 'node:http';
import { drainServer } from '../http/drain.ts';
import { explainListenError } from '../http/listen-error.ts';
import type { CorsPolicy } from '../http/cors.ts';
import type { AccountService } from '../accounts/service.ts';
import type { NodeAccessConfig } from './settings.ts';
import type { Database } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import type { NodeRuntime } from '../runtime/types.ts';
import type { RlnClient } from '../rln/client.ts';
import type { NodeBearers } from '../rln/node-bearer.ts';
import type { NodePaths } from '../nodes/paths/node-paths.ts';
import { serverTlsMaterial, type CaStoreSettings } from '../pki/ca-store.ts';
import type { CertificateAuthority } from '../pki/certificate-authority.ts';
import type { CertificateService } from '../pki/client-certificates.ts';
import { createBearerGateway, createMtlsGateway, type GatewayMetrics, type GatewayServerDeps } from './gateway-server.ts';
import { NodeAccess } from './node-access.ts';
import { CustomerNodeTokenCheck } from '../secrets/customer-node-tokens.ts';
import { RLN_READ_ONLY_ROUTE_NAMES } from './route-scope.ts';
import { RateLimiter } from '../http/rate-limit.ts';
import type { TrustedProxies } from '../http/client-address.ts';

export interface NodeAccessDeps {
  config: CaStoreSettings & { nodeAccess: NodeAccessConfig; nodeApiPort: number; mtlsPort: number; cors?: CorsPolicy | null; gatewayRateLimitPerMinute?: number; trustedProxies?: TrustedProxies };
  db: Database;
  accounts: AccountService;
  certificates: CertificateService;
  /** The CA client certificates are issued by and verified against (pki/ca-store.ts). */
  ca: CertificateAuthority;
  runtime: Pick<NodeRuntime, 'runsDaemon'>;
  /** The one client of the daemons; forwarded requests go through it. */
  rln: Pick<RlnClient, 'forward'>;
  /** What a node's path means: the gateways' one entry into nodes/. */
  nodePaths: NodePaths;
  /** The Biscuit of the caller's role each forwarded request carries to its node (issue #40). */
  bearers?: NodeBearers;
  /** The API call meter (usage/api-call-meter.ts); absent: gateway calls are not counted. */
  meter?: GatewayServerDeps['meter'];
  log: Logger;
  /** Counts the gateways' requests (metrics/); absent: nobody counts. */
  metrics?: GatewayMetrics;
}

export interface RunningNodeAccess {
  /** Stops accepting, lets requests and streams in flight finish until `deadline` (epoch ms), then cuts the rest. */
  stop(deadline?: number): Promise<void>;
}

export async function startNodeAccess(deps: NodeAccessDeps): Promise<RunningNodeAccess> {
  const { config, db, log, ca } = deps;
  const settings = config.nodeAccess;
  const tls = await serverTlsMaterial(config, ca);
  // The first of the chain is the gateway's own; an operator's file is read once, at start.
  deps.metrics?.certificateServed?.('mtls_server', new Date(new X509Certificate(tls.certificatePem).validTo));

  const access = new NodeAccess({
    db,
    accounts: deps.accounts,
    runtime: deps.runtime,
  });
  deps.certificates.onRevoked((serial) => access.forgetCertificate(serial));
  const serverDeps: GatewayServerDeps = {
    access,
    rln: deps.rln,
    nodePaths: deps.nodePaths,
    bearers: deps.bearers,
    // One count per token or certificate across both gateways.
    rateLimiter: new RateLimiter({ name: 'gateway', limit: config.gatewayRateLimitPerMinute ?? 0, windowSeconds: 60 }),
    clientTimeoutMs: settings.clientTimeoutMs,
    log,
    metrics: deps.metrics,
    meter: deps.meter,
    trustedProxies: config.trustedProxies,
    // Customers' node tokens (issue #40, point 4), checked against RLN's own read-only routes.
    nodeTokens: new CustomerNodeTokenCheck({ db, readOnlyRoutes: RLN_READ_ONLY_ROUTE_NAMES }),
  };
  const bearer = createBearerGateway(serverDeps, config.cors);
  const mtls = createMtlsGateway(serverDeps, { ...tls, clientCaPem: ca.trustedCertificatesPem }, { proxyProtocol: settings.mtlsProxyProtocol === 'on' });
  const started: http.Server[] = [];
  // Without a deadline (a failed start) connections are cut at once.
  const stop = async (deadline = Date.now()) => {
    await Promise.all(started.map((server) => drainServer(server, deadline)));
  };
  try {
    await listen(bearer, config.host, config.nodeApiPort, 'NODE_API_PORT');
    started.push(bearer);
    await listen(mtls, config.host, config.mtlsPort, 'MTLS_PORT');
    started.push(mtls);
  } catch (err) {
    await stop();
    throw err;
  }
  return { stop };
}

function listen(server: http.Server, host: string, port: number, setting: string) {
  return new Promise<void>((resolve, reject) => {
    const failed = (err: Error) => reject(explainListenError(err, setting, host, port));
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve();
    });
  });
}
