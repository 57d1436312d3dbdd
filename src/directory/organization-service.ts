import type { Db } from '../db/database.js';
import { inTransaction } from '../db/executor.js';
import type { SandboxSettlement } from '../db/schema-directory.js';
import { invalid, notFound } from '../errors/domain-error.js';
import {
  claimedEins,
  findDirectoryOrganizationById,
  findDirectoryOrganizationsByIds,
  isClaimedEin,
  recordOnboarding,
} from './repository.js';
import type { DirectoryOrganization } from './search-service.js';

/**
 * One organization of the directory by its published id (docs/directory.md, "Organization ids"),
 * and the sandbox onboarding simulation ("Sandbox onboarding").
 */

export interface OrganizationRecord {
  organization: DirectoryOrganization;
  /** A member nonprofit of Almoner has its EIN. */
  claimed: boolean;
}

export async function organizationById(db: Db, id: string): Promise<OrganizationRecord | undefined> {
  const row = await findDirectoryOrganizationById(db, id);
  if (!row) return undefined;
  const { search_name: _, ...organization } = row;
  return { organization, claimed: await isClaimedEin(db, row.ein) };
}

/** Organizations of the directory by published id, for embedding (a disbursement's `includes=organization`); unknown ids are left out. */
export async function organizationsByIds(db: Db, ids: readonly string[]): Promise<Map<string, OrganizationRecord>> {
  const rows = await findDirectoryOrganizationsByIds(db, [...new Set(ids)]);
  const claimed = await claimedEins(
    db,
    rows.map((r) => r.ein),
  );
  return new Map(
    rows.map(({ search_name: _, ...organization }) => [organization.id, { organization, claimed: claimed.has(organization.ein) }]),
  );
}

/**
 * Onboards a sandbox organization onto a settlement rail. The first call fixes the rail; the same
 * rail again is answered as the first time, another is refused, since disbursements already
 * settled on the first (the published operation's own rule).
 */
export async function onboardSandboxOrganization(
  db: Db,
  input: { id: string; settlement: SandboxSettlement; grantmakerId: string },
): Promise<OrganizationRecord> {
  return inTransaction(db, async (trx) => {
    const row = await findDirectoryOrganizationById(trx, input.id);
    if (!row) throw notFound('The organization was not found.');
    const onboarding = await recordOnboarding(trx, row.id, input.settlement, input.grantmakerId);
    if (onboarding.settlement !== input.settlement)
      throw invalid(`settlement: the organization is already onboarded with ${onboarding.settlement}; its settlement cannot change.`);
    const { search_name: _, ...organization } = row;
    return { organization, claimed: await isClaimedEin(trx, row.ein) };
  });
}
