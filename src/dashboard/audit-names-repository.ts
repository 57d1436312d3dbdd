import type { Executor } from '../db/executor.js';
import type { Environment } from '../db/schema.js';

/**
 * What the audit page shows in place of ids (docs/accounts.md, "Organization pages"): the
 * names of applications in the client registry, and the people an organization's events name.
 */

/** The registry's names of the applications given, each looked up in its own environment only. */
export async function applicationNames(
  db: Executor,
  clients: readonly { environment: Environment; clientId: string }[],
): Promise<{ environment: Environment; client_id: string; name: string }[]> {
  if (clients.length === 0) return [];
  return db
    .selectFrom('oauth_clients')
    .select(['environment', 'client_id', 'name'])
    .where((eb) => eb.or(clients.map((c) => eb.and([eb('environment', '=', c.environment), eb('client_id', '=', c.clientId)]))))
    .execute();
}

/** The users given who are members of the organization now, with their address and name. */
export async function membersAmong(
  db: Executor,
  organizationId: string,
  userIds: readonly string[],
): Promise<{ id: string; email: string; display_name: string | null }[]> {
  if (userIds.length === 0) return [];
  return db
    .selectFrom('memberships as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['u.id', 'u.email', 'u.display_name'])
    .where('m.organization_id', '=', organizationId)
    .where('m.user_id', 'in', [...userIds])
    .execute();
}
