/** One message for an unknown address, a wrong password and a disabled account alike. */
export const SIGN_IN_FAILED = 'That e-mail address and password do not match an account. Check them and try again.';
/** A passkey that did not sign anybody in (unknown, another site's, stale or replayed answer). */
export const PASSKEY_SIGN_IN_FAILED = 'That passkey did not sign you in. Try again, or use your e-mail address and password.';

function duration(seconds: number): string {
  if (seconds < 60) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}

/** The lockout page's message: what happened, for how long, and that nothing else is wrong. */
export function lockoutMessage(retryAfterSeconds: number): string {
  return `Too many unsuccessful sign-in attempts. For your security, signing in is paused for ${duration(retryAfterSeconds)}. Try again after that.`;
}
