import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { hostTargets, withDevAliases } from '../../src/http/hosts.js';
import { FormBrowser } from '../helpers/browser.js';
import { nextCode } from '../helpers/authenticator.js';
import { dashboardSession, enrolAuthenticator } from '../helpers/dashboard.js';
import { createStaff } from '../helpers/oauth-server.js';
import { SoftwarePasskey } from '../helpers/software-passkey.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * The dev profile at its default, loopback addresses (docs/oauth.md, "Passkeys at the dev
 * default"): each dashboard also answers at http://localhost:<port>, its own origin, the same
 * environment and data, so a passkey can be made; the authorization flow stays at the
 * configured URL. An address the server does not serve is a 421 page for a browser.
 */
const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
const configured = () => server.urls.dashboard;
const alias = () => configured().replace('127.0.0.1', 'localhost');
const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)![1]!;

/** A raw request with the Host we choose (fetch will not send another one). */
function rawGet(port: number, path: string, headers: Record<string, string>): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, type: String(res.headers['content-type'] ?? ''), body }));
    });
    req.on('error', reject);
  });
}

const portOf = (origin: string) => Number(new URL(origin).port);

describe('the dev alias of a loopback dashboard', () => {
  it('exists in the dev profile only, for dashboards at a loopback IP address, one per dashboard', () => {
    const base = {
      base_url: 'http://127.0.0.1:3000',
      sandbox_base_url: 'http://127.0.0.1:3001',
      dashboard_url: 'http://127.0.0.1:3002',
      sandbox_dashboard_url: 'http://127.0.0.1:3003',
    };
    const aliases = (config: typeof base, profile: 'dev' | 'production') =>
      withDevAliases({ profile }, hostTargets(config))
        .filter((t) => t.aliasOf)
        .map((t) => `${t.aliasOf} ${t.origin}`);
    expect(aliases(base, 'dev')).toEqual(['http://127.0.0.1:3002 http://localhost:3002', 'http://127.0.0.1:3003 http://localhost:3003']);
    expect(aliases(base, 'production')).toEqual([]);
    // At a name already, or on another interface: no alias. Two dashboards that would share one: neither.
    expect(aliases({ ...base, dashboard_url: 'http://localhost:3002', sandbox_dashboard_url: 'http://192.168.1.5:3003' }, 'dev')).toEqual(
      [],
    );
    expect(aliases({ ...base, sandbox_dashboard_url: 'http://127.0.0.2:3002' }, 'dev')).toEqual([]);
    expect(aliases({ ...base, sandbox_dashboard_url: 'http://[::1]:3003' }, 'dev')).toEqual([
      'http://127.0.0.1:3002 http://localhost:3002',
      'http://[::1]:3003 http://localhost:3003',
    ]);
  });

  it('is the same dashboard at its own origin: sign-in, pages and data; CSRF checked against the alias', async () => {
    const s = await createStaff(t.db);
    const browser = new FormBrowser(() => false);
    const signIn = await browser.request(`${alias()}/sign-in?next=/account`);
    expect(signIn.status).toBe(200);
    const landed = await browser.submit(signIn, '/sign-in', { email: s.users.owner.email, password: s.users.owner.password });
    expect(landed.url.origin).toBe(alias());
    expect(landed.url.pathname).toBe('/account');
    // The session is the alias's: its cookie is not sent to the configured URL.
    expect(browser.cookieHeader(new URL(alias()))).toContain('alm_production_session=');
    expect(browser.cookieHeader(new URL(configured()))).toBe('');
    // The same data: a key made at the alias is listed at the configured URL.
    const keys = await browser.request(`${alias()}/orgs/${s.ein}/api-keys`);
    const made = await browser.submit(keys, '/api-keys', { name: 'Made at the alias' });
    expect(made.html).toMatch(/id="new-key"[^>]*>alm_live_/);
    const atConfigured = await dashboardSession(server, 'production', s.users.owner);
    expect((await atConfigured.get(`/orgs/${s.ein}/api-keys`)).html).toContain('Made at the alias');
    // A form posted to the alias from the configured URL's pages is cross-origin: refused.
    const forged = await fetch(`${alias()}/orgs/${s.ein}/api-keys`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        cookie: browser.cookieHeader(new URL(alias())),
        origin: configured(),
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'text/html',
      },
      body: new URLSearchParams({ csrf: csrfOf(keys.html), name: 'forged' }),
    });
    expect(forged.status).toBe(403);
    expect(await t.db.selectFrom('api_keys').select('id').where('organization_id', '=', s.orgId).execute()).toHaveLength(1);
  });

  it('makes passkeys for its own name (RP ID localhost, origin the alias), and the Security page at 127.0.0.1 links there', async () => {
    const s = await createStaff(t.db);
    const atConfigured = await dashboardSession(server, 'production', s.users.member);
    const security = await atConfigured.get('/account/security');
    expect(security.html).toContain('Passkeys need this dashboard at a domain name, and it is at an IP address');
    expect(security.html).toContain(`<a href="${alias()}/account/security">${alias()}</a>`);
    expect(security.html).not.toContain('data-passkey');

    const browser = new FormBrowser(() => false);
    const signIn = await browser.request(`${alias()}/sign-in?next=/account/security`);
    const atAlias = await browser.submit(signIn, '/sign-in', { email: s.users.member.email, password: s.users.member.password });
    expect(atAlias.html).toContain('data-passkey="register"');
    expect(atAlias.html).not.toContain('id="passkeys-elsewhere"');
    const options = JSON.parse(
      (
        await browser.request(`${alias()}/account/security/passkeys/options`, {
          method: 'POST',
          form: { csrf: csrfOf(atAlias.html), name: 'Laptop' },
        })
      ).html,
    ) as { rp: { id: string } };
    expect(options.rp.id).toBe('localhost');

    // A passkey of that name signs in at the alias, alone, as the browser there presents it.
    const passkey = new SoftwarePasskey(alias());
    await passkey.storeFor(t.db, s.users.member.id);
    const other = new FormBrowser(() => false);
    const page = await other.request(`${alias()}/sign-in`);
    expect(page.html).toContain('Sign in with a passkey');
    const csrf = csrfOf(page.html);
    const asked = JSON.parse((await other.request(`${alias()}/sign-in/passkey/options`, { method: 'POST', form: { csrf } })).html) as {
      challenge: string;
      rpId: string;
    };
    expect(asked.rpId).toBe('localhost');
    const done = await other.request(`${alias()}/sign-in/passkey`, {
      method: 'POST',
      form: { csrf, next: '/account', response: passkey.answer(asked.challenge) },
    });
    expect(done.url.href).toBe(`${alias()}/account`);
    // At the configured URL it is listed as working elsewhere.
    expect((await atConfigured.get('/account/security')).html).toContain('Works at localhost, not on this dashboard');
  });

  it('with a second factor not proven lately, the Security page says passkeys come after "Confirm it is you", at 127.0.0.1 and at the alias', async () => {
    const s = await createStaff(t.db);
    const user = s.users.admin;
    const atConfigured = await dashboardSession(server, 'production', user);
    await enrolAuthenticator(atConfigured, user.email);
    const staleProof = () =>
      t.db
        .updateTable('browser_sessions')
        .set({ factor_proved_at: new Date(Date.now() - 11 * 60_000) })
        .where('user_id', '=', user.id)
        .execute();
    await staleProof();
    const security = await atConfigured.get('/account/security');
    expect(security.html).toContain('id="confirm-first"');
    // Where to go for a passkey, and what to do there, even before confirming here.
    expect(security.html).toContain(`<a href="${alias()}/account/security">${alias()}</a>`);
    expect(security.html).toContain('“Add a passkey” appears there once you confirm it is you');

    // At the alias: signing in with the second factor counts as confirming, so the form is there.
    const browser = new FormBrowser(() => false);
    const password = await browser.submit(await browser.request(`${alias()}/sign-in?next=/account/security`), '/sign-in', user);
    const atAlias = await browser.submit(password, '/sign-in/second-factor', { code: await nextCode(user.email, t.db) });
    expect(atAlias.url.href).toBe(`${alias()}/account/security`);
    expect(atAlias.html).toContain('data-passkey="register"');
    // Later, the page says the form comes back after "Confirm it is you".
    await staleProof();
    const later = await browser.request(`${alias()}/account/security`);
    expect(later.html).not.toContain('data-passkey="register"');
    expect(later.html).toContain('“Add a passkey” appears here once you confirm it is you (above).');
  });

  it('leaves the authorization flow at the configured URL: its endpoint and pages redirect there, path and query kept', async () => {
    for (const path of ['/oauth/authorize?client_id=x&state=s%20t', '/oauth/interaction/abc/login']) {
      const answer = await fetch(`${alias()}${path}`, { redirect: 'manual' });
      expect({ path, status: answer.status }).toEqual({ path, status: 307 });
      expect(answer.headers.get('location')).toBe(`${configured()}${path}`);
    }
    const sandbox = server.urls.sandboxDashboard;
    const answer = await fetch(`${sandbox.replace('127.0.0.1', 'localhost')}/oauth/sandbox/authorize?x=1`, { redirect: 'manual' });
    expect(answer.headers.get('location')).toBe(`${sandbox}/oauth/sandbox/authorize?x=1`);
    // Programs asking the alias what it is hear the configured URL.
    expect(await (await fetch(`${alias()}/`, { headers: { accept: 'application/json' } })).json()).toMatchObject({
      surface: 'dashboard',
      dashboard_url: configured(),
    });
  });
});

describe('an address the server does not serve', () => {
  it('is a 421 page for a browser, naming this port’s URL, and a problem for a program', async () => {
    const port = portOf(configured());
    const page = await rawGet(port, '/account/security?x=1', {
      host: `almoner.invalid:${port}`,
      accept: 'text/html,application/xhtml+xml',
    });
    expect(page.status).toBe(421);
    expect(page.type).toContain('text/html');
    expect(page.body).toContain('This server does not answer to the name “almoner.invalid:');
    expect(page.body).toContain(
      `This is Almoner&#39;s production dashboard; open it at ${configured()} (or ${alias()}, where passkeys work).`,
    );
    expect(page.body).toContain(`<a href="${configured()}/account/security?x=1">`);
    expect(page.body).toContain(`<a href="${alias()}/account/security?x=1">`);
    expect(page.body).toMatch(/quote this request id:<br><code>[0-9a-f-]{36}<\/code>/);
    const api = await rawGet(portOf(server.urls.api), '/', { host: 'almoner.invalid', accept: 'text/html' });
    expect(api.body).toContain(`This is Almoner&#39;s production API; open it at ${server.urls.api}.`);
    // The request's own host never becomes a link; a path that looks like one stays a path here.
    const tricky = await rawGet(port, '//evil.example/x', { host: 'evil.example', accept: 'text/html' });
    expect([...tricky.body.matchAll(/<a href="([^"]+)"/g)].map((m) => new URL(m[1]!).origin).sort()).toEqual(
      [alias(), configured()].sort(),
    );
    const program = await rawGet(port, '/account', { host: 'almoner.invalid', accept: 'application/json' });
    expect(program.status).toBe(421);
    expect(program.type).toContain('application/problem+json');
    expect(JSON.parse(program.body)).toMatchObject({ status: 421, title: 'Misdirected Request' });
  });
});
