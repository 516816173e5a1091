// The node page's Node tokens card in a real browser (Chromium through playwright-core, as the other
// test/web suites): a member mints a custom token, sees it once with a one-line curl, the token works
// through the bearer gateway, the list shows it, and Revoke stops it at the gateway.
// Skipped without /usr/bin/chromium unless REQUIRE_BROWSER_TESTS=1, which makes that a failure.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { rawRequest } from '../gateway/gateway-client.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const required = process.env.REQUIRE_BROWSER_TESTS === '1';
const SHOTS = join(process.cwd(), 'test-results', 'web');
const PASSWORD = 'node tokens web password';

if (!hasChromium && !required) console.warn(`node tokens browser tests SKIPPED: ${CHROMIUM} is missing (apt-get install -y chromium)`);

describe.runIf(required && !hasChromium)('node tokens card in Chromium (required by REQUIRE_BROWSER_TESTS=1)', () => {
  it(`needs ${CHROMIUM}`, () => {
    throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  });
});

describe.skipIf(!hasChromium)(`node tokens card in Chromium on ${databaseLabel()}`, () => {
  let t: TestServer;
  let owner: TestUser;
  let browser: Browser;
  let page: Page;
  let nodeId: string;
  const errors: string[] = [];

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    t = await startTestServer();
    owner = await t.createUser();
    await t.server.services.accounts.setPassword(owner.email, PASSWORD);
    const created = await t.call('/api/nodes', { method: 'POST', token: owner.token, body: { name: 'tokens-web', network: 'regtest' } });
    nodeId = created.json.data.nodeId;
    await t.waitForStatus(owner, nodeId, 'RUNNING', 45_000);
    const { chromium } = await import('playwright-core');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    page.setDefaultTimeout(20_000);
    page.on('pageerror', (e) => errors.push(e.message));
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  const viaGateway = (token: string, route: string) =>
    rawRequest(t.config.nodeApiUrl, `/${owner.id}/${nodeId}/${route}`, { headers: { authorization: `Bearer ${token}` } });

  it('mints a custom token shown once with a curl line, lists it and revokes it', async () => {
    try {
      await page.goto(`${t.base}/sign-in`);
      await page.getByLabel('Email').fill(owner.email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByLabel('Password').press('Enter');
      await page.getByRole('heading', { name: 'Nodes', level: 1 }).waitFor();
      await page.goto(`${t.base}${new URL(t.config.connectPageUrl).pathname}/${nodeId}`);
      const card = page.locator('[data-testid=node-tokens-card]');
      await card.getByText('No node tokens yet.').waitFor();
      await card.getByLabel('Role').selectOption('custom');
      await card.getByLabel('Routes (custom)').fill('/nodeinfo, /networkinfo');
      await card.getByRole('button', { name: 'Mint token' }).click();
      const token = (await card.locator('[data-testid=node-token]').textContent())!.trim();
      const curl = (await card.locator('[data-testid=node-token-curl]').textContent())!.trim();
      expect(curl).toBe(`curl -H "Authorization: Bearer ${token}" ${t.config.nodeApiUrl}/${owner.id}/${nodeId}/nodeinfo`);
      await expect.poll(() => card.locator('[data-testid=node-token-table] tbody tr').count()).toBe(1);
      expect(await card.locator('[data-testid=node-token-table] tbody tr').textContent()).toContain('/nodeinfo /networkinfo');
      await page.screenshot({ path: join(SHOTS, 'node-tokens.png'), fullPage: true });
      // The gateway passes it on (the node is not unlocked: its own answer, not the gateway's 401).
      expect((await viaGateway(token, 'nodeinfo')).status).not.toBe(401);
      expect((await viaGateway(token, 'address')).status).toBe(403);

      await card.getByRole('button', { name: 'Revoke' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
      await card.getByText('Revoked', { exact: true }).waitFor(); // the badge: the card's text and the notice say "revoked" too
      expect((await viaGateway(token, 'nodeinfo')).status).toBe(401);
      expect(errors).toEqual([]);
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${(await page.locator('main').innerText().catch(() => '?')).slice(0, 600)}\n${errors.join('\n')}`);
    }
  }, 90_000);
});
