import { HttpProblem } from '../http/problem.js';

/** The gateway's problem documents (RFC 9457), each with the status and headers docs/api.md, "Errors" names. */

const REALM = 'Bearer realm="almoner"';

export function unauthorized(detail: string, tokenPresented: boolean): HttpProblem {
  return new HttpProblem(401, 'Unauthorized', detail, {
    headers: { 'WWW-Authenticate': tokenPresented ? `${REALM}, error="invalid_token"` : REALM },
  });
}

export function insufficientScope(needed: string, detail = `This operation needs the ${needed} scope.`): HttpProblem {
  return new HttpProblem(403, 'Forbidden', detail, {
    headers: { 'WWW-Authenticate': `${REALM}, error="insufficient_scope", scope="${needed}"` },
    extensions: { error: 'insufficient_scope' },
  });
}

/** The IP allow-list denial: exactly four members, no `code` (docs/api.md, "Errors"). */
export function outsideAllowList(): HttpProblem {
  return new HttpProblem(403, 'Forbidden', 'The caller address is outside the CIDR ranges registered for this client.', { code: null });
}

export function resourceNotFound(what: string): HttpProblem {
  return new HttpProblem(404, 'Not Found', `${what} was not found.`);
}

export function badRequest(detail: string): HttpProblem {
  return new HttpProblem(400, 'Bad Request', detail);
}
