import type { Membership } from '../../identity/memberships.js';
import type { TotpEnrolment } from '../../mfa/second-factors.js';
import type { ConsentPlan } from '../consent-plan.js';
import type { FdxConsentStep } from './fdx-consent-step.js';
import type { ClientView } from './interaction.js';
import type { ScopeView } from './scope-descriptions.js';
import type { PasskeyForm } from '../../views/models.js';

// What the hosted sign-in, consent and sign-out pages are given (views/models.ts).

/** The sign-in form: the dashboard's and the authorization flow's. */
interface LoginView {
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

interface SecondFactorView {
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

interface SecondFactorSetupView {
  requestId?: string | undefined;
  client: ClientView | undefined;
  reasons: readonly string[];
  enrolment: TotpEnrolment;
  action: string;
  csrf: string;
  organization: string | undefined;
  error: string | undefined;
}

interface RecoveryCodesView {
  requestId?: string | undefined;
  client: ClientView | undefined;
  codes: readonly string[];
  continueHref: string;
  continueLabel: string;
}

interface ChooseOrganizationView {
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
interface ConsentView {
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

interface LogoutView {
  action: string;
  xsrf: string;
  client: string | null;
  autoSubmit: boolean;
  signedIn: boolean;
}

interface SignedOutView {
  client: string | null;
  stillSignedIn: boolean;
}

declare module '../../views/models.js' {
  interface PageModels {
    'login.njk': LoginView;
    'second-factor.njk': SecondFactorView;
    'second-factor-setup.njk': SecondFactorSetupView;
    'recovery-codes.njk': RecoveryCodesView;
    'choose-organization.njk': ChooseOrganizationView;
    'consent.njk': ConsentView;
    'logout.njk': LogoutView;
    'signed-out.njk': SignedOutView;
  }
}
