// One step of a browser test that walks a story in order: on failure, its error says where each
// page was and what it showed, with the browser console's last lines, since a screenshot is not
// in the CI log.
import { it } from 'vitest';
import type { Page } from 'playwright-core';

/** `step(name, fn)`: an `it` whose failure names the pages (read when it fails) and the console. */
export function browserSteps(pages: () => Array<Page | undefined>, consoleLines: string[], timeoutMs: number) {
  return (name: string, fn: () => Promise<void>) =>
    it(
      name,
      async () => {
        try {
          await fn();
        } catch (err) {
          const shown = await Promise.all(
            pages()
              .filter((p): p is Page => p !== undefined)
              .map(async (p) => `${p.url()}: ${(await p.locator('main').innerText().catch(() => '?')).slice(0, 400)}`),
          );
          throw new Error(`${(err as Error).message}\npages: ${shown.join(' | ')}\nconsole: ${consoleLines.slice(-20).join('\n')}`);
        }
      },
      timeoutMs,
    );
}
