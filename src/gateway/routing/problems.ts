import { DomainError, notFound } from '../../errors/domain-error.js';

/**
 * The gateway's errors, each with the status, headers and members docs/api.md, "Errors" names;
 * src/http/ renders them as problem documents.
 */

const REALM = 'Bearer realm="almoner"';

export function unauthorized(detail: string, tokenPresented: boolean): DomainError {
  return new DomainError('unauthenticated', detail, {
    headers: { 'WWW-Authenticate': tokenPresented ? `${REALM}, error="invalid_token"` : REALM },
  });
}

export function insufficientScope(needed: string, detail = `This operation needs the ${needed} scope.`): DomainError {
  return new DomainError('forbidden', detail, {
    headers: { 'WWW-Authenticate': `${REALM}, error="insufficient_scope", scope="${needed}"` },
    extensions: { error: 'insufficient_scope' },
  });
}

/** The IP allow-list denial: exactly four members, no `code` (docs/api.md, "Errors"). */
export function outsideAllowList(): DomainError {
  return new DomainError('forbidden', 'The caller address is outside the CIDR ranges registered for this client.', { withoutCode: true });
}

export function resourceNotFound(what: string): DomainError {
  return notFound(`${what} was not found.`);
}
