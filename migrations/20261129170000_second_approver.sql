-- "Disbursements need a second person to approve" (docs/grantmaking.md, "Approvals by another
-- person"): when on, whoever created a disbursement (an API key, or a user) may not approve it.
-- Off for every organization until an Owner turns it on.
alter table organizations add column require_second_approver boolean not null default false;
