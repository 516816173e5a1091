// Every route a Fastify instance serves, as "METHOD /path", read from printRoutes(): Fastify keeps
// no public list, and the server registers its routes before a test could add an onRoute hook.
import type { FastifyInstance } from 'fastify';

// One line of the printed radix tree: "│   ├── segment (GET, HEAD)"; the methods only on nodes
// that end a route. The "── " sits four columns deeper per level.
const LINE = /^(.*?)[└├]── (.*?)(?: \(([A-Z, ]+)\))?$/;

/** Routes as "GET /api/nodes/:id"; HEAD is left out (Fastify adds it to every GET by itself). */
export function registeredRoutes(app: FastifyInstance): string[] {
  const prefixes: string[] = [];
  const routes: string[] = [];
  for (const line of app.printRoutes().split('\n')) {
    const match = LINE.exec(line);
    if (!match) continue;
    const [, indent, segment, methods] = match;
    const depth = indent!.length / 4;
    const path = (depth > 0 ? prefixes[depth - 1]! : '') + segment!;
    prefixes[depth] = path;
    for (const method of methods?.split(', ') ?? []) if (method !== 'HEAD') routes.push(`${method} ${path}`);
  }
  return routes.sort();
}
