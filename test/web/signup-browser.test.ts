// Sign-up through the web UI in a real browser (Chromium through playwright-core, as
// test/web/browser.test.ts), in open mode with real SMTP: a stranger signs up, receives the
// verification email, opens its link, signs in, creates a token and a node and sees it RUNNING;
// then forgets the password and sets a new one from the emailed reset link.
// Skipped without /usr/bin/chromium unless REQUIRE_BROWSER_TESTS=1, which makes that a failure.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { linkIn, startSmtpServer, type TestSmtpServer } from '../helpers/smtp.ts';
import { browserSteps } from '../helpers/browser-step.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const required = process.env.REQUIRE_BROWSER_TESTS === '1';
const SHOTS = join(process.cwd(), 'test-results', 'web');
const PASSWORD = 'violet kettle orbit 93';
const NEW_PASSWORD = 'a brand new harbour 77';

if (!hasChromium && !required) console.warn(`sign-up browser tests SKIPPED: ${CHROMIUM} is missing (apt-get install -y chromium)`);

describe.runIf(required && !hasChromium)('sign-up in Chromium (required by REQUIRE_BROWSER_TESTS=1)', () => {
  it(`needs ${CHROMIUM}`, () => {
    throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  });
});

describe.skipIf(!hasChromium)(`sign-up in Chromium on ${databaseLabel()}`, () => {
  let smtp: TestSmtpServer;
  let t: TestServer;
  let browser: Browser;
  let page: Page;
  const email = `stranger-${Date.now()}@example.com`;
  const consoleLines: string[] = [];
  const extraPages: Page[] = [];
  const url = (path: string) => `${t.base}${path}`;
  const step = browserSteps(() => [page, ...extraPages], consoleLines, 60_000);
  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    smtp = await startSmtpServer();
    t = await startTestServer({ SMTP_URL: smtp.url, SIGNUP_MODE: 'open' });
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    page.setDefaultTimeout(20_000);
    page.on('console', (m) => consoleLines.push(`${m.type()}: ${m.text()}`));
    page.on('pageerror', (e) => consoleLines.push(`error: ${e.message}`));
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
    await smtp?.stop();
  });

  step('signs up from the sign-in page and is told to check the mailbox', async () => {
    await page.goto(url('/'));
    await page.waitForURL(/\/sign-in/);
    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.waitForURL(url('/sign-up'));
    await page.getByLabel('Email').fill(email);
    await page.locator('#signup-password').fill('password123');
    await page.getByRole('button', { name: 'Create my account' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('too easy to guess');
    await page.locator('#signup-password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create my account' }).click();
    await page.getByTestId('sign-up-done').waitFor();
    await shot('sign-up-done');
  });

  step('cannot sign in before verifying, then opens the emailed link and signs in', async () => {
    await page.goto(url('/sign-in'));
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByLabel('Password').press('Enter');
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('verify your email address first');
    const [mail] = await smtp.waitFor(email);
    const link = linkIn(mail!, '/verify-email');
    await page.goto(link.url);
    await page.getByTestId('verified').waitFor();
    // The spent secret is gone from the address bar and the history.
    expect(page.url()).toBe(url('/verify-email'));
    await shot('email-verified');
    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByLabel('Password').press('Enter');
    await page.getByRole('heading', { name: 'Nodes', level: 1 }).waitFor();
    expect(await page.locator('.account-email').textContent()).toBe(email);
  });

  step('creates a token and a node that reaches RUNNING', async () => {
    await page.getByRole('link', { name: 'API tokens' }).click();
    await page.getByRole('heading', { name: 'API tokens', level: 1 }).waitFor();
    await page.getByLabel('Name').fill('my-first-token');
    await page.getByRole('button', { name: 'Create token' }).click();
    const secret = (await page.getByTestId('token-secret').textContent())!;
    expect((await t.call('/api/nodes', { token: secret })).status).toBe(200);
    await page.goto(url(new URL(t.config.connectPageUrl).pathname));
    await page.getByRole('heading', { name: 'Nodes', level: 1 }).waitFor();
    await page.getByLabel('Name').fill('first-node');
    await page.getByRole('button', { name: 'Create node' }).click();
    await page.getByRole('link', { name: 'first-node' }).click();
    await page.locator('[data-testid=node-status] [data-status=RUNNING]').waitFor({ timeout: 45_000 });
    await shot('signed-up-node-running');
  });

  step('resets a forgotten password from the emailed link and is signed out of this browser', async () => {
    // Another browser, as from a phone: asks for the link, and opens it in a new tab as from a mail client.
    const phone = await browser.newContext();
    const asking = await phone.newPage();
    extraPages.push(asking);
    asking.setDefaultTimeout(20_000);
    await asking.goto(url('/reset-password'));
    await asking.getByLabel('Email').fill(email);
    await asking.getByRole('button', { name: 'Email me a link' }).click();
    await asking.getByText('check your email').waitFor();
    const [, mail] = await smtp.waitFor(email, 2);
    const other = await phone.newPage();
    extraPages.push(other);
    other.setDefaultTimeout(20_000);
    await other.goto(linkIn(mail!, '/reset-password').url);
    await other.locator('#new-password').fill(NEW_PASSWORD);
    await other.locator('#new-password-repeat').fill(NEW_PASSWORD);
    await other.getByRole('button', { name: 'Set my new password' }).click();
    await other.getByTestId('password-reset-done').waitFor();
    // The first browser's session ended with the reset.
    await page.reload();
    await page.waitForURL(/\/sign-in/);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(NEW_PASSWORD);
    await page.getByLabel('Password').press('Enter');
    // Back where the session ended (the sign-in page's `next`): the node's page.
    await page.locator('[data-testid=node-status] [data-status=RUNNING]').waitFor();
    expect(await page.locator('.account-email').textContent()).toBe(email);
  });
});
