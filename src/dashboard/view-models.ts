import type { Role } from '../db/schema.js';
import type { TotpEnrolment } from '../mfa/second-factors.js';
import type { connectionView } from './connections-page.js';
import type { ShownDate } from './dates.js';
import type { sessionsSection } from './sessions-section.js';
import type { PasskeyForm } from '../views/models.js';

// What the dashboard's pages are given (views/models.ts).

interface ForgotPasswordView {
  requestId: string | undefined;
  action: string;
  signIn: string;
  csrf: string;
  sent: boolean;
  error: string | undefined;
  email: string;
  expiresMinutes: number;
}

interface ResetPasswordView {
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
interface InvitationSummary {
  organization: { name: string; ein: string };
  email: string;
  roleName: string;
  roleDescription: string;
  inviter: string;
  expires: ShownDate;
}

interface InvitationView extends InvitationSummary {
  requestId: string | undefined;
  action: string;
  csrf: string;
  signedInAs: string | undefined;
  minLength: number;
  maxLength: number;
  name: string;
  error: string | undefined;
}

interface InvitationOtherAccountView extends InvitationSummary {
  signOutNext: string;
}

interface InvitationAcceptView extends InvitationSummary {
  acceptAction: string;
  cancel: string;
}

interface AccountView {
  passwordHref: string;
  secondFactor: boolean;
  hasPasskeys: boolean;
  organizations: {
    name: string;
    kind: string;
    ein: string;
    roleName: string;
    manageHref: string | undefined;
    /** A member who does not manage it: its disbursements page, for a grantmaker or a nonprofit. */
    disbursementsHref: string | undefined;
  }[];
}

interface PasswordView {
  action: string;
  accountHref: string;
  forgotHref: string;
  minLength: number;
  error?: string;
  notice?: string;
  done?: boolean;
}

interface ConnectionsView {
  connections: ReturnType<typeof connectionView>[];
  managesOrganizations: boolean;
  needSecondFactor: string[];
  confirmHref: string;
  organizationsNoun: string;
  notice: string | undefined;
  revokeAction: string;
}

interface OrgConnectionsView {
  environmentName: string;
  /** `revokeHref`: the page that asks before revoking it, when the viewer may. */
  organizationAccess: (ReturnType<typeof connectionView> & { yours: boolean; revokeHref: string | undefined })[];
  memberAccess: (ReturnType<typeof connectionView> & { yours: boolean; revokeHref: string | undefined })[];
  notice: string | undefined;
}

interface ConnectionRevokeView {
  connection: ReturnType<typeof connectionView> & { yours: boolean };
  revokeAction: string;
  cancel: string;
}

interface SecurityView extends Awaited<ReturnType<typeof sessionsSection>> {
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
  passkeyList: {
    id: string;
    name: string;
    added: ShownDate;
    lastUsed: ShownDate | undefined;
    synced: boolean;
    elsewhere: string | undefined;
  }[];
  passkeyForm: PasskeyForm | undefined;
  passkeysAt: { origin: string; href: string } | undefined;
  passkeyRemoveAction: string;
  passkeyError: string | undefined;
  passkeyName: string;
  passkeyNameMax: number;
}

interface AuthenticatorView {
  enrolment: TotpEnrolment;
  action: string;
  next: string | undefined;
  codeError: string | undefined;
}

interface DashboardRecoveryCodesView {
  heading: string;
  codes: readonly string[];
  continueHref: string;
  replaced?: boolean;
}

interface ConfirmView {
  next: string;
  hasFactor: boolean;
  setupHref: string;
  totp: boolean;
  codesLeft: number;
  action: string;
  codeError: string | undefined;
  passkeyForm: PasskeyForm | undefined;
}

interface DashboardErrorView {
  title: string;
  text: string;
  description: string | undefined;
}

interface ApiKeysView {
  environmentLabel: string;
  keys: {
    id: string;
    name: string | null;
    prefix: string;
    created: ShownDate;
    lastUsed: ShownDate | undefined;
    revoked: ShownDate | undefined;
    revokeHref: string;
  }[];
  created: { key: string; name: string | null | undefined } | undefined;
  notice: string | undefined;
  error: string | undefined;
  name: string;
  nameMax: number;
  createAction: string;
  otherEnvironment: { name: string; href: string };
}

interface ApiKeyRevokeView {
  environmentLabel: string;
  key: { id: string; name: string | null; prefix: string; created: ShownDate; lastUsed: ShownDate | undefined };
  revokeAction: string;
  cancel: string;
}

interface AuditView {
  filters: { actor: string; event: string; from: string; to: string };
  events: readonly string[];
  rows: {
    when: ShownDate;
    event: string;
    actor: string | null;
    /** No person acted: the application did, itself (the FDX Consent API's revocation). */
    actingApplication: string | undefined;
    environment: string | null;
    application: string | undefined;
    client: string | null;
    ip: string | null;
    details: { name: string; value: string }[];
  }[];
  filtered: boolean;
  action: string;
  newer: string | undefined;
  older: string | undefined;
  error: string | undefined;
}

interface MembersView {
  members: {
    id: string;
    email: string;
    name: string | null;
    role: Role;
    roleName: string;
    since: ShownDate;
    you: boolean;
    manageable: boolean;
    onlyOwner: boolean;
    removeHref: string;
  }[];
  roles: { value: Role; label: string }[];
  roleAction: string;
  invitations: { id: string; email: string; roleName: string; invitedBy: string | null; expires: ShownDate; revocable: boolean }[];
  inviteAction: string;
  revokeInvitationAction: string;
  invite: { email: string; role: string };
  notice: string | undefined;
  error: string | undefined;
}

interface MemberRemoveView {
  member: { id: string; email: string; roleName: string; you: boolean };
  authorizations: number;
  removeAction: string;
  cancel: string;
}

interface SettingsView {
  /** A grantmaker's "disbursements need a second person to approve"; undefined for other kinds. */
  secondApprover: { required: boolean; action: string } | undefined;
  requireMfa: boolean;
  withoutSecondFactor: number;
  canChange: boolean;
  youHaveSecondFactor: boolean;
  securityHref: string;
  action: string;
  notice: string | undefined;
  error: string | undefined;
}

interface GrantmakingView {
  environmentName: string;
  account: { current: string; available: string } | undefined;
  secondApprover: boolean;
  mayDecide: boolean;
  disbursements: {
    id: string;
    recipientName: string;
    amount: string;
    status: string;
    tone: string;
    created: ShownDate;
    mayApprove: boolean;
    ownPending: boolean;
    mayCancel: boolean;
  }[];
  actions: { approve: string; cancel: string };
  newer: string | undefined;
  older: string | undefined;
  notice: string | undefined;
  error: string | undefined;
}

interface IncomingView {
  environmentName: string;
  /** The directory lists the nonprofit's EIN (grantmakers can pay it). */
  listed: boolean;
  disbursements: {
    id: string;
    grantmakerName: string;
    amount: string;
    status: string;
    tone: string;
    created: ShownDate;
    approved: ShownDate | undefined;
    updated: ShownDate;
  }[];
  newer: string | undefined;
  older: string | undefined;
}

interface WebhooksView {
  environmentName: string;
  subscriptions: {
    id: string;
    url: string;
    category: string;
    status: string;
    statusLabel: string;
    created: ShownDate;
    lastSuccess: ShownDate | undefined;
  }[];
  deliveries: {
    id: string;
    category: string;
    url: string;
    status: string;
    statusLabel: string;
    attempts: number;
    answer: string | null;
    when: ShownDate;
  }[];
  categories: readonly string[];
  created: { url: string; secret: string } | undefined;
  existing: { url: string } | undefined;
  /** What was typed, shown again after a refusal (empty otherwise). */
  form: { url: string; category: string };
  error: string | undefined;
  notice: string | undefined;
  actions: { create: string; status: string; replay: string };
}

declare module '../views/models.js' {
  interface PageModels {
    'forgot-password.njk': ForgotPasswordView;
    'reset-password.njk': ResetPasswordView;
    'dashboard/invitation.njk': InvitationView;
  }
  interface DashboardPageModels {
    'dashboard/account.njk': AccountView;
    'dashboard/password.njk': PasswordView;
    'connections.njk': ConnectionsView;
    'dashboard/org-connections.njk': OrgConnectionsView;
    'dashboard/connection-revoke.njk': ConnectionRevokeView;
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
    'dashboard/grantmaking.njk': GrantmakingView;
    'dashboard/incoming.njk': IncomingView;
    'dashboard/invitation-other-account.njk': InvitationOtherAccountView;
    'dashboard/invitation-accept.njk': InvitationAcceptView;
  }
}
