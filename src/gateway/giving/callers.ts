import type { OrganizationKind } from '../../db/schema.js';
import type { Caller } from '../routing/caller.js';

/** DAFpay giving's callers (docs/api.md, "Organization kinds"): giving platforms and nonprofits. */
export const GIVING_CALLERS: readonly OrganizationKind[] = ['platform', 'nonprofit'];

/** Who made a change: api_key:<id>, or the OAuth client's id. */
export function actorOf(caller: Caller): string {
  return caller.kind === 'api_key' ? `api_key:${caller.keyId}` : caller.clientId;
}
