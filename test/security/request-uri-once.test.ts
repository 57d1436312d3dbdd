import { beforeAll, describe, expect, it } from 'vitest';
import { FormBrowser } from '../helpers/browser.js';
import { approve, exchange, FAPI_REDIRECT, push, registerFapiClient, tickEveryAccount, type FapiClient } from '../helpers/fapi.js';
import { createAccount } from '../helpers/fdx.js';
import { endpoints, walkHostedPages } from '../helpers/flow.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * One pushed request (request_uri), one consent (docs/bank-data.md, "Pushed authorization
 * requests"): the first browser to open a request_uri owns it (a reload there may go on, another
 * browser is refused), it is used up by the one approval that wins, in that approval's
 * transaction, so a second approval leaves nothing behind; and an authorization that holds a
 * bank-data consent is never handed to a request that did not ask for one.
 */
const { testDatabase: t, server, staff } = useOAuthServer();

let account: { id: string };

beforeAll(async () => {
  account = await createAccount(server.db, staff, 'production');
});

const authorizeUrl = (fapi: FapiClient, requestUri: string) => {
  const url = new URL(endpoints(server, 'production').authorize);
  url.searchParams.set('client_id', fapi.client_id);
  url.searchParams.set('request_uri', requestUri);
  return url.toString();
};
const browserFor = () => new FormBrowser((next) => next.origin === new URL(FAPI_REDIRECT.production).origin);
const interactionPath = /^\/oauth\/interaction\/[\w-]+$/;

/** The consent rows, live authorizations and consent.granted audit rows a client has. */
async function recordsOf(fapi: FapiClient) {
  const consents = await t.db.selectFrom('fdx_consents').select(['id', 'status']).where('client_id', '=', fapi.client_id).execute();
  const live = await t.db
    .selectFrom('oauth_authorizations')
    .select('grant_id')
    .where('client_id', '=', fapi.client_id)
    .where('revoked_at', 'is', null)
    .execute();
  const granted = await t.db
    .selectFrom('audit_events')
    .select('id')
    .where('event', '=', 'consent.granted')
    .where('client_id', '=', fapi.client_id)
    .execute();
  return { consents: consents.length, live: live.length, granted: granted.length };
}

/** A browser signed in as the admin, second factor given: one full flow of its own first. */
async function signedInBrowser(fapi: FapiClient): Promise<FormBrowser> {
  const browser = browserFor();
  const { requestUri } = await push(fapi);
  const start = await browser.request(authorizeUrl(fapi, requestUri));
  const { page } = await walkHostedPages(browser, start, { login: staff.users.admin, consentFields: tickEveryAccount, db: server.db });
  if (!page.location?.searchParams.get('code')) throw new Error(`the first flow did not finish: ${page.status}`);
  return browser;
}

describe('a request_uri belongs to the first browser that opens it', () => {
  it('another browser is refused; a reload in the first goes on', async () => {
    const fapi = await registerFapiClient(server);
    const { requestUri } = await push(fapi);
    const first = browserFor();
    const opened = await first.request(authorizeUrl(fapi, requestUri));
    expect(opened.status).toBe(200);
    expect(opened.url.pathname).toMatch(interactionPath);

    const second = await browserFor().request(authorizeUrl(fapi, requestUri));
    expect(second.url.pathname).toBe(new URL(authorizeUrl(fapi, requestUri)).pathname);
    expect(second.status).toBe(400);
    expect(second.html).toMatch(/another browser/);

    const reload = await first.request(authorizeUrl(fapi, requestUri));
    expect(reload.status).toBe(200);
    expect(reload.url.pathname).toMatch(interactionPath);
  });

  it('six browsers opening it at once: exactly one gets a sign-in page', async () => {
    const fapi = await registerFapiClient(server);
    const { requestUri } = await push(fapi);
    const pages = await Promise.all(Array.from({ length: 6 }, () => browserFor().request(authorizeUrl(fapi, requestUri))));
    const started = pages.filter((p) => interactionPath.test(p.url.pathname));
    expect(started).toHaveLength(1);
    expect(pages.filter((p) => p.status === 400)).toHaveLength(5);
  });
});

describe('one approval per request_uri', () => {
  it('of two windows on the consent screen, the second approval is refused and records nothing', async () => {
    const fapi = await registerFapiClient(server);
    const browser = await signedInBrowser(fapi);
    const before = await recordsOf(fapi);
    const { requestUri, state, verifier } = await push(fapi);
    const [first, second] = [browser.fork(), browser.fork()];
    const one = await first.request(authorizeUrl(fapi, requestUri));
    const two = await second.request(authorizeUrl(fapi, requestUri));
    for (const page of [one, two]) expect(page.html, page.html.slice(0, 300)).toContain('/consent"');
    const approved = await second.submit(two, '/consent', tickEveryAccount(two.html));
    expect(approved.location?.searchParams.get('code')).toBeTruthy();
    const refused = await first.submit(one, '/consent', tickEveryAccount(one.html));
    expect(refused.location).toBeUndefined();
    expect(refused.status).toBe(409);
    expect(refused.html).toMatch(/already approved/);
    expect(await recordsOf(fapi)).toEqual({
      consents: before.consents + 1,
      live: before.live + 1,
      granted: before.granted + 1,
    });
    // The winner's code works.
    const tokens = await exchange(fapi, approved.location!, state, verifier);
    expect((tokens.authorization_details as unknown as { consentId: string }[])[0]!.consentId).toBeTruthy();
  });

  it('six approvals of one request_uri sent at once: one consent, one authorization, one audit row', async () => {
    const fapi = await registerFapiClient(server);
    const browser = await signedInBrowser(fapi);
    const before = await recordsOf(fapi);
    const { requestUri } = await push(fapi);
    const windows = [];
    for (let i = 0; i < 6; i += 1) {
      const window = browser.fork();
      windows.push({ window, page: await window.request(authorizeUrl(fapi, requestUri)) });
    }
    for (const { page } of windows) expect(page.html).toContain('/consent"');
    const results = await Promise.all(windows.map(({ window, page }) => window.submit(page, '/consent', tickEveryAccount(page.html))));
    expect(results.filter((r) => r.location?.searchParams.get('code'))).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(5);
    expect(await recordsOf(fapi)).toEqual({
      consents: before.consents + 1,
      live: before.live + 1,
      granted: before.granted + 1,
    });
  });
});

describe('an authorization holding a bank-data consent', () => {
  it('is not handed to a later request that asks for no consent (openid alone)', async () => {
    const fapi = await registerFapiClient(server);
    const { requestUri, state, verifier } = await push(fapi);
    const consented = await exchange(fapi, await approve(server, fapi, requestUri, { login: staff.users.admin }), state, verifier);
    const consentId = (consented.authorization_details as unknown as { consentId: string }[])[0]!.consentId;
    expect(account.id).toBeTruthy();

    const later = await push(fapi, { scope: 'openid offline_access' });
    const tokens = await exchange(
      fapi,
      await approve(server, fapi, later.requestUri, { login: staff.users.admin }),
      later.state,
      later.verifier,
    );
    expect(tokens.authorization_details).toBeUndefined();
    const grants = await t.db.selectFrom('fdx_consents').select('grant_id').where('id', '=', consentId).executeTakeFirstOrThrow();
    const introspected = await t.db
      .selectFrom('oidc_models')
      .select('grant_id')
      .where('model', '=', 'AccessToken')
      .where('grant_id', '=', grants.grant_id)
      .execute();
    // Only the consent's own token was issued under its authorization.
    expect(introspected).toHaveLength(1);
  });
});
