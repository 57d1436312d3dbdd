import type { Db } from '../db/database.js';
import { inTransaction } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import { DomainError, invalid, notFound } from '../errors/domain-error.js';
import { recordAudit } from '../audit/audit-log.js';
import { checkEvidence } from '../grantmaking/evidence.js';
import { moveGrantPayment } from './grant-money.js';
import { moveGrant, TERMINAL_GRANT_STATUSES } from '../daf/captured-grants.js';
import { lockGivingGrant, type GivingGrantRow } from './grants-repository.js';

/**
 * The end of a captured grant's life (docs/giving.md, "A grant's life"): completed (its money
 * moves, "Money") or canceled, by the sandbox's simulations or production's operator. The fund
 * provider's decisions before it are src/daf/captured-grants.ts.
 */

export type GrantOutcome = 'complete' | 'cancel';

/**
 * Completes or cancels one grant, in a transaction: the sandbox's simulations and production's
 * operator commands (with the bank's evidence). A terminal grant is refused (400); completing
 * moves the money once.
 */
export async function settleGrant(
  db: Db,
  scope: { environment: Environment; organizationId?: string },
  id: string,
  outcome: GrantOutcome,
  /** An operator's settlement in production: the bank's evidence, audited with the change. */
  evidence?: string,
): Promise<GivingGrantRow> {
  return inTransaction(db, async (trx) => {
    const grant = await lockGivingGrant(trx, id);
    if (!grant || grant.environment !== scope.environment || (scope.organizationId && grant.organization_id !== scope.organizationId))
      throw notFound('The grant was not found.');
    if (TERMINAL_GRANT_STATUSES.has(grant.status)) throw invalid(`The grant is already ${grant.status}.`);
    const updated =
      outcome === 'cancel'
        ? await moveGrant(trx, grant, 'canceled', { comment: evidence ?? null })
        : await moveGrant(trx, grant, 'completed');
    if (outcome === 'complete') await moveGrantPayment(trx, updated);
    if (evidence !== undefined)
      await recordAudit(trx, {
        event: outcome === 'complete' ? 'grant.completed' : 'grant.canceled',
        environment: grant.environment,
        organizationId: grant.organization_id,
        details: { grant_id: grant.id, amount: Number(grant.amount), reference: evidence, via: 'admin_cli' },
      });
    return updated;
  });
}

/**
 * Production's rail (docs/giving.md, "A grant's life"): an operator, with the bank's evidence of
 * the DAF's payment (or of its cancellation), completes or cancels a production grant.
 */
export async function settleGrantAsOperator(
  db: Db,
  outcome: GrantOutcome,
  input: { id: string; reference: string },
): Promise<GivingGrantRow> {
  try {
    return await settleGrant(db, { environment: 'production' }, input.id, outcome, checkEvidence(input.reference));
  } catch (error) {
    if (error instanceof DomainError && error.code === 'not_found')
      throw notFound(`no production grant ${input.id} (a sandbox grant is settled by its simulations)`);
    throw error;
  }
}
