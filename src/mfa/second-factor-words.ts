import type { Environment } from '../db/schema.js';

/** What the authenticator app lists the account under. */
export function totpIssuer(environment: Environment): string {
  return environment === 'sandbox' ? 'Almoner sandbox' : 'Almoner';
}

/** The one message for a refused code (wrong, used, expired or throttled). */
export function codeFailure(retryAfterSeconds?: number): string {
  if (retryAfterSeconds) return `Too many wrong codes. Try again in ${Math.ceil(retryAfterSeconds / 60)} minute${retryAfterSeconds > 60 ? 's' : ''}.`;
  return 'That code did not work. Enter the current code from your app, or one of your recovery codes.';
}

/** The one message for a refused passkey answer (wrong, stale, another user's or throttled). */
export function passkeyFailure(retryAfterSeconds?: number): string {
  return retryAfterSeconds ? codeFailure(retryAfterSeconds) : 'That passkey did not work. Try it again, or enter a code.';
}
