// Two-factor authentication in a real browser (Chromium through playwright-core, as
// test/web/account-browser.test.ts): the owner enrols an authenticator from the QR code's key with
// a code this test computes (otpauth), is asked a code at the next sign-in, and requires two
// factors of every member; a member signing in is made to enrol before anything else; a recovery
// code signs in once and is refused the second time.
// Skipped without /usr/bin/chromium unless REQUIRE_BROWSER_TESTS=1, which makes that a failure.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import * as OTPAuth from 'otpauth';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { addMember } from '../helpers/members.ts';
import { browserSteps } from '../helpers/browser-step.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const required = process.env.REQUIRE_BROWSER_TESTS === '1';
const SHOTS = join(process.cwd(), 'test-results', 'web');
const PASSWORD = 'two factor web password';

if (!hasChromium && !required) console.warn(`two-factor browser tests SKIPPED: ${CHROMIUM} is missing (apt-get install -y chromium)`);

describe.runIf(required && !hasChromium)('two factors in Chromium (required by REQUIRE_BROWSER_TESTS=1)', () => {
  it(`needs ${CHROMIUM}`, () => {
    throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  });
});

/** The code `offset` steps from now, away from a step's edge (each step is accepted once: tests spend -1, 0, +1). */
async function codeAt(secret: string, offset: number): Promise<string> {
  while (Date.now() % 30_000 > 27_000) await new Promise((r) => setTimeout(r, 250));
  return new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) }).generate({ timestamp: Date.now() + offset * 30_000 });
}

describe.skipIf(!hasChromium)(`two factors in Chromium on ${databaseLabel()}`, () => {
  let t: TestServer;
  let owner: TestUser;
  let member: TestUser;
  let browser: Browser;
  let ownerPage: Page;
  let memberPage: Page;
  let ownerSecret: string;
  let memberRecoveryCodes: string[];
  const consoleLines: string[] = [];
  const step = browserSteps(() => [ownerPage, memberPage], consoleLines, 90_000);
  const shot = (name: string, p: Page) => p.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  const signIn = async (p: Page, user: TestUser) => {
    await p.context().clearCookies();
    await p.goto(`${t.base}/sign-in`);
    await p.getByLabel('Email').fill(user.email);
    await p.getByLabel('Password').fill(PASSWORD);
    await p.getByLabel('Password').press('Enter');
  };
  const enrolOnPage = async (p: Page, offset: number) => {
    await p.locator('[data-testid=start-totp]').click();
    await p.locator('[data-testid=totp-qr]').waitFor();
    const secret = (await p.locator('[data-testid=totp-secret]').textContent())!;
    await p.getByLabel('The 6-digit code it shows').fill(await codeAt(secret, offset));
    await p.getByRole('button', { name: 'Confirm' }).click();
    await p.locator('[data-testid=recovery-codes]').waitFor();
    const codes = await p.locator('[data-testid=recovery-codes] li').allTextContents();
    expect(codes).toHaveLength(10);
    return { secret, codes };
  };

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    t = await startTestServer();
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
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  step('the owner enrols an authenticator from Account, with the QR code and a first code, and sees ten recovery codes', async () => {
    await signIn(ownerPage, owner);
    await ownerPage.getByRole('heading', { name: 'Nodes', level: 1 }).waitFor();
    await ownerPage.goto(`${t.base}/account`);
    await ownerPage.locator('[data-testid=two-factor-link]').click();
    await ownerPage.locator('[data-testid=two-factor]').waitFor();
    const { secret } = await enrolOnPage(ownerPage, -1);
    ownerSecret = secret;
    await shot('two-factor-recovery-codes', ownerPage);
  });

  step('the next sign-in asks the code; with it the owner is in, and requires two factors of every member', async () => {
    await signIn(ownerPage, owner);
    await ownerPage.locator('[data-testid=second-factor]').waitFor();
    await shot('two-factor-sign-in', ownerPage);
    await ownerPage.getByLabel('Code from your authenticator app').fill(await codeAt(ownerSecret, 0));
    await ownerPage.getByRole('button', { name: 'Verify' }).click();
    await ownerPage.getByRole('heading', { name: 'Nodes', level: 1 }).waitFor();
    await ownerPage.goto(`${t.base}/two-factor`);
    await ownerPage.locator('[data-testid=totp-on]').waitFor();
    await ownerPage.locator('[data-testid=require-two-factors]').check();
    await ownerPage.getByText('Every member now signs in with two factors').waitFor();
    const status = await ownerPage.evaluate(() => fetch('/api/me/2fa').then((r) => r.json()));
    expect(status.requiredByAccount).toBe(true);
  });

  step('a member without a factor is made to enrol at sign-in before reaching any page', async () => {
    await signIn(memberPage, member);
    await memberPage.locator('[data-testid=two-factor]').waitFor();
    expect(new URL(memberPage.url()).pathname).toBe('/two-factor');
    await memberPage.getByText('Your account requires two-factor authentication').waitFor();
    // Any other page sends them back here.
    await memberPage.goto(`${t.base}/tokens`);
    await memberPage.waitForURL(/\/two-factor\?next=/);
    await memberPage.locator('[data-testid=start-totp]').waitFor();
    const { codes } = await enrolOnPage(memberPage, 0);
    memberRecoveryCodes = codes;
    await memberPage.locator('[data-testid=two-factor-done]').click();
    await memberPage.getByRole('heading', { name: 'API tokens', level: 1 }).or(memberPage.locator('[data-testid=tokens]')).first().waitFor();
    expect(new URL(memberPage.url()).pathname).toBe('/tokens');
  });

  step('a recovery code signs the member in once; the second time it is refused', async () => {
    const recovery = memberRecoveryCodes[0]!;
    for (const attempt of [1, 2]) {
      await signIn(memberPage, member);
      await memberPage.locator('[data-testid=second-factor]').waitFor();
      await memberPage.locator('[data-testid=use-recovery-code]').click();
      await memberPage.getByLabel('Recovery code').fill(recovery);
      await memberPage.getByRole('button', { name: 'Verify' }).click();
      if (attempt === 1) await memberPage.getByRole('heading', { name: 'Nodes', level: 1 }).waitFor();
      else await memberPage.getByText('the code is wrong or was used already').waitFor();
    }
    await shot('two-factor-recovery-refused', memberPage);
  });
});
