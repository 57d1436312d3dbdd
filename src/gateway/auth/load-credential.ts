import type { Middleware } from 'koa';
import type { Db } from '../../db/database.js';
import { hashId } from '../../db/provider-store.js';
import { findAccessTokenContext, findClientTokenContext, findLiveApiKey } from './credential-repository.js';
import { apiKeyHash, isApiKeyShaped } from '../../api-keys/format.js';
import { environmentOf } from '../routing/environment.js';

/** Resolves the bearer value to an API key or an access token row (one query), not yet judged. */
export function loadCredential(db: Db): Middleware {
  return async (ctx, next) => {
    const bearer = ctx.state.bearer!;
    const environment = environmentOf(ctx);
    ctx.state.credential = isApiKeyShaped(bearer)
      ? { kind: 'api_key', presented: true, row: await findLiveApiKey(db, environment, apiKeyHash(bearer)) }
      : { kind: 'access_token', presented: true, row: await findAccessTokenContext(db, environment, hashId(bearer)) };
    await next();
  };
}

/** Resolves the bearer value to a client-credentials token and its client (the Consent API's credential), not yet judged. */
export function loadClientToken(db: Db): Middleware {
  return async (ctx, next) => {
    ctx.state.credential = {
      kind: 'client_credentials',
      presented: true,
      row: await findClientTokenContext(db, environmentOf(ctx), hashId(ctx.state.bearer!)),
    };
    await next();
  };
}
