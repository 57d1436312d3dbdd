import crypto from 'node:crypto';
import type { Db } from '../db/database.js';
import { inTransaction } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import { formatEin } from '../accounts/ein.js';
import { conflict, invalid, notFound } from '../errors/domain-error.js';
import { requireOrganization } from '../accounts/service.js';
import { recordAudit } from '../audit/audit-log.js';
import { apiKeyHash, generateApiKey } from './format.js';
import { findApiKeyId, findApiKeyOf, insertApiKey, listApiKeysOfOrganization, revokeLiveApiKey } from './repository.js';

/**
 * API keys: created by the admin CLI (the maker) or on an organization's API keys page (a
 * signed-in Owner or Admin, `actor`), shown once, stored as SHA-256, revocable.
 */

function requireEnvironment(value: string): Environment {
  if (value !== 'production' && value !== 'sandbox') throw invalid('environment must be production or sandbox');
  return value;
}

/** Who asked, for the audit trail: a signed-in user (the dashboard) or nobody named (the maker's CLI). */
export interface KeyActor {
  actorUserId?: string | null;
  ip?: string | null;
  requestId?: string | null;
}

const audit = (actor: KeyActor) => ({ actorUserId: actor.actorUserId ?? null, ip: actor.ip ?? null, requestId: actor.requestId ?? null });

export const API_KEY_NAME_MAX = 100;

/**
 * A key's name as given (what it is for: "Billing server"), spaces tidied; undefined when none
 * was given. Refused when longer than API_KEY_NAME_MAX or holding control characters.
 */
export function apiKeyName(input: string | undefined): string | undefined {
  const name = (input ?? '').trim().replace(/\s+/g, ' ');
  if (!name) return undefined;
  // eslint-disable-next-line no-control-regex
  if (name.length > API_KEY_NAME_MAX || /[\u0000-\u001f\u007f]/.test(name))
    throw invalid(`a key's name is 1 to ${API_KEY_NAME_MAX} characters of text, such as what the key is for`);
  return name;
}

/** Creates a key for an organization in one environment; the key itself is returned once, never stored. */
export async function createOrganizationApiKey(
  db: Db,
  input: { organizationId: string; environment: Environment; name?: string } & KeyActor,
): Promise<{ id: string; key: string; prefix: string; name: string | null }> {
  const key = generateApiKey(input.environment);
  const id = `key_${crypto.randomBytes(12).toString('hex')}`;
  const prefix = key.slice(0, 13);
  const name = apiKeyName(input.name) ?? null;
  await inTransaction(db, async (trx) => {
    await insertApiKey(trx, {
      id,
      environment: input.environment,
      organization_id: input.organizationId,
      key_hash: apiKeyHash(key),
      key_prefix: prefix,
      name,
    });
    await recordAudit(trx, {
      event: 'api_key.created',
      environment: input.environment,
      organizationId: input.organizationId,
      ...audit(input),
      details: { id, ...(name ? { name } : {}) },
    });
  });
  return { id, key, prefix, name };
}

/** The admin CLI's `api-keys create`: by EIN, with a name when given. */
export async function createApiKey(db: Db, input: { org: string; environment: string; name?: string }) {
  const environment = requireEnvironment(input.environment);
  const org = await requireOrganization(db, input.org);
  const { id, key, name } = await createOrganizationApiKey(db, { organizationId: org.id, environment, name: input.name });
  return { id, key, ...(name ? { name } : {}), environment, org: formatEin(org.ein) };
}

/**
 * Revokes a live key. With `scope` (the dashboard), only a key of that organization and
 * environment: any other id is "no such key", as if it did not exist.
 */
export async function revokeApiKey(db: Db, id: string, scope?: { organizationId: string; environment: Environment } & KeyActor) {
  return inTransaction(db, async (trx) => {
    const row = await revokeLiveApiKey(trx, id, scope);
    if (!row) {
      const exists = await findApiKeyId(trx, id, scope);
      throw exists ? conflict(`API key ${id} is already revoked`) : notFound(`no API key ${id}`);
    }
    await recordAudit(trx, {
      event: 'api_key.revoked',
      environment: row.environment,
      organizationId: row.organization_id,
      ...audit(scope ?? {}),
      details: { id },
    });
    return { id: row.id };
  });
}

function apiKeyView(r: Awaited<ReturnType<typeof listApiKeysOfOrganization>>[number]) {
  return {
    id: r.id,
    environment: r.environment,
    name: r.name,
    prefix: r.key_prefix,
    created_at: r.created_at.toISOString(),
    last_used_at: r.last_used_at?.toISOString() ?? null,
    revoked_at: r.revoked_at?.toISOString() ?? null,
  };
}

/** An organization's keys of one environment, oldest first, revoked ones included (the API keys page). */
export function apiKeysOfOrganization(db: Db, organizationId: string, environment: Environment) {
  return listApiKeysOfOrganization(db, organizationId, environment);
}

/** One key of an organization and environment, revoked or not (never its hash), or undefined. */
export function apiKeyOf(db: Db, id: string, scope: { organizationId: string; environment: Environment }) {
  return findApiKeyOf(db, id, scope);
}

export async function listApiKeys(db: Db, orgInput: string) {
  const org = await requireOrganization(db, orgInput);
  const rows = await listApiKeysOfOrganization(db, org.id);
  return { org: formatEin(org.ein), api_keys: rows.map(apiKeyView) };
}
