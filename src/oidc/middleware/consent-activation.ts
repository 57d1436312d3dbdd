import type { KoaContextWithOIDC } from 'oidc-provider';
import { recordAudit } from '../../audit/audit-log.js';
import { activateFdxConsentIn } from '../../authorizations/fdx-consents.js';
import type { Db } from '../../db/database.js';
import type { Environment } from '../../db/schema.js';
import { grantedFdxDetail } from '../fdx-authorization-details.js';
import { unitOf } from '../request-scope.js';
import { writeWithUnit } from '../unit-of-work.js';
import type { AnswerStep } from './steps.js';

/**
 * The token endpoint, after the provider and inside the unit of work: a code exchanged for an
 * FDX consent's authorization makes the consent ACTIVE, and the recipient's earlier consent for
 * the organization ends (docs/bank-data.md, "Consents"), in the transaction that uses up the
 * code and issues the tokens, so either all of it commits or none.
 */
export function activateConsentOnExchange(db: Db, environment: Environment): AnswerStep {
  return async (rawCtx) => {
    const ctx = rawCtx as unknown as KoaContextWithOIDC;
    if (ctx.status !== 200 || !ctx.oidc || ctx.oidc.params?.grant_type !== 'authorization_code') return;
    const fdx = grantedFdxDetail(ctx.oidc.entities.Grant);
    if (!fdx) return;
    const requestId = String(ctx.res.getHeader('x-request-id') ?? '') || null;
    await writeWithUnit(unitOf(ctx), db, async (trx) => {
      const { consent, superseded } = await activateFdxConsentIn(trx, { environment, consentId: fdx.consentId });
      for (const old of superseded)
        await recordAudit(trx, {
          event: 'fdx_consent.revoked',
          environment,
          // The approver of the consent that replaces it.
          actorUserId: consent?.userId ?? null,
          organizationId: old.organizationId,
          clientId: old.clientId,
          ip: ctx.ip || null,
          requestId,
          details: {
            consent_id: old.id,
            grant_id: old.grantId,
            reason: old.revocationReason,
            initiator: old.revocationInitiator,
            superseded_by: consent?.id,
          },
        });
    });
  };
}
