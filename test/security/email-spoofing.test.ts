import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MIN_PASSWORD_PARAMS } from '../../src/accounts/passwords.js';
import { addUser } from '../../src/accounts/service.js';
import { runAdmin } from '../helpers/admin-cli.js';
import { TEST_SECRETS_KEY } from '../helpers/app.js';
import { FormBrowser } from '../helpers/browser.js';
import { dashboardSession } from '../helpers/dashboard.js';
import { inviteFromMembersPage } from '../helpers/invitations.js';
import { createStaff } from '../helpers/oauth-server.js';
import { askForReset, clearAttemptCounters, resetLinksFor } from '../helpers/password-reset.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * Addresses that look like another (docs/security.md, "Addresses that display as another"): a
 * right-to-left override makes `ceo@` U+202E `gro.elpmaxe` display as `ceo@example.org` on the
 * members page, in the audit log and in mail clients; a zero-width space or a decomposed accent
 * makes a second account whose address is indistinguishable from the first. Every place an address
 * enters refuses the first kind with a 400 saying why, and treats the second as the one account.
 */
const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
const origin = () => server.urls.dashboard;
const tag = () => crypto.randomBytes(3).toString('hex');
const RLO = '\u202e';
const CONTROL_MESSAGE = 'cannot contain control characters or invisible formatting characters';
const countRows = async (table: 'users' | 'invitations' | 'outbound_mail') =>
  Number(
    (
      await t.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('addresses that display as another', () => {
  it('an invitation, a new user and a reset request with a direction override or an invisible character are refused with a 400 saying why', async () => {
    const s = await createStaff(t.db);
    const owner = await dashboardSession(server, 'production', s.users.owner);
    const before = { users: await countRows('users'), invitations: await countRows('invitations'), mail: await countRows('outbound_mail') };
    // After the override the domain shows right to left: "ceo-…@example.org".
    for (const spoof of [
      `ceo-${tag()}@${RLO}gro.elpmaxe`,
      `ceo-${tag()}\u200b@example.org`,
      `ceo-${tag()}@example.org\u2066`,
      `ceo-${tag()}\u0000@example.org`,
    ]) {
      const invited = await inviteFromMembersPage(owner, s.ein, spoof, 'owner');
      expect(invited.status, JSON.stringify(spoof)).toBe(400);
      expect(invited.html).toContain(CONTROL_MESSAGE);

      const cli = await runAdmin(
        ['users', 'add', '--email', spoof, '--password-stdin'],
        { DATABASE_URL: t.url, ALMONER_SECRETS_KEY: TEST_SECRETS_KEY },
        'a long enough password\n',
      );
      expect(cli.code).not.toBe(0);
      expect(cli.stderr).toContain(CONTROL_MESSAGE);

      const reset = await askForReset(origin(), spoof);
      expect(reset.status).toBe(400);
      expect(reset.html).toContain(CONTROL_MESSAGE);
    }
    await server.runtime.background.drain();
    expect({
      users: await countRows('users'),
      invitations: await countRows('invitations'),
      mail: await countRows('outbound_mail'),
    }).toEqual(before);
  });

  it('an address typed with a decomposed accent is the account of the composed one: no second account, and it signs in and resets', async () => {
    await clearAttemptCounters(t.db);
    const composed = `ren\u00e9-${tag()}@example.org`;
    const decomposed = composed.normalize('NFD');
    expect(decomposed).not.toBe(composed);
    const password = 'tidal-grove-ledger-42';
    const user = await addUser(t.db, { email: composed, password }, MIN_PASSWORD_PARAMS);

    // A look-alike second account is refused as the account that exists.
    const cli = await runAdmin(
      ['users', 'add', '--email', decomposed.toUpperCase(), '--password-stdin'],
      { DATABASE_URL: t.url, ALMONER_SECRETS_KEY: TEST_SECRETS_KEY },
      'another long password\n',
    );
    expect(cli.code).not.toBe(0);
    expect(cli.stderr).toContain('already exists');
    expect(await t.db.selectFrom('users').select('id').where('email', 'in', [composed, decomposed]).execute()).toEqual([{ id: user.id }]);

    // Typed decomposed, the address signs in to the account and gets its reset link.
    const browser = new FormBrowser(() => false);
    const signedIn = await browser.submit(await browser.request(`${origin()}/sign-in?next=/account`), '/sign-in', {
      email: decomposed,
      password,
    });
    expect(signedIn.url.pathname).toBe('/account');
    expect((await askForReset(origin(), decomposed)).status).toBe(200);
    expect(await resetLinksFor(server, t.db, composed)).toHaveLength(1);
  });
});
