import type { Executor } from '../db/executor.js';
import { prefixedId } from '../db/ids.js';
import type { DisbursementRail, MailingAddress } from '../db/schema-grantmaking.js';
import {
  insertTransfer,
  latestAddressSuggestion,
  nextCheckNumber,
  onboardingSettlementOf,
  organizationNameOf,
  recipientOf,
} from './disbursement-transfers-repository.js';
import type { findDisbursement } from './disbursements-repository.js';

/**
 * Which rail a disbursement's payment takes, and its transfer (docs/grantmaking.md, "Rails and
 * transfers"): an account transfer or an ACH credit to a recipient onboarded onto one in the
 * sandbox (docs/directory.md, "Sandbox onboarding"), else a check mailed to its mailing address.
 */

type Row = NonNullable<Awaited<ReturnType<typeof findDisbursement>>>;

/** The published CheckTransfer's memo limit. */
export const MEMO_MAX = 72;

/** The rail of the recipient: production has no onboarding, so every production payment is a check. */
export async function railOf(db: Executor, row: Row): Promise<DisbursementRail> {
  if (row.environment !== 'sandbox') return 'check';
  const settlement = await onboardingSettlementOf(db, row.recipient_organization_id);
  if (settlement === 'SANDBOX_SETTLEMENT_ACCOUNT_TRANSFER') return 'account';
  if (settlement === 'SANDBOX_SETTLEMENT_ACH') return 'ach';
  return 'check';
}

/**
 * Where a check to the recipient is mailed: the newest address the sending grantmaker suggested
 * for it, else the directory's. Only the sender's own suggestions count: another grantmaker's
 * upload must not redirect this grantmaker's money.
 */
async function mailingAddressOf(db: Executor, row: Row, recipient: Awaited<ReturnType<typeof recipientOf>>) {
  const suggested = await latestAddressSuggestion(db, {
    environment: row.environment,
    grantmakerId: row.organization_id,
    ein: recipient.ein,
  });
  if (suggested)
    return {
      line1: suggested.line1,
      ...(suggested.line2 ? { line2: suggested.line2 } : {}),
      city: suggested.city,
      state: suggested.state,
      postal_code: suggested.zip,
      country: 'US',
    } satisfies MailingAddress;
  const { street, city, state, postal_code } = recipient;
  if (street?.trim() && city?.trim() && state?.trim() && postal_code?.trim())
    return { line1: street.trim(), city: city.trim(), state: state.trim(), postal_code: postal_code.trim(), country: 'US' };
  return undefined;
}

/**
 * Opens the disbursement's next transfer on its rail, in the caller's transaction: an account
 * transfer `pending_approval`, an ACH credit `submitted`, a check `issued`. Undefined when the
 * rail is a check and the recipient has no usable mailing address (nothing is written then).
 */
export async function openTransfer(trx: Executor, row: Row) {
  const rail = await railOf(trx, row);
  const common = { disbursement_id: row.id, environment: row.environment, rail, amount: Number(row.amount) };
  if (rail === 'account') return insertTransfer(trx, { ...common, id: prefixedId('account_transfer'), status: 'pending_approval' });
  if (rail === 'ach') return insertTransfer(trx, { ...common, id: prefixedId('ach_transfer'), status: 'submitted' });
  const recipient = await recipientOf(trx, row.recipient_organization_id);
  const address = await mailingAddressOf(trx, row, recipient);
  if (!address) return undefined;
  const memo = (row.description?.trim() || `Grant from ${await organizationNameOf(trx, row.organization_id)}`).slice(0, MEMO_MAX);
  return insertTransfer(trx, {
    ...common,
    id: prefixedId('check_transfer'),
    status: 'issued',
    mailing_address: JSON.stringify(address),
    memo,
    recipient_name: recipient.name,
    check_number: await nextCheckNumber(trx),
  });
}
