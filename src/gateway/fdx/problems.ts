import { codeOfStatus } from '../../errors/codes.js';
import { DomainError } from '../../errors/domain-error.js';
import { restated, type HttpProblem } from '../../http/problem.js';

/**
 * FDX error codes (docs/api.md, "FDX bank-data API", Errors). FDX clients act on `code`, so every
 * FDX problem carries it with FDX's short `message`, beside the RFC 9457 members: FDX's numeric
 * code takes the place of the stable string code the other APIs send (src/errors/codes.ts).
 * Exceptions, by the same section: 401 and the scope 403 carry no code, and the IP-restriction 403
 * stays exactly {type, title, status, detail}. A consent's refusal of a data cluster is FDX's 602
 * (403), so a client can tell it from the scope 403 (section "Consents").
 */
export const FDX_CODES = {
  701: { status: 404, message: 'Account not found' },
  702: { status: 400, message: 'Invalid start or end date' },
  703: { status: 400, message: 'Invalid date range' },
  705: { status: 409, message: 'Account is closed' },
  1104: { status: 404, message: 'Statement id not found for account' },
  1203: { status: 406, message: 'Content type not supported' },
  601: { status: 404, message: 'Customer not found' },
  602: { status: 403, message: 'Customer not authorized' },
  500: { status: 500, message: 'Internal server error' },
  503: { status: 503, message: 'Scheduled maintenance' },
} as const;
export type FdxCode = keyof typeof FDX_CODES;

/** An FDX error: the domain code of its status, FDX's numeric `code` and `message` in place of the stable code. */
export function fdxProblem(code: FdxCode, detail: string, headers: Record<string, string> = {}): DomainError {
  const { status, message } = FDX_CODES[code];
  return new DomainError(codeOfStatus(status), detail, { withoutCode: true, extensions: { code, message }, headers });
}

export const accountNotFound = () => fdxProblem(701, 'No account with this id is available to this authorization.');
export const statementNotFound = () => fdxProblem(1104, 'The account has no statement with this id.');
export const customerNotFound = () => fdxProblem(601, 'The customer of this authorization no longer exists.');
export const clusterNotConsented = (clusters: readonly string[]) =>
  fdxProblem(602, `The consent of this authorization does not include ${clusters.join(' or ')}, which this operation serves.`);
export const noConsent = () =>
  fdxProblem(
    602,
    'This authorization holds no FDX consent: a bank-data (fapi2) client reads FDX data only under the consent it asked for with authorization_details.',
  );
export const invalidDateRange = (detail: string) => fdxProblem(703, detail);

/**
 * Gives a problem raised elsewhere (a malformed pageKey, an unknown path, a 500) an FDX
 * `code`: the FDX core code where one exists, otherwise the HTTP status itself, as FDX's own
 * 500 and 503 do. Credential problems (401, 403) keep their members but get no code.
 */
export function withFdxCode(problem: HttpProblem): HttpProblem {
  if ('code' in problem.extensions) return problem;
  const credential = problem.status === 401 || problem.status === 403;
  if (credential && problem.code === undefined) return problem;
  const known = FDX_CODES[problem.status as FdxCode];
  const message = known && known.status === problem.status ? known.message : problem.title;
  return restated(problem, credential ? problem.extensions : { ...problem.extensions, code: problem.status, message });
}
