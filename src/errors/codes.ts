/**
 * The error vocabulary: one stable code per kind of failure, shared by services (DomainError),
 * the HTTP layer (the `code` member of every problem document) and the admin CLI
 * (`error (<code>): …` on stderr). Clients act on the code, not on the wording of `detail`.
 *
 * | code                     | HTTP | meaning                                                          |
 * |--------------------------|------|------------------------------------------------------------------|
 * | `invalid`                | 400  | the request or a value in it is malformed or not acceptable      |
 * | `unauthenticated`        | 401  | no credential, or one that is unknown, expired or revoked        |
 * | `forbidden`              | 403  | the caller is known but may not do this (scope, role, address)   |
 * | `not_found`              | 404  | no such resource (or none this caller may see), or no such route |
 * | `method_not_allowed`     | 405  | the resource exists but not with this method                     |
 * | `not_acceptable`         | 406  | no representation in a media type the caller accepts            |
 * | `conflict`               | 409  | the resource already exists or its state forbids the change     |
 * | `gone`                   | 410  | the resource existed and is no longer available                  |
 * | `precondition`           | 412  | a precondition of the operation does not hold yet               |
 * | `too_large`              | 413  | the request body is larger than accepted                         |
 * | `unsupported_media_type` | 415  | the request body is not in a media type this operation takes    |
 * | `misdirected`            | 421  | this server does not serve the requested host                    |
 * | `unprocessable`          | 422  | well-formed, but its content cannot be processed                 |
 * | `rate_limited`           | 429  | too many attempts; retry after `Retry-After` seconds             |
 * | `internal`               | 500  | an unexpected error; quote the request id when reporting it      |
 * | `not_implemented`        | 501  | a method this server implements on no resource (e.g. PROPFIND)   |
 * | `unavailable`            | 503  | temporarily unavailable (e.g. the database); retry shortly       |
 *
 * A problem built from a status outside the table gets `invalid` (4xx) or `internal` (5xx).
 */
export const ERROR_CODES = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  not_acceptable: 406,
  conflict: 409,
  gone: 410,
  precondition: 412,
  too_large: 413,
  unsupported_media_type: 415,
  misdirected: 421,
  unprocessable: 422,
  rate_limited: 429,
  internal: 500,
  not_implemented: 501,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export const ERROR_CODE_NAMES = Object.keys(ERROR_CODES) as ErrorCode[];

const BY_STATUS = new Map<number, ErrorCode>(ERROR_CODE_NAMES.map((code) => [ERROR_CODES[code], code]));

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_CODES, value);
}

/** The HTTP status of a code. */
export function statusOfCode(code: ErrorCode): number {
  return ERROR_CODES[code];
}

/** The code of an HTTP error status: its own, else `invalid` for a 4xx and `internal` for a 5xx. */
export function codeOfStatus(status: number): ErrorCode {
  return BY_STATUS.get(status) ?? (status >= 500 ? 'internal' : 'invalid');
}
