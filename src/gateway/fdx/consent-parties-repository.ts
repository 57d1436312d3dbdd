import type { Db } from '../../db/database.js';
import type { Environment } from '../../db/schema.js';

/** The parties a ConsentGrant names: its data recipient (the client, as registered) and its data provider's customer (the organization). */
export interface ConsentPartiesRow {
  client_name: string | null;
  logo_uri: string | null;
  organization_name: string | null;
}

export async function findConsentParties(
  db: Db,
  environment: Environment,
  clientId: string,
  organizationId: string,
): Promise<ConsentPartiesRow> {
  const [client, organization] = await Promise.all([
    db
      .selectFrom('oauth_clients')
      .select(['name', 'logo_uri'])
      .where('environment', '=', environment)
      .where('client_id', '=', clientId)
      .executeTakeFirst(),
    db.selectFrom('organizations').select('name').where('id', '=', organizationId).executeTakeFirst(),
  ]);
  return { client_name: client?.name ?? null, logo_uri: client?.logo_uri ?? null, organization_name: organization?.name ?? null };
}
