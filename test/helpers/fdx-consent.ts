import type { Db } from '../../src/db/database.js';
import { hashId } from '../../src/db/provider-store.js';
import { parseFdxAuthorizationDetails } from '../../src/authorizations/fdx-consent-request.js';
import { activateFdxConsentIn, recordFdxConsent } from '../../src/authorizations/fdx-consents.js';
import type { FdxConsent } from '../../src/authorizations/fdx-consent.js';
import * as oauth from 'oauth4webapi';
import { fdxClient, fdxToken } from './fdx.js';
import { approve, exchange, insecure, push, type FapiClient } from './fapi.js';
import { dpopProof } from './dpop-proof.js';
import { apiRequest } from './gateway.js';
import type { OAuthTestServer, Staff } from './oauth-server.js';

/**
 * A token held to an FDX consent, until the consent screen records one itself: a standard FDX
 * token of a new client (grants are reused per client, user and organization, and a grant has at
 * most one consent), whose grant gets the consent recordFdxConsent stores for the admin's choice.
 */

export const ALL_ACCOUNT_CLUSTERS = ['ACCOUNT_BASIC', 'ACCOUNT_DETAILED', 'TRANSACTIONS', 'STATEMENTS'];

export interface ConsentedToken {
  token: string;
  client: { client_id: string; client_secret: string };
  consent: FdxConsent;
}

/** The grant (our authorization id) of an access token, from the provider's stored row. */
export async function grantOfToken(db: Db, token: string): Promise<string> {
  const row = await db
    .selectFrom('oidc_models')
    .select('grant_id')
    .where('model', '=', 'AccessToken')
    .where('id', '=', hashId(token))
    .executeTakeFirstOrThrow();
  return row.grant_id!;
}

export async function consentedToken(
  db: Db,
  server: OAuthTestServer,
  staff: Staff,
  consentRequest: Record<string, unknown>,
  accountIds: string[],
): Promise<ConsentedToken> {
  const client = await fdxClient(server);
  const token = await fdxToken(server, client, staff);
  const request = parseFdxAuthorizationDetails([
    { type: 'fdx_v1.0', consentRequest: { durationType: 'TIME_BOUND', durationPeriod: 30, ...consentRequest } },
  ]);
  const recorded = await recordFdxConsent(db, {
    environment: 'production',
    organizationId: staff.orgId,
    clientId: client.client_id,
    grantId: await grantOfToken(db, token),
    userId: staff.users.admin.id,
    request,
    accountIds,
  });
  // Its token is issued already: collected, as a code's exchange makes it.
  const { consent } = await activateFdxConsentIn(db, { environment: 'production', consentId: recorded.id });
  return { token, client, consent: consent! };
}

/** A consent granted through the real flow: a fapi2 client pushes the request, the admin ticks `accountIds` and approves. */
export async function fapiConsent(
  server: OAuthTestServer,
  staff: Staff,
  fapi: FapiClient,
  consentRequest: Record<string, unknown>,
  accountIds: string[],
) {
  const authorizationDetails = JSON.stringify([
    { type: 'fdx_v1.0', consentRequest: { durationType: 'TIME_BOUND', durationPeriod: 30, ...consentRequest } },
  ]);
  const { requestUri, verifier, state } = await push(fapi, { authorization_details: authorizationDetails });
  const callback = await approve(server, fapi, requestUri, {
    login: staff.users.admin,
    consentFields: () => Object.fromEntries(accountIds.map((id) => [`account_${id}`, 'on'])),
  });
  const tokens = await exchange(fapi, callback, state, verifier);
  const consentId = (tokens.authorization_details as unknown as { consentId: string }[])[0]!.consentId;
  return { tokens, consentId };
}

/** The data recipient's own token: client_credentials with private_key_jwt, bound to its DPoP key. */
export async function recipientToken(fapi: FapiClient): Promise<string> {
  const response = await oauth.clientCredentialsGrantRequest(fapi.as, fapi.client, fapi.auth, {}, { DPoP: fapi.dpop, ...insecure });
  return (await oauth.processClientCredentialsResponse(fapi.as, fapi.client, response)).access_token;
}

/** A call of the API with a DPoP-bound token and a fresh proof (checked against the documents like every test call). */
export async function dpopCall(
  server: OAuthTestServer,
  fapi: FapiClient,
  token: string,
  method: string,
  path: string,
  body: { json?: unknown; rawJson?: string } = {},
) {
  const url = `${server.urls.api}${path}`;
  const proof = await dpopProof(fapi.dpopKey, { method, url: url.split('?')[0]!, accessToken: token });
  return apiRequest(server, fapi.environment, method, path, { headers: { authorization: `DPoP ${token}`, dpop: proof }, ...body });
}
