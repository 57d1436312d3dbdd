/**
 * Every hosted page fits a phone and a desktop (docs/testing.md, "Layout at 390 and 1280 px"):
 * each page of the sign-in, authorization, dashboard, invitation, password-reset, sign-out and donor
 * flows is opened in Chromium with enough realistic data for overflow to show (long e-mail
 * addresses and names, many audit rows, several sessions, keys, passkeys, webhooks and bank
 * accounts), then laid out at 390 and at 1280 px wide. A page fails when the document is wider
 * than the viewport, a visible element reaches past its edge or sticks out of the element it
 * is in, or text runs out of its block; the failure names the page, the width and the
 * element. LAYOUT_SCREENSHOTS=<dir> also writes each render there, to look at.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { addMember } from '../../src/accounts/memberships.js';
import { inviteMember } from '../../src/accounts/invitations.js';
import { MIN_PASSWORD_PARAMS } from '../../src/accounts/passwords.js';
import { addOrganization, addUser } from '../../src/accounts/service.js';
import { createApiKey, revokeApiKey } from '../../src/api-keys/service.js';
import { recordAudit } from '../../src/audit/audit-log.js';
import { TableMailSender } from '../../src/mail/sender.js';
import { nextCode, rememberRecoveryCodes, setupCode } from '../helpers/authenticator.js';
import { FormBrowser } from '../helpers/browser.js';
import { launchChromium } from '../helpers/chromium.js';
import { FAPI_REDIRECT, push, registerFapiClient } from '../helpers/fapi.js';
import { createAccount } from '../helpers/fdx.js';
import { createConnect } from '../helpers/giving.js';
import { directoryOrganization, fundGrantmaker, pendingDisbursement } from '../helpers/grantmaking.js';
import { approveDisbursement } from '../../src/grantmaking/disbursements-service.js';
import { authorizationRequest, endpoints } from '../helpers/flow.js';
import { invitationMail } from '../helpers/invitations.js';
import { resetLinksFor } from '../helpers/password-reset.js';
import { SoftwarePasskey } from '../helpers/software-passkey.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

const REDIRECT = 'https://grants.example.org/oauth/callback';
const SANDBOX_REDIRECT = 'http://127.0.0.1:9999/callback';
const { server, staff, clients } = useOAuthServer({
  // Passkey buttons show only where WebAuthn works: at a name, not an IP address.
  dashboardsAtLocalhost: true,
  clients: {
    reporting: {
      environment: 'production',
      name: 'Grantwise Reporting & Compliance Suite',
      redirectUris: [REDIRECT],
      scopes: ['openid', 'offline_access', 'read_only', 'read_write'],
    },
    ledger: {
      environment: 'production',
      name: 'Ledgerly Bookkeeping for Nonprofits',
      subjectType: 'organization',
      redirectUris: [REDIRECT],
      scopes: ['offline_access', 'read_only', 'read_write'],
    },
    sandboxApp: {
      environment: 'sandbox',
      name: 'Grantwise Reporting (test)',
      redirectUris: [SANDBOX_REDIRECT],
      scopes: ['openid', 'read_only', 'read_write'],
    },
  },
});

const WIDTHS = [390, 1280] as const;
const ORG_NAME = 'Riverside Community Food Pantry and Family Support Services';
const FUND_NAME = 'Community Foundation of the Greater Riverside Valley';
const OWNER_EMAIL = 'margaret.okonkwo-fitzgerald@riverside-community-food-pantry.org';
const ADMIN_EMAIL = 'adam.brooks-delacroix@riverside-community-food-pantry.org';
const MEMBER_EMAIL = 'maya.chen.volunteer.coordinator@riverside-community-food-pantry.org';
const READER_EMAIL = 'ravi.patel.board-treasurer@riverside-community-food-pantry.org';
const RESETTER_EMAIL = 'jordan.lee-washington.development@riverside-community-food-pantry.org';
const NEWCOMER_EMAIL = 'alexandra.konstantinopoulou-hernandez@riverside-community-food-pantry.org';
const AGENTS = [
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:124.0) Gecko/20100101 Firefox/124.0',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/123.0.0.0 Mobile Safari/537.36',
];

let browser: Browser;
const contexts: BrowserContext[] = [];
const shots = process.env.LAYOUT_SCREENSHOTS;
const dashed = (ein: string) => `${ein.slice(0, 2)}-${ein.slice(2)}`;
const FUND_EIN = '870654321';
const GRANTMAKER_EIN = '880765432';
const GRANTMAKER_NAME = 'The Riverside Valley Families and Children Charitable Foundation';
const users = {} as Record<'owner' | 'admin' | 'member' | 'reader' | 'resetter', { email: string; password: string; id: string }>;

/**
 * Runs in the page (a string: the test's tsconfig has no DOM types). The document's overflow,
 * then each visible element that reaches past the viewport's right (or left) edge, or sticks
 * out of the right side of the element it is in (a select wider than its field, a button over
 * its neighbour), only the outermost of a nest of them, described by its tag, id, classes and
 * first words.
 */
const OVERFLOWS = String.raw`(() => {
  const root = document.documentElement;
  const edge = root.clientWidth;
  const describe = (el) => {
    const classes = typeof el.className === 'string' && el.className.trim() ? '.' + el.className.trim().split(/\s+/).join('.') : '';
    const text = (el.textContent || el.getAttribute('aria-label') || '').replace(/\s+/g, ' ').trim().slice(0, 48);
    // getAttribute: a form's .id is its field named "id", if it has one.
    const id = el.getAttribute('id');
    return el.tagName.toLowerCase() + (id ? '#' + id : '') + classes + (text ? ' "' + text + '"' : '');
  };
  // Inside a box clipped to a pixel or two: there for screen readers only (.visually-hidden, a table's hidden headings).
  const seen = new Map();
  const unseen = (el) => {
    if (!el || el === document.body) return false;
    if (!seen.has(el))
      seen.set(el, (getComputedStyle(el).overflowX !== 'visible' && el.getBoundingClientRect().width <= 2) || unseen(el.parentElement));
    return seen.get(el);
  };
  const found = [];
  if (root.scrollWidth > edge) found.push('the document is ' + root.scrollWidth + ' px wide, the viewport ' + edge);
  const flagged = new Set();
  for (const el of document.body.querySelectorAll('*')) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.height === 0 || getComputedStyle(el).visibility === 'hidden' || unseen(el)) continue;
    const container = el.parentElement.getBoundingClientRect();
    const past = box.right > edge + 0.5 || box.left < -0.5;
    const out = el.parentElement !== document.body && getComputedStyle(el).position !== 'absolute' && box.right > container.right + 1;
    if (!past && !out) continue;
    flagged.add(el);
    let outer = el.parentElement;
    while (outer && !flagged.has(outer)) outer = outer.parentElement;
    if (outer) continue;
    const where = past
      ? 'spans ' + Math.round(box.left) + '-' + Math.round(box.right) + ' px, in '
      : 'sticks out ' + Math.round(box.right - container.right) + ' px to the right of ';
    found.push(describe(el) + ' ' + where + describe(el.parentElement).slice(0, 60));
  }
  // Text that runs out of its block (a long address in a heading), unless cut short on purpose (an ellipsis).
  const texts = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let text = texts.nextNode(); text; text = texts.nextNode()) {
    if (!text.textContent.trim() || text.parentElement.closest('script, style, noscript') || unseen(text.parentElement)) continue;
    let block = text.parentElement;
    while (/^(inline|contents)/.test(getComputedStyle(block).display)) block = block.parentElement;
    let outer = block;
    while (outer && !flagged.has(outer)) outer = outer.parentElement;
    if (outer || getComputedStyle(block).textOverflow === 'ellipsis') continue;
    const range = document.createRange();
    range.selectNodeContents(text);
    const right = Math.max(...[...range.getClientRects()].map((r) => r.right));
    const box = block.getBoundingClientRect();
    if (right <= edge + 0.5 && right <= box.right + 1) continue;
    flagged.add(block);
    found.push(describe(block) + ' has text running ' + Math.round(right - Math.min(edge, box.right)) + ' px out of it: "' + text.textContent.trim().slice(0, 48) + '"');
  }
  return found;
})()`;

/** Every layout problem met so far, by page and width; each test asserts there are none of its own. */
let problems: string[] = [];

/** Lays `page` out at each width and notes what overflows, naming the page; leaves it at 1280 px. */
async function check(page: Page, name: string): Promise<void> {
  await page.waitForLoadState('load');
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    const found = (await page.evaluate(OVERFLOWS)) as string[];
    problems.push(...found.map((what) => `${name} at ${width} px: ${what}`));
    if (shots) {
      fs.mkdirSync(shots, { recursive: true });
      await page.screenshot({ path: path.join(shots, `${name.replace(/[^a-z0-9]+/gi, '-')}-${width}.png`), fullPage: true });
    }
  }
}

/** What the test found in its own pages (and clears them for the next). */
function expectNoOverflow(): void {
  const found = problems;
  problems = [];
  expect(found, `pages that overflow:\n${found.join('\n')}`).toEqual([]);
}

async function newPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  contexts.push(context);
  return context.newPage();
}

let stranger: Page | undefined;
/** A browser with no cookies: one context, its cookies cleared for each new visitor. */
async function visitor(): Promise<Page> {
  stranger ??= await newPage();
  await stranger.context().clearCookies();
  return stranger;
}

/** Clicks a button that leaves the page and waits for the next (or for the redirect the browser cannot follow). */
async function press(page: Page, name: string | RegExp): Promise<void> {
  await Promise.all([
    page.waitForNavigation({ timeout: 15_000 }).catch(() => undefined),
    page.getByRole('button', { name, exact: typeof name === 'string' }).click(),
  ]);
}

/**
 * Approves, and waits until the browser has been sent back to the application (whose address
 * it cannot reach: its error page) so that the next navigation is not cut short by it.
 */
async function approve(page: Page): Promise<URL> {
  const leaving = page.waitForRequest((request) => !/^http:\/\/(localhost|127\.0\.0\.1)[:/]/.test(request.url()), { timeout: 15_000 });
  const settled = page.waitForEvent('framenavigated', {
    predicate: (frame) => frame === page.mainFrame() && frame.url().startsWith('chrome-error:'),
    timeout: 15_000,
  });
  await page.getByRole('button', { name: 'Approve' }).click();
  const [request] = await Promise.all([leaving, settled]);
  return new URL(request.url());
}

async function heading(page: Page): Promise<string> {
  return ((await page.getByRole('heading', { level: 1 }).first().textContent()) ?? '').trim();
}

async function fillSignIn(page: Page, user: { email: string; password: string }): Promise<void> {
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password', { exact: true }).fill(user.password);
  await press(page, 'Sign in');
}

/** Opens the authorization endpoint for a standard client (a navigation that may end at the client, never served). */
async function openAuthorization(
  page: Page,
  client: { client_id: string },
  scope: string,
  environment: 'production' | 'sandbox' = 'production',
) {
  const { url } = await authorizationRequest(server, {
    environment,
    clientId: client.client_id,
    redirectUri: environment === 'sandbox' ? SANDBOX_REDIRECT : REDIRECT,
    scope,
  });
  await page.goto(url.toString()).catch((error: Error) => {
    if (!/ERR_NAME_NOT_RESOLVED|ERR_CONNECTION_REFUSED/.test(error.message)) throw error;
  });
}

/** Signs a user in with a User-Agent of its own (an earlier browser on the Security page's list), from another address. */
async function signInElsewhere(user: { email: string; password: string }, agent: string, ip: string): Promise<void> {
  const agentBrowser = new FormBrowser(() => false, { 'user-agent': agent });
  const form = await agentBrowser.request(`${server.urls.dashboard}/sign-in?next=/account`);
  const landed = await agentBrowser.submit(form, '/sign-in', { email: user.email, password: user.password });
  if (!landed.url.pathname.startsWith('/account')) throw new Error(`the sign-in as ${user.email} failed (${landed.status})`);
  await server.db
    .updateTable('browser_sessions')
    .set({ ip })
    .where('user_agent', '=', agent)
    .where('user_id', '=', (await server.db.selectFrom('users').select('id').where('email', '=', user.email).executeTakeFirstOrThrow()).id)
    .execute();
}

/** The fund provider's webhook endpoints, with long URLs, in each status. */
const WEBHOOKS = [
  ['https://hooks.community-foundation-riverside-valley.example.org/almoner/donor-advised-funds/events', 'active'],
  ['https://integrations.example.org/webhooks/v2/almoner?tenant=riverside-valley-foundation', 'requires_attention'],
  ['https://crm.example.org/inbound/almoner', 'disabled'],
] as const;

/** Webhooks of the fund provider: endpoints with long URLs, and their deliveries. */
async function addWebhooks(fundId: string): Promise<void> {
  const db = server.db;
  for (const [i, [url, status]] of WEBHOOKS.entries()) {
    const id = `evtsub_layout${i}`;
    await db
      .insertInto('event_subscriptions')
      .values({ id, environment: 'production', organization_id: fundId, url, category: 'grant.updated', status, signing_secret: 'sealed' })
      .execute();
    for (let n = 0; n < 3; n += 1) {
      const eventId = `evt_layout${i}${n}`;
      await db
        .insertInto('events')
        .values({
          id: eventId,
          environment: 'production',
          organization_id: fundId,
          category: 'grant.updated',
          associated_object_id: `grant_${i}${n}`,
          associated_object_type: 'grant',
        })
        .execute();
      await db
        .insertInto('webhook_deliveries')
        .values({
          id: `whd_layout${i}${n}`,
          environment: 'production',
          subscription_id: id,
          event_id: eventId,
          status: n === 0 ? 'failed' : 'succeeded',
          attempts: n === 0 ? 12 : 1,
          next_attempt_at: new Date(),
          last_attempt_at: new Date(),
          last_status: n === 0 ? 503 : 200,
          last_error: n === 0 ? 'HTTP 503 Service Unavailable: upstream connect error or disconnect/reset before headers' : null,
        })
        .execute();
    }
  }
}

/**
 * A grantmaker the Owner runs, which requires a second person to approve, with disbursements
 * in every state to two recipients with long names, one of them the nonprofit (its incoming
 * disbursements).
 */
async function addDisbursements(): Promise<void> {
  const db = server.db;
  const grantmaker = await addOrganization(db, { ein: GRANTMAKER_EIN, name: GRANTMAKER_NAME, kind: 'grantmaker' });
  await addMember(db, { org: GRANTMAKER_EIN, email: OWNER_EMAIL, role: 'owner' });
  await db.updateTable('organizations').set({ require_second_approver: true }).where('id', '=', grantmaker.id).execute();
  await fundGrantmaker(db, grantmaker.id, 'production', 1_234_567_890);
  const pantry = await directoryOrganization(db, staff.ein, ORG_NAME.toUpperCase());
  const club = await directoryOrganization(db, '840000777', 'BOYS AND GIRLS CLUBS OF THE GREATER RIVERSIDE VALLEY METROPOLITAN AREA INC');
  const scope = { organizationId: grantmaker.id, environment: 'production' as const };
  for (let i = 0; i < 8; i += 1) {
    const id = await pendingDisbursement(db, {
      ...scope,
      recipientId: i % 2 ? club : pantry,
      amount: 2_500_000_00 + i * 1_234_56,
      createdBy: i === 7 ? `user:${users.owner.id}` : 'api_key:00000000-0000-4000-8000-00000000000a',
    });
    if (i < 5) await approveDisbursement(db, scope, 'api_key:00000000-0000-4000-8000-00000000000b', id);
  }
}

/** An audit trail of more than a page of events, with long details. */
async function addAuditTrail(): Promise<void> {
  const db = server.db;
  const people = [users.owner.id, users.admin.id, null];
  for (let i = 0; i < 60; i += 1) {
    const kind = i % 5;
    await recordAudit(db, {
      event: (['membership.role_changed', 'consent.granted', 'api_key.created', 'webhook.added', 'authorization_code.replay'] as const)[
        kind
      ]!,
      environment: kind === 0 ? null : 'production',
      organizationId: staff.orgId,
      actorUserId: people[i % 3],
      clientId: kind === 1 ? clients.reporting.client_id : null,
      ip: i % 2 ? '2001:db8:85a3:4f21:1234:5678:8a2e:7334' : '203.0.113.42',
      details: [
        { user_id: users.member.id, email: MEMBER_EMAIL, role: 'admin', previous_role: 'member' },
        { grant_id: `grant_${'x'.repeat(40)}${i}`, scopes: ['openid', 'offline_access', 'read_only', 'read_write'] },
        { id: `key_${i}`, name: 'Quarterly grant reporting export (finance team server)' },
        { subscription: `evtsub_${i}`, url: WEBHOOKS[0][0], category: 'grant.updated' },
        { grant_id: `grant_${'y'.repeat(40)}${i}`, reason: 'authorization code presented twice: every token of the grant revoked' },
      ][kind]!,
    });
  }
}

beforeAll(async () => {
  browser = await launchChromium();
  const db = server.db;
  await db.updateTable('organizations').set({ name: ORG_NAME }).where('id', '=', staff.orgId).execute();
  const named = {
    owner: [OWNER_EMAIL, 'Margaret Okonkwo-Fitzgerald'],
    admin: [ADMIN_EMAIL, 'Adam Brooks-Delacroix'],
    member: [MEMBER_EMAIL, 'Maya Chen'],
    read_only: [READER_EMAIL, 'Ravi Patel'],
  } as const;
  for (const role of Object.keys(named) as (keyof typeof named)[]) {
    const [email, name] = named[role];
    await db.updateTable('users').set({ email, display_name: name }).where('id', '=', staff.users[role].id).execute();
  }
  users.owner = { ...staff.users.owner, email: OWNER_EMAIL };
  users.admin = { ...staff.users.admin, email: ADMIN_EMAIL };
  users.member = { ...staff.users.member, email: MEMBER_EMAIL };
  users.reader = { ...staff.users.read_only, email: READER_EMAIL };
  const resetter = await addUser(
    db,
    { email: RESETTER_EMAIL, password: 'first-password-123', displayName: 'Jordan Lee-Washington' },
    MIN_PASSWORD_PARAMS,
  );
  users.resetter = { email: RESETTER_EMAIL, password: 'first-password-123', id: resetter.id };
  await addMember(db, { org: staff.ein, email: RESETTER_EMAIL, role: 'member' });
  // More staff with long addresses, so the members page has a realistic list.
  for (const [i, local] of ['christopher.vanderberg-osei.facilities', 'fatima.al-rashid.grants.manager', 'li.wei.data'].entries()) {
    const email = `${local}@riverside-community-food-pantry.org`;
    await addUser(db, { email, password: `colleague-password-${i}` }, MIN_PASSWORD_PARAMS);
    await addMember(db, { org: staff.ein, email, role: i === 0 ? 'admin' : 'member' });
  }
  // A fund provider the Owner also runs: a choice of organization, and its webhooks page.
  const fund = await addOrganization(db, { ein: FUND_EIN, name: FUND_NAME, kind: 'fund_provider' });
  await addMember(db, { org: FUND_EIN, email: OWNER_EMAIL, role: 'owner' });

  const mailer = {
    mail: new TableMailSender(db),
    dashboardOrigins: { production: server.urls.dashboard, sandbox: server.urls.sandboxDashboard },
  };
  const actor = { userId: users.owner.id, role: 'owner' as const, email: OWNER_EMAIL };
  for (const [email, role] of [
    [NEWCOMER_EMAIL, 'member'],
    ['bartholomew.nakamura-oyelaran.volunteers@riverside-community-food-pantry.org', 'admin'],
    ['board.chair.elect@riverside-community-food-pantry.org', 'read_only'],
  ] as const)
    await inviteMember(db, mailer, { organizationId: staff.orgId, email, role, environment: 'production', actor });

  for (const name of ['Quarterly grant reporting export (finance team server)', 'Billing server', 'Donor CRM nightly sync']) {
    const key = await createApiKey(db, { org: staff.ein, environment: 'production', name });
    if (name === 'Billing server') await revokeApiKey(db, key.id);
  }
  await createApiKey(db, { org: staff.ein, environment: 'production' });

  // Bank accounts to pick from, one with a long nickname, one closed.
  const accounts = [
    { accountNumber: '4401000011', nickname: 'Operating account — general fund and restricted grants', status: 'OPEN' },
    { accountNumber: '4401000022', nickname: 'Payroll', status: 'CLOSED' },
    { accountNumber: '4401000033', nickname: null, status: 'OPEN' },
  ] as const;
  for (const a of accounts) {
    const { id } = await createAccount(db, staff, 'production', { accountNumber: a.accountNumber });
    await db
      .updateTable('deposit_accounts')
      .set({ nickname: a.nickname, product_name: a.nickname ? 'Nonprofit Checking' : 'Money Market Savings', status: a.status })
      .where('id', '=', id)
      .execute();
  }

  await addWebhooks(fund.id);
  await addAuditTrail();
  await addDisbursements();

  // Earlier sign-ins of the Owner: the Security page's list of browsers.
  for (const [i, agent] of AGENTS.entries())
    await signInElsewhere(users.owner, agent, i % 2 ? '2001:db8:85a3:4f21:1234:5678:8a2e:7334' : '198.51.100.7');
});

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => undefined);
  await browser?.close();
});

describe('the hosted pages at 390 and 1280 px', () => {
  beforeEach(() => {
    problems = [];
  });

  it('before sign-in: sign-in on both dashboards, forgot and reset password in each state, a new colleague’s invitation, an error page', async () => {
    const page = await visitor();
    await page.goto(`${server.urls.dashboard}/sign-in`);
    await check(page, 'sign-in');
    await page.goto(`${server.urls.sandboxDashboard}/sign-in`);
    await check(page, 'sign-in (sandbox)');

    await page.goto(`${server.urls.dashboard}/forgot-password`);
    await check(page, 'forgot password');
    await page.getByLabel('Email').fill(RESETTER_EMAIL);
    await press(page, 'Send a reset link');
    expect(await heading(page)).toBe('Check your e-mail');
    await check(page, 'forgot password: sent');

    const [link] = await resetLinksFor(server, server.db, RESETTER_EMAIL);
    await page.goto(link!);
    await check(page, 'reset password');
    await page.getByLabel('New password', { exact: true }).fill('a much longer passphrase 2024');
    await page.getByLabel('New password again').fill('a much longer passphrase 2024');
    await press(page, 'Set new password');
    expect(await heading(page)).toBe('Your password was changed');
    await check(page, 'reset password: done');
    await page.goto(link!);
    await check(page, 'reset password: link used');
    await page.goto(`${server.urls.dashboard}/reset-password/not-a-link-we-sent`);
    await check(page, 'reset password: unknown link');

    const { link: invitation } = await invitationMail(server.db, NEWCOMER_EMAIL);
    await page.goto(invitation);
    expect(await heading(page)).toBe(`Join ${ORG_NAME}`);
    await check(page, 'invitation: new account');

    await page.goto(`${endpoints(server, 'production').authorize}?client_id=no-such-client&response_type=code`);
    await check(page, 'error page (unknown application)');
    expectNoOverflow();
  });

  it('signing in to an application: the sign-in, a passkey as the second factor, an invitation for an existing account', async () => {
    // Maya's only second factor is a passkey: the page offers it first.
    await new SoftwarePasskey(server.urls.dashboard).storeFor(server.db, users.member.id, 'Maya’s phone');
    const page = await visitor();
    await openAuthorization(page, clients.reporting, 'openid read_only');
    expect(await heading(page)).toBe('Sign in');
    await check(page, 'sign-in to an application');
    await fillSignIn(page, users.member);
    expect(await heading(page)).toBe('Enter your second factor');
    await expect(page.getByRole('button', { name: 'Use a passkey' }).isVisible()).resolves.toBe(true);
    await check(page, 'second factor: passkey');

    // An invitation for an address with an account asks to sign in first.
    await inviteMember(
      server.db,
      {
        mail: new TableMailSender(server.db),
        dashboardOrigins: { production: server.urls.dashboard, sandbox: server.urls.sandboxDashboard },
      },
      { organizationId: (await fundOrganization()).id, email: READER_EMAIL, role: 'read_only', environment: 'production', actor: null },
    );
    const fresh = await visitor();
    await fresh.goto((await invitationMail(server.db, READER_EMAIL)).link);
    expect(await heading(fresh)).toBe('Sign in to accept your invitation');
    await check(fresh, 'sign-in to accept an invitation');
    expectNoOverflow();
  });

  it('a bank-data consent: second-factor setup, recovery codes, the consent with its account picker; then the code at the next sign-in', async () => {
    const fapi = await registerFapiClient(server, { name: 'Aggregator Bank Feeds for Nonprofits' });
    const { requestUri } = await push(fapi, {
      authorization_details: JSON.stringify([
        {
          type: 'fdx_v1.0',
          consentRequest: {
            durationType: 'TIME_BOUND',
            durationPeriod: 90,
            lookbackPeriod: 365,
            resources: [{ resourceType: 'ACCOUNT', dataClusters: ['ACCOUNT_DETAILED', 'TRANSACTIONS', 'STATEMENTS'] }],
          },
        },
      ]),
    });
    const page = await visitor();
    await page.goto(
      `${endpoints(server, 'production').authorize}?client_id=${fapi.client_id}&request_uri=${encodeURIComponent(requestUri)}`,
    );
    await fillSignIn(page, users.admin);
    expect(await heading(page)).toBe('Set up a second factor');
    await check(page, 'second factor: setup');
    const key = (await page.locator('.secret code').textContent())!.trim();
    await page.getByLabel('Code from your app').fill(setupCode(ADMIN_EMAIL, key));
    await press(page, 'Turn on');
    expect(await heading(page)).toBe('Your second factor is on');
    await check(page, 'second factor: recovery codes');
    rememberRecoveryCodes(ADMIN_EMAIL, await page.locator('ul.codes code').allTextContents());
    await Promise.all([page.waitForNavigation(), page.locator('a.button-link.primary').click()]);
    expect(await heading(page)).toMatch(/^Aggregator Bank Feeds for Nonprofits wants access to /);
    await check(page, 'consent: bank data (FDX)');

    // The account picker: a group named by its legend, each account's checkbox bound to its
    // label (name, masked number, type), beside it on one line, and usable from the keyboard.
    const picker = page.getByRole('group', { name: 'Accounts to share' });
    await expect(picker.getByRole('checkbox').count()).resolves.toBe(3);
    const long = picker.getByRole('checkbox', {
      name: /Operating account — general fund and restricted grants.*••••0011.*Nonprofit Checking/,
    });
    const savings = picker.getByRole('checkbox', { name: /Money Market Savings.*••••0033/ });
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      const rows = await picker.locator('label').evaluateAll((labels) => {
        type Box = { getBoundingClientRect(): Rect };
        const rect = (label: unknown, selector: string) => {
          const { left, right, top, bottom } = (label as { querySelector(s: string): Box }).querySelector(selector).getBoundingClientRect();
          return { left, right, top, bottom };
        };
        return labels.map((label) => ({
          text: (label as { textContent: string }).textContent,
          box: rect(label, 'input'),
          name: rect(label, '.account-name'),
          meta: rect(label, '.account-meta'),
        }));
      });
      expect(rows).toHaveLength(3);
      for (const { text, box, name, meta } of rows) {
        // Beside its name, on the name's first line: not above it, not centred on a line of its own.
        const middle = (box.top + box.bottom) / 2;
        expect({ width, text, beside: box.right <= name.left, aligned: middle > name.top && middle < name.top + 28 }).toEqual({
          width,
          text,
          beside: true,
          aligned: true,
        });
        // A short name has its number and kind on its line.
        if (width === 1280 && !text.includes('Operating account'))
          expect({ text, oneLine: meta.top < name.bottom }).toEqual({ text, oneLine: true });
      }
    }
    // From the keyboard: Space ticks the focused account, Tab moves to the next.
    const checkboxes = picker.getByRole('checkbox');
    await checkboxes.first().focus();
    await page.keyboard.press('Space');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Space');
    await expect(Promise.all([0, 1, 2].map((n) => checkboxes.nth(n).isChecked()))).resolves.toEqual([true, true, false]);
    await expect(long.isVisible()).resolves.toBe(true);
    await expect(savings.isVisible()).resolves.toBe(true);
    const back = await approve(page);
    expect(back.href.startsWith(`${FAPI_REDIRECT.production}?`) && back.searchParams.get('code')).toBeTruthy();

    // The next sign-in asks for the app's code.
    const next = await visitor();
    await openAuthorization(next, clients.reporting, 'openid read_only');
    await fillSignIn(next, users.admin);
    expect(await heading(next)).toBe('Enter your second factor');
    await check(next, 'second factor: code');
    await next.getByLabel('Code from your app').fill(await nextCode(ADMIN_EMAIL, server.db));
    await press(next, 'Verify');
    await check(next, 'consent: standard scopes');
    await approve(next);

    // A read-only member asked for more than their role allows, in the sandbox.
    const reader = await visitor();
    await openAuthorization(reader, clients.sandboxApp, 'openid read_only read_write', 'sandbox');
    await fillSignIn(reader, users.reader);
    expect(await reader.getByRole('heading', { name: 'Not granted' }).isVisible()).toBe(true);
    await check(reader, 'consent: narrowed (sandbox)');
    // The sandbox dashboard's bar: its strip and badge beside the navigation.
    await reader.goto(`${server.urls.sandboxDashboard}/account`);
    if ((await heading(reader)) !== 'Your account') await fillSignIn(reader, users.reader);
    expect(await heading(reader)).toBe('Your account');
    await check(reader, 'account (sandbox)');
    expectNoOverflow();
  });

  it('the signed-in dashboard: account, security with passkeys and sessions, second-factor setup and confirmation, password', async () => {
    const page = await ownerPage();
    await check(page, 'account');
    await page.goto(`${server.urls.dashboard}/account/security`);
    await check(page, 'security (no second factor)');
    await page.goto(`${server.urls.dashboard}/account/security/authenticator`);
    await check(page, 'authenticator setup (dashboard)');
    const key = (await page.locator('.secret code').textContent())!.trim();
    await page.getByLabel('Code from your app').fill(setupCode(OWNER_EMAIL, key));
    await press(page, 'Turn on');
    await check(page, 'recovery codes (dashboard)');
    rememberRecoveryCodes(OWNER_EMAIL, await page.locator('ul.codes code').allTextContents());
    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Done' }).click()]);
    await check(page, 'security (confirm first)');
    await page.goto(`${server.urls.dashboard}/account/security/confirm?next=/account/security`);
    await check(page, 'confirm it is you');
    await page.getByLabel('Code from your app').fill(await nextCode(OWNER_EMAIL, server.db));
    await press(page, 'Confirm');
    for (const name of ['MacBook Pro (Touch ID) — office', 'YubiKey 5C NFC kept in the safe'])
      await new SoftwarePasskey(server.urls.dashboard).storeFor(server.db, users.owner.id, name);
    await page.goto(`${server.urls.dashboard}/account/security`);
    await expect(page.getByRole('row', { name: /YubiKey/ }).isVisible()).resolves.toBe(true);
    await check(page, 'security (app, passkeys, sessions)');
    await page.goto(`${server.urls.dashboard}/account/password`);
    await check(page, 'password change');
    expectNoOverflow();
  });

  it('an organization’s pages: members, removal, invitations, API keys and revocation, audit log, settings; a fund provider’s webhooks; a grantmaker’s disbursements and a nonprofit’s incoming ones', async () => {
    const page = await ownerPage();
    const org = (tab: string) => `${server.urls.dashboard}/orgs/${dashed(staff.ein)}/${tab}`;
    await page.goto(org('members'));
    await check(page, 'members and invitations');
    await page.goto(org(`members/${users.member.id}/remove`));
    await check(page, 'member removal');
    await page.goto(org('api-keys'));
    await page.getByLabel('Name of the new key').fill('Board reporting dashboard (read only)');
    await press(page, 'Create a production key');
    await expect(page.getByLabel('The new API key').isVisible()).resolves.toBe(true);
    await check(page, 'API keys (new key shown)');
    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Revoke…' }).first().click()]);
    await check(page, 'API key revocation');
    await page.goto(org('settings'));
    await check(page, 'settings');
    await page.goto(`${server.urls.dashboard}/orgs/${FUND_EIN}/webhooks`);
    await check(page, 'webhooks');
    await page.goto(`${server.urls.dashboard}/orgs/${GRANTMAKER_EIN}/grantmaking`);
    await expect(page.getByText('You created it: another person approves.').isVisible()).resolves.toBe(true);
    await check(page, 'grantmaking');
    await page.goto(org('incoming'));
    await expect(page.getByRole('row', { name: new RegExp(GRANTMAKER_NAME) }).count()).resolves.toBe(3);
    await check(page, 'incoming disbursements');
    await page.goto(`${server.urls.dashboard}/orgs/00-0000000/members`);
    await check(page, 'dashboard error page');

    await page.goto(org('audit'));
    await check(page, 'audit log');
    // On a desktop an event's details stand open in their column; on a phone each event is a
    // compact block whose details open in place, inside the screen.
    const rows = page.locator('table.audit tbody tr');
    await expect(rows.count()).resolves.toBe(50);
    const summary = rows.first().getByText('Details', { exact: true });
    await expect(Promise.all([rows.first().locator('.kv').isVisible(), summary.isVisible()])).resolves.toEqual([true, false]);
    await page.setViewportSize({ width: 390, height: 900 });
    await expect(Promise.all([rows.first().locator('.kv').isVisible(), summary.isVisible()])).resolves.toEqual([false, true]);
    const heights = await rows.evaluateAll((trs) =>
      trs.map((tr) => (tr as unknown as { getBoundingClientRect(): Rect }).getBoundingClientRect().height),
    );
    const shown = heights.map(Math.round).join(', ');
    // Soft: the overflow found on the other pages is reported too.
    expect.soft(Math.max(...heights), `the tallest event at 390 px (${shown})`).toBeLessThanOrEqual(AUDIT_ROW_MAX);
    expect
      .soft(heights.reduce((a, b) => a + b) / heights.length, `the events' mean height at 390 px (${shown})`)
      .toBeLessThanOrEqual(AUDIT_ROW_MEAN);
    await summary.click({ timeout: 5_000 });
    await expect(rows.first().locator('.kv').isVisible()).resolves.toBe(true);
    await page.locator('table.audit details').evaluateAll((all) => all.forEach((d) => ((d as unknown as { open: boolean }).open = true)));
    problems.push(
      ...((await page.evaluate(OVERFLOWS)) as string[]).map((what) => `audit log with every event’s details open at 390 px: ${what}`),
    );
    expectNoOverflow();
  });

  it('choosing an organization, consent for the organization, connected applications, invitations for a signed-in user, signing out', async () => {
    const page = await ownerPage();
    await openAuthorization(page, clients.ledger, 'offline_access read_only read_write');
    expect(await heading(page)).toMatch(/^Choose a/);
    await check(page, 'organization choice');
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: new RegExp(ORG_NAME) }).click()]);
    if ((await heading(page)) === 'Confirm it is you') {
      await page.getByLabel('Code from your app').fill(await nextCode(OWNER_EMAIL, server.db));
      await press(page, 'Verify');
    }
    expect(await page.getByText('Access for the nonprofit, not for you').isVisible()).toBe(true);
    await check(page, 'consent: organization subject');
    await approve(page);

    await page.goto(`${server.urls.dashboard}/oauth/connections`);
    await check(page, 'connected applications (yours)');
    await page.goto(`${server.urls.dashboard}/orgs/${dashed(staff.ein)}/connections`);
    await check(page, 'connected applications (organization)');
    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Revoke…' }).first().click()]);
    await check(page, 'connection revocation');

    // An invitation for the signed-in Owner, and one for another account.
    const dashboards = { production: server.urls.dashboard, sandbox: server.urls.sandboxDashboard };
    const other = await addOrganization(server.db, { ein: '861234567', name: 'Harbor Literacy Project of the Lower Riverside Valley' });
    await inviteMember(
      server.db,
      { mail: new TableMailSender(server.db), dashboardOrigins: dashboards },
      { organizationId: other.id, email: OWNER_EMAIL, role: 'admin', environment: 'production', actor: null },
    );
    await page.goto((await invitationMail(server.db, OWNER_EMAIL)).link);
    await check(page, 'invitation: accept');
    await inviteMember(
      server.db,
      { mail: new TableMailSender(server.db), dashboardOrigins: dashboards },
      { organizationId: other.id, email: RESETTER_EMAIL, role: 'member', environment: 'production', actor: null },
    );
    await page.goto((await invitationMail(server.db, RESETTER_EMAIL)).link);
    await check(page, 'invitation: for another account');

    // An application signs the browser out: asked first; "Stay signed in".
    await page.goto(`${endpoints(server, 'production').endSession}?client_id=${clients.reporting.client_id}`);
    expect(await heading(page)).toBe('Sign out of Almoner?');
    await check(page, 'end session: asked');
    await press(page, 'Stay signed in');
    await check(page, 'end session: still signed in');

    // A browser with no session: the auto-submitting page (its script held back to see it), then the end.
    const signedOut = await visitor();
    await signedOut.context().route('**/static/auto-submit.js', (route) => route.abort());
    await signedOut.goto(`${endpoints(server, 'production').endSession}?client_id=${clients.reporting.client_id}`);
    await check(signedOut, 'end session: not signed in');
    await press(signedOut, 'Continue');
    expect(await heading(signedOut)).toBe('You are signed out');
    await check(signedOut, 'end session: signed out');
    expectNoOverflow();
  });

  it('the donor flow: each step for the simulated, an integrated and an unintegrated DAF, its last pages, a link that does not work', async () => {
    const connect = await createConnect(server.db, { ownerOrganizationId: staff.orgId, environment: 'sandbox', recipientName: ORG_NAME });
    const open = `${server.urls.sandboxDashboard}/connect/${connect.cid}?origin=${encodeURIComponent('https://give.riverside-community-food-pantry.org')}&amount=25000`;
    const page = await visitor();
    await page.goto(open);
    await check(page, 'donor flow: choose a DAF');
    await page.getByLabel('Sandbox DAF (simulated sign-in)').check();
    await press(page, 'Continue');
    await check(page, 'donor flow: amount');
    await press(page, 'Continue');
    await check(page, 'donor flow: simulated sign-in');
    await page.getByLabel('Username').fill(OWNER_EMAIL);
    await page.getByLabel('Password').fill('anything');
    await press(page, 'Sign in');
    await check(page, 'donor flow: confirm');
    await press(page, 'Authorize');
    expect(await heading(page)).toBe('Thank you');
    await check(page, 'donor flow: authorized');
    for (const [daf, kind] of [
      [FUND_NAME, 'integrated'],
      ['National Philanthropic Trust', 'unintegrated'],
    ] as const) {
      await page.goto(open);
      await page.getByLabel('Search DAF sponsors').fill(daf.slice(0, 12));
      await press(page, 'Search');
      await page.getByLabel(daf).check();
      await press(page, 'Continue');
      await press(page, 'Continue');
      await check(page, `donor flow: ${kind} details`);
      await page.getByLabel('First name').fill('Alexandra');
      await page.getByLabel('Last name').fill('Konstantinopoulou-Hernandez');
      await page.getByLabel('Email').fill(NEWCOMER_EMAIL);
      await press(page, 'Continue');
      await check(page, `donor flow: ${kind} confirm`);
      await press(page, 'Authorize');
      await check(page, `donor flow: ${kind} authorized`);
    }
    await page.goto(`${server.urls.sandboxDashboard}/connect/connect_unknown?origin=${encodeURIComponent('https://give.example.org')}`);
    await check(page, 'donor flow: unknown Connect');
    expectNoOverflow();
  });
});

interface Rect {
  left: number;
  right: number;
  top: number;
  bottom: number;
  height: number;
}

/**
 * An event on the audit log at 390 px, its details closed: the event's name beside the
 * Details summary, when, then who and from where (a long address takes two lines, an IPv6
 * address one of its own): at most six short lines, and about five on average over a page of
 * them (so a page of 50 stays near 6,000 px with this test's long addresses, where a table
 * wider than the screen made it 22,000).
 */
const AUDIT_ROW_MAX = 150;
const AUDIT_ROW_MEAN = 125;

let owner: Page | undefined;
/** The Owner's browser, signed in on the dashboard (its second factor given when asked). */
async function ownerPage(): Promise<Page> {
  if (owner) return owner;
  owner = await newPage();
  await owner.goto(`${server.urls.dashboard}/sign-in?next=/account`);
  await fillSignIn(owner, users.owner);
  expect(await heading(owner)).toBe('Your account');
  return owner;
}

async function fundOrganization() {
  return server.db.selectFrom('organizations').select('id').where('ein', '=', FUND_EIN).executeTakeFirstOrThrow();
}
