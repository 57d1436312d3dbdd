import type { Context, Middleware } from 'koa';
import type Provider from 'oidc-provider';
import type { Db } from '../../db/database.js';
import { inTransaction } from '../../db/executor.js';
import { hashId, writeModels } from '../../db/provider-store.js';
import type { Environment } from '../../db/schema.js';
import { readRequestState } from '../request-state-repository.js';
import { RequestUnit, runInRequestUnit } from '../request-unit.js';

/** What a request names in its URL and cookie: the Interaction's uid, the session cookie's value. */
export interface RequestStateHint {
  interactionUid?: string;
  sessionId?: string;
}

export interface RequestUnitOptions {
  /** Which requests are units (all by default). */
  applies?: (ctx: Context) => boolean;
  /** The rows to read first, in one statement; the unit remembers them. */
  firstRead?: { environment: Environment; hint: (ctx: Context) => RequestStateHint | undefined };
}

/** Provider ids (nanoid) and session cookie values; anything else is not looked up. */
const PLAUSIBLE_ID = /^[\w-]{1,128}$/;
const plausible = (value: string | undefined): string | null => (value !== undefined && PLAUSIBLE_ID.test(value) ? hashId(value) : null);

/**
 * Runs a browser request of the authorization flow in a RequestUnit (request-unit.ts), which
 * starts with one read of the rows its URL and cookie name (`firstRead`), and
 * writes the provider rows it saved and deleted in one statement (with the request's other
 * writes, writeWithRequest, in one transaction) before the response leaves.
 * The writes are made whatever the outcome, as the adapter's own calls would have been; a
 * failure to write fails the request (its error handler answers it: 503 while the database
 * is down), unless the request failed already, whose error then stands.
 */
export function requestUnit(db: Db, options: RequestUnitOptions = {}): Middleware {
  const { applies = () => true, firstRead } = options;
  return async (ctx, next) => {
    if (!applies(ctx)) return next();
    const unit = new RequestUnit();
    const hint = firstRead?.hint(ctx);
    const ids = { interaction: plausible(hint?.interactionUid), session: plausible(hint?.sessionId) };
    // A failed read fails the request as the adapter's own read would have (503 while the database is down).
    if (ids.interaction || ids.session) unit.remember(ids, await readRequestState(db, firstRead!.environment, ids));
    let failure: unknown;
    try {
      await runInRequestUnit(unit, next);
    } catch (error) {
      failure = error;
    }
    unit.closed = true;
    try {
      const writes = unit.take();
      if (unit.together.length === 0) await writeModels(db, writes);
      else {
        await inTransaction(db, async (trx) => {
          await writeModels(trx, writes);
          for (const work of unit.together) await work(trx);
        });
      }
    } catch (error) {
      throw failure ?? error;
    }
    if (failure !== undefined) throw failure;
  };
}

/**
 * For provider.use(): a write that fails after the provider answered is reported as the
 * provider reports its own storage failures (server_error, which databaseOutage turns into a
 * 503 while the database is down), not left to Koa's plain-text 500.
 */
export function asProviderFailure(provider: Provider, middleware: Middleware): Middleware {
  return async (ctx, next) => {
    try {
      await middleware(ctx, next);
    } catch (error) {
      (provider as unknown as NodeJS.EventEmitter).emit('server_error', ctx, error);
      ctx.status = 500;
      ctx.type = 'application/json';
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { error: 'server_error', error_description: 'oops! something went wrong' };
    }
  };
}
