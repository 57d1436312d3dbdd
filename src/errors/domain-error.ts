import type { ErrorCode } from './codes.js';

/** What a domain error may carry beside its code and message, for the layers that render it. */
export interface DomainErrorData {
  /** rate_limited, unavailable: when to try again (the HTTP layer sends it as Retry-After). */
  retryAfterSeconds?: number;
}

/**
 * A business error with a stable code from the vocabulary (codes.ts). Services and
 * repositories throw these, never HTTP problems: src/http/error-handler.ts turns them into
 * problem documents, FDX's code mapping into FDX codes, the admin CLI into `error (<code>): …`.
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
}

export const invalid = (message: string) => new DomainError('invalid', message);
export const notFound = (message: string) => new DomainError('not_found', message);
export const forbidden = (message: string) => new DomainError('forbidden', message);
export const conflict = (message: string) => new DomainError('conflict', message);
export const gone = (message: string) => new DomainError('gone', message);
export const precondition = (message: string) => new DomainError('precondition', message);
export const rateLimited = (message: string, retryAfterSeconds: number) => new DomainError('rate_limited', message, { retryAfterSeconds });
