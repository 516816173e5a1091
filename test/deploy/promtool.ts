// Prometheus' own tooling for the monitoring tests: the rules of deploy/monitoring/rules.yml,
// `promtool test rules` on a test file written here, and a service's scrapes turned into the input
// series of such a test (each scrape one minute apart, the last held), so rules are evaluated by
// Prometheus' engine on the samples the service really exposed. Scrapes come seconds apart and
// stand for minutes: a sample that is a time (`*_timestamp_seconds`) is moved onto that clock too.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAllYaml } from '@kubernetes/client-node';
import { repoRoot } from '../helpers/service-process.ts';
import { parseExposition, type Scrape } from '../helpers/metrics.ts';

export const RULES_FILE = join(repoRoot, 'deploy/monitoring/rules.yml');

export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export const hasPromtool = (() => {
  try {
    execFileSync('promtool', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

export const rulesDocument = (): any => loadAllYaml(readFileSync(RULES_FILE, 'utf8'))[0];
export const alertRules = (): AlertRule[] => rulesDocument().groups.flatMap((g: any) => g.rules.filter((r: any) => r.alert));

/** Runs promtool with `args`, where "{}" is replaced by a file holding `content`. */
export function promtool(args: string[], content?: string, name = 'input.yml') {
  const dir = mkdtempSync(join(tmpdir(), 'rln-promtool-'));
  try {
    const file = join(dir, name);
    if (content !== undefined) writeFileSync(file, content);
    const r = spawnSync('promtool', args.map((a) => (a === '{}' ? file : a)), { encoding: 'utf8', timeout: 60_000 });
    return { ok: r.status === 0, output: `${r.stdout}${r.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface Expectation {
  alert: string;
  evalTime: string;
  /** Each firing alert's labels besides alertname and severity; [] for none firing. */
  firing: Array<Record<string, string>>;
}

export interface RuleTest {
  inputSeries: Array<{ series: string; values: string }>;
  expectations: Expectation[];
}

/** The external labels of deploy/monitoring/prometheus.yml: the runbooks' base among them. */
export const externalLabels = (): Record<string, string> =>
  (loadAllYaml(readFileSync(join(repoRoot, 'deploy/monitoring/prometheus.yml'), 'utf8'))[0] as any).global.external_labels;

/** An annotation as Prometheus renders it with those external labels (the only template the rules use). */
export const rendered = (annotation: string, labels = externalLabels()) =>
  annotation.replace(/\{\{ \$externalLabels\.([a-z_]+) \}\}/g, (_m, name: string) => labels[name] ?? '');

/** `promtool test rules` on the rules file with these tests (JSON is YAML); annotations as the rules say, rendered. */
export function testRules(tests: RuleTest[]) {
  const rules = new Map(alertRules().map((r) => [r.alert, r]));
  const file = {
    rule_files: [RULES_FILE],
    evaluation_interval: '1m',
    tests: tests.map((t) => ({
      interval: '1m',
      external_labels: externalLabels(),
      input_series: t.inputSeries,
      alert_rule_test: t.expectations.map((e) => ({
        eval_time: e.evalTime,
        alertname: e.alert,
        exp_alerts: e.firing.map((labels) => ({
          exp_labels: { ...labels, ...rules.get(e.alert)!.labels },
          exp_annotations: Object.fromEntries(Object.entries(rules.get(e.alert)!.annotations).map(([k, v]) => [k, rendered(v)])),
        })),
      })),
    })),
  };
  return promtool(['test', 'rules', '{}'], JSON.stringify(file, null, 1), 'tests.yml');
}

/** The metric names the rules read, `up` included. */
export function metricsRead(): Set<string> {
  return new Set(alertRules().flatMap((r) => r.expr.match(/\b(up|rlncloud_[a-z0-9_]+)\b/g) ?? []));
}

/** A sample value in promtool's notation, which has no exponent form ("1e+9" would read as a series). */
const value = (v: number) => (Number.isNaN(v) ? 'NaN' : /e/.test(String(v)) ? v.toFixed(12) : String(v));

/** A scrape and when it was answered (Unix ms): what places the times in it on promtool's clock. */
export interface TimedScrape extends Scrape {
  takenAt: number;
}

/** Scrapes a service's metrics port at `instance` (host:port) as Prometheus would. */
export async function scrapeTarget(instance: string): Promise<TimedScrape> {
  const res = await fetch(`http://${instance}/metrics`);
  if (res.status !== 200) throw new Error(`scraping ${instance} answered ${res.status}`);
  const text = await res.text();
  return { ...parseExposition(text), takenAt: Date.now() };
}

const isTimestamp = (key: string) => key.split('{')[0]!.endsWith('_timestamp_seconds');

/**
 * Input series from scrapes of one target, a minute apart, as a Prometheus scraping it would have
 * stored them: each sample labelled with job and instance, `up` 1 for a scrape and 0 for a failed
 * one (undefined), a series missing from a scrape missing from the input; the last step held for
 * `holdMinutes`. Only the metrics the rules read are kept.
 *
 * A time (a Unix timestamp sample) becomes the minute of the first scrape that saw it: at the
 * latest, the scrape it happened before, so an age read from it (`time() - ...`) is never longer
 * than it was. Faithful only with scrapes further apart than what the time records recurs (a loop's
 * pass), as real ones are. Held, a time keeps its age: the hold shows no stall the scrapes did not.
 */
export function inputSeries(steps: Array<TimedScrape | undefined>, instance: string, holdMinutes: number) {
  const read = metricsRead();
  const target = `job="rln-cloud",instance="${instance}"`;
  const keys = new Set<string>();
  for (const s of steps) for (const key of s?.samples.keys() ?? []) if (read.has(key.split('{')[0]!)) keys.add(key);
  const withTarget = (key: string) => {
    const [name, labels] = [key.split('{')[0]!, /\{(.*)\}$/.exec(key)?.[1]];
    return `${name}{${target}${labels ? `,${labels}` : ''}}`;
  };
  const last = steps.length - 1;
  /** The minute (step) of the first scrape answered at or after `seconds` (Unix time). */
  const minuteOf = (seconds: number) => {
    const step = steps.findIndex((s) => s !== undefined && s.takenAt >= seconds * 1000);
    return step === -1 ? last : step;
  };
  const valuesOf = (at: (s: TimedScrape | undefined) => string) => {
    const held = at(steps[last]);
    return [...steps.slice(0, -1).map(at), Array(holdMinutes + 1).fill(held).join(' ')].join(' ');
  };
  const timeValues = (key: string) => {
    const minutes = steps.map((s) => (s?.samples.has(key) ? minuteOf(s.samples.get(key)!) : undefined));
    const at = (m: number | undefined) => (m === undefined ? '_' : String(m * 60));
    const held = minutes[last] === undefined ? Array(holdMinutes + 1).fill('_').join(' ') : `${minutes[last] * 60}+60x${holdMinutes}`;
    return [...minutes.slice(0, -1).map(at), held].join(' ');
  };
  return [
    { series: `up{${target}}`, values: valuesOf((s) => (s ? '1' : '0')) },
    ...[...keys].map((key) => ({
      series: withTarget(key),
      values: isTimestamp(key) ? timeValues(key) : valuesOf((s) => (s?.samples.has(key) ? value(s.samples.get(key)!) : '_')),
    })),
  ];
}
