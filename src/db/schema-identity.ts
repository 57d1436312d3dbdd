import type { Generated } from 'kysely';
import { columns, type CreatedAt } from './column-types.js';
import type { Environment, Role } from './schema.js';

/** Table types of the identity lifecycle (migration 20261125000100): invitations, resets, second factors, attempt counters. */

export interface InvitationsTable {
  id: Generated<string>;
  organization_id: string;
  email: string;
  role: Role;
  token_hash: string;
  environment: Environment;
  invited_by: string | null;
  created_at: CreatedAt;
  expires_at: Date;
  accepted_at: Date | null;
  accepted_by: string | null;
  revoked_at: Date | null;
}

export interface PasswordResetsTable {
  token_hash: string;
  user_id: string;
  created_at: CreatedAt;
  expires_at: Date;
  used_at: Date | null;
}

export interface TotpCredentialsTable {
  user_id: string;
  /** Sealed with the secrets key (SecretBox). */
  secret: string;
  confirmed_at: Date | null;
  /** bigint, read as a string. */
  last_time_step: string | null;
  created_at: CreatedAt;
}

export interface RecoveryCodesTable {
  user_id: string;
  code_hash: string;
  created_at: CreatedAt;
  used_at: Date | null;
}

export type WebauthnDeviceType = 'singleDevice' | 'multiDevice';

export interface WebauthnCredentialsTable {
  id: string;
  user_id: string;
  public_key: Buffer;
  /** bigint, read as a string. */
  counter: Generated<string>;
  transports: Generated<string[]>;
  device_type: WebauthnDeviceType;
  backed_up: boolean;
  name: string;
  /** The relying party (WebAuthn RP ID) the passkey was made for. */
  rp_id: string;
  created_at: CreatedAt;
  last_used_at: Date | null;
}

export interface WebauthnChallengesTable {
  id: string;
  challenge: string;
  purpose: 'register' | 'authenticate';
  user_id: string | null;
  expires_at: Date;
}

export interface AttemptCountersTable {
  key: string;
  count: number;
  window_ends_at: Date;
}

/** A value presented once (a client assertion's or a DPoP proof's jti): limits/replay-marks-repository.ts. */
export interface ReplayMarksTable {
  environment: 'production' | 'sandbox';
  scope: string;
  key: string;
  expires_at: Date;
}

/** Our record of each signed-in browser session (identity/browser-sessions-repository.ts). */
export interface BrowserSessionsTable {
  id: Generated<string>;
  environment: Environment;
  /** The provider Session's uid (not its id, which is the cookie's value). */
  session_uid: string;
  user_id: string;
  credentials_epoch: number;
  amr: string[];
  signed_in_at: Date;
  factor_proved_at: Date | null;
  last_seen_at: Generated<Date>;
  ip: string | null;
  user_agent: string | null;
  expires_at: Date;
}

export interface IdentityDatabase {
  browser_sessions: BrowserSessionsTable;
  invitations: InvitationsTable;
  password_resets: PasswordResetsTable;
  totp_credentials: TotpCredentialsTable;
  recovery_codes: RecoveryCodesTable;
  webauthn_credentials: WebauthnCredentialsTable;
  webauthn_challenges: WebauthnChallengesTable;
  attempt_counters: AttemptCountersTable;
  replay_marks: ReplayMarksTable;
}

export const IDENTITY_TABLE_COLUMNS = {
  invitations: columns<InvitationsTable>()([
    'id',
    'organization_id',
    'email',
    'role',
    'token_hash',
    'environment',
    'invited_by',
    'created_at',
    'expires_at',
    'accepted_at',
    'accepted_by',
    'revoked_at',
  ]),
  password_resets: columns<PasswordResetsTable>()(['token_hash', 'user_id', 'created_at', 'expires_at', 'used_at']),
  totp_credentials: columns<TotpCredentialsTable>()(['user_id', 'secret', 'confirmed_at', 'last_time_step', 'created_at']),
  recovery_codes: columns<RecoveryCodesTable>()(['user_id', 'code_hash', 'created_at', 'used_at']),
  webauthn_credentials: columns<WebauthnCredentialsTable>()([
    'id',
    'user_id',
    'public_key',
    'counter',
    'transports',
    'device_type',
    'backed_up',
    'name',
    'rp_id',
    'created_at',
    'last_used_at',
  ]),
  webauthn_challenges: columns<WebauthnChallengesTable>()(['id', 'challenge', 'purpose', 'user_id', 'expires_at']),
  attempt_counters: columns<AttemptCountersTable>()(['key', 'count', 'window_ends_at']),
  replay_marks: columns<ReplayMarksTable>()(['environment', 'scope', 'key', 'expires_at']),
  browser_sessions: columns<BrowserSessionsTable>()([
    'id',
    'environment',
    'session_uid',
    'user_id',
    'credentials_epoch',
    'amr',
    'signed_in_at',
    'factor_proved_at',
    'last_seen_at',
    'ip',
    'user_agent',
    'expires_at',
  ]),
} satisfies { [K in keyof IdentityDatabase]: readonly string[] };
