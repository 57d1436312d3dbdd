import type { Context, Middleware } from 'koa';
import type { ErrorOut, KoaContextWithOIDC } from 'oidc-provider';
import { isDatabaseUnavailable, isUnrepresentableInput } from '../db/database.js';
import { DomainError } from '../errors/domain-error.js';
import { CLIENT_CLOSED_REQUEST, isClientAbort } from './client-abort.js';
import {
  HttpProblem,
  oauthErrorPage,
  pageOf,
  problemOf,
  sendErrorPage,
  sendProblem,
  titleFor,
  unansweredPage,
  unansweredProblem,
  unavailable,
  type PageRenderer,
} from './problem.js';

/**
 * The one place errors become responses, by surface (docs/layout.md, "Errors"): each thrown
 * error maps to one problem (toProblem), which the API hosts render as RFC 9457 problem+json
 * with the stable `code` of src/errors/codes.ts (errorHandler) and the hosted pages as a page
 * (htmlErrorPages); the provider's endpoints render OAuth errors (sendOAuthProblem).
 */
export function errorHandler(): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      throwIfUnanswered(ctx);
    } catch (error) {
      answerError(ctx, error);
    }
  };
}

/**
 * What errorHandler does after the rest of the request, inside its `try`: a route nobody
 * answered, and bodiless error statuses set by routers (405, 501), become problems too.
 */
export function throwIfUnanswered(ctx: Context): void {
  const unanswered = unansweredProblem(ctx);
  if (unanswered) throw unanswered;
}

/** What errorHandler does with what the request threw (the main app's requestFrame calls both directly). */
export function answerError(ctx: Context, error: unknown): void {
  if (isClientAbort(error, ctx.req)) return callerLeft(ctx, error);
  sendProblem(ctx, toProblem(error, ctx.state.log));
}

/**
 * The caller hung up while its request was read or served: nothing to answer, no failure of
 * ours (docs/operations.md, "HTTP conventions"). A debug line without a stack; the access log and the
 * metrics record 499.
 */
function callerLeft(ctx: Context, error: unknown): void {
  ctx.state.log?.debug({ reason: (error as Error).message }, 'client closed the request');
  ctx.status = CLIENT_CLOSED_REQUEST;
}

/**
 * What a thrown error is as a problem. Known problems pass through; a DomainError gets the
 * status of its code; Koa/http-errors keep their status; an unreachable database is a 503 the
 * client may retry; anything else is a logged 500 that reveals nothing but the request id.
 */
export function toProblem(
  error: unknown,
  log: { error: (o: object, m: string) => void; warn: (o: object, m: string) => void } | undefined,
): HttpProblem {
  if (error instanceof HttpProblem) return error;
  if (error instanceof DomainError) return problemOf(error);
  if (isDatabaseUnavailable(error)) {
    log?.warn({ err: error }, 'database unavailable');
    return unavailable();
  }
  if (isUnrepresentableInput(error)) return new HttpProblem(400, 'Bad Request', 'The request contains a value this service cannot accept.');
  const status = (error as { status?: unknown; statusCode?: unknown })?.status ?? (error as { statusCode?: unknown })?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const expose = (error as { expose?: boolean }).expose;
    const message = (error as Error).message;
    return new HttpProblem(status, titleFor(status), expose && message ? message : undefined);
  }
  log?.error({ err: error }, 'unhandled error');
  return new HttpProblem(500, 'Internal Server Error', 'An unexpected error occurred; quote the X-Request-Id header when reporting it.');
}

/** Browsers (Accept: text/html before JSON) get pages; API-style clients keep problem+json. */
function wantsHtml(ctx: Context): boolean {
  return ctx.accepts('json', 'html') === 'html';
}

/**
 * The hosted pages answer failures with a page, specific to what went wrong (an expired
 * sign-in, a forged form, a missing page, an outage), laid out by `render`. Anything unexpected
 * is logged (by toProblem) and shown as a generic 500 page; nothing is ever redirected.
 * Clients that prefer JSON get the problem, from the error handler further out.
 */
export function htmlErrorPages(render: PageRenderer<Context>): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      // Bodiless answers of the routers (404, 405) become pages too.
      if (ctx.status >= 400 && ctx.body == null && ctx.respond !== false && wantsHtml(ctx))
        sendErrorPage(ctx, unansweredPage(ctx.status), render);
    } catch (error) {
      if (!wantsHtml(ctx)) throw error;
      if (isClientAbort(error, ctx.req)) return callerLeft(ctx, error);
      sendErrorPage(ctx, pageOf(error, toProblem(error, ctx.state.log)), render);
    }
  };
}

/**
 * The provider's renderError: authorization errors that cannot go back to the client are a
 * page, never a redirect (docs/oauth.md), with the request id to quote.
 */
export function providerErrorPage(render: PageRenderer<KoaContextWithOIDC>) {
  return async function renderError(ctx: KoaContextWithOIDC, out: ErrorOut, error: Error): Promise<void> {
    sendErrorPage(
      ctx,
      oauthErrorPage((error as { statusCode?: number }).statusCode ?? ctx.status, out.error, out.error_description, ctx.oidc?.route),
      render,
    );
  };
}
