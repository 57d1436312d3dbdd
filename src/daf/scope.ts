import type { Environment } from '../db/schema.js';
import type { Caller } from '../gateway/auth/caller.js';

/** Everything a fund provider reaches is of its own organization and of the host's environment. */
export interface DafScope {
  environment: Environment;
  fundProviderId: string;
  /** Who acts, for approval/rejection records: `daf:<api key id>`. */
  principal: string;
}

export function dafScope(caller: Caller): DafScope {
  return { environment: caller.environment, fundProviderId: caller.organizationId, principal: caller.kind === 'api_key' ? `daf:${caller.keyId}` : `client:${caller.clientId}` };
}
