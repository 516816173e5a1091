import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../config.ts';
import { boolean, integer, oneOf, text } from './formats.ts';
import { readEnv, variable } from './variable.ts';

const SWITCHES = ['BOOTSTRAP_DEV_USER', 'WEBHOOK_ALLOW_PRIVATE_TARGETS'] as const;

describe('reading environment variables', () => {
  it('takes booleans spelled exactly true or false, and names the spelling when refusing another', () => {
    expect(loadConfig({ BOOTSTRAP_DEV_USER: 'true', NODE_ENV: 'production' }).bootstrapDevUser).toBe(true);
    expect(loadConfig({ BOOTSTRAP_DEV_USER: 'false' }).bootstrapDevUser).toBe(false);
    for (const spelling of ['1', '0', 'yes', 'no', 'TRUE', 'False', 'on']) {
      for (const name of SWITCHES) {
        expect(() => loadConfig({ [name]: spelling }), `${name}=${spelling}`).toThrow(`${name} must be true or false (exactly, in lowercase), got "${spelling}"`);
      }
    }
    expect(() => loadConfig({ BLOB_STORE: 's3', S3_BUCKET: 'b', S3_FORCE_PATH_STYLE: '1' })).toThrow(/S3_FORCE_PATH_STYLE must be true or false/);
    expect(() => loadConfig({ RUNTIME: 'kubernetes', K8S_READ_ONLY_ROOT_FILESYSTEM: 'yes' })).toThrow(/K8S_READ_ONLY_ROOT_FILESYSTEM must be true or false/);
  });

  it('treats empty as unset and ignores surrounding spaces', () => {
    const c = loadConfig({ API_PORT: ' 9000 ', NODE_API_PORT: '', RUNTIME: '' });
    expect([c.apiPort, c.nodeApiPort, c.runtime]).toEqual([9000, 8081, 'process']);
  });

  it('refuses numbers written any other way than digits', () => {
    for (const raw of ['1e3', '0x10', '8080.0', '-1', 'x']) {
      const problems: string[] = [];
      readEnv({ n: variable('N', integer(1), { default: '5', doc: 'x' }) }, { N: raw }, problems);
      expect(problems, raw).toHaveLength(1);
    }
  });

  it('collects one problem per bad variable, each naming it, and never echoes a secret', () => {
    let error: unknown;
    try {
      loadConfig({ JOB_CONCURRENCY: '0', LOG_FILES_KEPT: 'many', DATABASE_URL: 'mysql://root:hunter2@db', WEBHOOK_CONCURRENCY: '5000' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems).toHaveLength(4);
    for (const name of ['JOB_CONCURRENCY', 'LOG_FILES_KEPT', 'DATABASE_URL', 'WEBHOOK_CONCURRENCY']) expect(problems.join('\n')).toContain(name);
    expect(problems.join('\n')).not.toContain('hunter2');
  });

  it('types each value from its declaration, undefined only where there is no default', () => {
    const problems: string[] = [];
    const values = readEnv(
      {
        mode: variable('MODE', oneOf(['a', 'b']), { default: 'a', doc: 'x' }),
        on: variable('ON', boolean(), { unset: 'derived', doc: 'x' }),
        name: variable('NAME', text(), { default: 'n', doc: 'x', keepEmpty: true }),
      },
      { MODE: 'b', NAME: '' },
      problems,
    );
    const mode: 'a' | 'b' = values.mode;
    const on: boolean | undefined = values.on;
    expect([mode, on, values.name, problems]).toEqual(['b', undefined, '', []]);
  });

  it('reads a secret from the file <NAME>_FILE names (trimmed), refuses both at once and names an unreadable file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'secret-file-'));
    try {
      const file = join(dir, 'database-url');
      writeFileSync(file, 'postgres://app:hunter2@db:5432/rln\n');
      expect(loadConfig({ DATABASE_URL_FILE: file }).databaseUrl).toBe('postgres://app:hunter2@db:5432/rln');
      expect(() => loadConfig({ DATABASE_URL_FILE: file, DATABASE_URL: 'postgres://x' })).toThrow('DATABASE_URL and DATABASE_URL_FILE are both set: set one');
      expect(() => loadConfig({ DATABASE_URL_FILE: join(dir, 'missing') })).toThrow(/DATABASE_URL_FILE: cannot read .*missing \(ENOENT\)/);
      // A bad value read from a file is refused like a bad variable, and still never echoed.
      writeFileSync(file, 'mysql://root:hunter2@db');
      expect(() => loadConfig({ DATABASE_URL_FILE: file })).toThrow(/^(?!.*hunter2).*DATABASE_URL must be a postgres/s);
      // Only secrets have a file form: a plain setting's _FILE is not read.
      writeFileSync(file, '9999');
      expect(loadConfig({ API_PORT_FILE: file }).apiPort).toBe(8080);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('requires https webhooks in production unless WEBHOOK_ALLOW_HTTP says otherwise', () => {
    expect(loadConfig({}).webhooks.allowHttp).toBe(true);
    expect(loadConfig({ NODE_ENV: 'production' }).webhooks.allowHttp).toBe(false);
    expect(loadConfig({ NODE_ENV: 'production', WEBHOOK_ALLOW_HTTP: 'true' }).webhooks.allowHttp).toBe(true);
  });
});
