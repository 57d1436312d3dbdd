import type { Db } from '../db/database.js';
import type { Environment } from '../db/schema.js';
import { hashId, type StoredRow } from '../db/provider-store.js';
import type { TokenUnit } from './token-unit.js';
import { findTokenWithGrant } from './token-unit-repository.js';

/**
 * The token endpoint's single read (token-unit.ts): the presented code or refresh token is
 * read with its Grant and our authorization, and all three are remembered in the unit, so
 * the provider's later reads of them (and findAccount's) cost no query.
 */

/** Returns the token's row (undefined when it does not exist), remembering it and its Grant and authorization. */
export async function prefetchToken(db: Db, environment: Environment, unit: TokenUnit, model: string, hashedId: string): Promise<StoredRow | undefined> {
  const key = `${model}:${hashedId}`;
  if (unit.rows.has(key)) return unit.rows.get(key) ?? undefined;
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
