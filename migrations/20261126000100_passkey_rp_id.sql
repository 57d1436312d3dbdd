-- A passkey belongs to the relying party it was made for (WebAuthn binds it to an RP ID):
-- the dashboard's host name, or the shared passkey_rp_id (docs/oauth.md, "Second factors
-- and step-up"). Pages offer and accept only the passkeys of their own RP ID.
alter table webauthn_credentials add column rp_id text not null default '';
alter table webauthn_credentials alter column rp_id drop default;
