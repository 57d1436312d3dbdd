import { renderMail } from '../mail/render.js';
import type { MailReceipt, MailSender } from '../mail/sender.js';

/**
 * The e-mails that tell a user something changed on their account (docs/accounts.md,
 * "Account notices"): sent to the account's own address after the change, so a change the
 * user did not make is noticed. They carry links, never secrets.
 */
export interface AccountNoticeData {
  /** How the password changed: `reset` (an e-mailed link), `change` (the account page), `admin` (the maker's CLI). */
  'password-changed': { how: 'reset' | 'change' | 'admin'; environmentName: string; accountUrl: string; forgotPasswordUrl: string };
  /** `method`: "an authenticator app", "a passkey named X", "recovery codes". */
  'second-factor-added': { method: string; environmentName: string; accountUrl: string };
  'second-factor-removed': { method: string; environmentName: string; accountUrl: string };
  'recovery-codes-replaced': { environmentName: string; accountUrl: string };
  /** An administrator took every second factor away (the user lost them). */
  'second-factors-reset': { environmentName: string; accountUrl: string };
}

export type AccountNotice = keyof AccountNoticeData;

export function sendAccountNotice<N extends AccountNotice>(
  mail: MailSender,
  to: string,
  notice: N,
  data: AccountNoticeData[N],
): Promise<MailReceipt> {
  return mail.send({ to, ...renderMail(notice, { ...data }) });
}
