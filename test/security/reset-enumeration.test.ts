import { describe, expect, it } from 'vitest';
import { FormBrowser } from '../helpers/browser.js';
import { clearAttemptCounters } from '../helpers/password-reset.js';
import { createStaff } from '../helpers/oauth-server.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * docs/security.md, "Password reset": asking for a reset link must not tell whether an
 * account uses the address, by the answer (status, headers, body) or by its timing. The
 * lookup, the link and the mail happen after the response (a named background task), so a
 * known address answers as fast as an unknown one.
 */
const { testDatabase: t, server } = useOAuthServer({ staff: 0 });

/** One reset request with a ready form; returns what the caller sees and how long the POST took. */
async function timedRequest(browser: FormBrowser, email: string) {
  const form = await browser.request(`${server.urls.dashboard}/forgot-password`);
  const csrf = /name="csrf" value="([^"]+)"/.exec(form.html)![1]!;
  const started = process.hrtime.bigint();
  const response = await fetch(`${server.urls.dashboard}/forgot-password`, {
    method: 'POST',
    headers: {
      cookie: browser.cookieHeader(new URL(server.urls.dashboard)),
      'content-type': 'application/x-www-form-urlencoded',
      origin: server.urls.dashboard,
    },
    body: new URLSearchParams({ csrf, email }).toString(),
  });
  const body = await response.text();
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const headers = Object.fromEntries(
    [...response.headers].filter(([name]) => !['date', 'x-request-id', 'set-cookie', 'content-length'].includes(name)),
  );
  return { status: response.status, headers, body: body.replace(csrf, 'CSRF'), ms };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

describe('password reset enumeration', () => {
  it('answers a known and an unknown address with the same status, headers and body', async () => {
    const s = await createStaff(t.db);
    const browser = new FormBrowser(() => false);
    const known = await timedRequest(browser, s.users.owner.email);
    const unknown = await timedRequest(browser, `nobody-${Date.now()}@example.org`);
    expect(known.status).toBe(200);
    expect(unknown.status).toBe(known.status);
    expect(unknown.headers).toEqual(known.headers);
    expect(unknown.body).toBe(known.body);
    // And the known address really did get a link (the answer hides work that happened).
    await server.runtime.background.drain();
    expect(await t.db.selectFrom('outbound_mail').select('id').where('recipient', '=', s.users.owner.email).execute()).toHaveLength(1);
  });

  it('takes as long for a known address as for an unknown one (medians of alternating requests within noise)', async () => {
    const s = await createStaff(t.db);
    const browser = new FormBrowser(() => false);
    const knownMs: number[] = [];
    const unknownMs: number[] = [];
    // Warm up both paths once.
    await timedRequest(browser, s.users.member.email);
    await timedRequest(browser, 'warm-up@example.org');
    for (let i = 0; i < 15; i += 1) {
      // Fresh budgets, so every known request does the whole work (lookup, link, mail) after its answer.
      await clearAttemptCounters(t.db);
      await server.runtime.background.drain();
      const known = await timedRequest(browser, s.users.member.email);
      await server.runtime.background.drain();
      const unknown = await timedRequest(browser, `nobody-${i}-${Date.now()}@example.org`);
      knownMs.push(known.ms);
      unknownMs.push(unknown.ms);
      expect(unknown.body).toBe(known.body);
    }
    await server.runtime.background.drain();
    const [k, u] = [median(knownMs), median(unknownMs)];
    expect(
      Math.max(k, u) / Math.min(k, u) < 1.5 || Math.abs(k - u) < 30,
      `median known ${k.toFixed(1)} ms, unknown ${u.toFixed(1)} ms`,
    ).toBe(true);
    // The known address's links were made: the timing hides real work.
    expect(
      (await t.db.selectFrom('outbound_mail').select('id').where('recipient', '=', s.users.member.email).execute()).length,
    ).toBeGreaterThanOrEqual(15);
  });
});
