import type { Db } from '../../db/database.js';
import { hashId } from '../../db/provider-store.js';
import type { Environment } from '../../db/schema.js';
import { apiKeyEnvironment, apiKeyPrefix } from '../../api-keys/format.js';
import { accessTokenStoredIn } from './credential-repository.js';

const OTHER: Record<Environment, Environment> = { production: 'sandbox', sandbox: 'production' };

/**
 * A credential unknown to this environment that belongs to the other one (docs/api.md,
 * "Credentials"): an API key by its prefix, an access token by the environment whose
 * authorization server (issuer) stored it. Read only once the credential was refused here.
 * The answer says which environment it is, never whether the credential is live there.
 */
export async function wrongEnvironmentDetail(
  db: Db,
  here: Environment,
  kind: 'api_key' | 'access_token',
  bearer: string,
): Promise<string | undefined> {
  const other = OTHER[here];
  if (kind === 'api_key') {
    if (apiKeyEnvironment(bearer) !== other) return undefined;
    return `This is a ${other} API key (${apiKeyPrefix(other)}…) and this is the ${here} API: send it to the ${other} API host, or use a ${here} key (${apiKeyPrefix(here)}…) here.`;
  }
  if (!(await accessTokenStoredIn(db, other, hashId(bearer)))) return undefined;
  return `This access token was issued by the ${other} authorization server and this is the ${here} API: call the ${other} API host with it, or get a token from the ${here} token endpoint.`;
}
