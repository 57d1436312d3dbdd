import * as oauth from 'oauth4webapi';
import { describe, expect, it } from 'vitest';
import { FormBrowser } from '../helpers/browser.js';
import { endpoints } from '../helpers/flow.js';
import { createStaff } from '../helpers/oauth-server.js';
import { StatementProbe } from '../helpers/statement-probe.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * The browser requests of the authorization flow as units of work (src/oidc/unit-of-work.ts, the browser plan):
 * each writes the provider rows it saved and deleted in one statement, and reads an
 * Interaction with its Session in one.
 */

const REDIRECT = 'https://app.example.org/callback';
const probe = new StatementProbe();
const {
  testDatabase: t,
  server,
  staff,
  clients: { client },
} = useOAuthServer({ plugins: [probe], clients: { client: { environment: 'production', redirectUris: [REDIRECT] } } });

/** Statements that write the provider's rows. */
const modelWrites = () =>
  probe.statements.filter(
    (s) =>
      /^(with\b[\s\S]*)?(insert into|delete from|update) "?oidc_models"?/i.test(s) || /\b(insert into|delete from) oidc_models\b/i.test(s),
  );
/**
 * Reads the request issued (the client registry's aside: its cache makes them come and go; and
 * the webhook dispatcher's claim lock, which it takes whenever it polls). Statements the process
 * runs on its own timers while the request is in flight, on the same database handle (the
 * signing keys' poll), are not the request's: they are told apart by the request's async
 * context, whatever their text.
 */
const reads = () =>
  probe.probed
    .filter((s) => s.inRequest && /^\s*select\b/i.test(s.text) && !/oauth_clients/.test(s.text) && !/almoner:webhook_claim/.test(s.text))
    .map((s) => s.text);
/** Reads of Sessions by uid (the provider's check of an Interaction's session). */
const sessionByUidReads = () => probe.probed.filter((s) => /^select\b/i.test(s.text) && /"uid" = \$/.test(s.text));

/** An authorization request URL with PKCE, and its verifier. */
async function authorizationUrl(state: string, prompt: string): Promise<{ url: URL; verifier: string }> {
  const verifier = oauth.generateRandomCodeVerifier();
  const url = new URL(endpoints(server, 'production').authorize);
  const params = {
    client_id: client.client_id,
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope: 'openid read_only',
    state: state.repeat(22),
    nonce: 'n'.repeat(22),
    prompt,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return { url, verifier };
}
const resume = (next: URL) => next.pathname.startsWith('/oauth/authorize/');

describe('a browser request of the authorization flow', () => {
  it('writes the provider rows once per request and reads an Interaction with its Session; the flow still ends in tokens', async () => {
    const { url, verifier } = await authorizationUrl('s', 'consent');
    const interactionPage = (next: URL) => next.pathname.startsWith('/oauth/interaction/');
    const browser = new FormBrowser((next) => next.origin === 'https://app.example.org' || resume(next) || interactionPage(next));
    const perRequest: { step: string; writes: string[]; reads: number; sessionReads: number }[] = [];
    const step = async <T>(name: string, run: () => Promise<T>): Promise<T> => {
      probe.reset();
      const result = await run();
      perRequest.push({ step: name, writes: modelWrites(), reads: reads().length, sessionReads: sessionByUidReads().length });
      return result;
    };

    const started = await step('GET /authorize', () => browser.request(url.toString()));
    expect(started.location && interactionPage(started.location)).toBe(true);
    const signIn = await step('GET sign-in page', () => browser.request(started.location!.toString()));
    expect(signIn.html).toContain('name="password"');
    const afterLogin = await step('POST sign-in', () =>
      browser.submit(signIn, '/login', { email: staff.users.member.email, password: staff.users.member.password }),
    );
    expect(afterLogin.location && resume(afterLogin.location)).toBe(true);
    const toConsent = await step('resume after sign-in', () => browser.request(afterLogin.location!.toString()));
    expect(toConsent.location && interactionPage(toConsent.location)).toBe(true);
    const consent = await step('GET consent page', () => browser.request(toConsent.location!.toString()));
    expect(consent.html).toContain('/consent"');
    const afterConsent = await step('POST consent', () => browser.submit(consent, '/consent'));
    expect(afterConsent.location && resume(afterConsent.location)).toBe(true);
    const callback = await step('resume after consent', () => browser.request(afterConsent.location!.toString()));
    expect(callback.location?.origin).toBe('https://app.example.org');

    const writes = Object.fromEntries(perRequest.map((r) => [r.step, r.writes.length]));
    expect(writes).toEqual({
      'GET /authorize': 1, // the Interaction
      'GET sign-in page': 0,
      'POST sign-in': 1, // the Interaction with its result
      'resume after sign-in': 1, // the Interaction replaced, the Session saved
      'GET consent page': 0,
      'POST consent': 1, // the Grant and the Interaction with its result
      'resume after consent': 1, // the Interaction deleted, the code saved, the Session saved under a new id
    });
    // Each request reads what its URL and cookie name in one statement (the Interaction, its
    // Session, the Grant its consent names, the user and their memberships); the sign-in also
    // looks the typed address up, and whether the user has a second factor to ask for.
    expect(Object.fromEntries(perRequest.map((r) => [r.step, r.reads]))).toEqual({
      'GET /authorize': 0,
      'GET sign-in page': 1,
      'POST sign-in': 3,
      'resume after sign-in': 1,
      'GET consent page': 1,
      'POST consent': 1,
      'resume after consent': 1,
    });
    // The pages after sign-in read their Interaction with its Session: no separate read by uid.
    expect(perRequest.find((r) => r.step === 'GET consent page')!.sessionReads).toBe(0);
    expect(perRequest.find((r) => r.step === 'POST consent')!.sessionReads).toBe(0);

    const code = callback.location!.searchParams.get('code');
    const tokens = await fetch(endpoints(server, 'production').token, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: code!, code_verifier: verifier, redirect_uri: REDIRECT }),
    });
    expect(tokens.status).toBe(200);

    // The session the unit wrote serves a second authorization without a sign-in.
    url.searchParams.set('state', 't'.repeat(22));
    url.searchParams.delete('prompt');
    const again = await browser.request(url.toString());
    // The consent given stands, so the browser goes straight back with a code: no sign-in page.
    expect(again.location?.origin, again.html.slice(0, 300)).toBe('https://app.example.org');
    expect(again.location!.searchParams.get('code')).toEqual(expect.any(String));
  });

  it('answers 503 when its write fails after the provider or the page answered, and the flow can be retried', async () => {
    const { url } = await authorizationUrl('u', 'login consent');
    const browser = new FormBrowser((next) => next.origin === 'https://app.example.org' || resume(next));
    const unavailable = () => Object.assign(new Error('Connection terminated unexpectedly'), { code: '57P01' });
    const failNextUnitWrite = () => {
      probe.refusal = { match: /^\s*with (deleted|saved) as/, error: unavailable };
    };

    const signIn = await browser.request(url.toString());
    const afterLogin = await browser.submit(signIn, '/login', { email: staff.users.member.email, password: staff.users.member.password });
    expect(afterLogin.location && resume(afterLogin.location)).toBe(true);

    // The resume: the provider built its answer, the unit's write fails: 503, not the answer.
    failNextUnitWrite();
    const failedResume = await fetch(afterLogin.location!, {
      redirect: 'manual',
      headers: { cookie: browser.cookieHeader(afterLogin.location!), accept: 'text/html' },
    });
    expect(failedResume.status).toBe(503);
    expect(failedResume.headers.get('retry-after')).toBe('5');
    expect(probe.refusal, 'the failing write was attempted').toBeUndefined();

    // A consent post whose write fails: the hosted pages' outage page, 503.
    const consent = await browser.request(afterLogin.location!.toString());
    expect(consent.html).toContain('/consent"');
    failNextUnitWrite();
    const form = [...consent.html.matchAll(/<form[^>]*method="post"[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/g)].find((f) =>
      f[1]!.includes('/consent'),
    )!;
    const hidden = Object.fromEntries(
      [...form[2]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!.replace(/&amp;/g, '&')]),
    );
    const target = new URL(form[1]!.replace(/&amp;/g, '&'), consent.url);
    const failedConsent = await fetch(target, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        cookie: browser.cookieHeader(target),
        'content-type': 'application/x-www-form-urlencoded',
        origin: target.origin,
        accept: 'text/html',
      },
      body: new URLSearchParams(hidden),
    });
    expect(failedConsent.status).toBe(503);
    expect(failedConsent.headers.get('retry-after')).toBe('5');
    expect(await failedConsent.text()).toContain('Temporarily unavailable');
    // Nothing of it was committed (the authorization row and its audit went with the Grant), so the same post again completes the flow.
    const retried = await browser.submit(consent, '/consent');
    expect(retried.location && resume(retried.location)).toBe(true);
    const callback = await browser.request(retried.location!.toString());
    expect(callback.location?.searchParams.get('code')).toEqual(expect.any(String));
  });

  it('answers 503 when its first read fails, at the resume and on a page', async () => {
    const { url } = await authorizationUrl('v', 'login consent');
    const browser = new FormBrowser((next) => next.origin === 'https://app.example.org' || resume(next));
    const unavailable = () => Object.assign(new Error('Connection terminated unexpectedly'), { code: '57P01' });
    const failNextFirstRead = () => {
      probe.refusal = { match: /i\.payload as i_payload/, error: unavailable };
    };
    const signIn = await browser.request(url.toString());
    const afterLogin = await browser.submit(signIn, '/login', { email: staff.users.member.email, password: staff.users.member.password });
    failNextFirstRead();
    const failedResume = await fetch(afterLogin.location!, {
      redirect: 'manual',
      headers: { cookie: browser.cookieHeader(afterLogin.location!), accept: 'text/html' },
    });
    expect(failedResume.status).toBe(503);
    expect(failedResume.headers.get('retry-after')).toBe('5');
    const toConsent = await fetch(afterLogin.location!, {
      redirect: 'manual',
      headers: { cookie: browser.cookieHeader(afterLogin.location!), accept: 'text/html' },
    });
    expect(toConsent.status).toBe(303);
    failNextFirstRead();
    const page = new URL(toConsent.headers.get('location')!, afterLogin.location!);
    const failedPage = await fetch(page, { headers: { cookie: browser.cookieHeader(page), accept: 'text/html' } });
    expect(failedPage.status).toBe(503);
    expect(await failedPage.text()).toContain('Temporarily unavailable');
    expect(probe.refusal, 'the failing read was attempted').toBeUndefined();
  });
  it('reads an Interaction its URL did not name the same way, when the cookie names another one', async () => {
    const interactionPage = (next: URL) => next.pathname.startsWith('/oauth/interaction/');
    const browser = new FormBrowser((next) => interactionPage(next));
    const first = await browser.request((await authorizationUrl('y', 'consent')).url.toString());
    const second = await browser.request((await authorizationUrl('z', 'consent')).url.toString());
    expect(first.location!.pathname).not.toBe(second.location!.pathname);
    // The first page's URL with the second interaction's cookie (a cookie is signed by name and value, not path).
    probe.reset();
    const mismatched = await fetch(first.location!, { headers: { cookie: browser.cookieHeader(second.location!), accept: 'text/html' } });
    expect(mismatched.status).toBe(400);
    expect(await mismatched.text()).toContain('This sign-in has expired');
    // One read for the URL's Interaction, one for the cookie's: the provider read the latter as the first read does.
    expect(probe.statements.filter((s) => /i\.payload as i_payload/.test(s))).toHaveLength(2);
    // The second page, with its own cookie, still works.
    const page = await browser.request(second.location!.toString());
    expect(page.html).toContain('name="password"');
  });
});

describe('the user a request acts for', () => {
  /** A browser signed in and at the consent page for the member of a fresh nonprofit. */
  async function atConsent(state: string) {
    const member = (await createStaff(t.db)).users.member;
    const { url } = await authorizationUrl(state, 'consent');
    const browser = new FormBrowser((next) => next.origin === 'https://app.example.org' || resume(next));
    const signIn = await browser.request(url.toString());
    const afterLogin = await browser.submit(signIn, '/login', { email: member.email, password: member.password });
    return { member, browser, afterLogin: afterLogin.location! };
  }

  it('is read afresh by every request: a user disabled after the consent page gets no code for the approval', async () => {
    const { member, browser, afterLogin } = await atConsent('w');
    const consent = await browser.request(afterLogin.toString());
    expect(consent.html).toContain('/consent"');
    await t.db.updateTable('users').set({ disabled_at: new Date() }).where('id', '=', member.id).execute();
    const approved = await browser.submit(consent, '/consent');
    const outcome = approved.location && resume(approved.location) ? await browser.request(approved.location.toString()) : approved;
    expect(outcome.location?.searchParams.get('code') ?? null).toBeNull();
  });

  it('is read afresh by every request: removed from the nonprofit after the consent page, the approval writes no authorization', async () => {
    const { member, browser, afterLogin } = await atConsent('x');
    const consent = await browser.request(afterLogin.toString());
    expect(consent.html).toContain('/consent"');
    await t.db.deleteFrom('memberships').where('user_id', '=', member.id).execute();
    const approved = await browser.submit(consent, '/consent');
    expect(approved.location?.searchParams.get('code') ?? null).toBeNull();
    const authorizations = await t.db.selectFrom('oauth_authorizations').select('grant_id').where('user_id', '=', member.id).execute();
    expect(authorizations).toEqual([]);
  });
});
