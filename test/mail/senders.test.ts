import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMailSender, linksIn, MailDeliveryError, SmtpMailSender, TableMailSender } from '../../src/mail/sender.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { captureLogs } from '../helpers/log-capture.js';

/**
 * The two senders' promises beyond delivery (docs/operations.md, "Mail"): an SMTP server that
 * accepts and never answers fails the message within the deadline instead of holding it for
 * ever; the dev table's log line lists the pages the message links to, never its body, codes or
 * a link's token; the production profile never falls back to the table.
 */

let t: TestDatabase;
let silent: net.Server;
let silentPort: number;
const sockets = new Set<net.Socket>();

beforeAll(async () => {
  t = await createTestDatabase();
  // Accepts every connection and never writes a byte (no SMTP greeting).
  silent = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
  silentPort = (silent.address() as net.AddressInfo).port;
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => silent?.close(() => resolve()));
  await t?.drop();
});

describe('SmtpMailSender deadline', () => {
  it('fails with MailDeliveryError within the deadline when the server accepts and never answers', async () => {
    const sender = new SmtpMailSender(`smtp://mailer:s3cret@127.0.0.1:${silentPort}`, 'Almoner <no-reply@almoner.test>', {
      deadlineMs: 400,
    });
    const started = Date.now();
    const outcome = await sender.send({ to: 'ada@example.org', subject: 'Hello', text: 'Hi\n' }).then(
      () => undefined,
      (error: unknown) => error,
    );
    const elapsed = Date.now() - started;
    expect(outcome).toBeInstanceOf(MailDeliveryError);
    expect((outcome as Error).message).toMatch(
      new RegExp(`^the mail server smtp://127\\.0\\.0\\.1:${silentPort} did not take the message: `),
    );
    expect((outcome as Error).message).not.toContain('s3cret');
    expect(elapsed).toBeGreaterThanOrEqual(350);
    expect(elapsed).toBeLessThan(3000);
    // The connection was made (the server really was silent, not refused).
    expect(silent.listening).toBe(true);
  });

  it('defaults to a 10 s deadline', async () => {
    const { DEFAULT_SMTP_DEADLINE_MS } = await import('../../src/mail/sender.js');
    expect(DEFAULT_SMTP_DEADLINE_MS).toBe(10_000);
  });
});

describe('TableMailSender (dev)', () => {
  it("keeps the message and logs the pages it links to, never its body, codes or a link's token", async () => {
    const { logger, records } = captureLogs('info');
    const sender = new TableMailSender(t.db, logger);
    const text =
      'Your code: QWERTY123456\nReset it at https://dash.example.org/reset-password/AbC_dEf-123.\nOr see (https://dash.example.org/account).\n';
    const receipt = await sender.send({ to: 'dev@example.org', subject: 'Reset your password', text });
    expect(receipt).toEqual({ via: 'dev_table' });
    const stored = await t.db.selectFrom('outbound_mail').selectAll().where('recipient', '=', 'dev@example.org').executeTakeFirstOrThrow();
    expect(stored.body).toBe(text);
    const lines = records().filter((r) => r.msg === 'mail stored (dev mail sink; see `admin mail list`)');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      to: 'dev@example.org',
      subject: 'Reset your password',
      links: ['https://dash.example.org/reset-password/[redacted]', 'https://dash.example.org/account'],
    });
    const logged = JSON.stringify(records());
    expect(logged).not.toContain('AbC_dEf-123');
    expect(logged).not.toContain('QWERTY123456');
    expect(logged).not.toContain('Your code');
  });

  it('finds links once each, without trailing punctuation', () => {
    expect(linksIn('a http://x.test/a, then http://x.test/a; and https://y.test/b?c=d!')).toEqual([
      'http://x.test/a',
      'https://y.test/b?c=d',
    ]);
    expect(linksIn('no links here')).toEqual([]);
  });
});

describe('createMailSender', () => {
  it('uses SMTP when smtp_url is set, the table in dev otherwise, and refuses production without SMTP', () => {
    expect(createMailSender({ profile: 'production', smtp_url: 'smtp://127.0.0.1:9', mail_from: 'a@b.c' }, t.db)).toBeInstanceOf(
      SmtpMailSender,
    );
    expect(createMailSender({ profile: 'dev', mail_from: 'a@b.c' }, t.db)).toBeInstanceOf(TableMailSender);
    expect(() => createMailSender({ profile: 'production', mail_from: 'a@b.c' }, t.db)).toThrow(
      /smtp_url \(ALMONER_SMTP_URL\) is required in the production profile/,
    );
  });
});
