// The admin channel: how the CLI reaches a running server that holds the embedded database open.
// A loopback HTTP listener on a random port; its address and a random secret are written to a
// 0600 file in DATA_DIR, so only whoever can read DATA_DIR can use it.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppError, type ErrorCode } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { operatorCommands, type OperatorArgs, type OperatorContext } from './commands.ts';

interface AdminFile {
  pid: number;
  port: number;
  secret: string;
}

const adminFilePath = (dataDir: string) => join(dataDir, 'admin.json');
const MAX_REQUEST_BYTES = 64 * 1024;

export async function startAdminChannel(dataDir: string, ctx: OperatorContext, log: Logger) {
  const secret = randomBytes(32).toString('hex');
  const server = http.createServer((req, res) => {
    const reply = (status: number, body: object) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    const given = Buffer.from(String(req.headers['x-admin-secret'] ?? ''));
    if (req.method !== 'POST' || given.length !== secret.length || !timingSafeEqual(given, Buffer.from(secret))) {
      return reply(403, { error: { code: 'forbidden', message: 'bad admin secret' } });
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_REQUEST_BYTES) req.destroy();
      else chunks.push(c);
    });
    req.on('end', async () => {
      try {
        const { command, args } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { command: string; args: OperatorArgs };
        const run = operatorCommands[command];
        if (!run) throw new AppError('invalid_request', `unknown command "${command}"`);
        reply(200, { result: await run(ctx, args) });
      } catch (err) {
        if (!(err instanceof AppError)) log.error({ err }, 'admin command failed');
        const code: ErrorCode = err instanceof AppError ? err.code : 'internal_error';
        reply(200, { error: { code, message: err instanceof Error ? err.message : String(err) } });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const file: AdminFile = { pid: process.pid, port, secret };
  writeFileSync(adminFilePath(dataDir), JSON.stringify(file), { mode: 0o600 });
  return {
    async stop() {
      rmSync(adminFilePath(dataDir), { force: true });
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Reads the admin file of the server `pid`, waiting for it while that server is starting. */
export async function findAdminChannel(dataDir: string, pid: number, timeoutMs = 60_000): Promise<AdminFile> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const file = JSON.parse(readFileSync(adminFilePath(dataDir), 'utf8')) as AdminFile;
      if (file.pid === pid) return file;
    } catch {}
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the server (pid ${pid}) holds ${dataDir} but did not open its admin channel within ${timeoutMs / 1000} s`);
}

export async function callAdminChannel(file: AdminFile, command: string, args: OperatorArgs): Promise<object> {
  const res = await fetch(`http://127.0.0.1:${file.port}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-admin-secret': file.secret },
    body: JSON.stringify({ command, args }),
  });
  const body = (await res.json()) as { result?: object; error?: { code: ErrorCode; message: string } };
  if (body.error) throw new AppError(body.error.code, body.error.message);
  return body.result!;
}
