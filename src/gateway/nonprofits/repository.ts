import type { Db } from '../../db/database.js';

/** A nonprofit's public record by EIN (fund providers are not in the directory). */
export function findNonprofitByEin(db: Db, ein: string) {
  return db.selectFrom('organizations').selectAll().where('ein', '=', ein).where('kind', '=', 'nonprofit').executeTakeFirst();
}

export async function hasStaff(db: Db, organizationId: string): Promise<boolean> {
  return (
    (await db.selectFrom('memberships').select('user_id').where('organization_id', '=', organizationId).limit(1).executeTakeFirst()) !==
    undefined
  );
}
