import { describe, expect, it } from 'vitest';
import { parseCookies, WebSessions } from './sessions.ts';
import { nodesPath } from './ui-routes.ts';

describe('parseCookies', () => {
  it('reads name=value pairs, the first of a repeated name winning', () => {
    const c = parseCookies('a=1; rlnc_session=abc ; a=2;broken; =x');
    expect(c.get('a')).toBe('1');
    expect(c.get('rlnc_session')).toBe('abc');
    expect(c.has('broken')).toBe(false);
    expect(c.size).toBe(2);
  });
  it('is empty without a header', () => {
    expect(parseCookies(undefined).size).toBe(0);
  });
});

describe('nodesPath', () => {
  it('is the path of CONNECT_PAGE_URL without a trailing slash', () => {
    expect(nodesPath('http://127.0.0.1:8080/nodes')).toBe('/nodes');
    expect(nodesPath('https://cloud.example.com/app/nodes/')).toBe('/app/nodes');
    expect(nodesPath('https://nodes.example.com')).toBe('');
  });
});

describe('the session cookie', () => {
  const cookieOf = (secure: boolean) => {
    let header = '';
    const reply = { header: (_name: string, value: string) => ((header = value), reply) };
    const sessions = new WebSessions({ db: undefined as never, secure });
    sessions.setCookie(reply as never, 'S'.repeat(43));
    return header;
  };
  it('is HttpOnly and SameSite=Lax, and Secure with the __Host- prefix under https', () => {
    expect(cookieOf(false)).toBe(`rlnc_session=${'S'.repeat(43)}; Path=/; HttpOnly; SameSite=Lax; Max-Age=604800`);
    expect(cookieOf(true)).toBe(`__Host-rlnc_session=${'S'.repeat(43)}; Path=/; HttpOnly; SameSite=Lax; Max-Age=604800; Secure`);
  });
});
