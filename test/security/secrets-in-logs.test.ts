import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { addUser } from '../../src/accounts/service.js';
import { MIN_PASSWORD_PARAMS } from '../../src/accounts/passwords.js';
import { TEST_SECRETS_KEY } from '../helpers/app.js';
import { runAdmin } from '../helpers/admin-cli.js';
import { recoveryCodesOnPage, secretOnPage, setupCode } from '../helpers/authenticator.js';
import { FormBrowser } from '../helpers/browser.js';
import { dashboardSession } from '../helpers/dashboard.js';
import { basic, endpoints, introspect, obtainTokens, tokenRequest, type Env } from '../helpers/flow.js';
import { apiRequest } from '../helpers/gateway.js';
import { inviteFromMembersPage, invitationMail } from '../helpers/invitations.js';
import { captureLogs } from '../helpers/log-capture.js';
import { askForReset, clearAttemptCounters, resetLinksFor } from '../helpers/password-reset.js';
import { createStaff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

/**
 * Secrets in logs (docs/security.md, "Secrets in logs"): every flow that mints a link, a code,
 * a key, a token or a secret, driven over HTTP (and the admin CLI) as people and clients use
 * them, while every log line of the server is kept, at the most verbose level. No minted secret
 * may appear in any line, raw or URL-encoded, nor in the metrics' exposition, nor on the CLI's
 * standard error. Each test first checks that the lines of its flow were logged, so the scan
 * has something to read.
 */
const logs = captureLogs('trace');
const { testDatabase: t, server } = useOAuthServer({ logger: logs.logger, staff: 0, config: { webhook_poll_ms: 100 } });

const REDIRECT = 'https://app.example.org/callback';
const NEW_PASSWORD = 'a long enough new password';
const fresh = (label: string) => `${label}-${crypto.randomBytes(4).toString('hex')}@example.org`;
const anonymous = () => new FormBrowser(() => false);

/** What the admin CLI wrote on standard error over the whole file (its only log). */
let cliErrors = '';
async function admin(...argv: string[]) {
  const run = await runAdmin([...argv, '--json'], {
    DATABASE_URL: t.url,
    ALMONER_SECRETS_KEY: TEST_SECRETS_KEY,
    ALMONER_CLIENTS_FILE: server.config.clients_file,
    ALMONER_DASHBOARD_URL: server.config.dashboard_url,
    ALMONER_SANDBOX_DASHBOARD_URL: server.config.sandbox_dashboard_url,
  });
  cliErrors += run.stderr;
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

/** The access-log lines whose path starts with `prefix` (a redacted path still starts with its page's prefix). */
function requestLines(prefix: string) {
  return logs.records().filter((r) => r.msg === 'request' && typeof r.path === 'string' && r.path.startsWith(prefix));
}

/** The forms a secret takes on its way: as minted, and as a URL or form body encodes it. */
function formsOf(secret: string): string[] {
  return [...new Set([secret, encodeURIComponent(secret), new URLSearchParams({ s: secret }).toString().slice(2)])];
}

/**
 * No minted secret in any log line so far, in the metrics' exposition, or on the CLI's
 * standard error. On failure, the line that holds it is shown.
 */
async function expectNowhere(minted: Record<string, string | readonly string[]>) {
  const lines = logs.chunks.join('').split('\n');
  const metrics = await (await fetch(`${server.urls.api}/metrics`)).text();
  expect(metrics).toContain('almoner_http_request_duration_seconds');
  for (const [what, values] of Object.entries(minted)) {
    for (const value of [values].flat()) {
      expect(value.length, `${what} is a real secret`).toBeGreaterThanOrEqual(8);
      for (const form of formsOf(value)) {
        expect(
          lines.find((line) => line.includes(form)),
          `${what} in a log line`,
        ).toBeUndefined();
        expect(
          metrics.split('\n').find((line) => line.includes(form)),
          `${what} in a metric`,
        ).toBeUndefined();
        expect(cliErrors.includes(form), `${what} on the CLI's standard error`).toBe(false);
      }
    }
  }
}

describe('invitation links', () => {
  it('inviting from the members page and the CLI, opening the link, setting a password, accepting as an existing user', async () => {
    const s = await createStaff(t.db);
    const owner = await dashboardSession(server, 'production', s.users.owner);

    // A new user: the link opened, a refused password, the account made, the used link again.
    const newcomer = fresh('newcomer');
    expect((await inviteFromMembersPage(owner, s.ein, newcomer, 'admin')).status).toBe(200);
    const first = await invitationMail(t.db, newcomer);
    const browser = anonymous();
    const page = await browser.request(first.link);
    expect(page.status).toBe(200);
    expect((await browser.submit(page, '/invitations/', { password: 'too short', password_repeat: 'too short' })).status).toBe(400);
    const joined = await browser.submit(page, '/invitations/', { password: NEW_PASSWORD, password_repeat: NEW_PASSWORD });
    expect(joined.html).toContain(`Signed in as <strong>${newcomer}</strong>`);
    expect((await anonymous().request(first.link)).status).toBe(410);
    // Spellings the router also answers, or a page under the link that does not exist.
    for (const variant of [`${first.link}/`, first.link.replace('/invitations/', '/INVITATIONS/'), `${first.link}/elsewhere`])
      await anonymous().request(variant);

    // An existing user: sent to sign in (the link in ?next=), back to the link, Accept.
    const existing = fresh('existing');
    await addUser(t.db, { email: existing, password: NEW_PASSWORD }, MIN_PASSWORD_PARAMS);
    await inviteFromMembersPage(owner, s.ein, existing, 'member');
    const second = await invitationMail(t.db, existing);
    const member = anonymous();
    const signIn = await member.request(second.link);
    expect(signIn.url.pathname).toBe('/sign-in');
    const join = await member.submit(signIn, '/sign-in', { email: existing, password: NEW_PASSWORD });
    expect(join.url.pathname).toBe(new URL(second.link).pathname);
    expect((await member.submit(join, '/accept')).url.pathname).toBe('/account');

    // From the CLI (the maker's invitation), accepted on the sandbox dashboard.
    const byCli = fresh('by-cli');
    await admin('members', 'invite', '--org', s.ein, '--email', byCli, '--role', 'owner', '--environment', 'sandbox');
    const third = await invitationMail(t.db, byCli);
    const cliBrowser = anonymous();
    const cliPage = await cliBrowser.request(third.link);
    expect((await cliBrowser.submit(cliPage, '/invitations/', { password: NEW_PASSWORD, password_repeat: NEW_PASSWORD })).status).toBe(200);

    await server.runtime.background.drain();
    expect(requestLines('/invitations/').length).toBeGreaterThanOrEqual(6);
    // The dashboards' mail (the CLI's own sender has no log).
    expect(logs.records().filter((r) => String(r.msg).startsWith('mail stored')).length).toBeGreaterThanOrEqual(2);
    await expectNowhere({
      'invitation token': [first.token, second.token, third.token],
      password: NEW_PASSWORD,
      'session cookie': cookieValues(browser, member, owner.browser),
    });
  });
});

describe('password reset links', () => {
  it('asking for a link, opening it, a refused and an accepted new password, the used link again', async () => {
    await clearAttemptCounters(t.db);
    const s = await createStaff(t.db);
    const user = s.users.member;
    const browser = anonymous();
    expect((await askForReset(server.urls.dashboard, user.email, browser)).status).toBe(200);
    const [link] = await resetLinksFor(server, t.db, user.email);
    const token = link!.split('/').at(-1)!;
    const form = await browser.request(link!);
    expect(form.status).toBe(200);
    expect((await browser.submit(form, '/reset-password/', { password: 'short', confirmation: 'short' })).status).toBe(400);
    const done = await browser.submit(form, '/reset-password/', { password: NEW_PASSWORD, confirmation: NEW_PASSWORD });
    expect(done.html).toContain('Your password was changed');
    expect((await anonymous().request(link!)).status).toBe(410);
    await anonymous().request(`${link}/elsewhere`);

    await server.runtime.background.drain();
    expect(requestLines('/reset-password/').length).toBeGreaterThanOrEqual(4);
    await expectNowhere({ 'reset token': token, password: [NEW_PASSWORD, user.password] });
  });
});

describe('API keys', () => {
  it('made on the dashboard and by the CLI, used on the gateway (in the right and the wrong environment), revoked and used again', async () => {
    const s = await createStaff(t.db);
    const session = await dashboardSession(server, 'sandbox', s.users.admin);
    // Created, then shown once on the page the form redirects to.
    const created = await session.browser.submit(await session.get(`/orgs/${s.ein}/api-keys`), '/api-keys', { name: 'Log scan' });
    expect(created.status).toBe(200);
    const dashboardKey = /id="new-key"[^>]*>([^<]+)</.exec(created.html)![1]!;
    const cliKey = (await admin('api-keys', 'create', '--org', s.ein, '--environment', 'production')).key as string;

    expect((await apiRequest(server, 'sandbox', 'GET', '/v1/donations?limit=1', { bearer: dashboardKey })).status).toBe(200);
    expect((await apiRequest(server, 'production', 'GET', '/v1/donations?limit=1', { bearer: cliKey })).status).toBe(200);
    expect((await apiRequest(server, 'sandbox', 'GET', '/v1/donations', { bearer: cliKey })).status).toBe(401);
    // A key where no key belongs: in the query, and as a path segment.
    await fetch(`${server.urls.api}/v1/donations?api_key=${cliKey}`);
    await fetch(`${server.urls.api}/v1/donations/${cliKey}`, { headers: { authorization: `Bearer ${cliKey}` } });
    const listed = await session.get(`/orgs/${s.ein}/api-keys`);
    const confirm = await session.get(/href="([^"]+\/revoke)"/.exec(listed.html)![1]!);
    const revoked = await session.browser.submit(confirm, '/api-keys/revoke');
    expect(revoked.html).toContain('is revoked');
    expect((await apiRequest(server, 'sandbox', 'GET', '/v1/donations?limit=1', { bearer: dashboardKey })).status).toBe(401);

    expect(requestLines('/v1/donations').length).toBeGreaterThanOrEqual(5);
    await expectNowhere({ 'API key': [dashboardKey, cliKey] });
  });
});

describe('client secrets', () => {
  /** A refresh grant with a bogus token: invalid_grant means the client authenticated, invalid_client that it did not. */
  async function probe(environment: Env, credentials: { client_id: string; client_secret: string }) {
    return (await tokenRequest(server, environment, credentials, { grant_type: 'refresh_token', refresh_token: 'bogus' })).body.error;
  }
  async function authenticates(environment: Env, credentials: { client_id: string; client_secret: string }) {
    await server.runtime.clients.syncNow();
    for (let tries = 0; tries < 25 && (await probe(environment, credentials)) !== 'invalid_grant'; tries += 1)
      await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await probe(environment, credentials)).toBe('invalid_grant');
  }

  it('made by `clients add` and `rotate-secret`, sent in Basic credentials, in the body, and after rotation', async () => {
    const created = (await admin(
      'clients',
      'add',
      '--environment',
      'sandbox',
      '--name',
      'Logged App',
      '--redirect-uri',
      'http://127.0.0.1:8080/cb',
      '--scope',
      'read_only openid',
    )) as { client_id: string; client_secret: string };
    await authenticates('sandbox', created);
    const rotated = (await admin('clients', 'rotate-secret', '--client-id', created.client_id)) as {
      client_id: string;
      client_secret: string;
    };
    await authenticates('sandbox', rotated);
    expect(await probe('sandbox', created)).toBe('invalid_client');
    // The secret in the body (a method this server refuses) and in the query.
    const token = `${endpoints(server, 'sandbox').token}?client_secret=${encodeURIComponent(rotated.client_secret)}`;
    const posted = await fetch(token, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: 'bogus',
        client_id: rotated.client_id,
        client_secret: rotated.client_secret,
      }),
    });
    expect(posted.status).toBeGreaterThanOrEqual(400);

    expect(logs.records().filter((r) => r.msg === 'token request refused').length).toBeGreaterThanOrEqual(2);
    await expectNowhere({ 'client secret': [created.client_secret, rotated.client_secret] });
  });
});

describe('authorization codes, access, refresh and ID tokens', () => {
  it('the code flow, refresh, replays, introspection, userinfo, revocation and gateway calls with the bearer token', async () => {
    const s = await createStaff(t.db);
    const client = await server.registerClient({ environment: 'production', redirectUris: [REDIRECT] });
    const { tokens, code, browser } = await obtainTokens(server, {
      environment: 'production',
      client,
      clientId: client.client_id,
      redirectUri: REDIRECT,
      scope: 'openid read_only',
      login: s.users.member,
    });
    expect(tokens.status).toBe(200);
    const access = tokens.body.access_token as string;
    const refresh = tokens.body.refresh_token as string;
    // The code again (refused, and the tokens it gave revoked), then a fresh pair to go on with.
    expect((await tokenRequest(server, 'production', client, { grant_type: 'authorization_code', code })).status).toBe(400);
    const second = await obtainTokens(server, {
      environment: 'production',
      client,
      clientId: client.client_id,
      redirectUri: REDIRECT,
      scope: 'openid read_only',
      login: s.users.member,
    });
    const refreshed = await tokenRequest(server, 'production', client, {
      grant_type: 'refresh_token',
      refresh_token: second.tokens.body.refresh_token as string,
    });
    expect(refreshed.status).toBe(200);
    const newAccess = refreshed.body.access_token as string;
    const newRefresh = refreshed.body.refresh_token as string;
    // The exchanged refresh token again (reuse), and with another client's credentials.
    await tokenRequest(server, 'production', client, {
      grant_type: 'refresh_token',
      refresh_token: second.tokens.body.refresh_token as string,
    });
    const third = await obtainTokens(server, {
      environment: 'production',
      client,
      clientId: client.client_id,
      redirectUri: REDIRECT,
      scope: 'openid read_only',
      login: s.users.member,
    });
    const live = third.tokens.body.access_token as string;
    const liveRefresh = third.tokens.body.refresh_token as string;
    await tokenRequest(
      server,
      'production',
      { client_id: client.client_id, client_secret: 'not-the-secret-1234' },
      { grant_type: 'refresh_token', refresh_token: liveRefresh },
    );

    expect((await introspect(server, 'production', client, live)).body.active).toBe(true);
    expect((await introspect(server, 'production', client, liveRefresh)).body.active).toBe(true);
    const api = endpoints(server, 'production').api;
    expect((await fetch(`${api}/auth/oauth/userinfo`, { headers: { authorization: `Bearer ${live}` } })).status).toBe(200);
    await fetch(`${api}/auth/oauth/userinfo?access_token=${live}`);
    expect((await apiRequest(server, 'production', 'GET', '/v1/donations?limit=1', { bearer: live })).status).toBe(200);
    await fetch(`${api}/v1/donations?page_token=${encodeURIComponent(liveRefresh)}`, { headers: { authorization: `Bearer ${live}` } });
    const revoke = await fetch(`${api}/auth/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client.client_id, client.client_secret) },
      body: new URLSearchParams({ token: liveRefresh }),
    });
    expect(revoke.status).toBe(200);
    expect((await apiRequest(server, 'production', 'GET', '/v1/donations?limit=1', { bearer: live })).status).toBe(401);

    expect(requestLines('/auth/oauth/').length).toBeGreaterThanOrEqual(8);
    expect(requestLines('/oauth/').length).toBeGreaterThanOrEqual(6);
    await expectNowhere({
      'authorization code': [code, second.code, third.code],
      'access token': [access, second.tokens.body.access_token as string, newAccess, live],
      'refresh token': [refresh, second.tokens.body.refresh_token as string, newRefresh, liveRefresh],
      'ID token': [tokens.body.id_token as string, third.tokens.body.id_token as string],
      'client secret': client.client_secret,
      'PKCE verifier': third.verifier,
      'session cookie': cookieValues(browser, third.browser),
      password: s.users.member.password,
    });
  });
});

describe('DAF codes', () => {
  it('a code made by the provider (redeemed by the donor), a code mailed to a donor (verified by the provider), and wrong codes', async () => {
    const provider = await createStaff(t.db, { kind: 'fund_provider' });
    const nonprofit = await createStaff(t.db);
    const key = (await admin('api-keys', 'create', '--org', provider.ein, '--environment', 'sandbox')).key as string;
    const call = (method: string, path: string, json?: unknown) => apiRequest(server, 'sandbox', method, path, { bearer: key, json });

    const account = await call('POST', '/v1/donor_accounts', { donor: { email: fresh('donor') } });
    const donorEmail = (account.body.donor as { email: string }).email;
    const token = await call('POST', `/v1/donor_accounts/${account.body.id as string}/authorization_tokens`, { expires_in: 3600 });
    expect(token.status).toBe(201);
    const made = token.body.code as string;
    await admin('daf', 'redeem-code', '--environment', 'sandbox', '--email', donorEmail, '--code', made);

    const asker = fresh('asker');
    await admin(
      'daf',
      'submit-grant-request',
      '--fund-provider',
      provider.ein,
      '--environment',
      'sandbox',
      '--email',
      asker,
      '--ein',
      nonprofit.ein,
      '--amount-cents',
      '2500',
    );
    const mail = await t.db.selectFrom('outbound_mail').select('body').where('recipient', '=', asker).executeTakeFirstOrThrow();
    const mailed = /code: ([A-Z0-9]{12})/.exec(mail.body)![1]!;
    const typed = `${mailed.slice(0, 6).toLowerCase()}-${mailed.slice(6).toLowerCase()}`;
    expect((await call('POST', '/v1/authorization_tokens/verify', { code: 'WRONGCODE234' })).status).toBe(404);
    expect((await call('POST', '/v1/authorization_tokens/verify', { code: typed })).status).toBe(200);
    expect((await call('POST', '/v1/authorization_tokens/verify', { code: mailed })).status).toBe(404);

    expect(requestLines('/v1/authorization_tokens/').length).toBeGreaterThanOrEqual(3);
    await expectNowhere({ 'DAF code': [made, mailed, typed], 'API key': key });
  });
});

describe('second factors', () => {
  it('an authenticator app set up on the Security page, its recovery codes, a sign-in with one, and new codes', async () => {
    const s = await createStaff(t.db);
    const user = s.users.admin;
    const session = await dashboardSession(server, 'production', user);
    const setup = await session.get('/account/security/authenticator');
    const secret = secretOnPage(setup.html);
    const shown = await session.browser.submit(setup, '/account/security/authenticator', { code: setupCode(user.email, secret) });
    const codes = recoveryCodesOnPage(shown.html);
    expect(codes).toHaveLength(10);

    const browser = anonymous();
    const step = await browser.submit(await browser.request(`${server.urls.dashboard}/sign-in?next=/account`), '/sign-in', {
      email: user.email,
      password: user.password,
    });
    expect((await browser.submit(step, '/sign-in/second-factor', { code: codes[0]!.toLowerCase() })).url.pathname).toBe('/account');
    // New codes from the browser that just signed in with a recovery code: a second factor proven in that session.
    const renewed = recoveryCodesOnPage(
      (
        await browser.submit(await browser.request(`${server.urls.dashboard}/account/security`), '/recovery-codes', {
          password: user.password,
        })
      ).html,
    );
    expect(renewed).toHaveLength(10);

    await server.runtime.background.drain();
    expect(requestLines('/account/security').length).toBeGreaterThanOrEqual(3);
    const spellings = (list: string[]) => list.flatMap((c) => [c, c.replace(/-/g, ''), c.toLowerCase()]);
    await expectNowhere({ 'TOTP secret': secret, 'recovery code': spellings([...codes, ...renewed]), password: user.password });
  });
});

describe('webhook signing secrets', () => {
  it('generated on the dashboard and by the API, chosen by the caller, and used to sign deliveries to a live and a dead receiver', async () => {
    const provider = await createStaff(t.db, { kind: 'fund_provider' });
    const receiver = await startReceiver();
    const dead = await startReceiver();
    await dead.close();
    try {
      const session = await dashboardSession(server, 'sandbox', provider.users.admin);
      const added = await session.browser.submit(await session.get(`/orgs/${provider.ein}/webhooks`), '/webhooks', {
        url: receiver.url,
        category: 'donor_account.created',
      });
      expect(added.status).toBe(201);
      const fromDashboard = /id="signing-secret"[^>]*>([^<]+)</.exec(added.html)![1]!;
      const key = (await admin('api-keys', 'create', '--org', provider.ein, '--environment', 'sandbox')).key as string;
      const generated = await apiRequest(server, 'sandbox', 'POST', '/v1/event_subscriptions', {
        bearer: key,
        json: { url: `${receiver.url}/api`, category: 'donor_account.created' },
      });
      expect(generated.status).toBe(201);
      const fromApi = generated.body.signing_secret as string;
      const chosen = `whsec_${crypto.randomBytes(32).toString('base64')}`;
      expect(
        (
          await apiRequest(server, 'sandbox', 'POST', '/v1/event_subscriptions', {
            bearer: key,
            json: { url: dead.url, category: 'donor_account.created', signing_secret: chosen },
          })
        ).status,
      ).toBe(201);

      expect(
        (await apiRequest(server, 'sandbox', 'POST', '/v1/donor_accounts', { bearer: key, json: { donor: { email: fresh('hooked') } } }))
          .status,
      ).toBe(201);
      const deadline = Date.now() + 10_000;
      while ((receiver.received.length < 2 || !logs.records().some((r) => r.msg === 'webhook delivery failed')) && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 100));
      expect(receiver.received).toHaveLength(2);
      expect(logs.records().some((r) => r.msg === 'webhook delivery failed')).toBe(true);

      await expectNowhere({
        'webhook signing secret': [
          fromDashboard,
          fromApi,
          chosen,
          ...[fromDashboard, fromApi, chosen].map((s) => s.slice('whsec_'.length)),
        ],
        'API key': key,
      });
    } finally {
      await receiver.close();
    }
  });
});

/**
 * The cookie values a user agent holds for the dashboards (sessions, sign-in nonces, CSRF
 * bindings, every cookie's signature). The provider's interaction and resume cookies are left
 * out: their value is the interaction's id, which its path names (/oauth/interaction/<uid>),
 * and which the provider honours only beside the cookie's signature.
 */
function cookieValues(...browsers: FormBrowser[]): string[] {
  const origins = [server.urls.dashboard, server.urls.sandboxDashboard, server.urls.api].map((o) => new URL(o));
  const pairs = browsers.flatMap((b) => origins.flatMap((o) => b.cookieHeader(o).split('; ')));
  return pairs
    .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)] as const)
    .filter(([name, value]) => !/_(interaction|resume)$/.test(name) && value.length >= 16)
    .map(([, value]) => value);
}
