import type { Db } from '../../db/database.js';
import { findNonprofitByEin, hasStaff } from './repository.js';

type Organization = NonNullable<Awaited<ReturnType<typeof findNonprofitByEin>>>;

/**
 * A nonprofit's public record by EIN, or undefined (a fund provider is not in the directory);
 * claimed once someone on its staff has an account here.
 */
export async function nonprofitByEin(db: Db, ein: string): Promise<{ organization: Organization; claimed: boolean } | undefined> {
  const organization = await findNonprofitByEin(db, ein);
  if (!organization) return undefined;
  return { organization, claimed: await hasStaff(db, organization.id) };
}
