import type { Executor } from '../db/executor.js';
import { prefixedId } from '../db/ids.js';
import type { Environment } from '../db/schema.js';
import { ENVIRONMENTS, openFinancialAccountPair } from '../ledger/ledger.js';
import { findProcessingAccount, insertFinancialAccount, insertProgram } from './accounts-repository.js';
import { externalLedgerAccount } from './platform-accounts.js';

/**
 * Where each environment's money is said to be held (the published FinancialAccount's
 * `bank_provider`; docs/grantmaking.md, "Financial accounts"): the sandbox's mock bank, and in
 * production `manual`, since operators settle its transfers with the bank's evidence.
 */
const BANK_PROVIDERS: Readonly<Record<Environment, string>> = { sandbox: 'mock_alpha', production: 'manual' };

/** The program every grantmaker starts with: grant disbursements on, gift processing off. */
const DEFAULT_PROGRAM = {
  name: 'Grantmaking',
  description: 'Disbursing grants to eligible nonprofits from the disbursements account.',
} as const;

/**
 * A grantmaker's starting point, in the caller's transaction (the one that adds the organization,
 * docs/grantmaking.md, "Provisioning"): per environment, its `disbursements` financial account over
 * a new pair of ledger accounts, and its default program; and the environment's external account,
 * which its inbound transfers come from.
 */
export async function provisionGrantmaker(trx: Executor, organizationId: string): Promise<void> {
  for (const environment of ENVIRONMENTS) {
    const pair = await openFinancialAccountPair(trx, { environment, organizationId });
    await insertFinancialAccount(trx, {
      id: prefixedId('account'),
      environment,
      organization_id: organizationId,
      account_type: 'disbursements',
      name: 'Disbursements',
      bank_provider: BANK_PROVIDERS[environment],
      available_ledger_account_id: pair.availableAccountId,
      held_ledger_account_id: pair.heldAccountId,
    });
    await insertProgram(trx, {
      id: prefixedId('program'),
      environment,
      organization_id: organizationId,
      name: DEFAULT_PROGRAM.name,
      description: DEFAULT_PROGRAM.description,
      grant_disbursement_status: 'enabled',
      gift_processing_status: 'disabled',
    });
    await externalLedgerAccount(trx, environment);
  }
}

/**
 * A nonprofit's or platform's `processing` financial account in one environment, where completed
 * DAFpay grants pay it (docs/giving.md, "Money"): opened when the organization is added, and here
 * for one added before (the caller's transaction; the unique index keeps it one). Returns its
 * available ledger account.
 */
export async function processingLedgerAccount(trx: Executor, organizationId: string, environment: Environment): Promise<string> {
  const known = await findProcessingAccount(trx, organizationId, environment);
  if (known) return known.available_ledger_account_id;
  const pair = await openFinancialAccountPair(trx, { environment, organizationId });
  await insertFinancialAccount(trx, {
    id: prefixedId('account'),
    environment,
    organization_id: organizationId,
    account_type: 'processing',
    name: 'Processing',
    bank_provider: BANK_PROVIDERS[environment],
    available_ledger_account_id: pair.availableAccountId,
    held_ledger_account_id: pair.heldAccountId,
  });
  return pair.availableAccountId;
}

/** A nonprofit's or platform's starting point: its processing account in each environment. */
export async function provisionProcessing(trx: Executor, organizationId: string): Promise<void> {
  for (const environment of ENVIRONMENTS) await processingLedgerAccount(trx, organizationId, environment);
}
