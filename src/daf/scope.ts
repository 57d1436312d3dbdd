import type { Environment } from '../db/schema.js';

/** Everything a fund provider reaches is of its own organization and of the host's environment. */
export interface DafScope {
  environment: Environment;
  fundProviderId: string;
  /** Who acts, for approval/rejection records: `daf:<api key id>`. */
  principal: string;
}

/**
 * What the scope takes of an API caller: the gateway's Caller has these members and more, and
 * this folder, below the gateway, names only what it reads.
 */
export type DafCaller = { environment: Environment; organizationId: string } & (
  { kind: 'api_key'; keyId: string } | { kind: 'access_token'; clientId: string }
);

export function dafScope(caller: DafCaller): DafScope {
  return {
    environment: caller.environment,
    fundProviderId: caller.organizationId,
    principal: caller.kind === 'api_key' ? `daf:${caller.keyId}` : `client:${caller.clientId}`,
  };
}
