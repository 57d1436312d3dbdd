-- Disbursement verification and just-in-time funding (docs/grantmaking.md, "Verification" and
-- "auto_fund"). An approved disbursement to a recipient the directory's IRS data does not show
-- as an eligible, deductible charity waits in `awaiting_verification` until an operator verifies
-- it (verified_at) or rejects it (rejection_reason, rejected_at). An `auto_fund` one that its
-- balance does not cover opens one inbound transfer for its amount, linked by disbursement_id.

alter table disbursements
  add column auto_fund boolean not null default false,
  add column bypass_organization_verification boolean not null default false,
  add column verified_at timestamptz,
  add column rejection_reason text check (rejection_reason in (
    'insufficient_funds', 'incorrect_recipient', 'suspected_fraud', 'requested_by_user',
    'acceptance_criteria_failed', 'duplicate', 'unknown')),
  add column rejected_at timestamptz,
  add constraint disbursements_rejection_check check (
    (rejection_reason is null) = (rejected_at is null) and (status = 'rejected') = (rejected_at is not null));

-- The disbursement an auto-fund transfer was opened for: at most one transfer each, whatever
-- races (docs/grantmaking.md, "auto_fund": exactly once).
alter table inbound_transfers
  add column disbursement_id text references disbursements (id) on delete restrict;
create unique index inbound_transfers_disbursement_key on inbound_transfers (disbursement_id)
  where disbursement_id is not null;
