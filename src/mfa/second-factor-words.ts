import type { Environment } from '../db/schema.js';

/** What the authenticator app lists the account under. */
export function totpIssuer(environment: Environment): string {
  return environment === 'sandbox' ? 'Almoner sandbox' : 'Almoner';
}

/** The one message for a refused code (wrong, used, expired or throttled). */
export function codeFailure(retryAfterSeconds?: number): string {
  if (retryAfterSeconds)
    return `Too many wrong codes. Try again in ${Math.ceil(retryAfterSeconds / 60)} minute${retryAfterSeconds > 60 ? 's' : ''}.`;
  return 'That code did not work. Enter the current code from your app, or one of your recovery codes.';
}

/** The one message for a refused passkey answer (wrong, stale, another user's or throttled). */
export function passkeyFailure(retryAfterSeconds?: number): string {
  return retryAfterSeconds ? codeFailure(retryAfterSeconds) : 'That passkey did not work. Try it again, or enter a code.';
}

/**
 * The one message for a refused passkey sign-in without a password: past the limit, it is the
 * caller's network that waits (passwordless failures count by address, not against an account).
 */
export function passwordlessFailure(retryAfterSeconds?: number): string | undefined {
  if (!retryAfterSeconds) return undefined;
  return `Too many passkey sign-ins failed from your network. Try again in ${Math.ceil(retryAfterSeconds / 60)} minute${retryAfterSeconds > 60 ? 's' : ''}, or sign in with your password.`;
}
