-- An FDX consent is PENDING from its approval until its authorization code is exchanged, when it
-- becomes ACTIVE (docs/bank-data.md, "Consents"); one that is never collected lapses (EXPIRED).
-- While PENDING, expires_at is when it lapses; becoming ACTIVE sets it to the consent's end.
-- A recipient holds one live consent per organization: one collected revokes the others (the
-- index finds them).
alter table fdx_consents drop constraint fdx_consents_status_check;
alter table fdx_consents add constraint fdx_consents_status_check check (status in ('PENDING', 'ACTIVE', 'EXPIRED', 'REVOKED'));
alter table fdx_consents alter column status set default 'PENDING';
drop index fdx_consents_due_idx;
create index fdx_consents_due_idx on fdx_consents (expires_at) where status in ('PENDING', 'ACTIVE');
create index fdx_consents_recipient_idx on fdx_consents (environment, client_id, organization_id) where status in ('PENDING', 'ACTIVE');
