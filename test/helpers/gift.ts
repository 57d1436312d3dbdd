import crypto from 'node:crypto';
import type { Db } from '../../src/db/database.js';
import { prefixedId } from '../../src/db/ids.js';
import type { Environment } from '../../src/db/schema.js';
import { findProcessingAccount } from '../../src/grantmaking/accounts-repository.js';
import { givingCaller } from './giving.js';

/** A lockbox as the tests set it up: its payment source and the PO box request it answered. */
export interface TestLockbox {
  id: string;
  locationId: string;
  paymentSourceId: string;
  financialAccountId: string;
  environment: Environment;
}

let nextLocation = 100 + crypto.randomInt(1_000_000);

/**
 * A lockbox of `providerId` for `nonprofitId`, written straight into the tables (payment source
 * on the nonprofit's processing account, a fulfilled PO box request, the lockbox).
 */
export async function createTestLockbox(
  db: Db,
  options: { nonprofitId: string; providerId: string; environment?: Environment; locationId?: string },
): Promise<TestLockbox> {
  const environment = options.environment ?? 'sandbox';
  const account = await findProcessingAccount(db, options.nonprofitId, environment);
  if (!account) throw new Error('the nonprofit has no processing account');
  const locationId = options.locationId ?? `po_${nextLocation++}`;
  const paymentSourceId = prefixedId('payment_source');
  const lockboxId = prefixedId('lockbox');
  const requestId = crypto.randomBytes(12).toString('base64url');
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('payment_sources')
      .values({
        id: paymentSourceId,
        environment,
        organization_id: options.nonprofitId,
        financial_account_id: account.id,
        name: `Lockbox ${locationId}`,
        source_type: 'lockbox',
        ach_account_number: null,
        ach_routing_number: null,
      })
      .execute();
    await trx
      .insertInto('lockbox_requests')
      .values({
        id: requestId,
        environment,
        organization_id: options.nonprofitId,
        provider_organization_id: options.providerId,
        lockbox_id: null,
        fulfilled_at: null,
      })
      .execute();
    await trx
      .insertInto('lockboxes')
      .values({
        id: lockboxId,
        environment,
        organization_id: options.nonprofitId,
        provider_organization_id: options.providerId,
        location_id: locationId,
        address: JSON.stringify({
          line1: `PO Box ${locationId.slice(3)}`,
          city: 'Newark',
          state: 'NJ',
          postal_code: '07101',
          country: 'US',
        }),
        payment_source_id: paymentSourceId,
        request_id: requestId,
      })
      .execute();
    await trx
      .updateTable('lockbox_requests')
      .set({ lockbox_id: lockboxId, fulfilled_at: new Date() })
      .where('id', '=', requestId)
      .execute();
  });
  return { id: lockboxId, locationId, paymentSourceId, financialAccountId: account.id, environment };
}

/** A nonprofit, a lockbox provider (each with an API key per environment) and a sandbox lockbox between them. */
export async function giftParties(db: Db, tag: string = crypto.randomInt(1_000_000).toString().padStart(6, '0')) {
  const nonprofit = await givingCaller(db, `71-1${tag}`, `Riverside Food Bank ${tag}`, 'nonprofit');
  const provider = await givingCaller(db, `72-1${tag}`, `Keystone Lockbox Services ${tag}`, 'lockbox_provider');
  const lockbox = await createTestLockbox(db, { nonprofitId: nonprofit.id, providerId: provider.id });
  return { nonprofit, provider, lockbox };
}
