import * as oauth from 'oauth4webapi';
import { describe, expect, it } from 'vitest';
import { FormBrowser } from '../helpers/browser.js';
import { endpoints } from '../helpers/flow.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * prompt=login with a consent step: the consent's result keeps the sign-in made in the same
 * authorization (src/oidc/interactions/interaction.ts, finishInteraction). Without it the provider
 * sees no fresh sign-in and shows the sign-in page again, for ever.
 */

const REDIRECT = 'https://app.example.org/callback';
const {
  server,
  staff,
  clients: { client },
} = useOAuthServer({ clients: { client: { environment: 'production', redirectUris: [REDIRECT] } } });

describe('prompt=login', () => {
  it('signs in once, asks for consent, and returns a code', async () => {
    const url = new URL(endpoints(server, 'production').authorize);
    const params = {
      client_id: client.client_id,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'openid read_only',
      state: 'u'.repeat(22),
      nonce: 'v'.repeat(22),
      prompt: 'login consent',
      code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
      code_challenge_method: 'S256',
    };
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    const browser = new FormBrowser((next) => next.origin === 'https://app.example.org');
    const signIn = await browser.request(url.toString());
    expect(signIn.html).toContain('name="password"');
    const consent = await browser.submit(signIn, '/login', { email: staff.users.member.email, password: staff.users.member.password });
    expect(consent.html).toContain('/consent"');
    const done = await browser.submit(consent, '/consent');
    expect(done.html, 'not the sign-in page again').not.toContain('name="password"');
    expect(done.location?.searchParams.get('code')).toEqual(expect.any(String));
    expect(done.location?.searchParams.get('state')).toBe('u'.repeat(22));
  });
});
