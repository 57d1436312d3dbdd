import { describe, expect, it } from 'vitest';
import { MAX_TOKEN_TTL_SECONDS } from '../../src/daf/tokens-service.js';
import { SCAN_IMAGE_URL_TTL_SECONDS } from '../../src/dashboard/gift-image-urls.js';
import { VERIFIES_AFTER_RETIREMENT_SECONDS as LIFE } from '../../src/keys/server-keys.js';
import { CLIENT_SECRET_CACHE_TTL_MS } from '../../src/oidc/client-secret-cache.js';
import { SESSION_TTL } from '../../src/oidc/lifetimes.js';
import { MAX_UPLOAD_URL_SECONDS } from '../../src/storage/upload-signing.js';
import {
  currentPasswordFailures,
  invitationsPerOrganization,
  resetRequestsPerCallerAddress,
  resetRequestsPerEmail,
  secondFactorFailures,
  signInFailuresPerAccount,
  signInFailuresPerCallerAddress,
} from '../../src/limits/rate-limits.js';

/**
 * keys/ imports no feature, so the life of a retired key version is a number of its own: it
 * must be the longest life of what the features sign or hash with it. Each is held to the
 * feature's constant here; a feature that lengthens a lifetime fails this test until the
 * key's number follows (else older versions would stop verifying what is still valid).
 */
describe('how long retired server key versions verify', () => {
  it('matches the lifetime of what each key signs or hashes', () => {
    expect(LIFE['cookie_key:production']).toBe(SESSION_TTL);
    expect(LIFE['cookie_key:sandbox']).toBe(SESSION_TTL);
    expect(LIFE.csrf_key).toBe(SESSION_TTL);
    expect(LIFE.client_secret_cache_key).toBe(CLIENT_SECRET_CACHE_TTL_MS / 1000);
    expect(LIFE.login_throttle).toBe(
      Math.max(
        signInFailuresPerAccount.historySeconds,
        signInFailuresPerCallerAddress.historySeconds,
        signInFailuresPerAccount.maxLockSeconds,
        signInFailuresPerCallerAddress.maxLockSeconds,
      ),
    );
    expect(LIFE.daf_code).toBe(MAX_TOKEN_TTL_SECONDS);
    expect(LIFE.upload_url).toBe(MAX_UPLOAD_URL_SECONDS);
    expect(LIFE.scan_image_url).toBe(SCAN_IMAGE_URL_TTL_SECONDS);
    for (const limit of [
      secondFactorFailures,
      currentPasswordFailures,
      resetRequestsPerEmail,
      resetRequestsPerCallerAddress,
      invitationsPerOrganization,
    ]) {
      expect(limit.windowSeconds, limit.name).toBeLessThanOrEqual(LIFE.attempt_counter);
    }
  });
});
