import { FormBrowser } from './browser.js';
import { endpoints, type Env } from './flow.js';
import type { OAuthTestServer } from './oauth-server.js';

/**
 * A user agent signed in to a dashboard host through its own sign-in page (/sign-in), as a
 * person would be: it keeps the session cookie and submits the forms it is shown.
 */
export async function dashboardSession(server: OAuthTestServer, environment: Env, user: { email: string; password: string }) {
  const origin = endpoints(server, environment).dashboard;
  const browser = new FormBrowser(() => false);
  const form = await browser.request(`${origin}/sign-in?next=/account`);
  const landed = await browser.submit(form, '/sign-in', { email: user.email, password: user.password });
  if (!landed.url.pathname.startsWith('/account')) throw new Error(`sign-in did not reach the account page (${landed.status} at ${landed.url}): ${landed.html.slice(0, 300)}`);
  return {
    browser,
    origin,
    /** GET a page of this dashboard. */
    get: (path: string) => browser.request(`${origin}${path}`),
  };
}
