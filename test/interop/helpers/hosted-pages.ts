import { FormBrowser } from '../../helpers/browser.js';

export interface User {
  email: string;
  password: string;
}

/**
 * Follows a client library's authorization URL through Almoner's hosted pages as a user would
 * (sign in, choose the organization if asked, approve) with the form-submitting user agent,
 * and returns the callback URL the browser was sent to (code or error in its query).
 */
export async function approveInHostedPages(authorizationUrl: string, user: User, options: { organizationId?: string; decision?: 'approve' | 'deny' } = {}): Promise<URL> {
  const redirectUri = new URL(authorizationUrl).searchParams.get('redirect_uri');
  if (!redirectUri) throw new Error(`no redirect_uri in ${authorizationUrl}`);
  const redirectOrigin = new URL(redirectUri).origin;
  const browser = new FormBrowser((next) => next.origin === redirectOrigin);
  let page = await browser.request(authorizationUrl);
  for (let step = 0; step < 6 && !page.location; step += 1) {
    if (page.html.includes('name="password"')) {
      page = await browser.submit(page, '/login', { email: user.email, password: user.password });
      if (!page.location && page.html.includes('name="password"')) throw new Error(`sign-in refused (${page.status})`);
    } else if (page.html.includes('name="org"')) {
      if (!options.organizationId) throw new Error('organization choice shown but none given');
      page = await browser.request(new URL(`${page.url.pathname}?org=${options.organizationId}`, page.url).toString());
    } else if (page.html.includes('/consent"') || page.html.includes('/deny"')) {
      page = await browser.submit(page, options.decision === 'deny' ? '/deny' : '/consent');
    } else {
      throw new Error(`unexpected page ${page.status} at ${page.url}: ${page.html.slice(0, 400)}`);
    }
  }
  if (!page.location) throw new Error('the flow did not come back to the client');
  return page.location;
}
