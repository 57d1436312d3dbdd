import * as oauth from 'oauth4webapi';
import { describe, expect, it } from 'vitest';
import { FormBrowser } from '../helpers/browser.js';
import { endpoints } from '../helpers/flow.js';
import { StatementProbe } from '../helpers/statement-probe.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * The hosted pages' form posts store their result on the Interaction they loaded and checked,
 * instead of having the provider read it a second time (src/oidc/interactions/interaction.ts).
 */

const REDIRECT = 'https://app.example.org/callback';
const probe = new StatementProbe();
const {
  server,
  staff,
  clients: { client },
} = useOAuthServer({ plugins: [probe], clients: { client: { environment: 'production', redirectUris: [REDIRECT] } } });

describe('interaction form posts', () => {
  it('read their Interaction once, and the flow still ends with a code that exchanges', async () => {
    const verifier = oauth.generateRandomCodeVerifier();
    const url = new URL(endpoints(server, 'production').authorize);
    const params = {
      client_id: client.client_id,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'openid read_only',
      state: 's'.repeat(22),
      nonce: 'n'.repeat(22),
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    };
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    // Stops at each redirect to the provider's resume endpoint, so one post is measured alone.
    const resume = (next: URL) => next.pathname.startsWith('/oauth/authorize/');
    const browser = new FormBrowser((next) => next.origin === 'https://app.example.org' || resume(next));

    const signIn = await browser.request(url.toString());
    expect(signIn.html).toContain('name="password"');
    probe.reset();
    const afterLogin = await browser.submit(signIn, '/login', { email: staff.users.member.email, password: staff.users.member.password });
    expect(afterLogin.location && resume(afterLogin.location)).toBe(true);
    expect(probe.modelReads('Interaction')).toHaveLength(1);

    const consent = await browser.request(afterLogin.location!.toString());
    expect(consent.html).toContain('/consent"');
    probe.reset();
    const afterConsent = await browser.submit(consent, '/consent');
    expect(afterConsent.location && resume(afterConsent.location)).toBe(true);
    expect(probe.modelReads('Interaction')).toHaveLength(1);

    const callback = await browser.request(afterConsent.location!.toString());
    expect(callback.location?.origin).toBe('https://app.example.org');
    const code = callback.location!.searchParams.get('code');
    expect(code).toEqual(expect.any(String));
    const tokens = await fetch(endpoints(server, 'production').token, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: code!, code_verifier: verifier, redirect_uri: REDIRECT }),
    });
    expect(tokens.status).toBe(200);
  });
});
