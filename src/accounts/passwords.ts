import argon2 from 'argon2';

export interface PasswordParams {
  memoryKib: number;
  timeCost: number;
  parallelism: number;
}

/** OWASP's argon2id minimum (19 MiB, t=2, p=1); config may only make it stronger. */
export const MIN_PASSWORD_PARAMS: PasswordParams = { memoryKib: 19_456, timeCost: 2, parallelism: 1 };

export function passwordParamsFrom(config: {
  password_memory_kib: number;
  password_time_cost: number;
  password_parallelism: number;
}): PasswordParams {
  return { memoryKib: config.password_memory_kib, timeCost: config.password_time_cost, parallelism: config.password_parallelism };
}

export function hashPassword(password: string, params: PasswordParams): Promise<string> {
  return argon2.hash(password, {
    type: argon2.argon2id,
    memoryCost: params.memoryKib,
    timeCost: params.timeCost,
    parallelism: params.parallelism,
  });
}

/**
 * argon2 password verifications this process has run. The sign-in throttle exists to bound
 * them, so the tests that attack it count them here.
 */
export const passwordVerifications = { count: 0 };

/** Constant-time by construction (argon2 compares digests); false for malformed hashes. */
export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  passwordVerifications.count += 1;
  try {
    return await argon2.verify(hash, password);
  } catch {
    return false;
  }
}

/** True when a stored hash was made with other parameters and should be replaced at next login. */
export function needsRehash(hash: string, params: PasswordParams): boolean {
  return argon2.needsRehash(hash, { memoryCost: params.memoryKib, timeCost: params.timeCost, parallelism: params.parallelism });
}
