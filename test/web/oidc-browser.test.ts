// OpenID Connect sign-in in a real browser (Chromium through playwright-core, as
// test/web/browser.test.ts) against a real provider (oidc-provider) started on loopback: a new
// person signs up with the sign-in page's button, a person whose verified email the trusted
// provider asserts is linked, an untrusted provider's email claim is refused for linking, and a
// signed-in person links a provider from the Account page's Security section.
// Skipped without /usr/bin/chromium unless REQUIRE_BROWSER_TESTS=1, which makes that a failure.
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.ts';
import { createOidcProvider, type TestOidcProvider } from '../helpers/oidc-provider.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const required = process.env.REQUIRE_BROWSER_TESTS === '1';
const PASSWORD = 'correct horse battery';

if (!hasChromium && !required) console.warn(`OpenID browser tests SKIPPED: ${CHROMIUM} is missing (apt-get install -y chromium)`);

describe.runIf(required && !hasChromium)('OpenID sign-in in Chromium (required by REQUIRE_BROWSER_TESTS=1)', () => {
  it(`needs ${CHROMIUM}`, () => {
    throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  });
});

describe.skipIf(!hasChromium)(`OpenID sign-in in Chromium on ${databaseLabel()}`, () => {
  let smtp: TestSmtpServer;
  let idp: TestOidcProvider;
  let t: TestServer;
  let browser: Browser;
  const url = (path: string) => `${t.base}${path}`;
  const freshPage = async () => {
    const page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(20_000);
    return page;
  };
  const signedInAs = (page: Page) => page.evaluate(async () => (await fetch('/api/session')).json());

  beforeAll(async () => {
    smtp = await startSmtpServer();
    idp = await createOidcProvider();
    t = await startTestServer({
      SMTP_URL: smtp.url,
      SIGNUP_MODE: 'open',
      OIDC_PROVIDERS: JSON.stringify([
        { id: 'corp', issuer: idp.issuer, clientId: 'rln-corp', clientSecret: 'corp-secret', label: 'Sign in with Corp' },
        { id: 'trusted', issuer: idp.issuer, clientId: 'rln-trusted', clientSecret: 'trusted-secret', label: 'Sign in with Trusted', verifiedEmails: true },
      ]),
    });
    const redirectUri = `${t.base}/auth/oidc/callback`;
    await idp.start([
      { clientId: 'rln-corp', clientSecret: 'corp-secret', redirectUri },
      { clientId: 'rln-trusted', clientSecret: 'trusted-secret', redirectUri },
    ]);
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
    await idp?.stop();
    await smtp?.stop();
  });

  it('signs a new person up with the sign-in page button', async () => {
    const email = `new-${Date.now()}@example.com`;
    idp.as('browser-new', { email, email_verified: true });
    const page = await freshPage();
    await page.goto(url('/sign-in'));
    await page.getByRole('link', { name: 'Sign in with Corp' }).click();
    await page.waitForURL((u) => u.toString().startsWith(t.base) && !u.pathname.startsWith('/sign-in') && !u.pathname.startsWith('/auth'));
    expect((await signedInAs(page)).user.email).toBe(email);
  }, 60_000);

  it('links a person whose verified email the trusted provider asserts, and refuses the untrusted one', async () => {
    const alice = await t.createUser('starter', `alice-${Date.now()}@example.com`);
    idp.as('browser-alice', { email: alice.email, email_verified: true });
    const refused = await freshPage();
    await refused.goto(url('/sign-in'));
    await refused.getByRole('link', { name: 'Sign in with Corp' }).click();
    await refused.waitForURL(/\/auth\/oidc\/callback/);
    await expect(refused.locator('#message').innerText()).resolves.toContain('is not trusted to prove it');
    // No session: the page's own CSP lets it fetch nothing, so look at the browser's cookies.
    expect((await refused.context().cookies()).map((c) => c.name)).not.toContain('rlnc_session');

    const linked = await freshPage();
    await linked.goto(url('/sign-in'));
    await linked.getByRole('link', { name: 'Sign in with Trusted' }).click();
    await linked.waitForURL((u) => u.toString().startsWith(t.base) && !u.pathname.startsWith('/sign-in') && !u.pathname.startsWith('/auth'));
    expect((await signedInAs(linked)).user.id).toBe(alice.id);
  }, 60_000);

  it('a person signed up through the provider, with no password and no factor, deletes their account just after signing in', async () => {
    const email = `deleter-${Date.now()}@example.com`;
    idp.as('browser-deleter', { email, email_verified: true });
    const page = await freshPage();
    await page.goto(url('/sign-in'));
    await page.getByRole('link', { name: 'Sign in with Corp' }).click();
    await page.waitForURL((u) => u.toString().startsWith(t.base) && !u.pathname.startsWith('/sign-in') && !u.pathname.startsWith('/auth'));
    await page.goto(url('/account'));
    await page.locator('[data-testid=delete-account]').click();
    const dialog = page.locator('dialog');
    await dialog.getByText('within 10 minutes of signing in with your provider').waitFor();
    await dialog.getByRole('button', { name: 'Delete the account' }).click();
    await page.waitForURL(/\/sign-in/);
    expect((await t.server.db.query('SELECT id FROM users WHERE email = $1', [email])).length).toBe(0);
  }, 60_000);

  it('links a provider from the Account page, then signs in with it', async () => {
    const bob = await t.createUser('starter', `bob-${Date.now()}@example.com`);
    await t.server.services.accounts.setPassword(bob.email, PASSWORD);
    const page = await freshPage();
    await page.goto(url('/sign-in'));
    await page.locator('#email').fill(bob.email);
    await page.locator('#password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((u) => !u.pathname.startsWith('/sign-in'));
    await page.goto(url('/account'));
    idp.as('browser-bob', { email: 'someone-else@example.com' });
    await page.locator('[data-testid=sign-in-providers] button[data-provider=corp]').click();
    // Through the provider and back to the Account page (already its URL before the click: wait for what it shows).
    await page.locator('[data-testid=sign-in-providers]').getByText('linked (someone-else@example.com)').waitFor();
    expect(page.url()).toBe(url('/account'));

    const again = await freshPage();
    await again.goto(url('/sign-in'));
    await again.getByRole('link', { name: 'Sign in with Corp' }).click();
    await again.waitForURL((u) => u.toString().startsWith(t.base) && !u.pathname.startsWith('/sign-in') && !u.pathname.startsWith('/auth'));
    expect((await signedInAs(again)).user.id).toBe(bob.id);
  }, 60_000);
});
