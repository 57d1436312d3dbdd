import type { Middleware } from 'koa';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { Db } from '../../db/database.js';
import type { Environment } from '../../db/schema.js';
import { findConsumedAt, hashId } from '../../db/provider-store.js';
import { findSuccessor } from '../refresh-successors-repository.js';
import { openSuccessor, sealSuccessor, successorKey, withinGrace } from '../refresh-successors.js';
import { oidcState, unitOf } from '../request-scope.js';
import { formOf, single } from './raw-form.js';
import type { AnswerStep } from './steps.js';

/**
 * refresh_reuse_grace_seconds: a duplicate presentation of a refresh token within the window
 * after its first use (a client retrying, two tabs racing) gets the same new pair instead of
 * revoking the authorization (docs/security.md, "Refresh token replay inside the grace
 * window"). The pair is sealed (refresh-successors.ts) into the request's unit of work and
 * committed with the rotation, in its one statement (unit-of-work-repository.ts): a rotation
 * is never written without the pair a duplicate of it is answered with.
 *
 * A duplicate is answered only after the provider has handled it in full: client
 * authentication (HTTP Basic, the secret check and its failure limits), the check that the
 * token was issued to that client, then the consume that loses to the first use (the unit of
 * work records that: unit-of-work.ts). A refusal before that point (no or wrong credentials,
 * another client) stays the refusal it is, and changes nothing: holding the token without the
 * client's secret neither refreshes nor revokes.
 */

/** The refresh token a refresh_token grant presents (a plausible one), from the form the chain read. */
function presentedRefreshToken(ctx: Parameters<Middleware>[0]): string | undefined {
  const form = formOf(ctx);
  const value = form && single(form.grant_type) === 'refresh_token' ? single(form.refresh_token) : undefined;
  return value && value.length <= 256 ? value : undefined;
}

/** Inside the unit, after the provider: a refresh's answer, sealed, goes into the unit's commit. */
export function sealGraceSuccessor(environment: Environment, graceSeconds: number): AnswerStep {
  return async (rawCtx) => {
    const refreshToken = graceSeconds > 0 ? presentedRefreshToken(rawCtx) : undefined;
    const ctx = rawCtx as unknown as KoaContextWithOIDC;
    const clientId = ctx.oidc?.client?.clientId;
    const unit = unitOf(rawCtx);
    if (!refreshToken || !unit || !clientId || ctx.status !== 200 || !ctx.body || typeof ctx.body !== 'object') return;
    const ciphertext = sealSuccessor(JSON.stringify(ctx.body), successorKey(refreshToken, environment), clientId);
    unit.successor = { id: hashId(refreshToken), ciphertext, expiresAt: new Date(Date.now() + graceSeconds * 1000) };
  };
}

/**
 * Outside the unit, after it answered a lost consume race: the authenticated owner's duplicate
 * inside the window gets the pair the first use committed with its consume (so it is there
 * once the consume is seen: no waiting).
 */
export function replayGraceSuccessor(db: Db, environment: Environment, graceSeconds: number): AnswerStep {
  return async (rawCtx) => {
    const refreshToken = graceSeconds > 0 ? presentedRefreshToken(rawCtx) : undefined;
    const owner = oidcState(rawCtx).lostRefreshRaceClient;
    const clientId = (rawCtx as unknown as KoaContextWithOIDC).oidc?.client?.clientId;
    // Only a duplicate from the authenticated owner that lost the consume race is answered.
    if (!refreshToken || !owner || owner !== clientId) return;
    const id = hashId(refreshToken);
    if (!withinGrace(await findConsumedAt(db, environment, 'RefreshToken', id), graceSeconds)) return;
    const row = await findSuccessor(db, environment, id);
    const text =
      row && row.expires_at.getTime() > Date.now()
        ? openSuccessor(row.ciphertext, successorKey(refreshToken, environment), owner)
        : undefined;
    if (!text) return;
    rawCtx.status = 200;
    rawCtx.remove('WWW-Authenticate');
    rawCtx.set('Cache-Control', 'no-store');
    rawCtx.body = JSON.parse(text) as Record<string, unknown>;
    // The answer is no refusal any more: nothing outside may challenge or re-map it.
    delete oidcState(rawCtx).refusal;
  };
}
