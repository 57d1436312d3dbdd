import { errors, type KoaContextWithOIDC } from 'oidc-provider';
import {
  FDX_AUTHORIZATION_DETAILS_TYPE,
  InvalidAuthorizationDetails,
  parseFdxAuthorizationDetails,
  type FdxConsentRequest,
} from '../authorizations/fdx-consent-request.js';
import { isFapi2Client } from './client-metadata.js';
import { FDX_SCOPES } from '../accounts/scopes.js';

/**
 * FDX consent requests through RFC 9396 authorization_details (docs/bank-data.md, "Consents").
 * A fapi2 client pushes one `fdx_v1.0` detail with its consentRequest; it is validated as an
 * authorization parameter (at the push, so a bad one never reaches the user). The consent screen
 * turns the approver's choice into a consent record and keeps on the Grant the detail that names
 * it (consentId); the token endpoint and introspection answer with that detail.
 *
 * The library's richAuthorizationRequests feature is not used: it needs resourceIndicators, which
 * would give access tokens audiences UserInfo then refuses (the tokens here stay opaque and serve
 * both); one type, validated here and answered by our middleware, needs none of it.
 */

/** The detail the Grant keeps: the request as pushed, with the consent's id. */
export interface GrantedFdxDetail {
  type: typeof FDX_AUTHORIZATION_DETAILS_TYPE;
  consentId: string;
  consentRequest: FdxConsentRequest;
  /** When the consent ends (epoch seconds): no refresh token of it lives longer. Kept on the Grant, never sent. */
  consentEnds?: number;
}

/** The detail as a token response carries it (RFC 9396): the request and the consent's id. */
export function publishedFdxDetail(detail: GrantedFdxDetail): Omit<GrantedFdxDetail, 'consentEnds'> {
  return { type: detail.type, consentId: detail.consentId, consentRequest: detail.consentRequest };
}

/** The FDX consent request of an authorization request or interaction's parameters, if any. */
export function fdxConsentRequestOf(params: Record<string, unknown>): FdxConsentRequest | undefined {
  const raw = params.authorization_details;
  if (typeof raw !== 'string' || raw === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new InvalidAuthorizationDetails('authorization_details: must be JSON (a list with one fdx_v1.0 detail)');
  }
  return parseFdxAuthorizationDetails(value);
}

/** The FDX scopes an authorization request asks for. */
function requestedFdxScopes(ctx: KoaContextWithOIDC): string[] {
  const scopes = String(ctx.oidc.params?.scope ?? '').split(' ');
  return FDX_SCOPES.filter((s) => scopes.includes(s));
}

/**
 * extraParams validator: only fapi2 clients send authorization_details, and only valid FDX ones;
 * a fapi2 client asking for bank data must send one, so that every bank-data authorization has
 * a consent record (docs/bank-data.md, "Consents"). It runs at the push, so the refusal reaches
 * the client and never the user.
 */
export function validateAuthorizationDetails(ctx: KoaContextWithOIDC, value: string | undefined): void {
  const fapi2 = isFapi2Client(ctx.oidc.client);
  if (value === undefined || value === '') {
    const fdx = requestedFdxScopes(ctx);
    if (fapi2 && fdx.length > 0)
      throw new errors.InvalidRequest(
        `missing required parameter 'authorization_details': a bank-data (fapi2) client asking for ${fdx.join(' ')} must send one fdx_v1.0 detail with its consentRequest`,
      );
    return;
  }
  if (!fapi2) throw new errors.InvalidRequest('authorization_details are for bank-data (fapi2) clients');
  try {
    fdxConsentRequestOf({ authorization_details: value });
  } catch (error) {
    if (error instanceof InvalidAuthorizationDetails) throw new errors.InvalidAuthorizationDetails(error.description);
    throw error;
  }
}

/** The FDX detail a Grant keeps, if its authorization has a consent. */
export function grantedFdxDetail(grant: unknown): GrantedFdxDetail | undefined {
  const rar = (grant as { rar?: unknown } | undefined)?.rar;
  const detail = Array.isArray(rar)
    ? (rar as Partial<GrantedFdxDetail>[]).find((d) => d?.type === FDX_AUTHORIZATION_DETAILS_TYPE)
    : undefined;
  return typeof detail?.consentId === 'string' ? (detail as GrantedFdxDetail) : undefined;
}
