-- FDX consent grants (docs/api.md, "FDX bank-data API", Consents): what the approver of a bank-data
-- client's authorization chose to share when the client pushed an FDX consent request (RFC 9396
-- authorization_details of type fdx_v1.0). One per authorization (grant_id); every FDX call made
-- with a token of that authorization is held to it. `id` is the FDX consentId: 128 random bits,
-- base64url, so it cannot be guessed. Rows are kept after revocation and expiry, as the record.
create table fdx_consents (
  id                   text primary key,
  environment          text not null check (environment in ('production', 'sandbox')),
  organization_id      uuid not null references organizations (id) on delete cascade,
  client_id            text not null,
  grant_id             text not null unique references oauth_authorizations (grant_id) on delete cascade,
  -- The approver.
  user_id              uuid not null references users (id) on delete cascade,
  -- EXPIRED is also reported on read once expires_at has passed; the chores' sweep writes it.
  status               text not null default 'ACTIVE' check (status in ('ACTIVE', 'EXPIRED', 'REVOKED')),
  duration_type        text not null check (duration_type in ('ONE_TIME', 'TIME_BOUND', 'PERSISTENT')),
  duration_period      integer check (duration_period between 1 and 365),
  -- Days of history a call may see, measured back from the call (365 when the request named none).
  lookback_period      integer not null check (lookback_period between 0 and 730),
  -- What was granted: [{resourceType, resourceId, dataClusters}], one ACCOUNT entry per chosen
  -- account, one CUSTOMER entry (the organization's id) when asked.
  resources            jsonb not null check (jsonb_typeof(resources) = 'array'),
  created_at           timestamptz not null default now(),
  updated_at           timestamptz not null default now(),
  expires_at           timestamptz not null,
  revoked_at           timestamptz,
  revocation_reason    text check (revocation_reason in ('BUSINESS_RULE', 'USER_ACTION')),
  revocation_initiator text check (revocation_initiator in ('DATA_ACCESS_PLATFORM', 'DATA_PROVIDER', 'DATA_RECIPIENT', 'INDIVIDUAL', 'MERCHANT', 'VENDOR')),
  constraint fdx_consents_revoked_check check (
    (status = 'REVOKED') = (revoked_at is not null)
    and (revoked_at is null) = (revocation_reason is null)
    and (revoked_at is null) = (revocation_initiator is null)),
  constraint fdx_consents_expiry_check check (expires_at > created_at)
);
-- A recipient's consents (the Consent API), an organization's (its connected applications).
create index fdx_consents_client_idx on fdx_consents (client_id);
create index fdx_consents_organization_idx on fdx_consents (organization_id);
-- The sweep that marks consents past their expiry.
create index fdx_consents_due_idx on fdx_consents (expires_at) where status = 'ACTIVE';
