import { describe, expect, it } from 'vitest';
import {
  DEFAULT_LOOKBACK_DAYS,
  InvalidAuthorizationDetails,
  parseFdxAuthorizationDetails,
} from '../../src/authorizations/fdx-consent-request.js';
import { describeFdxConsentRequest, durationWords, lookbackWords } from '../../src/authorizations/fdx-consent-words.js';

const account = { resourceType: 'ACCOUNT', dataClusters: ['ACCOUNT_DETAILED', 'TRANSACTIONS'] };
const details = (consentRequest: Record<string, unknown>) => [{ type: 'fdx_v1.0', consentRequest }];
const request = (overrides: Record<string, unknown> = {}) =>
  details({ durationType: 'TIME_BOUND', durationPeriod: 90, resources: [account], ...overrides });

/** The description of the refusal, which names the field and the rule. */
function refusal(value: unknown): string {
  try {
    parseFdxAuthorizationDetails(value);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidAuthorizationDetails);
    expect((error as InvalidAuthorizationDetails).error).toBe('invalid_authorization_details');
    return (error as InvalidAuthorizationDetails).description;
  }
  throw new Error('accepted');
}

describe('parseFdxAuthorizationDetails', () => {
  it('accepts a request and resolves an absent lookback to 365 days', () => {
    expect(parseFdxAuthorizationDetails(request())).toEqual({
      durationType: 'TIME_BOUND',
      durationPeriod: 90,
      lookbackPeriod: DEFAULT_LOOKBACK_DAYS,
      resources: [account],
    });
    expect(DEFAULT_LOOKBACK_DAYS).toBe(365);
    const both = parseFdxAuthorizationDetails(
      request({ lookbackPeriod: 0, resources: [account, { resourceType: 'CUSTOMER', dataClusters: ['CUSTOMER_CONTACT'] }] }),
    );
    expect(both.lookbackPeriod).toBe(0);
    expect(both.resources.map((r) => r.resourceType)).toEqual(['ACCOUNT', 'CUSTOMER']);
  });

  it('needs an array of exactly one element of type fdx_v1.0 with a consentRequest object', () => {
    expect(refusal({ type: 'fdx_v1.0' })).toBe('authorization_details must be a JSON array');
    expect(refusal([])).toMatch(/exactly one element of type fdx_v1.0, not 0/);
    expect(refusal([...request(), ...request()])).toMatch(/exactly one element of type fdx_v1.0, not 2/);
    expect(refusal(['x'])).toBe('authorization_details[0] must be an object');
    expect(refusal([{ type: 'payment_initiation', consentRequest: {} }])).toBe(
      'authorization_details[0].type "payment_initiation" is not accepted: this server accepts only type fdx_v1.0',
    );
    expect(refusal([{ type: 'fdx_v1.0' }])).toBe('authorization_details[0].consentRequest must be an object');
    expect(refusal([{ type: 'fdx_v1.0', consentRequest: [] }])).toMatch(/consentRequest must be an object/);
  });

  it('refuses unknown members of consentRequest and of its resources, without echoing huge input', () => {
    expect(refusal(request({ extra: 1 }))).toBe(
      'authorization_details[0].consentRequest has unknown members ("extra"): this server accepts only the members FDX defines there',
    );
    const huge = 'k'.repeat(10_000);
    const description = refusal(request({ [huge]: 1, b: 1, c: 1, d: 1 }));
    expect(description.length).toBeLessThan(250);
    expect(description).toMatch(/, …\)/);
    expect(refusal(request({ resources: [{ ...account, resourceId: 'x' }] }))).toMatch(
      /^authorization_details\[0\]\.consentRequest\.resources\[0\] has unknown members \("resourceId"\)/,
    );
  });

  it('needs durationType ONE_TIME, TIME_BOUND or PERSISTENT', () => {
    expect(refusal(request({ durationType: undefined }))).toBe(
      'authorization_details[0].consentRequest.durationType must be ONE_TIME, TIME_BOUND or PERSISTENT',
    );
    expect(refusal(request({ durationType: 'FOREVER' }))).toMatch(/durationType must be ONE_TIME, TIME_BOUND or PERSISTENT/);
  });

  it('holds durationPeriod to 1..365 whole days: required for TIME_BOUND, refused for ONE_TIME, optional for PERSISTENT', () => {
    const rule = 'authorization_details[0].consentRequest.durationPeriod must be a whole number of days from 1 to 365';
    for (const bad of [0, 366, 1.5, '30', null]) expect(refusal(request({ durationPeriod: bad })), String(bad)).toBe(rule);
    expect(refusal(request({ durationPeriod: undefined }))).toBe(
      'authorization_details[0].consentRequest.durationPeriod is required when durationType is TIME_BOUND',
    );
    expect(refusal(request({ durationType: 'ONE_TIME', durationPeriod: 1 }))).toBe(
      'authorization_details[0].consentRequest.durationPeriod must be absent when durationType is ONE_TIME',
    );
    expect(parseFdxAuthorizationDetails(request({ durationType: 'ONE_TIME', durationPeriod: undefined }))).not.toHaveProperty(
      'durationPeriod',
    );
    expect(parseFdxAuthorizationDetails(request({ durationType: 'PERSISTENT', durationPeriod: undefined }))).not.toHaveProperty(
      'durationPeriod',
    );
    expect(parseFdxAuthorizationDetails(request({ durationType: 'PERSISTENT', durationPeriod: 365 })).durationPeriod).toBe(365);
    expect(refusal(request({ durationType: 'PERSISTENT', durationPeriod: 400 }))).toBe(rule);
  });

  it('holds lookbackPeriod to 0..730 whole days', () => {
    expect(parseFdxAuthorizationDetails(request({ lookbackPeriod: 730 })).lookbackPeriod).toBe(730);
    for (const bad of [-1, 731, 2.5, '90'])
      expect(refusal(request({ lookbackPeriod: bad }))).toBe(
        'authorization_details[0].consentRequest.lookbackPeriod must be a whole number of days from 0 to 730',
      );
  });

  it('needs 1 to 10 resources, each type once', () => {
    expect(refusal(request({ resources: [] }))).toBe('authorization_details[0].consentRequest.resources must name at least one resource');
    expect(refusal(request({ resources: Array.from({ length: 11 }, () => account) }))).toBe(
      'authorization_details[0].consentRequest.resources must name at most 10 resources',
    );
    expect(refusal(request({ resources: 'ACCOUNT' }))).toMatch(/resources must be an array of resources/);
    expect(refusal(request({ resources: [account, account] }))).toBe(
      'authorization_details[0].consentRequest.resources[1].resourceType ACCOUNT is named twice: one entry per resource type',
    );
  });

  it('serves ACCOUNT and CUSTOMER only: DOCUMENT and anything else are refused', () => {
    expect(refusal(request({ resources: [{ resourceType: 'DOCUMENT', dataClusters: ['STATEMENTS'] }] }))).toBe(
      'authorization_details[0].consentRequest.resources[0].resourceType "DOCUMENT" is not served by this data provider: ACCOUNT or CUSTOMER',
    );
    expect(refusal(request({ resources: [{ resourceType: 'x'.repeat(5000), dataClusters: ['STATEMENTS'] }] })).length).toBeLessThan(200);
    expect(refusal(request({ resources: [{ dataClusters: ['STATEMENTS'] }] }))).toMatch(
      /resources\[0\]\.resourceType must be ACCOUNT or CUSTOMER/,
    );
  });

  it('offers ACCOUNT_BASIC, ACCOUNT_DETAILED, TRANSACTIONS, STATEMENTS for ACCOUNT and CUSTOMER_CONTACT for CUSTOMER, each once', () => {
    const all = ['ACCOUNT_BASIC', 'ACCOUNT_DETAILED', 'TRANSACTIONS', 'STATEMENTS'];
    expect(
      parseFdxAuthorizationDetails(request({ resources: [{ resourceType: 'ACCOUNT', dataClusters: all }] })).resources[0]!.dataClusters,
    ).toEqual(all);
    for (const cluster of ['BILLS', 'IMAGES', 'INVESTMENTS', 'TAX', 'CUSTOMER_CONTACT']) {
      expect(refusal(request({ resources: [{ resourceType: 'ACCOUNT', dataClusters: ['TRANSACTIONS', cluster] }] }))).toBe(
        `authorization_details[0].consentRequest.resources[0].dataClusters[1] "${cluster}" is not offered by this data provider for ACCOUNT (ACCOUNT_BASIC, ACCOUNT_DETAILED, TRANSACTIONS, STATEMENTS)`,
      );
    }
    expect(refusal(request({ resources: [{ resourceType: 'CUSTOMER', dataClusters: ['CUSTOMER_PERSONAL'] }] }))).toMatch(
      /"CUSTOMER_PERSONAL" is not offered by this data provider for CUSTOMER \(CUSTOMER_CONTACT\)/,
    );
    expect(refusal(request({ resources: [{ resourceType: 'ACCOUNT', dataClusters: ['TRANSACTIONS', 'TRANSACTIONS'] }] }))).toBe(
      'authorization_details[0].consentRequest.resources[0].dataClusters[1] "TRANSACTIONS" is named twice',
    );
    expect(refusal(request({ resources: [{ resourceType: 'ACCOUNT', dataClusters: [] }] }))).toBe(
      'authorization_details[0].consentRequest.resources[0].dataClusters must name at least one data cluster',
    );
    expect(refusal(request({ resources: [{ resourceType: 'ACCOUNT', dataClusters: [7] }] }))).toMatch(
      /dataClusters\[0\] must be data cluster names/,
    );
  });
});

describe('the consent screen words', () => {
  it('say how long', () => {
    expect(durationWords({ durationType: 'ONE_TIME' })).toBe('once');
    expect(durationWords({ durationType: 'TIME_BOUND', durationPeriod: 30 })).toBe('for 30 days');
    expect(durationWords({ durationType: 'TIME_BOUND', durationPeriod: 1 })).toBe('for 1 day');
    expect(durationWords({ durationType: 'PERSISTENT' })).toBe('for up to one year');
    expect(durationWords({ durationType: 'PERSISTENT', durationPeriod: 365 })).toBe('for up to one year');
    expect(durationWords({ durationType: 'PERSISTENT', durationPeriod: 180 })).toBe('for up to 180 days');
  });

  it('say how far back, and what each cluster is', () => {
    expect(lookbackWords(90)).toBe('going back 90 days');
    expect(lookbackWords(0)).toBe('with no past activity');
    const words = describeFdxConsentRequest(
      parseFdxAuthorizationDetails(
        request({
          resources: [
            { resourceType: 'ACCOUNT', dataClusters: ['ACCOUNT_BASIC', 'ACCOUNT_DETAILED', 'TRANSACTIONS', 'STATEMENTS'] },
            { resourceType: 'CUSTOMER', dataClusters: ['CUSTOMER_CONTACT'] },
          ],
        }),
      ),
    );
    expect(words).toEqual({
      duration: 'for 90 days',
      lookback: 'going back 365 days',
      resources: [
        {
          resourceType: 'ACCOUNT',
          heading: 'For each account you choose',
          clusters: [
            { cluster: 'ACCOUNT_BASIC', words: 'Account names, types and masked numbers' },
            { cluster: 'ACCOUNT_DETAILED', words: 'Account details and balances' },
            { cluster: 'TRANSACTIONS', words: 'Transactions' },
            { cluster: 'STATEMENTS', words: 'Statements (PDF)' },
          ],
        },
        {
          resourceType: 'CUSTOMER',
          heading: 'About the organization',
          clusters: [{ cluster: 'CUSTOMER_CONTACT', words: "The organization's name, address and contact details" }],
        },
      ],
    });
  });
});
