// The monitoring shipped with the manifests (deploy/monitoring, components/monitoring), checked with
// Prometheus' own promtool: the rules are valid, each alert fires on its case and stays quiet on a
// near miss (alert-cases.ts). alerts-from-real-metrics.test.ts and
// alerts-from-a-stuck-service.test.ts fire them from a real service.
// Without promtool the suite is skipped, and fails under REQUIRE_MONITORING_TESTS=1 (CI installs it).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadAllYaml } from '@kubernetes/client-node';
import { repoRoot } from '../helpers/service-process.ts';
import { ALERT_CASES } from './alert-cases.ts';
import { alertRules, hasPromtool, promtool, rendered, rulesDocument, RULES_FILE, testRules } from './promtool.ts';

const read = (path: string) => readFileSync(join(repoRoot, path), 'utf8');

it.runIf(process.env.REQUIRE_MONITORING_TESTS === '1')('has promtool (REQUIRE_MONITORING_TESTS=1)', () => {
  expect(hasPromtool, 'promtool not found: apt-get install prometheus').toBe(true);
});

describe('the alert rules (deploy/monitoring/rules.yml)', () => {
  const rules = alertRules();

  it('are the PrometheusRule of the monitoring component, group for group', () => {
    const [rule] = loadAllYaml(read('deploy/kubernetes/components/monitoring/prometheus-rule.yaml')) as any[];
    expect(rule.kind).toBe('PrometheusRule');
    expect(rule.spec).toEqual(rulesDocument());
  });

  it('each have a summary, a description, a severity and a runbook in docs/MONITORING.md', () => {
    const runbooks = read('docs/MONITORING.md');
    for (const r of rules) {
      expect(Object.keys(r.annotations).sort(), r.alert).toEqual(['description', 'runbook_url', 'summary']);
      expect(['critical', 'warning'], r.alert).toContain(r.labels.severity);
      // Absolute: the published MONITORING.md (an external label) and the alert's anchor.
      expect(r.annotations.runbook_url, r.alert).toBe(`{{ $externalLabels.rlncloud_runbooks }}#${r.alert.toLowerCase()}`);
      expect(rendered(r.annotations.runbook_url!), r.alert).toMatch(/^https:\/\/[^/]+\/.*MONITORING\.md#[a-z]+$/);
      expect(runbooks, `a runbook heading for ${r.alert}`).toMatch(new RegExp(`^### ${r.alert}$`, 'm'));
    }
  });

  it.skipIf(!hasPromtool)('pass promtool check rules', () => {
    const checked = promtool(['check', 'rules', RULES_FILE]);
    expect(checked.output).toContain(`SUCCESS: ${rules.length} rules found`);
    expect(checked.ok).toBe(true);
  });

  it.skipIf(!hasPromtool)('with the scrape config pass promtool check config', () => {
    // Debian's promtool is built without Kubernetes discovery: the pod job is checked with the
    // static targets its comment offers instead.
    const config = loadAllYaml(read('deploy/monitoring/prometheus.yml'))[0] as any;
    const [job] = config.scrape_configs;
    expect(job.job_name).toBe('rln-cloud');
    expect(job.kubernetes_sd_configs).toEqual([{ role: 'pod', namespaces: { names: ['rln-cloud'] } }]);
    delete job.kubernetes_sd_configs;
    delete job.relabel_configs;
    job.static_configs = [{ targets: ['10.0.0.5:9464'] }];
    config.rule_files = [RULES_FILE];
    const checked = promtool(['check', 'config', '{}'], JSON.stringify(config), 'prometheus.yml');
    expect(checked.output).toContain('SUCCESS');
    expect(checked.ok, checked.output).toBe(true);
  });

  it('have a case each, and every case an alert', () => {
    expect(Object.keys(ALERT_CASES).sort()).toEqual(rules.map((r) => r.alert).sort());
  });

  it.skipIf(!hasPromtool)('each fire on their case and stay quiet on its near miss (promtool test rules)', () => {
    const tests = Object.entries(ALERT_CASES).flatMap(([alert, c]) => [
      { inputSeries: Object.entries(c.fires).map(([s, values]) => ({ series: s, values })), expectations: [{ alert, evalTime: c.evalTime, firing: [c.labels] }] },
      { inputSeries: Object.entries(c.quiet).map(([s, values]) => ({ series: s, values })), expectations: [{ alert, evalTime: c.evalTime, firing: [] }] },
    ]);
    const result = testRules(tests);
    expect(result.output).toContain('SUCCESS');
    expect(result.ok, result.output).toBe(true);
  });

  it.skipIf(!hasPromtool)('can fail: an alert expected on its near miss is reported', () => {
    const c = ALERT_CASES.RlnCloudNodesFailed!;
    const result = testRules([{ inputSeries: Object.entries(c.quiet).map(([s, values]) => ({ series: s, values })), expectations: [{ alert: 'RlnCloudNodesFailed', evalTime: c.evalTime, firing: [c.labels] }] }]);
    expect(result.ok).toBe(false);
    expect(result.output).toContain('RlnCloudNodesFailed');
  });
});

describe('the Grafana dashboard (deploy/monitoring/grafana-dashboard.json)', () => {
  const dashboard = JSON.parse(read('deploy/monitoring/grafana-dashboard.json'));
  const panels = dashboard.panels.filter((p: any) => p.type !== 'row');
  const exprs: string[] = panels.flatMap((p: any) => p.targets.map((t: any) => t.expr));

  it("queries every metric of the service's and nothing it does not export, through the chosen data source", () => {
    const defined = new Set([...read('src/metrics/definitions.ts').matchAll(/name: '(rlncloud_[a-z0-9_]+)'/g)].map((m) => m[1]!));
    const queried = new Set(exprs.flatMap((e) => e.match(/\brlncloud_[a-z0-9_]+/g) ?? []).map((n) => n.replace(/_(bucket|count|sum)$/, '')));
    // prom-client's process metrics are the only ones not declared in definitions.ts
    expect([...queried].filter((n) => !defined.has(n) && !/^rlncloud_(process|nodejs)_/.test(n))).toEqual([]);
    expect([...defined].filter((n) => !queried.has(n))).toEqual([]);
    for (const e of exprs) expect(e, 'selects the rules\' job').toMatch(/job="rln-cloud"/);
    for (const p of panels) expect(p.datasource.uid).toBe('${datasource}');
    expect(new Set(dashboard.panels.map((p: any) => p.id)).size).toBe(dashboard.panels.length);
  });

  it.skipIf(!hasPromtool)('has only queries Prometheus parses (each checked by promtool as a recording rule)', () => {
    const rules = { groups: [{ name: 'dashboard', rules: exprs.map((expr, i) => ({ record: `dashboard:query_${i}`, expr })) }] };
    const checked = promtool(['check', 'rules', '{}'], JSON.stringify(rules), 'dashboard-rules.yml');
    expect(checked.ok, checked.output).toBe(true);
  });
});
