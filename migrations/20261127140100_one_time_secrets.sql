-- A secret shown once after a form (a new API key): sealed under the secrets key, kept for a
-- few minutes under the SHA-256 of a random single-use id bound to the browser session that
-- made it, and deleted as it is shown (src/keys/one-time-secrets.ts). The page the form
-- redirects to shows it; a reload finds nothing, so nothing is made twice.
create table one_time_secrets (
  id text primary key,
  purpose text not null,
  binding text not null,
  sealed text not null,
  expires_at timestamptz not null
);
create index one_time_secrets_expires_idx on one_time_secrets (expires_at);
