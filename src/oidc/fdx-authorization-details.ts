import { errors, type KoaContextWithOIDC } from 'oidc-provider';
import {
  FDX_AUTHORIZATION_DETAILS_TYPE,
  InvalidAuthorizationDetails,
  parseFdxAuthorizationDetails,
  type FdxConsentRequest,
} from '../authorizations/fdx-consent-request.js';
import { isFapi2Client } from './client-metadata.js';

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

/** extraParams validator: only fapi2 clients send authorization_details, and only valid FDX ones. */
export function validateAuthorizationDetails(ctx: KoaContextWithOIDC, value: string | undefined): void {
  if (value === undefined) return;
  if (!isFapi2Client(ctx.oidc.client)) throw new errors.InvalidRequest('authorization_details are for bank-data (fapi2) clients');
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
