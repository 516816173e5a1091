// What the user commands of the CLI (`rln-cloud backup ...`, clients of the management API) read
// from the environment, read by config.ts with the rest of it: where the API is and the token.
import { text, url } from '../env/formats.ts';
import { readEnv, variable, type Env } from '../env/variable.ts';

export interface CliConfig {
  /** The management API the commands call; unset: PUBLIC_URL (the service on this machine). */
  apiUrl: string | undefined;
  /** The API token; unset: --token-file, or DATA_DIR/dev-token. */
  token: string | undefined;
}

export const CLI_VARIABLES = {
  apiUrl: variable('RLN_CLOUD_API_URL', url(['http:', 'https:']), {
    unset: '`PUBLIC_URL`',
    doc: 'the management API the `backup` commands call (`--api-url` wins)',
  }),
  token: variable('RLN_CLOUD_TOKEN', text(), {
    unset: '`--token-file`, else `<DATA_DIR>/dev-token`',
    doc: 'the API token the `backup` commands call the API with',
    secret: true,
  }),
};

export function readCliConfig(env: Env, problems: string[]): CliConfig {
  const values = readEnv(CLI_VARIABLES, env, problems);
  return { apiUrl: values.apiUrl, token: values.token?.trim() || undefined };
}
