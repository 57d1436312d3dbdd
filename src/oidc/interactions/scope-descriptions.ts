import type { OrganizationKind } from '../../db/schema.js';

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

/** A fund provider's records are its donor accounts and grant requests, not donations and grants. */
const FUND_PROVIDER_DETAILS: Readonly<Record<string, string>> = {
  read_only: 'Donor accounts, authorization tokens, grant requests and other records. It cannot change anything.',
  read_write: 'Everything view access allows, plus creating and updating records, such as approving donor accounts.',
};

function describeScope(scope: string, kind: OrganizationKind): ScopeView {
  const described = SCOPE_DESCRIPTIONS[scope] ?? { title: scope, detail: '' };
  if (kind === 'nonprofit') return { scope, ...described };
  return {
    scope,
    title: described.title.replace('your nonprofit’s', 'your fund provider’s'),
    detail: FUND_PROVIDER_DETAILS[scope] ?? described.detail,
  };
}

export function describeScopes(scopes: readonly string[], kind: OrganizationKind = 'nonprofit'): ScopeView[] {
  return scopes.map((scope) => describeScope(scope, kind));
}
