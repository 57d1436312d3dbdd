import { seedNonprofitData } from './nonprofit-data.js';
import { DEMO_NONPROFIT } from './accounts-step.js';
import type { SeedStep } from './seed.js';
import { findOrganizationIdByEin } from './seed-repository.js';

/** Demo Food Bank's connects, grants and donations, in both environments. */
export const nonprofitDataStep: SeedStep = {
  name: '2026-11-22-nonprofit-data',
  async run(trx) {
    const org = await findOrganizationIdByEin(trx, DEMO_NONPROFIT.ein);
    if (!org) return;
    for (const environment of ['production', 'sandbox'] as const) await seedNonprofitData(trx, { organizationId: org.id, environment });
  },
};
