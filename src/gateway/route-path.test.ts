import { describe, expect, it } from 'vitest';
import { canonicalSegment, parseGatewayPath } from './route-path.ts';

const u = 'a'.repeat(32);
const n = 'b'.repeat(32);

describe('parseGatewayPath', () => {
  it('reads user, node, route and query', () => {
    expect(parseGatewayPath(`/${u}/${n}/nodeinfo?x=1&y=%20`, '')).toEqual({ ok: true, userId: u, nodeId: n, route: 'nodeinfo', search: '?x=1&y=%20' });
    expect(parseGatewayPath(`/nodes/${u}/${n}/listchannels`, '/nodes')).toMatchObject({ ok: true, route: 'listchannels' });
    // The bearer gateway's paths also take the original's '/nodes' prefix (its invoke_url).
    expect(parseGatewayPath(`/nodes/${u}/${n}/nodeinfo?x=1`, '')).toEqual({ ok: true, userId: u, nodeId: n, route: 'nodeinfo', search: '?x=1' });
    expect(parseGatewayPath(`/nodes/${u}/${n}//../x`, '')).toMatchObject({ ok: false, code: 'invalid_path' });
    expect(parseGatewayPath(`/${u}/${n}/a/b`, '')).toMatchObject({ ok: true, route: 'a/b' });
  });

  it('treats the node itself, with or without the trailing slash, as the empty route', () => {
    expect(parseGatewayPath(`/${u}/${n}`, '')).toMatchObject({ ok: true, route: '' });
    expect(parseGatewayPath(`/${u}/${n}/`, '')).toMatchObject({ ok: true, route: '' });
    expect(parseGatewayPath(`/${u}/${n}/nodeinfo/`, '')).toMatchObject({ ok: true, route: 'nodeinfo/' });
  });

  it('collapses repeated slashes in the route, as clients write paths (the invoke URL with "/" appended to)', () => {
    expect(parseGatewayPath(`/${u}/${n}//nodeinfo`, '')).toMatchObject({ ok: true, route: 'nodeinfo' });
    expect(parseGatewayPath(`/nodes/${u}/${n}///nodeinfo?x=1`, '/nodes')).toMatchObject({ ok: true, route: 'nodeinfo', search: '?x=1' });
    expect(parseGatewayPath(`/${u}/${n}/a//b`, '')).toMatchObject({ ok: true, route: 'a/b' });
    expect(parseGatewayPath(`/${u}/${n}/nodeinfo//`, '')).toMatchObject({ ok: true, route: 'nodeinfo/' });
    expect(parseGatewayPath(`/${u}/${n}//`, '')).toMatchObject({ ok: true, route: '' });
    // Collapsing never lets a refused segment through.
    for (const t of [`/${u}/${n}//../x`, `/${u}/${n}//%2e%2e//x`, `/${u}/${n}//a%2fb`]) expect(parseGatewayPath(t, ''), t).toMatchObject({ ok: false, code: 'invalid_path' });
  });

  it('answers not_found for anything that is not a node path', () => {
    for (const t of ['/', '/x', `/${u}`, `/${u}/xyz/nodeinfo`, `/${u.toUpperCase()}/${n}/nodeinfo`, `/nodes/${u}`, `/nodes/nodes/${u}/${n}/nodeinfo`]) {
      expect(parseGatewayPath(t, '')).toMatchObject({ ok: false, code: 'not_found' });
    }
    expect(parseGatewayPath(`/${u}/${n}/nodeinfo`, '/nodes')).toMatchObject({ ok: false, code: 'not_found' });
  });

  it('refuses traversal in every spelling', () => {
    const attempts = [
      `/${u}/${n}/../${n}/nodeinfo`,
      `/${u}/${n}/..`,
      `/${u}/${n}/./nodeinfo`,
      `/${u}/${n}/%2e%2e/x`,
      `/${u}/${n}/%2E%2E/x`,
      `/${u}/${n}/.%2e/x`,
      `/${u}/${n}/%2e/x`,
      `/${u}/${n}/..%2f..%2fx`,
      `/${u}/${n}/%2F`,
      `/${u}/${n}/a%5c..%5cb`,
      `/${u}/${n}/a\\..\\b`,
      `/${u}/${n}/a%00b`,
      `/${u}/${n}/a%0d%0aX-Injected:%201`,
      `/${u}/${n}/%zz`,
      `/${u}/${n}/a#frag`,
      `http://127.0.0.1:1/${u}/${n}/nodeinfo`,
      '*',
    ];
    for (const t of attempts) expect(parseGatewayPath(t, ''), t).toMatchObject({ ok: false, code: 'invalid_path' });
  });

  it('forwards one canonical spelling, so "/unlock" cannot hide as "/%75nlock"', () => {
    expect(parseGatewayPath(`/${u}/${n}/%75nlock`, '')).toMatchObject({ ok: true, route: 'unlock' });
    expect(parseGatewayPath(`/${u}/${n}/a%2fb`, '')).toMatchObject({ ok: false });
    expect(canonicalSegment('a%3ab')).toBe('a%3Ab');
    expect(canonicalSegment('%7E%41')).toBe('~A');
  });
});
