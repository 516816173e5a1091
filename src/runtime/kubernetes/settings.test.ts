import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../config.ts';
import { readKubernetesConfig } from './settings.ts';

const read = (env: Record<string, string>) => {
  const problems: string[] = [];
  return { config: readKubernetesConfig(env, problems), problems };
};

describe('kubernetes runtime configuration', () => {
  it('is read only with RUNTIME=kubernetes, with the original service defaults', () => {
    expect(loadConfig({}).kubernetes).toBeUndefined();
    const c = loadConfig({ RUNTIME: 'kubernetes', KUBECONFIG: '/tmp/kc' });
    expect(c.runtime).toBe('kubernetes');
    expect(c.kubernetes).toMatchObject({
      kubeconfig: '/tmp/kc',
      namespace: 'rln-nodes',
      imageTemplate: 'localhost/devnode:{version}',
      imagePullPolicy: 'IfNotPresent',
      resources: { cpuRequest: '500m', cpuLimit: '500m', memoryRequest: '512Mi', memoryLimit: '512Mi' },
      storageClass: undefined,
      storageSize: '10Gi',
      peerServiceType: 'NodePort',
      runAsUser: 1000,
      readOnlyRootFilesystem: true,
    });
  });

  it('refuses an unknown runtime', () => {
    expect(() => loadConfig({ RUNTIME: 'docker' })).toThrow(/RUNTIME must be "process" or "kubernetes"/);
  });

  it('parses selectors, tolerations and pull secrets', () => {
    const { config, problems } = read({
      K8S_NODE_SELECTOR: 'pool=nodes, kubernetes.io/arch=amd64',
      K8S_TOLERATIONS: '[{"key":"dedicated","operator":"Equal","value":"rln","effect":"NoSchedule"}]',
      K8S_IMAGE_PULL_SECRETS: 'registry-a,registry-b',
      K8S_PEER_SERVICE_TYPE: 'LoadBalancer',
    });
    expect(problems).toEqual([]);
    expect(config.nodeSelector).toEqual({ pool: 'nodes', 'kubernetes.io/arch': 'amd64' });
    expect(config.tolerations).toEqual([{ key: 'dedicated', operator: 'Equal', value: 'rln', effect: 'NoSchedule' }]);
    expect(config.imagePullSecrets).toEqual(['registry-a', 'registry-b']);
    expect(config.peerServiceType).toBe('LoadBalancer');
  });

  it('names every bad value', () => {
    let error: unknown;
    try {
      loadConfig({
        RUNTIME: 'kubernetes',
        K8S_NAMESPACE: 'Bad_NS',
        K8S_IMAGE: 'ghcr.io/rln:latest',
        K8S_CPU_LIMIT: 'lots',
        K8S_MEMORY_REQUEST: '512MB',
        K8S_PEER_SERVICE_TYPE: 'ClusterIP',
        K8S_NODE_SELECTOR: 'novalue',
        K8S_TOLERATIONS: '{"key":"x"}',
        K8S_RUN_AS_USER: '0',
        K8S_IMAGE_PULL_POLICY: 'Sometimes',
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    for (const name of ['K8S_NAMESPACE', 'K8S_IMAGE must contain {version}', 'K8S_CPU_LIMIT', 'K8S_MEMORY_REQUEST', 'K8S_PEER_SERVICE_TYPE', 'K8S_NODE_SELECTOR', 'K8S_TOLERATIONS', 'K8S_RUN_AS_USER', 'K8S_IMAGE_PULL_POLICY']) {
      expect(problems).toContain(name);
    }
  });
});
