import type { Db } from '../db/database.js';
import type { Environment } from '../db/schema.js';
import { findUserByEmail } from '../accounts/repository.js';
import { normaliseEmail } from '../accounts/service.js';
import { listAuditEventNames, listAuditEvents, type AuditFilters, type AuditRow } from '../audit/repository.js';
import { applicationNames, membersAmong } from './audit-names-repository.js';

/**
 * What the audit page reads (docs/accounts.md, "Organization pages"): an organization's trail,
 * the kinds of event it has, who a filter's address names, and the names shown in place of ids.
 */

export type { AuditRow };

/** The kinds of event an organization's trail holds. */
export function recordedAuditEvents(db: Db, organizationId: string): Promise<string[]> {
  return listAuditEventNames(db, organizationId);
}

/** The user an address names, or undefined; throws when it is not an e-mail address. */
export async function userIdByEmail(db: Db, address: string): Promise<string | undefined> {
  return (await findUserByEmail(db, normaliseEmail(address)))?.id;
}

/** One page of audit events, newest first; `next` names the following page. */
export function auditEventsPage(db: Db, filters: AuditFilters): Promise<{ rows: AuditRow[]; next: string | null }> {
  return listAuditEvents(db, filters);
}

/** The registry's names of the applications given (`environment client_id` → name), and those of the users given who are members now. */
export async function auditNames(
  db: Db,
  organizationId: string,
  clients: readonly { environment: Environment; clientId: string }[],
  userIds: readonly string[],
): Promise<{ applications: Map<string, string>; members: Map<string, { id: string; email: string; display_name: string | null }> }> {
  const applications = new Map((await applicationNames(db, clients)).map((c) => [`${c.environment} ${c.client_id}`, c.name]));
  const members = new Map((await membersAmong(db, organizationId, userIds)).map((m) => [m.id, m]));
  return { applications, members };
}
