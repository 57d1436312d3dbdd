import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { openDonorAccount } from '../../src/daf/donor-accounts-service.js';
import { createToken } from '../../src/daf/tokens-service.js';
import { FormBrowser } from '../helpers/browser.js';
import { createConnect, type TestConnect } from '../helpers/giving.js';
import { createStaff, type Staff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * The hosted donor flow through its forms (docs/giving.md, "The donor flow", "Security of the
 * flow"): a cookie-keeping agent per browser, against the real app on loopback ports. Each
 * test is its own caller address (X-Forwarded-For from the trusted loopback), so the attempt
 * limits of one test do not reach another.
 */

const { testDatabase: t, server, staff: nonprofit } = useOAuthServer({ config: { trusted_proxies: ['127.0.0.1/32'] } });
const OPENER = 'https://give.example.org';
let fund: Staff;
let fundName: string;
let connect: TestConnect;
let addressCounter = 0;

const dashboard = () => server.urls.sandboxDashboard;
function browser(address = `198.51.100.${(addressCounter += 1)}`): FormBrowser {
  return new FormBrowser((url) => url.origin !== dashboard(), { 'x-forwarded-for': address });
}
const flowUrl = (cid: string, step = '') => `${dashboard()}/connect/${cid}${step ? `/${step}` : ''}`;

async function sessionsOf(cid: string) {
  return t.db.selectFrom('workflow_sessions').selectAll().where('connect_id', '=', cid).orderBy('authorized_at').execute();
}
async function dafId(name: string) {
  return (await t.db.selectFrom('dafs').select('id').where('org_name', '=', name).executeTakeFirstOrThrow()).id;
}

/** The message a page posts to its opener, as the page carries it. */
function postedMessage(html: string): { origin: string; message: Record<string, unknown>; close: boolean } | undefined {
  const match = /<div id="almoner-flow-message" hidden data-origin="([^"]*)" data-message="([^"]*)"( data-close="true")?/.exec(html);
  if (!match) return undefined;
  const unescape = (s: string) =>
    s
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&');
  return { origin: unescape(match[1]!), message: JSON.parse(unescape(match[2]!)) as Record<string, unknown>, close: Boolean(match[3]) };
}

type Page = Awaited<ReturnType<FormBrowser['request']>>;

/** Opens the flow as the script does and picks `daf`, then the amount. */
async function startTo(agent: FormBrowser, cid: string, daf: string, amount: string, frequency = 'one_time'): Promise<Page> {
  const start = await agent.request(`${flowUrl(cid)}?origin=${encodeURIComponent(OPENER)}`);
  expect(start.status).toBe(200);
  const picked = await agent.submit(start, '/daf', { daf: await dafId(daf) });
  expect(picked.url.pathname).toBe(`/connect/${cid}/amount`);
  return agent.submit(picked, '/amount', { amount, frequency });
}

beforeAll(async () => {
  fund = await createStaff(t.db, { kind: 'fund_provider' });
  fundName = (await t.db.selectFrom('organizations').select('name').where('id', '=', fund.orgId).executeTakeFirstOrThrow()).name;
  connect = await createConnect(t.db, { ownerOrganizationId: nonprofit.orgId, environment: 'sandbox' });
});

describe('opening the flow', () => {
  it('an unknown Connect, an inactive one and one of the other environment are a 404 page that tells the opener', async () => {
    const inactive = await createConnect(t.db, { ownerOrganizationId: nonprofit.orgId, environment: 'sandbox', active: false });
    const production = await createConnect(t.db, { ownerOrganizationId: nonprofit.orgId, environment: 'production' });
    for (const cid of ['connect_nope', inactive.cid, production.cid]) {
      const page = await browser().request(`${flowUrl(cid)}?origin=${encodeURIComponent(OPENER)}`);
      expect(page.status).toBe(404);
      expect(page.html).toContain('This giving link does not work');
      expect(postedMessage(page.html)).toMatchObject({
        origin: OPENER,
        message: { source: 'almoner-connect', type: 'exit', reason: 'error' },
      });
    }
    // The production Connect opens on its own dashboard.
    const own = await browser().request(`${server.urls.dashboard}/connect/${production.cid}?origin=${encodeURIComponent(OPENER)}`);
    expect(own.status).toBe(200);
    expect(own.html).toContain(production.recipientName);
    // The simulated DAF is the sandbox's only.
    expect(own.html).toContain('Fidelity Charitable');
    expect(own.html).not.toContain('Sandbox DAF');
  });

  it('takes only an http(s) origin as the opener: anything else is a 400 page that posts nowhere', async () => {
    for (const origin of ['javascript:alert(1)', 'https://give.example.org/page', 'null', 'ftp://give.example.org', '']) {
      const page = await browser().request(`${flowUrl(connect.cid)}?origin=${encodeURIComponent(origin)}`);
      expect(page.status, origin).toBe(400);
      expect(postedMessage(page.html), origin).toBeUndefined();
    }
  });

  it('states the nonprofit and lists the sandbox DAFs, the supported ones marked; the search is a plain GET form', async () => {
    const agent = browser();
    const start = await agent.request(`${flowUrl(connect.cid)}?origin=${encodeURIComponent(OPENER)}`);
    expect(start.html).toContain(connect.recipientName);
    expect(start.html).toContain(`${connect.ein.slice(0, 2)}-${connect.ein.slice(2)}`);
    expect(start.html).toMatch(/Sandbox DAF \(simulated sign-in\)[\s\S]*?<span class="badge ok">Connected<\/span>/);
    expect(start.html).toMatch(new RegExp(`${fundName}[\\s\\S]*?<span class="badge ok">Connected</span>`));
    expect(start.html).not.toMatch(/Fidelity Charitable<\/span>[\s\S]{0,200}badge ok/);
    expect(start.html).toMatch(/<form method="get" action="\/connect\/[^"]+" class="flow-search"/);
    const searched = await agent.request(`${flowUrl(connect.cid)}?q=fidel`);
    expect(searched.status).toBe(200);
    expect(searched.html).toContain('Fidelity Charitable');
    expect(searched.html).not.toContain('Vanguard Charitable');
    const none = await agent.request(`${flowUrl(connect.cid)}?q=zzzz-no-such`);
    expect(none.html).toContain('No DAF sponsor matches');
  });

  it('serves its pages with a strict policy, openable as a popup from any page, and /connect.js for any page to load', async () => {
    const page = await fetch(`${flowUrl(connect.cid)}?origin=${encodeURIComponent(OPENER)}`);
    expect(page.headers.get('content-security-policy')).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    expect(page.headers.get('cross-origin-opener-policy')).toBe('unsafe-none');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    const cookie = page.headers.getSetCookie().find((c) => c.startsWith('alm_sandbox_donor_flow='))!;
    expect(cookie).toMatch(/httponly/i);
    expect(cookie).toMatch(/samesite=strict/i);
    // Its redirects too: a browser applies the opener policy to every response of a navigation.
    const agent = browser();
    const start = await agent.request(`${flowUrl(connect.cid)}?origin=${encodeURIComponent(OPENER)}`);
    const csrf = /name="csrf" value="([^"]+)"/.exec(start.html)![1]!;
    const redirect = await fetch(flowUrl(connect.cid, 'daf'), {
      method: 'POST',
      redirect: 'manual',
      headers: {
        cookie: agent.cookieHeader(new URL(dashboard())),
        'content-type': 'application/x-www-form-urlencoded',
        origin: dashboard(),
      },
      body: new URLSearchParams({ csrf, daf: await dafId('Fidelity Charitable') }).toString(),
    });
    expect(redirect.status).toBe(303);
    expect(redirect.headers.get('cross-origin-opener-policy')).toBe('unsafe-none');
    const script = await fetch(`${dashboard()}/connect.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('application/javascript; charset=utf-8');
    expect(script.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
    const text = await script.text();
    expect(text).toContain('AlmonerConnect');
    // No request of its own to anyone: no fetch, XHR, beacon or image.
    expect(text).not.toMatch(/fetch\(|XMLHttpRequest|sendBeacon|new Image/);
  });
});

describe('the amount', () => {
  it('is whole dollars, at least the DAF’s minimum, one time or monthly', async () => {
    const agent = browser();
    const cases: [string, string, RegExp][] = [
      ['9', 'one_time', /makes grants of at least \$10\.00/],
      ['12.50', 'one_time', /whole dollars/],
      ['ten', 'one_time', /whole dollars/],
      ['25', 'weekly', /one time or every month/],
    ];
    const start = await agent.request(`${flowUrl(connect.cid)}?origin=${encodeURIComponent(OPENER)}`);
    const picked = await agent.submit(start, '/daf', { daf: await dafId('Sandbox DAF (simulated sign-in)') });
    for (const [amount, frequency, error] of cases) {
      const page = await agent.submit(picked, '/amount', { amount, frequency });
      expect(page.status, amount).toBe(400);
      expect(page.html, amount).toMatch(error);
      expect(page.html).toContain('aria-invalid="true"');
    }
    const fine = await agent.submit(picked, '/amount', { amount: '$1,250', frequency: 'monthly' });
    expect(fine.url.pathname).toBe(`/connect/${connect.cid}/sign-in`);
    expect(fine.html).toContain('$1,250.00');
    expect(fine.html).toContain('every month');
  });

  it('comes prefilled from the script’s amount (cents) and frequency', async () => {
    const agent = browser();
    const start = await agent.request(`${flowUrl(connect.cid)}?origin=${encodeURIComponent(OPENER)}&amount=30000&frequency=monthly`);
    const picked = await agent.submit(start, '/daf', { daf: await dafId('Fidelity Charitable') });
    expect(picked.html).toContain('value="300"');
    expect(picked.html).toMatch(/value="monthly" checked/);
  });
});

describe('the simulated DAF', () => {
  it('signs in with anything, says it is the sandbox, shows $25,000.00, and the authorization is a session with that balance', async () => {
    const agent = browser();
    const signIn = await startTo(agent, connect.cid, 'Sandbox DAF (simulated sign-in)', '150', 'monthly');
    expect(signIn.html).toContain('This is the sandbox');
    const empty = await agent.submit(signIn, '/sign-in', { username: '', password: '' });
    expect(empty.status).toBe(400);
    const confirm = await agent.submit(signIn, '/sign-in', { username: 'anyone', password: 'anything' });
    expect(confirm.url.pathname).toBe(`/connect/${connect.cid}/confirm`);
    expect(confirm.html).toContain('$25,000.00');
    expect(confirm.html).toContain('$150.00');
    const done = await agent.submit(confirm, '/authorize');
    expect(done.url.pathname).toBe(`/connect/${connect.cid}/done`);
    const posted = postedMessage(done.html)!;
    expect(posted.origin).toBe(OPENER);
    expect(posted.close).toBe(true);
    const [session] = await sessionsOf(connect.cid);
    expect(posted.message).toEqual({
      source: 'almoner-connect',
      type: 'success',
      workflowSessionId: session!.id,
      grantIntent: {
        amount: 15000,
        frequency: 'monthly',
        fundId: await dafId('Sandbox DAF (simulated sign-in)'),
        fundName: 'Sandbox DAF (simulated sign-in)',
        supported: true,
      },
    });
    expect(session).toMatchObject({
      environment: 'sandbox',
      amount: '15000',
      frequency: 'monthly',
      donor_balance: '2500000',
      captured_at: null,
    });
    expect(session!.expires_at.getTime() - session!.authorized_at.getTime()).toBe(15 * 60_000);
    // The flow cannot authorize twice: its state now holds only the session.
    const again = await agent.submit(confirm, '/authorize');
    expect(again.status).toBe(400);
    expect(await sessionsOf(connect.cid)).toHaveLength(1);
  });

  it('refuses more than the balance', async () => {
    const agent = browser();
    const signIn = await startTo(agent, connect.cid, 'Sandbox DAF (simulated sign-in)', '30000');
    const confirm = await agent.submit(signIn, '/sign-in', { username: 'a', password: 'b' });
    expect(confirm.html).toContain('more than your fund’s balance ($25,000.00)');
    expect(confirm.html).not.toContain('>Authorize<');
    const before = (await sessionsOf(connect.cid)).length;
    const csrf = /name="csrf" value="([^"]+)"/.exec(confirm.html)![1]!;
    const refused = await agent.request(flowUrl(connect.cid, 'authorize'), { method: 'POST', form: { csrf } });
    expect(refused.status).toBe(400);
    expect(refused.html).toContain('more than your fund’s balance');
    expect((await sessionsOf(connect.cid)).length).toBe(before);
  });
});

describe('the last page’s session id', () => {
  const shown = (html: string, id: string) => new RegExp(`Workflow session id</dt><dd><code[^>]*>${id}</code>`).test(html);

  it('is shown plainly in the sandbox (the simulated or an integrated DAF), for a tester whose tab has no opener to post to', async () => {
    const own = await createConnect(t.db, { ownerOrganizationId: nonprofit.orgId, environment: 'sandbox' });
    const agent = browser();
    const signIn = await startTo(agent, own.cid, 'Sandbox DAF (simulated sign-in)', '250');
    const confirm = await agent.submit(signIn, '/sign-in', { username: 'tester', password: 'anything' });
    const done = await agent.submit(confirm, '/authorize');
    const [session] = await sessionsOf(own.cid);
    expect(shown(done.html, session!.id)).toBe(true);
    expect(done.html).toContain('For the sandbox tester');
    // Shown again on a reload of the last page, in this browser only.
    expect(shown((await agent.request(flowUrl(own.cid, 'done'))).html, session!.id)).toBe(true);
    const stranger = await browser().request(flowUrl(own.cid, 'done'));
    expect(stranger.html).not.toContain(session!.id);
  });

  it('is never shown in production: the id goes to the opener only', async () => {
    const own = await createConnect(t.db, { ownerOrganizationId: nonprofit.orgId, environment: 'production' });
    const agent = new FormBrowser((url) => url.origin !== server.urls.dashboard, {
      'x-forwarded-for': `198.51.100.${(addressCounter += 1)}`,
    });
    const production = (step = '') => `${server.urls.dashboard}/connect/${own.cid}${step ? `/${step}` : ''}`;
    const start = await agent.request(`${production()}?origin=${encodeURIComponent(OPENER)}`);
    const picked = await agent.submit(start, '/daf', { daf: await dafId('Fidelity Charitable') });
    const details = await agent.submit(picked, '/amount', { amount: '250', frequency: 'one_time' });
    const confirm = await agent.submit(details, '/donor', { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.org' });
    const done = await agent.submit(confirm, '/authorize');
    expect(done.url.href).toBe(production('done'));
    const [session] = await sessionsOf(own.cid);
    expect(session!.environment).toBe('production');
    expect((postedMessage(done.html)!.message as { workflowSessionId: string }).workflowSessionId).toBe(session!.id);
    // The opener's message carries it; the page's text does not.
    const visible = done.html.replace(/<div id="almoner-flow-message"[^>]*>/, '');
    expect(visible).not.toContain(session!.id);
    expect(done.html).not.toContain('For the sandbox tester');
  });
});

describe('an unintegrated DAF', () => {
  it('takes the donor’s details and writes the session, its unintegrated grant and the event in one go; the last page says what to ask the DAF', async () => {
    const own = await createConnect(t.db, { ownerOrganizationId: nonprofit.orgId, environment: 'sandbox' });
    const agent = browser();
    const details = await startTo(agent, own.cid, 'Fidelity Charitable', '500');
    expect(details.url.pathname).toBe(`/connect/${own.cid}/donor`);
    for (const label of ['First name', 'Last name', 'Email', 'Phone', 'Street address', 'City', 'State', 'ZIP code'])
      expect(details.html).toMatch(new RegExp(`<label for="\\w+">${label}`));
    const bad = await agent.submit(details, '/donor', { firstName: 'Ada', lastName: 'Lovelace', email: 'not-an-address' });
    expect(bad.status).toBe(400);
    expect(bad.html).toContain('Enter your e-mail address');
    const confirm = await agent.submit(details, '/donor', {
      firstName: 'Ada',
      lastName: 'Lovelace',
      email: 'Ada@Example.org',
      phone: '555-0100',
      line1: '1 Main St',
      city: 'Denver',
      state: 'CO',
      postalCode: '80202',
    });
    expect(confirm.html).toContain('Ada Lovelace · ada@example.org');
    expect(confirm.html).toContain(`href="/connect/${own.cid}/donor">Change your details`);
    const again = await agent.request(flowUrl(own.cid, 'donor'));
    for (const value of ['Ada', 'ada@example.org', '555-0100', '1 Main St', 'Denver', '80202'])
      expect(again.html).toContain(`value="${value}"`);
    const done = await agent.submit(confirm, '/authorize');
    const [session] = await sessionsOf(own.cid);
    const grant = await t.db
      .selectFrom('unintegrated_grants')
      .selectAll()
      .where('workflow_session_id', '=', session!.id)
      .executeTakeFirstOrThrow();
    // Captured already: the sandbox's session id for a tester is not shown (nothing to capture).
    expect(done.html).not.toContain('For the sandbox tester');
    expect(grant).toMatchObject({
      environment: 'sandbox',
      organization_id: nonprofit.orgId,
      connect_id: own.cid,
      fund_id: await dafId('Fidelity Charitable'),
      amount: '50000',
      status: 'Unknown',
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: 'ada@example.org',
      phone: '555-0100',
      address: { line1: '1 Main St', city: 'Denver', state: 'CO', postalCode: '80202' },
    });
    expect(grant.tracking_id).toMatch(/^[A-Z2-7]{10}$/);
    expect(session).toMatchObject({ unintegrated_grant_id: grant.id, donor_account_id: null, donor_balance: null });
    expect(session!.captured_at).not.toBeNull();
    const event = await t.db.selectFrom('events').selectAll().where('associated_object_id', '=', grant.id).executeTakeFirstOrThrow();
    expect(event).toMatchObject({
      category: 'unintegrated_grant.created',
      organization_id: nonprofit.orgId,
      associated_object_type: 'unintegrated_grant',
      environment: 'sandbox',
    });
    expect(done.html).toContain(grant.tracking_id);
    expect(done.html).toContain(`${own.ein.slice(0, 2)}-${own.ein.slice(2)}`);
    expect(done.html).toContain(own.recipientName);
    const posted = postedMessage(done.html)!;
    expect(posted.close).toBe(false);
    expect(posted.message).toMatchObject({
      type: 'success',
      workflowSessionId: session!.id,
      grantIntent: { supported: false, amount: 50000 },
    });
  });

  it('writes nothing when the grant cannot be written: the session and the grant go together', async () => {
    const own = await createConnect(t.db, { ownerOrganizationId: nonprofit.orgId, environment: 'sandbox' });
    const agent = browser();
    const details = await startTo(agent, own.cid, 'Fidelity Charitable', '500');
    const confirm = await agent.submit(details, '/donor', { firstName: 'A', lastName: 'B', email: 'ab@example.org' });
    const events = () => t.db.selectFrom('events').select('id').where('category', '=', 'unintegrated_grant.created').execute();
    const eventsBefore = (await events()).length;
    // A trigger refusing the grant's insert, for this Connect only: the session written before it must go too.
    await sql
      .raw(
        `create function refuse_grant() returns trigger language plpgsql as $$ begin if new.connect_id = '${own.cid}' then raise exception 'refused'; end if; return new; end $$`,
      )
      .execute(t.db);
    await sql
      .raw('create trigger refuse_grant before insert on unintegrated_grants for each row execute function refuse_grant()')
      .execute(t.db);
    try {
      const failed = await agent.submit(confirm, '/authorize');
      expect(failed.status).toBe(500);
      expect(await sessionsOf(own.cid)).toHaveLength(0);
      expect(await events()).toHaveLength(eventsBefore);
    } finally {
      await sql.raw('drop trigger refuse_grant on unintegrated_grants').execute(t.db);
      await sql.raw('drop function refuse_grant()').execute(t.db);
    }
  });
});

describe('an integrated DAF', () => {
  it('keeps the donor account of the e-mail address at the fund provider', async () => {
    const scope = { environment: 'sandbox' as const, fundProviderId: fund.orgId };
    const account = await openDonorAccount(t.db, scope, { donor: { email: 'grace@example.org' } });
    const agent = browser();
    const details = await startTo(agent, connect.cid, fundName, '100');
    expect(details.html).toContain('Code from your DAF');
    expect(details.html).not.toContain('Street address');
    const confirm = await agent.submit(details, '/donor', { firstName: 'Grace', lastName: 'Hopper', email: 'GRACE@example.org', code: '' });
    await agent.submit(confirm, '/authorize');
    const session = (await sessionsOf(connect.cid)).at(-1)!;
    expect(session).toMatchObject({
      donor_account_id: account.id,
      amount: '10000',
      donor: { firstName: 'Grace', lastName: 'Hopper', email: 'grace@example.org' },
    });
  });

  it('redeems a code from the DAF, which approves the account; a wrong code or another provider’s is a clear error', async () => {
    const scope = { environment: 'sandbox' as const, fundProviderId: fund.orgId, principal: 'test' };
    const account = await openDonorAccount(t.db, scope, { donor: { email: 'katherine@example.org' } });
    const { code } = await createToken(t.db, server.runtime.keys, scope, account.id, {});
    const other = await createStaff(t.db, { kind: 'fund_provider' });
    const otherScope = { environment: 'sandbox' as const, fundProviderId: other.orgId, principal: 'test' };
    const otherAccount = await openDonorAccount(t.db, otherScope, { donor: { email: 'katherine@example.org' } });
    const { code: otherCode } = await createToken(t.db, server.runtime.keys, otherScope, otherAccount.id, {});
    const agent = browser();
    const details = await startTo(agent, connect.cid, fundName, '100');
    const fields = { firstName: 'Katherine', lastName: 'Johnson', email: 'katherine@example.org' };
    for (const wrong of ['WRONG-CODE-1', otherCode]) {
      const page = await agent.submit(details, '/donor', { ...fields, code: wrong });
      expect(page.status).toBe(400);
      expect(page.html).toContain('That code is not right, or it has expired');
      expect(page.html).toMatch(/id="code"[^>]*aria-invalid="true"/);
    }
    expect(
      (await t.db.selectFrom('donor_accounts').select('status').where('id', '=', otherAccount.id).executeTakeFirstOrThrow()).status,
    ).not.toBe('approved');
    const confirm = await agent.submit(details, '/donor', { ...fields, code: code.toLowerCase() });
    expect(confirm.url.pathname).toBe(`/connect/${connect.cid}/confirm`);
    expect((await t.db.selectFrom('donor_accounts').select('status').where('id', '=', account.id).executeTakeFirstOrThrow()).status).toBe(
      'approved',
    );
  });

  it('limits codes per caller address, reserved before the lookup: of a concurrent burst of 8 wrong codes, 5 are looked at and 3 are 429', async () => {
    const agent = browser();
    const details = await startTo(agent, connect.cid, fundName, '100');
    const fields = { firstName: 'A', lastName: 'B', email: 'burst@example.org' };
    const pages = await Promise.all(
      Array.from({ length: 8 }, (_, i) => agent.fork().submit(details, '/donor', { ...fields, code: `WRONGCODE${i}` })),
    );
    const statuses = pages.map((p) => p.status).sort();
    expect(statuses).toEqual([400, 400, 400, 400, 400, 429, 429, 429]);
    expect(pages.find((p) => p.status === 429)!.html).toContain('Too many codes were tried');
  });
});

describe('the flow’s state', () => {
  it('belongs to one browser: another browser with the same Connect, or a flow address or session id copied to it, shows none of it', async () => {
    const first = browser();
    const details = await startTo(first, connect.cid, 'Fidelity Charitable', '777');
    const confirm = await first.submit(details, '/donor', { firstName: 'Private', lastName: 'Person', email: 'private@example.org' });
    const done = await first.submit(confirm, '/authorize');
    const sessionId = (postedMessage(done.html)!.message as { workflowSessionId: string }).workflowSessionId;
    const second = browser();
    const opened = await second.request(`${flowUrl(connect.cid)}?origin=${encodeURIComponent(OPENER)}`);
    expect(opened.status).toBe(200);
    for (const step of ['amount', 'donor', 'confirm', 'done', `done?session=${sessionId}`, `confirm?id=${sessionId}`]) {
      const page = await second.request(flowUrl(connect.cid, step));
      for (const secret of ['Private', 'private@example.org', '$777', sessionId])
        expect(page.html, `${step} ${secret}`).not.toContain(secret);
    }
    const stranger = browser();
    for (const step of ['amount', 'confirm', 'done']) {
      const page = await stranger.request(flowUrl(connect.cid, step));
      expect(page.status).toBe(400);
      expect(page.html).toContain('Start again from the nonprofit’s page');
    }
  });

  it('is of one Connect: a flow of another Connect, or a cookie not sealed by us, is no flow', async () => {
    const other = await createConnect(t.db, { ownerOrganizationId: nonprofit.orgId, environment: 'sandbox' });
    const agent = browser();
    await startTo(agent, connect.cid, 'Fidelity Charitable', '100');
    const elsewhere = await agent.request(flowUrl(other.cid, 'donor'));
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.html).toContain('Start again from the nonprofit’s page');
    for (const value of [
      'enc:v1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      JSON.stringify({ cid: connect.cid, origin: OPENER, nonce: 'x', startedAt: Date.now() }),
    ]) {
      const forged = await fetch(flowUrl(connect.cid, 'donor'), {
        headers: { cookie: `alm_sandbox_donor_flow=${encodeURIComponent(value)}` },
      });
      expect(forged.status).toBe(400);
    }
  });

  it('shows a DAF whose institution is down, and refuses it', async () => {
    const id = await dafId('The Boston Foundation');
    await t.db.updateTable('dafs').set({ institution_down: true }).where('id', '=', id).execute();
    try {
      const agent = browser();
      const start = await agent.request(`${flowUrl(connect.cid)}?q=boston`);
      expect(start.status).toBe(400);
      const opened = await agent.request(`${flowUrl(connect.cid)}?origin=${encodeURIComponent(OPENER)}`);
      const searched = await agent.request(`${flowUrl(connect.cid)}?q=boston`);
      expect(searched.html).toMatch(new RegExp(`value="${id}" disabled`));
      expect(searched.html).toContain('temporarily unavailable');
      const refused = await agent.submit(opened, '/daf', { daf: id });
      expect(refused.status).toBe(400);
      expect(refused.html).toContain('The Boston Foundation is temporarily unavailable');
    } finally {
      await t.db.updateTable('dafs').set({ institution_down: false }).where('id', '=', id).execute();
    }
  });

  it('refuses a form without this flow’s token, or with another flow’s', async () => {
    const first = browser();
    const start = await first.request(`${flowUrl(connect.cid)}?origin=${encodeURIComponent(OPENER)}`);
    const second = browser();
    const otherStart = await second.request(`${flowUrl(connect.cid)}?origin=${encodeURIComponent(OPENER)}`);
    const daf = await dafId('Fidelity Charitable');
    const missing = await first.request(flowUrl(connect.cid, 'daf'), { method: 'POST', form: { daf } });
    expect(missing.status).toBe(403);
    expect(missing.html).toContain('This form could not be sent');
    const otherToken = /name="csrf" value="([^"]+)"/.exec(otherStart.html)![1]!;
    const crossed = await first.request(flowUrl(connect.cid, 'daf'), { method: 'POST', form: { daf, csrf: otherToken } });
    expect(crossed.status).toBe(403);
    expect((await first.submit(start, '/daf', { daf })).url.pathname).toBe(`/connect/${connect.cid}/amount`);
  });

  it('cancel forgets the flow and tells the opener', async () => {
    const agent = browser();
    const details = await startTo(agent, connect.cid, 'Fidelity Charitable', '100');
    const canceled = await agent.submit(details, '/cancel');
    expect(canceled.status).toBe(200);
    expect(postedMessage(canceled.html)).toEqual({
      origin: OPENER,
      message: { source: 'almoner-connect', type: 'exit', reason: 'canceled' },
      close: true,
    });
    expect((await agent.request(flowUrl(connect.cid, 'donor'))).status).toBe(400);
  });
});

describe('the authorization limits', () => {
  /** `n` browsers of one address, each at its confirmation page of the simulated DAF. */
  async function confirmations(cid: string, n: number, address?: (i: number) => string) {
    return Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const agent = browser(address?.(i) ?? '203.0.113.7');
        const signIn = await startTo(agent, cid, 'Sandbox DAF (simulated sign-in)', '20');
        return { agent, page: await agent.submit(signIn, '/sign-in', { username: 'u', password: 'p' }) };
      }),
    );
  }

  it('per caller address: of a concurrent burst of 13 authorizations, 10 write a session and 3 are a 429 page that tells the opener', async () => {
    const own = await createConnect(t.db, { ownerOrganizationId: nonprofit.orgId, environment: 'sandbox' });
    const ready = await confirmations(own.cid, 13);
    const pages = await Promise.all(ready.map(({ agent, page }) => agent.submit(page, '/authorize')));
    expect(pages.filter((p) => p.url.pathname.endsWith('/done')).length).toBe(10);
    const limited = pages.filter((p) => p.status === 429);
    expect(limited.length).toBe(3);
    expect(limited[0]!.html).toContain('Too many gifts at once');
    expect(postedMessage(limited[0]!.html)).toMatchObject({ origin: OPENER, message: { type: 'exit', reason: 'error' } });
    expect(await sessionsOf(own.cid)).toHaveLength(10);
  });

  it('per Connect, from every address: with 497 of its 500 taken, of a burst of 8 from 8 addresses 3 write a session', async () => {
    const own = await createConnect(t.db, { ownerOrganizationId: nonprofit.orgId, environment: 'sandbox' });
    const key = `donor_flow_authorize_connect:${server.runtime.keys.keyedHash('attempt_counter', `donor_flow_authorize_connect\0${own.cid}`)}`;
    await t.db
      .insertInto('attempt_counters')
      .values({ key, count: 497, window_ends_at: new Date(Date.now() + 3600_000) })
      .execute();
    const ready = await confirmations(own.cid, 8, (i) => `192.0.2.${i + 1}`);
    const pages = await Promise.all(ready.map(({ agent, page }) => agent.submit(page, '/authorize')));
    expect(pages.map((p) => p.status).sort()).toEqual([200, 200, 200, 429, 429, 429, 429, 429]);
    expect(await sessionsOf(own.cid)).toHaveLength(3);
  });
});
