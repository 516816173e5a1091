// The OpenAPI document, linted with Redocly's recommended rules (@redocly/openapi-core, the library
// behind `redocly lint`) plus two that keep the docs page's sections described. Warnings fail too:
// the document is clean, and a new route that is not (no operationId, an undeclared tag) should be
// fixed when it is written. Rules turned off are listed below with the reason.
import { createConfig, lintFromString, type NormalizedProblem, type RawUniversalConfig } from '@redocly/openapi-core';
import { describe, expect, it } from 'vitest';
import { renderOpenApiDocument } from '../../src/composition/openapi-document.ts';

const LINT_RULES: RawUniversalConfig = {
  extends: ['recommended'],
  rules: {
    // Every tag an operation names is declared with a description (src/api/api-description.ts):
    // the docs page shows the description as the heading of the tag's section.
    'operation-tag-defined': 'error',
    'tag-description': 'error',
  },
};

function describeProblems(problems: NormalizedProblem[]): string {
  return problems
    .map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer ?? '?'}: ${p.message}`)
    .join('\n');
}

describe('the OpenAPI document', () => {
  it("passes Redocly's recommended rules without an error or a warning", async () => {
    const document = await renderOpenApiDocument();
    const config = await createConfig(LINT_RULES);
    const problems = await lintFromString({ source: JSON.stringify(document, null, 2), absoluteRef: 'openapi.json', config });
    expect(problems, describeProblems(problems)).toEqual([]);
  });

  it('fails the lint when an operation lacks an operationId or names an undeclared tag (the check can say no)', async () => {
    const document = await renderOpenApiDocument();
    const listNodes = document.paths['/api/nodes']!.get as Record<string, unknown>;
    delete listNodes.operationId;
    listNodes.tags = ['undeclared'];
    const config = await createConfig(LINT_RULES);
    const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: 'openapi.json', config });
    expect(problems.map((p) => p.ruleId).sort()).toEqual(['operation-operationId', 'operation-tag-defined']);
  });
});
