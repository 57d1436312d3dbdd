import { seedBankData } from './bank-data.js';
import { DEMO_NONPROFIT } from './accounts-step.js';
import type { SeedStep } from './seed.js';
import { findOrganizationIdByEin } from './seed-repository.js';

/** Demo Food Bank's deposit accounts for the FDX API: 3 accounts, 24 monthly statements and 1,500 transactions each, per environment. */
export const bankDataStep: SeedStep = {
  name: '2026-11-22-bank-data',
  async run(trx) {
    const org = await findOrganizationIdByEin(trx, DEMO_NONPROFIT.ein);
    if (!org) return;
    for (const environment of ['production', 'sandbox'] as const) {
      await seedBankData(trx, { organizationId: org.id, environment, accounts: 3, transactionsPerAccount: 1500 });
    }
  },
};
