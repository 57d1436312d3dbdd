import Router from '@koa/router';
import { showAccount } from './account-page.js';
import { showForgotPasswordPage, submitForgotPassword } from './forgot-password-page.js';
import { showPassword, submitPassword } from './password-page.js';
import { showResetPasswordPage, submitResetPassword } from './reset-password-page.js';
import {
  PASSKEY_OPTIONS_PATH,
  PASSKEY_REMOVE_PATH,
  PASSKEYS_PATH,
  showSecurity,
  showTotpSetup,
  submitRecoveryCodes,
  submitTotpRemoval,
  submitTotpSetup,
  TOTP_PATH,
} from './security-page.js';
import { passkeyRegistrationOptions, submitPasskeyRegistration, submitPasskeyRemoval } from './passkeys-page.js';
import { showAudit } from './audit-page.js';
import { showApiKeyRevocation, showApiKeys, submitApiKey, submitApiKeyRevocation } from './api-keys-page.js';
import { revokeConnection, showConnections } from './connections-page.js';
import type { DashboardDeps } from './deps.js';
import { revokeOrganizationConnection, showOrganizationConnectionRevocation, showOrganizationConnections } from './org-connections-page.js';
import { showInvitation, submitAcceptance, submitNewUser } from './invitation-page.js';
import { showMembers, showRemoval, submitInvitation, submitInvitationRevocation, submitRemoval, submitRoleChange } from './members-page.js';
import {
  ACCOUNT_PASSWORD_PATH,
  ACCOUNT_PATH,
  CONFIRM_PASSKEY_OPTIONS_PATH,
  CONFIRM_PASSKEY_PATH,
  CONFIRM_PATH,
  CONNECTIONS_PATH,
  SESSION_SIGN_OUT_PATH,
  SIGN_OUT_EVERYWHERE_PATH,
  CONNECTIONS_SIGN_IN_PATH,
  FORGOT_PASSWORD_PATH,
  RESET_PASSWORD_PATH,
  REVOKE_PATH,
  SECOND_FACTOR_PATH,
  SECURITY_PATH,
  SIGN_IN_PASSKEY_OPTIONS_PATH,
  SIGN_IN_PASSKEY_PATH,
  SIGN_IN_PATH,
  SIGN_OUT_PATH,
} from './paths.js';
import {
  passkeySignInOptions,
  showSecondFactorStep,
  showSignInPage,
  submitPasskeySignIn,
  submitSecondFactorStep,
  submitSignIn,
} from './sign-in-page.js';
import { SECOND_APPROVER_PAGE, showSettings, submitSecondApprover, submitSettings } from './settings-page.js';
import { showGrantmaking, submitDecision } from './grantmaking-page.js';
import { showIncoming } from './incoming-page.js';
import { addGiftRoutes } from './gift-routes.js';
import { signOut } from './sign-out.js';
import type { Context } from 'koa';
import { accountRoute, orgRoute, type AccountRequest } from './guards.js';
import { confirmPasskeyOptions, showConfirm, submitConfirm, submitConfirmPasskey } from './confirm-page.js';
import { submitSessionSignOut, submitSignOutEverywhere } from './sessions-section.js';
import { showWebhooks, submitReplay, submitWebhook, submitWebhookStatus } from './webhooks-page.js';

/**
 * The signed-in side of a dashboard host: sign-in and sign-out, the user's own account and
 * connected applications, and the organization pages of its Owners and Admins
 * (docs/accounts.md, "Pages").
 */
export function buildDashboardRouter(deps: DashboardDeps): Router {
  const router = new Router();
  router.get(SIGN_IN_PATH, (ctx) => showSignInPage(deps, ctx));
  router.post(SIGN_IN_PATH, (ctx) => submitSignIn(deps, ctx));
  router.post(CONNECTIONS_SIGN_IN_PATH, (ctx) => submitSignIn(deps, ctx));
  router.get(SECOND_FACTOR_PATH, (ctx) => showSecondFactorStep(deps, ctx));
  router.post(SECOND_FACTOR_PATH, (ctx) => submitSecondFactorStep(deps, ctx));
  router.post(SIGN_IN_PASSKEY_OPTIONS_PATH, (ctx) => passkeySignInOptions(deps, ctx));
  router.post(SIGN_IN_PASSKEY_PATH, (ctx) => submitPasskeySignIn(deps, ctx));
  router.post(SIGN_OUT_PATH, (ctx) => signOut(deps, ctx));
  router.get(FORGOT_PASSWORD_PATH, (ctx) => showForgotPasswordPage(deps, ctx));
  router.post(FORGOT_PASSWORD_PATH, (ctx) => submitForgotPassword(deps, ctx));
  router.get(`${RESET_PASSWORD_PATH}/:token`, (ctx) => showResetPasswordPage(deps, ctx));
  router.post(`${RESET_PASSWORD_PATH}/:token`, (ctx) => submitResetPassword(deps, ctx));

  const account = (handler: (deps: DashboardDeps, ctx: Context, request: AccountRequest) => Promise<void> | void, returnTo?: string) =>
    accountRoute(deps, (ctx, request) => handler(deps, ctx, request), { returnTo });
  router.get(ACCOUNT_PATH, account(showAccount));
  router.get(ACCOUNT_PASSWORD_PATH, account(showPassword));
  router.post(ACCOUNT_PASSWORD_PATH, account(submitPassword, ACCOUNT_PASSWORD_PATH));
  router.get(SECURITY_PATH, account(showSecurity));
  router.get(TOTP_PATH, account(showTotpSetup));
  router.post(TOTP_PATH, account(submitTotpSetup, TOTP_PATH));
  router.post(`${TOTP_PATH}/remove`, account(submitTotpRemoval, SECURITY_PATH));
  router.post(`${SECURITY_PATH}/recovery-codes`, account(submitRecoveryCodes, SECURITY_PATH));
  router.post(PASSKEY_OPTIONS_PATH, account(passkeyRegistrationOptions, SECURITY_PATH));
  router.post(PASSKEYS_PATH, account(submitPasskeyRegistration, SECURITY_PATH));
  router.post(PASSKEY_REMOVE_PATH, account(submitPasskeyRemoval, SECURITY_PATH));
  router.get(CONFIRM_PATH, account(showConfirm));
  router.post(CONFIRM_PATH, account(submitConfirm, CONFIRM_PATH));
  router.post(CONFIRM_PASSKEY_OPTIONS_PATH, account(confirmPasskeyOptions, CONFIRM_PATH));
  router.post(CONFIRM_PASSKEY_PATH, account(submitConfirmPasskey, CONFIRM_PATH));
  router.post(SESSION_SIGN_OUT_PATH, account(submitSessionSignOut, SECURITY_PATH));
  router.post(SIGN_OUT_EVERYWHERE_PATH, account(submitSignOutEverywhere, SECURITY_PATH));
  router.get(CONNECTIONS_PATH, (ctx) => showConnections(deps, ctx));
  router.post(REVOKE_PATH, (ctx) => revokeConnection(deps, ctx));

  router.get('/invitations/:token', (ctx) => showInvitation(deps, ctx));
  router.post('/invitations/:token', (ctx) => submitNewUser(deps, ctx));
  router.post('/invitations/:token/accept', (ctx) => submitAcceptance(deps, ctx));

  router.get('/orgs/:ein', (ctx) => {
    ctx.status = 303;
    ctx.redirect(`/orgs/${encodeURIComponent(ctx.params.ein!)}/members`);
  });
  router.get(
    '/orgs/:ein/members',
    orgRoute(deps, { page: 'members' }, (ctx, request) => showMembers(deps, ctx, request)),
  );
  router.post(
    '/orgs/:ein/members/role',
    orgRoute(deps, { page: 'members' }, (ctx, request) => submitRoleChange(deps, ctx, request)),
  );
  router.get(
    '/orgs/:ein/members/:user/remove',
    orgRoute(deps, { page: 'members' }, (ctx, request) => showRemoval(deps, ctx, request)),
  );
  router.post(
    '/orgs/:ein/members/remove',
    orgRoute(deps, { page: 'members' }, (ctx, request) => submitRemoval(deps, ctx, request)),
  );
  router.post(
    '/orgs/:ein/members/invite',
    orgRoute(deps, { page: 'members' }, (ctx, request) => submitInvitation(deps, ctx, request)),
  );
  router.post(
    '/orgs/:ein/members/invitations/revoke',
    orgRoute(deps, { page: 'members' }, (ctx, request) => submitInvitationRevocation(deps, ctx, request)),
  );
  router.get(
    '/orgs/:ein/api-keys',
    orgRoute(deps, { page: 'api-keys' }, (ctx, request) => showApiKeys(deps, ctx, request)),
  );
  router.post(
    '/orgs/:ein/api-keys',
    orgRoute(deps, { page: 'api-keys' }, (ctx, request) => submitApiKey(deps, ctx, request)),
  );
  router.get(
    '/orgs/:ein/api-keys/:key/revoke',
    orgRoute(deps, { page: 'api-keys' }, (ctx, request) => showApiKeyRevocation(deps, ctx, request)),
  );
  router.post(
    '/orgs/:ein/api-keys/revoke',
    orgRoute(deps, { page: 'api-keys' }, (ctx, request) => submitApiKeyRevocation(deps, ctx, request)),
  );
  router.get(
    '/orgs/:ein/connections',
    orgRoute(deps, { page: 'connections' }, (ctx, request) => showOrganizationConnections(deps, ctx, request)),
  );
  router.get(
    '/orgs/:ein/connections/:grant/revoke',
    orgRoute(deps, { page: 'connections' }, (ctx, request) => showOrganizationConnectionRevocation(deps, ctx, request)),
  );
  router.post(
    '/orgs/:ein/connections/revoke',
    orgRoute(deps, { page: 'connections' }, (ctx, request) => revokeOrganizationConnection(deps, ctx, request)),
  );
  router.get(
    '/orgs/:ein/webhooks',
    orgRoute(deps, { page: 'webhooks' }, (ctx, request) => showWebhooks(deps, ctx, request)),
  );
  router.post(
    '/orgs/:ein/webhooks',
    orgRoute(deps, { page: 'webhooks' }, (ctx, request) => submitWebhook(deps, ctx, request)),
  );
  router.post(
    '/orgs/:ein/webhooks/status',
    orgRoute(deps, { page: 'webhooks' }, (ctx, request) => submitWebhookStatus(deps, ctx, request)),
  );
  router.post(
    '/orgs/:ein/webhooks/replay',
    orgRoute(deps, { page: 'webhooks' }, (ctx, request) => submitReplay(deps, ctx, request)),
  );
  router.get(
    '/orgs/:ein/audit',
    orgRoute(deps, { page: 'audit' }, (ctx, request) => showAudit(deps, ctx, request)),
  );
  router.get(
    '/orgs/:ein/settings',
    orgRoute(deps, { page: 'settings' }, (ctx, request) => showSettings(deps, ctx, request)),
  );
  router.post(
    '/orgs/:ein/settings',
    orgRoute(deps, { page: 'settings' }, (ctx, request) => submitSettings(deps, ctx, request)),
  );
  router.post(
    `/orgs/:ein/${SECOND_APPROVER_PAGE}`,
    orgRoute(deps, { page: 'settings' }, (ctx, request) => submitSecondApprover(deps, ctx, request)),
  );
  // Every member sees the organization's disbursements; Owners and Admins decide them.
  router.get(
    '/orgs/:ein/grantmaking',
    orgRoute(deps, { page: 'grantmaking', roles: EVERY_ROLE }, (ctx, request) => showGrantmaking(deps, ctx, request)),
  );
  router.post(
    '/orgs/:ein/grantmaking/approve',
    orgRoute(deps, { page: 'grantmaking' }, (ctx, request) => submitDecision(deps, ctx, request, 'approve')),
  );
  router.post(
    '/orgs/:ein/grantmaking/cancel',
    orgRoute(deps, { page: 'grantmaking' }, (ctx, request) => submitDecision(deps, ctx, request, 'cancel')),
  );
  router.get(
    '/orgs/:ein/incoming',
    orgRoute(deps, { page: 'incoming', roles: EVERY_ROLE }, (ctx, request) => showIncoming(deps, ctx, request)),
  );
  addGiftRoutes(router, deps);
  return router;
}

const EVERY_ROLE = ['owner', 'admin', 'member', 'read_only'] as const;
