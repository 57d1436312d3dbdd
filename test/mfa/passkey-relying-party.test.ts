import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServerKeys } from '../../src/keys/server-keys.js';
import { AttemptCounter } from '../../src/limits/attempt-counter.js';
import { authenticationOptions, checkPasskey, countPasskeysHere, listPasskeys, type PasskeyDeps } from '../../src/mfa/passkeys.js';
import { testBox } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { createStaff } from '../helpers/oauth-server.js';
import { SoftwarePasskey } from '../helpers/software-passkey.js';

/**
 * A passkey belongs to the RP ID it was made for (docs/oauth.md, "Second factors and
 * step-up"): two dashboards at different host names each see only their own, unless
 * passkey_rp_id names a domain both are under.
 */
let t: TestDatabase;
let counter: AttemptCounter;
beforeAll(async () => {
  t = await createTestDatabase();
  counter = new AttemptCounter(t.db, await ServerKeys.load(t.db, testBox));
});
afterAll(async () => t?.drop());

const dashboard = (origin: string, passkeyRpId?: string): PasskeyDeps => ({
  db: t.db,
  counter,
  environment: 'production',
  origin,
  passkeyRpId,
});

describe('passkeys and their relying party', () => {
  it('offers and accepts a passkey only on the dashboard whose host it was made for', async () => {
    const staff = await createStaff(t.db);
    const user = staff.users.member;
    const production = dashboard('https://dashboard.example.org');
    const sandbox = { ...dashboard('https://sandbox.example.org'), environment: 'sandbox' as const };
    const passkey = new SoftwarePasskey('https://dashboard.example.org');
    await passkey.storeFor(t.db, user.id);

    expect(await countPasskeysHere(production, user.id)).toBe(1);
    expect(await countPasskeysHere(sandbox, user.id)).toBe(0);
    expect((await listPasskeys(sandbox, user.id)).map((p) => ({ usableHere: p.usableHere, rp_id: p.rp_id }))).toEqual([
      { usableHere: false, rp_id: 'dashboard.example.org' },
    ]);
    expect((await authenticationOptions(sandbox, user.id)).allowCredentials).toEqual([]);

    // An answer made for the production dashboard, sent to the sandbox one, is refused there.
    const sandboxOptions = await authenticationOptions(sandbox, null);
    const check = await checkPasskey(
      sandbox,
      { challenge: sandboxOptions.challenge, user_id: null, from: '192.0.2.1' },
      passkey.answer(sandboxOptions.challenge, { origin: 'https://sandbox.example.org' }),
    );
    expect(check).toEqual({ ok: false });
    const productionOptions = await authenticationOptions(production, null);
    expect(
      await checkPasskey(
        production,
        { challenge: productionOptions.challenge, user_id: null, from: '192.0.2.1' },
        passkey.answer(productionOptions.challenge),
      ),
    ).toEqual({ ok: true, userId: user.id, method: 'hwk' });
  });

  it('with passkey_rp_id, one passkey serves both dashboards', async () => {
    const staff = await createStaff(t.db);
    const user = staff.users.admin;
    const passkey = new SoftwarePasskey('https://example.org');
    await passkey.storeFor(t.db, user.id);
    for (const origin of ['https://dashboard.example.org', 'https://sandbox.example.org']) {
      const deps = dashboard(origin, 'example.org');
      expect(await countPasskeysHere(deps, user.id), origin).toBe(1);
      const options = await authenticationOptions(deps, user.id);
      expect(options.rpId).toBe('example.org');
      expect(
        await checkPasskey(
          deps,
          { challenge: options.challenge, user_id: user.id, from: '192.0.2.1' },
          passkey.answer(options.challenge, { origin }),
        ),
        origin,
      ).toMatchObject({ ok: true, userId: user.id });
    }
  });
});
