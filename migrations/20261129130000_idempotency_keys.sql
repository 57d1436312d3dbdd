-- Idempotency keys of the gateway's creating POSTs (docs/api.md, "Idempotency"): one row per
-- (environment, organization, key), held locked by the request that runs under it, so two
-- requests with one key create once. The organization is the one the credential acts for: its
-- API keys and its access tokens share one key space. operation and fingerprint (SHA-256 of the
-- canonical request) tell a replay from another request under the same key. status is null
-- while the first request runs (never seen committed: the row and the answer commit together);
-- the answer's body is sealed under the secrets key, since a creation may answer a secret shown
-- once (an authorization token's code, a generated signing secret). Rows older than 24 hours are
-- replaced by the next request with their key and deleted by the sweep.
create table idempotency_keys (
  environment   text not null check (environment in ('production', 'sandbox')),
  organization_id uuid not null references organizations (id) on delete cascade,
  key           text not null check (key ~ '^[!-~]{1,255}$'),
  operation     text not null check (operation <> ''),
  fingerprint   text not null check (fingerprint ~ '^[0-9a-f]{64}$'),
  status        integer check (status between 200 and 499),
  body_sealed   text,
  location      text,
  created_at    timestamptz not null default now(),
  primary key (environment, organization_id, key),
  check ((status is null) = (body_sealed is null))
);

create index idempotency_keys_created_at_idx on idempotency_keys (created_at);
