import type { Db } from '../db/database.js';
import type { Environment } from '../db/schema.js';
import { findModel, hashId, type StoredRow } from '../db/provider-store.js';
import { readRequestState } from './request-state-repository.js';
import { findTokenWithGrant } from './unit-of-work-repository.js';
import type { UnitOfWork } from './unit-of-work.js';
import type { Executor } from '../db/executor.js';
import { loadAuthorization, type AuthorizationContext } from '../authorizations/authorizations.js';

/**
 * How the adapter reads a row inside a unit of work (unit-of-work.ts): from what the unit
 * knows, else by the read its plan prefers, remembered:
 *  - token request: the presented code or refresh token with its Grant and our authorization,
 *    in one query, so the provider's later reads of them (and findAccount's) cost none;
 *  - browser request: an Interaction with its Session, the Grant its consent names and the
 *    user, as the request's first read reads them (middleware/unit-of-work.ts).
 */
export async function readInUnit(
  db: Db,
  environment: Environment,
  unit: UnitOfWork,
  model: string,
  hashedId: string,
): Promise<StoredRow | undefined> {
  const key = `${model}:${hashedId}`;
  if (unit.rows.has(key)) return unit.rows.get(key) ?? undefined;
  if (!unit.plan.saves.has(model)) return findModel(db, environment, model, hashedId);
  if (unit.plan.kind === 'token') return prefetchToken(db, environment, unit, model, hashedId);
  if (model === 'Interaction') {
    const ids = { interaction: hashedId, session: null };
    unit.remember(ids, await readRequestState(db, environment, ids));
    return unit.rows.get(key) ?? undefined;
  }
  const row = await findModel(db, environment, model, hashedId);
  // A write of this row that landed in the unit meanwhile is the newer state.
  if (!unit.rows.has(key)) unit.rows.set(key, row ?? null);
  const uid = model === 'Session' ? row?.payload.uid : undefined;
  if (typeof uid === 'string' && !unit.sessionsByUid.has(uid)) unit.sessionsByUid.set(uid, key);
  return unit.rows.get(key) ?? undefined;
}

/** Reads a code or refresh token with its Grant and authorization, remembering all three. */
async function prefetchToken(
  db: Db,
  environment: Environment,
  unit: UnitOfWork,
  model: string,
  hashedId: string,
): Promise<StoredRow | undefined> {
  const key = `${model}:${hashedId}`;
  const row = await findTokenWithGrant(db, environment, model, hashedId);
  if (!row) {
    unit.rows.set(key, null);
    return undefined;
  }
  const token = { payload: row.payload, consumed_at: row.consumed_at };
  unit.rows.set(key, token);
  if (row.grant_id) {
    // The Grant row is keyed by the hash of its id, as every adapter row is.
    unit.rows.set(`Grant:${hashId(row.grant_id)}`, row.g_payload ? { payload: row.g_payload, consumed_at: row.g_consumed_at } : null);
    unit.authorizations.set(
      row.grant_id,
      row.a_grant_id && row.email !== null
        ? {
            grantId: row.a_grant_id,
            subjectType: row.subject_type!,
            userId: row.user_id!,
            organizationId: row.organization_id!,
            scopes: row.scopes ?? [],
            revoked: row.revoked_at !== null,
            expiresAt: row.a_expires_at!,
            email: row.email,
            displayName: row.display_name,
            userDisabled: row.disabled_at !== null,
            role: row.role ?? undefined,
          }
        : null,
    );
  }
  return token;
}

/** An authorization, answered from the request's unit when its token read already brought it. */
export async function authorizationForRequest(
  db: Executor,
  environment: Environment,
  grantId: string,
  unit: UnitOfWork | undefined,
): Promise<AuthorizationContext | undefined> {
  if (unit?.authorizations.has(grantId)) return unit.authorizations.get(grantId) ?? undefined;
  return loadAuthorization(db, environment, grantId);
}
