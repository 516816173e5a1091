// deploy/kubernetes rendered with `kubectl kustomize` (no cluster needed): the base holds no secret,
// each overlay gets the PodDisruptionBudget its cluster version serves, the ports satisfy v1.20's
// server-side apply, the probes and the shutdown timing fit together, and every *_FILE variable
// names a key of a mounted Secret, and the monitoring component scrapes through a headless Service.
// service-on-cluster.test.ts applies the test overlay for real.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadAllYaml } from '@kubernetes/client-node';
import { repoRoot } from '../helpers/service-process.ts';
import { ConfigError, loadConfig, SERVICE_VARIABLES } from '../../src/config.ts';

const hasKubectl = (() => {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const render = (dir: string): any[] => loadAllYaml(execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8' }));
const ofKind = (objects: any[], kind: string) => objects.filter((o) => o.kind === kind);
const deploymentOf = (objects: any[]) => ofKind(objects, 'Deployment')[0];

describe.skipIf(!hasKubectl)('the Kubernetes manifests (deploy/kubernetes)', () => {
  // The example overlay needs its secret files: rendered from a copy with placeholders in secrets/.
  const copy = mkdtempSync(join(tmpdir(), 'rln-manifests-'));
  cpSync(join(repoRoot, 'deploy/kubernetes'), copy, { recursive: true });
  for (const f of ['database-url', 'database-ca.pem', 'ca.pem', 'ca.key', 'webhook-signing-keys', 'unlock-seal-keys', 's3-access-key-id', 's3-secret-access-key']) {
    writeFileSync(join(copy, 'overlays/example/secrets', f), `placeholder ${f}`);
  }
  // An installation with the Prometheus Operator: the example's base and budget plus the monitoring component.
  mkdirSync(join(copy, 'overlays/monitoring'));
  writeFileSync(join(copy, 'overlays/monitoring/kustomization.yaml'), 'resources: [../../base]\ncomponents: [../../components/disruption-budget, ../../components/monitoring]\n');
  // An installation whose Secrets come from External Secrets (or SOPS): no secretGenerator.
  mkdirSync(join(copy, 'overlays/external-secrets'));
  writeFileSync(join(copy, 'overlays/external-secrets/kustomization.yaml'), 'resources: [../../base]\ncomponents: [../../components/disruption-budget, ../../components/external-secrets, ../../components/secret-reloader]\n');
  afterAll(() => rmSync(copy, { recursive: true, force: true }));
  const base = render(join(copy, 'base'));
  const example = render(join(copy, 'overlays/example'));
  const testCluster = render(join(copy, 'overlays/test-cluster'));
  const monitored = render(join(copy, 'overlays/monitoring'));
  const externalSecrets = render(join(copy, 'overlays/external-secrets'));

  it('keeps secrets out of the base and the test overlay; the example overlay generates the five Secrets', () => {
    expect(ofKind(base, 'Secret')).toEqual([]);
    expect(ofKind(testCluster, 'Secret')).toEqual([]);
    expect(ofKind(example, 'Secret').map((s) => s.metadata.name.replace(/-[a-z0-9]{10}$/, '')).sort()).toEqual([
      'rln-cloud-ca', 'rln-cloud-database', 'rln-cloud-s3', 'rln-cloud-unlock-seal', 'rln-cloud-webhook-keys',
    ]);
  });

  it("bounds where nodes may connect: DNS, other nodes' peer ports and public addresses, no private, link-local or loopback range", () => {
    const policy = ofKind(base, 'NetworkPolicy').find((p) => p.metadata.namespace === 'rln-nodes');
    expect(policy.spec.policyTypes).toEqual(['Ingress', 'Egress']);
    const blocks = policy.spec.egress.flatMap((rule: any) => (rule.to ?? []).filter((to: any) => to.ipBlock).map((to: any) => to.ipBlock));
    expect(blocks.map((b: any) => b.cidr)).toEqual(['0.0.0.0/0', '::/0']);
    expect(blocks[0].except).toEqual(expect.arrayContaining(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', '127.0.0.0/8', '100.64.0.0/10']));
    expect(blocks[1].except).toEqual(expect.arrayContaining(['fc00::/7', 'fe80::/10', '::1/128']));
    // Nodes keep reaching each other's Lightning port, and name lookups.
    expect(policy.spec.egress.some((rule: any) => rule.ports?.some((p: any) => p.port === 53))).toBe(true);
    expect(policy.spec.egress.some((rule: any) => rule.to?.some((to: any) => to.podSelector) && rule.ports?.some((p: any) => p.port === 9735))).toBe(true);
    // The service's VSS server: its pods' API port, and only that (VSS_NODE_URL in the Deployment points there).
    const toService = policy.spec.egress.filter((rule: any) => rule.to?.some((to: any) => to.namespaceSelector?.matchLabels?.['rln-cloud/namespace'] === 'service'));
    expect(toService.map((rule: any) => rule.ports)).toEqual([[{ port: 8080, protocol: 'TCP' }]]);
    expect(toService[0].to[0].podSelector.matchLabels).toEqual({ 'app.kubernetes.io/name': 'rln-cloud' });
  });

  /** Whether a label selector (matchLabels only) selects an object with these labels. */
  const selects = (selector: any, labels: Record<string, string>) =>
    selector !== undefined && Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v) && (selector.matchExpressions ?? []).length === 0;
  /** An ingress rule's sources (the client library's typed objects call `from` `_from`). */
  const sourcesOf = (rule: any): any[] | undefined => rule._from ?? rule.from;
  /** Whether an ingress rule admits a pod of `namespace` (with these labels) on `port`. */
  const admits = (rule: any, port: number, namespace: Record<string, string>, pod: Record<string, string>) =>
    (rule.ports === undefined || rule.ports.some((p: any) => p.port === port)) &&
    (sourcesOf(rule) === undefined || sourcesOf(rule)!.some((f: any) => (f.namespaceSelector ? selects(f.namespaceSelector, namespace) : false) && (f.podSelector ? selects(f.podSelector, pod) : true)));

  it("fences the control plane: the API's listeners from the Ingress, the mutual-TLS one from anywhere, metrics from monitoring only, the nodes to the API port (VSS) only", () => {
    for (const objects of [base, example, testCluster]) {
      const policy = ofKind(objects, 'NetworkPolicy').find((p) => p.metadata.namespace === 'rln-cloud');
      expect(policy, 'a NetworkPolicy in rln-cloud').toBeDefined();
      expect(policy.spec.policyTypes).toEqual(['Ingress', 'Egress']);
      const template = deploymentOf(objects).spec.template;
      expect(selects(policy.spec.podSelector, template.metadata.labels)).toBe(true);
      const ports = Object.fromEntries(template.spec.containers[0].ports.map((p: any) => [p.name, p.containerPort]));
      const rules = policy.spec.ingress;
      const from = (namespaceName: string, extra: Record<string, string> = {}) => ({ 'kubernetes.io/metadata.name': namespaceName, ...extra });
      const nodesNs = from('rln-nodes', ofKind(objects, 'Namespace').find((n) => n.metadata.name === 'rln-nodes').metadata.labels);
      const nodePod = { 'app.kubernetes.io/managed-by': 'rln-cloud' };
      const anyPod = { app: 'something' };
      // Every listener is reachable by whom it serves.
      for (const port of [ports.api, ports['node-api']]) expect(rules.some((r: any) => admits(r, port, from('ingress-nginx'), anyPod)), `${port} from the Ingress`).toBe(true);
      expect(rules.some((r: any) => admits(r, ports.mtls, from('elsewhere'), anyPod) && sourcesOf(r) === undefined), 'mtls from anywhere').toBe(true);
      expect(rules.some((r: any) => admits(r, ports.metrics, from('monitoring'), anyPod)), 'metrics from monitoring').toBe(true);
      // The metrics port from nowhere else, and no rule without ports or sources covers it.
      for (const ns of [from('default'), nodesNs, from('ingress-nginx'), from('rln-cloud', { 'rln-cloud/namespace': 'service' })]) {
        expect(rules.filter((r: any) => admits(r, ports.metrics, ns, anyPod)), `metrics from ${ns["kubernetes.io/metadata.name"]}`).toEqual([]);
      }
      expect(rules.filter((r: any) => sourcesOf(r) === undefined).flatMap((r: any) => r.ports?.map((p: any) => p.port) ?? ['every port'])).toEqual([ports.mtls]);
      // The nodes reach the API listener, for the VSS server on it (continuous state), and no other listener nor the metrics.
      expect(rules.some((r: any) => admits(r, ports.api, nodesNs, nodePod)), 'the API port (VSS) from a node').toBe(true);
      for (const port of [ports['node-api'], ports.metrics]) expect(rules.some((r: any) => admits(r, port, nodesNs, nodePod)), `${port} from a node`).toBe(false);

      const egress = policy.spec.egress;
      const allowsPort = (port: number, protocol = 'TCP') => egress.some((r: any) => r.to === undefined && r.ports?.some((p: any) => p.port === port && p.protocol === protocol));
      expect(allowsPort(53, 'UDP') && allowsPort(53, 'TCP'), 'DNS').toBe(true);
      expect(allowsPort(5432), 'the database').toBe(true);
      expect(allowsPort(443) && allowsPort(6443), 'the API server, a private object store').toBe(true);
      const toNodes = egress.find((r: any) => r.to?.some((t: any) => t.namespaceSelector && selects(t.namespaceSelector, nodesNs) && selects(t.podSelector, nodePod)));
      expect(toNodes?.ports).toEqual([{ port: 3001, protocol: 'TCP' }]);
      const blocks = egress.flatMap((r: any) => (r.to ?? []).filter((t: any) => t.ipBlock).map((t: any) => ({ ...t.ipBlock, ports: r.ports })));
      expect(blocks.map((b: any) => [b.cidr, b.ports])).toEqual([['0.0.0.0/0', undefined], ['::/0', undefined]]);
      expect(blocks[0].except).toEqual(expect.arrayContaining(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', '127.0.0.0/8', '100.64.0.0/10']));
      expect(blocks[1].except).toEqual(expect.arrayContaining(['fc00::/7', 'fe80::/10', '::1/128']));
      // No rule opens every port to private addresses.
      expect(egress.filter((r: any) => r.ports === undefined).every((r: any) => r.to?.every((t: any) => t.ipBlock?.except?.length))).toBe(true);
    }
  });

  /** The port a URL is reached on. */
  const portOf = (url: string) => Number(new URL(url).port || (url.startsWith('https:') ? 443 : 80));

  it("advertises each listener on the port its Service or Ingress exposes (PUBLIC_URL, NODE_API_URL, USER_NODE_URL)", () => {
    const services = { PUBLIC_URL: 'rln-cloud-api', NODE_API_URL: 'rln-cloud-node-api', USER_NODE_URL: 'rln-cloud-mtls' } as const;
    // The test cluster: NodePorts on the node's address.
    for (const [name, service] of Object.entries(services)) {
      const url = ofKind(testCluster, 'ConfigMap')[0].data[name];
      const s = ofKind(testCluster, 'Service').find((x) => x.metadata.name === service);
      expect(s.spec.type, name).toBe('NodePort');
      expect(s.spec.ports.map((p: any) => p.nodePort), name).toEqual([portOf(url)]);
    }
    // The example: the mutual-TLS gateway on its load balancer's port, the others on the Ingress's
    // (443 with TLS, for their hosts), each routed to its own Service's port.
    const config = ofKind(example, 'ConfigMap')[0].data;
    const mtls = ofKind(example, 'Service').find((x) => x.metadata.name === 'rln-cloud-mtls');
    expect(mtls.spec.type).toBe('LoadBalancer');
    expect(mtls.spec.ports.map((p: any) => [p.port, p.targetPort])).toEqual([[portOf(config.USER_NODE_URL), 'mtls']]);
    expect(mtls.spec.externalTrafficPolicy).toBe('Local');
    expect(mtls.metadata.annotations).toMatchObject({
      'service.beta.kubernetes.io/aws-load-balancer-type': 'external',
      'service.beta.kubernetes.io/aws-load-balancer-nlb-target-type': 'ip',
      'cloud.google.com/l4-rbs': 'enabled',
    });
    const [ingress] = ofKind(example, 'Ingress');
    for (const name of ['PUBLIC_URL', 'NODE_API_URL'] as const) {
      const url = new URL(config[name]);
      expect(portOf(url.href), name).toBe(443);
      expect(ingress.spec.tls.flatMap((t: any) => t.hosts), name).toContain(url.hostname);
      const rule = ingress.spec.rules.find((r: any) => r.host === url.hostname);
      const backend = rule.http.paths[0].backend.service;
      expect(backend.name, name).toBe(services[name]);
      const s = ofKind(example, 'Service').find((x) => x.metadata.name === backend.name);
      expect(s.spec.ports.map((p: any) => p.port), name).toContain(backend.port.number);
    }
  });

  it('gives each overlay the PodDisruptionBudget its cluster serves', () => {
    expect(ofKind(base, 'PodDisruptionBudget')).toEqual([]);
    expect(ofKind(example, 'PodDisruptionBudget').map((p) => p.apiVersion)).toEqual(['policy/v1']);
    expect(ofKind(testCluster, 'PodDisruptionBudget').map((p) => p.apiVersion)).toEqual(['policy/v1beta1']);
  });

  it('declares protocol TCP on every port (v1.20 server-side apply refuses one without)', () => {
    for (const objects of [example, testCluster]) {
      for (const s of ofKind(objects, 'Service')) for (const p of s.spec.ports) expect(p.protocol, `${s.metadata.name} ${p.name}`).toBe('TCP');
      for (const c of deploymentOf(objects).spec.template.spec.containers) for (const p of c.ports) expect(p.protocol, p.name).toBe('TCP');
    }
  });

  it("listens on the service's default ports, probes /healthz and /readyz, and stops within the grace period", () => {
    const pod = deploymentOf(base).spec.template.spec;
    const container = pod.containers[0];
    const env = Object.fromEntries(container.env.map((e: any) => [e.name, e.value]));
    const ports = Object.fromEntries(container.ports.map((p: any) => [p.name, p.containerPort]));
    expect(ports).toEqual({
      api: Number(SERVICE_VARIABLES.apiPort.default),
      'node-api': Number(SERVICE_VARIABLES.nodeApiPort.default),
      mtls: Number(SERVICE_VARIABLES.mtlsPort.default),
      metrics: Number(SERVICE_VARIABLES.metricsPort.default),
    });
    expect([env.API_PORT, env.NODE_API_PORT, env.MTLS_PORT, env.METRICS_PORT].map(Number)).toEqual([ports.api, ports['node-api'], ports.mtls, ports.metrics]);
    expect(container.livenessProbe.httpGet).toMatchObject({ path: '/healthz', port: 'api' });
    expect(container.readinessProbe.httpGet).toMatchObject({ path: '/readyz', port: 'api' });
    expect(container.lifecycle?.preStop).toBeUndefined();
    const seconds = (d: string) => Number(/^(\d+)s$/.exec(d)![1]);
    expect(seconds(env.SHUTDOWN_DELAY) + seconds(env.SHUTDOWN_TIMEOUT)).toBeLessThan(pod.terminationGracePeriodSeconds);
    expect(deploymentOf(base).spec.strategy.rollingUpdate.maxUnavailable).toBe(0);
  });

  it('has Prometheus scrape each replica on its metrics port, which no Service publishes', () => {
    for (const objects of [base, example, testCluster]) {
      const template = deploymentOf(objects).spec.template;
      const metricsPort = template.spec.containers[0].ports.find((p: any) => p.name === 'metrics').containerPort;
      expect(template.metadata.annotations).toEqual({ 'prometheus.io/scrape': 'true', 'prometheus.io/port': String(metricsPort), 'prometheus.io/path': '/metrics' });
      for (const s of ofKind(objects, 'Service')) {
        for (const p of s.spec.ports) expect([p.port, p.targetPort], `${s.metadata.name} ${p.name}`).not.toContain(metricsPort);
        for (const p of s.spec.ports) expect(p.targetPort, `${s.metadata.name} ${p.name}`).not.toBe('metrics');
      }
    }
  });

  it("with the monitoring component, has a ServiceMonitor scrape each replica's metrics port through a headless Service, and the alert rules", () => {
    const [monitor] = ofKind(monitored, 'ServiceMonitor');
    const selected = ofKind(monitored, 'Service').filter((s) => Object.entries(monitor.spec.selector.matchLabels).every(([k, v]) => s.metadata.labels?.[k] === v));
    expect(selected.map((s) => s.metadata.name)).toEqual(['rln-cloud-metrics']);
    const [service] = selected;
    expect(monitor.spec.namespaceSelector.matchNames).toEqual([service.metadata.namespace]);
    // Headless: endpoints for discovery, no address of its own that could publish the port.
    expect(service.spec.clusterIP).toBe('None');
    expect(service.spec.type ?? 'ClusterIP').toBe('ClusterIP');
    const template = deploymentOf(monitored).spec.template;
    expect(template.metadata.labels).toMatchObject(service.spec.selector);
    const containerPort = template.spec.containers[0].ports.find((p: any) => p.name === 'metrics');
    expect(service.spec.ports).toEqual([{ name: 'metrics', port: containerPort.containerPort, targetPort: 'metrics', protocol: 'TCP' }]);
    expect(monitor.spec.endpoints).toMatchObject([{ port: 'metrics', path: '/metrics' }]);
    // The rules select job="rln-cloud", as the plain scrape job is named.
    expect(monitor.spec.endpoints[0].relabelings).toContainEqual({ targetLabel: 'job', replacement: 'rln-cloud' });
    expect(ofKind(monitored, 'PrometheusRule').map((r) => r.spec.groups.map((g: any) => g.name))).toEqual([['rln-cloud']]);
    // No other Service publishes the metrics port; the component is in no overlay by default.
    for (const s of ofKind(monitored, 'Service').filter((s) => s !== service)) for (const p of s.spec.ports) expect(p.targetPort).not.toBe('metrics');
    for (const objects of [base, example, testCluster]) expect(ofKind(objects, 'ServiceMonitor')).toEqual([]);
  });

  /** The environment a replica gets: the ConfigMap, then the Deployment's own env (files left out). */
  const replicaEnv = (objects: any[]) => {
    const container = deploymentOf(objects).spec.template.spec.containers[0];
    const env: Record<string, string> = { ...ofKind(objects, 'ConfigMap')[0].data };
    for (const e of container.env) if (e.value !== undefined && !e.name.endsWith('_FILE')) env[e.name] = e.value;
    return env;
  };
  const problemsOf = (env: Record<string, string>) => {
    try {
      loadConfig(env);
      return [];
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      return err.problems;
    }
  };

  it('has the example run the real RLN image, refusing to start until the operator names its first version and chain endpoints', () => {
    const env = replicaEnv(example);
    expect(env.K8S_IMAGE).not.toMatch(/devnode/);
    const problems = problemsOf(env).join('\n');
    for (const name of ['INITIAL_IMAGE_VERSION', 'REGTEST_BITCOIND_RPC_HOST', 'REGTEST_INDEXER_URL', 'TESTNET_BITCOIND_RPC_HOST', 'TESTNET_INDEXER_URL']) expect(problems).toContain(name);
    // The overlay's commented lines, uncommented, are what it takes.
    const commented = readFileSync(join(repoRoot, 'deploy/kubernetes/overlays/example/kustomization.yaml'), 'utf8')
      .split('\n').map((l) => /^\s*# - ([A-Z0-9_]+)=(.*)$/.exec(l)).filter((m): m is RegExpExecArray => m !== null);
    const set = Object.fromEntries(commented.map((m) => [m[1], m[2]!.replace('<rln-commit-id>', '0123abcd')]));
    expect(problemsOf({ ...env, ...set })).toEqual([]);
    // The test cluster runs devnode, which needs no chain.
    expect(problemsOf(replicaEnv(testCluster))).toEqual([]);
  });

  it("has the guide's database URL verify TLS against the provider's CA bundle, at the path the example mounts it", () => {
    const guide = readFileSync(join(repoRoot, 'docs/DEPLOY.md'), 'utf8');
    const url = /`(postgres:\/\/rln_cloud:PASSWORD@[^`]+)`/.exec(guide)?.[1];
    expect(url, "the replicas' URL in DEPLOY.md").toBeDefined();
    const params = new URL(url!).searchParams;
    expect(params.get('sslmode')).toBe('verify-full');
    const rootCert = params.get('sslrootcert')!;
    const pod = deploymentOf(example).spec.template.spec;
    const mount = pod.containers[0].volumeMounts.find((m: any) => m.mountPath === dirname(rootCert));
    const volume = pod.volumes.find((v: any) => v.name === mount?.name);
    const secret = ofKind(example, 'Secret').find((s) => s.metadata.name === volume?.secret?.secretName);
    expect(secret?.metadata.name).toMatch(/^rln-cloud-database-/);
    expect(Object.keys(secret.data).sort()).toEqual([basename(rootCert), 'url'].sort());
    // No page tells anyone to use sslmode=require for the replicas (it fails on a provider's CA).
    for (const page of ['docs/DEPLOY.md', 'docs/KUBERNETES.md']) {
      expect(readFileSync(join(repoRoot, page), 'utf8'), page).not.toMatch(/postgres:\/\/[^\s`"]*sslmode=require/);
    }
  });

  /** The Secrets the Deployment mounts, and for each the keys its *_FILE variables name. */
  const secretContract = (objects: any[]) => {
    const pod = deploymentOf(objects).spec.template.spec;
    const container = pod.containers[0];
    const contract: Record<string, string[]> = {};
    for (const v of pod.volumes.filter((v: any) => v.secret)) contract[v.secret.secretName] = [];
    for (const { value } of container.env.filter((e: any) => e.name.endsWith('_FILE'))) {
      const mount = container.volumeMounts.find((m: any) => m.mountPath === dirname(value));
      const volume = pod.volumes.find((v: any) => v.name === mount.name);
      contract[volume.secret.secretName]!.push(basename(value));
    }
    return contract;
  };

  it('has External Secrets produce exactly the Secrets and keys the Deployment reads, and Reloader roll the replicas when one changes', () => {
    const contract = secretContract(externalSecrets);
    expect(Object.keys(contract).sort()).toEqual(['rln-cloud-ca', 'rln-cloud-database', 'rln-cloud-s3', 'rln-cloud-unlock-seal', 'rln-cloud-webhook-keys']);
    const produced = Object.fromEntries(ofKind(externalSecrets, 'ExternalSecret').map((e) => [e.spec.target.name, e.spec.data.map((d: any) => d.secretKey)]));
    for (const [name, keys] of Object.entries(contract)) {
      expect(produced[name], name).toEqual(expect.arrayContaining(keys));
      expect(ofKind(externalSecrets, 'ExternalSecret').find((e) => e.spec.target.name === name).metadata.namespace).toBe('rln-cloud');
    }
    // The database's CA bundle travels with its URL (the sslrootcert the URL names).
    expect(produced['rln-cloud-database']).toContain('ca.pem');
    expect(ofKind(externalSecrets, 'Secret')).toEqual([]);
    const reload = deploymentOf(externalSecrets).metadata.annotations['secret.reloader.stakater.com/reload'].split(',');
    expect(reload.sort()).toEqual(Object.keys(contract).sort());
  });

  it("rolls the replicas on every Secret's rotation with the example's generator: a changed file is a new Secret name in the pod template", () => {
    const files: Record<string, string> = {
      'rln-cloud-database': 'database-url', 'rln-cloud-ca': 'ca.pem', 'rln-cloud-webhook-keys': 'webhook-signing-keys',
      'rln-cloud-unlock-seal': 'unlock-seal-keys', 'rln-cloud-s3': 's3-secret-access-key',
    };
    const secretNames = (objects: any[]) => Object.fromEntries(ofKind(objects, 'Secret').map((x) => [x.metadata.name.replace(/-[a-z0-9]{10}$/, ''), x.metadata.name]));
    const before = secretNames(example);
    expect(Object.keys(secretContract(example)).sort()).toEqual(Object.values(before).sort());
    for (const [secret, file] of Object.entries(files)) {
      const path = join(copy, 'overlays/example/secrets', file);
      const original = readFileSync(path, 'utf8');
      writeFileSync(path, `${original} rotated`);
      try {
        const rotated = render(join(copy, 'overlays/example'));
        const after = secretNames(rotated);
        for (const name of Object.keys(before)) {
          if (name === secret) expect(after[name], name).not.toBe(before[name]);
          else expect(after[name], name).toBe(before[name]);
        }
        // The pod template names the new Secret: a new ReplicaSet, rolled one replica at a time.
        expect(Object.keys(secretContract(rotated))).toContain(after[secret]);
        expect(Object.keys(secretContract(rotated))).not.toContain(before[secret]);
      } finally {
        writeFileSync(path, original);
      }
    }
  });

  it("has the guide's real-cluster table name every value the example overlay leaves to the operator", () => {
    const guide = readFileSync(join(repoRoot, 'docs/DEPLOY.md'), 'utf8');
    const start = guide.indexOf('**What you will supply, in the order the steps below need it.**');
    expect(start).toBeGreaterThan(0);
    const table = guide.slice(start, guide.indexOf('\n\n', guide.indexOf('| 1 |', start)));
    const example = readFileSync(join(repoRoot, 'deploy/kubernetes/overlays/example/kustomization.yaml'), 'utf8');
    // Each literal the example sets or leaves commented out for the operator, and each secret file.
    const literals = [...example.matchAll(/^\s*(?:#\s*)?- ([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]!);
    const files = [...example.matchAll(/=(secrets\/[a-z0-9.-]+)/g)].map((m) => m[1]!);
    expect(literals.length).toBeGreaterThan(10);
    expect(files).toHaveLength(8);
    const ingress = readFileSync(join(repoRoot, 'deploy/kubernetes/overlays/example/ingress.yaml'), 'utf8');
    const ingressValues = ['ingressClassName', 'cert-manager.io/cluster-issuer'].filter((v) => ingress.includes(v));
    expect(ingressValues).toHaveLength(2);
    const named = (v: string) => table.includes(`\`${v}\``) || (v.startsWith('TESTNET_') && table.includes('the same `TESTNET_*`') && table.includes(`\`REGTEST_${v.slice(8)}\``));
    expect([...literals, ...files, ...ingressValues, 'newName', 'newTag'].filter((v) => !named(v))).toEqual([]);
  });

  it('names in every *_FILE variable a key of a Secret mounted at that directory', () => {
    const objects = example;
    const pod = deploymentOf(objects).spec.template.spec;
    const container = pod.containers[0];
    const files = container.env.filter((e: any) => e.name.endsWith('_FILE'));
    expect(files.map((e: any) => e.name).sort()).toEqual([
      'CA_CERT_FILE', 'CA_KEY_FILE', 'DATABASE_URL_FILE', 'S3_ACCESS_KEY_ID_FILE', 'S3_SECRET_ACCESS_KEY_FILE', 'UNLOCK_SEAL_KEY_FILE', 'WEBHOOK_SIGNING_KEY_FILE',
    ]);
    for (const { name, value } of files) {
      const mount = container.volumeMounts.find((m: any) => m.mountPath === dirname(value));
      expect(mount, `${name}: nothing mounted at ${dirname(value)}`).toBeDefined();
      const volume = pod.volumes.find((v: any) => v.name === mount.name);
      const secret = ofKind(objects, 'Secret').find((s) => s.metadata.name === volume.secret?.secretName);
      expect(Object.keys(secret?.data ?? {}), name).toContain(basename(value));
    }
  });
});
