-- RP-Initiated Logout (docs/oauth.md, "Signing out from an application"): where the browser may
-- return after an application signs the user out (clients file field post_logout_redirect_uris).
-- None for the clients registered so far: their sign-out ends on the signed-out page.
alter table oauth_clients add column post_logout_redirect_uris text[] not null default '{}';
