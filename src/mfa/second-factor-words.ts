import type { Environment } from '../db/schema.js';

/** What the authenticator app lists the account under. */
export function totpIssuer(environment: Environment): string {
  return environment === 'sandbox' ? 'Almoner sandbox' : 'Almoner';
}

/** Which kind of right code was refused because it had been used: the app's, or a recovery code. */
export type UsedCode = 'app' | 'recovery';

/**
 * The message for a refused code: throttled; right but used already (each app code and each
 * recovery code works once, so the person needs the next one, not a retyped one); or wrong or
 * expired.
 */
export function codeFailure(retryAfterSeconds?: number, used?: UsedCode): string {
  if (retryAfterSeconds)
    return `Too many wrong codes. Try again in ${Math.ceil(retryAfterSeconds / 60)} minute${retryAfterSeconds > 60 ? 's' : ''}.`;
  if (used === 'app')
    return 'That code was already used: each code works once. Wait for the next code from your app, or enter one of your recovery codes.';
  if (used === 'recovery')
    return 'That recovery code was already used: each works once. Enter another one, or the current code from your app.';
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
