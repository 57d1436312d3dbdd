import crypto from 'node:crypto';
import type { Db } from '../../src/db/database.js';
import type { Environment } from '../../src/db/schema.js';
import { openFinancialAccountPair, openLedgerAccount, postTransfer, type FinancialAccountPair } from '../../src/ledger/ledger.js';

/** An organization of its own (a random EIN), for the ledger's customer accounts. */
export async function ledgerOrganization(db: Db): Promise<string> {
  const ein = String(crypto.randomInt(100_000_000, 999_999_999));
  const row = await db
    .insertInto('organizations')
    .values({ ein, name: `Ledger test ${ein}`, kind: 'fund_provider' })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export interface LedgerFixture {
  environment: Environment;
  organizationId: string;
  /** The outside world: money deposited comes from it (it goes negative). */
  externalId: string;
  /** Where settled holds go (floored). */
  settlementId: string;
  account: FinancialAccountPair;
}

export async function ledgerFixture(db: Db, environment: Environment = 'sandbox'): Promise<LedgerFixture> {
  const organizationId = await ledgerOrganization(db);
  const external = await openLedgerAccount(db, { environment, purpose: 'external' });
  const settlement = await openLedgerAccount(db, { environment, purpose: 'settlement' });
  const account = await openFinancialAccountPair(db, { environment, organizationId });
  return { environment, organizationId, externalId: external.id, settlementId: settlement.id, account };
}

/** Money arriving from outside into a financial account's available part. */
export function deposit(db: Db, f: LedgerFixture, amount: number, referenceId: string = crypto.randomUUID()) {
  return postTransfer(db, {
    environment: f.environment,
    kind: 'deposit',
    reference: { type: 'inbound_transfer', id: referenceId },
    entries: [
      { accountId: f.externalId, amount: -amount },
      { accountId: f.account.availableAccountId, amount },
    ],
  });
}
