import type { Caller, Recipient } from '../routing/caller.js';
import type { AccessTokenRow, ApiKeyRow, ClientTokenRow } from './credential-repository.js';

/** A presented bearer credential, resolved but not yet judged valid. */
export type Credential =
  | { kind: 'api_key'; presented: true; row: ApiKeyRow | undefined }
  | { kind: 'access_token'; presented: true; row: AccessTokenRow | undefined }
  | { kind: 'client_credentials'; presented: true; row: ClientTokenRow | undefined };

/** The kinds of bearer credential the gateway takes. */
export type CredentialKind = Credential['kind'];

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
