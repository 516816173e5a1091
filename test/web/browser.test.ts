// The web UI in a real browser (Debian's Chromium driven by playwright-core) against the whole
// service on real sockets: the scenario of issue #7, step by step, with a screenshot of every page
// in test-results/web/. Without /usr/bin/chromium the suite reports itself skipped and says why;
// CI sets REQUIRE_BROWSER_TESTS=1, which turns that skip into a failure.
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Download, Page } from 'playwright-core';
import { startTestServer, type TestServer, type TestUser } from '../helpers/server.ts';
import { databaseLabel } from '../helpers/database.ts';
import { newVssKey, vssClient } from '../helpers/vss-client.ts';
import { vssIdentityFromMnemonic } from '../../devnode/vss/key.ts';
import { SealedNodeVssUrls } from '../../src/vss/node-urls.ts';
import { VssJanitor } from '../../src/vss/vss-janitor.ts';
import { createLogger } from '../../src/logger.ts';

const run = promisify(execFile);
// CHROMIUM_PATH only to try the skip path on a machine that has Chromium.
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const required = process.env.REQUIRE_BROWSER_TESTS === '1';
const SHOTS = join(process.cwd(), 'test-results', 'web');
const PASSWORD = 'web ui password';
const NODE_PASSWORD = 'node wallet password';

// The default reporter does not print a skipped suite's name: say why here too.
if (!hasChromium && !required) console.warn(`web UI browser tests SKIPPED: ${CHROMIUM} is missing (apt-get install -y chromium)`);

describe.runIf(required && !hasChromium)('web UI in Chromium (required by REQUIRE_BROWSER_TESTS=1)', () => {
  it(`needs ${CHROMIUM}`, () => {
    throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  });
});

describe.skipIf(!hasChromium)(
  hasChromium ? `web UI in Chromium on ${databaseLabel()}` : `web UI in Chromium: SKIPPED, ${CHROMIUM} is missing (apt-get install -y chromium)`,
  () => {
    let t: TestServer;
    let alice: TestUser;
    let browser: Browser;
    let context: BrowserContext;
    let page: Page;
    let downloads: string;
    let nodeId: string;
    let node: any;
    /** The first node's recovery phrase, as the page showed it once. */
    let phrase: string;
    // Webhook deliveries go to this loopback listener, never to an outside address.
    let hooks: Server;
    let hookUrl: string;

    const shot = async (name: string, p: Page = page) => {
      await p.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
    };
    const url = (path: string) => `${t.base}${path}`;
    const nodePath = (id: string) => `${new URL(t.config.connectPageUrl).pathname}/${id}`;

    // Each step may wait on builds and daemons while other suites share the two cores.
    const step = (name: string, fn: () => Promise<void>) => it(name, fn, 120_000);

    beforeAll(async () => {
      mkdirSync(SHOTS, { recursive: true });
      downloads = mkdtempSync(join(tmpdir(), 'rln-web-downloads-'));
      hooks = createServer((req, res) => req.resume().on('end', () => res.end('ok')));
      await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve));
      hookUrl = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}/hooks`;
      // A small VSS soft limit, so the node page's VSS row and notice are reached with small writes.
      t = await startTestServer({ VSS_MAX_BYTES_PER_NODE: '1000' });
      // Starter plan: a new release does not upgrade these nodes by itself, the Upgrade button does.
      alice = await t.createUser(undefined, 'alice@example.com');
      await t.server.services.accounts.setPassword(alice.email, PASSWORD);
      const { chromium } = await import('playwright-core');
      browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
      context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 860 } });
      page = await context.newPage();
      page.setDefaultTimeout(20_000);
    });
    afterAll(async () => {
      await browser?.close();
      await t?.stop();
      hooks?.close();
      if (downloads) rmSync(downloads, { recursive: true, force: true });
    });

    step('refuses a wrong password, then signs in with the keyboard', async () => {
      await page.goto(url('/'));
      await page.waitForURL(/\/sign-in/);
      await page.getByLabel('Email').fill(alice.email);
      await page.getByLabel('Password').fill('not my password');
      await page.getByLabel('Password').press('Enter');
      await expect.poll(() => page.getByRole('alert').textContent()).toContain('The email or the password is wrong');
      await shot('sign-in-error');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByLabel('Password').press('Enter');
      await page.getByRole('heading', { name: 'Nodes', level: 1 }).waitFor();
      expect(await page.locator('.account-email').textContent()).toBe(alice.email);
      const cookie = (await context.cookies()).find((c) => c.name === 'rlnc_session');
      expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax' });
    });

    step('shows the API’s validation message, then creates a node that reaches RUNNING without a reload', async () => {
      expect(await page.getByLabel('Name').getAttribute('aria-required')).toBe('true');
      await page.getByLabel('Name').fill(' padded ');
      await page.getByRole('button', { name: 'Create node' }).click();
      await expect.poll(() => page.getByRole('alert').textContent()).toContain('name must not contain control characters or begin or end with whitespace');
      await page.getByLabel('Name').fill('web-shop');
      await page.getByLabel('Webhook URL').fill(hookUrl);
      await page.getByRole('button', { name: 'Create node' }).click();
      await page.getByRole('link', { name: 'web-shop' }).waitFor();
      nodeId = (await page.locator('tr[data-node-id]').first().getAttribute('data-node-id'))!;
      expect(nodeId).toMatch(/^[0-9a-f]{32}$/);
      await page.getByRole('link', { name: 'web-shop' }).click();
      await page.waitForURL(url(nodePath(nodeId)));
      const navigations: string[] = [];
      page.on('framenavigated', (f) => f === page.mainFrame() && navigations.push(f.url()));
      await page.locator('[data-testid=node-status] [data-status=RUNNING]').waitFor({ timeout: 30_000 });
      expect(navigations).toEqual([]);
      node = (await t.call(`/api/nodes/${nodeId}`, { token: alice.token })).json.data;
      expect(await page.getByText(node.invoke_url).count()).toBeGreaterThan(0);
      expect(await page.getByText(`${node.peerDNS}:${node.peerPort}`).count()).toBe(1);
      expect(await page.locator('[data-testid=builds] tbody tr').count()).toBe(1);
      await page.goto(url(new URL(t.config.connectPageUrl).pathname));
      await page.locator(`tr[data-node-id="${nodeId}"] [data-status=RUNNING]`).waitFor();
      await shot('nodes-list');
    });

    step('initialises the wallet from the page: the password twice, the mnemonic shown once; then the page shows it locked', async () => {
      await page.goto(url(nodePath(nodeId)));
      const initNotice = page.locator('[data-testid=init-notice]');
      await initNotice.getByRole('button', { name: 'Initialise' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel('Password', { exact: true }).fill(NODE_PASSWORD);
      await dialog.getByLabel('The same password again').fill(`${NODE_PASSWORD}x`);
      await dialog.getByRole('button', { name: 'Initialise' }).click();
      await expect.poll(() => dialog.getByRole('alert').textContent()).toContain('The two passwords differ.');
      await dialog.getByLabel('The same password again').fill(NODE_PASSWORD);
      await dialog.getByRole('button', { name: 'Initialise' }).click();
      const words = (await page.locator('[data-testid=mnemonic]').textContent())!.trim().split(/\s+/);
      expect(words).toHaveLength(12);
      phrase = words.join(' ');
      expect(await page.locator('[data-testid=mnemonic-notice]').textContent()).toContain('not shown again');
      await page.locator('[data-testid=locked-notice]').waitFor();
      expect(await initNotice.count()).toBe(0);
      expect((await t.call(`/api/nodes/${nodeId}`, { token: alice.token })).json.data.initialized).toBe(true);
      await shot('node-initialised');
      // Once the page is left, the words are gone: nothing shows them again.
      await page.goto(url(nodePath(nodeId)));
      await page.locator('[data-testid=locked-notice]').waitFor();
      expect(await page.locator('[data-testid=mnemonic]').count()).toBe(0);
    });

    step('shows the upgrade notice after a release is published with the CLI, and upgrades with the button', async () => {
      await page.goto(url(nodePath(nodeId)));
      const env = { ...process.env, DATA_DIR: t.config.dataDir, DATABASE_URL: t.config.databaseUrl ?? '' };
      const published = await run(process.execPath, ['bin/rln-cloud.mjs', 'release', 'publish', 'devnode-0.2.0', '--json'], { env });
      expect(JSON.parse(published.stdout)).toMatchObject({ version: 'devnode-0.2.0' });
      const notice = page.locator('[data-testid=upgrade-notice]');
      await notice.waitFor({ timeout: 15_000 });
      expect(await notice.textContent()).toContain('devnode-0.2.0');
      await shot('node-upgrade-notice');
      await notice.getByRole('button', { name: 'Upgrade' }).click();
      // The confirmation names the node and promises no duration.
      expect(await page.getByRole('dialog').textContent()).toContain('Upgrade web-shop?');
      expect(await page.getByRole('dialog').textContent()).not.toContain('minutes');
      await page.getByRole('dialog').getByRole('button', { name: 'Upgrade' }).click();
      await page.locator('[data-testid=node-version]', { hasText: 'devnode-0.2.0' }).waitFor({ timeout: 45_000 });
      await page.locator('[data-testid=node-status] [data-status=RUNNING]').waitFor({ timeout: 45_000 });
      await page.locator('[data-testid=locked-notice]').waitFor();
      expect(await notice.count()).toBe(0);
      // "is being upgraded" said what started; it is gone now that the upgrade is over.
      expect((await page.locator('.flash').textContent())?.trim()).toBe('');
      expect(await page.locator('[data-testid=builds] tbody tr').count()).toBe(2);
      await shot('node-locked');
    });

    step('changes the webhook URL (refusals shown) and exports logs with download links', async () => {
      await page.goto(url(nodePath(nodeId)));
      const webhook = page.getByLabel('Webhook URL');
      expect(await webhook.inputValue()).toBe(hookUrl);
      await webhook.fill('not a url');
      await page.getByRole('button', { name: 'Save' }).click();
      await expect.poll(() => page.getByRole('alert').first().textContent()).toMatch(/webhookUrl/);
      await webhook.fill(`${hookUrl}/v2`);
      await page.getByRole('button', { name: 'Save' }).click();
      await expect.poll(async () => (await t.call(`/api/nodes/${nodeId}`, { token: alice.token })).json.data.settings.webhookUrl).toBe(`${hookUrl}/v2`);

      await page.getByRole('button', { name: 'Export logs' }).click();
      const links = page.locator('[data-testid=log-export] a');
      await links.first().waitFor({ timeout: 30_000 });
      const href = (await links.first().getAttribute('href'))!;
      const file = await fetch(new URL(href, t.base));
      expect(file.status).toBe(200);
      expect((await file.arrayBuffer()).byteLength).toBeGreaterThan(0);
      await shot('node-logs');
    });

    step('unlocks with the node password typed into the dialog', async () => {
      await page.locator('[data-testid=locked-notice]').getByRole('button', { name: 'Unlock' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel('Node password').fill('wrong node password');
      await dialog.getByRole('button', { name: 'Unlock' }).click();
      await expect.poll(() => dialog.getByRole('alert').textContent()).not.toBe('');
      // The rest with the keyboard alone: the dialog closes on Escape, reopens on Enter, submits on Enter.
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      await page.locator('[data-testid=locked-notice]').getByRole('button', { name: 'Unlock' }).focus();
      await page.keyboard.press('Enter');
      await page.keyboard.type(NODE_PASSWORD);
      await page.keyboard.press('Enter');
      await page.getByText('The node is unlocked.').waitFor();
      await page.locator('[data-testid=node-status]', { hasText: 'Unlocked' }).waitFor();
      expect(await page.locator('[data-testid=locked-notice]').count()).toBe(0);
      await shot('node-page');
    });

    step('follows the node’s events as they happen: a change made elsewhere shows in Recent events without a reload', async () => {
      const navigations: string[] = [];
      const onNavigation = (f: { url(): string }) => f === page.mainFrame() && navigations.push(f.url());
      page.on('framenavigated', onNavigation);
      const events = page.locator('[data-testid=node-events]');
      await events.locator('li[data-event-type=NODE_UNLOCKED]').first().waitFor();
      // The page follows the event stream (its session, like every API call of the page).
      await expect.poll(() => t.server.events.hub.streams).toBeGreaterThan(0);
      const sent = await t.call(`/api/nodes/${nodeId}/webhooks/test`, { method: 'POST', token: alice.token });
      expect(sent.status, sent.text).toBe(200);
      // Sooner than any poll of the page, which does not reload the events anyway.
      await events.locator('li[data-event-type=TEST]').first().waitFor({ timeout: 5_000 });
      expect(await events.locator('li[data-event-type=TEST]').first().textContent()).toContain('Test event');
      expect(navigations).toEqual([]);
      page.off('framenavigated', onNavigation);
      await shot('node-events');
    });

    step('backs the unlocked node up from the page, lists it and downloads it; the node stays unlocked', async () => {
      await page.getByRole('button', { name: 'Back up now' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel('Node password').fill(NODE_PASSWORD);
      await dialog.getByRole('button', { name: 'Back up' }).click();
      await page.getByText('The backup is ready').waitFor({ timeout: 30_000 });
      const row = page.locator('[data-testid=backup-table] tbody tr').first();
      expect(await row.textContent()).toContain('Ready');
      const downloaded = page.waitForEvent('download');
      await row.getByRole('button', { name: 'Download' }).click();
      const file = await downloaded;
      const saved = join(downloads, 'node.rlnbackup');
      await file.saveAs(saved);
      const [backup] = (await t.call(`/api/nodes/${nodeId}/backups`, { token: alice.token })).json.backups;
      expect(readFileSync(saved).length).toBe(backup.sizeBytes);
      await page.locator('[data-testid=node-status]', { hasText: 'Unlocked' }).waitFor();
      await shot('node-backups');
      rmSync(saved);
    });

    step("shows the node's continuous state: its last write, its size and no pending writes", async () => {
      await page.goto(url(nodePath(nodeId)));
      // Unlocked, the node has written only its fence: no state change yet.
      await page.getByTestId('cs-last-write').filter({ hasText: 'None yet' }).waitFor();
      // A state change (a new address, through the node's bearer path): its store takes it first.
      const address = await fetch(`${t.config.nodeApiUrl}/nodes/${alice.id}/${nodeId}/address`, { method: 'POST', headers: { authorization: `Bearer ${alice.token}` } });
      expect(address.status).toBe(200);
      await page.reload();
      const card = page.getByTestId('continuous-state');
      await card.getByTestId('cs-pending').filter({ hasText: /^0$/ }).waitFor();
      const { store } = (await t.call(`/api/nodes/${nodeId}/continuous-state`, { token: alice.token })).json.data;
      expect(store.lastWriteAt).not.toBeNull();
      expect(await card.getByTestId('cs-enabled').textContent()).toBe('On');
      expect(await card.getByTestId('cs-size').textContent()).toBe(`${store.bytes} B in ${store.keys} keys`);
      expect(await card.getByTestId('cs-last-write').textContent()).not.toBe('None yet');
      expect(await card.locator('.notice').count()).toBe(0);
      await shot('node-continuous-state');
    });

    step("shows the node's VSS store beside its soft limit, and a notice once past it (writes still accepted)", async () => {
      // The node writes its state to its store (continuous state): values are put there as its
      // daemon would, at its URL and with its key (from the recovery phrase), beside its own state.
      const nodeUrl = await new SealedNodeVssUrls({ db: t.server.db, baseUrl: t.config.publicUrl, seal: t.server.services.unlockSeal }).urlFor(nodeId);
      const identity = vssIdentityFromMnemonic(phrase);
      const client = vssClient(nodeUrl, newVssKey(), { token: () => identity.token() });
      const measure = () => new VssJanitor({ db: t.server.db, blobs: t.server.services.vssBlobs, destroyedRetentionHours: 168, log: createLogger('silent') }).measure();
      const used = async () => (await t.call(`/api/nodes/${nodeId}`, { token: alice.token })).json.data.vss.usedBytes as number;
      expect((await client.put('s', [{ key: 'a', version: 0, value: Buffer.alloc(300) }])).status).toBe(200);
      await measure();
      const below = await used();
      expect(below).toBeLessThan(1000);
      await page.goto(url(nodePath(nodeId)));
      await page.locator('[data-testid=node-vss]', { hasText: `${below} B of 1000 B (soft limit)` }).waitFor();
      expect(await page.getByTestId('vss-limit-notice').count()).toBe(0);
      expect((await client.put('s', [{ key: 'b', version: 0, value: Buffer.alloc(1024) }])).status).toBe(200);
      await measure();
      const past = await used();
      await page.goto(url(nodePath(nodeId)));
      await page.locator('[data-testid=node-vss]', { hasText: `${(past / 1024).toFixed(1)} KiB of 1000 B (soft limit: past it, writes still accepted)` }).waitFor();
      expect(await page.getByTestId('vss-limit-notice').textContent()).toContain('The channel state store is past its limit.');
      await shot('node-vss-past-limit');
    });

    step('turns automatic unlock on with the node password and off again', async () => {
      const card = page.locator('[data-testid=auto-unlock]');
      const state = page.locator('[data-testid=auto-unlock-state]');
      expect(await state.textContent()).toMatch(/^Off\./);
      await card.getByRole('button', { name: 'Turn on' }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel('Node password').fill(NODE_PASSWORD);
      await dialog.getByRole('button', { name: 'Turn on' }).click();
      // The node is unlocked already: the page says the password is checked at its next start.
      await card.getByText('checked at its next start').waitFor();
      await state.getByText('On.').waitFor();
      expect((await t.call(`/api/nodes/${nodeId}`, { token: alice.token })).json.data.autoUnlock).toBe(true);
      await shot('node-auto-unlock');
      await card.getByRole('button', { name: 'Turn off' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Turn off' }).click();
      await state.getByText('Off.').waitFor();
      expect((await t.call(`/api/nodes/${nodeId}`, { token: alice.token })).json.data.autoUnlock).toBe(false);
    });

    step('connect page: downloads key, certificate and CA, the example command answers, revoke refuses it', async () => {
      await page.getByRole('link', { name: 'Connect' }).click();
      await page.waitForURL(url(`${nodePath(nodeId)}/connect`));
      expect(await page.getByTestId('mtls-url').textContent()).toBe(`${t.config.userNodeUrl}/nodes/${alice.id}/${nodeId}/`);
      expect(await page.getByTestId('bearer-url').textContent()).toBe(node.invoke_url);

      const saved: Promise<void>[] = [];
      const onDownload = (d: Download) => saved.push(d.saveAs(join(downloads, d.suggestedFilename())));
      page.on('download', onDownload);
      await page.getByRole('button', { name: 'Generate and download credentials' }).click();
      await page.getByText('Credentials downloaded.').waitFor();
      await expect.poll(() => saved.length).toBe(3);
      await Promise.all(saved);
      page.off('download', onDownload);
      const short = nodeId.slice(0, 8);
      expect(readdirSync(downloads).sort()).toEqual(['rln-cloud-ca.pem', `rln-${short}.key`, `rln-${short}.pem`].sort());
      expect(readFileSync(join(downloads, `rln-${short}.key`), 'utf8')).toContain('PRIVATE KEY-----');
      await page.locator('[data-testid=certs] tbody tr').first().waitFor();
      await shot('connect-page');

      const command = (await page.getByTestId('mtls-command').textContent())!;
      expect(command).toContain(`${t.config.userNodeUrl}/nodes/${alice.id}/${nodeId}/nodeinfo`);
      const answer = await run('sh', ['-c', `${command} --silent --show-error --fail-with-body`], { cwd: downloads });
      expect(JSON.parse(answer.stdout)).toHaveProperty('pubkey');

      const row = page.locator('[data-testid=certs] tbody tr').first();
      await row.getByRole('button', { name: 'Revoke' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
      await row.getByText('Revoked').waitFor();
      const refused = await run('sh', ['-c', `${command} --silent --show-error --fail-with-body`], { cwd: downloads }).then(
        () => undefined,
        (err) => err as { code: number; stdout: string },
      );
      expect(refused, 'the revoked certificate must be refused').toBeDefined();
    });

    step('creates a token shown once, sees its last use, and revokes it', async () => {
      await page.getByRole('link', { name: 'API tokens' }).click();
      await page.getByRole('heading', { name: 'API tokens', level: 1 }).waitFor();
      await page.getByLabel('Name').fill('billing-service');
      await page.getByRole('button', { name: 'Create token' }).click();
      const secret = (await page.getByTestId('token-secret').textContent())!;
      expect(secret).toMatch(/^rlnc_/);
      expect((await t.call('/api/nodes', { token: secret })).status).toBe(200);
      await page.reload();
      const row = page.locator('tr', { hasText: 'billing-service' });
      await row.waitFor();
      expect(await row.textContent()).not.toContain('never used');
      expect(await page.getByText(secret).count()).toBe(0);
      await shot('tokens');
      await row.getByRole('button', { name: 'Revoke' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
      await row.getByText('Revoked').waitFor();
      expect((await t.call('/api/nodes', { token: secret })).status).toBe(401);
    });

    step('creates a read-only token for one node and shows its scope', async () => {
      await page.getByLabel('Name').fill('dashboard');
      await page.getByLabel('Read-only').check();
      await page.locator('#token-nodes').getByLabel('web-shop').check();
      await page.getByRole('button', { name: 'Create token' }).click();
      const secret = (await page.getByTestId('token-secret').textContent())!;
      const row = page.locator('tr', { hasText: 'dashboard' });
      await row.getByText('Read-only · nodes: web-shop').waitFor();
      const listed = (await t.call('/api/tokens', { token: alice.token })).json.tokens.find((x: any) => x.name === 'dashboard');
      expect(listed).toMatchObject({ readOnly: true, nodeIds: [nodeId], access: 'all' });
      const stop = await t.call(`/api/nodes/${nodeId}/stop`, { method: 'POST', token: secret });
      expect(stop.json.error.code).toBe('forbidden_scope');
      await shot('tokens-scoped');
    });

    step('recovers a new node’s wallet from the first node’s recovery phrase, which the page never shows back', async () => {
      const created = await t.call('/api/nodes', { method: 'POST', token: alice.token, body: { name: 'web-recovered', network: 'regtest' } });
      const id = created.json.data.nodeId as string;
      await page.goto(url(nodePath(id)));
      const initNotice = page.locator('[data-testid=init-notice]');
      await initNotice.getByRole('button', { name: 'Recover from a recovery phrase' }).waitFor({ timeout: 60_000 });
      await initNotice.getByRole('button', { name: 'Recover from a recovery phrase' }).click();
      const dialog = page.getByRole('dialog');
      // Too few words: the node's refusal, in the dialog, without the words.
      await dialog.getByLabel('Recovery phrase').fill(phrase.split(' ').slice(0, 5).join(' '));
      await dialog.getByLabel('Password', { exact: true }).fill(NODE_PASSWORD);
      await dialog.getByLabel('The same password again').fill(NODE_PASSWORD);
      await dialog.getByRole('button', { name: 'Recover' }).click();
      await expect.poll(() => dialog.getByRole('alert').textContent()).toMatch(/mnemonic/i);
      expect(await dialog.getByRole('alert').textContent()).not.toContain(phrase.split(' ').slice(0, 5).join(' '));
      await dialog.getByLabel('Recovery phrase').fill(`${phrase}\n`);
      await dialog.getByRole('button', { name: 'Recover' }).click();
      await page.locator('[data-testid=recovered-notice]').waitFor();
      await page.locator('[data-testid=locked-notice]').waitFor();
      expect(await initNotice.count()).toBe(0);
      expect(await page.getByRole('dialog').count()).toBe(0);
      expect(await page.content()).not.toContain(phrase);
      expect((await t.call(`/api/nodes/${id}`, { token: alice.token })).json.data.initialized).toBe(true);
      await shot('node-recovered');
      // Unlocked while the first node still runs the same wallet: the page says so.
      await page.locator('[data-testid=locked-notice]').getByRole('button', { name: 'Unlock' }).click();
      await page.getByRole('dialog').getByLabel('Node password').fill(NODE_PASSWORD);
      await page.getByRole('dialog').getByRole('button', { name: 'Unlock' }).click();
      await expect.poll(() => page.locator('.notice-error').allTextContents()).toEqual([expect.stringContaining(`runs the wallet`)]);
      expect((await page.locator('.notice-error').textContent())!).toContain(nodeId);
    });

    step('a node whose storage was lost says so, and Recover brings it back without a wallet', async () => {
      const created = await t.call('/api/nodes', { method: 'POST', token: alice.token, body: { name: 'web-lost', network: 'regtest' } });
      const id = created.json.data.nodeId as string;
      await expect.poll(async () => (await t.call(`/api/nodes/${id}`, { token: alice.token })).json.data.status, { timeout: 60_000 }).toBe('RUNNING');
      const init = await t.call(`/api/nodes/${id}/init`, { method: 'POST', token: alice.token, body: { password: NODE_PASSWORD } });
      expect(init.status, init.text).toBe(200);
      rmSync(join(t.config.dataDir, 'nodes', id, 'storage'), { recursive: true, force: true });
      await page.goto(url(nodePath(id)));
      const lost = page.locator('[data-testid=storage-lost-notice]');
      await lost.waitFor({ timeout: 30_000 });
      await page.locator('[data-testid=node-status] [data-status=STORAGE_LOST]').waitFor();
      expect(await page.getByRole('button', { name: 'Stop' }).isHidden()).toBe(true);
      await shot('node-storage-lost');
      await lost.getByRole('button', { name: 'Recover' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Recover node' }).click();
      await page.locator('[data-testid=init-notice]').waitFor({ timeout: 60_000 });
      expect(await lost.count()).toBe(0);
      expect((await t.call(`/api/nodes/${id}`, { token: alice.token })).json.data).toMatchObject({ status: 'RUNNING', initialized: false });
    });

    step('error states: a POST without the CSRF header is refused, another user’s node is not found', async () => {
      const status = await page.evaluate(async () => {
        const r = await fetch('/api/nodes', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'csrf', network: 'regtest' }) });
        return { status: r.status, body: await r.json() };
      });
      expect(status).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });

      const bob = await t.createUser();
      const bobs = await t.call('/api/nodes', { method: 'POST', token: bob.token, body: { name: 'bobs', network: 'regtest' } });
      for (const path of [nodePath(bobs.json.data.nodeId), `${nodePath(bobs.json.data.nodeId)}/connect`, nodePath('f'.repeat(32))]) {
        const response = await page.goto(url(path));
        expect(response?.status(), path).toBe(404);
        await page.getByTestId('node-not-found').waitFor();
        expect(await page.getByText('bobs').count()).toBe(0);
      }
      await shot('node-not-found');
      // Without the event stream the page still follows the node, by its poll; and a button it
      // shows from before a change made elsewhere gets the API's refusal, shown as its message.
      await page.route('**/api/events/stream*', (r) => r.abort());
      await page.goto(url(nodePath(nodeId)));
      await page.getByRole('button', { name: 'Stop' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Stop node' }).click();
      await page.locator('[data-testid=node-status] [data-status=PAUSED]').waitFor({ timeout: 30_000 });
      await page.getByRole('button', { name: 'Stop' }).waitFor({ state: 'hidden' });
      // The API's refusal is shown as its message: destroy while... nothing runs; start twice instead.
      const startTwice = await t.call(`/api/nodes/${nodeId}/start`, { method: 'POST', token: alice.token });
      expect(startTwice.status).toBe(200);
      await page.getByRole('button', { name: 'Start' }).click();
      await page.getByRole('alert').waitFor();
      expect(await page.getByRole('alert').textContent()).toMatch(/already|in progress|running/i);
      await shot('node-refusal');
      await page.unroute('**/api/events/stream*');
    });

    step('shows "session expired" when the session ends, and signs out', async () => {
      await page.goto(url(nodePath(nodeId)));
      await page.locator('[data-testid=node-status]').waitFor();
      await t.server.db.query('DELETE FROM web_sessions');
      await page.getByTestId('session-expired').waitFor({ timeout: 15_000 });
      await shot('session-expired');
      await page.getByRole('link', { name: 'Sign in again' }).click();
      await page.getByLabel('Email').fill(alice.email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(url(nodePath(nodeId)));
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(/\/sign-in$/);
      expect((await context.cookies()).find((c) => c.name === 'rlnc_session')).toBeUndefined();
    });

    step('is readable on a phone', async () => {
      const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
      const p = await phone.newPage();
      await p.goto(url('/sign-in'));
      await p.getByLabel('Email').fill(alice.email);
      await p.getByLabel('Password').fill(PASSWORD);
      await p.getByRole('button', { name: 'Sign in' }).click();
      await p.getByRole('heading', { name: 'Nodes', level: 1 }).waitFor();
      await shot('phone-nodes', p);
      await p.goto(url(nodePath(nodeId)));
      await p.locator('[data-testid=node-status]').waitFor();
      await shot('phone-node', p);
      // Nothing wider than the screen: no sideways scrolling on a phone.
      expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await phone.close();
    });
  },
);
