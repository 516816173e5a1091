// Fastify compiles a response serializer for every status of every route at start-up, and most of
// them are the same few schemas (the error body on each route's 400/401/404/409). Here each
// distinct schema is compiled once, and only when it is first needed: building ~150 serializers
// was the largest part of building the API, and /healthz waited for it. What a start leaves
// uncompiled is compiled afterwards, one schema per turn of the event loop (compileRest), so the
// first answers rarely pay for it and a schema that cannot compile shows up right after start
// (test/api/serializers.test.ts compiles them all).
import { createRequire } from 'node:module';
import type { SerializerFactory, Serializer, SerializerSelector } from '@fastify/fast-json-stringify-compiler';

// Loaded with the first compile, not with this module: fast-json-stringify brings Ajv and ~30 modules.
const loadSerializerSelector = () =>
  (createRequire(import.meta.url)('@fastify/fast-json-stringify-compiler') as { SerializerSelector: typeof SerializerSelector }).SerializerSelector;

type CompileSerializer = ReturnType<ReturnType<typeof SerializerSelector>>;

export interface LazySerializers {
  factory: SerializerFactory;
  /** Compiles every serializer not compiled yet, one per event-loop turn; resolves when done. */
  compileRest(): Promise<void>;
}

export function lazySerializers(): LazySerializers {
  let buildDefault: ReturnType<typeof SerializerSelector> | undefined;
  const pending = new Set<() => void>();
  const factory: SerializerFactory = (externalSchemas, options) => {
    let compileWithSchemas: CompileSerializer | undefined;
    const compile: CompileSerializer = (route) => {
      buildDefault ??= loadSerializerSelector()();
      return (compileWithSchemas ??= buildDefault(externalSchemas, options))(route);
    };
    const byKey = new Map<string, Serializer>();
    return (route) => {
      const key = JSON.stringify(route.schema);
      const known = byKey.get(key);
      if (known) return known;
      let compiled: Serializer | undefined;
      // Leaves `pending` only once compiled: a schema that throws keeps throwing wherever it is asked for.
      const ensure = () => {
        compiled ??= compile(route);
        pending.delete(ensure);
        return compiled;
      };
      pending.add(ensure);
      const serialize: Serializer = (data) => ensure()(data);
      byKey.set(key, serialize);
      return serialize;
    };
  };
  return {
    factory,
    compileRest: () => compileOnePerTurn(pending),
  };
}

/**
 * Runs every compile still pending, one per turn of the event loop, so requests arriving meanwhile
 * wait for one compile at most. Each removes itself from `pending` once it succeeded.
 */
export async function compileOnePerTurn(pending: Set<() => unknown>) {
  for (const ensure of pending) {
    ensure();
    await new Promise((resolve) => setImmediate(resolve));
  }
}
