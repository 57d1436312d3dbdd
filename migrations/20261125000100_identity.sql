-- The identity lifecycle (docs/accounts.md): invitations, password resets, second factors
-- (TOTP with recovery codes, passkeys), the organization and client settings that require a
-- second factor, and one table of atomic attempt counters for the limits that guard them.

-- When the password last changed (set by a reset, a change, an invitation's first password).
alter table users add column password_changed_at timestamptz;

-- An organization may require a second factor of all its staff; a client may require one of
-- whoever approves it (clients file field require_mfa).
alter table organizations add column require_mfa boolean not null default false;
alter table oauth_clients add column require_mfa boolean not null default false;

-- An invitation to join an organization with a role. The link's token is stored only as its
-- SHA-256; the row records which dashboard (environment) the link points at.
create table invitations (
  id              uuid primary key default gen_random_uuid(),
  organization_id uuid not null references organizations (id) on delete cascade,
  email           text not null check (email = lower(btrim(email)) and email ~ '^[^@\s]+@[^@\s]+$' and length(email) <= 254),
  role            text not null check (role in ('owner', 'admin', 'member', 'read_only')),
  token_hash      text not null,
  environment     text not null check (environment in ('production', 'sandbox')),
  invited_by      uuid references users (id) on delete set null,
  created_at      timestamptz not null default now(),
  expires_at      timestamptz not null,
  accepted_at     timestamptz,
  accepted_by     uuid references users (id) on delete set null,
  revoked_at      timestamptz,
  constraint invitations_token_hash_key unique (token_hash)
);
-- One open invitation per address and organization: inviting again replaces it.
create unique index invitations_open_key on invitations (organization_id, email) where accepted_at is null and revoked_at is null;

-- A password-reset link: the token as its SHA-256, single use, short-lived.
create table password_resets (
  token_hash text primary key,
  user_id    uuid not null references users (id) on delete cascade,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at    timestamptz
);
create index password_resets_user_idx on password_resets (user_id);

-- A user's authenticator-app (TOTP, RFC 6238) secret, sealed with the secrets key. Pending
-- until confirmed with a first code; last_time_step is the highest time step accepted, so no
-- code is accepted twice.
create table totp_credentials (
  user_id        uuid primary key references users (id) on delete cascade,
  secret         text not null,
  confirmed_at   timestamptz,
  last_time_step bigint,
  created_at     timestamptz not null default now()
);

-- Single-use recovery codes (80 random bits each), stored as SHA-256.
create table recovery_codes (
  user_id    uuid not null references users (id) on delete cascade,
  code_hash  text not null,
  created_at timestamptz not null default now(),
  used_at    timestamptz,
  constraint recovery_codes_pkey primary key (user_id, code_hash)
);

-- Passkeys (WebAuthn credentials): a second factor and a passwordless sign-in.
create table webauthn_credentials (
  id           text primary key,
  user_id      uuid not null references users (id) on delete cascade,
  public_key   bytea not null,
  counter      bigint not null default 0,
  transports   text[] not null default '{}',
  device_type  text not null check (device_type in ('singleDevice', 'multiDevice')),
  backed_up    boolean not null,
  name         text not null check (length(name) between 1 and 100),
  created_at   timestamptz not null default now(),
  last_used_at timestamptz
);
create index webauthn_credentials_user_idx on webauthn_credentials (user_id);

-- WebAuthn challenges, single use: the browser's cookie names one by its SHA-256.
create table webauthn_challenges (
  id         text primary key,
  challenge  text not null,
  purpose    text not null check (purpose in ('register', 'authenticate')),
  user_id    uuid references users (id) on delete cascade,
  expires_at timestamptz not null
);
create index webauthn_challenges_expires_idx on webauthn_challenges (expires_at);

-- Fixed-window attempt counters: one row per guarded key (a purpose and a keyed hash), taken
-- with one upsert before the guarded work, so concurrent attempts serialise on the row.
create table attempt_counters (
  key            text primary key,
  count          integer not null check (count >= 0),
  window_ends_at timestamptz not null
);
create index attempt_counters_window_idx on attempt_counters (window_ends_at);

-- Ending every browser session of a user (password reset, disable) finds them by account.
create index oidc_models_session_account_idx on oidc_models ((payload ->> 'accountId')) where model = 'Session';

-- The organization's audit log, newest first, page by page (keyset on id).
create index audit_events_org_id_idx on audit_events (organization_id, id desc) where organization_id is not null;
