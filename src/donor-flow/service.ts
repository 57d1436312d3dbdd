import crypto from 'node:crypto';
import type { Db } from '../db/database.js';
import { inTransaction } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import type { SessionDonorJson, WorkflowFrequency } from '../db/schema-giving.js';
import { findDonorAccountIdByEmail } from '../daf/donor-accounts-repository.js';
import { findTokenByCode } from '../daf/tokens-repository.js';
import { codeHashes, redeemCode } from '../daf/tokens-service.js';
import { DomainError } from '../errors/domain-error.js';
import { findConnectForFlow } from '../giving/connects-repository.js';
import { findDaf, isSupported, listDafs, type DafRow } from '../giving/dafs-repository.js';
import { findWorkflowSession, insertWorkflowSession, type WorkflowSessionRow } from '../giving/workflow-sessions-repository.js';
import type { KeyedHasher } from '../keys/server-keys.js';
import type { AttemptCounter } from '../limits/attempt-counter.js';
import {
  donorFlowAuthorizationsPerCallerAddress,
  donorFlowAuthorizationsPerConnect,
  donorFlowCodeAttemptsPerCallerAddress,
  donorFlowCodeAttemptsPerConnect,
} from '../limits/rate-limits.js';
import { emitEvent } from '../webhooks/outbox.js';
import { insertUnintegratedGrant } from './unintegrated-grants-repository.js';

/**
 * The donor flow's rules (docs/giving.md, "The donor flow"): which Connect and DAF it may
 * show, a DAF code redeemed under its limits, and the authorization that writes the workflow
 * session (with an unintegrated DAF's grant, in one transaction).
 */

export interface FlowConnect {
  id: string;
  environment: Environment;
  /** The organization that created the Connect: an unintegrated grant is its. */
  ownerOrganizationId: string;
  recipientName: string;
  recipientEin: string;
}

/** A Connect the flow may open on this environment's dashboard: known, active, for a directory nonprofit. */
export async function connectForFlow(db: Db, environment: Environment, cid: string): Promise<FlowConnect | undefined> {
  if (cid.length > 100) return undefined;
  const row = await findConnectForFlow(db, cid);
  if (!row || !row.active || row.environment !== environment || !row.recipient_name || !row.recipient_ein) return undefined;
  return {
    id: row.id,
    environment: row.environment,
    ownerOrganizationId: row.organization_id,
    recipientName: row.recipient_name,
    recipientEin: row.recipient_ein,
  };
}

export type DafKind = 'integrated' | 'simulated' | 'unintegrated';

export function dafKind(daf: Pick<DafRow, 'fund_provider_id' | 'simulated'>): DafKind {
  if (daf.fund_provider_id !== null) return 'integrated';
  return daf.simulated ? 'simulated' : 'unintegrated';
}

/** How many DAFs the choice page lists: the search narrows the rest. */
export const DAF_PAGE_SIZE = 60;

/** The environment's DAFs whose names contain `query`, in name order; `more` when the list was cut. */
export async function searchDafs(db: Db, environment: Environment, query: string): Promise<{ dafs: DafRow[]; more: boolean }> {
  const rows = await listDafs(db, environment, { query: query.trim().slice(0, 100) || undefined }, undefined, DAF_PAGE_SIZE);
  return { dafs: rows.slice(0, DAF_PAGE_SIZE), more: rows.length > DAF_PAGE_SIZE };
}

export function dafForFlow(db: Db, environment: Environment, id: string): Promise<DafRow | undefined> {
  return findDaf(db, environment, id);
}

export { isSupported, type DafRow };

/** What the simulated DAF's sign-in tells: a balance of $25,000.00. */
export const SIMULATED_BALANCE_CENTS = 2_500_000;

/** The session a flow authorized, as written (the final page tells the opener what the row holds). */
export async function authorizedSession(db: Db, connectId: string, id: string): Promise<WorkflowSessionRow | undefined> {
  const session = await findWorkflowSession(db, id);
  return session?.connect_id === connectId ? session : undefined;
}

export type FlowLimitOutcome = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export interface CodeDeps {
  db: Db;
  keys: KeyedHasher;
  counter: AttemptCounter;
}

export type CodeOutcome = FlowLimitOutcome & { allowed: true; problem?: string };

/**
 * A code from the donor's DAF (issued by the fund provider as an authorization token) typed
 * into the flow: like the API's verify, an attempt is reserved per caller address and per
 * Connect before the code is looked up, and only a code that approves the donor's account
 * gives its points back. A code of another fund provider is as wrong as an unknown one.
 */
export async function redeemFlowCode(
  deps: CodeDeps,
  input: { environment: Environment; connectId: string; fundProviderId: string; callerAddress: string; code: string; email: string },
): Promise<CodeOutcome | { allowed: false; retryAfterSeconds: number }> {
  const decision = await deps.counter.takeAll([
    { limit: donorFlowCodeAttemptsPerCallerAddress, value: input.callerAddress },
    { limit: donorFlowCodeAttemptsPerConnect, value: input.connectId },
  ]);
  if (!decision.allowed) return decision;
  const wrong = { allowed: true as const, problem: 'That code is not right, or it has expired. Check the code your DAF sent you.' };
  const token = await findTokenByCode(deps.db, input.environment, codeHashes(deps.keys, input.code), input.fundProviderId);
  if (!token) return wrong;
  try {
    await redeemCode(deps.db, deps.keys, input.environment, input.code, input.email);
  } catch (error) {
    if (error instanceof DomainError && error.code === 'not_found') return wrong;
    if (error instanceof DomainError) return { allowed: true, problem: error.sentence };
    throw error;
  }
  await Promise.all(decision.taken.map((taken) => deps.counter.succeeded(taken)));
  return { allowed: true };
}

/** The donor's account at an integrated DAF's fund provider, when one exists for the e-mail address. */
export async function donorAccountIdFor(db: Db, environment: Environment, fundProviderId: string, email: string): Promise<string | null> {
  return (await findDonorAccountIdByEmail(db, { environment, fundProviderId }, email))?.id ?? null;
}

// RFC 4648 base32: upper-case letters and 2-7.
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** An unintegrated grant's tracking id: 10 upper-case base32 characters (50 bits), read out to a DAF. */
export function trackingId(): string {
  return [...crypto.randomBytes(10)].map((byte) => BASE32[byte % 32]).join('');
}

export interface Authorization {
  connect: FlowConnect;
  daf: DafRow;
  amount: number;
  frequency: WorkflowFrequency;
  donor: SessionDonorJson;
  donorAccountId: string | null;
  donorBalance: number | null;
  callerAddress: string;
}

export type AuthorizationOutcome =
  { allowed: true; sessionId: string; trackingId?: string } | { allowed: false; retryAfterSeconds: number };

/**
 * The donor's "Authorize": one attempt reserved per caller address and per Connect before
 * anything is written (never given back), then the workflow session; for an unintegrated DAF,
 * in the same transaction, its unintegrated grant (status Unknown) with its event, and the
 * session marked captured by it.
 */
export async function authorize(deps: { db: Db; counter: AttemptCounter }, input: Authorization): Promise<AuthorizationOutcome> {
  const decision = await deps.counter.takeAll([
    { limit: donorFlowAuthorizationsPerCallerAddress, value: input.callerAddress },
    { limit: donorFlowAuthorizationsPerConnect, value: input.connect.id },
  ]);
  if (!decision.allowed) return decision;
  const base = {
    environment: input.connect.environment,
    connect_id: input.connect.id,
    daf_id: input.daf.id,
    frequency: input.frequency,
    amount: input.amount,
    donor: JSON.stringify(input.donor),
  };
  if (dafKind(input.daf) !== 'unintegrated') {
    const session = await insertWorkflowSession(deps.db, {
      ...base,
      donor_account_id: input.donorAccountId,
      donor_balance: input.donorBalance,
    });
    return { allowed: true, sessionId: session.id };
  }
  return inTransaction(deps.db, async (trx) => {
    const now = new Date();
    const grantId = crypto.randomUUID();
    const tracking = trackingId();
    const session = await insertWorkflowSession(trx, { ...base, now, unintegrated_grant_id: grantId, captured_at: now });
    await insertUnintegratedGrant(trx, {
      id: grantId,
      environment: input.connect.environment,
      organization_id: input.connect.ownerOrganizationId,
      connect_id: input.connect.id,
      workflow_session_id: session.id,
      tracking_id: tracking,
      fund_id: input.daf.id,
      amount: input.amount,
      metadata: JSON.stringify({}),
      first_name: input.donor.firstName ?? null,
      last_name: input.donor.lastName ?? null,
      email: input.donor.email ?? null,
      phone: input.donor.phone ?? null,
      address: input.donor.address ? JSON.stringify(input.donor.address) : null,
      created_at: now,
    });
    await emitEvent(trx, {
      environment: input.connect.environment,
      organizationId: input.connect.ownerOrganizationId,
      category: 'unintegrated_grant.created',
      objectId: grantId,
      objectType: 'unintegrated_grant',
    });
    return { allowed: true as const, sessionId: session.id, trackingId: tracking };
  });
}
