import type { Middleware } from 'koa';
import { isDatabaseUnavailable, isUnrepresentableInput } from '../db/database.js';
import { statusOfCode } from '../errors/codes.js';
import { DomainError } from '../errors/domain-error.js';
import { HttpProblem, sendProblem, titleFor, unavailable } from './problem.js';

/**
 * The one place errors become responses: RFC 9457 problem documents, each with the stable
 * `code` of src/errors/codes.ts. Known problems pass through; a service's DomainError gets the
 * status of its code; Koa/http-errors keep their status; an unreachable database is a 503 the
 * client may retry; anything else is a logged 500 that reveals nothing but the request id.
 */
export function errorHandler(): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body == null) {
        throw new HttpProblem(404, 'Not Found', `No resource at ${ctx.method} ${ctx.path}.`);
      }
      // Bodiless error statuses set by routers (405, 501) become problems too.
      if (ctx.status >= 400 && ctx.body == null) throw new HttpProblem(ctx.status, titleFor(ctx.status));
    } catch (error) {
      sendProblem(ctx, toProblem(error, ctx.state.log));
    }
  };
}

export function toProblem(error: unknown, log: { error: (o: object, m: string) => void; warn: (o: object, m: string) => void } | undefined): HttpProblem {
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

/** A domain error as a problem: the status of its code, its message as the detail, Retry-After when it says when. */
export function problemOf(error: DomainError): HttpProblem {
  const status = statusOfCode(error.code);
  const { retryAfterSeconds } = error.data;
  return new HttpProblem(status, titleFor(status), error.message, {
    code: error.code,
    headers: retryAfterSeconds === undefined ? {} : { 'Retry-After': String(retryAfterSeconds) },
  });
}
