-- OAuth 2.0 / OpenID Connect core: the provider's state, clients, authorizations and keys.
-- Everything here belongs to exactly one environment.

-- One table for every oidc-provider model (Logto's shape). Ids are SHA-256 hashes of the
-- provider's ids, so a copy of this table holds no usable token, code or session.
create table oidc_models (
  environment text not null check (environment in ('production', 'sandbox')),
  model       text not null,
  id          text not null,
  payload     jsonb not null,
  grant_id    text,
  uid         text,
  expires_at  timestamptz,
  consumed_at timestamptz,
  constraint oidc_models_pkey primary key (environment, model, id)
);
create index oidc_models_grant_idx on oidc_models (environment, model, grant_id) where grant_id is not null;
create index oidc_models_uid_idx on oidc_models (environment, uid) where uid is not null;
create index oidc_models_expires_idx on oidc_models (expires_at) where expires_at is not null;

-- With refresh_reuse_grace_seconds > 0, a concurrent duplicate refresh gets the same new pair.
-- The pair is kept encrypted with a key derived from the presented refresh token itself, so
-- only a holder of that token can read it; rows live for the grace window only.
create table oidc_refresh_successors (
  environment text not null check (environment in ('production', 'sandbox')),
  id          text not null,
  ciphertext  text not null,
  expires_at  timestamptz not null,
  constraint oidc_refresh_successors_pkey primary key (environment, id)
);

-- Registered clients, synced from config/clients.json (the source of truth) by every process.
create table oauth_clients (
  environment        text not null check (environment in ('production', 'sandbox')),
  client_id          text not null,
  client_secret_hash text not null,
  name               text not null,
  logo_uri           text,
  redirect_uris      text[] not null,
  scopes             text[] not null,
  subject_type       text not null default 'user' check (subject_type in ('user', 'organization')),
  ip_allow_list      text[] not null default '{}',
  created_at         timestamptz not null default now(),
  updated_at         timestamptz not null default now(),
  constraint oauth_clients_pkey primary key (client_id)
);
create index oauth_clients_environment_idx on oauth_clients (environment, client_id);

-- One row per authorization (oidc-provider Grant): who approved it, for which nonprofit,
-- with which subject. The provider's Grant model cannot carry these fields itself.
create table oauth_authorizations (
  grant_id        text primary key,
  environment     text not null check (environment in ('production', 'sandbox')),
  client_id       text not null,
  subject_type    text not null check (subject_type in ('user', 'organization')),
  user_id         uuid not null references users (id) on delete cascade,
  organization_id uuid not null references organizations (id) on delete cascade,
  scopes          text[] not null,
  created_at      timestamptz not null default now(),
  expires_at      timestamptz not null,
  last_used_at    timestamptz,
  revoked_at      timestamptz,
  revoked_reason  text
);
create index oauth_authorizations_user_idx on oauth_authorizations (user_id, environment) where revoked_at is null;
create index oauth_authorizations_org_idx on oauth_authorizations (organization_id, environment) where revoked_at is null;

-- Signing keys per environment. 'next' keys are published before they sign; 'previous'
-- keys stay published until tokens they signed have expired (retire_after).
create table signing_keys (
  environment  text not null check (environment in ('production', 'sandbox')),
  kid          text not null,
  alg          text not null check (alg in ('ES256', 'RS256')),
  state        text not null check (state in ('next', 'current', 'previous')),
  private_jwk  jsonb not null,
  created_at   timestamptz not null default now(),
  activated_at timestamptz,
  retire_after timestamptz,
  constraint signing_keys_pkey primary key (kid)
);
create unique index signing_keys_current_idx on signing_keys (environment, alg) where state = 'current';
create unique index signing_keys_next_idx on signing_keys (environment, alg) where state = 'next';

-- Generated secrets (cookie signing keys and the like), created once on first start.
create table server_secrets (
  name       text primary key,
  value      text not null,
  created_at timestamptz not null default now()
);
