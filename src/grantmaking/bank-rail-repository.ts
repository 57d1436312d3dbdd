import type { Executor } from '../db/executor.js';

/**
 * What the bank rail port reads (docs/grantmaking.md, "The bank rail port"): the production
 * payments whose transfer is out and not yet ended, oldest first.
 */
export function openProductionTransfers(db: Executor, limit: number) {
  return db
    .selectFrom('disbursement_transfers as t')
    .innerJoin('disbursements as d', 'd.id', 't.disbursement_id')
    .innerJoin('organizations as g', 'g.id', 'd.organization_id')
    .select([
      't.id as transfer_id',
      't.rail',
      't.amount',
      't.status',
      't.check_number',
      't.memo',
      't.recipient_name',
      't.mailing_address',
      't.created_at',
      'd.id as disbursement_id',
      'd.recipient_organization_id',
      'g.name as grantmaker_name',
    ])
    .where('t.environment', '=', 'production')
    .where('d.status', '=', 'submitted')
    .where('t.status', 'in', ['issued', 'submitted', 'pending_approval'])
    .orderBy('t.created_at')
    .orderBy('t.id')
    .limit(limit)
    .execute();
}
