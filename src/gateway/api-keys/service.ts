import crypto from 'node:crypto';
import type { Db } from '../../db/database.js';
import { inTransaction } from '../../db/executor.js';
import type { Environment } from '../../db/schema.js';
import { formatEin } from '../../accounts/ein.js';
import { conflict, invalid, notFound } from '../../errors/domain-error.js';
import { requireOrganization } from '../../accounts/service.js';
import { recordAudit } from '../../audit/audit-log.js';
import { apiKeyHash, generateApiKey } from './format.js';
import { findApiKeyId, insertApiKey, listApiKeysOfOrganization, revokeLiveApiKey } from './repository.js';

function requireEnvironment(value: string): Environment {
  if (value !== 'production' && value !== 'sandbox') throw invalid('environment must be production or sandbox');
  return value;
}

export async function createApiKey(db: Db, input: { org: string; environment: string }) {
  const environment = requireEnvironment(input.environment);
  const org = await requireOrganization(db, input.org);
  const key = generateApiKey(environment);
  const id = `key_${crypto.randomBytes(12).toString('hex')}`;
  await inTransaction(db, async (trx) => {
    await insertApiKey(trx, { id, environment, organization_id: org.id, key_hash: apiKeyHash(key), key_prefix: key.slice(0, 13) });
    await recordAudit(trx, { event: 'api_key.created', environment, organizationId: org.id, details: { id } });
  });
  return { id, key, environment, org: formatEin(org.ein) };
}

export async function revokeApiKey(db: Db, id: string) {
  return inTransaction(db, async (trx) => {
    const row = await revokeLiveApiKey(trx, id);
    if (!row) {
      const exists = await findApiKeyId(trx, id);
      throw exists ? conflict(`API key ${id} is already revoked`) : notFound(`no API key ${id}`);
    }
    await recordAudit(trx, { event: 'api_key.revoked', environment: row.environment, organizationId: row.organization_id, details: { id } });
    return { id: row.id };
  });
}

export async function listApiKeys(db: Db, orgInput: string) {
  const org = await requireOrganization(db, orgInput);
  const rows = await listApiKeysOfOrganization(db, org.id);
  return {
    org: formatEin(org.ein),
    api_keys: rows.map((r) => ({
      id: r.id,
      environment: r.environment,
      prefix: r.key_prefix,
      created_at: r.created_at.toISOString(),
      last_used_at: r.last_used_at?.toISOString() ?? null,
      revoked_at: r.revoked_at?.toISOString() ?? null,
    })),
  };
}
