-- Recipient suggestions (docs/directory.md, "Address and contact suggestions"): mailing addresses
-- and contacts grantmakers upload for directory organizations, by EIN, recorded for review. Rows
-- are only added; the newest of an EIN is its latest suggestion.
create table nonprofit_address_suggestions (
  id             text primary key,
  environment    text not null check (environment in ('production', 'sandbox')),
  grantmaker_id  uuid not null references organizations (id) on delete cascade,
  ein            text not null check (ein ~ '^[0-9]{9}$'),
  line1          text not null,
  line2          text,
  city           text not null,
  state          text not null check (state ~ '^[A-Z]{2}$'),
  zip            text not null check (zip ~ '^[0-9]{5}(-[0-9]{4})?$'),
  created_at     timestamptz not null default now()
);
create index nonprofit_address_suggestions_ein_idx on nonprofit_address_suggestions (ein, created_at desc);

create table nonprofit_contact_suggestions (
  id             text primary key,
  environment    text not null check (environment in ('production', 'sandbox')),
  grantmaker_id  uuid not null references organizations (id) on delete cascade,
  ein            text not null check (ein ~ '^[0-9]{9}$'),
  email          text not null,
  phone          text,
  first_name     text,
  last_name      text,
  created_at     timestamptz not null default now()
);
create index nonprofit_contact_suggestions_ein_idx on nonprofit_contact_suggestions (ein, created_at desc);
