-- Server keys (cookie signing keys, the CSRF key, the client-auth cache key, the hashing key)
-- become versioned so they can be rotated: `admin keys rotate --kind server` adds a version
-- that starts signing at activates_at (after every running process has loaded it); older
-- versions keep verifying until what they signed has expired (src/keys/server-keys.ts).
-- Values are sealed with the secrets key, as before.
create table server_keys (
  name         text not null,
  kid          text not null check (kid ~ '^[0-9a-f]{12}$'),
  value        text not null,
  created_at   timestamptz not null default now(),
  activates_at timestamptz not null,
  primary key (name, kid)
);

-- Each existing secret is its name's first version, signing since it was created.
insert into server_keys (name, kid, value, created_at, activates_at)
select name, substr(replace(gen_random_uuid()::text, '-', ''), 1, 12), value, created_at, created_at from server_secrets;
drop table server_secrets;

-- Throttle keys become HMACs under the hashing key. The rows keyed by plain SHA-256 of e-mail
-- and IP addresses are dropped rather than kept: a dictionary finds the addresses behind them,
-- and they would never be read again. Counters and lockouts in force restart once, at upgrade.
delete from login_throttle;

-- What was typed into the e-mail field of a failed sign-in was recorded in clear. Rows that
-- name no account lose it (it may be a mistyped address or a password typed in the wrong
-- field); an account's own address, which `users` holds anyway, stays.
update audit_events a
set details = (a.details - 'email') || '{"email_removed_at_upgrade": true}'::jsonb
where a.event in ('login.failed', 'login.locked_out')
  and a.details ? 'email'
  and not exists (select 1 from users u where u.email = a.details ->> 'email');

-- DAF code hashes are now "<kid>.<HMAC-SHA-256>" under the hashing key; codes issued before
-- this migration keep their plain SHA-256 (hex) and still verify until they expire (90 days at
-- most), through a legacy lookup in src/gateway/daf/tokens-service.ts. Used, revoked and
-- expired codes have no use for theirs.
update donor_authorization_tokens set code_hash = 'retired:' || id where status <> 'pending' or expires_at <= now();
