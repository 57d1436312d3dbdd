import { FormBrowser } from './browser.js';
import { endpoints, type Env } from './flow.js';
import { nextCode, recoveryCodesOnPage, rememberRecoveryCodes, secretOnPage, setupCode } from './authenticator.js';
import type { OAuthTestServer } from './oauth-server.js';

/**
 * A user agent signed in to a dashboard host through its own sign-in page (/sign-in), as a
 * person would be: it keeps the session cookie and submits the forms it is shown.
 */
export async function dashboardSession(server: OAuthTestServer, environment: Env, user: { email: string; password: string }) {
  const origin = endpoints(server, environment).dashboard;
  const browser = new FormBrowser(() => false);
  const form = await browser.request(`${origin}/sign-in?next=/account`);
  let landed = await browser.submit(form, '/sign-in', { email: user.email, password: user.password });
  // A user with an authenticator app gives its code next.
  if (landed.url.pathname === '/sign-in/second-factor')
    landed = await browser.submit(landed, '/sign-in/second-factor', { code: await nextCode(user.email, server.db) });
  if (!landed.url.pathname.startsWith('/account'))
    throw new Error(`sign-in did not reach the account page (${landed.status} at ${landed.url}): ${landed.html.slice(0, 300)}`);
  return {
    browser,
    origin,
    db: server.db,
    /** GET a page of this dashboard. */
    get: (path: string) => browser.request(`${origin}${path}`),
  };
}

type DashboardSession = Awaited<ReturnType<typeof dashboardSession>>;

/**
 * Sets up an authenticator app from the Security page, as a person would (the key read off the
 * page, the code made by the test's "phone"), then confirms it is them with the new app
 * ("Confirm it is you"): setting a factor up does not change how the session signed in, the
 * confirmation does, so the session then counts as signed in with it. Returns the recovery
 * codes shown once.
 */
export async function enrolAuthenticator(session: DashboardSession, email: string): Promise<string[]> {
  const setup = await session.get('/account/security/authenticator');
  const shown = await session.browser.submit(setup, '/account/security/authenticator', {
    code: setupCode(email, secretOnPage(setup.html)),
  });
  const codes = recoveryCodesOnPage(shown.html);
  if (codes.length !== 10) throw new Error(`authenticator setup failed (${shown.status}): ${shown.html.slice(0, 400)}`);
  rememberRecoveryCodes(email, codes);
  await confirmSecondFactor(session, email);
  return codes;
}

/** "Confirm it is you" with the user's app (or a recovery code): the session steps up and may change factors for 10 minutes. */
export async function confirmSecondFactor(session: DashboardSession, email: string): Promise<void> {
  const page = await session.get('/account/security/confirm?next=/account/security');
  const done = await session.browser.submit(page, '/account/security/confirm', { code: await nextCode(email, session.db) });
  if (done.url.pathname !== '/account/security')
    throw new Error(`confirming the second factor failed (${done.status}): ${done.html.slice(0, 400)}`);
}
