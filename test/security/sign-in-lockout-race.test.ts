/**
 * Attack: many wrong passwords sent at once, so that they all pass the "is this account or
 * address locked?" check before the first failure is counted: dozens of argon2 guesses where
 * the policy allows 5 per account and 20 per address, and a correct password slipped in among
 * them signs in although the account should already be locked.
 * Protection: every attempt first reserves a point of both budgets (account and address) with
 * one atomic upsert each in login_throttle; a refused reservation is answered 429 with
 * Retry-After and the lockout page, before any user lookup or argon2 run. A success gives its
 * points back (src/identity/login-throttle.ts, sign-in.ts). Both sign-in forms (the
 * authorization flow's and the connections page's) go through it.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { passwordVerifications } from '../../src/accounts/passwords.js';
import { FormBrowser } from '../helpers/browser.js';
import { endpoints } from '../helpers/flow.js';
import { createStaff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';
import { signInFailuresPerAccount, signInFailuresPerCallerAddress } from '../../src/limits/rate-limits.js';

const REDIRECT = 'https://app.example.org/callback';
const {
  testDatabase: t,
  server,
  clients: { client },
} = useOAuthServer({ staff: 0, clients: { client: { environment: 'production', redirectUris: [REDIRECT] } } });
const LOCKOUT_TEXT = 'Too many unsuccessful sign-in attempts';

// Every request here comes from 127.0.0.1, so each test starts with that address's budget unspent.
beforeEach(async () => {
  await t.db.deleteFrom('login_throttle').execute();
});

interface SignInForm {
  action: URL;
  csrf: string;
  cookie: string;
}

/** The sign-in form a browser is shown (by the authorization flow or the connections page), with its cookies. */
async function signInForm(start: string, actionPart: string): Promise<SignInForm> {
  const browser = new FormBrowser(() => false);
  const page = await browser.request(start);
  const form = [...page.html.matchAll(/<form[^>]*method="post"[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/g)].find((f) =>
    f[1]!.includes(actionPart),
  );
  if (!form) throw new Error(`no sign-in form at ${page.url} (${page.status})`);
  const action = new URL(form[1]!.replace(/&amp;/g, '&'), page.url);
  return { action, csrf: /name="csrf" value="([^"]+)"/.exec(form[2]!)![1]!, cookie: browser.cookieHeader(action) };
}

function authorizationSignIn(): Promise<SignInForm> {
  const url = new URL(endpoints(server, 'production').authorize);
  const params = {
    client_id: client.client_id,
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope: 'read_only',
    nonce: 'n',
    code_challenge: 'a'.repeat(43),
    code_challenge_method: 'S256',
  };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return signInForm(url.toString(), '/login');
}

const connectionsSignIn = () => signInForm(`${endpoints(server, 'production').dashboard}/oauth/connections`, '/oauth/connections/sign-in');

interface Answer {
  status: number;
  retryAfter: string | null;
  html: string;
}

async function submit(form: SignInForm, login: { email: string; password: string }): Promise<Answer> {
  const response = await fetch(form.action, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html', origin: form.action.origin, cookie: form.cookie },
    body: new URLSearchParams({ csrf: form.csrf, ...login }),
  });
  return { status: response.status, retryAfter: response.headers.get('retry-after'), html: await response.text() };
}

/**
 * Sends every wrong attempt at once and, as soon as the first is refused (the budget is spent
 * while the granted attempts may still be running argon2), the right password: the burst's
 * answers, the right password's answer, and how many argon2 verifications ran meanwhile.
 */
async function burst(
  wrong: { form: SignInForm; login: { email: string; password: string } }[],
  right: { form: SignInForm; login: { email: string; password: string } },
) {
  const before = passwordVerifications.count;
  let refused!: () => void;
  const firstRefusal = new Promise<void>((resolve) => (refused = resolve));
  const answers = Promise.all(
    wrong.map(({ form, login }) =>
      submit(form, login).then((answer) => {
        if (answer.status === 429) refused();
        return answer;
      }),
    ),
  );
  // If nothing were refused, the right password goes last (and the assertions below say why).
  void answers.finally(refused);
  const rightAnswer = firstRefusal.then(() => submit(right.form, right.login));
  const [wrongAnswers, rightOne] = await Promise.all([answers, rightAnswer]);
  return { wrongAnswers, rightOne, argon2Runs: passwordVerifications.count - before };
}

function expectLockoutPage(answer: Answer, policy: { maxLockSeconds: number }): void {
  expect(answer.status).toBe(429);
  expect(Number(answer.retryAfter)).toBeGreaterThan(0);
  expect(Number(answer.retryAfter)).toBeLessThanOrEqual(policy.maxLockSeconds);
  expect(answer.html).toContain(LOCKOUT_TEXT);
}

/** The burst's statuses: every failure the budget allowed answered 401 except the last, which starts the lockout (429); everything else 429. */
function expectBudgetHeld(answers: Answer[], allowed: number, policy: { maxLockSeconds: number }): void {
  const statuses = answers.map((a) => a.status);
  expect(statuses.filter((s) => s === 401)).toHaveLength(allowed - 1);
  expect(statuses.filter((s) => s === 429)).toHaveLength(answers.length - (allowed - 1));
  for (const answer of answers.filter((a) => a.status === 429)) expectLockoutPage(answer, policy);
}

describe('concurrent wrong passwords against the sign-in lockout', () => {
  it('authorization sign-in: 40 at once on one account run argon2 5 times, the rest and the right password get 429', async () => {
    const user = (await createStaff(t.db)).users.member;
    const form = await authorizationSignIn();
    const wrong = Array.from({ length: 40 }, (_, i) => ({ form, login: { email: user.email, password: `wrong-${i}` } }));
    const { wrongAnswers, rightOne, argon2Runs } = await burst(wrong, { form, login: user });
    expect(argon2Runs).toBe(signInFailuresPerAccount.max);
    expectBudgetHeld(wrongAnswers, signInFailuresPerAccount.max, signInFailuresPerAccount);
    expectLockoutPage(rightOne, signInFailuresPerAccount);
    // Still locked: the right password is not even checked.
    const after = passwordVerifications.count;
    expectLockoutPage(await submit(form, user), signInFailuresPerAccount);
    expect(passwordVerifications.count).toBe(after);
  });

  it('connections-page sign-in: 40 at once on one account run argon2 5 times, the rest and the right password get 429', async () => {
    const user = (await createStaff(t.db)).users.owner;
    const form = await connectionsSignIn();
    const wrong = Array.from({ length: 40 }, (_, i) => ({ form, login: { email: user.email, password: `wrong-${i}` } }));
    const { wrongAnswers, rightOne, argon2Runs } = await burst(wrong, { form, login: user });
    expect(argon2Runs).toBe(signInFailuresPerAccount.max);
    expectBudgetHeld(wrongAnswers, signInFailuresPerAccount.max, signInFailuresPerAccount);
    expectLockoutPage(rightOne, signInFailuresPerAccount);
  });

  it('the refusals of one lockout are one audit row with their count, however many arrive at once', async () => {
    const user = (await createStaff(t.db)).users.member;
    const form = await connectionsSignIn();
    for (let i = 0; i < signInFailuresPerAccount.max; i += 1) await submit(form, { email: user.email, password: `wrong-${i}` });
    const { max } = await t.db
      .selectFrom('audit_events')
      .select((eb) => eb.fn.max('id').as('max'))
      .executeTakeFirstOrThrow();
    const refusals = async () =>
      (await t.db.selectFrom('audit_events').select(['event', 'details']).where('id', '>', String(max)).execute()) as {
        event: string;
        details: Record<string, unknown>;
      }[];
    const refused = await Promise.all(
      Array.from({ length: 30 }, (_, i) => submit(form, i % 3 ? { email: user.email, password: `again-${i}` } : user)),
    );
    expect(refused.map((a) => a.status)).toEqual(Array.from({ length: 30 }, () => 429));
    // Refused under the account's lockout, or (while the burst's own points are taken from the
    // address's budget before they are given back) the address's: one row per lockout at most.
    const rows = await refusals();
    const scopes = rows.map((r) => r.details.scope);
    expect(new Set(scopes).size).toBe(rows.length);
    expect(scopes).toContain('account');
    for (const row of rows)
      expect(row).toMatchObject({
        event: 'login.failed',
        details: { reason: 'locked_out', count: expect.any(Number), email_hmac: expect.any(String), last_at: expect.any(String) },
      });
    expect(rows.reduce((sum, r) => sum + Number(r.details.count), 0)).toBe(30);
    // The next refusal of the account's lockout adds to its row.
    const accountCount = Number(rows.find((r) => r.details.scope === 'account')!.details.count);
    expectLockoutPage(await submit(form, user), signInFailuresPerAccount);
    const again = await refusals();
    expect(again).toHaveLength(rows.length);
    expect(again.find((r) => r.details.scope === 'account')!.details.count).toBe(accountCount + 1);
  });

  it('one address spraying 40 accounts at once through both forms runs argon2 20 times; the rest and a right password get 429', async () => {
    const user = (await createStaff(t.db)).users.admin;
    const [authorization, connections] = await Promise.all([authorizationSignIn(), connectionsSignIn()]);
    // Unknown addresses cost an argon2 run too (against a dummy hash), so they spend the budget alike.
    const wrong = Array.from({ length: 40 }, (_, i) => ({
      form: i % 2 ? authorization : connections,
      login: { email: `spray-${i}@example.org`, password: `wrong-${i}` },
    }));
    const { wrongAnswers, rightOne, argon2Runs } = await burst(wrong, { form: authorization, login: user });
    expect(argon2Runs).toBe(signInFailuresPerCallerAddress.max);
    expectBudgetHeld(wrongAnswers, signInFailuresPerCallerAddress.max, signInFailuresPerCallerAddress);
    expectLockoutPage(rightOne, signInFailuresPerCallerAddress);
  });
});
