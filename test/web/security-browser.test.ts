// The Account page's Security section in a real browser (Chromium through playwright-core, as
// test/web/account-browser.test.ts): one person signed in from two browsers sees both sessions,
// this browser's marked; ending the other from the page signs that browser out. Then the owner
// hands the account to an admin, who accepts from their page and deletes the account. Between the
// two, a kind of notification email is turned off and on again from the section's checkboxes.
// Skipped without /usr/bin/chromium unless REQUIRE_BROWSER_TESTS=1, which makes that a failure.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { addMember } from '../helpers/members.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const required = process.env.REQUIRE_BROWSER_TESTS === '1';
const SHOTS = join(process.cwd(), 'test-results', 'web');
const PASSWORD = 'security web password';
const OTHER_AGENT = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0';

if (!hasChromium && !required) console.warn(`security section browser tests SKIPPED: ${CHROMIUM} is missing (apt-get install -y chromium)`);

describe.runIf(required && !hasChromium)('security section in Chromium (required by REQUIRE_BROWSER_TESTS=1)', () => {
  it(`needs ${CHROMIUM}`, () => {
    throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  });
});

describe.skipIf(!hasChromium)(`security section in Chromium on ${databaseLabel()}`, () => {
  let t: TestServer;
  let person: TestUser;
  let browser: Browser;
  let laptop: Page;
  let phone: Page;
  const consoleLines: string[] = [];

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    t = await startTestServer();
    person = await t.createUser();
    await t.server.services.accounts.setPassword(person.email, PASSWORD);
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    laptop = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    phone = await (await browser.newContext({ viewport: { width: 1280, height: 900 }, userAgent: OTHER_AGENT })).newPage();
    for (const p of [laptop, phone]) {
      p.setDefaultTimeout(20_000);
      p.on('pageerror', (e) => consoleLines.push(`error: ${e.message}`));
    }
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  const signIn = async (p: Page, who: TestUser = person) => {
    await p.goto(`${t.base}/sign-in`);
    await p.getByLabel('Email').fill(who.email);
    await p.getByLabel('Password').fill(PASSWORD);
    await p.getByLabel('Password').press('Enter');
    await p.getByRole('heading', { name: 'Nodes', level: 1 }).waitFor();
  };

  it('lists both sessions and ends the other one with its End button', async () => {
    try {
      await signIn(laptop);
      await signIn(phone);
      await laptop.goto(`${t.base}/account`);
      const rows = laptop.locator('[data-testid=sessions] tbody tr');
      await expect.poll(() => rows.count()).toBe(2);
      const mine = laptop.locator('[data-testid=sessions] tbody tr', { hasText: 'this browser' });
      expect(await mine.textContent()).toContain('Chrome');
      expect(await mine.getByRole('button', { name: 'End' }).count()).toBe(0);
      const other = laptop.locator('[data-testid=sessions] tbody tr', { hasText: 'Firefox 133 on Windows' });
      await shot(laptop);
      await other.getByRole('button', { name: 'End' }).click();
      await expect.poll(() => rows.count()).toBe(1);
      // The other browser is signed out at its next request; this one stays signed in.
      await phone.reload();
      await phone.waitForURL(/\/sign-in/);
      await laptop.reload();
      await expect.poll(() => laptop.locator('[data-testid=sessions] tbody tr').count()).toBe(1);
    } catch (err) {
      throw new Error(`${(err as Error).message}\nlaptop: ${(await laptop.locator('main').innerText().catch(() => '?')).slice(0, 400)}\n${consoleLines.join('\n')}`);
    }
  }, 60_000);

  it('turns a kind of notification email off and on with its checkbox, which the API then answers', async () => {
    try {
      // The laptop is still signed in from the test before.
      await laptop.goto(`${t.base}/account`);
      const box = laptop.getByLabel('A backup failed');
      await expect.poll(() => box.isChecked()).toBe(true);
      await box.uncheck();
      await laptop.locator('[data-testid=security]').getByText('A backup failed: off.').waitFor();
      expect((await t.call('/api/notifications', { token: person.token })).json).toEqual({ nodeFailed: true, nodeStorageLost: true, backupFailed: false, apiCalls80: true, apiCalls100: true });
      await laptop.reload();
      await expect.poll(() => laptop.getByLabel('A backup failed').isChecked()).toBe(false);
      expect(await laptop.getByLabel('A node failed').isChecked()).toBe(true);
      await shot(laptop, 'account-notifications');
      await laptop.getByLabel('A backup failed').check();
      await laptop.locator('[data-testid=security]').getByText('A backup failed: on.').waitFor();
      expect((await t.call('/api/notifications', { token: person.token })).json.backupFailed).toBe(true);
    } catch (err) {
      throw new Error(`${(err as Error).message}\nlaptop: ${(await laptop.locator('main').innerText().catch(() => '?')).slice(0, 600)}\n${consoleLines.join('\n')}`);
    }
  }, 60_000);

  it('the owner offers the account to an admin, who accepts it and then deletes it with their password', async () => {
    try {
      const admin = await addMember(t, person.id, 'admin');
      await t.server.services.accounts.setPassword(admin.email, PASSWORD);
      // The laptop is still signed in from the test before.
      await laptop.goto(`${t.base}/account`);
      await laptop.locator('[data-testid=hand-over-to]').selectOption(admin.id);
      await laptop.locator('[data-testid=offer-ownership]').click();
      await laptop.getByRole('dialog').getByRole('button', { name: 'Offer' }).click();
      await laptop.locator('[data-testid=withdraw-offer]').waitFor();
      expect(await laptop.locator('[data-testid=ownership]').textContent()).toContain(`offered to ${admin.email}`);

      await signIn(phone, admin);
      await phone.goto(`${t.base}/account`);
      await phone.locator('[data-testid=accept-ownership]').click();
      await phone.getByRole('dialog').getByRole('button', { name: 'Accept' }).click();
      await phone.locator('[data-testid=delete-account]').waitFor();
      const roles = Object.fromEntries((await t.call('/api/account/members', { token: admin.token })).json.members.map((m: any) => [m.userId, m.role]));
      expect(roles).toEqual({ [person.id]: 'admin', [admin.id]: 'owner' });
      await shot(phone, 'account-new-owner');

      await phone.locator('[data-testid=delete-account]').click();
      const dlg = phone.getByRole('dialog');
      await dlg.getByLabel('Your password').fill('not the password');
      await dlg.getByRole('button', { name: 'Delete the account' }).click();
      await dlg.getByText('the password is wrong').waitFor();
      await dlg.getByLabel('Your password').fill(PASSWORD);
      await dlg.getByRole('button', { name: 'Delete the account' }).click();
      await phone.waitForURL(/\/sign-in/);
      expect((await t.call('/api/nodes', { token: admin.token })).status).toBe(401);
      await laptop.reload();
      await laptop.waitForURL(/\/sign-in/);
    } catch (err) {
      throw new Error(`${(err as Error).message}\nphone: ${(await phone.locator('main').innerText().catch(() => '?')).slice(0, 600)}\n${consoleLines.join('\n')}`);
    }
  }, 90_000);

  const shot = (p: Page, name = 'account-security') => p.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
});
