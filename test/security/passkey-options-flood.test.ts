import { describe, expect, it } from 'vitest';
import { authorizationRequest } from '../helpers/flow.js';
import { FormBrowser } from '../helpers/browser.js';
import { createStaff } from '../helpers/oauth-server.js';
import { SoftwarePasskey } from '../helpers/software-passkey.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { passkeySignInsStartedPerCallerAddress } from '../../src/limits/rate-limits.js';

/**
 * Filling the passkey challenge table (docs/security.md, "Flooding the passkey challenge
 * table"): anybody may ask for passwordless sign-in options, and a client that never sends the
 * challenge cookie back got a new row each time, without bound. The rows are counted per
 * caller address before they are written, on the dashboard and in the authorization flow alike;
 * an answered one gives its point back; expired ones are cleared as new ones come. The server
 * trusts the loopback proxy, so each caller is the address it forwards.
 */
const REDIRECT = 'https://app.example.org/callback';
const {
  testDatabase: t,
  server,
  clients: { client },
} = useOAuthServer({
  staff: 0,
  dashboardsAtLocalhost: true,
  config: { trusted_proxies: ['127.0.0.1/32'] },
  clients: { client: { environment: 'production', redirectUris: [REDIRECT] } },
});
const origin = () => server.urls.dashboard;
const challengeRows = async () =>
  Number(
    (
      await t.db
        .selectFrom('webauthn_challenges')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

/** A page with a passkey form (the dashboard's sign-in, or the flow's), as seen from `address`: where its options come from, its CSRF token and cookies. */
async function passkeyForm(surface: 'dashboard' | 'flow', address: string) {
  const browser = new FormBrowser(() => false, { 'x-forwarded-for': address });
  const start =
    surface === 'dashboard'
      ? `${origin()}/sign-in?next=/account`
      : (
          await authorizationRequest(server, {
            environment: 'production',
            clientId: client.client_id,
            redirectUri: REDIRECT,
            scope: 'read_only',
          })
        ).url.toString();
  const page = await browser.request(start);
  const form = /<form method="post" action="([^"]+)"[^>]*data-options="([^"]+)"[^>]*>[\s\S]*?name="csrf" value="([^"]+)"/.exec(page.html);
  if (!form) throw new Error(`no passkey form at ${page.url} (${page.status})`);
  const [, action, options, csrf] = form;
  const url = (path: string) => new URL(path.replace(/&amp;/g, '&'), page.url);
  return { browser, address, csrf: csrf!, action: url(action!), options: url(options!), cookie: browser.cookieHeader(url(options!)) };
}

/** Asks for options as a script would: the page's cookies only, never the challenge cookie it is given back. */
async function askOptions(form: Awaited<ReturnType<typeof passkeyForm>>) {
  const response = await fetch(form.options, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
      origin: form.options.origin,
      cookie: form.cookie,
      'x-forwarded-for': form.address,
    },
    body: new URLSearchParams({ csrf: form.csrf }),
  });
  return { status: response.status, retryAfter: response.headers.get('retry-after'), text: await response.text() };
}

describe('flooding the passkey challenge table', () => {
  it(`a concurrent burst from one address writes ${passkeySignInsStartedPerCallerAddress.max} challenges; the rest are 429 on the dashboard and in the flow, other addresses are not affected`, async () => {
    const before = await challengeRows();
    const form = await passkeyForm('dashboard', '203.0.113.10');
    const burst = passkeySignInsStartedPerCallerAddress.max + 15;
    const answers = await Promise.all(Array.from({ length: burst }, () => askOptions(form)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(passkeySignInsStartedPerCallerAddress.max);
    const refused = answers.filter((a) => a.status === 429);
    expect(refused).toHaveLength(15);
    expect(Number(refused[0]!.retryAfter)).toBeGreaterThan(0);
    expect(refused[0]!.text).toContain('Too many passkey sign-ins were started from your network');
    expect(await challengeRows()).toBe(before + passkeySignInsStartedPerCallerAddress.max);

    // The flow's passwordless options share the address's count.
    expect((await askOptions(await passkeyForm('flow', '203.0.113.10'))).status).toBe(429);
    expect(await challengeRows()).toBe(before + passkeySignInsStartedPerCallerAddress.max);
    // Another address, on either surface, is served.
    expect((await askOptions(await passkeyForm('dashboard', '198.51.100.10'))).status).toBe(200);
    expect((await askOptions(await passkeyForm('flow', '198.51.100.10'))).status).toBe(200);
  });

  it('a passkey sign-in that answers its options gives the point back: people signing in behind one address never reach the limit', async () => {
    const staff = await createStaff(t.db);
    const passkey = new SoftwarePasskey(origin());
    await passkey.storeFor(t.db, staff.users.member.id);
    const address = '192.0.2.20';
    for (let i = 0; i < passkeySignInsStartedPerCallerAddress.max + 5; i += 1) {
      const form = await passkeyForm('dashboard', address);
      const asked = await form.browser.request(form.options.toString(), { method: 'POST', form: { csrf: form.csrf } });
      expect(asked.status, `sign-in ${i + 1}`).toBe(200);
      const { challenge } = JSON.parse(asked.html) as { challenge: string };
      const signedIn = await form.browser.request(form.action.toString(), {
        method: 'POST',
        form: { csrf: form.csrf, next: '/account', response: passkey.answer(challenge) },
      });
      expect(signedIn.url.pathname).toBe('/account');
    }
  });

  it('expired challenges are cleared as new passwordless ones are written, before the periodic sweep', async () => {
    const expired = Array.from({ length: 20 }, (_, i) => ({
      id: `expired-${i}`,
      challenge: 'x',
      purpose: 'authenticate' as const,
      user_id: null,
      expires_at: new Date(Date.now() - 60_000),
    }));
    await t.db.insertInto('webauthn_challenges').values(expired).execute();
    expect((await askOptions(await passkeyForm('dashboard', '192.0.2.30'))).status).toBe(200);
    expect(await t.db.selectFrom('webauthn_challenges').select('id').where('id', 'like', 'expired-%').execute()).toEqual([]);
  });
});
