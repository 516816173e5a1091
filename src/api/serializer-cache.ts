// Fastify compiles a response serializer for every status of every route at start-up, and most of
// them are the same few schemas (the error body on each route's 400/401/404/409). Compiling each
// distinct schema once takes a large share off the time to /healthz, and the serializers are the
// same functions fast-json-stringify would build anyway (they depend on nothing but the schema).
import { SerializerSelector, type SerializerFactory, type Serializer } from '@fastify/fast-json-stringify-compiler';

export function cachingSerializerFactory(): SerializerFactory {
  const buildDefault = SerializerSelector();
  return (externalSchemas, options) => {
    const compile = buildDefault(externalSchemas, options);
    const compiled = new Map<string, Serializer>();
    return (route) => {
      const key = JSON.stringify(route.schema);
      let serialize = compiled.get(key);
      if (!serialize) {
        serialize = compile(route);
        compiled.set(key, serialize);
      }
      return serialize;
    };
  };
}
