import type { PasswordParams } from '../accounts/passwords.js';
import type { SecretBox } from '../db/secret-box.js';
import type { Environment } from '../db/schema.js';
import type { InteractionDeps } from '../interactions/interaction.js';
import type { AttemptCounter } from '../limits/attempt-counter.js';
import type { MailSender } from '../mail/sender.js';
import type { BackgroundWork } from '../http/background-work.js';
import type { Profile } from '../webhooks/targets.js';

/**
 * What the signed-in side of a dashboard host needs: the hosted pages' dependencies (database,
 * provider sessions, server keys, sign-in) plus outgoing mail, password hashing, the attempt
 * counter of the limits, the secrets box (second-factor secrets) and both dashboards' origins
 * (links in e-mail point at the environment an action was taken in).
 */
export interface DashboardDeps extends InteractionDeps {
  mail: MailSender;
  passwordParams: PasswordParams;
  counter: AttemptCounter;
  box: SecretBox;
  dashboardOrigins: Readonly<Record<Environment, string>>;
  /** The running profile: where webhooks may be sent (loopback http in dev only). */
  profile: Profile;
  /** Work that runs after the response (docs/security.md, "Password reset"); tests drain it. */
  background: BackgroundWork;
}
