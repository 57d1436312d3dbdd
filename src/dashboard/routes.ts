import Router from '@koa/router';
import { showAccount } from './account-page.js';
import { showForgotPasswordPage, submitForgotPassword } from './forgot-password-page.js';
import { showPassword, submitPassword } from './password-page.js';
import { showResetPasswordPage, submitResetPassword } from './reset-password-page.js';
import { PASSKEY_OPTIONS_PATH, PASSKEY_REMOVE_PATH, PASSKEYS_PATH, showSecurity, showTotpSetup, submitRecoveryCodes, submitTotpRemoval, submitTotpSetup, TOTP_PATH } from './security-page.js';
import { passkeyRegistrationOptions, submitPasskeyRegistration, submitPasskeyRemoval } from './passkeys-page.js';
import { showAudit } from './audit-page.js';
import { showApiKeys, submitApiKey, submitApiKeyRevocation } from './api-keys-page.js';
import { revokeConnection, showConnections } from './connections-page.js';
import type { DashboardDeps } from './deps.js';
import { revokeOrganizationConnection, showOrganizationConnections } from './org-connections-page.js';
import { showInvitation, submitAcceptance, submitNewUser } from './invitation-page.js';
import { showMembers, showRemoval, submitInvitation, submitInvitationRevocation, submitRemoval, submitRoleChange } from './members-page.js';
import { ACCOUNT_PASSWORD_PATH, ACCOUNT_PATH, CONNECTIONS_PATH, CONNECTIONS_SIGN_IN_PATH, FORGOT_PASSWORD_PATH, RESET_PASSWORD_PATH, REVOKE_PATH, SECOND_FACTOR_PATH, SECURITY_PATH, SIGN_IN_PASSKEY_OPTIONS_PATH, SIGN_IN_PASSKEY_PATH, SIGN_IN_PATH, SIGN_OUT_PATH } from './paths.js';
import { passkeySignInOptions, showSecondFactorStep, showSignInPage, submitPasskeySignIn, submitSecondFactorStep, submitSignIn } from './sign-in-page.js';
import { showSettings, submitSettings } from './settings-page.js';
import { signOut } from './sign-out.js';
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

  router.get(ACCOUNT_PATH, (ctx) => showAccount(deps, ctx));
  router.get(ACCOUNT_PASSWORD_PATH, (ctx) => showPassword(deps, ctx));
  router.post(ACCOUNT_PASSWORD_PATH, (ctx) => submitPassword(deps, ctx));
  router.get(SECURITY_PATH, (ctx) => showSecurity(deps, ctx));
  router.get(TOTP_PATH, (ctx) => showTotpSetup(deps, ctx));
  router.post(TOTP_PATH, (ctx) => submitTotpSetup(deps, ctx));
  router.post(`${TOTP_PATH}/remove`, (ctx) => submitTotpRemoval(deps, ctx));
  router.post(`${SECURITY_PATH}/recovery-codes`, (ctx) => submitRecoveryCodes(deps, ctx));
  router.post(PASSKEY_OPTIONS_PATH, (ctx) => passkeyRegistrationOptions(deps, ctx));
  router.post(PASSKEYS_PATH, (ctx) => submitPasskeyRegistration(deps, ctx));
  router.post(PASSKEY_REMOVE_PATH, (ctx) => submitPasskeyRemoval(deps, ctx));
  router.get(CONNECTIONS_PATH, (ctx) => showConnections(deps, ctx));
  router.post(REVOKE_PATH, (ctx) => revokeConnection(deps, ctx));

  router.get('/invitations/:token', (ctx) => showInvitation(deps, ctx));
  router.post('/invitations/:token', (ctx) => submitNewUser(deps, ctx));
  router.post('/invitations/:token/accept', (ctx) => submitAcceptance(deps, ctx));

  router.get('/orgs/:ein', (ctx) => {
    ctx.status = 303;
    ctx.redirect(`/orgs/${encodeURIComponent(ctx.params.ein!)}/members`);
  });
  router.get('/orgs/:ein/members', (ctx) => showMembers(deps, ctx));
  router.post('/orgs/:ein/members/role', (ctx) => submitRoleChange(deps, ctx));
  router.get('/orgs/:ein/members/:user/remove', (ctx) => showRemoval(deps, ctx));
  router.post('/orgs/:ein/members/remove', (ctx) => submitRemoval(deps, ctx));
  router.post('/orgs/:ein/members/invite', (ctx) => submitInvitation(deps, ctx));
  router.post('/orgs/:ein/members/invitations/revoke', (ctx) => submitInvitationRevocation(deps, ctx));
  router.get('/orgs/:ein/api-keys', (ctx) => showApiKeys(deps, ctx));
  router.post('/orgs/:ein/api-keys', (ctx) => submitApiKey(deps, ctx));
  router.post('/orgs/:ein/api-keys/revoke', (ctx) => submitApiKeyRevocation(deps, ctx));
  router.get('/orgs/:ein/connections', (ctx) => showOrganizationConnections(deps, ctx));
  router.post('/orgs/:ein/connections/revoke', (ctx) => revokeOrganizationConnection(deps, ctx));
  router.get('/orgs/:ein/webhooks', (ctx) => showWebhooks(deps, ctx));
  router.post('/orgs/:ein/webhooks', (ctx) => submitWebhook(deps, ctx));
  router.post('/orgs/:ein/webhooks/status', (ctx) => submitWebhookStatus(deps, ctx));
  router.post('/orgs/:ein/webhooks/replay', (ctx) => submitReplay(deps, ctx));
  router.get('/orgs/:ein/audit', (ctx) => showAudit(deps, ctx));
  router.get('/orgs/:ein/settings', (ctx) => showSettings(deps, ctx));
  router.post('/orgs/:ein/settings', (ctx) => submitSettings(deps, ctx));
  return router;
}
