import { z } from 'zod';
import { FDX_DURATION_TYPES } from '../../authorizations/fdx-consent-request.js';
import { FDX_PARTY_TYPES, FDX_REVOCATION_REASONS } from '../../authorizations/fdx-consent.js';
import type { RecipientConsent } from '../../authorizations/fdx-consents.js';
import type { ConsentPartiesRow } from './consent-parties-repository.js';

/**
 * The FDX 6.3 Consent API's entities (fdxapi.consent.yaml: ConsentGrant, ConsentRevocationRequest,
 * ConsentRevocationList) as this data provider fills them (docs/api.md, "FDX bank-data API",
 * Consent API). Timestamps are RFC 3339 UTC with milliseconds. There is no registry here, so the
 * parties carry no registry members.
 */

const Timestamp = z.string().describe('RFC 3339 date-time, UTC, with milliseconds');
const Status = z.enum(['ACTIVE', 'EXPIRED', 'REVOKED']);

const Party = z.object({
  name: z.string(),
  type: z.enum(['DATA_RECIPIENT', 'DATA_PROVIDER']),
  homeUri: z.string().optional(),
  logoUri: z.string().optional(),
});

export const ConsentGrant = z.object({
  id: z.string().describe('The consentId'),
  status: Status,
  parties: z.array(Party),
  createdTime: Timestamp,
  updatedTime: Timestamp,
  expirationTime: Timestamp,
  durationType: z.enum(FDX_DURATION_TYPES),
  durationPeriod: z
    .number()
    .int()
    .optional()
    .describe('Days from the grant; absent for ONE_TIME and for a PERSISTENT consent that named none'),
  lookbackPeriod: z.number().int().describe('Days of history a call may see, measured back from the call'),
  resources: z.array(
    z.object({ resourceType: z.enum(['ACCOUNT', 'CUSTOMER']), resourceId: z.string(), dataClusters: z.array(z.string()) }),
  ),
});

/** Both members required, nothing else: the revocation is a decision, so a typo must not pass. */
export const ConsentRevocationRequest = z.strictObject({
  reason: z.enum(FDX_REVOCATION_REASONS, { error: `must be one of ${FDX_REVOCATION_REASONS.join(', ')}` }),
  initiator: z.enum(FDX_PARTY_TYPES, { error: `must be one of ${FDX_PARTY_TYPES.join(', ')}` }),
});

export const ConsentRevocationList = z.object({
  revocations: z.array(
    z.object({
      status: z.literal('REVOKED'),
      reason: z.enum(FDX_REVOCATION_REASONS),
      initiator: z.enum(FDX_PARTY_TYPES),
      updatedTime: Timestamp,
    }),
  ),
});

export function toConsentGrant(consent: RecipientConsent, parties: ConsentPartiesRow): z.infer<typeof ConsentGrant> {
  return {
    id: consent.id,
    status: consent.status,
    parties: [
      { name: parties.client_name ?? consent.clientId, type: 'DATA_RECIPIENT', ...(parties.logo_uri ? { logoUri: parties.logo_uri } : {}) },
      { name: parties.organization_name ?? consent.organizationId, type: 'DATA_PROVIDER' },
    ],
    createdTime: consent.createdAt.toISOString(),
    updatedTime: consent.updatedAt.toISOString(),
    expirationTime: consent.expiresAt.toISOString(),
    durationType: consent.durationType,
    ...(consent.durationPeriod === null ? {} : { durationPeriod: consent.durationPeriod }),
    lookbackPeriod: consent.lookbackPeriod,
    resources: consent.resources.map((r) => ({
      resourceType: r.resourceType,
      resourceId: r.resourceId,
      dataClusters: [...r.dataClusters],
    })),
  };
}

/** A consent is revoked at most once: its one revocation, or none while it is active or expired. */
export function toRevocationList(consent: RecipientConsent): z.infer<typeof ConsentRevocationList> {
  if (consent.status !== 'REVOKED' || !consent.revokedAt || !consent.revocationReason || !consent.revocationInitiator)
    return { revocations: [] };
  return {
    revocations: [
      {
        status: 'REVOKED',
        reason: consent.revocationReason,
        initiator: consent.revocationInitiator,
        updatedTime: consent.revokedAt.toISOString(),
      },
    ],
  };
}
