import type { Context } from 'koa';
import { sendAccountNotice } from '../accounts/notices.js';
import { recordAudit } from '../audit/audit-log.js';
import { endUserSignIns } from '../authorizations/sessions-repository.js';
import type { Db } from '../db/database.js';
import { inTransaction } from '../db/executor.js';
import type { Environment } from '../db/schema.js';
import { forbidden } from '../errors/domain-error.js';
import { noticeSecondFactorChange, type NoticeDeps } from '../mfa/notices.js';
import { registerPasskey, removePasskey, type PasskeyDeps } from '../mfa/passkeys.js';
import { deleteAllFactors, lockUserFactors } from '../mfa/repository.js';
import {
  confirmTotp,
  hasEnrolledSecondFactor,
  regenerateRecoveryCodes,
  removeTotp,
  type SecondFactorDeps,
  type TotpConfirmation,
} from '../mfa/second-factors.js';
import { requireUser } from '../accounts/service.js';

/**
 * Managing a user's second factors from a signed-in session (docs/accounts.md, "Second
 * factors"). Once a user has any second factor, a session may add, replace or remove one, or
 * make new recovery codes, only after proving an existing factor in that session recently
 * (sessions.ts, RECENT_PROOF_SECONDS): a password alone, or a session opened before the factor
 * was set up, cannot plant a factor of its own or take the user's away. Registering a factor
 * never changes how the session signed in (its `amr`). Every change is mailed to the user;
 * removing a factor ends the user's other sessions and sign-ins in progress.
 */

export type FactorDeps = SecondFactorDeps & PasskeyDeps & NoticeDeps;

/** Who is changing factors: the user, the session they act in, and whether it proved a factor recently. */
export interface FactorActor {
  user: { id: string; email: string };
  session: { environment: Environment; uid: string };
  recentProof: boolean;
}

const CONFIRM_FIRST =
  'Confirm it is you with your second factor first: a change to your second factors needs one given in the last 10 minutes.';

/** True when the session may change the user's factors now: the user has none yet, or the session proved one recently. */
export async function mayChangeFactors(db: Db, actor: FactorActor): Promise<boolean> {
  return actor.recentProof || !(await hasEnrolledSecondFactor(db, actor.user.id));
}

async function requireRecentProof(db: Db, actor: FactorActor): Promise<void> {
  if (!(await mayChangeFactors(db, actor))) throw forbidden(CONFIRM_FIRST, { title: 'Confirm it is you first' });
}

/** The first code of a new authenticator app; the user's first factor comes with recovery codes. */
export async function addAuthenticatorApp(deps: FactorDeps, ctx: Context, actor: FactorActor, code: string): Promise<TotpConfirmation> {
  const confirmed = await confirmTotp(deps, actor.user.id, code, actor.recentProof ? 'any' : 'first');
  if (!confirmed.ok && confirmed.hasFactor) throw forbidden(CONFIRM_FIRST, { title: 'Confirm it is you first' });
  if (confirmed.ok) noticeSecondFactorChange(deps, ctx, actor.user.email, 'added', 'an authenticator app');
  return confirmed;
}

/** A passkey the browser made for the session's challenge. */
export async function addPasskey(
  deps: FactorDeps,
  ctx: Context,
  actor: FactorActor,
  input: { challenge: string; name: string; response: string | undefined },
) {
  const registered = await registerPasskey(
    deps,
    actor.user.id,
    input.challenge,
    input.name,
    input.response,
    actor.recentProof ? 'any' : 'first',
  );
  if (!registered.ok && registered.hasFactor) throw forbidden(CONFIRM_FIRST, { title: 'Confirm it is you first' });
  if (registered.ok) noticeSecondFactorChange(deps, ctx, actor.user.email, 'added', `a passkey (“${input.name}”)`);
  return registered;
}

/** Ends every other session and sign-in in progress of the actor, in the removal's transaction. */
const endOtherSignIns = (actor: FactorActor) => async (trx: Parameters<typeof endUserSignIns>[0]) => {
  await endUserSignIns(trx, actor.user.id, actor.session);
};

/** Removes the authenticator app. */
export async function removeAuthenticatorApp(deps: FactorDeps, ctx: Context, actor: FactorActor): Promise<boolean> {
  await requireRecentProof(deps.db, actor);
  const removed = await removeTotp(deps, actor.user.id, endOtherSignIns(actor));
  if (removed) noticeSecondFactorChange(deps, ctx, actor.user.email, 'removed', 'the authenticator app');
  return removed;
}

/** Removes one passkey; its name, or undefined when the user has no such passkey. */
export async function removeOnePasskey(deps: FactorDeps, ctx: Context, actor: FactorActor, id: string): Promise<string | undefined> {
  await requireRecentProof(deps.db, actor);
  const name = await removePasskey(deps, actor.user.id, id, endOtherSignIns(actor));
  if (name !== undefined) noticeSecondFactorChange(deps, ctx, actor.user.email, 'removed', `the passkey “${name}”`);
  return name;
}

/** A new set of recovery codes (the old ones stop working), returned once. */
export async function replaceRecoveryCodes(deps: FactorDeps, ctx: Context, actor: FactorActor): Promise<string[]> {
  await requireRecentProof(deps.db, actor);
  const codes = await regenerateRecoveryCodes(deps, actor.user.id);
  const data = {
    environmentName: deps.environment === 'sandbox' ? 'Sandbox' : 'Production',
    accountUrl: `${deps.origin}/account/security`,
  };
  deps.background.run(
    'recovery-codes-notice',
    async () => {
      await sendAccountNotice(deps.mail, actor.user.email, 'recovery-codes-replaced', data);
    },
    ctx.state.log,
  );
  return codes;
}

/**
 * An administrator takes away every second factor of a user who lost them (docs/operations.md,
 * "Admin CLI"): the app, the passkeys and the recovery codes go, every session and sign-in in
 * progress ends, one audit row; the caller mails the user. The next sign-in asks for the
 * password only (and a step-up sets up a factor again). A user with nothing to remove is left
 * as they are: no session ends, no audit row, and `removed` says so (the caller sends no mail).
 */
export async function resetSecondFactors(
  db: Db,
  emailInput: string,
): Promise<{ id: string; email: string; removed: { totp: boolean; passkeys: number; recoveryCodes: number }; sessions_ended: number }> {
  return inTransaction(db, async (trx) => {
    const user = await requireUser(trx, emailInput);
    await lockUserFactors(trx, user.id);
    const removed = await deleteAllFactors(trx, user.id);
    if (!removed.totp && removed.passkeys === 0 && removed.recoveryCodes === 0)
      return { id: user.id, email: user.email, removed, sessions_ended: 0 };
    const sessionsEnded = await endUserSignIns(trx, user.id);
    await recordAudit(trx, {
      event: 'second_factor.reset',
      details: { user_id: user.id, email: user.email, totp: removed.totp, passkeys: removed.passkeys, sessions_ended: sessionsEnded },
    });
    return { id: user.id, email: user.email, removed, sessions_ended: sessionsEnded };
  });
}
