import type { Context } from 'koa';
import { codeOfStatus, type ErrorCode } from '../errors/codes.js';

/**
 * An RFC 9457 problem the error middleware renders as application/problem+json. It carries
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
  503: 'Service Unavailable',
};

function defaultDetail(status: number, title: string): string {
  if (status === 405) return 'This method is not allowed on this resource.';
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

/** Renders a problem as application/problem+json (the API hosts). */
export function sendProblem(ctx: Context, problem: HttpProblem): void {
  ctx.status = problem.status;
  for (const [name, value] of Object.entries(problem.headers)) ctx.set(name, value);
  ctx.type = 'application/problem+json';
  ctx.body = problem.toJSON();
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
export function sendOAuthProblem(ctx: Context, problem: HttpProblem, error = oauthErrorOf(problem.status)): void {
  ctx.status = problem.status;
  for (const [name, value] of Object.entries(problem.headers)) ctx.set(name, value);
  ctx.set('Cache-Control', 'no-store');
  ctx.type = 'application/json';
  ctx.body = { error, error_description: problem.detail ?? problem.title };
}
