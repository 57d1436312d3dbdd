import * as oauth from 'oauth4webapi';
import { describe, expect, it } from 'vitest';
import { ACR_ONE_FACTOR, ACR_TWO_FACTORS } from '../../src/accounts/authentication-methods.js';
import { FormBrowser } from '../helpers/browser.js';
import { authorize, endpoints, exchangeCode, type AuthorizeOptions } from '../helpers/flow.js';
import { nextCode, recoveryCodesOnPage, secretOnPage, setupCode, totpCode } from '../helpers/authenticator.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { addMember } from '../../src/accounts/memberships.js';

const { testDatabase: t, server, allStaff } = useOAuthServer({ staff: 4 });
const redirectUri = 'https://app.example.org/callback';

async function idTokenClaims(
  options: Omit<AuthorizeOptions, 'environment' | 'redirectUri'> & { client: { client_id: string; client_secret: string } },
) {
  const result = await authorize(server, { environment: 'production', redirectUri, ...options });
  const { as, client, response } = await exchangeCode(server, 'production', options.client, result, redirectUri);
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, response, { expectedNonce: result.nonce, requireIdToken: true });
  return { claims: oauth.getValidatedIdTokenClaims(tokens)!, result };
}

/** Signs in through the flow up to the page after the password, for tests that drive the second step themselves. */
async function afterPassword(clientId: string, user: { email: string; password: string }, scope = 'openid read_only') {
  const browser = new FormBrowser((next) => next.origin === new URL(redirectUri).origin);
  const url = new URL(endpoints(server, 'production').authorize);
  const params = {
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope,
    state: 's',
    nonce: 'n',
    code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
    code_challenge_method: 'S256',
  };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  const login = await browser.request(url.toString());
  const page = await browser.submit(login, '/login', user);
  return { browser, page };
}

describe('second factor in the authorization flow', () => {
  it('a password session is enough for read_only: the ID token says amr pwd and acr loa:1', async () => {
    const client = await server.registerClient({ environment: 'production' });
    const { claims } = await idTokenClaims({
      client,
      clientId: client.client_id,
      scope: 'openid read_only',
      login: allStaff[0].users.read_only,
    });
    expect(claims.amr).toEqual(['pwd']);
    expect(claims.acr).toBe(ACR_ONE_FACTOR);
  });

  it('read_write asks a user without a second factor to set up an app first; the ID token then says pwd+otp, loa:2', async () => {
    const client = await server.registerClient({ environment: 'production' });
    const user = allStaff[0].users.member;
    const { page } = await afterPassword(client.client_id, user, 'openid read_write');
    expect(page.html).toContain('Set up a second factor');
    expect(page.html).toContain('lets the application change your organization’s data');
    expect(page.html).toMatch(/<img src="data:image\/svg\+xml;base64,[A-Za-z0-9+/=]+" alt="QR code/);
    const { claims } = await idTokenClaims({ client, clientId: client.client_id, scope: 'openid read_write', login: user });
    expect(claims.amr).toEqual(['pwd', 'otp']);
    expect(claims.acr).toBe(ACR_TWO_FACTORS);
    const row = await t.db.selectFrom('totp_credentials').selectAll().where('user_id', '=', user.id).executeTakeFirstOrThrow();
    expect(row.confirmed_at).not.toBeNull();
    expect(row.secret).toMatch(/^enc:/);
    expect(await t.db.selectFrom('recovery_codes').select('code_hash').where('user_id', '=', user.id).execute()).toHaveLength(10);
  });

  it('an enrolled user is asked for the code after the password; a wrong code starts no session, the right one signs in with otp', async () => {
    const client = await server.registerClient({ environment: 'production' });
    const user = allStaff[1].users.owner;
    // Enrol through a step-up (bank data), as a person would.
    await idTokenClaims({ client, clientId: client.client_id, scope: 'openid read_write', login: user });

    const { browser, page } = await afterPassword(client.client_id, user);
    expect(page.status).toBe(200);
    expect(page.html).toContain('Enter your second factor');
    const sessionCookie = () =>
      browser.cookieHeader(new URL(endpoints(server, 'production').dashboard)).includes('alm_production_session=');
    expect(sessionCookie()).toBe(false);
    const wrong = await browser.submit(page, '/second-factor', { code: '000000' });
    expect(wrong.status).toBe(401);
    expect(wrong.html).toContain('That code did not work');
    expect(sessionCookie()).toBe(false);
    const code = await nextCode(user.email);
    const done = await browser.submit(wrong, '/second-factor', { code });
    expect(done.html).toContain('wants access to');
    expect(sessionCookie()).toBe(true);
    // The same code in another sign-in: refused, and said to be used rather than wrong.
    const other = await afterPassword(client.client_id, user);
    const replayed = await other.browser.submit(other.page, '/second-factor', { code });
    expect(replayed.status).toBe(401);
    expect(replayed.html).toContain('That code was already used');
  });

  it('the pending sign-in cookie is bound to its interaction: another flow does not accept it', async () => {
    const client = await server.registerClient({ environment: 'production' });
    const user = allStaff[1].users.owner;
    const { browser } = await afterPassword(client.client_id, user);
    // A second authorization in the same browser: its page is the password form again, not the code.
    const url = new URL(endpoints(server, 'production').authorize);
    for (const [k, v] of Object.entries({
      client_id: client.client_id,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'openid read_only',
      state: 's',
      nonce: 'n',
      code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
      code_challenge_method: 'S256',
    }))
      url.searchParams.set(k, v);
    const other = await browser.request(url.toString());
    expect(other.html).toContain('name="password"');
    expect(other.html).not.toContain('/second-factor"');
  });

  it('acr_values urn:almoner:loa:2 asks for the second factor even for read_only', async () => {
    const client = await server.registerClient({ environment: 'production' });
    const user = allStaff[2].users.read_only;
    const { claims } = await idTokenClaims({
      client,
      clientId: client.client_id,
      scope: 'openid read_only',
      login: user,
      extraParams: { acr_values: ACR_TWO_FACTORS },
    });
    expect(claims.acr).toBe(ACR_TWO_FACTORS);
    expect(claims.amr).toContain('otp');
  });

  it('an application registered with require_mfa and an organization that requires it both ask for the second factor', async () => {
    const strict = await server.registerClient({ environment: 'production', requireMfa: true });
    const viaClient = await idTokenClaims({
      client: strict,
      clientId: strict.client_id,
      scope: 'openid read_only',
      login: allStaff[2].users.admin,
    });
    expect(viaClient.claims.acr).toBe(ACR_TWO_FACTORS);

    await t.db.updateTable('organizations').set({ require_mfa: true }).where('id', '=', allStaff[3].orgId).execute();
    const plain = await server.registerClient({ environment: 'production' });
    const { page } = await afterPassword(plain.client_id, allStaff[3].users.read_only);
    expect(page.html).toContain('requires a second factor of all its staff');
  });

  it('a consent posted without the step-up is not approved: the browser is sent back to the step-up', async () => {
    const client = await server.registerClient({ environment: 'production' });
    const user = allStaff[3].users.member;
    const { browser, page } = await afterPassword(client.client_id, user, 'openid read_write');
    expect(page.html).toContain('/second-factor/setup"');
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.html)![1]!;
    const forged = await browser.request(new URL(page.url.pathname + '/consent', page.url).toString(), {
      method: 'POST',
      form: { csrf, organization: allStaff[3].orgId },
    });
    expect(forged.location).toBeUndefined();
    expect(forged.html).toContain('Set up a second factor');
    expect(await t.db.selectFrom('oauth_authorizations').select('grant_id').where('user_id', '=', user.id).execute()).toEqual([]);
  });

  it('the setup code is checked: a wrong one leaves the app unconfirmed and says so', async () => {
    const client = await server.registerClient({ environment: 'production' });
    const user = allStaff[2].users.member;
    const { browser, page } = await afterPassword(client.client_id, user, 'openid read_write');
    const secret = secretOnPage(page.html);
    const wrong = await browser.submit(page, '/second-factor/setup', { code: totpCode(secret, Math.floor(Date.now() / 30000) - 5) });
    expect(wrong.status).toBe(400);
    expect(wrong.html).toContain('That code did not work');
    expect(secretOnPage(wrong.html)).toBe(secret);
    const right = await browser.submit(wrong, '/second-factor/setup', { code: setupCode(user.email, secret) });
    expect(recoveryCodesOnPage(right.html)).toHaveLength(10);
  });

  it('keeps the organization chosen before the step-up: the consent after it is for that organization, not a second choice', async () => {
    const client = await server.registerClient({ environment: 'production' });
    const user = allStaff[0].users.admin;
    await addMember(t.db, { org: allStaff[1].ein, email: user.email, role: 'admin' });
    const { browser, page } = await afterPassword(client.client_id, user, 'openid read_write');
    expect(page.html).toContain('name="org"');
    const chosen = await browser.request(new URL(`${page.url.pathname}?org=${allStaff[1].orgId}`, page.url).toString());
    const codes = await browser.submit(chosen, '/second-factor/setup', { code: setupCode(user.email, secretOnPage(chosen.html)) });
    const next = /<a class="button-link primary" href="([^"]+)"/.exec(codes.html)![1]!.replace(/&amp;/g, '&');
    const consent = await browser.request(new URL(next, codes.url).toString());
    expect(consent.html).not.toContain('name="org"');
    const name = (await t.db.selectFrom('organizations').select('name').where('id', '=', allStaff[1].orgId).executeTakeFirstOrThrow()).name;
    expect(consent.html).toContain(`wants access to ${name}`);
  });

  it('honours max_age: a session older than it signs in again (password and second factor), and auth_time says when', async () => {
    const client = await server.registerClient({ environment: 'production' });
    const user = allStaff[1].users.admin;
    const first = await authorize(server, {
      environment: 'production',
      redirectUri,
      clientId: client.client_id,
      scope: 'openid read_only',
      login: user,
      extraParams: { acr_values: ACR_TWO_FACTORS },
    });
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const url = new URL(endpoints(server, 'production').authorize);
    for (const [k, v] of Object.entries({
      client_id: client.client_id,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'openid read_only',
      state: 's',
      nonce: 'n',
      max_age: '1',
      code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
      code_challenge_method: 'S256',
    }))
      url.searchParams.set(k, v);
    const page = await first.browser.request(url.toString());
    expect(page.html).toContain('name="password"');
    const again = await authorize(server, {
      environment: 'production',
      redirectUri,
      clientId: client.client_id,
      scope: 'openid read_only',
      login: user,
      browser: first.browser,
      extraParams: { max_age: '1' },
    });
    const { as, client: c, response } = await exchangeCode(server, 'production', client, again, redirectUri);
    const tokens = await oauth.processAuthorizationCodeResponse(as, c, response, {
      expectedNonce: again.nonce,
      requireIdToken: true,
      maxAge: 60,
    });
    const claims = oauth.getValidatedIdTokenClaims(tokens)!;
    expect(Math.abs(Number(claims.auth_time) - Date.now() / 1000)).toBeLessThan(10);
    expect(claims.amr).toEqual(['pwd', 'otp']);
  });
});
