-- Gift processing (docs/gift-processing.md): payment sources on a nonprofit's processing account,
-- lockboxes a lockbox provider runs for it, the mail batches the provider uploads, the mail items
-- and scans a batch becomes, the deposits and donations they produce, and the nonprofit's own
-- properties on donations and deposits. Money records are not deleted with their organization.

create table payment_sources (
  id                   text primary key check (id ~ '^payment_source_[0-9a-z]{26}$'),
  environment          text not null check (environment in ('production', 'sandbox')),
  organization_id      uuid not null references organizations (id) on delete restrict,
  financial_account_id text not null,
  name                 text not null check (btrim(name) <> '' and length(name) <= 200),
  source_type          text not null check (source_type in ('manual', 'portal', 'lockbox', 'grantmaker')),
  -- An ACH financial address (manual sources): both or neither.
  ach_account_number   text check (ach_account_number ~ '^[0-9]{4,17}$'),
  ach_routing_number   text check (ach_routing_number ~ '^[0-9]{9}$'),
  created_at           timestamptz not null default now(),
  updated_at           timestamptz not null default now(),
  constraint payment_sources_account_fkey foreign key (financial_account_id, environment)
    references financial_accounts (id, environment),
  constraint payment_sources_ach_check check ((ach_account_number is null) = (ach_routing_number is null)),
  constraint payment_sources_environment_key unique (id, environment)
);
create index payment_sources_page_idx on payment_sources (organization_id, environment, created_at desc, id desc);

-- A PO box request: Almoner asks a lockbox provider for a PO box for a nonprofit; the provider
-- answers once (POST /v1/lockboxes/fulfill_request) with the box's location and address.
create table lockbox_requests (
  -- The one-time value the provider is given: random, never reused.
  id                        text primary key check (id ~ '^[0-9A-Za-z_-]{8,100}$'),
  environment               text not null check (environment in ('production', 'sandbox')),
  organization_id           uuid not null references organizations (id) on delete restrict,
  provider_organization_id  uuid not null references organizations (id) on delete restrict,
  created_at                timestamptz not null default now(),
  fulfilled_at              timestamptz,
  lockbox_id                text
);

create table lockboxes (
  id                        text primary key check (id ~ '^lockbox_[0-9a-z]{26}$'),
  environment               text not null check (environment in ('production', 'sandbox')),
  organization_id           uuid not null references organizations (id) on delete restrict,
  provider_organization_id  uuid not null references organizations (id) on delete restrict,
  -- The provider's name for the box: po_<number>.
  location_id               text not null check (location_id ~ '^po_[0-9]{1,18}$'),
  -- The published PostalAddress.
  address                   jsonb not null,
  payment_source_id         text not null references payment_sources (id),
  request_id                text not null unique references lockbox_requests (id),
  created_at                timestamptz not null default now(),
  updated_at                timestamptz not null default now(),
  constraint lockboxes_location_key unique (provider_organization_id, environment, location_id)
);
create index lockboxes_page_idx on lockboxes (organization_id, environment, created_at desc, id desc);
alter table lockbox_requests add constraint lockbox_requests_lockbox_fkey foreign key (lockbox_id) references lockboxes (id);

-- A batch a lockbox provider uploads for one of its lockboxes: a ZIP of TIFF scans and a CSV index.
create table mail_batches (
  id                        text primary key check (id ~ '^batch_[0-9a-z]{26}$'),
  environment               text not null check (environment in ('production', 'sandbox')),
  provider_organization_id  uuid not null references organizations (id) on delete restrict,
  lockbox_id                text not null references lockboxes (id),
  -- Where the upload lands in object storage.
  storage_key               text not null unique,
  upload_expires_at         timestamptz not null,
  -- awaiting_upload → uploaded → ingested | refused | duplicate (same content as an ingested batch).
  status                    text not null default 'awaiting_upload'
    check (status in ('awaiting_upload', 'uploaded', 'ingested', 'refused', 'duplicate', 'expired')),
  size_bytes                bigint check (size_bytes >= 0),
  sha256                    text check (sha256 ~ '^[0-9a-f]{64}$'),
  -- Why a batch was refused: the CSV line (1 is the header) when one is to blame, and the reason.
  refusal_line              integer,
  refusal_reason            text,
  -- The ingestion job's lease and tries (several processes may run it; one holds a batch at a time).
  attempts                  integer not null default 0,
  lease_until               timestamptz,
  uploaded_at               timestamptz,
  ingested_at               timestamptz,
  created_at                timestamptz not null default now(),
  updated_at                timestamptz not null default now()
);
create index mail_batches_due_idx on mail_batches (status, lease_until) where status in ('awaiting_upload', 'uploaded');
create index mail_batches_lockbox_idx on mail_batches (lockbox_id, created_at desc);
-- One ingestion per content and lockbox: a re-upload of the same ZIP is a duplicate.
create unique index mail_batches_content_key on mail_batches (lockbox_id, sha256) where status = 'ingested';

create table mail_items (
  id               text primary key check (id ~ '^mail_[0-9a-z]{26}$'),
  environment      text not null check (environment in ('production', 'sandbox')),
  organization_id  uuid not null references organizations (id) on delete restrict,
  lockbox_id       text not null references lockboxes (id),
  batch_id         text not null references mail_batches (id),
  -- The provider's id of the envelope, unique per lockbox: a second upload of it is a rescan.
  envelope_id      text not null check (envelope_id ~ '^[0-9A-Za-z._-]{1,64}$'),
  status           text not null check (status in ('processing', 'needs_review', 'processed', 'rejected')),
  -- Why the item needs review or was rejected: the CSV line and the reason.
  review_line      integer,
  review_reason    text,
  received_at      timestamptz not null,
  created_at       timestamptz not null default now(),
  updated_at       timestamptz not null default now(),
  constraint mail_items_envelope_key unique (lockbox_id, envelope_id)
);
create index mail_items_page_idx on mail_items (organization_id, environment, created_at desc, id desc);
create index mail_items_lockbox_idx on mail_items (lockbox_id, created_at desc, id desc);

-- A scan of a mail item (the published MailItemScan): one per upload of the envelope, newest first.
create table mail_item_scans (
  file_id       text primary key check (file_id ~ '^file_[0-9a-z]{26}$'),
  mail_item_id  text not null references mail_items (id),
  batch_id      text not null references mail_batches (id),
  -- SHA-256 over the scan's images in order: the same images again are not a new scan.
  digest        text not null check (digest ~ '^[0-9a-f]{64}$'),
  created_at    timestamptz not null default now(),
  constraint mail_item_scans_digest_key unique (mail_item_id, digest)
);
create index mail_item_scans_item_idx on mail_item_scans (mail_item_id, created_at desc);

-- The images of a scan (front and back of each check, the envelope, letters), each a TIFF in storage.
create table scan_images (
  id           text primary key check (id ~ '^image_[0-9a-z]{26}$'),
  file_id      text not null references mail_item_scans (file_id),
  position     integer not null check (position >= 0),
  -- What the image shows, from the index: check_front, check_back, envelope, correspondence.
  label        text not null check (label in ('check_front', 'check_back', 'envelope', 'correspondence')),
  storage_key  text not null,
  sha256       text not null check (sha256 ~ '^[0-9a-f]{64}$'),
  width        integer,
  height       integer,
  created_at   timestamptz not null default now(),
  constraint scan_images_position_key unique (file_id, position)
);

create table deposits (
  id                    text primary key check (id ~ '^deposit_[0-9a-z]{26}$'),
  environment           text not null check (environment in ('production', 'sandbox')),
  organization_id       uuid not null references organizations (id) on delete restrict,
  payment_source_id     text not null references payment_sources (id),
  financial_account_id  text not null,
  -- The mail item whose checks it deposits: at most one deposit per mail item.
  mail_item_id          text unique references mail_items (id),
  status                text not null check (status in ('pending', 'complete', 'failed')),
  amount                bigint not null check (amount > 0),
  currency              text not null default 'USD' check (currency ~ '^[A-Z]{3}$'),
  description           text,
  -- The published Transfer's rail subhash: check_deposit, inbound_ach_transfer or inbound_account_transfer.
  rail                  text not null check (rail in ('check_deposit', 'inbound_ach_transfer', 'inbound_account_transfer')),
  rail_details          jsonb not null default '{}',
  settled_at            timestamptz,
  returned_at           timestamptz,
  bank_created_at       timestamptz,
  created_at            timestamptz not null default now(),
  updated_at            timestamptz not null default now(),
  constraint deposits_account_fkey foreign key (financial_account_id, environment)
    references financial_accounts (id, environment)
);
create index deposits_page_idx on deposits (organization_id, environment, created_at desc, id desc);
create index deposits_settled_idx on deposits (organization_id, environment, settled_at);

-- Donations gain the published 2026-04-01 shape's parts and where a mailed one came from.
alter table donations
  add column mail_item_id           text references mail_items (id),
  -- The CSV line of the check it was made from (one donation per check).
  add column source_line            integer,
  add column individual_gift_amount bigint check (individual_gift_amount >= 0),
  add column joint_donor            jsonb,
  add column initiation             jsonb,
  add column donor_advised_fund_grant jsonb,
  add column platform               jsonb,
  add column corporate_match        jsonb,
  add column settlement_received_at timestamptz,
  add column settlement_settled_at  timestamptz;
create unique index donations_mail_line_key on donations (mail_item_id, source_line) where mail_item_id is not null;
create index donations_deposit_idx on donations (deposit_id) where deposit_id is not null;

-- The nonprofit's own properties on its donations or deposits.
create table properties (
  id               text primary key check (id ~ '^prop_[0-9a-z]{26}$'),
  environment      text not null check (environment in ('production', 'sandbox')),
  organization_id  uuid not null references organizations (id) on delete cascade,
  name             text not null check (btrim(name) <> '' and length(name) <= 200),
  resource_type    text not null check (resource_type in ('donation', 'deposit')),
  property_type    text not null check (property_type in ('text', 'enum', 'user', 'boolean', 'date')),
  created_at       timestamptz not null default now(),
  updated_at       timestamptz not null default now(),
  constraint properties_name_key unique (organization_id, environment, resource_type, name)
);
create index properties_page_idx on properties (organization_id, environment, created_at desc, id desc);

-- The options of an enum property (a user property's options are the organization's members).
create table property_options (
  id           text primary key check (id ~ '^propopt_[0-9a-z]{26}$'),
  property_id  text not null references properties (id) on delete cascade,
  name         text not null check (btrim(name) <> '' and length(name) <= 200),
  description  text,
  position     integer not null,
  created_at   timestamptz not null default now(),
  constraint property_options_name_key unique (property_id, name)
);
create index property_options_page_idx on property_options (property_id, position, id);

-- A property's value on one donation or deposit (the published PropertyAssignment).
create table property_assignments (
  property_id    text not null references properties (id) on delete cascade,
  resource_type  text not null check (resource_type in ('donation', 'deposit')),
  resource_id    text not null,
  -- The published PropertyValue, as assigned.
  value          jsonb not null,
  updated_at     timestamptz not null default now(),
  primary key (property_id, resource_id)
);
create index property_assignments_resource_idx on property_assignments (resource_id);
