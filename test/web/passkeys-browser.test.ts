// Passkeys in a real browser (Chromium through playwright-core, as two-factor-browser.test.ts),
// with Chromium's virtual authenticator (DevTools protocol, WebAuthn domain: CTAP2, resident keys,
// user verification) standing in for a phone or a security key, on http://localhost:<port> (a
// secure context, and a host name: browsers refuse passkeys on an IP address). A person enrols a
// passkey from the two-factor page, signs in with it alone, is asked it after their password, and
// removes it with itself; a member whose account requires two factors enrols a passkey instead of
// an authenticator app; an owner without a password deletes the account confirming with a passkey. Skipped without /usr/bin/chromium unless REQUIRE_BROWSER_TESTS=1.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, CDPSession, Page } from 'playwright-core';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { freePort } from '../helpers/ports.ts';
import { addMember } from '../helpers/members.ts';
import { browserSteps } from '../helpers/browser-step.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const required = process.env.REQUIRE_BROWSER_TESTS === '1';
const SHOTS = join(process.cwd(), 'test-results', 'web');
const PASSWORD = 'passkey web password';

if (!hasChromium && !required) console.warn(`passkey browser tests SKIPPED: ${CHROMIUM} is missing (apt-get install -y chromium)`);

describe.runIf(required && !hasChromium)('passkeys in Chromium (required by REQUIRE_BROWSER_TESTS=1)', () => {
  it(`needs ${CHROMIUM}`, () => {
    throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  });
});

/** A virtual authenticator on the page, as a platform authenticator with a fingerprint reader would be. */
async function addVirtualAuthenticator(page: Page): Promise<{ cdp: CDPSession; authenticatorId: string }> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  return { cdp, authenticatorId };
}

describe.skipIf(!hasChromium)(`passkeys in Chromium on ${databaseLabel()}`, () => {
  let t: TestServer;
  let owner: TestUser;
  let member: TestUser;
  let browser: Browser;
  let ownerPage: Page;
  let memberPage: Page;
  let ownerAuthenticator: { cdp: CDPSession; authenticatorId: string };
  const consoleLines: string[] = [];
  const step = browserSteps(() => [ownerPage, memberPage], consoleLines, 90_000);
  const shot = (name: string, p: Page) => p.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  const passwordSignIn = async (p: Page, user: TestUser) => {
    await p.context().clearCookies();
    await p.goto(`${t.base}/sign-in`);
    await p.getByLabel('Email').fill(user.email);
    await p.getByLabel('Password').fill(PASSWORD);
    await p.getByLabel('Password').press('Enter');
  };
  const nodesPage = (p: Page) => p.getByRole('heading', { name: 'Nodes', level: 1 }).waitFor();

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    const port = await freePort();
    t = await startTestServer({ API_PORT: String(port), PUBLIC_URL: `http://localhost:${port}` });
    owner = await t.createUser('scale');
    await t.server.services.accounts.setPassword(owner.email, PASSWORD);
    member = await addMember(t, owner.id, 'developer');
    await t.server.services.accounts.setPassword(member.email, PASSWORD);
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    ownerPage = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    memberPage = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    for (const p of [ownerPage, memberPage]) {
      p.setDefaultTimeout(20_000);
      p.on('console', (m) => consoleLines.push(`${p === ownerPage ? 'owner' : 'member'} ${m.type()}: ${m.text()}`));
      p.on('pageerror', (e) => consoleLines.push(`${p === ownerPage ? 'owner' : 'member'} error: ${e.message}`));
    }
    ownerAuthenticator = await addVirtualAuthenticator(ownerPage);
    await addVirtualAuthenticator(memberPage);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  step('the owner enrols a passkey on the two-factor page; the authenticator keeps a discoverable credential', async () => {
    await passwordSignIn(ownerPage, owner);
    await nodesPage(ownerPage);
    await ownerPage.goto(`${t.base}/two-factor`);
    await ownerPage.locator('[data-testid=no-passkeys]').waitFor();
    await ownerPage.getByLabel('Name of the new passkey').fill('Laptop');
    await ownerPage.locator('[data-testid=add-passkey]').click();
    await ownerPage.locator('[data-testid=passkey-added]').waitFor();
    await ownerPage.locator('[data-testid=passkey-list]').getByText('Laptop').waitFor();
    await shot('passkeys-enrolled', ownerPage);
    const { credentials } = await ownerAuthenticator.cdp.send('WebAuthn.getCredentials', { authenticatorId: ownerAuthenticator.authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]!.isResidentCredential).toBe(true);
    expect(credentials[0]!.rpId).toBe('localhost');
  });

  step('signed out, the owner signs in with the passkey alone: no email, no password', async () => {
    await ownerPage.context().clearCookies();
    await ownerPage.goto(`${t.base}/sign-in`);
    await ownerPage.locator('[data-testid=passkey-sign-in]').click();
    await nodesPage(ownerPage);
    const session = await ownerPage.evaluate(() => fetch('/api/session').then((r) => r.json()));
    expect(session.user.email).toBe(owner.email);
  });

  step('after the password, the passkey is the second step; then the owner requires two factors of every member', async () => {
    await passwordSignIn(ownerPage, owner);
    await ownerPage.locator('[data-testid=second-factor]').waitFor();
    await shot('passkeys-second-factor', ownerPage);
    await ownerPage.locator('[data-testid=second-factor-passkey]').click();
    await nodesPage(ownerPage);
    await ownerPage.goto(`${t.base}/two-factor`);
    await ownerPage.locator('[data-testid=require-two-factors]').check();
    await ownerPage.getByText('Every member now signs in with two factors').waitFor();
  });

  step('a member made to enrol adds a passkey instead of an authenticator app and goes on signed in', async () => {
    await passwordSignIn(memberPage, member);
    await memberPage.locator('[data-testid=two-factor]').waitFor();
    await memberPage.getByText('Your account requires two-factor authentication').waitFor();
    await memberPage.getByLabel('Name of the new passkey').fill('Phone');
    await memberPage.locator('[data-testid=add-passkey]').click();
    await nodesPage(memberPage);
    // And signs in with it alone the next time: a verified passkey satisfies the owner's rule.
    await memberPage.context().clearCookies();
    await memberPage.goto(`${t.base}/sign-in`);
    await memberPage.locator('[data-testid=passkey-sign-in]').click();
    await nodesPage(memberPage);
  });

  step('the owner lifts the rule and removes the passkey, confirming with it', async () => {
    await ownerPage.goto(`${t.base}/two-factor`);
    await ownerPage.locator('[data-testid=require-two-factors]').uncheck();
    await ownerPage.getByText('The rule is lifted.').waitFor();
    await ownerPage.locator('[data-testid=remove-passkey]').click();
    await ownerPage.getByText('Laptop was removed.').waitFor();
    await ownerPage.locator('[data-testid=no-passkeys]').waitFor();
    const status = await ownerPage.evaluate(() => fetch('/api/me/2fa').then((r) => r.json()));
    expect(status.passkeys).toBe(0);
  });

  step('an owner without a password deletes the account, confirming with a passkey', async () => {
    await ownerPage.getByLabel('Name of the new passkey').fill('Laptop again');
    await ownerPage.locator('[data-testid=add-passkey]').click();
    await ownerPage.locator('[data-testid=passkey-added]').waitFor();
    // Someone who signs in with an OpenID provider or a passkey has no password.
    await t.server.db.query('UPDATE users SET password_hash = NULL WHERE id = $1', [owner.id]);
    await ownerPage.goto(`${t.base}/account`);
    await ownerPage.locator('[data-testid=delete-account]').click();
    const dialog = ownerPage.locator('dialog');
    await dialog.getByLabel(/leave it empty to use a passkey/).waitFor();
    await shot('passkeys-delete-account', ownerPage);
    await dialog.getByRole('button', { name: 'Delete the account' }).click();
    await ownerPage.waitForURL(/\/sign-in/);
    const left = await t.server.db.query<{ n: number }>('SELECT count(*)::int AS n FROM users WHERE id = $1', [owner.id]);
    expect(left[0]!.n).toBe(0);
  });
});
