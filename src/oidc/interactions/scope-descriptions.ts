import type { OrganizationKind } from '../../db/schema.js';
import { KIND_LABELS } from '../../identity/memberships.js';

/** Each permission in plain words, for the consent screen and the connections page (a nonprofit's words). */
export const SCOPE_DESCRIPTIONS: Readonly<Record<string, { title: string; detail: string }>> = {
  read_only: { title: 'View your nonprofit’s data', detail: 'Donations, grants and other records. It cannot change anything.' },
  read_write: {
    title: 'View and change your nonprofit’s data',
    detail: 'Everything view access allows, plus creating and updating records.',
  },
  openid: { title: 'Know who you are', detail: 'Your name and e-mail address.' },
  offline_access: {
    title: 'Stay connected when you are not signed in',
    detail: 'The application keeps its access between your visits, until it is revoked, for at most a year.',
  },
  'read:bank_accounts': {
    title: 'Read your nonprofit’s bank accounts',
    detail: 'Balances, statements and transactions, through the FDX bank-data API.',
  },
  'sync:connected_accounts': {
    title: 'Keep connected bank accounts in sync',
    detail: 'Regular reads of statements and transactions, through the FDX bank-data API.',
  },
};

export interface ScopeView {
  scope: string;
  title: string;
  detail: string;
}

/** What "your organization's data" means for each kind but a nonprofit (whose words are above). */
const KIND_DETAILS: Readonly<Record<Exclude<OrganizationKind, 'nonprofit'>, Readonly<Record<string, string>>>> = {
  fund_provider: {
    read_only: 'Donor accounts, authorization tokens, grant requests and other records. It cannot change anything.',
    read_write: 'Everything view access allows, plus creating and updating records, such as approving donor accounts.',
  },
  grantmaker: {
    read_only: 'Financial accounts, disbursements, programs and other records. It cannot change anything.',
    read_write: 'Everything view access allows, plus creating and updating records, such as disbursements.',
  },
  platform: {
    read_only: 'Connects, grants and other records. It cannot change anything.',
    read_write: 'Everything view access allows, plus creating and updating records, such as grants.',
  },
  lockbox_provider: {
    read_only: 'PO boxes, mail batches and other records. It cannot change anything.',
    read_write: 'Everything view access allows, plus creating and updating records, such as mail batches.',
  },
};

function describeScope(scope: string, kind: OrganizationKind): ScopeView {
  const described = SCOPE_DESCRIPTIONS[scope] ?? { title: scope, detail: '' };
  if (kind === 'nonprofit') return { scope, ...described };
  return {
    scope,
    title: described.title.replace('your nonprofit’s', `your ${KIND_LABELS[kind].noun}’s`),
    detail: KIND_DETAILS[kind][scope] ?? described.detail,
  };
}

export function describeScopes(scopes: readonly string[], kind: OrganizationKind = 'nonprofit'): ScopeView[] {
  return scopes.map((scope) => describeScope(scope, kind));
}
