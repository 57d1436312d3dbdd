import type { Environment } from '../db/schema.js';
import type { FdxConsentRequest, FdxDataCluster, FdxDurationType, FdxResourceType } from './fdx-consent-request.js';
import type { FdxConsentRow } from './fdx-consents-repository.js';

/**
 * An FDX consent grant as the rest of the code sees it (docs/api.md, "FDX bank-data API",
 * Consents): its statuses, revocation vocabulary, when it expires and how a stored row reads.
 * fdx-consents.ts records, finds, revokes and expires them.
 */

/**
 * PENDING from the approval until the recipient exchanges its code (then ACTIVE), or until it
 * lapses uncollected (EXPIRED): docs/bank-data.md, "Consents". The Consent API never shows
 * PENDING: the recipient learns of a consent with its tokens, which make it ACTIVE.
 */
export type FdxConsentStatus = 'PENDING' | 'ACTIVE' | 'EXPIRED' | 'REVOKED';
/** The statuses a data recipient sees (FDX's ConsentGrant). */
export type PublishedConsentStatus = Exclude<FdxConsentStatus, 'PENDING'>;
export const FDX_REVOCATION_REASONS = ['BUSINESS_RULE', 'USER_ACTION'] as const;
/** FDX PartyType: who may initiate a revocation. */
export const FDX_PARTY_TYPES = ['DATA_ACCESS_PLATFORM', 'DATA_PROVIDER', 'DATA_RECIPIENT', 'INDIVIDUAL', 'MERCHANT', 'VENDOR'] as const;
export type FdxRevocationReason = (typeof FDX_REVOCATION_REASONS)[number];
export type FdxPartyType = (typeof FDX_PARTY_TYPES)[number];

/** A ONE_TIME consent lasts an hour: long enough for one sync. */
export const ONE_TIME_CONSENT_MS = 3_600_000;
/**
 * How long an approved consent waits for its recipient to exchange the code (which lives 60
 * seconds, from the browser's return) before it lapses: PENDING's expires_at.
 */
export const COLLECTION_WINDOW_MS = 600_000;
const DAY_MS = 86_400_000;

export interface FdxConsentResource {
  resourceType: FdxResourceType;
  resourceId: string;
  dataClusters: FdxDataCluster[];
}

export interface FdxConsent {
  id: string;
  environment: Environment;
  organizationId: string;
  clientId: string;
  grantId: string;
  userId: string;
  /** As of the read: an ACTIVE row past its expiry is EXPIRED, whether or not the sweep ran. */
  status: FdxConsentStatus;
  durationType: FdxDurationType;
  durationPeriod: number | null;
  lookbackPeriod: number;
  resources: FdxConsentResource[];
  createdAt: Date;
  updatedAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
  revocationReason: FdxRevocationReason | null;
  revocationInitiator: FdxPartyType | null;
}

/** The consent's status at `now`: PENDING or ACTIVE until expires_at, then EXPIRED (unless REVOKED first). */
export function consentStatus(row: { status: FdxConsentStatus; expires_at: Date }, now = Date.now()): FdxConsentStatus {
  return (row.status === 'ACTIVE' || row.status === 'PENDING') && row.expires_at.getTime() <= now ? 'EXPIRED' : row.status;
}

export function consentOf(row: FdxConsentRow): FdxConsent {
  return {
    id: row.id,
    environment: row.environment,
    organizationId: row.organization_id,
    clientId: row.client_id,
    grantId: row.grant_id,
    userId: row.user_id,
    status: consentStatus(row),
    durationType: row.duration_type,
    durationPeriod: row.duration_period,
    lookbackPeriod: row.lookback_period,
    resources: row.resources as FdxConsentResource[],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    revocationReason: row.revocation_reason as FdxRevocationReason | null,
    revocationInitiator: row.revocation_initiator as FdxPartyType | null,
  };
}

/** PERSISTENT: at most a year; TIME_BOUND: its period; ONE_TIME: an hour. */
export function consentExpiry(request: Pick<FdxConsentRequest, 'durationType' | 'durationPeriod'>, createdAt: Date): Date {
  const days = request.durationType === 'PERSISTENT' ? Math.min(request.durationPeriod ?? 365, 365) : (request.durationPeriod ?? 0);
  return new Date(createdAt.getTime() + (request.durationType === 'ONE_TIME' ? ONE_TIME_CONSENT_MS : days * DAY_MS));
}
