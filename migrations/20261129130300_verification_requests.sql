-- Verification requests (docs/directory.md, "Verification requests"): a grantmaker asks for an
-- organization the directory does not list to be verified. organization_id is the Organization
-- the request names from the start: an approval lists it in the directory under that id, so
-- every request for one EIN names the same one (the service reuses it).
create table verification_requests (
  id                 text primary key,
  environment        text not null check (environment in ('production', 'sandbox')),
  grantmaker_id      uuid not null references organizations (id) on delete cascade,
  ein                text not null check (ein ~ '^[0-9]{9}$'),
  organization_name  text not null check (btrim(organization_name) <> ''),
  organization_id    text not null check (organization_id ~ '^org_[0-9a-f]{32}$'),
  status             text not null default 'needs_review' check (status in ('needs_review', 'verified', 'failed')),
  website            text,
  contact_email      text,
  mailing_line1      text not null,
  mailing_line2      text,
  mailing_city       text not null,
  mailing_state      text not null,
  mailing_zip_code   text not null,
  verified_at        timestamptz,
  failed_at          timestamptz,
  created_at         timestamptz not null default now(),
  updated_at         timestamptz not null default now(),
  check ((status = 'verified') = (verified_at is not null) and (status = 'failed') = (failed_at is not null))
);
-- One open request per grantmaker, environment and EIN: a second is a duplicate (409).
create unique index verification_requests_open_key on verification_requests (environment, grantmaker_id, ein)
  where status = 'needs_review';
create index verification_requests_page_idx on verification_requests (grantmaker_id, environment, created_at desc, id desc);
create index verification_requests_ein_idx on verification_requests (ein);

-- A verified request lists its organization in the directory.
alter table directory_organizations drop constraint directory_organizations_source_check;
alter table directory_organizations add constraint directory_organizations_source_check
  check (source in ('irs_bmf', 'demo', 'verification_request'));
