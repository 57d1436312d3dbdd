import type { Environment, OrganizationKind, SubjectType } from '../../db/schema.js';
import type { FdxConsentResource } from '../../authorizations/fdx-consent.js';
import type { AccessTokenRow, ApiKeyRow, ClientTokenRow } from '../auth/credential-repository.js';

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
      /** Absent when the authorization has no FDX consent: the FDX routes then serve as they always did. */
      fdxConsent?: HeldFdxConsent;
    };

/** A data recipient calling with its own client-credentials token: the FDX Consent API's caller (docs/bank-data.md). */
export interface Recipient {
  environment: Environment;
  clientId: string;
}

/** A presented bearer credential, resolved but not yet judged valid. */
export type Credential =
  | { kind: 'api_key'; presented: true; row: ApiKeyRow | undefined }
  | { kind: 'access_token'; presented: true; row: AccessTokenRow | undefined }
  | { kind: 'client_credentials'; presented: true; row: ClientTokenRow | undefined };

export interface GatewayState {
  bearer?: string;
  /** The Authorization scheme the credential came with. */
  scheme?: 'Bearer' | 'DPoP';
  credential?: Credential;
  caller?: Caller;
  /** Set instead of `caller` on the routes that take a client's own token (route spec credentials 'client'). */
  recipient?: Recipient;
  apiVersion?: string;
}

declare module 'koa' {
  // Declaration merging needs an interface; it adds the gateway's state to ctx.state.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface DefaultState extends GatewayState {}
}
