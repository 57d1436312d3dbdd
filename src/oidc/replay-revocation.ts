import type { Db } from '../db/database.js';
import type { Environment } from '../db/schema.js';
import { recordAudit } from '../audit/audit-log.js';
import type { ConsumeConflictHandler } from './adapter.js';
import { revokeAuthorization } from '../authorizations/authorizations.js';
import { withinGrace } from './refresh-successors.js';

/**
 * A second use of a code or refresh token that loses the race to consume it is a replay:
 * it ends the authorization, as the library does for a replay it sees (a refresh duplicate
 * inside the grace window excepted). Handed to the adapter and the token endpoint unit,
 * which both detect lost races.
 */
export function revokeOnReplay(db: Db, environment: Environment, graceSeconds: number): ConsumeConflictHandler {
  return async (model, grantId, consumedAt) => {
    if (!grantId) return;
    if (model === 'RefreshToken' && withinGrace(consumedAt, graceSeconds)) return;
    await revokeAuthorization(db, environment, grantId, model === 'RefreshToken' ? 'refresh_token_reuse' : 'authorization_code_replay');
    await recordAudit(db, {
      event: model === 'RefreshToken' ? 'refresh_token.reuse' : 'authorization_code.replay',
      environment,
      details: { grant_id: grantId },
    });
  };
}
