// Sign-up in approval mode through the web UI in a real browser (Chromium through playwright-core),
// with real SMTP: a stranger signs up, verifies from the emailed link and is told their account
// waits; signing in is refused until the operator approves with the real CLI (`rln-cloud signup
// approve`), which emails them; then they sign in.
// Skipped without /usr/bin/chromium unless REQUIRE_BROWSER_TESTS=1, which makes that a failure.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { linkIn, startSmtpServer, type TestSmtpServer } from '../helpers/smtp.ts';
import { browserSteps } from '../helpers/browser-step.ts';

const run = promisify(execFile);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const required = process.env.REQUIRE_BROWSER_TESTS === '1';
const SHOTS = join(process.cwd(), 'test-results', 'web');
const PASSWORD = 'amber lantern meadow 41';

if (!hasChromium && !required) console.warn(`approval sign-up browser tests SKIPPED: ${CHROMIUM} is missing (apt-get install -y chromium)`);

describe.runIf(required && !hasChromium)('approval sign-up in Chromium (required by REQUIRE_BROWSER_TESTS=1)', () => {
  it(`needs ${CHROMIUM}`, () => {
    throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  });
});

describe.skipIf(!hasChromium)(`sign-up in approval mode in Chromium on ${databaseLabel()}`, () => {
  let smtp: TestSmtpServer;
  let t: TestServer;
  let browser: Browser;
  let page: Page;
  const email = `applicant-${Date.now()}@example.com`;
  const consoleLines: string[] = [];
  const url = (path: string) => `${t.base}${path}`;
  const step = browserSteps(() => [page], consoleLines, 60_000);
  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  const signIn = async () => {
    await page.goto(url('/sign-in'));
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByLabel('Password').press('Enter');
  };

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    smtp = await startSmtpServer();
    t = await startTestServer({ SMTP_URL: smtp.url, SIGNUP_MODE: 'approval' });
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

  step('signs up, verifies from the emailed link and is told the account waits for approval', async () => {
    await page.goto(url('/sign-up'));
    await page.getByLabel('Email').fill(email);
    await page.locator('#signup-password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create my account' }).click();
    await page.getByTestId('sign-up-done').waitFor();
    const [mail] = await smtp.waitFor(email);
    await page.goto(linkIn(mail!, '/verify-email').url);
    await page.getByTestId('verified').waitFor();
    expect(await page.locator('main').innerText()).toContain('waits for the operator’s approval');
    expect(await page.getByRole('link', { name: 'Sign in' }).count()).toBe(0);
    await shot('sign-up-awaiting-approval');
  });

  step('cannot sign in while the account waits', async () => {
    await signIn();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain("waiting for the operator's approval");
  });

  step('the operator approves with `rln-cloud signup approve`; the approval email arrives and the person signs in', async () => {
    // The service's own settings, as an operator's shell has them: on PostgreSQL the CLI writes the
    // approval email itself, with its PUBLIC_URL in the link, and enqueues its sending (SMTP_URL).
    const env = { ...process.env, DATA_DIR: t.config.dataDir, DATABASE_URL: t.config.databaseUrl ?? '', PUBLIC_URL: t.config.publicUrl, SMTP_URL: smtp.url, SIGNUP_MODE: 'approval' };
    const listed = await run(process.execPath, ['bin/rln-cloud.mjs', 'signup', 'list', '--json'], { env });
    expect(listed.stdout).toContain(email);
    const approved = await run(process.execPath, ['bin/rln-cloud.mjs', 'signup', 'approve', email, '--json'], { env });
    expect(JSON.parse(approved.stdout)).toMatchObject({ email, approved: true });
    const [, ready] = await smtp.waitFor(email, 2);
    expect(ready!.subject).toBe('Your RLN Cloud account is ready');
    await page.goto(linkIn(ready!, '/sign-in').url);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByLabel('Password').press('Enter');
    await page.getByRole('heading', { name: 'Nodes', level: 1 }).waitFor();
    expect(await page.locator('.account-email').textContent()).toBe(email);
    await shot('sign-up-approved');
  });
});
