-- E-mail addresses are stored and looked up in Unicode NFC from now on (docs/accounts.md,
-- "E-mail addresses"): the forms and commands normalise what is typed, so an address stored in
-- another form would no longer be found. The stored ones are normalised here. An address whose
-- NFC form another account (or another open invitation of the organization) already has is
-- left as it was, as is the second of two that differ only in form: a unique key cannot hold
-- both, and which account is the person's is not the migration's to decide. normalize() needs
-- a UTF8 database; in any other encoding the addresses are left alone.
do $$
begin
  if current_setting('server_encoding') <> 'UTF8' then
    return;
  end if;

  with candidates as (
    select id, normalize(email, NFC) as nfc,
           row_number() over (partition by normalize(email, NFC) order by created_at, id) as n
      from users
     where email is not nfc normalized)
  update users u
     set email = c.nfc, updated_at = now()
    from candidates c
   where u.id = c.id and c.n = 1
     and not exists (select 1 from users o where o.email = c.nfc);

  -- Closed invitations (accepted, revoked) are not unique by address; open ones are, per
  -- organization (invitations_open_key).
  update invitations
     set email = normalize(email, NFC)
   where email is not nfc normalized
     and (accepted_at is not null or revoked_at is not null);

  with candidates as (
    select id, organization_id, normalize(email, NFC) as nfc,
           row_number() over (partition by organization_id, normalize(email, NFC) order by created_at, id) as n
      from invitations
     where email is not nfc normalized and accepted_at is null and revoked_at is null)
  update invitations i
     set email = c.nfc
    from candidates c
   where i.id = c.id and c.n = 1
     and not exists (select 1 from invitations o
                      where o.organization_id = c.organization_id and o.email = c.nfc
                        and o.accepted_at is null and o.revoked_at is null);
end $$;
