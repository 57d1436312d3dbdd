import type { Environment, OrganizationKind, SubjectType } from '../../db/schema.js';
import type { FdxConsentResource } from '../../authorizations/fdx-consent.js';

/**
 * The active FDX consent an access token's authorization is held to (docs/api.md, "FDX bank-data
 * API", Consents): the FDX routes serve only its resources and clusters, and only its lookback.
 */
export interface HeldFdxConsent {
  id: string;
  lookbackPeriod: number;
  resources: readonly FdxConsentResource[];
}

/** Who is calling the gateway, established once per request by the authentication stack. */
export type Caller =
  | { kind: 'api_key'; environment: Environment; organizationId: string; organizationKind: OrganizationKind; keyId: string }
  | {
      kind: 'access_token';
      environment: Environment;
      organizationId: string;
      /** The authorization's organization: a fund provider's token reaches the DAF APIs. */
      organizationKind: OrganizationKind;
      clientId: string;
      grantId: string;
      subjectType: SubjectType;
      userId: string;
      /** Effective scopes: the token's, narrowed by the approver's current role for a user subject. */
      scopes: ReadonlySet<string>;
      /** Absent when the authorization has no FDX consent: the FDX routes then serve as they always did, unless one is required. */
      fdxConsent?: HeldFdxConsent;
      /** A bank-data (fapi2) client's token: the FDX data routes serve it only under a live consent. */
      fdxConsentRequired?: true;
    };

/** A data recipient calling with its own client-credentials token: the FDX Consent API's caller (docs/bank-data.md). */
export interface Recipient {
  environment: Environment;
  clientId: string;
}
