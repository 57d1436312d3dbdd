import type { Context } from 'koa';
import { sendAccountNotice } from '../accounts/notices.js';
import type { Environment } from '../db/schema.js';
import type { BackgroundWork } from '../http/background-work.js';
import type { MailSender } from '../mail/sender.js';

/** What a notice needs of the pages that send it (the flow's and the dashboard's deps have it all). */
export interface NoticeDeps {
  environment: Environment;
  /** The dashboard origin of this environment. */
  origin: string;
  mail: MailSender;
  background: BackgroundWork;
}

/**
 * Tells the user by e-mail that a second factor was added or removed (docs/accounts.md,
 * "Account notices"), after the response: a change they did not make is noticed.
 */
export function noticeSecondFactorChange(deps: NoticeDeps, ctx: Context, email: string, change: 'added' | 'removed', method: string): void {
  const data = {
    method,
    environmentName: deps.environment === 'sandbox' ? 'Sandbox' : 'Production',
    accountUrl: `${deps.origin}/account/security`,
  };
  deps.background.run(
    `second-factor-${change}-notice`,
    async () => {
      await sendAccountNotice(deps.mail, email, change === 'added' ? 'second-factor-added' : 'second-factor-removed', data);
    },
    ctx.state.log,
  );
}
