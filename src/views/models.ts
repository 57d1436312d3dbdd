import type { ShownDate } from '../dashboard/dates.js';
import type { connectionView } from '../dashboard/connections-page.js';
import type { sessionsSection } from '../dashboard/sessions-section.js';
import type { Environment, Role } from '../db/schema.js';
import type { Membership } from '../identity/memberships.js';
import type { PasskeyForm } from '../mfa/passkey-form.js';
import type { TotpEnrolment } from '../mfa/second-factors.js';
import type { ConsentPlan } from '../oidc/consent-plan.js';
import type { FdxConsentStep } from '../oidc/interactions/fdx-consent-step.js';
import type { ClientView } from '../oidc/interactions/interaction.js';
import type { ScopeView } from '../oidc/interactions/scope-descriptions.js';

/**
 * What each page template is given: one interface per template, so a name misspelt in the
 * code that renders it fails the type check (the strict rendering of views/render.ts catches
 * one misspelt in the template). Optional members are the values a page may leave out; the
 * template tests them (`{% if %}`, `| default`) before it shows them.
 */

/** What every page gets from sendPage (views/page.ts). */
export interface LayoutModel {
  sandbox: boolean;
  environment: Environment;
  /** The request id the page shows, for support. */
  requestId?: string | undefined;
  /** Pages that offer passkeys get their scripts; pages that submit themselves, theirs. */
  passkeyForm?: PasskeyForm | undefined;
  autoSubmit?: boolean;
}

/** What every signed-in page gets from sendDashboardPage (dashboard/page.ts). */
export interface DashboardFrame {
  requestId: string | undefined;
  environmentName: string;
  viewer: { email: string; name: string | null };
  nav: { section: string; account: string; security: string; connections: string; organizations: { name: string; href: string; current: boolean }[] };
  org: { id: string; name: string; ein: string; kind: { label: string; noun: string }; roleName: string; heading: boolean; tabs: { label: string; href: string; current: boolean }[] } | undefined;
  csrf: string;
  signOutAction: string;
  /** The dashboard layout's banners. */
  notice?: string | undefined;
  error?: string | undefined;
}

interface ErrorLink {
  href: string;
  label: string;
}

export interface ErrorView {
  title: string;
  text: string;
  description?: string | undefined;
  links?: readonly ErrorLink[] | undefined;
  requestId: string;
}

/** The sign-in form: the dashboard's and the authorization flow's. */
export interface LoginView {
  requestId?: string | undefined;
  client?: ClientView | undefined;
  heading?: string | undefined;
  lead?: string | undefined;
  action: string;
  next?: string | undefined;
  csrf: string;
  error: string | undefined;
  lockedOut: boolean;
  notice?: string | undefined;
  email: string;
  reauthenticate?: boolean;
  forgotHref: string;
  passkeyForm: PasskeyForm | undefined;
}

export interface SecondFactorView {
  requestId?: string | undefined;
  client?: ClientView | undefined;
  heading: string;
  reasons?: readonly string[] | undefined;
  action: string;
  next?: string | undefined;
  csrf: string;
  organization?: string | undefined;
  error: string | undefined;
  cancelHref?: string;
  totp: boolean;
  passkeyForm: PasskeyForm | undefined;
}

export interface SecondFactorSetupView {
  requestId?: string | undefined;
  client: ClientView | undefined;
  reasons: readonly string[];
  enrolment: TotpEnrolment;
  action: string;
  csrf: string;
  organization: string | undefined;
  error: string | undefined;
}

export interface RecoveryCodesView {
  requestId?: string | undefined;
  client: ClientView | undefined;
  codes: readonly string[];
  continueHref: string;
  continueLabel: string;
}

export interface ChooseOrganizationView {
  requestId?: string | undefined;
  client: ClientView;
  user: { email: string; name: string | null };
  noun: string;
  article: 'a' | 'an';
  organizations: (Membership & { roleName: string; kindLabel: string })[];
  action: string;
  denyAction: string;
  csrf: string;
  unknownChoice: boolean;
}

/** The consent screen: consent-page.ts builds it from the consent plan. */
export interface ConsentView {
  requestId?: string | undefined;
  client: ClientView;
  user: { email: string; name: string | null };
  organization: Membership;
  kind: { label: string; noun: string };
  roleName: string;
  subjectType: string;
  plan: ConsentPlan;
  granted: ScopeView[];
  withheld: ScopeView[];
  notApplicable: ScopeView[];
  action: string;
  denyAction: string;
  changeOrganization: string | undefined;
  csrf: string;
  fdx: (FdxConsentStep & { accounts: (FdxConsentStep['accounts'][number] & { field: string })[] }) | undefined;
  canApprove: boolean;
  refusal: string | undefined;
  problem: string | undefined;
}

export interface LogoutView {
  action: string;
  xsrf: string;
  client: string | null;
  autoSubmit: boolean;
  signedIn: boolean;
}

export interface SignedOutView {
  client: string | null;
  stillSignedIn: boolean;
}

export interface ForgotPasswordView {
  requestId: string | undefined;
  action: string;
  signIn: string;
  csrf: string;
  sent: boolean;
  error: string | undefined;
  email: string;
  expiresMinutes: number;
}

export interface ResetPasswordView {
  requestId: string | undefined;
  state: 'form' | 'done' | 'unknown' | 'spent';
  email?: string | undefined;
  error?: string | undefined;
  action: string;
  csrf: string | undefined;
  forgot: string;
  signIn: string;
  minLength: number;
}

/** What an invitation says, on each of its pages. */
export interface InvitationSummary {
  organization: { name: string; ein: string };
  email: string;
  roleName: string;
  roleDescription: string;
  inviter: string;
  expires: ShownDate;
}

export interface InvitationView extends InvitationSummary {
  requestId: string | undefined;
  action: string;
  csrf: string;
  signedInAs: string | undefined;
  minLength: number;
  maxLength: number;
  name: string;
  error: string | undefined;
}

export interface InvitationOtherAccountView extends InvitationSummary {
  signOutNext: string;
}

export interface InvitationAcceptView extends InvitationSummary {
  acceptAction: string;
  cancel: string;
}

export interface AccountView {
  passwordHref: string;
  secondFactor: boolean;
  hasPasskeys: boolean;
  organizations: { name: string; kind: string; ein: string; roleName: string; manageHref: string | undefined }[];
}

export interface PasswordView {
  action: string;
  accountHref: string;
  forgotHref: string;
  minLength: number;
  error?: string;
  notice?: string;
  done?: boolean;
}

export interface ConnectionsView {
  connections: ReturnType<typeof connectionView>[];
  managesOrganizations: boolean;
  needSecondFactor: string[];
  confirmHref: string;
  organizationsNoun: string;
  notice: string | undefined;
  revokeAction: string;
}

export interface OrgConnectionsView {
  environmentName: string;
  organizationAccess: (ReturnType<typeof connectionView> & { yours: boolean })[];
  memberAccess: (ReturnType<typeof connectionView> & { yours: boolean })[];
  revokeAction: string;
  notice: string | undefined;
}

export interface SecurityView extends Awaited<ReturnType<typeof sessionsSection>> {
  summary: { totp: boolean; recoveryCodesLeft: number; passkeys: number };
  requiring: string[];
  sessionHasSecondFactor: boolean;
  mayChange: boolean;
  confirmHref: string;
  setupHref: string;
  removeAction: string;
  recoveryAction: string;
  notice: string | undefined;
  error: string | undefined;
  passkeyList: { id: string; name: string; added: ShownDate; lastUsed: ShownDate | undefined; synced: boolean; elsewhere: string | undefined }[];
  passkeyForm: PasskeyForm | undefined;
  passkeysAt: { origin: string; href: string } | undefined;
  passkeyRemoveAction: string;
  passkeyError: string | undefined;
  passkeyName: string;
  passkeyNameMax: number;
}

export interface AuthenticatorView {
  enrolment: TotpEnrolment;
  action: string;
  next: string | undefined;
  codeError: string | undefined;
}

export interface DashboardRecoveryCodesView {
  heading: string;
  codes: readonly string[];
  continueHref: string;
  replaced?: boolean;
}

export interface ConfirmView {
  next: string;
  hasFactor: boolean;
  setupHref: string;
  totp: boolean;
  codesLeft: number;
  action: string;
  codeError: string | undefined;
  passkeyForm: PasskeyForm | undefined;
}

export interface DashboardErrorView {
  title: string;
  text: string;
  description: string | undefined;
}

export interface ApiKeysView {
  environmentLabel: string;
  keys: { id: string; name: string | null; prefix: string; created: ShownDate; lastUsed: ShownDate | undefined; revoked: ShownDate | undefined; revokeHref: string }[];
  created: { key: string; name: string | null | undefined } | undefined;
  notice: string | undefined;
  error: string | undefined;
  name: string;
  nameMax: number;
  createAction: string;
  otherEnvironment: { name: string; href: string };
}

export interface ApiKeyRevokeView {
  environmentLabel: string;
  key: { id: string; name: string | null; prefix: string; created: ShownDate; lastUsed: ShownDate | undefined };
  revokeAction: string;
  cancel: string;
}

export interface AuditView {
  filters: { actor: string; event: string; from: string; to: string };
  events: readonly string[];
  rows: { when: ShownDate; event: string; actor: string | null; environment: string | null; application: string | undefined; client: string | null; ip: string | null; details: { name: string; value: string }[] }[];
  filtered: boolean;
  action: string;
  newer: string | undefined;
  older: string | undefined;
  error: string | undefined;
}

export interface MembersView {
  members: { id: string; email: string; name: string | null; role: Role; roleName: string; since: ShownDate; you: boolean; manageable: boolean; onlyOwner: boolean; removeHref: string }[];
  roles: { value: Role; label: string }[];
  roleAction: string;
  invitations: { id: string; email: string; roleName: string; invitedBy: string | null; expires: ShownDate; revocable: boolean }[];
  inviteAction: string;
  revokeInvitationAction: string;
  invite: { email: string; role: string };
  notice: string | undefined;
  error: string | undefined;
}

export interface MemberRemoveView {
  member: { id: string; email: string; roleName: string; you: boolean };
  authorizations: number;
  removeAction: string;
  cancel: string;
}

export interface SettingsView {
  requireMfa: boolean;
  withoutSecondFactor: number;
  canChange: boolean;
  youHaveSecondFactor: boolean;
  securityHref: string;
  action: string;
  notice: string | undefined;
  error: string | undefined;
}

export interface WebhooksView {
  environmentName: string;
  subscriptions: { id: string; url: string; category: string; status: string; statusLabel: string; created: ShownDate; lastSuccess: ShownDate | undefined }[];
  deliveries: { id: string; category: string; url: string; status: string; statusLabel: string; attempts: number; answer: string | null; when: ShownDate }[];
  categories: readonly string[];
  created: { url: string; secret: string } | undefined;
  existing: { url: string } | undefined;
  /** What was typed, shown again after a refusal (empty otherwise). */
  form: { url: string; category: string };
  error: string | undefined;
  notice: string | undefined;
  actions: { create: string; status: string; replay: string };
}

/** The pages sendPage renders directly (the hosted pages, outside the signed-in frame). */
export interface PageModels {
  'error.njk': ErrorView;
  'login.njk': LoginView;
  'second-factor.njk': SecondFactorView;
  'second-factor-setup.njk': SecondFactorSetupView;
  'recovery-codes.njk': RecoveryCodesView;
  'choose-organization.njk': ChooseOrganizationView;
  'consent.njk': ConsentView;
  'logout.njk': LogoutView;
  'signed-out.njk': SignedOutView;
  'forgot-password.njk': ForgotPasswordView;
  'reset-password.njk': ResetPasswordView;
  'dashboard/invitation.njk': InvitationView;
}

/** The signed-in pages sendDashboardPage renders in its frame. */
export interface DashboardPageModels {
  'dashboard/account.njk': AccountView;
  'dashboard/password.njk': PasswordView;
  'connections.njk': ConnectionsView;
  'dashboard/org-connections.njk': OrgConnectionsView;
  'dashboard/security.njk': SecurityView;
  'dashboard/authenticator.njk': AuthenticatorView;
  'dashboard/recovery-codes.njk': DashboardRecoveryCodesView;
  'dashboard/confirm.njk': ConfirmView;
  'dashboard/error.njk': DashboardErrorView;
  'dashboard/api-keys.njk': ApiKeysView;
  'dashboard/api-key-revoke.njk': ApiKeyRevokeView;
  'dashboard/audit.njk': AuditView;
  'dashboard/members.njk': MembersView;
  'dashboard/member-remove.njk': MemberRemoveView;
  'dashboard/settings.njk': SettingsView;
  'dashboard/webhooks.njk': WebhooksView;
  'dashboard/invitation-other-account.njk': InvitationOtherAccountView;
  'dashboard/invitation-accept.njk': InvitationAcceptView;
}

export type PageName = keyof PageModels;
export type DashboardPageName = keyof DashboardPageModels;

/** Every template a page renders, with all it is given (the layout's values included). */
export type ViewModels = { [V in PageName]: PageModels[V] & LayoutModel } & { [V in DashboardPageName]: DashboardPageModels[V] & DashboardFrame & LayoutModel };
export type ViewName = keyof ViewModels;
