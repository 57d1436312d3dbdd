import type { Context } from 'koa';
import { codeOfStatus, statusOfCode, type ErrorCode } from '../errors/codes.js';
import { DomainError } from '../errors/domain-error.js';

/*
 * The one error module (docs/layout.md, "Errors"): code throws DomainError; src/http/ maps it
 * (and anything else thrown) to an HttpProblem, and renders that in the format of the surface
 * that answers: problem+json (the APIs), an OAuth error (the provider's endpoints), a page (the
 * hosted pages). Every error body is built here.
 */

/**
 * An RFC 9457 problem: what every thrown error maps to, rendered by the renderer of the surface
 * that answers (problem+json, an OAuth error, a page; below). It carries
 * the stable `code` of the error vocabulary (src/errors/codes.ts) as an extension member: the
 * code of its status unless given; `code: null` leaves it out (a body whose members a
 * specification fixes, or FDX's own numeric `code`).
 */
export class HttpProblem extends Error {
  readonly status: number;
  readonly code: ErrorCode | undefined;
  readonly title: string;
  readonly detail: string | undefined;
  readonly type: string;
  readonly extensions: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    title: string,
    detail?: string,
    options: { type?: string; code?: ErrorCode | null; extensions?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(detail ?? title);
    this.name = 'HttpProblem';
    this.status = status;
    this.code = options.code === null ? undefined : (options.code ?? codeOfStatus(status));
    this.title = title;
    this.detail = detail;
    this.type = options.type ?? 'about:blank';
    this.extensions = options.extensions ?? {};
    this.headers = options.headers ?? {};
  }

  toJSON(): Record<string, unknown> {
    return {
      type: this.type,
      title: this.title,
      status: this.status,
      // detail is always present: the published ProblemDetails schema requires it.
      detail: this.detail ?? defaultDetail(this.status, this.title),
      ...(this.code ? { code: this.code } : {}),
      ...this.extensions,
    };
  }
}

export const STATUS_TITLES: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  410: 'Gone',
  412: 'Precondition Failed',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  421: 'Misdirected Request',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
};

function defaultDetail(status: number, title: string): string {
  if (status === 405) return 'This method is not allowed on this resource.';
  if (status === 501) return 'This method is not implemented by any resource here.';
  return `${title}.`;
}

export function titleFor(status: number): string {
  return STATUS_TITLES[status] ?? (status >= 500 ? 'Server Error' : 'Request Error');
}

/**
 * "Try again shortly": an unreachable database, a server still starting. Every surface's 503
 * is this one problem, rendered in the surface's format (problem+json, an OAuth error, a page).
 */
export function unavailable(detail = 'The service is temporarily unavailable; retry shortly.', retryAfterSeconds = 5): HttpProblem {
  return new HttpProblem(503, 'Service Unavailable', detail, { headers: { 'Retry-After': String(retryAfterSeconds) } });
}

/**
 * A domain error as a problem: the status of its code, its message as the detail, its title,
 * type, extension members and headers when it has them, Retry-After when it says when.
 */
export function problemOf(error: DomainError): HttpProblem {
  const status = statusOfCode(error.code);
  const { retryAfterSeconds, headers, title, extensions, type, withoutCode } = error.data;
  return new HttpProblem(status, title ?? titleFor(status), error.message, {
    code: withoutCode ? null : error.code,
    type,
    extensions: { ...extensions },
    headers: { ...(retryAfterSeconds === undefined ? {} : { 'Retry-After': String(retryAfterSeconds) }), ...headers },
  });
}

/** A DomainError as its problem; a problem as it is. */
function asProblem(error: HttpProblem | DomainError): HttpProblem {
  return error instanceof DomainError ? problemOf(error) : error;
}

/**
 * A problem restated with other extension members and without the stable `code`: how an API
 * whose specification fixes its error body (FDX's numeric `code`, docs/api.md) sends a problem
 * raised elsewhere.
 */
export function restated(problem: HttpProblem, extensions: Record<string, unknown>): HttpProblem {
  return new HttpProblem(problem.status, problem.title, problem.detail, {
    type: problem.type,
    code: null,
    headers: problem.headers,
    extensions,
  });
}

/**
 * The problem of a request that no route answered (a 404 naming what was looked for) or that a
 * router answered with a bare error status (405, 501); undefined when it has a body.
 */
export function unansweredProblem(ctx: Context, what = 'resource'): HttpProblem | undefined {
  if (ctx.body != null) return undefined;
  if (ctx.status === 404) return new HttpProblem(404, 'Not Found', `No ${what} at ${ctx.method} ${ctx.path}.`);
  if (ctx.status >= 400) return new HttpProblem(ctx.status, titleFor(ctx.status));
  return undefined;
}

/** Renders a problem as application/problem+json (the API hosts). */
export function sendProblem(ctx: Context, error: HttpProblem | DomainError): void {
  const problem = asProblem(error);
  ctx.status = problem.status;
  for (const [name, value] of Object.entries(problem.headers)) ctx.set(name, value);
  ctx.type = 'application/problem+json';
  ctx.body = problem.toJSON();
}

/** An error of the OAuth vocabulary as the problem sendOAuthProblem renders: its status, its description as the detail, its headers. */
export function oauthProblem(status: number, description: string | undefined, headers: Record<string, string> = {}): HttpProblem {
  return new HttpProblem(status, titleFor(status), description, { headers });
}

/** The RFC 6749 (section 5.2) / RFC 6750 error code of a problem that has no OAuth code of its own. */
function oauthErrorOf(status: number): string {
  if (status === 503) return 'temporarily_unavailable';
  if (status >= 500) return 'server_error';
  return 'invalid_request';
}

/**
 * Renders a problem as an OAuth error body, `{error, error_description}` (the provider's
 * endpoints): with the OAuth `error` code given, or the one its status implies.
 */
export function sendOAuthProblem(ctx: Context, thrown: HttpProblem | DomainError, error = oauthErrorOf(asProblem(thrown).status)): void {
  const problem = asProblem(thrown);
  ctx.status = problem.status;
  for (const [name, value] of Object.entries(problem.headers)) ctx.set(name, value);
  ctx.set('Cache-Control', 'no-store');
  ctx.type = 'application/json';
  ctx.body = { error, error_description: problem.detail ?? problem.title };
}

/** Renders a problem as problem+json on node's own response, where there is no Koa app yet (a server starting). */
export function writeProblem(
  res: { writeHead(status: number, headers: Record<string, string>): unknown; end(body: string): unknown },
  problem: HttpProblem,
): void {
  res.writeHead(problem.status, { 'content-type': 'application/problem+json', 'cache-control': 'no-store', ...problem.headers });
  res.end(JSON.stringify(problem.toJSON()));
}

/** What an error page says; the surface's page function lays it out (http/ knows no template). */
export interface ErrorPage {
  status: number;
  title: string;
  text: string;
  /** The OAuth error's description, which the provider's error page shows. */
  description?: string;
  /** Where to go instead (the 421 page: this server's own URLs). */
  links?: readonly { href: string; label: string }[];
  headers?: Readonly<Record<string, string>>;
}

/** Lays out an error page in the surface's own template (src/views/): given by the caller. */
export type PageRenderer<C> = (ctx: C, page: ErrorPage) => void;

/** Renders an error page (the hosted pages): its headers, then the surface's layout. */
export function sendErrorPage<C extends { set(field: string, value: string): void }>(
  ctx: C,
  page: ErrorPage,
  render: PageRenderer<C>,
): void {
  for (const [name, value] of Object.entries(page.headers ?? {})) ctx.set(name, value);
  render(ctx, page);
}

const EXPIRED_PAGE: ErrorPage = {
  status: 400,
  title: 'This sign-in has expired',
  text: 'The sign-in page was open for too long, was already used, or was opened in another browser. Nothing was shared with the application. Go back to the application and start again.',
};
const FORGED_PAGE: ErrorPage = {
  status: 403,
  title: 'We could not accept this form',
  text: 'For your security, a form here only works when it is sent from the page we showed you. Nothing was changed. Go back, reload the page and try again.',
};
const NOT_FOUND_PAGE: ErrorPage = {
  status: 404,
  title: 'Page not found',
  text: 'There is nothing at this address. Check the link, or go back to the application that sent you here.',
};
const UNEXPECTED_PAGE: ErrorPage = {
  status: 500,
  title: 'Something went wrong',
  text: 'An unexpected error stopped this page. Nothing was shared with the application. Try again in a moment.',
};

/** The type of the problem a forged form (http/csrf.ts) is. */
export const CSRF_PROBLEM_TYPE = 'https://almoner.dev/problems/csrf';

function isSessionNotFound(error: unknown): boolean {
  const e = error as { name?: string; error?: string };
  return e?.name === 'SessionNotFound' || e?.error === 'session_not_found';
}

/**
 * The page for an error the hosted pages raised, given the problem it maps to: the flow's own
 * (an expired sign-in, a forged form), else the problem in a person's words. What we threw on
 * purpose (a problem, a domain error) says its own detail; anything else says nothing of itself.
 */
export function pageOf(error: unknown, problem: HttpProblem): ErrorPage {
  if (isSessionNotFound(error)) return EXPIRED_PAGE;
  if (problem.type === CSRF_PROBLEM_TYPE) return FORGED_PAGE;
  const ours = error instanceof HttpProblem || error instanceof DomainError;
  if (problem.status === 404) return { ...NOT_FOUND_PAGE, text: ours ? (problem.detail ?? NOT_FOUND_PAGE.text) : NOT_FOUND_PAGE.text };
  if (problem.status === 503)
    return {
      status: 503,
      title: 'Temporarily unavailable',
      text: 'We cannot reach our database right now. Nothing was changed. Wait a few seconds and try again.',
      headers: problem.headers,
    };
  if (problem.status >= 500) return UNEXPECTED_PAGE;
  if (ours)
    return {
      status: problem.status,
      title: problem.title,
      text: problem.detail ?? 'The request could not be processed.',
      headers: problem.headers,
    };
  return {
    status: problem.status,
    title: 'This request could not be processed',
    text: 'Something in the request was not what we expected. Go back to the application and start again.',
  };
}

/** The page for a bare error status of a router (404, 405). */
export function unansweredPage(status: number): ErrorPage {
  if (status === 404) return NOT_FOUND_PAGE;
  return { status, title: titleFor(status), text: 'This address does not accept that kind of request. Go back and try again.' };
}

const OAUTH_PAGES: Record<string, { title: string; text: string }> = {
  invalid_client: {
    title: 'Unknown application',
    text: 'The application that sent you here is not registered with us. Go back to it and try again, or contact its developer.',
  },
  invalid_redirect_uri: {
    title: 'Unexpected return address',
    text: 'The application asked us to send you back to an address it has not registered, so we stopped here to keep your account safe.',
  },
  invalid_request: { title: 'Incomplete request', text: 'The application sent an incomplete or malformed sign-in request.' },
  invalid_request_uri: {
    title: 'This sign-in request cannot be used here',
    text: "An application's sign-in request is opened in one browser and used once, for a short time. Nothing was shared with the application. Go back to it and start again.",
  },
  session_not_found: {
    title: 'This sign-in has expired',
    text: 'Your sign-in session has expired or was opened in another browser. Go back to the application and start again.',
  },
};

/**
 * The end-session endpoint's refusals (docs/oauth.md, "Signing out from an application"): an
 * unregistered return address, a hint of another application, a form that was not ours. The
 * description says which; the page says that nothing happened and nobody was sent anywhere.
 */
const SIGN_OUT_PAGES: Record<string, { title: string; text: string }> = {
  invalid_client: {
    title: 'Unknown application',
    text: 'The sign-out request names an application that is not registered with us, so we stopped here. Nothing was changed.',
  },
  invalid_request: {
    title: 'We could not sign you out here',
    text: 'The application sent a sign-out request we cannot accept, so we stopped here and did not send you anywhere. Nothing was changed. Go back to the application, or sign out from the dashboard.',
  },
};

/**
 * The page for an OAuth error that cannot go back to the client (docs/oauth.md): its code in a
 * person's words, those of signing out on the provider's end-session routes.
 */
export function oauthErrorPage(status: number, error: string, description: string | undefined, route?: string): ErrorPage {
  const signOut = route?.startsWith('end_session') ? SIGN_OUT_PAGES[error] : undefined;
  const words = signOut ?? OAUTH_PAGES[error] ?? { title: 'Something went wrong', text: 'We could not complete this request.' };
  return { status, ...words, description };
}
