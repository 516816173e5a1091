// Writes the typed client's generated files from the route schemas (src/composition/client-files.ts):
//   npm run client:generate     (node --import tsx scripts/openapi.ts)
// client/openapi.json, the OpenAPI document, and client/src/schema.ts, its TypeScript types. No
// server, database or network is needed; run it after changing a route and commit both files.
import { readFileSync, writeFileSync } from 'node:fs';
import { renderClientFiles } from '../src/composition/client-files.ts';

const root = new URL('../', import.meta.url);
for (const { path, text } of await renderClientFiles()) {
  const file = new URL(path, root);
  let before: string | undefined;
  try {
    before = readFileSync(file, 'utf8');
  } catch {}
  if (before === text) console.log(`${path}: up to date`);
  else {
    writeFileSync(file, text);
    console.log(`${path}: ${before === undefined ? 'written' : 'rewritten'}`);
  }
}
