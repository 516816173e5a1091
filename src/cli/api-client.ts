// The CLI's user commands (backup ...) are clients of the management API, like any other: they
// need its URL and a token. On a laptop both come for free: the URL is the service's own
// (PUBLIC_URL) and the token the development token the first start wrote to DATA_DIR/dev-token.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppError, type ErrorCode } from '../errors.ts';
import type { CliConfig } from './settings.ts';

export interface ApiClientSettings {
  apiUrl: string;
  token: string;
}

/**
 * `--api-url` or RLN_CLOUD_API_URL, else the service's PUBLIC_URL; the token from RLN_CLOUD_TOKEN,
 * `--token-file`, or DATA_DIR/dev-token. Never a token on the command line: it would show in `ps`.
 */
export function apiClientSettings(
  options: Record<string, string | true>,
  config: { publicUrl: string; dataDir: string; cli: CliConfig },
): ApiClientSettings {
  const apiUrl = String(options['api-url'] ?? config.cli.apiUrl ?? config.publicUrl).replace(/\/+$/, '');
  let token = config.cli.token;
  const tokenFile = typeof options['token-file'] === 'string' ? options['token-file'] : join(config.dataDir, 'dev-token');
  if (!token && existsSync(tokenFile)) token = readFileSync(tokenFile, 'utf8').trim();
  if (!token) {
    throw new AppError('unauthorized', `no API token: set RLN_CLOUD_TOKEN, or pass --token-file (looked for ${tokenFile})`);
  }
  return { apiUrl, token };
}

/** Calls the API; an error answer becomes the AppError it describes, so the CLI prints its message. */
export async function callApi<T = any>(settings: ApiClientSettings, method: string, path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(`${settings.apiUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${settings.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new AppError('service_unavailable', `cannot reach the API at ${settings.apiUrl} (${(err as Error).cause ?? (err as Error).message}): is the service running? (--api-url)`);
  }
  const text = await res.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : {};
  } catch {
    throw new AppError('internal_error', `the API at ${settings.apiUrl} answered ${res.status} with something that is not JSON`);
  }
  if (!res.ok) {
    const error = json?.error as { code?: ErrorCode; message?: string } | undefined;
    throw new AppError(error?.code ?? 'internal_error', error?.message ?? `the API answered ${res.status}`);
  }
  return json as T;
}
