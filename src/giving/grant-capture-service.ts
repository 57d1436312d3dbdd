import type { Db } from '../db/database.js';
import { inTransaction, type Trx } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import type { Logger } from '../logging/logger.js';
import { conflict, gone, invalid, notFound } from '../errors/domain-error.js';
import type { KeyedHasher } from '../keys/server-keys.js';
import type { MailSender } from '../mail/sender.js';
import { emitEvent } from '../webhooks/outbox.js';
import { mailDonorCode, recordDonorGrantRequest, type RecordedDonorGrantRequest } from '../daf/grant-requests-service.js';
import { checkAmounts, grantDetails, newTrackingId, type CaptureAmounts, type CaptureDetails } from './capture-rules.js';
import { insertGrantStatus } from '../daf/captured-grants-repository.js';
import { findDaf } from './dafs-repository.js';
import {
  findGivingGrant,
  findMemberNonprofitByEin,
  findOwnedConnectWithRecipient,
  insertGivingGrant,
  insertRecurringGrant,
  lockSessionNowait,
  markSessionCaptured,
  type GivingGrantRow,
  type RecurringGrantRow,
} from './grants-repository.js';

/** Capturing a donor's authorized workflow session as a grant or a recurring grant (docs/giving.md, "Capturing grants"). */

export interface CaptureInput extends CaptureAmounts, CaptureDetails {
  workflowSessionId: string;
}

export interface CaptureDeps {
  mail: MailSender;
  keys: KeyedHasher;
  /** Where a code that could not be e-mailed is told (the request's log). */
  log?: Pick<Logger, 'warn'>;
}

type Scope = { organizationId: string; environment: Environment };
type Mode = 'one_time' | 'monthly';

interface Captured {
  grant: GivingGrantRow;
  recurring?: RecurringGrantRow;
  /** The grant request's code to mail after the commit, and to whom. */
  mail?: { provider: string; email: string; recorded: RecordedDonorGrantRequest };
}

async function lockSession(trx: Trx, id: string) {
  try {
    return await lockSessionNowait(trx, id);
  } catch (error) {
    // Another capture of the session holds its row (docs/giving.md, "Capturing grants").
    // Retry-After marks it as of the moment: under an Idempotency-Key it is not stored as the
    // final answer (gateway/routing/idempotent.ts), so the retry gets the grant.
    if ((error as { code?: string }).code === '55P03')
      throw conflict('This workflow session is being captured; try again shortly.', { headers: { 'Retry-After': '1' } });
    throw error;
  }
}

/** The one capture of both operations; `existing` when a one-time session was captured before. */
async function capture(
  trx: Trx,
  deps: CaptureDeps,
  scope: Scope,
  input: CaptureInput,
  mode: Mode,
): Promise<Captured | { existing: GivingGrantRow }> {
  const session = await lockSession(trx, input.workflowSessionId);
  if (!session || session.environment !== scope.environment) throw notFound('The workflow session was not found.');
  const connect = await findOwnedConnectWithRecipient(trx, scope, session.connect_id);
  if (!connect) throw notFound('The workflow session was not found.');
  if (session.unintegrated_grant_id) throw conflict('This workflow session ended as an unintegrated grant; there is nothing to capture.');
  if (mode === 'one_time' && session.grant_id) {
    const grant = await findGivingGrant(trx, session.grant_id);
    if (grant) return { existing: grant };
  }
  if (session.captured_at) throw conflict('This workflow session was already captured.');
  // An inactive Connect processes no grants (the published Connect's `active`).
  if (!connect.active) throw conflict('This connect is not active: it processes no grants.');
  if (Date.now() > session.expires_at.getTime())
    throw gone('The workflow session expired: a grant is captured within 15 minutes of its authorization.');
  if (mode === 'one_time' && session.frequency === 'monthly')
    throw invalid('workflowSessionId: the donor authorized a monthly grant; capture it with POST /v1/recurring_grants.');
  if (mode === 'monthly' && session.frequency !== 'monthly')
    throw invalid('workflowSessionId: the donor authorized a one-time grant; capture it with POST /v1/grants.');
  const daf = await findDaf(trx, scope.environment, session.daf_id);
  if (!daf) throw notFound('The workflow session was not found.');
  const { amount, fee } = checkAmounts(input, {
    minimum: Number(daf.minimum_grant_amount),
    authorized: Number(session.amount),
    balance: session.donor_balance === null ? null : Number(session.donor_balance),
  });
  const details = grantDetails(input, session);
  const member = connect.recipient_ein ? await findMemberNonprofitByEin(trx, connect.recipient_ein) : undefined;

  let status: 'awaiting_account_approval' | 'awaiting_daf_submission' = 'awaiting_daf_submission';
  let recorded: RecordedDonorGrantRequest | undefined;
  if (daf.fund_provider_id) {
    if (!connect.recipient_ein) throw invalid('The connect names no nonprofit to give to.');
    const email = details.email ?? session.donor.email;
    if (!email && !session.donor_account_id) throw invalid("donor.email: the donor's e-mail is needed for this DAF.");
    recorded = await recordDonorGrantRequest(
      trx,
      deps.keys,
      { environment: scope.environment, fundProviderId: daf.fund_provider_id },
      {
        email: email ?? '',
        donorAccountId: session.donor_account_id,
        nonprofitEin: connect.recipient_ein,
        nonprofitName: connect.recipient_name,
        amountCents: amount,
        frequency: mode,
        purpose: details.designation,
        note: details.note,
        donorName: [details.first_name, details.last_name].filter(Boolean).join(' ') || undefined,
      },
    );
    if (recorded.account.status !== 'approved') status = 'awaiting_account_approval';
  }

  const trackingId = newTrackingId();
  const recurring =
    mode === 'monthly'
      ? await insertRecurringGrant(trx, {
          environment: scope.environment,
          organization_id: connect.organization_id,
          connect_id: connect.id,
          workflow_session_id: session.id,
          tracking_id: trackingId,
          fund_id: daf.id,
          amount,
          first_name: details.first_name,
          last_name: details.last_name,
          email: details.email,
          phone: details.phone,
          note: details.note,
          address: details.address ? JSON.stringify(details.address) : null,
        })
      : undefined;
  const grant = await insertGivingGrant(trx, {
    environment: scope.environment,
    organization_id: connect.organization_id,
    connect_id: connect.id,
    // A recurring grant's first grant comes from the same session (the session records the recurring grant).
    workflow_session_id: session.id,
    tracking_id: trackingId,
    fund_id: daf.id,
    amount,
    status,
    ...details,
    address: details.address ? JSON.stringify(details.address) : null,
    payment_channel: member ? 'direct' : 'dafpay_network',
    daf_id: daf.id,
    donor_account_id: recorded?.account.id ?? null,
    grant_request_id: recorded?.request.id ?? null,
    recurring_grant_id: recurring?.id ?? null,
    application_fee: fee,
  });
  await insertGrantStatus(trx, grant.id, status);
  await markSessionCaptured(trx, session.id, recurring ? { recurring_grant_id: recurring.id } : { grant_id: grant.id });
  await emitEvent(trx, {
    environment: scope.environment,
    organizationId: connect.organization_id,
    category: 'grant.created',
    objectId: grant.id,
    objectType: 'grant',
  });
  return {
    grant,
    recurring,
    ...(recorded?.token ? { mail: { provider: daf.org_name, email: recorded.account.email, recorded } } : {}),
  };
}

async function mailAfterCommit(deps: CaptureDeps, captured: Captured): Promise<void> {
  if (!captured.mail) return;
  const { provider, email, recorded } = captured.mail;
  // The grant stands without the mail: the donor asks the fund provider for a new code
  // (docs/giving.md, "A grant's life"), so a failed send does not fail the capture. The
  // operator is told, with the ids it needs and never the code.
  await mailDonorCode(deps.mail, provider, email, recorded).catch((error: Error) =>
    deps.log?.warn(
      { grant: captured.grant.id, grant_request: recorded.request.id, err: error.message },
      "the donor's verification code for a captured grant was not e-mailed",
    ),
  );
}

/** POST /v1/grants: the grant (created), or the one captured from the session before. */
export async function captureGrant(
  db: Db,
  deps: CaptureDeps,
  scope: Scope,
  input: CaptureInput,
): Promise<{ grant: GivingGrantRow; created: boolean }> {
  const result = await inTransaction(db, (trx) => capture(trx, deps, scope, input, 'one_time'));
  if ('existing' in result) return { grant: result.existing, created: false };
  await mailAfterCommit(deps, result);
  return { grant: result.grant, created: true };
}

/** POST /v1/recurring_grants: the recurring grant and its first grant; a session is captured once (409 after). */
export async function captureRecurringGrant(db: Db, deps: CaptureDeps, scope: Scope, input: CaptureInput): Promise<RecurringGrantRow> {
  const result = await inTransaction(db, (trx) => capture(trx, deps, scope, input, 'monthly'));
  if ('existing' in result || !result.recurring) throw conflict('This workflow session was already captured.');
  await mailAfterCommit(deps, result);
  return result.recurring;
}
