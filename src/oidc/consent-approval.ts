import { recordAudit } from '../audit/audit-log.js';
import { insertAuthorization } from '../authorizations/authorizations.js';
import type { FdxConsentRequest } from '../authorizations/fdx-consent-request.js';
import { recordFdxConsent } from '../authorizations/fdx-consents.js';
import type { Db } from '../db/database.js';
import { consumePushedRequest } from '../db/provider-store.js';
import type { Environment, SubjectType } from '../db/schema.js';
import { conflict } from '../errors/domain-error.js';
import { writeWithUnit, type UnitOfWork } from './unit-of-work.js';

/** A consent the user approved on the consent step: the provider's Grant is saved, its id here. */
export interface ConsentApproval {
  environment: Environment;
  grantId: string;
  clientId: string;
  subjectType: SubjectType;
  userId: string;
  organizationId: string;
  granted: string[];
  withheld: string[];
  /** The pushed request (its raw id) the approval answers, if it came as one. */
  pushedRequest?: string;
  /** The bank-data consent approved with it: its id and time fixed before the Grant was saved. */
  fdx?: { consentId: string; createdAt: Date; request: FdxConsentRequest; accountIds: string[] };
  trace: { ip: string | null; requestId: string | null };
}

const approvedElsewhere = () =>
  conflict(
    'This request was already approved in another window or tab, so nothing was approved here and nothing more was shared. Go back to the application if it still needs you.',
    { title: 'Already approved' },
  );

/**
 * Records an approval: our authorization, its bank-data consent and the audit row, committed
 * with the Grant and the Interaction in the request's unit (oidc/unit-of-work.ts). A pushed
 * request allows one approval: used up here, in this approval's transaction, so that a second
 * window's approval of the same request_uri commits nothing (docs/bank-data.md, "Pushed
 * authorization requests").
 */
export async function recordConsentApproval(unit: UnitOfWork | undefined, db: Db, a: ConsentApproval): Promise<void> {
  await writeWithUnit(unit, db, async (trx) => {
    if (a.pushedRequest && !(await consumePushedRequest(trx, a.environment, a.pushedRequest))) throw approvedElsewhere();
    await insertAuthorization(trx, {
      grantId: a.grantId,
      environment: a.environment,
      clientId: a.clientId,
      subjectType: a.subjectType,
      userId: a.userId,
      organizationId: a.organizationId,
      scopes: a.granted,
    });
    if (a.fdx)
      await recordFdxConsent(trx, {
        id: a.fdx.consentId,
        createdAt: a.fdx.createdAt,
        environment: a.environment,
        organizationId: a.organizationId,
        clientId: a.clientId,
        grantId: a.grantId,
        userId: a.userId,
        request: a.fdx.request,
        accountIds: a.fdx.accountIds,
      });
    await recordAudit(trx, {
      event: 'consent.granted',
      environment: a.environment,
      actorUserId: a.userId,
      organizationId: a.organizationId,
      clientId: a.clientId,
      ip: a.trace.ip,
      requestId: a.trace.requestId,
      details: {
        grant_id: a.grantId,
        scopes: a.granted,
        withheld: a.withheld,
        subject_type: a.subjectType,
        ...(a.fdx ? { fdx_consent_id: a.fdx.consentId, accounts: a.fdx.accountIds } : {}),
      },
    });
  });
}
