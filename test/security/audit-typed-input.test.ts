/**
 * Attack: read what people typed into the sign-in form's e-mail field out of the audit log (or
 * a copy of the database, or the logs): mistyped addresses, addresses of people who have no
 * account here, and passwords typed into the wrong field.
 * Protection: a failed sign-in's audit rows keep an HMAC of the (normalised) input under a
 * server key, with that key's id (`email_hmac: "<kid>.<mac>"`), and the address itself only
 * when it is an account's (already in `users`). Nothing else records the input, in any table
 * or log line, on the authorization sign-in and the connections-page sign-in alike.
 */
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { FormBrowser } from '../helpers/browser.js';
import { dumpAllRows } from '../helpers/dump.js';
import { authorize, endpoints } from '../helpers/flow.js';
import { captureLogs } from '../helpers/log-capture.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/** Every log line written, at the most verbose level. */
const { chunks: lines, logger } = captureLogs('trace');

const REDIRECT = 'https://app.example.org/callback';
const {
  testDatabase: t,
  server,
  staff,
  clients: { client },
} = useOAuthServer({
  logger,
  clients: { client: { environment: 'production', redirectUris: [REDIRECT] } },
});

const suffix = crypto.randomBytes(4).toString('hex');
/** Typed into the e-mail field: an address with no account, and a staff member's real password. */
const typed = () => ({
  unknownAddress: `Nobody-${suffix}@Example.org`,
  unknownOnConnections: `ghost.${suffix}@example.net`,
  passwordInEmailField: staff.users.member.password,
  garbageWithSpaces: `  Correct Horse ${suffix} Battery  `,
});
const WHITESPACE_AND_CASE = (value: string) => [value, value.trim(), value.toLowerCase(), value.trim().toLowerCase()];

async function authorizationSignIn(email: string, password: string) {
  await expect(
    authorize(server, {
      environment: 'production',
      clientId: client.client_id,
      redirectUri: REDIRECT,
      scope: 'read_only',
      login: { email, password },
    }),
  ).rejects.toThrow(/sign-in refused \((401|429)\)/);
}

async function connectionsSignIn(email: string, password: string): Promise<number> {
  const browser = new FormBrowser(() => false);
  const page = await browser.request(`${endpoints(server, 'production').dashboard}/oauth/connections`);
  return (await browser.submit(page, '/oauth/connections/sign-in', { email, password })).status;
}

const auditRows = async () =>
  (await t.db
    .selectFrom('audit_events')
    .select(['event', 'details', 'actor_user_id'])
    .where('event', 'like', 'login.%')
    .orderBy('id')
    .execute()) as { event: string; details: Record<string, unknown>; actor_user_id: string | null }[];

describe('what is typed into the e-mail field', () => {
  it('appears in no audit row, no table and no log line: an unknown address, a password in the wrong field, on both sign-in forms, up to a lockout', async () => {
    const input = typed();
    await authorizationSignIn(input.unknownAddress, 'some password 1');
    await authorizationSignIn(input.passwordInEmailField, 'some password 2');
    await authorizationSignIn(input.garbageWithSpaces, 'some password 3');
    expect(await connectionsSignIn(input.passwordInEmailField, 'some password 4')).toBe(401);
    // Five failures lock the unknown address: the lockout row and the refusals after it too.
    for (let i = 0; i < 4; i += 1) expect(await connectionsSignIn(input.unknownOnConnections, `wrong ${i}`)).toBe(401);
    expect(await connectionsSignIn(input.unknownOnConnections, 'wrong 4')).toBe(429);
    expect(await connectionsSignIn(input.unknownOnConnections, 'wrong 5')).toBe(429);
    // A known account with a wrong password, for contrast: its own address may be recorded.
    expect(await connectionsSignIn(staff.users.admin.email.toUpperCase(), 'not the password')).toBe(401);

    const rows = await auditRows();
    const events = rows.map((r) => `${r.event}:${String(r.details.reason ?? '')}`);
    expect(events.filter((e) => e === 'login.failed:unknown_user')).toHaveLength(9);
    expect(events).toContain('login.locked_out:');
    expect(events).toContain('login.failed:locked_out');

    const dump = (await dumpAllRows(t.db)).toLowerCase();
    const log = lines.join('').toLowerCase();
    expect(lines.length).toBeGreaterThan(10);
    for (const value of [input.unknownAddress, input.unknownOnConnections, input.passwordInEmailField, input.garbageWithSpaces]) {
      for (const form of WHITESPACE_AND_CASE(value)) {
        expect(dump.includes(form.toLowerCase()), `a table holds ${JSON.stringify(form)}`).toBe(false);
        expect(log.includes(form.toLowerCase()), `a log line holds ${JSON.stringify(form)}`).toBe(false);
      }
    }
    // The audit trail still tells the attempts apart and ties each one to its input.
    const unknown = rows.filter((r) => r.actor_user_id === null);
    expect(unknown.length).toBeGreaterThanOrEqual(11);
    for (const row of unknown) {
      expect(row.details.email).toBeUndefined();
      expect(row.details.email_hmac).toMatch(/^[0-9a-f]{12}\.[A-Za-z0-9_-]{43}$/);
    }
    const known = rows.find((r) => r.actor_user_id === staff.users.admin.id)!;
    expect(known.details).toMatchObject({ email: staff.users.admin.email, reason: 'wrong_password' });
  });

  it('is recorded as an HMAC under a server key named in the row, so an investigator holding the key can match an input', async () => {
    const { ServerKeys } = await import('../../src/keys/server-keys.js');
    const { testBox } = await import('../helpers/app.js');
    const keys = await ServerKeys.load(t.db, testBox);
    const address = `Someone-${suffix}@Example.ORG`;
    await authorizationSignIn(address, 'a password');
    const row = (await auditRows()).at(-1)!;
    expect(row.details.reason).toBe('unknown_user');
    const [kid] = String(row.details.email_hmac).split('.');
    // The same input, normalised as sign-in normalises it, hashes to the recorded value under that key.
    expect(keys.keyedHashes('audit_input', address.toLowerCase())).toContain(row.details.email_hmac);
    expect(keys.keyedHashes('audit_input', 'someone-else@example.org')).not.toContain(row.details.email_hmac);
    expect(kid).toBe(keys.signing('hashing_key').kid);
    // Not a plain hash a dictionary could be run against.
    expect(row.details.email_hmac).not.toContain(crypto.createHash('sha256').update(address.toLowerCase()).digest('base64url'));
  });
});
