import type { Context, Middleware } from 'koa';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { Db } from '../../db/database.js';
import { hashId } from '../../db/provider-store.js';
import type { Environment } from '../../db/schema.js';
import { alreadyUsed, consumeConflict, type ConsumeConflictHandler } from '../adapter.js';
import { oidcState } from '../request-scope.js';
import { readRequestState } from '../request-state-repository.js';
import { runInUnit, UnitOfWork, type UnitPlan } from '../unit-of-work.js';
import { commitUnit } from '../unit-of-work-repository.js';
import { sendOAuthError } from './oauth-errors.js';

/** What a browser request names in its URL and cookie: the Interaction's uid, the session cookie's value. */
export interface RequestStateHint {
  interactionUid?: string;
  sessionId?: string;
}

export interface UnitOfWorkOptions {
  db: Db;
  environment: Environment;
  /** The plan of the requests that are units (unit-of-work.ts); undefined for the others. */
  planFor: (ctx: Context) => UnitPlan | undefined;
  /** A browser request's first read: the rows its URL and cookie name, read in one statement. */
  hint?: (ctx: Context) => RequestStateHint | undefined;
  /** A token request that lost the race to consume: the conflict handler judges the replay. */
  onConsumeConflict?: ConsumeConflictHandler;
  /**
   * A failed read or commit of the unit, or a browser request that failed. Inside the provider
   * it is answered as the provider answers its own storage failures (stack/provider-stack.ts);
   * without this option it is thrown to the app's error handler (503 while the database is down).
   */
  onFailure?: (ctx: Context, error: unknown) => void;
}

/** Provider ids (nanoid) and session cookie values; anything else is not looked up. */
const PLAUSIBLE_ID = /^[\w-]{1,128}$/;
const plausible = (value: string | undefined): string | null => (value !== undefined && PLAUSIBLE_ID.test(value) ? hashId(value) : null);

/**
 * The one middleware that opens a unit of work (unit-of-work.ts) where a request enters the
 * provider, puts it at `ctx.state.oidc.unit`, runs the request in it and commits it with
 * commitUnit before the response leaves:
 *  - a browser request is written whatever its outcome, as the adapter's own calls would have
 *    been; a failed commit fails the request, unless the request failed already, whose error
 *    then stands;
 *  - a token request is written only once the provider built a successful response (its
 *    tokens were never handed out otherwise). When its consume lost the race it wrote
 *    nothing, and is answered as the provider answers a used code or refresh token
 *    (invalid_grant), after the conflict handler has judged the replay.
 * The unit's after-commit work runs once its writes are in.
 */
export function unitOfWork(options: UnitOfWorkOptions): Middleware {
  const { db, environment } = options;
  return async (ctx, next) => {
    const plan = options.planFor(ctx);
    if (!plan) return next();
    // The caller, for the model methods the library calls without a request (provider-internals.ts).
    const unit = new UnitOfWork(plan, { address: ctx.ip, dpopProof: ctx.get('DPoP') || undefined });
    oidcState(ctx).unit = unit;
    const fail = (error: unknown) => {
      if (!options.onFailure) throw error;
      options.onFailure(ctx, error);
    };
    const hint = options.hint?.(ctx);
    const ids = { interaction: plausible(hint?.interactionUid), session: plausible(hint?.sessionId) };
    // A failed read fails the request as the adapter's own read would have (503 while the database is down).
    try {
      if (ids.interaction || ids.session) unit.remember(ids, await readRequestState(db, environment, ids));
    } catch (error) {
      return fail(error);
    }

    let failure: unknown;
    try {
      await runInUnit(unit, next);
    } catch (error) {
      if (!plan.writesOnFailure) throw error;
      failure = error;
    }
    if (!plan.writesOnFailure && ctx.status !== 200) return;
    let written: boolean;
    try {
      written = await commitUnit(db, environment, unit);
    } catch (error) {
      return fail(failure ?? error);
    }
    if (failure !== undefined) return fail(failure);
    if (written) {
      for (const fn of unit.afterCommit) fn();
      return;
    }
    await answerLostRace(ctx as unknown as KoaContextWithOIDC, unit, options);
  };
}

/** A token request whose consume lost to another use of the same code or refresh token. */
async function answerLostRace(ctx: KoaContextWithOIDC, unit: UnitOfWork, options: UnitOfWorkOptions): Promise<void> {
  const { model, id } = unit.consume!;
  await consumeConflict(options, model, id);
  const clientId = ctx.oidc?.client?.clientId;
  // The provider gets this far only after client authentication and its check that the token
  // was issued to that client: the one refusal the refresh grace window may replace.
  if (model === 'RefreshToken' && clientId) oidcState(ctx).lostRefreshRaceClient = clientId;
  const error = alreadyUsed(model);
  // Announced as the library announces its own refusals (logs, metrics).
  ctx.oidc?.provider.emit('grant.error', ctx, error);
  sendOAuthError(ctx as unknown as Context, error);
}
