import { recordAudit } from '../audit/audit-log.js';
import type { Db } from '../db/database.js';
import { inTransaction } from '../db/executor.js';
import { prefixedId } from '../db/ids.js';
import type { Cursor } from '../db/keyset.js';
import type { Environment } from '../db/schema.js';
import type { PaymentSourceType } from '../db/schema-gift.js';
import { invalid } from '../errors/domain-error.js';
import { findProcessingAccount } from '../grantmaking/accounts-repository.js';
import {
  findPaymentSource,
  insertPaymentSource,
  listPaymentSources,
  type PaymentSourceRow,
  type Scope,
} from './payment-sources-repository.js';

export type { PaymentSourceRow };

/** A page of the nonprofit's payment sources, newest first. */
export function paymentSourcesPage(db: Db, scope: Scope, cursor: Cursor | undefined, limit: number): Promise<PaymentSourceRow[]> {
  return listPaymentSources(db, scope, cursor, limit);
}

export function paymentSourceOf(db: Db, scope: Scope, id: string): Promise<PaymentSourceRow | undefined> {
  return findPaymentSource(db, scope, id);
}

/** Payment source types an operator adds by hand; lockbox sources come with their lockbox (provisionMailbox). */
export const OPERATOR_SOURCE_TYPES: readonly PaymentSourceType[] = ['manual', 'portal', 'grantmaker'];

export interface NewPaymentSource {
  organizationId: string;
  environment: Environment;
  name: string;
  sourceType: PaymentSourceType;
  ach?: { accountNumber: string; routingNumber: string };
  /** Who adds it, for the audit row (`payment_source.created`). */
  via: 'admin_cli';
}

/**
 * Adds a payment source on the nonprofit's processing financial account (docs/gift-processing.md,
 * "The model"). An ACH address is the account and routing number money arrives at. Audited.
 */
export async function addPaymentSource(db: Db, input: NewPaymentSource) {
  const name = input.name.trim();
  if (name === '' || name.length > 200) throw invalid('The name must be 1 to 200 characters.');
  if (!OPERATOR_SOURCE_TYPES.includes(input.sourceType)) throw invalid(`The type must be one of ${OPERATOR_SOURCE_TYPES.join(', ')}.`);
  if (input.ach) {
    if (!/^[0-9]{4,17}$/.test(input.ach.accountNumber)) throw invalid('The ACH account number must be 4 to 17 digits.');
    if (!/^[0-9]{9}$/.test(input.ach.routingNumber)) throw invalid('The ACH routing number must be 9 digits.');
  }
  const account = await findProcessingAccount(db, input.organizationId, input.environment);
  if (!account) throw invalid(`The organization has no processing financial account in ${input.environment}: is it a nonprofit?`);
  return inTransaction(db, async (trx) => {
    const created = await insertPaymentSource(trx, {
      id: prefixedId('payment_source'),
      environment: input.environment,
      organization_id: input.organizationId,
      financial_account_id: account.id,
      name,
      source_type: input.sourceType,
      ach_account_number: input.ach?.accountNumber ?? null,
      ach_routing_number: input.ach?.routingNumber ?? null,
    });
    await recordAudit(trx, {
      event: 'payment_source.created',
      environment: input.environment,
      organizationId: input.organizationId,
      details: { payment_source_id: created.id, source_type: created.source_type, name: created.name, via: input.via },
    });
    return created;
  });
}
