import { MAX_DURATION_DAYS, type FdxConsentRequest, type FdxDataCluster, type FdxResourceType } from './fdx-consent-request.js';

/**
 * What an FDX consent request asks, in plain English, for the consent screen (docs/api.md, "FDX
 * bank-data API", Consents): each data cluster, how long and how far back. The screen shows
 * these beside the organization's accounts to choose from.
 */

export const CLUSTER_WORDS: Readonly<Record<FdxDataCluster, string>> = {
  ACCOUNT_BASIC: 'Account names, types and masked numbers',
  ACCOUNT_DETAILED: 'Account details and balances',
  TRANSACTIONS: 'Transactions',
  STATEMENTS: 'Statements (PDF)',
  CUSTOMER_CONTACT: "The organization's name, address and contact details",
};

const RESOURCE_WORDS: Readonly<Record<FdxResourceType, string>> = {
  ACCOUNT: 'For each account you choose',
  CUSTOMER: 'About the organization',
};

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** "once", "for 30 days", "for up to one year" (PERSISTENT: at most a year, then reauthorization). */
export function durationWords(request: Pick<FdxConsentRequest, 'durationType' | 'durationPeriod'>): string {
  if (request.durationType === 'ONE_TIME') return 'once';
  if (request.durationType === 'TIME_BOUND') return `for ${plural(request.durationPeriod ?? 0, 'day')}`;
  const period = request.durationPeriod ?? MAX_DURATION_DAYS;
  return period >= MAX_DURATION_DAYS ? 'for up to one year' : `for up to ${plural(period, 'day')}`;
}

/** "going back 90 days"; a lookback of 0 shares nothing from before the request. */
export function lookbackWords(lookbackPeriod: number): string {
  return lookbackPeriod === 0 ? 'with no past activity' : `going back ${plural(lookbackPeriod, 'day')}`;
}

/**
 * How an account is named to people: its nickname (else its product), its number's last four
 * digits, and its product (the kind of account) when the nickname took the label's place.
 */
export function accountWords(account: { product_name: string; nickname: string | null; account_number: string }): {
  label: string;
  masked: string;
  product: string | null;
} {
  return {
    label: account.nickname ?? account.product_name,
    masked: `••••${account.account_number.slice(-4)}`,
    product: account.nickname === null ? null : account.product_name,
  };
}

export interface ConsentRequestWords {
  duration: string;
  lookback: string;
  resources: { resourceType: FdxResourceType; heading: string; clusters: { cluster: FdxDataCluster; words: string }[] }[];
}

/** Everything the consent screen says about one request. */
export function describeFdxConsentRequest(request: FdxConsentRequest): ConsentRequestWords {
  return {
    duration: durationWords(request),
    lookback: lookbackWords(request.lookbackPeriod),
    resources: request.resources.map((r) => ({
      resourceType: r.resourceType,
      heading: RESOURCE_WORDS[r.resourceType],
      clusters: r.dataClusters.map((cluster) => ({ cluster, words: CLUSTER_WORDS[cluster] })),
    })),
  };
}
