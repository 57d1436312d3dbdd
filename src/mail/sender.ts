import nodemailer from 'nodemailer';
import type { Db } from '../db/database.js';
import type { Logger } from '../logging/logger.js';
import { redactUrl } from '../logging/redaction.js';
import { insertOutboundMail } from './repository.js';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

/**
 * What a sender did with a message it took: handed it to the SMTP server, or kept it in the
 * dev mail table (docs/operations.md, "Mail"). A sender that did not take the message throws.
 */
export type MailReceipt = { via: 'smtp' } | { via: 'dev_table' };

/**
 * Where outgoing mail goes: SMTP (required in the production profile), or in the dev profile
 * a table and a log line. Every e-mail of the product (DAF codes, password resets, account
 * notices, invitations) goes through the one sender of the process.
 */
export interface MailSender {
  send(mail: Mail): Promise<MailReceipt>;
}

/** The http(s) links in a message body, in order, without duplicates. */
export function linksIn(text: string): string[] {
  return [...new Set((text.match(/https?:\/\/[^\s<>"']+/g) ?? []).map((link) => link.replace(/[.,;:!?)\]]+$/, '')))];
}

/**
 * Dev: kept in outbound_mail for `admin mail list`, which shows the message with its links. The
 * log line says which pages the message links to, each as redactUrl leaves it (an invitation or
 * reset link's token is [redacted]: docs/security.md, "Secrets in logs"), and never the body,
 * which may hold a one-time code.
 */
export class TableMailSender implements MailSender {
  constructor(
    private readonly db: Db,
    private readonly logger?: Logger,
  ) {}

  async send(mail: Mail): Promise<MailReceipt> {
    await insertOutboundMail(this.db, { recipient: mail.to, subject: mail.subject, body: mail.text });
    this.logger?.info(
      { to: mail.to, subject: mail.subject, links: linksIn(mail.text).map(redactUrl) },
      'mail stored (dev mail sink; see `admin mail list`)',
    );
    return { via: 'dev_table' };
  }
}

/** A message the mail server did not take; names the server (never its credentials). */
export class MailDeliveryError extends Error {
  override name = 'MailDeliveryError';
}

/** How long one message may take, from connecting to the server's answer to the data. */
export const DEFAULT_SMTP_DEADLINE_MS = 10_000;

export interface SmtpOptions {
  /** The overall deadline of one message (injectable so tests need not wait 10 s). */
  deadlineMs?: number;
}

/**
 * SMTP. A mail server that accepts the connection and never answers must not hold a request
 * (or a background task) for ever: nodemailer's own connection, greeting and socket timeouts
 * are set to the deadline, and the whole send races a timer of the same length as a backstop.
 */
export class SmtpMailSender implements MailSender {
  private readonly transport: nodemailer.Transporter;
  private readonly server: string;
  private readonly deadlineMs: number;

  constructor(
    smtpUrl: string,
    private readonly from: string,
    options: SmtpOptions = {},
  ) {
    this.deadlineMs = options.deadlineMs ?? DEFAULT_SMTP_DEADLINE_MS;
    const url = new URL(smtpUrl);
    this.server = `${url.protocol}//${url.host}`;
    this.transport = nodemailer.createTransport({
      url: smtpUrl,
      connectionTimeout: this.deadlineMs,
      greetingTimeout: this.deadlineMs,
      socketTimeout: this.deadlineMs,
    } as nodemailer.TransportOptions);
  }

  async send(mail: Mail): Promise<MailReceipt> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${this.deadlineMs} ms`)), this.deadlineMs);
    });
    try {
      await Promise.race([this.transport.sendMail({ from: this.from, to: mail.to, subject: mail.subject, text: mail.text }), deadline]);
      return { via: 'smtp' };
    } catch (error) {
      throw new MailDeliveryError(`the mail server ${this.server} did not take the message: ${(error as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * The process's sender: SMTP when smtp_url is set. The production profile requires it (the
 * config refuses to load without it); this refuses too, so no production process ever keeps
 * mail, one-time codes included, in clear in a table.
 */
export function createMailSender(
  config: { profile: string; smtp_url?: string; mail_from: string },
  db: Db,
  logger?: Logger,
  options: SmtpOptions = {},
): MailSender {
  if (config.smtp_url) return new SmtpMailSender(config.smtp_url, config.mail_from, options);
  if (config.profile === 'production')
    throw new Error(
      'smtp_url (ALMONER_SMTP_URL) is required in the production profile: mail is never kept in the outbound_mail table there',
    );
  return new TableMailSender(db, logger);
}
