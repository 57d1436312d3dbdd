-- Client profiles (docs/bank-data.md, "Profiles"): a `standard` client authenticates with its
-- secret (client_secret_basic); a `fapi2` client (FAPI 2.0 Security Profile) with a JWT signed
-- by one of its registered keys (private_key_jwt), so it has keys and no secret.
alter table oauth_clients add column profile text not null default 'standard' check (profile in ('standard', 'fapi2'));
alter table oauth_clients add column jwks jsonb;
alter table oauth_clients add column jwks_uri text;
alter table oauth_clients alter column client_secret_hash drop not null;
alter table oauth_clients add constraint oauth_clients_profile_credentials check (
  (profile = 'standard' and client_secret_hash is not null and jwks is null and jwks_uri is null)
  or (profile = 'fapi2' and client_secret_hash is null and ((jwks is null) <> (jwks_uri is null)))
);
