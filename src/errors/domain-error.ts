import type { ErrorCode } from './codes.js';

/** What a domain error may carry beside its code and message, for the layers that render it. */
export interface DomainErrorData {
  /** rate_limited, unavailable: when to try again (the HTTP layer sends it as Retry-After). */
  retryAfterSeconds?: number;
  /** Response headers that go with it over HTTP: WWW-Authenticate, Retry-After, Allow. */
  headers?: Readonly<Record<string, string>>;
  /** A heading in the reader's words (a page's title, the problem's `title`), when not the status's name. */
  title?: string;
  /** Members a problem document carries beside its own, e.g. RFC 6750's `error`, FDX's `code` and `message`. */
  extensions?: Readonly<Record<string, unknown>>;
  /** The problem `type` URI, when not about:blank. */
  type?: string;
  /** The problem leaves out the stable `code` member: a body whose members a specification fixes (docs/api.md, "Errors"). */
  withoutCode?: boolean;
}

/**
 * A business error with a stable code from the vocabulary (codes.ts). Services and
 * repositories throw these, never HTTP problems: src/http/error-handler.ts turns them into
 * problem documents, OAuth errors or pages (by surface), FDX's code mapping into FDX codes, the
 * admin CLI into `error (<code>): …`. The message is written as a clause for the CLI's line
 * (`an Admin cannot change or remove an Owner`); a page shows it as a sentence (`sentence`).
 */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly data: DomainErrorData = {},
  ) {
    super(message);
    this.name = 'DomainError';
  }

  /** The message as a page shows it: a capital first letter and a full stop. */
  get sentence(): string {
    const text = this.message.trim();
    return `${text.charAt(0).toUpperCase()}${text.slice(1)}${/[.!?]$/.test(text) ? '' : '.'}`;
  }
}

export const invalid = (message: string, data?: DomainErrorData) => new DomainError('invalid', message, data);
export const notFound = (message: string, data?: DomainErrorData) => new DomainError('not_found', message, data);
export const forbidden = (message: string, data?: DomainErrorData) => new DomainError('forbidden', message, data);
export const conflict = (message: string, data?: DomainErrorData) => new DomainError('conflict', message, data);
export const gone = (message: string, data?: DomainErrorData) => new DomainError('gone', message, data);
export const precondition = (message: string, data?: DomainErrorData) => new DomainError('precondition', message, data);
export const rateLimited = (message: string, retryAfterSeconds: number, data?: DomainErrorData) =>
  new DomainError('rate_limited', message, { ...data, retryAfterSeconds });
