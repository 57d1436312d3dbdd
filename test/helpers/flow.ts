import * as oauth from 'oauth4webapi';
import { FormBrowser } from './browser.js';
import type { OAuthTestServer } from './oauth-server.js';
import type { Db } from '../../src/db/database.js';
import { nextCode, recoveryCodesOnPage, rememberRecoveryCodes, secretOnPage, setupCode } from './authenticator.js';

export type Env = 'production' | 'sandbox';

export function endpoints(server: OAuthTestServer, environment: Env) {
  const api = environment === 'production' ? server.urls.api : server.urls.sandboxApi;
  const dashboard = environment === 'production' ? server.urls.dashboard : server.urls.sandboxDashboard;
  const authorize = `${dashboard}${environment === 'production' ? '/oauth/authorize' : '/oauth/sandbox/authorize'}`;
  const endSession = `${dashboard}${environment === 'production' ? '/oauth/end-session' : '/oauth/sandbox/end-session'}`;
  return { api, dashboard, authorize, endSession, token: `${api}/auth/oauth/token` };
}

/** Discovery through oauth4webapi (plain http is allowed only because tests run on loopback). */
export async function discover(server: OAuthTestServer, environment: Env): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(endpoints(server, environment).api);
  const response = await oauth.discoveryRequest(issuer, { [oauth.allowInsecureRequests]: true });
  return oauth.processDiscoveryResponse(issuer, response);
}

export interface AuthorizeOptions {
  environment: Env;
  clientId: string;
  redirectUri: string;
  scope: string;
  login?: { email: string; password: string };
  /** Whose authenticator answers a step-up when no `login` is given (a session signed in earlier). */
  account?: string;
  /** Choose this organization id on the nonprofit page if it is shown. */
  organizationId?: string;
  decision?: 'approve' | 'deny';
  extraParams?: Record<string, string | undefined>;
  browser?: FormBrowser;
}

export interface AuthorizeResult {
  callback: URL;
  verifier: string;
  nonce: string;
  state: string;
  browser: FormBrowser;
  /** The consent page as shown, for assertions. */
  consentHtml: string;
}

export interface HostedPagesOptions {
  login?: { email: string; password: string };
  /** Whose authenticator answers a step-up when no `login` is given (a session signed in earlier). */
  account?: string;
  organizationId?: string;
  decision?: 'approve' | 'deny';
  /** Where the test's "phone" gets new recovery codes when its time steps are used up. */
  db?: Db;
  /** Picks what the consent form sends besides its hidden fields (e.g. the FDX accounts ticked), from the consent page. */
  consentFields?: (html: string) => Record<string, string>;
}

/**
 * Walks the hosted pages from `start` as a person would: signs in, gives the second factor
 * (or sets up an authenticator app when a step-up asks for one, noting the recovery codes),
 * picks the organization, approves or denies; stops at the redirect back to the client.
 */
export async function walkHostedPages(
  browser: FormBrowser,
  start: Awaited<ReturnType<FormBrowser['request']>>,
  options: HostedPagesOptions,
) {
  let page = start;
  let consentHtml = '';
  const account = () => {
    const email = options.login?.email ?? options.account;
    if (!email) throw new Error('a second factor was asked for but no account given');
    return email;
  };
  for (let step = 0; step < 8 && !page.location; step += 1) {
    if (page.html.includes('/second-factor/setup"')) {
      // Step-up for a user without a second factor: set up the app from the page, keep the recovery codes, go on.
      const codes = await browser.submit(page, '/second-factor/setup', { code: setupCode(account(), secretOnPage(page.html)) });
      rememberRecoveryCodes(account(), recoveryCodesOnPage(codes.html));
      const next = /<a class="button-link primary" href="([^"]+)"/.exec(codes.html);
      if (!next) throw new Error(`second factor setup failed (${codes.status}): ${codes.html.slice(0, 400)}`);
      page = await browser.request(new URL(next[1]!.replace(/&amp;/g, '&'), codes.url).toString());
    } else if (page.html.includes('/second-factor"')) {
      page = await browser.submit(page, '/second-factor', { code: await nextCode(account(), options.db) });
      if (!page.location && page.html.includes('/second-factor"')) throw new Error(`second factor refused (${page.status})`);
    } else if (page.html.includes('action="/oauth/interaction/') && page.html.includes('name="password"')) {
      if (!options.login) throw new Error('login page shown but no credentials given');
      page = await browser.submit(page, '/login', { email: options.login.email, password: options.login.password });
      if (!page.location && page.html.includes('name="password"')) throw new Error(`sign-in refused (${page.status})`);
    } else if (page.html.includes('name="org"')) {
      if (!options.organizationId) throw new Error('organization choice shown but none given');
      page = await browser.request(new URL(`${page.url.pathname}?org=${options.organizationId}`, page.url).toString());
    } else if (page.html.includes('/consent"') || page.html.includes('/deny"')) {
      consentHtml = page.html;
      const approving = options.decision !== 'deny' && page.html.includes('/consent"');
      page = await browser.submit(page, approving ? '/consent' : '/deny', approving ? options.consentFields?.(page.html) : {});
    } else {
      throw new Error(`unexpected page ${page.status} at ${page.url}: ${page.html.slice(0, 400)}`);
    }
  }
  return { page, consentHtml };
}

/**
 * A fresh authorization request as a client builds one (PKCE S256, state, nonce): the
 * authorization endpoint's URL with its parameters (`extraParams` added; undefined ones left
 * out), and the secrets the client keeps for the exchange.
 */
export async function authorizationRequest(
  server: OAuthTestServer,
  options: { environment: Env; clientId: string; redirectUri: string; scope: string; extraParams?: Record<string, string | undefined> },
): Promise<{ url: URL; verifier: string; state: string; nonce: string }> {
  const verifier = oauth.generateRandomCodeVerifier();
  const nonce = oauth.generateRandomNonce();
  const state = oauth.generateRandomState();
  const url = new URL(endpoints(server, options.environment).authorize);
  const params: Record<string, string | undefined> = {
    client_id: options.clientId,
    redirect_uri: options.redirectUri,
    response_type: 'code',
    scope: options.scope,
    state,
    nonce,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    ...options.extraParams,
  };
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return { url, verifier, state, nonce };
}

/** Drives the authorization endpoint, login and consent with a form-submitting user agent. */
export async function authorize(server: OAuthTestServer, options: AuthorizeOptions): Promise<AuthorizeResult> {
  const { url, verifier, state, nonce } = await authorizationRequest(server, options);
  const redirectOrigin = new URL(options.redirectUri).origin;
  const browser = options.browser ?? new FormBrowser((next) => next.origin === redirectOrigin);
  const { page, consentHtml } = await walkHostedPages(browser, await browser.request(url.toString()), { ...options, db: server.db });
  if (!page.location) throw new Error('the flow did not come back to the client');
  return { callback: page.location, verifier, nonce, state, browser, consentHtml };
}

export async function exchangeCode(
  server: OAuthTestServer,
  environment: Env,
  client: { client_id: string; client_secret: string },
  result: AuthorizeResult,
  redirectUri: string,
) {
  const as = await discover(server, environment);
  const c: oauth.Client = { client_id: client.client_id };
  const params = oauth.validateAuthResponse(as, c, result.callback, result.state);
  const response = await oauth.authorizationCodeGrantRequest(
    as,
    c,
    oauth.ClientSecretBasic(client.client_secret),
    params,
    redirectUri,
    result.verifier,
    { [oauth.allowInsecureRequests]: true },
  );
  return { as, client: c, response };
}

export function basic(clientId: string, secret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`;
}

export interface TokenResult {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

/** A raw token-endpoint request (form body, Basic auth unless `auth` is false); `headers` are added (e.g. X-Forwarded-For through a trusted proxy). */
export async function tokenRequest(
  server: OAuthTestServer,
  environment: Env,
  client: { client_id: string; client_secret: string } | undefined,
  form: Record<string, string | undefined>,
  headers: Record<string, string> = {},
): Promise<TokenResult> {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(form)) if (v !== undefined) body.set(k, v);
  const response = await fetch(endpoints(server, environment).token, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(client ? { authorization: basic(client.client_id, client.client_secret) } : {}),
      ...headers,
    },
    body,
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, headers: response.headers };
}

/** Authorizes and exchanges the code without redirect_uri (not required: docs/oauth.md, "OAuth 2.0 and OpenID Connect", Token endpoint). */
export async function obtainTokens(
  server: OAuthTestServer,
  options: AuthorizeOptions & { client: { client_id: string; client_secret: string }; tokenHeaders?: Record<string, string> },
) {
  const result = await authorize(server, options);
  const code = result.callback.searchParams.get('code');
  if (!code) throw new Error(`no code: ${result.callback}`);
  const tokens = await tokenRequest(
    server,
    options.environment,
    options.client,
    { grant_type: 'authorization_code', code, code_verifier: result.verifier },
    options.tokenHeaders,
  );
  return { ...result, code, tokens };
}

export async function introspect(
  server: OAuthTestServer,
  environment: Env,
  client: { client_id: string; client_secret: string },
  token: string,
) {
  const response = await fetch(`${endpoints(server, environment).api}/auth/oauth/introspect`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client.client_id, client.client_secret) },
    body: new URLSearchParams({ token }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}
