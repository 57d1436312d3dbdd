import nodemailer from 'nodemailer';
import type { Db } from '../db/database.js';
import type { Logger } from '../logging/logger.js';
import { insertOutboundMail } from './repository.js';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

/** Where outgoing mail goes: SMTP in production, a table (and a log line) in dev. */
export interface MailSender {
  send(mail: Mail): Promise<void>;
}

/** Dev: kept in outbound_mail for `admin mail list`; the log line never carries the body (it may hold a code). */
export class TableMailSender implements MailSender {
  constructor(
    private readonly db: Db,
    private readonly logger?: Logger,
  ) {}

  async send(mail: Mail): Promise<void> {
    await insertOutboundMail(this.db, { recipient: mail.to, subject: mail.subject, body: mail.text });
    this.logger?.info({ to: mail.to, subject: mail.subject }, 'mail stored (dev mail sink; see `admin mail list`)');
  }
}

/** A message the mail server did not take; names the server (never its credentials). */
export class MailDeliveryError extends Error {}

export class SmtpMailSender implements MailSender {
  private readonly transport: nodemailer.Transporter;
  private readonly server: string;

  constructor(
    smtpUrl: string,
    private readonly from: string,
  ) {
    this.transport = nodemailer.createTransport(smtpUrl);
    const url = new URL(smtpUrl);
    this.server = `${url.protocol}//${url.host}`;
  }

  async send(mail: Mail): Promise<void> {
    try {
      await this.transport.sendMail({ from: this.from, to: mail.to, subject: mail.subject, text: mail.text });
    } catch (error) {
      throw new MailDeliveryError(`the mail server ${this.server} did not take the message: ${(error as Error).message}`);
    }
  }
}

export function createMailSender(config: { profile: string; smtp_url?: string; mail_from: string }, db: Db, logger?: Logger): MailSender {
  if (config.smtp_url) return new SmtpMailSender(config.smtp_url, config.mail_from);
  return new TableMailSender(db, logger);
}
