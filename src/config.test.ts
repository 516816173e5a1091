import { describe, expect, it } from 'vitest';
import { ConfigError, configWarnings, loadConfig } from './config.ts';

describe('loadConfig', () => {
  it('has embedded defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      host: '127.0.0.1',
      apiPort: 8080,
      nodeApiPort: 8081,
      mtlsPort: 8443,
      metricsPort: 9464,
      publicUrl: 'http://127.0.0.1:8080',
      nodeApiUrl: 'http://127.0.0.1:8081',
      userNodeUrl: 'https://127.0.0.1:8443',
      connectPageUrl: 'http://127.0.0.1:8080/nodes',
      databaseUrl: undefined,
      runtime: 'process',
      bootstrapDevUser: true,
    });
    expect(c.dataDir).toMatch(/\/data$/);
  });

  it('derives public URLs from the ports and strips trailing slashes from given ones', () => {
    const c = loadConfig({ API_PORT: '9000', PUBLIC_URL: 'https://cloud.example.com/', NODE_API_URL: 'https://nodes.example.com//' });
    expect(c.publicUrl).toBe('https://cloud.example.com');
    expect(c.connectPageUrl).toBe('https://cloud.example.com/nodes');
    expect(c.nodeApiUrl).toBe('https://nodes.example.com');
  });

  it('reports every bad value at once, naming each variable', () => {
    let error: unknown;
    try {
      loadConfig({ API_PORT: '70000', NODE_API_PORT: 'abc', PUBLIC_URL: 'not a url', DATABASE_URL: 'mysql://x', RUNTIME: 'docker', USER_NODE_URL: 'http://x' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    for (const name of ['API_PORT', 'NODE_API_PORT', 'PUBLIC_URL', 'DATABASE_URL', 'RUNTIME', 'USER_NODE_URL']) {
      expect(problems).toContain(name);
    }
  });

  it('turns off the development user in production', () => {
    expect(loadConfig({ NODE_ENV: 'production' }).bootstrapDevUser).toBe(false);
    expect(() => loadConfig({ BOOTSTRAP_DEV_USER: 'maybe' })).toThrow(/BOOTSTRAP_DEV_USER/);
  });

  it('validates the node port range', () => {
    expect(loadConfig({ NODE_PORT_RANGE: '30000-30010' }).nodePortRange).toEqual({ from: 30000, to: 30010 });
    expect(() => loadConfig({ NODE_PORT_RANGE: '80-90' })).toThrow(/NODE_PORT_RANGE/);
    expect(() => loadConfig({ NODE_PORT_RANGE: 'x' })).toThrow(/NODE_PORT_RANGE/);
  });

  it('takes a metrics port, or 0 for no metrics listener', () => {
    expect(loadConfig({ METRICS_PORT: '9100' }).metricsPort).toBe(9100);
    expect(loadConfig({ METRICS_PORT: '0' }).metricsPort).toBe(0);
    for (const bad of ['70000', 'off', '-1']) expect(() => loadConfig({ METRICS_PORT: bad })).toThrow(/METRICS_PORT must be a TCP port between 1 and 65535, or 0 for no metrics listener/);
  });

  it('warns about production on plain http, and only then', () => {
    expect(configWarnings(loadConfig({ NODE_ENV: 'production' }))).toEqual([expect.stringContaining('http:// PUBLIC_URL')]);
    expect(configWarnings(loadConfig({ NODE_ENV: 'production', PUBLIC_URL: 'https://rln.example' }))).toEqual([]);
    expect(configWarnings(loadConfig({}))).toEqual([]);
    // The original's clients split invoke_url on '/nodes': a NODE_API_URL holding it breaks them.
    expect(configWarnings(loadConfig({ NODE_API_URL: 'https://nodes.rln.example.com' }))).toEqual([expect.stringContaining('contains "/nodes"')]);
    expect(configWarnings(loadConfig({ NODE_API_URL: 'https://gateway.rln.example.com' }))).toEqual([]);
  });
});
