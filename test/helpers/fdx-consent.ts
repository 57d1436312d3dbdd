import type { Db } from '../../src/db/database.js';
import { hashId } from '../../src/db/provider-store.js';
import { parseFdxAuthorizationDetails } from '../../src/authorizations/fdx-consent-request.js';
import { recordFdxConsent } from '../../src/authorizations/fdx-consents.js';
import type { FdxConsent } from '../../src/authorizations/fdx-consent.js';
import { fdxClient, fdxToken } from './fdx.js';
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
  const row = await db.selectFrom('oidc_models').select('grant_id').where('model', '=', 'AccessToken').where('id', '=', hashId(token)).executeTakeFirstOrThrow();
  return row.grant_id!;
}

export async function consentedToken(db: Db, server: OAuthTestServer, staff: Staff, consentRequest: Record<string, unknown>, accountIds: string[]): Promise<ConsentedToken> {
  const client = await fdxClient(server);
  const token = await fdxToken(server, client, staff);
  const request = parseFdxAuthorizationDetails([{ type: 'fdx_v1.0', consentRequest: { durationType: 'TIME_BOUND', durationPeriod: 30, ...consentRequest } }]);
  const consent = await recordFdxConsent(db, { environment: 'production', organizationId: staff.orgId, clientId: client.client_id, grantId: await grantOfToken(db, token), userId: staff.users.admin.id, request, accountIds });
  return { token, client, consent };
}
