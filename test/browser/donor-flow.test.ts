import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDonorAccount } from '../../src/daf/donor-accounts-service.js';
import { useChromium } from '../helpers/chromium.js';
import { createApiKey } from '../../src/api-keys/service.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { apiRequest } from '../helpers/gateway.js';
import { createConnect, directoryOrganizations, givingCaller, type TestConnect } from '../helpers/giving.js';
import { createStaff, type Staff } from '../helpers/oauth-server.js';
import { saveScreenshot } from '../helpers/screenshots.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * The donor flow in Chromium (docs/giving.md, "The donor flow", "The script's API"): a
 * nonprofit's page on another site (http://localhost:<port>, while the dashboard is at
 * 127.0.0.1) includes /connect.js; the donor clicks its button, walks the popup to the end for
 * each kind of DAF, and the page receives `almoner:success` (and `CHARIOT_SUCCESS`) with the
 * workflow session, whose row holds what the donor chose. Each walk returns the event's detail,
 * so capturing the session (POST /v1/grants, the API's side) can follow it.
 * UPDATE_SCREENSHOTS=1 writes the docs' screenshots (docs/giving-*.png).
 */

const { testDatabase: t, server, staff: nonprofit } = useOAuthServer();
const chromium = useChromium();
let pageServer: http.Server;
let pageOrigin: string;
let connect: TestConnect;
let fund: Staff;
let fundName: string;

interface SuccessDetail {
  workflowSessionId: string;
  grantIntent: { amount: number; frequency: string; fundId: string; fundName: string; supported: boolean };
}
interface SeenEvent {
  type: string;
  detail: unknown;
}

/** The nonprofit's page: the script from the dashboard, a button, and a record of the events it gets. */
function nonprofitPage(cid: string): string {
  return `<!doctype html><html><head><title>Give</title></head><body>
<h1>Support us</h1>
<button type="button" data-almoner-cid="${cid}" data-almoner-amount="25000">Give from your DAF</button>
<script>
  window.seen = [];
  for (const type of ['almoner:success', 'CHARIOT_SUCCESS', 'almoner:exit', 'CHARIOT_EXIT'])
    window.addEventListener(type, (event) => window.seen.push({ type, detail: event.detail }));
</script>
<script src="${server.urls.sandboxDashboard}/connect.js"></script>
</body></html>`;
}

beforeAll(async () => {
  fund = await createStaff(t.db, { kind: 'fund_provider' });
  fundName = (await t.db.selectFrom('organizations').select('name').where('id', '=', fund.orgId).executeTakeFirstOrThrow()).name;
  connect = await createConnect(t.db, {
    ownerOrganizationId: nonprofit.orgId,
    environment: 'sandbox',
    recipientName: 'Riverside Community Food Bank',
  });
  pageServer = http.createServer((req, res) => {
    const cid = new URL(req.url ?? '/', 'http://localhost').searchParams.get('cid') ?? connect.cid;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(nonprofitPage(cid));
  });
  await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', resolve));
  // Another site than the dashboard's 127.0.0.1: the flow's cookie is SameSite=Strict.
  pageOrigin = `http://localhost:${(pageServer.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => pageServer?.close(resolve));
});

// Expressions evaluated in the page (the tests' types know no DOM).
const seen = (page: Page) => page.evaluate('window.seen') as Promise<SeenEvent[]>;
const seenAtLeast = (page: Page, n: number) => page.waitForFunction(`window.seen.length >= ${n}`);

/** Opens the nonprofit's page and clicks its button: the popup the script opened. */
async function openFlow(page: Page, { cid = connect.cid, reload = true } = {}): Promise<Page> {
  if (reload) await page.goto(`${pageOrigin}/?cid=${cid}`);
  const [popup] = await Promise.all([page.waitForEvent('popup'), page.getByRole('button', { name: 'Give from your DAF' }).click()]);
  await popup.waitForLoadState();
  expect(new URL(popup.url()).searchParams.get('origin')).toBe(pageOrigin);
  return popup;
}

async function next(popup: Page, name: string): Promise<void> {
  await Promise.all([popup.waitForNavigation(), popup.getByRole('button', { name }).click()]);
}

async function chooseDaf(
  popup: Page,
  search: string,
  daf: string,
  screenshot?: string,
  recipient = 'Riverside Community Food Bank',
): Promise<void> {
  await expect.poll(() => popup.locator('.flow-recipient').textContent()).toBe(recipient);
  await popup.getByLabel('Search DAF sponsors').fill(search);
  await Promise.all([popup.waitForNavigation(), popup.getByLabel('Search DAF sponsors').press('Enter')]);
  await popup.getByLabel(daf).check();
  if (screenshot) await saveScreenshot(popup, screenshot);
  await next(popup, 'Continue');
}

async function chooseAmount(popup: Page, dollars: string, monthly: boolean, screenshot?: string): Promise<void> {
  // The page's button asked for $250.00: the amount is there already.
  expect(await popup.getByLabel('Amount in US dollars').inputValue()).toBe('250');
  await popup.getByLabel('Amount in US dollars').fill(dollars);
  await popup.getByLabel(monthly ? 'Every month' : 'One time').check();
  if (screenshot) await saveScreenshot(popup, screenshot);
  await next(popup, 'Continue');
}

/** Authorizes on the confirmation page; the page's success event, once the popup has told it. */
async function authorizeAndWait(page: Page, popup: Page, screenshot?: string): Promise<SuccessDetail> {
  await expect.poll(() => popup.locator('h1').textContent()).toBe('Confirm your grant');
  if (screenshot) await saveScreenshot(popup, screenshot);
  await popup.getByRole('button', { name: 'Authorize' }).click();
  await page.waitForFunction("window.seen.some((e) => e.type === 'almoner:success')");
  const events = await seen(page);
  const success = events.find((e) => e.type === 'almoner:success')!;
  // The published name too, with the same detail.
  expect(events.find((e) => e.type === 'CHARIOT_SUCCESS')?.detail).toEqual(success.detail);
  return success.detail as SuccessDetail;
}

const sessionOf = (id: string) => t.db.selectFrom('workflow_sessions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const dafIdOf = async (name: string) =>
  (await t.db.selectFrom('dafs').select('id').where('org_name', '=', name).executeTakeFirstOrThrow()).id;

describe('the donor flow from a nonprofit’s page', () => {
  it('the simulated DAF: sign in, confirm, and the page gets the session; the popup closes', async () => {
    const page = await chromium.context.newPage();
    const popup = await openFlow(page);
    await chooseDaf(popup, 'sandbox', 'Sandbox DAF (simulated sign-in)', 'giving-choose.png');
    await chooseAmount(popup, '1200', true, 'giving-amount.png');
    await expect.poll(() => popup.locator('h1').textContent()).toContain('Sign in to Sandbox DAF');
    await popup.getByLabel('Username').fill('any-donor');
    await popup.getByLabel('Password').fill('anything');
    await saveScreenshot(popup, 'giving-simulated-sign-in.png');
    await next(popup, 'Sign in');
    expect(await popup.locator('.facts').textContent()).toContain('$25,000.00');
    const success = await authorizeAndWait(page, popup, 'giving-confirm.png');
    await expect.poll(() => popup.isClosed()).toBe(true);
    expect(success.grantIntent).toEqual({
      amount: 120000,
      frequency: 'monthly',
      fundId: await dafIdOf('Sandbox DAF (simulated sign-in)'),
      fundName: 'Sandbox DAF (simulated sign-in)',
      supported: true,
    });
    const session = await sessionOf(success.workflowSessionId);
    expect(session).toMatchObject({
      connect_id: connect.cid,
      amount: '120000',
      frequency: 'monthly',
      donor_balance: '2500000',
      captured_at: null,
    });
    // The Connect's owner captures the monthly gift with its API key.
    const key = (await createApiKey(t.db, { org: nonprofit.ein, environment: 'sandbox' })).key;
    const recurring = await apiRequest(server, 'sandbox', 'POST', '/v1/recurring_grants', {
      bearer: key,
      json: { workflowSessionId: success.workflowSessionId, amount: 120_000, frequency: 'MONTHLY' },
    });
    expect(recurring.status, JSON.stringify(recurring.body)).toBe(201);
    expect(recurring.body).toMatchObject({ workflowSessionId: success.workflowSessionId, amount: 120_000, frequency: 'MONTHLY' });
    // The popup's closing after success is no exit.
    await page.waitForTimeout(600);
    expect((await seen(page)).map((e) => e.type)).toEqual(['almoner:success', 'CHARIOT_SUCCESS']);
  });

  it('an unintegrated DAF: the donor’s details, then what to ask the DAF; the page gets the session of the recorded grant', async () => {
    const page = await chromium.context.newPage();
    const popup = await openFlow(page);
    await chooseDaf(popup, 'vanguard', 'Vanguard Charitable');
    await chooseAmount(popup, '750', false);
    await popup.getByLabel('First name').fill('Ada');
    await popup.getByLabel('Last name').fill('Lovelace');
    await popup.getByLabel('Email').fill('ada@example.org');
    await popup.getByLabel('Street address').fill('1 Main St');
    await popup.getByLabel('City').fill('Denver');
    await saveScreenshot(popup, 'giving-donor-details.png');
    await next(popup, 'Continue');
    const success = await authorizeAndWait(page, popup);
    expect(popup.isClosed()).toBe(false);
    const session = await sessionOf(success.workflowSessionId);
    const grant = await t.db
      .selectFrom('unintegrated_grants')
      .selectAll()
      .where('id', '=', session.unintegrated_grant_id!)
      .executeTakeFirstOrThrow();
    expect(await popup.locator('.tracking-id').textContent()).toBe(grant.tracking_id);
    expect(await popup.locator('.facts').textContent()).toContain(`${connect.ein.slice(0, 2)}-${connect.ein.slice(2)}`);
    await saveScreenshot(popup, 'giving-unintegrated-done.png');
    expect(success.grantIntent).toMatchObject({ amount: 75000, frequency: 'one_time', fundName: 'Vanguard Charitable', supported: false });
    expect(session).toMatchObject({ amount: '75000', donor: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.org' } });
    expect(grant).toMatchObject({ status: 'Unknown', amount: '75000', organization_id: nonprofit.orgId });
    const closed = popup.waitForEvent('close');
    await popup.getByRole('button', { name: 'Done' }).click();
    await closed;
  });

  it('an integrated DAF: the donor’s e-mail finds their account at the fund provider', async () => {
    const account = await openDonorAccount(
      t.db,
      { environment: 'sandbox', fundProviderId: fund.orgId },
      { donor: { email: 'grace@example.org' } },
    );
    const page = await chromium.context.newPage();
    const popup = await openFlow(page);
    await chooseDaf(popup, fundName.slice(-6), fundName);
    await chooseAmount(popup, '300', false);
    await popup.getByLabel('First name').fill('Grace');
    await popup.getByLabel('Last name').fill('Hopper');
    await popup.getByLabel('Email').fill('grace@example.org');
    await saveScreenshot(popup, 'giving-integrated-details.png');
    await next(popup, 'Continue');
    const success = await authorizeAndWait(page, popup);
    expect(success.grantIntent).toMatchObject({ amount: 30000, fundId: await dafIdOf(fundName), supported: true });
    const session = await sessionOf(success.workflowSessionId);
    expect(session).toMatchObject({ donor_account_id: account.id, amount: '30000', frequency: 'one_time' });
    // Its capture, the grant request at the fund provider and the money: the tests below.
  });

  it('tells the page `closed` when the donor closes the popup, and `canceled` when they cancel', async () => {
    const page = await chromium.context.newPage();
    const popup = await openFlow(page);
    await popup.close();
    await seenAtLeast(page, 2);
    expect(await seen(page)).toEqual([
      { type: 'almoner:exit', detail: { reason: 'closed' } },
      { type: 'CHARIOT_EXIT', detail: { reason: 'closed' } },
    ]);
    const again = await openFlow(page, { reload: false });
    const closed = again.waitForEvent('close');
    await again.getByRole('button', { name: 'Cancel and go back' }).click();
    await closed;
    await seenAtLeast(page, 4);
    expect((await seen(page)).slice(2)).toEqual([
      { type: 'almoner:exit', detail: { reason: 'canceled' } },
      { type: 'CHARIOT_EXIT', detail: { reason: 'canceled' } },
    ]);
  });

  it('an unknown Connect: the popup says so and the page gets `error`', async () => {
    const page = await chromium.context.newPage();
    const popup = await openFlow(page, { cid: 'connect_unknown' });
    expect(await popup.locator('h1').textContent()).toBe('This giving link does not work');
    await seenAtLeast(page, 1);
    expect((await seen(page))[0]).toMatchObject({ type: 'almoner:exit', detail: { reason: 'error' } });
  });

  it('is completed with the keyboard alone at 390 px, every field labelled, nothing wider than the screen', async () => {
    const context = await chromium.browser.newContext({ viewport: { width: 390, height: 844 } });
    try {
      const page = await context.newPage();
      await page.goto(`${server.urls.sandboxDashboard}/connect/${connect.cid}?origin=${encodeURIComponent(pageOrigin)}&amount=5000`);
      const checkPage = async () => {
        const report = await page.evaluate(`({
          width: document.documentElement.scrollWidth,
          unlabelled: [...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
            .filter((el) => el.labels.length === 0)
            .map((el) => el.outerHTML),
        })`);
        expect(report).toEqual({ width: 390, unlabelled: [] });
      };
      /** Tabs until the focused element matches, as a keyboard user would. */
      const tabTo = async (match: (el: { tag: string; label: string; type: string }) => boolean) => {
        for (let i = 0; i < 40; i += 1) {
          await page.keyboard.press('Tab');
          const focused = (await page.evaluate(`(() => {
            const el = document.activeElement;
            return {
              tag: el ? el.tagName.toLowerCase() : '',
              type: (el && el.type) || '',
              label: ((el && el.labels && el.labels[0] ? el.labels[0].textContent : el && el.textContent) || '').trim(),
            };
          })()`)) as { tag: string; label: string; type: string };
          if (match(focused)) return;
        }
        throw new Error('not reachable with Tab');
      };
      const submitWithEnter = async () => Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
      await checkPage();
      await tabTo((el) => el.label === 'Search DAF sponsors');
      await page.keyboard.type('sandbox');
      await submitWithEnter();
      await tabTo((el) => el.type === 'radio');
      await page.keyboard.press('Space');
      await tabTo((el) => el.tag === 'button' && el.label === 'Continue');
      await submitWithEnter();
      await checkPage();
      await tabTo((el) => el.label === 'Amount in US dollars');
      expect(await page.evaluate('document.activeElement.value')).toBe('50');
      await submitWithEnter();
      await checkPage();
      await tabTo((el) => el.label === 'Username');
      await page.keyboard.type('keyboard');
      await tabTo((el) => el.label === 'Password');
      await page.keyboard.type('user');
      await submitWithEnter();
      await checkPage();
      await tabTo((el) => el.tag === 'button' && el.label === 'Authorize');
      await submitWithEnter();
      await checkPage();
      expect(await page.locator('h1').textContent()).toBe('Thank you');
      expect(new URL(page.url()).pathname).toBe(`/connect/${connect.cid}/done`);
      await saveScreenshot(page, 'giving-done-390.png');
      // The details page of an unintegrated DAF, the longest form, fits too.
      await page.goto(`${server.urls.sandboxDashboard}/connect/${connect.cid}?origin=${encodeURIComponent(pageOrigin)}`);
      await page.getByLabel('Fidelity Charitable').check();
      await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Continue' }).click()]);
      await page.getByLabel('Amount in US dollars').fill('100');
      await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Continue' }).click()]);
      expect(await page.locator('h1').textContent()).toBe('Your details');
      await checkPage();
    } finally {
      await context.close();
    }
  });
});

/**
 * From the donor to the nonprofit's account (docs/giving.md): a platform's Connect for a
 * nonprofit that is on Almoner. A donor gives from an integrated DAF (a fund provider on Almoner)
 * in the popup, and another from an unintegrated one; the platform's server captures the first
 * with its API key; the donor's one-time code (e-mailed at the capture, the account being new)
 * is verified by the fund provider, which then submits the grant request through the DAF API;
 * the sandbox completes the grant, and the money is in the nonprofit's processing account.
 */
describe('from a donor’s gift to the nonprofit’s account', () => {
  type Keys = Awaited<ReturnType<typeof givingCaller>>;
  let platform: Keys;
  let member: Keys;
  let fundKey: string;
  let memberConnect: string;

  const api = (bearer: string, method: string, path: string, json?: unknown) =>
    apiRequest(server, 'sandbox', method, path, { bearer, json });
  async function ok(bearer: string, method: string, path: string, status: number, json?: unknown) {
    const res = await api(bearer, method, path, json);
    expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBe(status);
    return res.body as Record<string, unknown>;
  }

  beforeAll(async () => {
    const directory = await directoryOrganizations(t.db, [{ ein: '861000777', name: 'LAKEVIEW LITERACY PROJECT' }]);
    platform = await givingCaller(t.db, '86-2000777', 'Givewell Forms', 'platform');
    member = await givingCaller(t.db, '86-1000777', 'Lakeview Literacy Project', 'nonprofit');
    fundKey = (await createApiKey(t.db, { org: fund.ein, environment: 'sandbox' })).key;
    const connect = await ok(platform.sandbox, 'POST', '/v1/connects', 201, {
      organization_id: directory.get('861000777'),
      contact: { email: 'forms@example.org' },
      name: 'Lakeview donate page',
    });
    memberConnect = connect.id as string;
  });

  it('an integrated DAF: captured by the platform, verified and submitted by the fund provider, completed, paid into the nonprofit’s account', async () => {
    const page = await chromium.context.newPage();
    const popup = await openFlow(page, { cid: memberConnect });
    await chooseDaf(popup, fundName.slice(-6), fundName, undefined, 'LAKEVIEW LITERACY PROJECT');
    await chooseAmount(popup, '400', false);
    await popup.getByLabel('First name').fill('Lin');
    await popup.getByLabel('Last name').fill('Park');
    await popup.getByLabel('Email').fill('lin.park@example.org');
    await next(popup, 'Continue');
    const success = await authorizeAndWait(page, popup);

    // The platform's server captures the session with its API key: a grant request at the fund provider.
    const grant = await ok(platform.sandbox, 'POST', '/v1/grants', 201, {
      workflowSessionId: success.workflowSessionId,
      amount: 40_000,
      applicationFeeAmount: 1_000,
    });
    expect(grant).toMatchObject({
      status: 'awaiting_account_approval',
      amount: 40_000,
      paymentChannel: 'direct',
      email: 'lin.park@example.org',
    });
    const replay = await ok(platform.sandbox, 'POST', '/v1/grants', 200, { workflowSessionId: success.workflowSessionId, amount: 40_000 });
    expect(replay.id).toBe(grant.id);

    // The donor's account is new: its one-time code was e-mailed; the donor gives it to the fund provider, which verifies it.
    const mail = await t.db
      .selectFrom('outbound_mail')
      .select('body')
      .where('recipient', '=', 'lin.park@example.org')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    const code = /one-time code: (\S+)/.exec(mail.body)![1]!;
    const account = await ok(fundKey, 'POST', '/v1/authorization_tokens/verify', 200, { code });
    expect(account.status).toBe('approved');
    expect((await ok(platform.sandbox, 'GET', `/v1/grants/${grant.id as string}`, 200)).status).toBe('awaiting_daf_submission');

    // The fund provider submits the grant request through the DAF API: the grant is initiated.
    const requests = (await ok(fundKey, 'GET', `/v1/grant_requests?donor_account_id=${account.id as string}`, 200)).results as {
      id: string;
    }[];
    expect(requests).toHaveLength(1);
    await ok(fundKey, 'POST', `/v1/grant_requests/${requests[0]!.id}/submit`, 200, { external_grant_id: 'LAKE-0001' });
    const initiated = await ok(platform.sandbox, 'GET', `/v1/grants/${grant.id as string}`, 200);
    expect(initiated).toMatchObject({ status: 'initiated', externalGrantId: 'LAKE-0001' });
    expect((initiated.statuses as { status: string }[]).map((s) => s.status)).toEqual([
      'awaiting_account_approval',
      'awaiting_daf_submission',
      'initiated',
    ]);

    // The DAF's money arrives (the sandbox's simulation): the nonprofit's processing account holds it, less the platform's fee.
    expect((await ok(platform.sandbox, 'POST', `/v1/simulations/grants/${grant.id as string}/complete`, 200)).status).toBe('completed');
    const balanceOf = async (bearer: string) => {
      const accounts = (await ok(bearer, 'GET', '/v1/financial_accounts', 200)).results as { id: string; account_type: string }[];
      const processing = accounts.find((a) => a.account_type === 'processing')!;
      return (await ok(bearer, 'GET', `/v1/financial_accounts/${processing.id}/balance`, 200)).current_balance;
    };
    expect(await balanceOf(member.sandbox)).toBe(39_000);
    expect(await balanceOf(platform.sandbox)).toBe(1_000);
    expect(await verifyLedger(t.db)).toMatchObject({ ok: true });

    // The platform's events tell the grant's story, each written with its change.
    const events = (await ok(platform.sandbox, 'GET', '/v1/events?limit=100', 200)).results as {
      category: string;
      associated_object_id: string;
    }[];
    const ofGrant = events.filter((e) => e.associated_object_id === grant.id).map((e) => e.category);
    expect(ofGrant.sort()).toEqual(['grant.created', 'grant.updated', 'grant.updated', 'grant.updated']);
  });

  it('an unintegrated DAF: the platform lists the recorded grant, and capturing its session is refused', async () => {
    const page = await chromium.context.newPage();
    const popup = await openFlow(page, { cid: memberConnect });
    await chooseDaf(popup, 'fidelity', 'Fidelity Charitable', undefined, 'LAKEVIEW LITERACY PROJECT');
    await chooseAmount(popup, '250', false);
    await popup.getByLabel('First name').fill('Omar');
    await popup.getByLabel('Last name').fill('Haddad');
    await popup.getByLabel('Email').fill('omar@example.org');
    await next(popup, 'Continue');
    const success = await authorizeAndWait(page, popup);
    const listed = (await ok(platform.sandbox, 'GET', `/v1/unintegrated_grants?connect_id=${memberConnect}`, 200)).results as Record<
      string,
      unknown
    >[];
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({
      workflowSessionId: success.workflowSessionId,
      amount: 25_000,
      status: 'Unknown',
      paymentChannel: 'offline',
      firstName: 'Omar',
    });
    await ok(platform.sandbox, 'POST', '/v1/grants', 409, { workflowSessionId: success.workflowSessionId, amount: 25_000 });
    const events = (await ok(platform.sandbox, 'GET', '/v1/events?limit=100', 200)).results as {
      category: string;
      associated_object_id: string;
    }[];
    expect(events.filter((e) => e.associated_object_id === listed[0]!.id).map((e) => e.category)).toEqual(['unintegrated_grant.created']);
  });
});
