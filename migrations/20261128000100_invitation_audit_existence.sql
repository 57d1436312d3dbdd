-- Invitations no longer say whether the address had an account (docs/security.md, "Learning
-- who has an account by inviting them"): every Owner and Admin of the organization reads these
-- rows, and could learn it of any address by inviting it. The rows written before lose the
-- detail too; the invitation's address, role and times stay.
update audit_events
   set details = details - 'existing_user'
 where event = 'invitation.created'
   and details ? 'existing_user';
