import { describe, expect, it } from 'vitest';
import { KIND_SCOPES } from '../../src/accounts/scopes.js';
import { ORGANIZATION_KINDS } from '../../src/accounts/service.js';
import { orgsAdd, orgsList } from '../../src/cli/commands/orgs.js';
import { KIND_LABELS } from '../../src/identity/memberships.js';
import { planConsent } from '../../src/oidc/consent-plan.js';
import { describeScopes } from '../../src/oidc/interactions/scope-descriptions.js';

/** The organization kinds of the whole published API, as the consent screen and the admin CLI speak of them. */
describe('organization kinds', () => {
  it('the admin CLI offers every kind, in the order the product lists them', () => {
    const choices = ORGANIZATION_KINDS.join('|');
    expect(choices).toBe('nonprofit|fund_provider|grantmaker|platform|lockbox_provider');
    expect(orgsAdd.usage).toContain(`[--kind ${choices}]`);
    expect(orgsList.usage).toContain(`[--kind ${choices}]`);
  });

  it("the consent screen speaks of each kind's own data, never a nonprofit's or a fund provider's", () => {
    for (const kind of ['grantmaker', 'platform', 'lockbox_provider'] as const) {
      const [readOnly, readWrite] = describeScopes(['read_only', 'read_write'], kind);
      expect(readOnly!.title).toBe(`View your ${KIND_LABELS[kind].noun}’s data`);
      expect(readWrite!.title).toBe(`View and change your ${KIND_LABELS[kind].noun}’s data`);
      expect(`${readOnly!.detail} ${readWrite!.detail}`).not.toMatch(/donation|donor account|nonprofit|fund provider/i);
    }
    expect(describeScopes(['read_only'], 'grantmaker')[0]!.detail).toMatch(/disbursements/);
  });

  it('only a nonprofit shares bank data: the later kinds grant the API scopes alone', () => {
    for (const kind of ['grantmaker', 'platform', 'lockbox_provider'] as const) {
      expect(KIND_SCOPES[kind]).not.toContain('read:bank_accounts');
      const plan = planConsent(
        ['openid', 'read_only', 'read:bank_accounts'],
        ['openid', 'read_only', 'read:bank_accounts'],
        'owner',
        'user',
        kind,
      );
      expect([...plan.granted].sort()).toEqual(['openid', 'read_only']);
      expect(plan.notApplicable).toEqual(['read:bank_accounts']);
    }
  });
});
