// A node pod reaches its chain backends (bitcoind, the indexer, the RGB proxy) over the cluster's
// network, and inside a pod 127.0.0.1 is the pod itself. The REGTEST_*/TESTNET_* defaults point at
// a developer's local stack, so a cluster running the real daemon with them would start, take
// users' unlocks and have every node fail to sync. Refused at start instead, naming what to set.
// devnode ignores chain settings, which is why the test cluster and a laptop need none.
import type { KubernetesConfig } from './settings.ts';

/** The endpoints of one network's chain settings that a node connects to (rln/chain-settings.ts). */
interface ChainEndpoints {
  bitcoindRpcHost: string;
  indexerUrl: string;
  proxyEndpoint: string;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|::1|\[::1\]|0\.0\.0\.0)$/i;

/** Whether the node image is devnode (the stand-in that needs no chain backends). */
export const isDevnodeImage = (imageTemplate: string) => /(^|\/)devnode(:|@|$)/.test(imageTemplate.replace(/:\{version\}$/, ''));

const hostOf = (endpoint: string) => {
  try {
    return new URL(endpoint).hostname;
  } catch {
    return endpoint.split(':')[0] ?? endpoint;
  }
};

/**
 * The chain settings that would send a node pod to itself: one problem per network, naming each
 * variable to set. Empty for devnode images.
 */
export function chainEndpointProblems(
  kubernetes: Pick<KubernetesConfig, 'imageTemplate'>,
  chain: Record<'regtest' | 'testnet', ChainEndpoints>,
  opts: { flatBodies: boolean },
): string[] {
  // an invalid K8S_IMAGE is already a problem of its own
  if (typeof kubernetes.imageTemplate !== 'string' || isDevnodeImage(kubernetes.imageTemplate)) return [];
  const problems: string[] = [];
  for (const [network, settings] of Object.entries(chain) as Array<['regtest' | 'testnet', ChainEndpoints]>) {
    const prefix = network.toUpperCase();
    const loopback = [
      LOOPBACK.test(settings.bitcoindRpcHost) && `${prefix}_BITCOIND_RPC_HOST`,
      LOOPBACK.test(hostOf(settings.indexerUrl)) && `${prefix}_INDEXER_URL`,
      // the proxy goes only into the older, flat unlock body
      opts.flatBodies && LOOPBACK.test(hostOf(settings.proxyEndpoint)) && `${prefix}_PROXY_ENDPOINT`,
    ].filter((name): name is string => Boolean(name));
    if (loopback.length > 0) {
      problems.push(
        `${loopback.join(', ')}: unset or a loopback address, which inside a node's pod is the pod itself; ` +
          `with RUNTIME=kubernetes and the node image ${kubernetes.imageTemplate} set them to the ${network} chain backends the pods reach (docs/DEPLOY.md, "The RLN image and its chain endpoints")`,
      );
    }
  }
  return problems;
}

/**
 * devnode's versions (devnode-<semver>) exist only as devnode images: a catalog seeded with one
 * while K8S_IMAGE names the real daemon would have every first node fail to pull its image.
 */
export function initialVersionProblems(kubernetes: Pick<KubernetesConfig, 'imageTemplate'>, initialImageVersion: string | undefined): string[] {
  if (typeof kubernetes.imageTemplate !== 'string' || isDevnodeImage(kubernetes.imageTemplate) || !initialImageVersion?.startsWith('devnode-')) return [];
  return [
    `INITIAL_IMAGE_VERSION: ${initialImageVersion} (the default) is a devnode version, but K8S_IMAGE names ${kubernetes.imageTemplate}; set it to the RLN commit id your registry holds an image of`,
  ];
}
