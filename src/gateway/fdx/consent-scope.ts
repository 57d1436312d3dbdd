import type { FdxDataCluster, FdxResourceType } from '../../authorizations/fdx-consent-request.js';
import type { Caller, HeldFdxConsent } from '../routing/caller.js';
import type { RouteSpec } from '../routing/route-spec.js';
import { clusterNotConsented, noConsent } from './problems.js';

/**
 * How the FDX routes are held to a token's consent (docs/api.md, "FDX bank-data API", Consents).
 * A bank-data (fapi2) client's token is served only under a live consent (an ended one was
 * refused with the token already). A standard client's token, which has none by design, is
 * served exactly as before: every function here then leaves the call alone.
 */

const DAY_MS = 86_400_000;

/**
 * The data clusters each FDX data operation serves, any one of which the consent must grant for
 * the resource type. The contact and customer routes serve the organization's identity (FDX's
 * CUSTOMER_CONTACT of the CUSTOMER resource), whichever account they are reached through.
 */
export const OPERATION_CLUSTERS: Readonly<Record<string, { resourceType: FdxResourceType; clusters: readonly FdxDataCluster[] }>> = {
  listAccounts: { resourceType: 'ACCOUNT', clusters: ['ACCOUNT_BASIC', 'ACCOUNT_DETAILED'] },
  getAccount: { resourceType: 'ACCOUNT', clusters: ['ACCOUNT_DETAILED'] },
  listAccountTransactions: { resourceType: 'ACCOUNT', clusters: ['TRANSACTIONS'] },
  listAccountStatements: { resourceType: 'ACCOUNT', clusters: ['STATEMENTS'] },
  getAccountStatement: { resourceType: 'ACCOUNT', clusters: ['STATEMENTS'] },
  getAccountContact: { resourceType: 'CUSTOMER', clusters: ['CUSTOMER_CONTACT'] },
  listAccountCustomers: { resourceType: 'CUSTOMER', clusters: ['CUSTOMER_CONTACT'] },
  getCurrentCustomer: { resourceType: 'CUSTOMER', clusters: ['CUSTOMER_CONTACT'] },
};

const consentOf = (caller: Caller): HeldFdxConsent | undefined => (caller.kind === 'access_token' ? caller.fdxConsent : undefined);

/**
 * 403 (FDX code 602) unless the consent grants one of the operation's clusters, and for a
 * fapi2 client's token without a consent at all.
 */
export function requireConsentedCluster(caller: Caller, operationId: string): void {
  const consent = consentOf(caller);
  if (!consent) {
    if (caller.kind === 'access_token' && caller.fdxConsentRequired) throw noConsent();
    return;
  }
  const needed = OPERATION_CLUSTERS[operationId]!;
  const granted = consent.resources.filter((r) => r.resourceType === needed.resourceType).flatMap((r) => r.dataClusters);
  if (!needed.clusters.some((c) => granted.includes(c))) throw clusterNotConsented(needed.clusters);
}

/** The accounts the consent chose; undefined (every account of the organization) without a consent. */
export function consentedAccountIds(caller: Caller): readonly string[] | undefined {
  const consent = consentOf(caller);
  return consent && consent.resources.filter((r) => r.resourceType === 'ACCOUNT').map((r) => r.resourceId);
}

/** The oldest instant the consent lets a call see: lookbackPeriod days before `now`. */
export function lookbackStart(caller: Caller, now: Date): Date | undefined {
  const consent = consentOf(caller);
  return consent && new Date(now.getTime() - consent.lookbackPeriod * DAY_MS);
}

/**
 * FDX data routes with their handlers held to the consent's clusters first (before the account is
 * even looked up). An operation missing from OPERATION_CLUSTERS fails here, as the app is built.
 */
export function heldToConsent<T extends RouteSpec>(specs: readonly T[]): T[] {
  const unmapped = specs.filter((spec) => !OPERATION_CLUSTERS[spec.operationId]).map((spec) => spec.operationId);
  if (unmapped.length > 0) throw new Error(`FDX operations without a data cluster in OPERATION_CLUSTERS: ${unmapped.join(', ')}`);
  return specs.map((spec) => ({
    ...spec,
    handler: (input: Parameters<T['handler']>[0]) => {
      requireConsentedCluster(input.caller, spec.operationId);
      return spec.handler(input);
    },
  }));
}
