import { FormBrowser } from '../../helpers/browser.js';
import { walkHostedPages } from '../../helpers/flow.js';

export interface User {
  email: string;
  password: string;
}

/**
 * Follows a client library's authorization URL through Almoner's hosted pages as a user would
 * (sign in, choose the organization if asked, approve) with the form-submitting user agent,
 * and returns the callback URL the browser was sent to (code or error in its query).
 */
export async function approveInHostedPages(
  authorizationUrl: string,
  user: User,
  options: { organizationId?: string; decision?: 'approve' | 'deny' } = {},
): Promise<URL> {
  const redirectUri = new URL(authorizationUrl).searchParams.get('redirect_uri');
  if (!redirectUri) throw new Error(`no redirect_uri in ${authorizationUrl}`);
  const redirectOrigin = new URL(redirectUri).origin;
  const browser = new FormBrowser((next) => next.origin === redirectOrigin);
  const { page } = await walkHostedPages(browser, await browser.request(authorizationUrl), { ...options, login: user });
  if (!page.location) throw new Error('the flow did not come back to the client');
  return page.location;
}
