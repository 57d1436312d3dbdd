import type { Context, Middleware } from 'koa';
import type { Environment } from '../../db/schema.js';
import { DomainError } from '../../errors/domain-error.js';
import { toProblem } from '../../http/error-handler.js';
import { HttpProblem, titleFor } from '../../http/problem.js';
import { sendPage } from '../../views/page.js';
import { CsrfRejected } from '../../http/csrf.js';

interface PageError {
  status: number;
  title: string;
  text: string;
  headers?: Record<string, string>;
}

const EXPIRED: PageError = {
  status: 400,
  title: 'This sign-in has expired',
  text: 'The sign-in page was open for too long, was already used, or was opened in another browser. Nothing was shared with the application. Go back to the application and start again.',
};
const FORGED: PageError = {
  status: 403,
  title: 'We could not accept this form',
  text: 'For your security, a form here only works when it is sent from the page we showed you. Nothing was changed. Go back, reload the page and try again.',
};
const NOT_FOUND: PageError = { status: 404, title: 'Page not found', text: 'There is nothing at this address. Check the link, or go back to the application that sent you here.' };

/** Browsers (Accept: text/html before JSON) get pages; API-style clients keep problem+json. */
export function wantsHtml(ctx: Context): boolean {
  return ctx.accepts('json', 'html') === 'html';
}

function isSessionNotFound(error: unknown): boolean {
  const e = error as { name?: string; error?: string };
  return e?.name === 'SessionNotFound' || e?.error === 'session_not_found';
}

/**
 * The page for an error: the flow's own (an expired sign-in, a forged form), else what the
 * one classification (toProblem) makes of it, in a person's words. Undefined: unexpected (500).
 */
function describe(error: unknown, log: Parameters<typeof toProblem>[1]): PageError | undefined {
  if (isSessionNotFound(error)) return EXPIRED;
  if (error instanceof CsrfRejected) return FORGED;
  const problem = toProblem(error, log);
  if (problem.status === 404) return { ...NOT_FOUND, text: error instanceof HttpProblem || error instanceof DomainError ? (problem.detail ?? NOT_FOUND.text) : NOT_FOUND.text };
  if (problem.status === 503) return { status: 503, title: 'Temporarily unavailable', text: 'We cannot reach our database right now. Nothing was changed. Wait a few seconds and try again.', headers: problem.headers };
  if (problem.status >= 500) return undefined;
  if (error instanceof HttpProblem || error instanceof DomainError) return { status: problem.status, title: problem.title, text: problem.detail ?? 'The request could not be processed.', headers: problem.headers };
  return { status: problem.status, title: 'This request could not be processed', text: 'Something in the request was not what we expected. Go back to the application and start again.' };
}

/**
 * The dashboard's pages answer failures with a page, specific to what went wrong (an expired
 * sign-in, a forged form, a missing page, an outage), always with the request id to quote.
 * Anything unexpected is logged and shown as a generic 500 page; nothing is ever redirected.
 */
export function htmlErrorPages(environment: Environment): Middleware {
  const render = (ctx: Context, page: PageError) => {
    for (const [name, value] of Object.entries(page.headers ?? {})) ctx.set(name, value);
    sendPage(ctx, environment, 'error.njk', { title: page.title, text: page.text, requestId: ctx.state.requestId }, { status: page.status });
  };
  return async (ctx, next) => {
    try {
      await next();
      // Bodiless answers of the routers (404, 405) become pages too.
      if (ctx.status >= 400 && ctx.body == null && ctx.respond !== false && wantsHtml(ctx)) {
        render(ctx, ctx.status === 404 ? NOT_FOUND : { status: ctx.status, title: titleFor(ctx.status), text: 'This address does not accept that kind of request. Go back and try again.' });
      }
    } catch (error) {
      if (!wantsHtml(ctx)) throw error;
      // toProblem logs what it cannot place (a 500) and the outages it sees.
      const page = describe(error, ctx.state.log);
      render(ctx, page ?? { status: 500, title: 'Something went wrong', text: 'An unexpected error stopped this page. Nothing was shared with the application. Try again in a moment.' });
    }
  };
}
