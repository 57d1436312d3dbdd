-- The kinds of the whole published API (docs/api.md, "Organization kinds"): grantmakers send
-- disbursements, platforms create Connects and capture DAF grants, lockbox providers receive mail.
alter table organizations drop constraint organizations_kind_check;
alter table organizations add constraint organizations_kind_check
  check (kind in ('nonprofit', 'fund_provider', 'grantmaker', 'platform', 'lockbox_provider'));
