// The Account page in a real browser (Chromium through playwright-core, as test/web/browser.test.ts):
// the owner invites from the page and is shown the link once; a second browser context (another
// person) opens it, sets a password, is signed in as the member and sees the page list both of
// them; the owner changes the member's role and removes them, and the member's session ends.
// Skipped without /usr/bin/chromium unless REQUIRE_BROWSER_TESTS=1, which makes that a failure.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { createNodes } from '../helpers/tenants.ts';
import { browserSteps } from '../helpers/browser-step.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const required = process.env.REQUIRE_BROWSER_TESTS === '1';
const SHOTS = join(process.cwd(), 'test-results', 'web');
const OWNER_PASSWORD = 'owner web password';
const MEMBER_PASSWORD = 'member web password';

if (!hasChromium && !required) console.warn(`account page browser tests SKIPPED: ${CHROMIUM} is missing (apt-get install -y chromium)`);

describe.runIf(required && !hasChromium)('account page in Chromium (required by REQUIRE_BROWSER_TESTS=1)', () => {
  it(`needs ${CHROMIUM}`, () => {
    throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  });
});

describe.skipIf(!hasChromium)(`account page in Chromium on ${databaseLabel()}`, () => {
  let t: TestServer;
  let owner: TestUser;
  let browser: Browser;
  let ownerPage: Page;
  let memberPage: Page;
  let invitationUrl: string;
  const memberEmail = `teammate-${Date.now()}@example.com`;
  const consoleLines: string[] = [];
  const step = browserSteps(() => [ownerPage, memberPage], consoleLines, 60_000);
  const shot = (name: string, p: Page) => p.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    t = await startTestServer();
    owner = await t.createUser('scale');
    await t.server.services.accounts.setPassword(owner.email, OWNER_PASSWORD);
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    // Two contexts: two people, each with their own cookies.
    ownerPage = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    memberPage = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    for (const p of [ownerPage, memberPage]) {
      p.setDefaultTimeout(20_000);
      // What a page said, for the message of a step that times out waiting for it.
      p.on('console', (m) => consoleLines.push(`${p === ownerPage ? 'owner' : 'member'} ${m.type()}: ${m.text()}`));
      p.on('pageerror', (e) => consoleLines.push(`${p === ownerPage ? 'owner' : 'member'} error: ${e.message}`));
    }
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  step('the owner signs in, opens Account from the nav and invites a developer: the link is shown once', async () => {
    await ownerPage.goto(`${t.base}/sign-in`);
    await ownerPage.getByLabel('Email').fill(owner.email);
    await ownerPage.getByLabel('Password').fill(OWNER_PASSWORD);
    await ownerPage.getByLabel('Password').press('Enter');
    await ownerPage.getByRole('heading', { name: 'Nodes', level: 1 }).waitFor();
    await ownerPage.getByRole('link', { name: 'Account' }).click();
    await ownerPage.getByRole('heading', { name: 'Account', exact: true, level: 1 }).waitFor();
    // Plan and usage answer 404 until their routes exist; either way the page stands.
    await ownerPage.locator('[data-testid=plan], [data-testid=plan-placeholder]').first().waitFor();
    await ownerPage.locator('[data-testid=usage-chart], [data-testid=usage-placeholder]').first().waitFor();
    await shot('account-owner', ownerPage);
    await ownerPage.getByLabel('Email').fill(memberEmail);
    await ownerPage.locator('#invite-role').selectOption('developer');
    await ownerPage.getByRole('button', { name: 'Invite' }).click();
    invitationUrl = (await ownerPage.locator('[data-testid=invitation-url]').textContent())!;
    expect(invitationUrl).toMatch(new RegExp(`^${t.base}/invitation#token=[A-Za-z0-9_-]{43}$`));
    await ownerPage.locator(`[data-testid=invitations] >> text=${memberEmail}`).waitFor();
    await shot('account-invited', ownerPage);
    // Shown once: a reload lists the invitation, never its link.
    await ownerPage.reload();
    await ownerPage.locator(`[data-testid=invitations] >> text=${memberEmail}`).waitFor();
    expect(await ownerPage.content()).not.toContain(invitationUrl.split('#token=')[1]);
  });

  step('another person opens the link, sets a password, verifies their address (the link was passed on by hand) and signs in as the member; Account lists both', async () => {
    await memberPage.goto(invitationUrl);
    await memberPage.locator('[data-testid=invitation]').waitFor();
    await memberPage.getByLabel('Choose a password').fill(MEMBER_PASSWORD);
    await memberPage.getByLabel('Repeat it').fill(MEMBER_PASSWORD);
    await memberPage.getByRole('button', { name: 'Join and sign in' }).click();
    // No SMTP here: the link proved nothing about the address, which is verified by email first.
    await memberPage.locator('[data-testid=invitation-verify]').waitFor();
    // The secret is spent and out of the address bar.
    expect(memberPage.url()).toBe(`${t.base}/invitation`);
    const [message] = await t.server.db.query<{ text_body: string }>(`SELECT text_body FROM email_outbox WHERE recipient = $1 AND kind = 'verify-email'`, [memberEmail]);
    await memberPage.goto(message!.text_body.split(/\s+/).find((w) => w.includes('/verify-email#token='))!);
    await memberPage.locator('[data-testid=verified]').waitFor();
    await memberPage.getByRole('link', { name: 'Sign in' }).click();
    await memberPage.getByLabel('Email').fill(memberEmail);
    await memberPage.getByLabel('Password').fill(MEMBER_PASSWORD);
    await memberPage.getByLabel('Password').press('Enter');
    await memberPage.getByRole('heading', { name: 'Nodes', level: 1 }).waitFor();
    await memberPage.goto(`${t.base}/account`);
    await memberPage.getByRole('heading', { name: 'Account', exact: true, level: 1 }).waitFor();
    expect(await memberPage.locator('.account-email').textContent()).toBe(memberEmail);
    const rows = memberPage.locator('[data-testid=members] tbody tr');
    await expect.poll(() => rows.count()).toBe(2);
    const text = await memberPage.locator('[data-testid=members]').textContent();
    expect(text).toContain(owner.email);
    expect(text).toContain(memberEmail);
    expect(text).toContain('owner');
    expect(text).toContain('developer');
    // A developer manages no one: no role menus, no Remove buttons, no invitations.
    expect(await memberPage.getByRole('button', { name: 'Remove' }).count()).toBe(0);
    expect(await memberPage.getByRole('heading', { name: 'Invitations' }).isVisible()).toBe(false);
    await shot('account-member', memberPage);
    // The same link again is refused.
    const again = await t.call('/api/account/invitations/accept', { method: 'POST', body: { token: invitationUrl.split('#token=')[1], password: 'whatever-123' } });
    expect(again.status).toBe(404);
  });

  step("the owner makes the member a viewer, then removes them; the member's session ends", async () => {
    await ownerPage.reload();
    const row = ownerPage.locator('[data-testid=members] tbody tr', { hasText: memberEmail });
    await row.locator('select').selectOption('viewer');
    await expect.poll(async () => (await t.call('/api/account/members', { token: owner.token })).json.members.find((m: any) => m.email === memberEmail)?.role).toBe('viewer');
    await row.getByRole('button', { name: 'Remove' }).click();
    await ownerPage.getByRole('dialog').getByRole('button', { name: 'Remove' }).click();
    await expect.poll(() => ownerPage.locator('[data-testid=members] tbody tr').count()).toBe(1);
    await memberPage.reload();
    await memberPage.waitForURL(/\/sign-in/);
  });

  step("shows the account's real plan and this month's node time, as the service answers them", async () => {
    await createNodes(t, owner, [{ name: 'charted' }]);
    // A second of RUNNING time today, so today's bar has a height.
    await new Promise((r) => setTimeout(r, 1500));
    const usage = (await t.call('/api/usage', { token: owner.token })).json;
    const today = usage.days.find((d: { date: string }) => d.date === new Date().toISOString().slice(0, 10));
    expect(today.runningSeconds).toBeGreaterThan(0);
    await ownerPage.goto(`${t.base}/account`);
    const plan = ownerPage.locator('[data-testid=plan]');
    await plan.waitFor();
    expect(await plan.textContent()).toContain('scale');
    const chart = ownerPage.locator('[data-testid=usage-chart]');
    await chart.waitFor();
    expect(await chart.locator('g[data-date]').count()).toBe(usage.days.length);
    expect(Number(await chart.locator(`g[data-date="${today.date}"] .bar-running`).getAttribute('height'))).toBeGreaterThan(0);
  });

  step('shows the plan with its limits and a stacked bar per day, in the shapes GET /api/account and GET /api/usage answer', async () => {
    // Chosen answers, so the bars' heights can be checked against known seconds.
    const account = {
      id: owner.id,
      role: 'owner',
      createdAt: new Date().toISOString(),
      plan: { name: 'scale', maxNodes: null, apiCallsPerMonth: null, maxUsers: null, autoUpgrade: true },
      usage: { month: '2026-11', nodes: { used: 2, limit: null }, apiCalls: { used: 1234, limit: null }, users: { used: 1, limit: null } },
    };
    const days = [
      { date: '2026-11-01', runningSeconds: 86_400, pausedSeconds: 0 },
      { date: '2026-11-02', runningSeconds: 43_200, pausedSeconds: 43_200 },
      { date: '2026-11-03', runningSeconds: 0, pausedSeconds: 3_600 },
    ];
    await ownerPage.route('**/api/account', (r) => r.fulfill({ json: account }));
    await ownerPage.route('**/api/usage', (r) => r.fulfill({ json: { month: '2026-11', days, total: {}, nodes: [] } }));
    await ownerPage.reload();
    const plan = ownerPage.locator('[data-testid=plan]');
    await plan.waitFor();
    expect(await plan.textContent()).toContain('scale');
    expect(await plan.textContent()).toContain('1234 (unlimited)');
    const chart = ownerPage.locator('[data-testid=usage-chart]');
    await chart.waitFor();
    expect(await chart.locator('g[data-date]').count()).toBe(3);
    const heights = async (date: string): Promise<number[]> =>
      Promise.all(['running', 'paused'].map(async (k) => Number(await chart.locator(`g[data-date="${date}"] .bar-${k}`).getAttribute('height'))));
    const [fullRunning = NaN, fullPaused] = await heights('2026-11-01');
    const [halfRunning = NaN, halfPaused = NaN] = await heights('2026-11-02');
    expect(fullPaused).toBe(0);
    expect(halfRunning).toBeCloseTo(fullRunning / 2, 5);
    expect(halfRunning + halfPaused).toBeCloseTo(fullRunning, 5);
    await shot('account-plan-and-usage', ownerPage);
  });
});
