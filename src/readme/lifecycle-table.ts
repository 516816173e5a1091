// The lifecycle table (nodes/lifecycle.ts) as docs/API.md shows it. The guide's block between the
// markers is this rendering, checked by lifecycle-table.test.ts and rewritten by
// `node --import tsx scripts/render-lifecycle-table.ts`, so the documentation cannot drift from
// what the code decides.
import type { NodeStatus } from '../domain/nodes.ts';
import { ERROR_STATUS } from '../errors.ts';
import { EVERY_STATUS, LIFECYCLE, REQUEST_TYPES, type Check, type Rule } from '../nodes/lifecycle.ts';
import type { NodeChange } from '../nodes/transition.ts';

/** The guide the table lives in, from the repository's root. */
export const LIFECYCLE_GUIDE = 'docs/API.md';

export const TABLE_START = '<!-- lifecycle-table:start: rendered from src/nodes/lifecycle.ts; edit there, then run scripts/render-lifecycle-table.ts -->';
export const TABLE_END = '<!-- lifecycle-table:end -->';

export function renderLifecycleTable(): string {
  const lines = [
    '| request | by | accepted from | changes | build | refused (409 unless said), first that applies | nothing to change when |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const type of REQUEST_TYPES) {
    const rule = LIFECYCLE[type] as Rule;
    // A new node has no build to be refused for: the create rule's check only keeps it uniform.
    const refusals = rule.checks
      .filter((c) => c.refusal && !(rule.makesNode && c.refusal.code === 'build_in_progress'))
      .map((c) => `\`${c.refusal!.code}\`${ERROR_STATUS[c.refusal!.code] === 409 ? '' : ` ${ERROR_STATUS[c.refusal!.code]}`} (${condition(c)})`);
    const noChange = rule.checks.filter((c) => !c.refusal).map(condition);
    const cells = [rule.name, rule.by, acceptedFrom(rule), changes(rule), rule.build ? `\`${rule.build}\`` : '', refusals.join(', '), noChange.join('; ')];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

/** The guide with its lifecycle block replaced by `table`; throws when the markers are missing. */
export function withLifecycleTable(guide: string, table: string): string {
  const { before, after } = splitAtBlock(guide);
  return `${before}${TABLE_START}\n${table}\n${TABLE_END}${after}`;
}

/** The table between the guide's markers, as it is now. */
export function lifecycleTableIn(guide: string): string {
  const { block } = splitAtBlock(guide);
  return block;
}

function splitAtBlock(guide: string) {
  const start = guide.indexOf(TABLE_START);
  const end = guide.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error(`the guide has no block between ${TABLE_START} and ${TABLE_END}`);
  return {
    before: guide.slice(0, start),
    block: guide.slice(start + TABLE_START.length, end).replace(/^\n/, '').replace(/\n$/, ''),
    after: guide.slice(end + TABLE_END.length),
  };
}

/** Statuses no status check catches: where the request goes through (when nothing else holds). */
function acceptedFrom(rule: Rule): string {
  if (rule.makesNode) return '(a new node)';
  const caught = new Set<NodeStatus>(rule.checks.flatMap((c) => c.statuses ?? []));
  const from = EVERY_STATUS.filter((s) => !caught.has(s));
  return from.length === EVERY_STATUS.length ? 'any' : from.join(', ');
}

function condition(check: Check): string {
  return check.statuses ? check.statuses.join(', ') : check.when!;
}

function changes(rule: Rule): string {
  const c: NodeChange = rule.change;
  const parts = [
    c.status,
    c.locked === undefined ? undefined : c.locked ? 'locked' : 'unlocked',
    c.initialized ? 'initialized' : undefined,
    c.desiredState && `desired ${c.desiredState}`,
    c.destroyed ? 'destroyed_at set' : undefined,
    c.autoUnlockSealed === null ? 'auto-unlock off (sealed password erased)' : undefined,
    rule.changeFrom?.describe,
  ];
  return parts.filter((p) => p !== undefined).join(', ');
}
