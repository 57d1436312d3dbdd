import * as oauth from 'oauth4webapi';
import { describe, expect, it } from 'vitest';
import { authorize, exchangeCode, tokenRequest, type AuthorizeResult } from '../helpers/flow.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

// offline_access is "accepted for compatibility": consented to, kept and echoed; on refresh,
// naming it is never an error (docs/oauth.md, "OAuth 2.0 and OpenID Connect", offline_access).
const REDIRECT = 'https://app.example.org/callback';
const {
  server,
  staff,
  clients: { client },
} = useOAuthServer({
  clients: {
    client: { environment: 'production', redirectUris: [REDIRECT], scopes: ['read_only', 'read_write', 'openid', 'offline_access'] },
  },
});

const OFFLINE_WORDS = 'Stay connected when you are not signed in';

async function signIn(scope: string, options: { browser?: AuthorizeResult['browser']; login?: { email: string; password: string } } = {}) {
  return authorize(server, {
    environment: 'production',
    clientId: client.client_id,
    redirectUri: REDIRECT,
    scope,
    login: options.login ?? staff.users.member,
    browser: options.browser,
  });
}

/** Exchanges the code through oauth4webapi, which checks the id_token and the response. */
async function exchange(result: AuthorizeResult) {
  const { as, client: c, response } = await exchangeCode(server, 'production', client, result, REDIRECT);
  const tokens = await oauth.processAuthorizationCodeResponse(as, c, response, { expectedNonce: result.nonce, requireIdToken: true });
  return { as, c, tokens };
}

/** A refresh through oauth4webapi, sending `scope` as mod_auth_openidc and Authlib do. */
async function refresh(as: oauth.AuthorizationServer, c: oauth.Client, refreshToken: string, scope?: string) {
  const response = await oauth.refreshTokenGrantRequest(as, c, oauth.ClientSecretBasic(client.client_secret), refreshToken, {
    ...(scope ? { additionalParameters: { scope } } : {}),
    [oauth.allowInsecureRequests]: true,
  });
  return oauth.processRefreshTokenResponse(as, c, response);
}

/** The permission titles the consent page lists as granted (its first list). */
const grantedOnPage = (html: string) =>
  [...(html.match(/<ul class="perms">([\s\S]*?)<\/ul>/)?.[1] ?? '').matchAll(/<span class="perm-title">([^<]*)<\/span>/g)].map((m) => m[1]);

const scopesOf = (value: string | undefined) => (value ?? '').split(' ').filter(Boolean).sort();

describe('offline_access', () => {
  it('is listed on the consent screen in plain words, kept by the grant and echoed in the token response', async () => {
    const result = await signIn('openid offline_access read_only');
    expect(grantedOnPage(result.consentHtml)).toEqual(['View your nonprofit’s data', 'Know who you are', OFFLINE_WORDS]);
    const { tokens } = await exchange(result);
    expect(scopesOf(tokens.scope)).toEqual(['offline_access', 'openid', 'read_only']);
  });

  it('refreshes with the whole scope named again, and with a subset', async () => {
    const { as, c, tokens } = await exchange(await signIn('openid offline_access read_only'));
    const again = await refresh(as, c, tokens.refresh_token!, 'openid offline_access read_only');
    expect(scopesOf(again.scope)).toEqual(['offline_access', 'openid', 'read_only']);
    const subset = await refresh(as, c, again.refresh_token!, 'read_only');
    expect(scopesOf(subset.scope)).toEqual(['read_only']);
    const offlineOnly = await refresh(as, c, subset.refresh_token!, 'offline_access');
    expect(scopesOf(offlineOnly.scope)).toEqual(['offline_access']);
    const none = await refresh(as, c, offlineOnly.refresh_token!);
    expect(scopesOf(none.scope)).toEqual(['offline_access', 'openid', 'read_only']);
  });

  it('accepts offline_access named on refresh when the grant does not hold it, as a no-op', async () => {
    const result = await signIn('openid read_only');
    expect(result.consentHtml).not.toContain(OFFLINE_WORDS);
    const { as, c, tokens } = await exchange(result);
    expect(scopesOf(tokens.scope)).toEqual(['openid', 'read_only']);
    const refreshed = await refresh(as, c, tokens.refresh_token!, 'openid offline_access read_only');
    expect(scopesOf(refreshed.scope)).toEqual(['openid', 'read_only']);
    // The refresh token it returned works like any other.
    const next = await refresh(as, c, refreshed.refresh_token!, 'offline_access read_only');
    expect(scopesOf(next.scope)).toEqual(['read_only']);
  });

  it('still refuses a scope beyond the grant with 400 invalid_scope, offline_access named or not', async () => {
    const { tokens } = await exchange(await signIn('openid offline_access read_only'));
    for (const scope of ['openid offline_access read_only read_write', 'read_write']) {
      const beyond = await tokenRequest(server, 'production', client, {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token!,
        scope,
      });
      expect(beyond.status).toBe(400);
      expect(beyond.body.error).toBe('invalid_scope');
    }
    // The refused requests spent nothing: the refresh token still works.
    expect(
      (
        await tokenRequest(server, 'production', client, {
          grant_type: 'refresh_token',
          refresh_token: tokens.refresh_token!,
          scope: 'offline_access read_only',
        })
      ).status,
    ).toBe(200);
  });

  it('is kept without asking again when a recorded consent covered it, and asked for when it did not', async () => {
    // The owner has given this client no consent before this test.
    const first = await signIn('openid read_only', { login: staff.users.owner });
    expect(first.consentHtml).toContain('/consent"');
    // The earlier consent did not cover offline_access: the screen comes back and lists it.
    const second = await signIn('openid offline_access read_only', { browser: first.browser });
    expect(grantedOnPage(second.consentHtml)).toContain(OFFLINE_WORDS);
    await exchange(second);
    // Now a consent covers it: straight back to the application, and the scope still carries it.
    const third = await signIn('openid offline_access read_only', { browser: first.browser });
    expect(third.consentHtml).toBe('');
    const { tokens } = await exchange(third);
    expect(scopesOf(tokens.scope)).toEqual(['offline_access', 'openid', 'read_only']);
  });
});
