import type { Db } from '../db/database.js';
import { inTransaction, type Trx } from '../db/executor.js';
import path from 'node:path';
import type { AppConfig } from '../config/schema.js';
import { passwordParamsFrom, type PasswordParams } from '../accounts/passwords.js';
import { accountsStep } from './accounts-step.js';
import { demoClientStep } from './demo-client-step.js';
import { nonprofitDataStep } from './nonprofit-data-step.js';
import { bankDataStep } from './bank-data-step.js';
import { claimSeedStep, findSeedStep } from './seed-repository.js';

export interface SeedContext {
  passwordParams: PasswordParams;
  /** The clients file the demo client is registered in. */
  clientsFile: string;
  /** Where the demo client's credentials are written for the dev banner. */
  dataDir: string;
}

export function seedContext(config: AppConfig): SeedContext {
  return {
    passwordParams: passwordParamsFrom(config),
    clientsFile: path.resolve(config.clients_file),
    dataDir: path.resolve(config.data_dir),
  };
}

/** One named, idempotent piece of demo data. Later features append their own steps. */
export interface SeedStep {
  name: string;
  /** Work that must not run inside the transaction (e.g. slow password hashing). */
  prepare?(ctx: SeedContext): Promise<unknown>;
  run(trx: Trx, prepared: unknown, ctx: SeedContext): Promise<void>;
  /** Work after the transaction committed (files, other systems). */
  after?(db: Db, ctx: SeedContext): Promise<void>;
}

export const SEED_STEPS: readonly SeedStep[] = [accountsStep, demoClientStep, nonprofitDataStep, bankDataStep];

/**
 * Applies every demo step not yet recorded in demo_seed_steps, each in its own transaction.
 * Claiming the step's row first makes concurrent starts safe: the second waits, then skips.
 */
export async function seedDemoData(db: Db, ctx: SeedContext, steps: readonly SeedStep[] = SEED_STEPS): Promise<string[]> {
  const applied: string[] = [];
  for (const step of steps) {
    const done = await findSeedStep(db, step.name);
    if (done) continue;
    const prepared = await step.prepare?.(ctx);
    const ran = await inTransaction(db, async (trx) => {
      const claimed = await claimSeedStep(trx, step.name);
      if (!claimed) return false;
      await step.run(trx, prepared, ctx);
      return true;
    });
    if (ran) {
      await step.after?.(db, ctx);
      applied.push(step.name);
    }
  }
  return applied;
}
