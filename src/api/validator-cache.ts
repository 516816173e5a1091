// Fastify builds an Ajv instance and compiles a request validator for every body, query string and
// path of every route before it listens: after the response serializers (serializer-cache.ts) that
// was the largest part of getting the API to answer /healthz. Here the Ajv instance is built, and
// each distinct schema compiled, when a request first needs it; what a start leaves uncompiled is
// compiled right after it, one schema per turn of the event loop (compileRest), so a schema that
// cannot compile still shows up at once (test/api/validators.test.ts compiles them all).
//
// What Fastify asks of a validator besides calling it: `errors` after a `false`, and `schemaEnv`,
// whose presence makes it pass the request as the root's parent (Ajv's own validators have one).
import { createRequire } from 'node:module';
import type AjvCompiler from '@fastify/ajv-compiler';
import type { ValidatorFactory } from '@fastify/ajv-compiler';
import type { FastifySchemaCompiler } from 'fastify';
import { compileOnePerTurn } from './serializer-cache.ts';

// Loaded with the first compile, not with this module: Ajv is ~20 modules a start need not load.
const loadAjvCompiler = () => createRequire(import.meta.url)('@fastify/ajv-compiler') as typeof AjvCompiler;

type RouteSchema = Parameters<FastifySchemaCompiler<unknown>>[0];
type AjvValidator = ReturnType<FastifySchemaCompiler<unknown>> & { schemaEnv?: unknown };
type BuildCompiler = (externalSchemas: unknown, ajvOptions: unknown) => (route: RouteSchema) => AjvValidator;

export interface CompiledValidator {
  route: RouteSchema;
  /** The validator Fastify holds for the route, compiled at the first call. */
  validate: AjvValidator;
}

export interface LazyValidators {
  factory: ValidatorFactory;
  /** Compiles every validator not compiled yet, one per event-loop turn; resolves when done. */
  compileRest(): Promise<void>;
  /** Every distinct validator handed to Fastify (tests). */
  all(): CompiledValidator[];
}

export function lazyValidators(): LazyValidators {
  let buildDefault: BuildCompiler | undefined;
  const pending = new Set<() => AjvValidator>();
  const handed: CompiledValidator[] = [];
  const factory = ((externalSchemas: unknown, ajvOptions: unknown) => {
    let compileWithAjv: ReturnType<BuildCompiler> | undefined;
    const byKey = new Map<string, AjvValidator>();
    return (route: RouteSchema) => {
      // Fastify lower-cases a headers schema's names only for its own compiler; none of ours has one.
      if (route.httpPart === 'headers') throw new Error(`${route.method} ${route.url}: headers schemas are not supported by the lazy validator compiler`);
      const key = `${route.httpPart}\n${JSON.stringify(route.schema)}`;
      const known = byKey.get(key);
      if (known) return known;
      let compiled: AjvValidator | undefined;
      // Leaves `pending` only once compiled: a schema that throws keeps throwing wherever it is asked for.
      const ensure = () => {
        buildDefault ??= loadAjvCompiler()() as unknown as BuildCompiler;
        compiled ??= (compileWithAjv ??= buildDefault(externalSchemas, ajvOptions))(route);
        pending.delete(ensure);
        return compiled;
      };
      pending.add(ensure);
      const validate = function (this: unknown, data: unknown, parent?: unknown) {
        return (ensure() as (this: unknown, data: unknown, parent?: unknown) => unknown).call(this, data, parent);
      } as AjvValidator;
      Object.defineProperties(validate, {
        errors: { get: () => compiled?.errors, set: (errors) => void (ensure().errors = errors) },
        schemaEnv: { get: () => ensure().schemaEnv },
      });
      byKey.set(key, validate);
      handed.push({ route, validate });
      return validate;
    };
  }) as unknown as ValidatorFactory;
  return {
    factory,
    compileRest: () => compileOnePerTurn(pending),
    all: () => [...handed],
  };
}
