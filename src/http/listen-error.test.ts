import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config.ts';
import { startServer } from '../app.ts';
import { createLogger } from '../logger.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

describe('a port already taken', () => {
  it('names the setting that chose it, for each listener, and keeps the error code', async () => {
    const taken = net.createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = (taken.address() as net.AddressInfo).port;
    const free = async () => {
      const s = net.createServer();
      await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
      const p = (s.address() as net.AddressInfo).port;
      await new Promise((r) => s.close(r));
      return String(p);
    };
    try {
      for (const setting of ['API_PORT', 'NODE_API_PORT', 'MTLS_PORT']) {
        const dataDir = mkdtempSync(join(tmpdir(), 'rln-port-'));
        const ports = { API_PORT: await free(), NODE_API_PORT: await free(), MTLS_PORT: await free(), [setting]: String(port) };
        try {
          const config = loadConfig({ DATA_DIR: dataDir, BOOTSTRAP_DEV_USER: 'false', ...ports });
          await expect(startServer(config, createLogger('silent'))).rejects.toMatchObject({
            code: 'EADDRINUSE',
            message: `127.0.0.1:${port} is already in use (another rln-cloud, or another program): stop what holds it, or set ${setting} to another port`,
          });
        } finally {
          rmSync(dataDir, { recursive: true, force: true });
        }
      }
    } finally {
      taken.close();
    }
  }, 60_000);
});
