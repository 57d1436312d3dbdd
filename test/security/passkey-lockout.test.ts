import { describe, expect, it } from 'vitest';
import { nextCode } from '../helpers/authenticator.js';
import { FormBrowser } from '../helpers/browser.js';
import { dashboardSession, enrolAuthenticator } from '../helpers/dashboard.js';
import { authorizationRequest } from '../helpers/flow.js';
import { createStaff } from '../helpers/oauth-server.js';
import { SoftwarePasskey } from '../helpers/software-passkey.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import {
  passkeyAnswersPerCallerAddress,
  passkeyAnswersPerCallerAddressAndPasskey,
  secondFactorFailures,
} from '../../src/limits/rate-limits.js';

/**
 * Locking a user out with their passkey's credential id (docs/security.md, "Locking out a
 * passkey user by naming their credential"): a stranger who knows the id (it is no
 * secret: every passwordless sign-in shows it to the page) sends bad answers naming it to the
 * passwordless sign-in of the dashboard and of the authorization flow. Those failures count
 * against the stranger's address (and the credential from that address), never against the
 * user's second factor: the user still signs in with password and code, and with the passkey.
 * The server trusts the loopback proxy, so each stranger is the address it forwards.
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
const formOf = (html: string) => /<form method="post" action="([^"]+)"[^>]*data-options="([^"]+)"[^>]*>([\s\S]*?)<\/form>/.exec(html);

/** A stranger's answer naming `credentialId`: signed by a key of their own, so it can never verify. */
function forgedAnswer(credentialId: string, challenge: string): string {
  const answer = JSON.parse(new SoftwarePasskey(origin()).answer(challenge)) as Record<string, unknown>;
  return JSON.stringify({ ...answer, id: credentialId, rawId: credentialId });
}

/** A passwordless passkey sign-in, on the dashboard or in the authorization flow, from `address` (none: the test's own 127.0.0.1). */
async function passkeySignIn(surface: 'dashboard' | 'flow', respond: (challenge: string) => string, address?: string) {
  const browser = new FormBrowser((url) => url.origin === new URL(REDIRECT).origin, address ? { 'x-forwarded-for': address } : {});
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
  const form = formOf(page.html);
  if (!form) throw new Error(`no passkey form at ${page.url} (${page.status})`);
  const [, action, optionsAction, fields] = form;
  const csrf = /name="csrf" value="([^"]+)"/.exec(fields!)![1]!;
  const asked = await browser.request(new URL(optionsAction!.replace(/&amp;/g, '&'), page.url).toString(), {
    method: 'POST',
    form: { csrf },
  });
  expect(asked.status).toBe(200);
  const { challenge } = JSON.parse(asked.html) as { challenge: string };
  return browser.request(new URL(action!.replace(/&amp;/g, '&'), page.url).toString(), {
    method: 'POST',
    form: { csrf, next: '/account', response: respond(challenge) },
  });
}

/** A user with an authenticator app (set up from the Security page) and a passkey. */
async function victim() {
  const staff = await createStaff(t.db);
  const user = staff.users.member;
  await enrolAuthenticator(await dashboardSession(server, 'production', user), user.email);
  const passkey = new SoftwarePasskey(origin());
  await passkey.storeFor(t.db, user.id);
  return { user, passkey };
}

const statuses = (answers: { status: number }[]) => answers.map((a) => a.status).sort();

describe('locking a user out through the passwordless passkey sign-in', () => {
  it('a burst of bad answers naming the victim’s credential, on the dashboard and in the flow, leaves their second factor alone', async () => {
    const { user, passkey } = await victim();
    const burst = 12;
    const onDashboard = await Promise.all(
      Array.from({ length: burst }, () => passkeySignIn('dashboard', (c) => forgedAnswer(passkey.id, c), '203.0.113.66')),
    );
    // The stranger's own address is what runs out: the credential's budget from there, then 429.
    expect(statuses(onDashboard)).toEqual([
      ...Array(passkeyAnswersPerCallerAddressAndPasskey.max).fill(401),
      ...Array(burst - passkeyAnswersPerCallerAddressAndPasskey.max).fill(429),
    ]);
    const inFlow = await Promise.all(
      Array.from({ length: burst }, () => passkeySignIn('flow', (c) => forgedAnswer(passkey.id, c), '198.51.100.23')),
    );
    expect(statuses(inFlow)).toEqual([
      ...Array(passkeyAnswersPerCallerAddressAndPasskey.max).fill(401),
      ...Array(burst - passkeyAnswersPerCallerAddressAndPasskey.max).fill(429),
    ]);

    // The victim, from their own address: password and authenticator code…
    expect((await dashboardSession(server, 'production', user)).origin).toBe(origin());
    // …and the passkey alone, on the dashboard and in the flow.
    const signedIn = await passkeySignIn('dashboard', (c) => passkey.answer(c));
    expect(signedIn.url.pathname).toBe('/account');
    const inFlowToo = await passkeySignIn('flow', (c) => passkey.answer(c));
    expect(inFlowToo.status).not.toBe(429);
    expect(inFlowToo.html).not.toContain('name="password"');
    expect(inFlowToo.html).not.toContain('passkey did not sign you in');
  });

  it(`bounds one address over many credentials: ${passkeyAnswersPerCallerAddress.max} answers checked, the rest 429`, async () => {
    const burst = passkeyAnswersPerCallerAddress.max + 6;
    const answers = await Promise.all(
      Array.from({ length: burst }, (_, i) => passkeySignIn('dashboard', (c) => forgedAnswer(`unknown-credential-${i}`, c), '192.0.2.45')),
    );
    expect(statuses(answers)).toEqual([...Array(passkeyAnswersPerCallerAddress.max).fill(401), ...Array(6).fill(429)]);
    expect(answers.find((a) => a.status === 429)!.html).toContain('Too many passkey sign-ins failed from your network. Try again in');
  });

  it('failures after the password (the second-factor step) still count against the user', async () => {
    const { user, passkey } = await victim();
    const browser = new FormBrowser(() => false, { 'x-forwarded-for': '203.0.113.99' });
    const form = await browser.request(`${origin()}/sign-in?next=/account`);
    const step = await browser.submit(form, '/sign-in', { email: user.email, password: user.password });
    expect(step.url.pathname).toBe('/sign-in/second-factor');
    const csrf = /name="csrf" value="([^"]+)"/.exec(step.html)![1]!;
    for (let i = 0; i < secondFactorFailures.max; i += 1) {
      const { challenge } = JSON.parse(
        (await browser.request(`${origin()}/sign-in/passkey/options`, { method: 'POST', form: { csrf, step: 'second-factor' } })).html,
      ) as { challenge: string };
      const answer = await browser.request(`${origin()}/sign-in/passkey`, {
        method: 'POST',
        form: { csrf, step: 'second-factor', next: '/account', response: passkey.answer(`${challenge.slice(1)}A`) },
      });
      expect(answer.status).toBe(401);
    }
    // The user's budget is spent: the right code waits, from this browser and any other.
    const code = await browser.request(`${origin()}/sign-in/second-factor`, {
      method: 'POST',
      form: { csrf, next: '/account', code: await nextCode(user.email, t.db) },
    });
    expect(code.status).toBe(429);
  });
});
