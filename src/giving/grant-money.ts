import type { Executor } from '../db/executor.js';
import { postTransfer } from '../ledger/ledger.js';
import { dafpayNetworkLedgerAccount, externalLedgerAccount } from '../grantmaking/platform-accounts.js';
import { processingLedgerAccount } from '../grantmaking/provisioning.js';
import { recipientMemberOfConnect, type GivingGrantRow } from './grants-repository.js';

/**
 * A completed grant's money (docs/giving.md, "Money"; docs/ledger.md, `grant_payment`): one
 * balanced transfer in the completing transaction, from the environment's external account to
 * the recipient nonprofit's processing account (the amount less the platform's fee), or to the
 * DAFpay Network's account when the nonprofit is not on Almoner, and the fee to the connect
 * owner's processing account. The transfer's reference makes it once per grant.
 */
export async function moveGrantPayment(trx: Executor, grant: GivingGrantRow): Promise<void> {
  const amount = Number(grant.amount);
  const fee = Number(grant.application_fee);
  const member = grant.payment_channel === 'direct' ? await recipientMemberOfConnect(trx, grant.connect_id) : undefined;
  const recipient = member
    ? await processingLedgerAccount(trx, member.id, grant.environment)
    : await dafpayNetworkLedgerAccount(trx, grant.environment);
  const credits = new Map<string, number>([[recipient, amount - fee]]);
  if (fee > 0) {
    const owner = await processingLedgerAccount(trx, grant.organization_id, grant.environment);
    // The owner may be the recipient (a nonprofit's own connect): one entry for both.
    credits.set(owner, (credits.get(owner) ?? 0) + fee);
  }
  await postTransfer(trx, {
    environment: grant.environment,
    kind: 'grant_payment',
    reference: { type: 'grant', id: grant.id },
    entries: [
      { accountId: await externalLedgerAccount(trx, grant.environment), amount: -amount },
      ...[...credits].filter(([, cents]) => cents !== 0).map(([accountId, cents]) => ({ accountId, amount: cents })),
    ],
  });
}
