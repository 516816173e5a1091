// One environment variable, declared as data: its name, how its text is read and checked (a
// TypeBox schema), its default, and what it means. The same declarations drive reading at start
// and the configuration tables of docs/CONFIGURATION.md (readme/config-tables.ts), so the two cannot drift apart.
import { readFileSync } from 'node:fs';
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

export type Env = Record<string, string | undefined>;

/**
 * How a variable's text becomes a value: `read` turns the text into the value it spells
 * (undefined when it spells nothing of the kind), then `schema` checks that value (ranges,
 * allowed words, patterns). `must` completes "<NAME> must ..." in the error message.
 */
export interface EnvFormat<T> {
  schema: TSchema;
  must: string;
  read(text: string): T | undefined;
}

interface Declaration {
  /** What the variable means (markdown): the tables' "meaning" column. */
  doc: string;
  /** Markdown shown after the default in the tables, e.g. "(10 MiB)". */
  note?: string;
  /**
   * Never echo the value in an error message (it may hold a password). A secret may also be given
   * as a file: `<NAME>_FILE` names a file holding the value (how Kubernetes and Docker mount
   * secrets), so it never appears in the process environment.
   */
  secret?: boolean;
  /** An empty value is a value (e.g. no key prefix), not "unset". */
  keepEmpty?: boolean;
}

interface WithDefault extends Declaration {
  /** The text used when the variable is unset or empty; read and checked like a given value. */
  default: string;
}

interface WithoutDefault extends Declaration {
  /** The tables' "default" column (markdown): what unset means, or how the reader derives the default. */
  unset: string;
}

export interface EnvVariable<T> extends Declaration {
  name: string;
  format: EnvFormat<unknown>;
  default?: string;
  unset?: string;
  /** Only carries the value's type for `readEnv`; never set. */
  readonly valueType?: T;
}

export function variable<T>(name: string, format: EnvFormat<T>, declaration: WithDefault): EnvVariable<T>;
export function variable<T>(name: string, format: EnvFormat<T>, declaration: WithoutDefault): EnvVariable<T | undefined>;
export function variable<T>(name: string, format: EnvFormat<T>, declaration: WithDefault | WithoutDefault): EnvVariable<unknown> {
  return { name, format, ...declaration };
}

export type EnvVariables = Record<string, EnvVariable<unknown>>;
export type EnvValues<V extends EnvVariables> = { [K in keyof V]: V[K] extends EnvVariable<infer T> ? T : never };

/**
 * Reads every variable of `variables` from `env`, keyed as declared. Each bad value adds one
 * problem naming its variable, so a start reports all of them at once; the value returned beside
 * a problem is only a placeholder (the default, if any), since the caller throws on problems.
 */
export function readEnv<V extends EnvVariables>(variables: V, env: Env, problems: string[]): EnvValues<V> {
  const values: Record<string, unknown> = {};
  for (const [key, declared] of Object.entries(variables)) {
    values[key] = readVariable(declared, declared.secret ? secretText(declared.name, env, problems) : env[declared.name], problems);
  }
  return values as EnvValues<V>;
}

/** `<NAME>` or the content of the file `<NAME>_FILE` names; both at once is a mistake. */
function secretText(name: string, env: Env, problems: string[]): string | undefined {
  const file = env[`${name}_FILE`]?.trim();
  if (!file) return env[name];
  if (env[name]?.trim()) {
    problems.push(`${name} and ${name}_FILE are both set: set one`);
    return env[name];
  }
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    problems.push(`${name}_FILE: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    return undefined;
  }
}

function readVariable(declared: EnvVariable<unknown>, given: string | undefined, problems: string[]): unknown {
  // Surrounding whitespace is never meaningful here; a stray space from an env file would
  // otherwise turn a good port into "not a port".
  const trimmed = given?.trim();
  const unset = trimmed === undefined || (trimmed === '' && !declared.keepEmpty);
  if (unset && declared.default === undefined) return undefined;
  const text = unset ? declared.default! : trimmed!;
  const value = parse(declared.format, text);
  if (value !== undefined) return value;
  problems.push(`${declared.name} must ${declared.format.must}${declared.secret ? '' : `, got "${text}"`}`);
  return declared.default === undefined ? undefined : parse(declared.format, declared.default);
}

function parse(format: EnvFormat<unknown>, text: string): unknown {
  const value = format.read(text);
  return value !== undefined && Value.Check(format.schema, value) ? value : undefined;
}

/** Both or neither: a certificate without its key (or a key id without its secret) is a mistake. */
export function checkSetTogether(problems: string[], first: EnvVariable<unknown>, firstValue: unknown, second: EnvVariable<unknown>, secondValue: unknown) {
  if ((firstValue === undefined) !== (secondValue === undefined)) problems.push(`${first.name} and ${second.name} must be set together`);
}
