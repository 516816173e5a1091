// The README is a front door and the manual lives in guides under docs/: every link between them
// must land on a file of the repository (and, with a #fragment, on a heading of that file), since a
// guide moved or a heading renamed would otherwise leave the reader at a dead end. Links leave the
// repository nowhere: the documentation has to be readable from a checkout.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT, projectPath } from '../platform/paths.ts';

const README_MAX_LINES = 300;
const documents = ['README.md', ...readdirSync(projectPath('docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

/** The text outside fenced code blocks, and outside inline code unless kept (a heading's words). */
function prose(markdown: string, keepInlineCode = false): string {
  let fenced = false;
  const lines = markdown.split('\n').map((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line.replace(/`([^`]*)`/g, keepInlineCode ? '$1' : '');
  });
  return lines.join('\n');
}

/** Every link target of a document: `[text](target)` and `![alt](target)`, across line breaks. */
export function linkTargets(markdown: string): string[] {
  return [...prose(markdown).matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!);
}

/** The anchors GitHub gives a document's headings: lower case, punctuation dropped, spaces as
 * hyphens, and -1, -2, ... after a repeated one. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of prose(markdown, true).split('\n')) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = heading[1]!.toLowerCase().replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '').replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

describe('the documentation links', () => {
  it.each(documents)('in %s all land on a file of the repository, and a heading where they name one', (document) => {
    const problems: string[] = [];
    for (const target of linkTargets(readFileSync(projectPath(document), 'utf8'))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) {
        problems.push(`${target}: points outside the repository`);
        continue;
      }
      const [path = '', fragment] = target.split('#');
      const file = path === '' ? projectPath(document) : join(dirname(projectPath(document)), decodeURIComponent(path));
      if (relative(PROJECT_ROOT, file).startsWith('..')) problems.push(`${target}: points outside the repository`);
      else if (!existsSync(file)) problems.push(`${target}: no such file`);
      else if (fragment !== undefined && !headingAnchors(readFileSync(file, 'utf8')).has(fragment)) {
        problems.push(`${target}: no heading with that anchor in ${relative(PROJECT_ROOT, file)}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it(`keep the README a front door, under ${README_MAX_LINES} lines, linking every guide`, () => {
    const readme = readFileSync(projectPath('README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThan(README_MAX_LINES);
    // The two commands, which .ci/run runs as the README's test command.
    const quickstart = readme.slice(readme.indexOf('## Quickstart'), readme.indexOf('\n## ', readme.indexOf('## Quickstart') + 1));
    expect(quickstart).toMatch(/^npm ci && npm start\b/m);
    expect(quickstart).toMatch(/^npm test\b/m);
    const linked = new Set(linkTargets(readme).map((target) => target.split('#')[0]));
    expect(documents.filter((doc) => doc !== 'README.md' && !linked.has(doc))).toEqual([]);
  });

  it('are found, anchors included, the way GitHub makes them', () => {
    const sample = '# Nodes on Kubernetes (`RUNTIME=kubernetes`)\n## The original service\'s signature\n## Tests\n## Tests\n```sh\n# a comment\n```\n[a](b.md#c) `[not](a link)`';
    expect([...headingAnchors(sample)]).toEqual(['nodes-on-kubernetes-runtimekubernetes', 'the-original-services-signature', 'tests', 'tests-1']);
    expect(linkTargets(sample)).toEqual(['b.md#c']);
  });
});
