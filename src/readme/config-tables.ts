// The configuration tables of docs/CONFIGURATION.md, rendered from the variable declarations. Each
// table sits between two HTML comments (invisible on GitHub) so the script can rewrite it in place
// and the test can compare it with what the declarations say.
import { SERVICE_VARIABLES } from '../config.ts';
import { BLOB_STORE_VARIABLES, S3_VARIABLES } from '../blobs/settings.ts';
import { NODE_ACCESS_VARIABLES } from '../gateway/settings.ts';
import { REGTEST_VARIABLES, RLN_CLIENT_VARIABLES, TESTNET_VARIABLES, UNLOCK_VARIABLES } from '../rln/settings.ts';
import { LOG_VARIABLES } from '../logs/settings.ts';
import { BACKUP_VARIABLES } from '../backups/settings.ts';
import { USAGE_VARIABLES } from '../usage/settings.ts';
import { KUBERNETES_VARIABLES } from '../runtime/kubernetes/settings.ts';
import { WEBHOOK_VARIABLES } from '../webhooks/settings.ts';
import { EVENT_STREAM_VARIABLES } from '../events/settings.ts';
import { UNLOCK_SEAL_VARIABLES } from '../secrets/settings.ts';
import { CLI_VARIABLES } from '../cli/settings.ts';
import { PASSWORD_HASHING_VARIABLES } from '../auth/settings.ts';
import { MAIL_VARIABLES } from '../mail/settings.ts';
import { SIGNUP_VARIABLES } from '../signup/settings.ts';
import { OIDC_VARIABLES } from '../oidc/settings.ts';
import type { EnvVariable, EnvVariables } from '../env/variable.ts';

const rows = (...groups: EnvVariables[]) => groups.flatMap((group) => Object.values(group));

/** The guide the tables live in, from the repository's root. */
export const CONFIGURATION_GUIDE = 'docs/CONFIGURATION.md';

/** Every variable the service reads, by table, in the order the tables list them. */
export const CONFIG_TABLES = {
  // "# Configuration"
  service: rows(
    SERVICE_VARIABLES,
    RLN_CLIENT_VARIABLES,
    NODE_ACCESS_VARIABLES,
    UNLOCK_VARIABLES,
    REGTEST_VARIABLES,
    TESTNET_VARIABLES,
    WEBHOOK_VARIABLES,
    EVENT_STREAM_VARIABLES,
    UNLOCK_SEAL_VARIABLES,
    PASSWORD_HASHING_VARIABLES,
    SIGNUP_VARIABLES,
    OIDC_VARIABLES,
    MAIL_VARIABLES,
    LOG_VARIABLES,
    BACKUP_VARIABLES,
    USAGE_VARIABLES,
    BLOB_STORE_VARIABLES,
    S3_VARIABLES,
  ),
  // "## Kubernetes runtime"
  kubernetes: rows(KUBERNETES_VARIABLES),
  // "## The CLI's user commands"
  cli: rows(CLI_VARIABLES),
};
export type TableName = keyof typeof CONFIG_TABLES;

const start = (table: TableName) => `<!-- config-table ${table}: rendered from the variable declarations by scripts/render-config-table.ts; edit those -->`;
const end = (table: TableName) => `<!-- /config-table ${table} -->`;

/** The tables' "default" column: the default text, or what unset means. */
export function documentedDefault(variable: EnvVariable<unknown>): string {
  if (variable.default === undefined) return variable.unset ?? '';
  const text = variable.default === '' ? 'empty' : `\`${variable.default}\``;
  return variable.note ? `${text} ${variable.note}` : text;
}

export function renderTable(table: TableName): string {
  const cell = (text: string) => text.replaceAll('|', '\\|');
  // A secret may come from a file (`<NAME>_FILE`, see env/variable.ts): say so where it is listed.
  const name = (v: EnvVariable<unknown>) => (v.secret ? `\`${v.name}\` (or \`${v.name}_FILE\`)` : `\`${v.name}\``);
  const lines = CONFIG_TABLES[table].map((v) => `| ${name(v)} | ${cell(documentedDefault(v))} | ${cell(v.doc)} |`);
  return ['| variable | default | meaning |', '|---|---|---|', ...lines].join('\n');
}

/** The lines between a table's markers; undefined when the guide lacks them. */
export function tableInGuide(guide: string, table: TableName): string | undefined {
  const from = guide.indexOf(start(table));
  const to = guide.indexOf(end(table));
  if (from < 0 || to < from) return undefined;
  return guide.slice(from + start(table).length, to).trim();
}

/** A table's rows as documented: variable name and default cell. */
export function documentedRows(tableText: string): { name: string; default: string }[] {
  return tableText
    .split('\n')
    .slice(2)
    .map((line) => line.split(/(?<!\\)\|/).map((c) => c.trim()))
    .map(([, name = '', def = '']) => ({ name: /^`([^`]*)`/.exec(name)?.[1] ?? name, default: def.replaceAll('\\|', '|') }));
}

/** The guide with every table rendered afresh; throws when a table's markers are missing. */
export function renderTablesInto(guide: string): string {
  let out = guide;
  for (const table of Object.keys(CONFIG_TABLES) as TableName[]) {
    if (tableInGuide(out, table) === undefined) throw new Error(`${CONFIGURATION_GUIDE} has no markers for the ${table} table: ${start(table)} ... ${end(table)}`);
    const from = out.indexOf(start(table)) + start(table).length;
    out = `${out.slice(0, from)}\n${renderTable(table)}\n${out.slice(out.indexOf(end(table)))}`;
  }
  return out;
}
