import net from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addOrganization } from '../../src/accounts/service.js';
import { TEST_SECRETS_KEY } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { createStaff, type Staff } from '../helpers/oauth-server.js';
import { runAdmin } from '../helpers/admin-cli.js';

/**
 * The SMTP mail sender (ALMONER_SMTP_URL), against a real SMTP server on loopback: the
 * donor's one-time code of a donor-initiated grant request leaves by SMTP, not into the dev
 * mail table, and an unreachable SMTP server is a clear one-line error.
 */

interface Received {
  from: string;
  to: string[];
  data: string;
}

const FUND_EIN = '97-1234567';
let t: TestDatabase;
let nonprofit: Staff;
let smtp: SMTPServer;
let smtpPort: number;
const received: Received[] = [];

beforeAll(async () => {
  t = await createTestDatabase();
  nonprofit = await createStaff(t.db);
  await addOrganization(t.db, { ein: FUND_EIN, name: 'Mailing Giving Fund', kind: 'fund_provider' });
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          data: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
  smtpPort = (smtp.server.address() as net.AddressInfo).port;
});
afterAll(async () => {
  await new Promise<void>((resolve) => smtp?.close(() => resolve()));
  await t?.drop();
});

/** The admin CLI in process with the test secrets key (DAF codes are hashed under a sealed server key; without one it would create a key file in ./data). */
async function admin(env: Record<string, string>, ...argv: string[]) {
  const { code, stdout, stderr } = await runAdmin([...argv, '--json'], {
    DATABASE_URL: t.url,
    ALMONER_SECRETS_KEY: TEST_SECRETS_KEY,
    ...env,
  });
  return { code, json: (stdout ? JSON.parse(stdout) : {}) as Record<string, unknown>, stderr };
}

const submit = (env: Record<string, string>, email: string) =>
  admin(
    env,
    'daf',
    'submit-grant-request',
    '--fund-provider',
    FUND_EIN,
    '--environment',
    'sandbox',
    '--email',
    email,
    '--ein',
    nonprofit.ein,
    '--amount-cents',
    '5000',
  );

describe('SMTP mail sender', () => {
  it("sends the donor's one-time code by SMTP, from mail_from, and keeps nothing in the dev mail table", async () => {
    const submitted = await submit(
      { ALMONER_SMTP_URL: `smtp://127.0.0.1:${smtpPort}`, ALMONER_MAIL_FROM: 'Almoner Test <no-reply@almoner.test>' },
      'grace@example.org',
    );
    expect(submitted.stderr).toBe('');
    expect(submitted.code).toBe(0);
    expect(submitted.json.emailed).toBe(true);
    expect(submitted.json.mail_via).toBe('smtp');
    expect(received).toHaveLength(1);
    const message = received[0]!;
    expect(message.from).toBe('no-reply@almoner.test');
    expect(message.to).toEqual(['grace@example.org']);
    expect(message.data).toMatch(/^Subject: Your verification code for Mailing Giving Fund/m);
    expect(message.data).toMatch(/^From: Almoner Test <no-reply@almoner\.test>/m);
    // nodemailer sends the text quoted-printable (soft line breaks included).
    expect(message.data).toMatch(/^Content-Transfer-Encoding: quoted-printable/m);
    const body = message.data
      .replace(/=\r?\n/g, '')
      .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    const code = /code: ([A-Z0-9]{12})/.exec(body)?.[1];
    expect(code).toMatch(/^[A-Z0-9]{12}$/);
    expect(await t.db.selectFrom('outbound_mail').select('id').where('recipient', '=', 'grace@example.org').execute()).toEqual([]);
    // The code that arrived is the one the provider can verify (redeemed here as the donor side would).
    const redeemed = await admin({}, 'daf', 'redeem-code', '--environment', 'sandbox', '--email', 'grace@example.org', '--code', code!);
    expect(redeemed.code).toBe(0);
    expect(redeemed.json).toMatchObject({ id: submitted.json.donor_account_id, status: 'approved' });
  });

  it('an unreachable SMTP server is a one-line error naming the server but not its password, and a new request sends a new code', async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', () => resolve()));
    const deadPort = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const failed = await submit({ ALMONER_SMTP_URL: `smtp://mailer:s3cret-pass@127.0.0.1:${deadPort}` }, 'hopper@example.org');
    expect(failed.code).not.toBe(0);
    expect(failed.stderr.trim().split('\n')).toHaveLength(1);
    expect(failed.stderr).not.toMatch(/\n\s+at /);
    expect(failed.stderr).not.toContain('s3cret-pass');
    expect(failed.stderr).toMatch(
      /^almoner admin: grant request grant_req_\w+ recorded, but its verification code was not e-mailed \(submit again to send a new one\): the mail server smtp:\/\/127\.0\.0\.1:\d+ did not take the message: connect ECONNREFUSED/,
    );
    // The donor asks again once mail works: a fresh code goes out for the same pending account.
    const before = received.length;
    const retried = await submit({ ALMONER_SMTP_URL: `smtp://127.0.0.1:${smtpPort}` }, 'hopper@example.org');
    expect(retried.code).toBe(0);
    expect(received.length).toBe(before + 1);
    expect(received.at(-1)!.to).toEqual(['hopper@example.org']);
  });
});
