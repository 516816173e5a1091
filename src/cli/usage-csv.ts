// `rln-cloud usage report --format csv`: CSV as RFC 4180 quotes it, with Unix line ends (what
// spreadsheets and billing imports read alike), a header line then a row per account and
// node, for a spreadsheet or a billing import. The node column is empty on an account's row of API
// calls about no node.
import type { UsageReportRow } from '../usage/service.ts';

const COLUMNS: Array<[string, keyof UsageReportRow]> = [
  ['account_id', 'accountId'],
  ['owner_email', 'ownerEmail'],
  ['plan', 'plan'],
  ['node_id', 'nodeId'],
  ['running_seconds', 'runningSeconds'],
  ['paused_seconds', 'pausedSeconds'],
  ['api_calls', 'apiCalls'],
  ['gateway_calls', 'gatewayCalls'],
];

/** A field quoted when it holds a comma, a quote or a line end; a leading = + - @ is defused for spreadsheets. */
function field(value: string | number): string {
  let text = String(value);
  if (typeof value === 'string' && /^[=+\-@]/.test(text)) text = `'${text}`;
  return /[",]|[\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function usageReportCsv(report: { rows: UsageReportRow[] }): string {
  const lines = [COLUMNS.map(([name]) => name).join(','), ...report.rows.map((r) => COLUMNS.map(([, key]) => field(r[key])).join(','))];
  return `${lines.join('\n')}\n`;
}
