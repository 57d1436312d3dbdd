import type { Middleware } from 'koa';
import type { KoaContextWithOIDC } from 'oidc-provider';
import { isDatabaseUnavailable } from '../../db/database.js';
import { alreadyUsed, consumeConflict, type AdapterOptions } from '../adapter.js';
import { API_ROUTES } from '../routes.js';
import { runInTokenUnit, TokenUnit } from '../token-unit.js';
import { writeTokenUnit } from '../token-unit-repository.js';
import { sendOAuthError } from './oauth-errors.js';
import { sendOAuthProblem, unavailable } from '../../http/problem.js';

/**
 * Token endpoint: runs the provider inside a TokenUnit (see token-unit.ts) and, when it built a
 * successful response, writes the unit in one statement before the response leaves. A request
 * that lost the race to consume its code or refresh token wrote nothing; it is answered as the
 * provider answers a used one (invalid_grant), after the conflict handler has judged the replay.
 * A failed request (any status but 200) writes nothing: its tokens were never handed out.
 * Introspection runs in a unit too, for the single read (it writes nothing).
 */
/**
 * Requests whose refresh lost the race to consume its token, with the client the provider
 * authenticated for them. The provider gets that far only after client authentication and
 * its check that the token was issued to that client, so this is the one answer the refresh
 * grace window may replace with the stored successor (refresh-grace.ts).
 */
const lostRefreshRaces = new WeakMap<object, string>();

/** The authenticated client whose refresh token was consumed under it, if this request is one. */
export function lostRefreshRaceClient(ctx: object): string | undefined {
  return lostRefreshRaces.get(ctx);
}

export function tokenUnit(options: AdapterOptions): Middleware {
  return async (ctx, next) => {
    if (ctx.method !== 'POST' || (ctx.path !== API_ROUTES.token && ctx.path !== API_ROUTES.introspection)) return next();
    const unit = new TokenUnit();
    await runInTokenUnit(unit, next);
    if (ctx.status !== 200) return;
    if (!unit.hasWrites) return committed(unit);
    let written: boolean;
    try {
      written = await writeTokenUnit(options.db, options.environment, unit);
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      sendOAuthProblem(ctx, unavailable());
      return;
    }
    if (written) return committed(unit);
    const model = unit.consume!.model;
    await consumeConflict(options, model, unit.consume!.id);
    const clientId = (ctx as unknown as KoaContextWithOIDC).oidc?.client?.clientId;
    if (model === 'RefreshToken' && clientId) lostRefreshRaces.set(ctx, clientId);
    const error = alreadyUsed(model);
    // Announced as the library announces its own refusals (logs, metrics).
    (ctx as unknown as KoaContextWithOIDC).oidc?.provider.emit('grant.error', ctx, error);
    sendOAuthError(ctx, error);
  };
}

function committed(unit: TokenUnit): void {
  for (const fn of unit.afterCommit) fn();
}
