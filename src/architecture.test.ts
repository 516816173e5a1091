// The layering rules of docs/ARCHITECTURE.md, checked on every test run so they cannot rot. The
// unit is a folder of src/ (src/nodes/...); files directly in src/ each count on their own. Every
// import counts, type-only and dynamic ones included: a type import is still a dependency of
// meaning, and a dynamic one of behaviour.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname);

/** Parts anyone may import; they import no other part of src/. */
// errors.ts and logger.ts stay directly in src/: nearly every file imports them. http/ is the
// plumbing of the listeners (drain, CORS, unread bodies, rate limits), platform/ the process's
// (its files, other processes), env/ how a variable is read, domain/ the service's words.
const LEAVES = ['errors.ts', 'logger.ts', 'pretty-log.ts', 'http', 'platform', 'env', 'domain', 'auth'];
/** What the node daemons run on knows the log files it writes, and nothing of nodes or storage. */
const RUNTIME_MAY_IMPORT = [...LEAVES, 'logs'];
/** Services and the parts they use: they know nothing of how they are called (HTTP, CLI). */
// metrics/ is among them: it reads the database for its gauges and knows nothing of the listeners it counts.
const SERVICES = ['accounts', 'audit', 'backups', 'blobs', 'db', 'events', 'jobs', 'logs', 'metrics', 'nodes', 'pki', 'releases', 'rln', 'runtime', 'secrets', 'usage', 'webhooks'];
/** The one client of the RLN daemons sits below the services: it knows nodes only by their address. */
const RLN_MAY_IMPORT = [...LEAVES, 'rln'];
/**
 * Where an outbound HTTP connection may be opened: the daemons only through rln/, receivers' URLs
 * by webhooks/ (node:http with its guarded lookup), the service's own API by the CLI (fetch).
 */
const OUTBOUND_HTTP = ['rln', 'webhooks', 'cli', 'operator'];
const OUTBOUND_CALL = /\b(?:https?\.(?:request|get)|net\.(?:connect|createConnection)|fetch)\(|from 'undici'/;
/**
 * HTTP's wire syntax: a request or status line, or a head's line ends. Nothing writes or reads it by
 * hand but the gateways' forwarding path (rln/forwarding/), kept because a benchmark row needs it
 * (rln/forward.ts says which).
 */
const HAND_WRITTEN_HTTP_ALLOWED = `rln${sep}forwarding${sep}`;
const HAND_WRITTEN_HTTP = /HTTP\/1\.[01]|\\r\\n/;
/** The gateways guard and forward; what a node's path means is nodes/'s, reached through this one file. */
const GATEWAY_ENTRY_INTO_NODES = join('nodes', 'paths', 'node-paths.ts');
/**
 * nodes/ says what it holds: at its top only the core every room builds on (the service, the
 * lifecycle table and its transitions, the Node answer, the daemons adapter); the rest in rooms
 * named for what they hold. A new room is added here and in docs/ARCHITECTURE.md.
 */
const NODES_CORE = ['lifecycle.ts', 'node-daemons.ts', 'present.ts', 'service.ts', 'transition.ts'];
const NODES_ROOMS = ['builds', 'health', 'lifecycle', 'paths', 'restore', 'rollout', 'tokens', 'unlock', 'upkeep'];
const CALLERS = ['api', 'web', 'gateway', 'operator', 'cli', 'readme', 'composition', 'app.ts', 'main.ts', 'config.ts'];
/** The parts report through hooks they declare themselves; only the composition root knows metrics/ (and prom-client). */
const METRICS_USERS = ['app.ts', 'composition'];
/** Only these read the whole configuration; every other part is handed the settings it uses. */
const CONFIG_READERS = ['app.ts', 'main.ts', 'composition', 'operator', 'readme'];

interface Import {
  from: string; // path relative to src/
  to: string;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'public' ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

const sources = sourceFiles(SRC).map((file) => ({ path: relative(SRC, file), text: readFileSync(file, 'utf8') }));

function importsOf(file: string): Import[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return importedFiles
    .map((i) => i.fileName)
    .filter((name) => name.startsWith('.'))
    .map((name) => ({ from: relative(SRC, file), to: relative(SRC, resolve(file, '..', name)) }))
    .filter((i) => !i.to.startsWith('..'));
}

/** The folder of a path relative to src/, or the file itself for files directly in src/. */
const partOf = (path: string) => path.split(sep)[0]!;

const imports = sourceFiles(SRC).flatMap(importsOf);
const crossing = imports.filter((i) => partOf(i.from) !== partOf(i.to));
const edges = new Map<string, Set<string>>();
for (const i of crossing) {
  if (!edges.has(partOf(i.from))) edges.set(partOf(i.from), new Set());
  edges.get(partOf(i.from))!.add(partOf(i.to));
}

/** Strongly connected components with more than one part (Tarjan). */
function cycles(): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do component.push((w = stack.pop()!));
      while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return found;
}

const describeImport = (i: Import) => `${i.from} -> ${i.to}`;
const importsInto = (targets: string[], filter: (i: Import) => boolean) =>
  crossing.filter((i) => targets.includes(partOf(i.to)) && filter(i)).map(describeImport);

/** Members of an interface that a caller must ask about (`name?`): each is a branch on which implementation it has. */
function optionalMembers(path: string, interfaceName: string): string[] {
  const file = ts.createSourceFile(path, readFileSync(join(SRC, path), 'utf8'), ts.ScriptTarget.Latest);
  const declaration = file.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === interfaceName);
  if (!declaration) throw new Error(`no interface ${interfaceName} in ${path}`);
  return declaration.members.filter((m) => m.questionToken !== undefined).map((m) => m.name?.getText(file) ?? '?');
}

/** Where the parts are built and connected: the composition root, and the gateways' own (they start their listeners). */
const COMPOSITION_FILES = (path: string) => ['composition', 'app.ts'].includes(partOf(path)) || path === join('gateway', 'start-node-access.ts');
/**
 * Functions composition may hand a part: the plumbing of the process (a long-running part's start,
 * stop and run; whether the process is ready; a document built on first use), never behaviour of
 * the domain. A service is handed another service (a narrow Pick<> of it) or an adapter instead.
 */
const PLUMBING_CALLBACKS = ['start', 'stop', 'run', 'isReady', 'readiness', 'serviceState', 'get'];

/**
 * Function-valued properties of the object literals in a file (`file: name`): an arrow or function
 * expression (also behind `a && ...`), a method, or a shorthand naming a local const that holds one.
 * That is how a loose function is handed as a dependency.
 */
function handedFunctions(source: { path: string; text: string }): string[] {
  const file = ts.createSourceFile(source.path, source.text, ts.ScriptTarget.Latest, true);
  const isFunction = (e: ts.Expression): boolean => {
    while (ts.isParenthesizedExpression(e)) e = e.expression;
    if (ts.isArrowFunction(e) || ts.isFunctionExpression(e)) return true;
    return ts.isBinaryExpression(e) && (e.operatorToken.kind === ts.SyntaxKind.AmpersandAmpersandToken || e.operatorToken.kind === ts.SyntaxKind.QuestionQuestionToken) && isFunction(e.right);
  };
  const localFunctions = new Set<string>();
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer && isFunction(node.initializer)) localFunctions.add(node.name.text);
    if (ts.isObjectLiteralExpression(node)) {
      for (const p of node.properties) {
        const handed =
          (ts.isPropertyAssignment(p) && isFunction(p.initializer)) ||
          ts.isMethodDeclaration(p) ||
          (ts.isShorthandPropertyAssignment(p) && localFunctions.has(p.name.text));
        if (handed && p.name) found.push(`${source.path}: ${p.name.getText(file)}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** Where every durable job is declared (its kind, attempts and payload): enqueuers and handlers import it from here. */
const JOB_CATALOG = join('jobs', 'catalog.ts');

/**
 * The jobs a file enqueues (`path: what`): each insertJob/insertJobs call's `X.newJob(...)`, named
 * by X, or `no declaration` for a call that builds its job row some other way. X is marked
 * `(not from the catalog)` when the file does not import it from jobs/catalog.ts.
 */
function enqueuedJobs(source: { path: string; text: string }): string[] {
  const file = ts.createSourceFile(source.path, source.text, ts.ScriptTarget.Latest, true);
  const fromCatalog = new Set<string>();
  for (const statement of file.statements) {
    if (!ts.isImportDeclaration(statement)) continue;
    const target = relative(SRC, resolve(SRC, source.path, '..', (statement.moduleSpecifier as ts.StringLiteral).text));
    const bindings = statement.importClause?.namedBindings;
    if (target === JOB_CATALOG && bindings && ts.isNamedImports(bindings)) for (const e of bindings.elements) fromCatalog.add(e.name.text);
  }
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && ['insertJob', 'insertJobs'].includes(node.expression.text)) {
      const declarations: string[] = [];
      const seek = (n: ts.Node) => {
        if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression) && n.expression.name.text === 'newJob') declarations.push(n.expression.expression.getText(file));
        ts.forEachChild(n, seek);
      };
      node.arguments.forEach(seek);
      if (declarations.length === 0) found.push(`${source.path}: no declaration`);
      for (const d of declarations) found.push(`${source.path}: ${d}${fromCatalog.has(d) ? '' : ' (not from the catalog)'}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** Names ending in `Row` that a file outside db/ imports from db/ (`path: Name`). */
function rowImports(): string[] {
  const found: string[] = [];
  for (const source of sources.filter((f) => partOf(f.path) !== 'db')) {
    const file = ts.createSourceFile(source.path, source.text, ts.ScriptTarget.Latest);
    for (const statement of file.statements) {
      if (!(ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) || !statement.moduleSpecifier) continue;
      const target = relative(SRC, resolve(SRC, source.path, '..', (statement.moduleSpecifier as ts.StringLiteral).text));
      if (partOf(target) !== 'db') continue;
      const bindings = ts.isImportDeclaration(statement) ? statement.importClause?.namedBindings : statement.exportClause;
      const names = bindings && (ts.isNamedImports(bindings) || ts.isNamedExports(bindings)) ? bindings.elements.map((e) => (e.propertyName ?? e.name).text) : [];
      for (const name of names) if (/^[A-Z]\w*Row$/.test(name)) found.push(`${source.path}: ${name}`);
    }
  }
  return found.sort();
}

/**
 * Row types still imported outside db/ when the rule came (issue #39 mapped BuildRow and NodeRow to
 * the domain's Build and Node). The list may only shrink: map one to a domain type, then remove it here.
 */
const ROW_IMPORTS_LEFT = [
  'accounts/members.ts: AccountMemberRow',
  'accounts/members.ts: InvitationRow',
  'accounts/ownership-transfer.ts: TransferRow',
  'accounts/service.ts: MemberRow',
  'accounts/service.ts: TokenRow',
  'audit/audit-log.ts: AuditEventRow',
  'backups/backup-run.ts: BackupRow',
  'backups/janitor.ts: BackupRow',
  'backups/present.ts: BackupRow',
  'backups/service.ts: BackupRow',
  'events/event-hub.ts: FeedEventRow',
  'events/present.ts: FeedEventRow',
  'jobs/worker.ts: JobRow',
  'logs/export-service.ts: LogExportRow',
  'mail/outbox.ts: OutboxRow',
  'nodes/restore/restore-fence.ts: BackupRow',
  'oidc/service.ts: MemberRow',
  'pki/client-certificates.ts: CertificateRow',
  'usage/account-usage.ts: ApiCallCountRow',
  'usage/account-usage.ts: ClosedNodeMonthRow',
  'usage/api-call-meter.ts: ApiCallCountRow',
  'usage/api-call-meter.ts: ApiCallerCountRow',
  'web/sessions.ts: MemberRow',
  'webhooks/service.ts: AttemptRow',
  'webhooks/service.ts: DeliveryRow',
].map((entry) => entry.replaceAll('/', sep));

describe('the layers of src/', () => {
  it('sees the imports (the parser works)', () => {
    expect(crossing.length).toBeGreaterThan(100);
    expect(crossing.some((i) => i.from === join('nodes', 'service.ts') && i.to === join('db', 'nodes.ts'))).toBe(true);
  });

  it('has no import cycle between folders', () => {
    const found = cycles();
    const detail = found.map((component) =>
      crossing.filter((i) => component.includes(partOf(i.from)) && component.includes(partOf(i.to))).map(describeImport),
    );
    expect(detail, `folder cycles: ${found.map((c) => c.join(' <-> ')).join('; ')}`).toEqual([]);
  });

  it('keeps the shared leaves free of every other part', () => {
    expect(crossing.filter((i) => LEAVES.includes(partOf(i.from)) && !LEAVES.includes(partOf(i.to))).map(describeImport)).toEqual([]);
  });

  it('keeps db/ below every service: it imports only the leaves', () => {
    expect(crossing.filter((i) => partOf(i.from) === 'db' && !LEAVES.includes(partOf(i.to))).map(describeImport)).toEqual([]);
  });

  it('keeps rln/ below the services: it imports only the leaves', () => {
    expect(crossing.filter((i) => partOf(i.from) === 'rln' && !RLN_MAY_IMPORT.includes(partOf(i.to))).map(describeImport)).toEqual([]);
  });

  it('reaches the daemons only through the RLN client: no other part opens an HTTP connection of its own', () => {
    expect(sources.filter((f) => OUTBOUND_CALL.test(f.text)).length).toBeGreaterThan(3); // the pattern sees the allowed callers
    expect(sources.filter((f) => OUTBOUND_CALL.test(f.text) && !OUTBOUND_HTTP.includes(partOf(f.path))).map((f) => f.path)).toEqual([]);
  });

  it('parses and writes HTTP with libraries (node:http, undici), by hand only on the forwarding path', () => {
    // Sanitizing line ends out of log lines is not HTTP (logs/export-content.ts matches [\r\n] in a class).
    const found = sources.filter((f) => !f.path.startsWith(HAND_WRITTEN_HTTP_ALLOWED) && HAND_WRITTEN_HTTP.test(f.text.replaceAll('[\\r\\n]', ''))).map((f) => f.path);
    expect(sources.some((f) => f.path.startsWith(HAND_WRITTEN_HTTP_ALLOWED) && HAND_WRITTEN_HTTP.test(f.text))).toBe(true); // the pattern sees the one allowed place
    expect(found).toEqual([]);
    expect(HAND_WRITTEN_HTTP.test('head += `${name}: ${value}\\r\\n`')).toBe(true);
  });

  it('keeps the node row inside db/: every other part speaks the domain Node (domain/nodes.ts)', () => {
    expect(sources.filter((f) => partOf(f.path) !== 'db' && /\bNodeRow\b/.test(f.text)).map((f) => f.path)).toEqual([]);
  });

  it('keeps *Row types inside db/: no other part imports one (but the ones left to map, a list that only shrinks)', () => {
    const found = rowImports();
    expect(found.filter((entry) => !ROW_IMPORTS_LEFT.includes(entry))).toEqual([]);
    expect(ROW_IMPORTS_LEFT.filter((entry) => !found.includes(entry)), 'mapped since: remove from ROW_IMPORTS_LEFT').toEqual([]);
  });

  it('asks a runtime nothing about which one it is: no optional member on its interface', () => {
    expect(optionalMembers(join('runtime', 'types.ts'), 'NodeRuntime')).toEqual([]);
  });

  it('keeps runtime/ apart from the database and the services', () => {
    expect(crossing.filter((i) => partOf(i.from) === 'runtime' && !RUNTIME_MAY_IMPORT.includes(partOf(i.to))).map(describeImport)).toEqual([]);
  });

  it('keeps services unaware of their callers (HTTP, gateways, CLI, composition)', () => {
    expect(crossing.filter((i) => SERVICES.includes(partOf(i.from)) && CALLERS.includes(partOf(i.to))).map(describeImport)).toEqual([]);
  });

  it('keeps the gateways to guarding and forwarding: gateway/ reaches nodes/ only through its one entry (nodes/paths/node-paths.ts)', () => {
    expect(crossing.some((i) => partOf(i.from) === 'gateway' && i.to === GATEWAY_ENTRY_INTO_NODES)).toBe(true); // the rule sees the entry
    expect(crossing.filter((i) => partOf(i.from) === 'gateway' && partOf(i.to) === 'nodes' && i.to !== GATEWAY_ENTRY_INTO_NODES).map(describeImport)).toEqual([]);
  });

  it('keeps nodes/ in rooms: its core at the top, every other file in a room named for what it holds, no file name twice', () => {
    const inNodes = sources.filter((f) => partOf(f.path) === 'nodes').map((f) => relative('nodes', f.path).split(sep));
    expect(inNodes.filter((parts) => parts.length === 1).map((parts) => parts[0]).sort()).toEqual(NODES_CORE);
    expect([...new Set(inNodes.filter((parts) => parts.length > 1).map((parts) => parts[0]))].sort()).toEqual(NODES_ROOMS);
    expect(inNodes.filter((parts) => parts.length > 2).map((parts) => parts.join('/')), 'one level of rooms').toEqual([]);
    const names = inNodes.map((parts) => parts.at(-1)!);
    expect(names.filter((name, i) => names.indexOf(name) !== i), 'a file name used twice in nodes/').toEqual([]);
  });

  it('declares every job in the one catalog (jobs/catalog.ts): declareJob is called nowhere else', () => {
    const declaring = sources.filter((f) => /\bdeclareJob\(/.test(f.text) && f.path !== join('jobs', 'job-declaration.ts')).map((f) => f.path);
    expect(declaring).toEqual([JOB_CATALOG]);
  });

  it('enqueues only jobs of the catalog: every insertJob/insertJobs outside db/ enqueues a declaration imported from jobs/catalog.ts', () => {
    const enqueued = sources.filter((f) => partOf(f.path) !== 'db' && f.text.includes('insertJob')).flatMap(enqueuedJobs);
    expect(enqueued.length).toBeGreaterThan(5); // the rule sees the enqueuers
    expect(enqueued.filter((entry) => entry.endsWith('(not from the catalog)') || entry.endsWith('no declaration'))).toEqual([]);
    const probe = (text: string) => enqueuedJobs({ path: join('x', 'y.ts'), text });
    expect(probe(`import { A_JOB } from '../jobs/catalog.ts'; await insertJob(tx, { ...A_JOB.newJob(p), delayMs });`)).toEqual([join('x', 'y.ts') + ': A_JOB']);
    expect(probe(`import { B_JOB } from './b.ts'; await insertJobs(tx, xs.map((x) => B_JOB.newJob(x)));`)).toEqual([join('x', 'y.ts') + ': B_JOB (not from the catalog)']);
    expect(probe(`await insertJob(tx, { kind: 'x', payload: {} });`)).toEqual([join('x', 'y.ts') + ': no declaration']);
  });

  it('has composition build and connect: no function carrying domain behaviour is handed to a part, only services, adapters and plumbing', () => {
    const handed = sources.filter((f) => COMPOSITION_FILES(f.path)).flatMap(handedFunctions);
    expect(handed.length).toBeGreaterThan(0); // the rule sees the plumbing it allows
    expect(handed.filter((entry) => !PLUMBING_CALLBACKS.includes(entry.split(': ')[1]!))).toEqual([]);
    expect(handedFunctions({ path: 'x.ts', text: 'const f = (n) => g(n); build({ f, a: (x) => x, b: m && ((y) => y), c() {} });' })).toEqual(['x.ts: f', 'x.ts: a', 'x.ts: b', 'x.ts: c']);
  });

  it('keeps SQL out of the API routes: api/ calls services, never db/', () => {
    expect(crossing.filter((i) => partOf(i.from) === 'api' && partOf(i.to) === 'db').map(describeImport)).toEqual([]);
  });

  it('hands parts their settings: only the composition root reads config.ts', () => {
    expect(importsInto(['config.ts'], (i) => !CONFIG_READERS.includes(partOf(i.from)))).toEqual([]);
  });

  it('hands the parts their metrics: only the composition root imports metrics/', () => {
    expect(importsInto(['metrics'], (i) => !METRICS_USERS.includes(partOf(i.from)))).toEqual([]);
  });

  it('imports the composition root from nowhere but main.ts', () => {
    expect(importsInto(['app.ts', 'main.ts'], (i) => i.from !== 'main.ts')).toEqual([]);
  });
});
