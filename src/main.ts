// The rln-cloud command line: `serve` runs the service; the other commands are for operators and
// work whether or not a server is running (see operator/admin-channel.ts).
// Only what `serve` needs before the database starts opening is imported statically; the
// operator commands and the service itself are loaded when needed.
import { mkdirSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ConfigError, configWarnings, loadConfig, type Config } from './config.ts';
import { createLogger } from './logger.ts';
import { AppError } from './errors.ts';
import { openServerDatabase } from './db/open.ts';

const USAGE = `usage: rln-cloud <command> [options] [--json]

  serve                                   run the service (what npm start runs)
  migrate                                 apply database migrations
  user create <email> [--plan <plan>] [--password <pw>]
                                          a user who owns a new account on the plan (default
                                          starter; see plan list)
  plan list                               the plans and their limits
  plan set <name> [--nodes <n>] [--api-calls-per-month <n>] [--users <n>] [--auto-upgrade true|false]
                                          create a plan or change its limits (a number or
                                          unlimited); a lower limit stops nothing that runs, it
                                          refuses only what would pass it
  account set-plan <email> <plan>         move the account of the user with <email> to <plan>
  user set-password <email> <password>
  user reset-2fa <email>                  turn off the person's second factor (audited)
  signup list                             accounts waiting for approval (SIGNUP_MODE=approval)
  signup approve <email>                  let a waiting account in (its owner is emailed)
  signup reject <email>                   remove a waiting account and its owner
  mail list [--to <email>] [--limit <n>]  the email outbox, newest first (where messages stay
                                          when SMTP_URL is unset)
  mail show <message-id>                  one message with its text (its link)
  token create <email> [--name <label>] [--expires-in-days <n>] [--read-only] [--node <id>]...
               [--access all|api|gateway]
                                          prints the token once; only its hash is stored. Scopes:
                                          --read-only (only reads), --node (only these nodes;
                                          repeat it or separate ids with commas), --access (only the
                                          management API or only the node gateway)
  token list <email>
  token revoke <token-id>
  release publish <version> [--concurrency <n>] [--failure-budget <n>]
                                          make <version> the latest node image version and roll it
                                          out to the nodes of Scale and Wallet users
  release list
  release status <version>                rollout progress (a live progress bar on a terminal)
  release resume <version> [--failure-budget <n>]
                                          resume a rollout the failure budget paused
  authentication rollout [--concurrency <n>] [--failure-budget <n>]
                                          restart, a few at a time, every node whose daemon still
                                          runs without RLN's authentication (each comes back locked)
  authentication status                   its progress, with the failed restarts' reasons
  authentication resume [--failure-budget <n>]
                                          resume it once the failure budget paused it
  webhook-key rotate [--overlap <duration>]
                                          new webhook signing keys: the old Ed25519 key keeps signing
                                          beside the new one for the overlap (default
                                          WEBHOOK_KEY_OVERLAP, 24h); the new RSA key is published
                                          now and signs X-ThunderStack-Signature after the overlap
  unlock-seal-key rotate                  new key for the sealed auto-unlock passwords: every one is
                                          re-sealed with it, then the old key is dropped
  unlock-seal-key reseal                  re-seal every sealed password with the key file's first key
                                          (a read-only key file: see docs/API.md "Automatic unlock")
  cert issue <node-id> [--dir <dir>]      a client certificate for the node's owner, saved as
                                          node.key, node.pem and ca.pem in <dir> (default node-<id>)
  cert list <node-id>                     a node's client certificates (mutual-TLS gateway)
  cert revoke <serial>                    revoke a client certificate; refused from its next request
  audit list [--user <email>] [--limit <n>]
                                          the audit trail, newest first: everyone's, or the account of
                                          the user with that email; actorEmail says which member acted
  usage report --month YYYY-MM [--format csv|json]
                                          every account's usage of a month, a row per account and
                                          node (docs/USAGE.md); final once the month is closed
  backup list <node-id>                   a node's backups (through the API, like the ones below)
  backup create <node-id> [--password-file <f>] [--no-wait]
                                          back the node up; the password from the file, standard
                                          input, or asked for; waits until it has finished
  backup download <node-id> <backup-id> [--out <file>]
                                          save a finished backup, its SHA-256 checked

The backup commands call the management API at --api-url (default RLN_CLOUD_API_URL, else
PUBLIC_URL) with the token in RLN_CLOUD_TOKEN, --token-file, or DATA_DIR/dev-token.

Configuration comes from the environment (DATA_DIR, DATABASE_URL, ...; see docs/CONFIGURATION.md).
With --json every command prints exactly one JSON object on stdout.`;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: false,
    options: {
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      plan: { type: 'string' },
      password: { type: 'string' },
      name: { type: 'string' },
      'expires-in-days': { type: 'string' },
      'read-only': { type: 'boolean' },
      node: { type: 'string', multiple: true },
      access: { type: 'string' },
      concurrency: { type: 'string' },
      'failure-budget': { type: 'string' },
      overlap: { type: 'string' },
      dir: { type: 'string' },
      out: { type: 'string' },
      'api-url': { type: 'string' },
      'token-file': { type: 'string' },
      'password-file': { type: 'string' },
      'no-wait': { type: 'boolean' },
      user: { type: 'string' },
      limit: { type: 'string' },
      nodes: { type: 'string' },
      'api-calls-per-month': { type: 'string' },
      users: { type: 'string' },
      'auto-upgrade': { type: 'string' },
      month: { type: 'string' },
      format: { type: 'string' },
    },
  });
  const json = values.json === true;
  const options = Object.fromEntries(
    Object.entries(values)
      .filter(([k]) => k !== 'json' && k !== 'help')
      // A repeated option (--node) travels as one comma-separated value, like `--node a,b`.
      .map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : v]),
  ) as Record<string, string | true>;
  const [group, sub, ...rest] = positionals;
  if (values.help || !group) {
    console.log(USAGE);
    return group || values.help ? 0 : 2;
  }
  try {
    const config = loadConfig();
    if (group === 'serve') return await serve(config, json);
    if (group === 'backup') {
      const { runBackupCommand } = await import('./cli/run-backup-command.ts');
      const result = await runBackupCommand(config, `${group} ${sub ?? ''}`.trim(), { positional: rest, options });
      if (json) console.log(JSON.stringify(result));
      else (await import('./cli/output.ts')).printHuman(result);
      return 0;
    }
    const { operatorCommands, printHuman, runOperator, watchRollout } = await import('./operator/run-operator.ts');
    const out = (result: object) => (json ? console.log(JSON.stringify(result)) : printHuman(result));
    if (group === 'migrate') {
      out(await runOperator(config, 'migrate', { positional: [], options }));
      return 0;
    }
    const command = `${group} ${sub ?? ''}`.trim();
    if (!operatorCommands[command]) {
      // `rln-cloud release` (a group without its subcommand) lists what the group does.
      const inGroup = Object.keys(operatorCommands).filter((c) => c.startsWith(`${group} `));
      if (inGroup.length > 0) {
        const lines = USAGE.split('\n').filter((l) => inGroup.some((c) => l.trimStart().startsWith(c)));
        throw new AppError('invalid_request', `"${command}" needs one of: ${inGroup.map((c) => c.slice(group.length + 1)).join(', ')}\n${lines.join('\n')}`);
      }
      throw new AppError('invalid_request', `unknown command "${command}"; see rln-cloud --help`);
    }
    const args = { positional: rest, options };
    if (command === 'release status' && !json && process.stdout.isTTY) {
      await watchRollout(() => runOperator(config, command, args) as ReturnType<typeof watchRollout>);
      return 0;
    }
    const result = await runOperator(config, command, args);
    if (command === 'cert issue') {
      // Written here, by the CLI, wherever the operator runs it (the command itself may run in the server).
      const { saveCredentials } = await import('./operator/credential-files.ts');
      const dir = typeof options.dir === 'string' ? options.dir : `node-${rest[0]}`;
      out(saveCredentials(result as Parameters<typeof saveCredentials>[0], dir));
      return 0;
    }
    if (command === 'usage report' && (options.format === 'csv' || options.format === 'json')) {
      const { usageReportCsv } = await import('./cli/usage-csv.ts');
      process.stdout.write(options.format === 'csv' ? usageReportCsv(result as Parameters<typeof usageReportCsv>[0]) : `${JSON.stringify(result)}\n`);
      return 0;
    }
    out(result);
    return 0;
  } catch (err) {
    const code = err instanceof AppError ? err.code : err instanceof ConfigError ? 'invalid_config' : 'error';
    const message = err instanceof Error ? err.message : String(err);
    if (json) console.log(JSON.stringify({ error: { code, message } }));
    else console.error(`error: ${message}`);
    return 1;
  }
}

async function serve(config: Config, json: boolean): Promise<number> {
  // With --json, stdout carries only the one ready object; logs go to stderr.
  const log = createLogger(config.logLevel, json ? 2 : 1, config.logFormat);
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  // Start opening the database first, then load the rest of the service while it opens.
  const opening = openServerDatabase(config);
  const { startServer } = await import('./app.ts');
  const server = await startServer(config, log, opening);
  const urls = {
    api: config.publicUrl,
    docs: `${config.publicUrl}/api/docs`,
    nodeApi: config.nodeApiUrl,
    userNode: config.userNodeUrl,
  };
  for (const warning of configWarnings(config)) log.warn({ publicUrl: config.publicUrl }, warning);
  if (json) {
    console.log(JSON.stringify({ status: 'ready', urls, devToken: server.devCredentials?.token ?? null }));
  } else {
    log.info(urls, `rln-cloud is ready at ${config.publicUrl}`);
    if (server.devCredentials) {
      const { email, token, tokenFile, password } = server.devCredentials;
      process.stdout.write(
        `\nFirst start: created the development user ${email}.\n\n` +
          `  API token (also in ${tokenFile}):\n    ${token}\n` +
          `    curl -H "Authorization: Bearer ${token}" ${config.publicUrl}/api/nodes\n\n` +
          `  Web UI: ${config.publicUrl}/ - sign in as ${email} with the password ${password}\n` +
          `    (change it with: npx rln-cloud user set-password ${email} <new-password>)\n\n`,
      );
    }
  }
  // The first SIGTERM or Ctrl-C stops gracefully (SHUTDOWN_DELAY, SHUTDOWN_TIMEOUT); a second one
  // while that runs exits at once.
  await new Promise<void>((resolve) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) {
        log.warn({ signal }, 'second signal: exiting without waiting');
        process.exit(130);
      }
      stopping = true;
      log.info({ signal }, 'shutting down');
      resolve();
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
  await server.stop();
  log.info('stopped');
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
