/**
 * Every rate limit, one name per use: what it counts, at most how many (`max`) per window
 * (`windowSeconds`), and where it is counted (`store`). docs/security.md ("Rate limits") lists
 * them under the same names. Every limit that guards work is reserved before that work, in
 * one atomic step per key, so a concurrent burst cannot all pass a count none has reached.
 *
 * The stores are different mechanisms on purpose:
 * - `attempt_counters`: fixed windows in PostgreSQL, one upsert per key (AttemptCounter);
 * - `login_throttle`: a failure budget that starts a progressive lockout (LoginThrottle);
 * - `donor_token_verify_limits`: one conditional upsert per provider and environment;
 * - `process memory`: per process, no round trip, where the guarded work is argon2 on a token
 *   request (ClientSecretCache).
 */

export type LimitStore = 'attempt_counters' | 'login_throttle' | 'donor_token_verify_limits' | 'process memory';

export interface RateLimit {
  /** At most this many per window (a failure budget counts attempts in flight as failures). */
  max: number;
  windowSeconds: number;
  store: LimitStore;
}

/** A limit counted in attempt_counters; `name` prefixes its keys there. */
export interface AttemptLimit extends RateLimit {
  store: 'attempt_counters';
  name: string;
}

/**
 * A sign-in failure budget: `max` failures within `windowSeconds` lock the key for
 * `baseLockSeconds`; each further lockout within `historySeconds` doubles it, up to
 * `maxLockSeconds`. `name` prefixes its rows in login_throttle.
 */
export interface LockoutPolicy extends RateLimit {
  store: 'login_throttle';
  name: string;
  baseLockSeconds: number;
  maxLockSeconds: number;
  historySeconds: number;
}

const MINUTE = 60;
const HOUR = 3600;

/** Failed sign-ins per account: the e-mail address typed, known or not, so a lockout reveals nothing about existence. */
export const signInFailuresPerAccount: LockoutPolicy = {
  store: 'login_throttle',
  name: 'account',
  max: 5,
  windowSeconds: 15 * MINUTE,
  baseLockSeconds: MINUTE,
  maxLockSeconds: HOUR,
  historySeconds: 24 * HOUR,
};
/** Failed sign-ins per caller address (IPv6 by /64): slows a password spray across many accounts. */
export const signInFailuresPerCallerAddress: LockoutPolicy = {
  store: 'login_throttle',
  name: 'address',
  max: 20,
  windowSeconds: 15 * MINUTE,
  baseLockSeconds: 5 * MINUTE,
  maxLockSeconds: HOUR,
  historySeconds: 24 * HOUR,
};

/** Password reset requests per e-mail address typed, reserved before any lookup. */
export const resetRequestsPerEmail: AttemptLimit = { store: 'attempt_counters', name: 'reset_address', max: 3, windowSeconds: HOUR };
/** Password reset requests per caller address. */
export const resetRequestsPerCallerAddress: AttemptLimit = { store: 'attempt_counters', name: 'reset_ip', max: 20, windowSeconds: HOUR };

/**
 * Wrong current passwords per user, on every form that asks for it again (changing the
 * password, removing a second factor, new recovery codes): a stolen session must not become a
 * password-guessing oracle. One budget for all of them.
 */
export const currentPasswordFailures: AttemptLimit = {
  store: 'attempt_counters',
  name: 'current_password_user',
  max: 5,
  windowSeconds: 15 * MINUTE,
};

/** Wrong second-factor answers per user (app, recovery or passkey; after the password or at a step-up). */
export const secondFactorFailures: AttemptLimit = {
  store: 'attempt_counters',
  name: 'second_factor_user',
  max: 5,
  windowSeconds: 15 * MINUTE,
};

/**
 * Answers to a passwordless sign-in, per caller address (IPv6 by its /64), and per address and
 * passkey named (docs/security.md, "Locking out a passkey user by naming their credential").
 * Such an answer has proved nothing yet, and a credential id is no secret, so its failures
 * count against where it came from: counted against the named user, anyone holding the id
 * could use up that user's second-factor budget, renewably.
 */
export const passkeyAnswersPerCallerAddress: AttemptLimit = {
  store: 'attempt_counters',
  name: 'passkey_sign_in_ip',
  max: 20,
  windowSeconds: 15 * MINUTE,
};
export const passkeyAnswersPerCallerAddressAndPasskey: AttemptLimit = {
  store: 'attempt_counters',
  name: 'passkey_sign_in_ip_credential',
  max: 5,
  windowSeconds: 15 * MINUTE,
};

/**
 * Passwordless passkey sign-ins started (options asked: anybody may ask, and a browser that
 * never sends the cookie back gets a new challenge row each time) per caller address (IPv6 by
 * its /64), reserved before the row is written (docs/security.md, "Flooding the passkey
 * challenge table"). A passwordless sign-in that succeeds gives its point back, so
 * only challenges never answered count: people signing in one after another behind one
 * address never reach it.
 */
export const passkeySignInsStartedPerCallerAddress: AttemptLimit = {
  store: 'attempt_counters',
  name: 'passkey_options_ip',
  max: 30,
  windowSeconds: 15 * MINUTE,
};

/**
 * Invitations the dashboard sends per organization (docs/accounts.md, "Invitations"): each
 * sends an e-mail to an address of the inviter's choosing, so a stolen or careless Owner
 * session is not a mail cannon. Given back when none is sent; the maker's CLI is not limited.
 */
export const invitationsPerOrganization: AttemptLimit = { store: 'attempt_counters', name: 'invitation_org', max: 20, windowSeconds: HOUR };

/**
 * The donor flow's authorizations (docs/giving.md, "Security of the flow"): each writes a
 * workflow session (an unintegrated DAF's, a grant too), and anyone may open the flow, so they
 * are counted per caller address (IPv6 by its /64) and per Connect, reserved before the write
 * and never given back.
 */
export const donorFlowAuthorizationsPerCallerAddress: AttemptLimit = {
  store: 'attempt_counters',
  name: 'donor_flow_authorize_ip',
  max: 10,
  windowSeconds: HOUR,
};
export const donorFlowAuthorizationsPerConnect: AttemptLimit = {
  store: 'attempt_counters',
  name: 'donor_flow_authorize_connect',
  max: 500,
  windowSeconds: HOUR,
};
/** Codes from a DAF typed into the donor flow, per caller address and per Connect; a code that approves the account gives its points back. */
export const donorFlowCodeAttemptsPerCallerAddress: AttemptLimit = {
  store: 'attempt_counters',
  name: 'donor_flow_code_ip',
  max: 5,
  windowSeconds: 15 * MINUTE,
};
export const donorFlowCodeAttemptsPerConnect: AttemptLimit = {
  store: 'attempt_counters',
  name: 'donor_flow_code_connect',
  max: 50,
  windowSeconds: 15 * MINUTE,
};

/** Failed DAF code verifications per fund provider and environment; the window starts at its first attempt. */
export const dafVerifyFailures: RateLimit = { store: 'donor_token_verify_limits', max: 10, windowSeconds: 15 * MINUTE };

/** Failed client-secret checks per client and caller address (IPv6 by /64), before argon2 stops running for them. */
export const clientSecretFailuresPerCallerAddress: RateLimit = { store: 'process memory', max: 10, windowSeconds: MINUTE };
/** Failed client-secret checks per client from all addresses together (addresses its right secret came from in the last day excepted). */
export const clientSecretFailuresPerClient: RateLimit = { store: 'process memory', max: 50, windowSeconds: MINUTE };

/** Every limit by its name, for the table in docs/security.md. */
export const rateLimits = {
  signInFailuresPerAccount,
  signInFailuresPerCallerAddress,
  resetRequestsPerEmail,
  resetRequestsPerCallerAddress,
  currentPasswordFailures,
  secondFactorFailures,
  passkeyAnswersPerCallerAddress,
  passkeyAnswersPerCallerAddressAndPasskey,
  passkeySignInsStartedPerCallerAddress,
  invitationsPerOrganization,
  donorFlowAuthorizationsPerCallerAddress,
  donorFlowAuthorizationsPerConnect,
  donorFlowCodeAttemptsPerCallerAddress,
  donorFlowCodeAttemptsPerConnect,
  dafVerifyFailures,
  clientSecretFailuresPerCallerAddress,
  clientSecretFailuresPerClient,
} satisfies Record<string, RateLimit>;
