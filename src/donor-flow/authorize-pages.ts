import type { Context } from 'koa';
import { verifyCsrf } from '../http/csrf.js';
import { readForm } from '../http/form-body.js';
import { clearFlowState, loadFlowState, saveFlowState } from './flow-state.js';
import { authorize, authorizedSession, dafForFlow, dafKind, isSupported, type DafRow } from './service.js';
import {
  connectOr404,
  dollarsText,
  flowMessage,
  flowPath,
  frame,
  NO_FLOW,
  postedStep,
  redirect,
  sendEnd,
  sendFlowPage,
  stepOf,
  stepWithAmount,
  type DonorFlowDeps,
  type Step,
} from './flow-pages.js';

/** The donor flow's last steps (docs/giving.md, "The donor flow"): the confirmation, the authorization that writes the workflow session, the final page, and cancel. */

/** What keeps the flow from its confirmation: a step not yet done (where to go), or a problem to show. */
function confirmBlock(step: Step & { daf: DafRow }): { goTo?: string; problem?: string } {
  const kind = dafKind(step.daf);
  const { state, connect, daf } = step;
  if (kind === 'simulated' && state.donorBalance === undefined) return { goTo: flowPath(connect.id, 'sign-in') };
  if (kind !== 'simulated' && !state.donor) return { goTo: flowPath(connect.id, 'donor') };
  if (daf.institution_down) return { problem: `${daf.org_name} is temporarily unavailable. Choose another DAF, or try again later.` };
  if (state.donorBalance !== undefined && state.amount! > state.donorBalance)
    return { problem: `That is more than your fund’s balance (${dollarsText(state.donorBalance)}). Change the amount.` };
  if (state.amount! < Number(daf.minimum_grant_amount))
    return { problem: `${daf.org_name} makes grants of at least ${dollarsText(Number(daf.minimum_grant_amount))}. Change the amount.` };
  return {};
}

function showConfirm(deps: DonorFlowDeps, ctx: Context, step: Step & { daf: DafRow }, problem?: string, status?: number) {
  const donor = step.state.donor;
  sendFlowPage(
    deps,
    ctx,
    'connect/confirm.njk',
    {
      ...frame(deps, ctx, step),
      supported: isSupported(step.daf),
      kind: dafKind(step.daf),
      donorText: donor ? `${donor.firstName ?? ''} ${donor.lastName ?? ''} · ${donor.email ?? ''}`.trim() : '',
      balanceText: step.state.donorBalance !== undefined ? dollarsText(step.state.donorBalance) : undefined,
      problem,
      action: flowPath(step.connect.id, 'authorize'),
      amountHref: flowPath(step.connect.id, 'amount'),
      detailsHref: dafKind(step.daf) === 'simulated' ? undefined : flowPath(step.connect.id, 'donor'),
      chooseHref: flowPath(step.connect.id),
    },
    status,
  );
}

/** GET /connect/:cid/confirm: what the donor is about to authorize. */
export async function showConfirmPage(deps: DonorFlowDeps, ctx: Context): Promise<void> {
  const step = await stepWithAmount(deps, ctx, await stepOf(deps, ctx, true));
  if (!step) return;
  const block = confirmBlock(step);
  if (block.goTo) return redirect(ctx, block.goTo);
  showConfirm(deps, ctx, step, block.problem);
}

/**
 * POST /connect/:cid/authorize: the workflow session (service.ts authorize, under its limits),
 * then the final page. The flow's state keeps only the session, so the final page can be
 * shown again but nothing can be authorized twice from it.
 */
export async function submitAuthorize(deps: DonorFlowDeps, ctx: Context): Promise<void> {
  const posted = await postedStep(deps, ctx, true);
  const step = await stepWithAmount(deps, ctx, posted?.step);
  if (!posted || !step) return;
  const block = confirmBlock(step);
  if (block.goTo) return redirect(ctx, block.goTo);
  if (block.problem) return showConfirm(deps, ctx, step, block.problem, 400);
  const outcome = await authorize(deps, {
    connect: step.connect,
    daf: step.daf,
    amount: step.state.amount!,
    frequency: step.state.frequency!,
    donor: step.state.donor ?? {},
    donorAccountId: step.state.donorAccountId ?? null,
    donorBalance: step.state.donorBalance ?? null,
    callerAddress: ctx.state.clientIp ?? '',
  });
  if (!outcome.allowed) {
    ctx.set('Retry-After', String(outcome.retryAfterSeconds));
    return sendEnd(
      deps,
      ctx,
      429,
      {
        title: 'Too many gifts at once',
        text: `Too many gifts were authorized from here in a short time. Wait ${Math.ceil(outcome.retryAfterSeconds / 60)} minutes and try again.`,
      },
      { connect: step.connect, origin: step.state.origin, reason: 'error' },
    );
  }
  saveFlowState(deps, ctx, { ...step.state, sessionId: outcome.sessionId, trackingId: outcome.trackingId });
  redirect(ctx, flowPath(step.connect.id, 'done'));
}

/** GET /connect/:cid/done: tells the opener (and, for an unintegrated DAF, the donor what to ask their DAF; in the sandbox, the session id). */
export async function showDone(deps: DonorFlowDeps, ctx: Context): Promise<void> {
  const connect = await connectOr404(deps, ctx);
  if (!connect) return;
  const state = loadFlowState(deps, ctx, connect.id);
  const session = state?.sessionId ? await authorizedSession(deps.db, connect.id, state.sessionId) : undefined;
  const daf = session ? await dafForFlow(deps.db, deps.environment, session.daf_id) : undefined;
  if (!state || !session || !daf) return sendEnd(deps, ctx, 400, NO_FLOW, { connect });
  const unintegrated = dafKind(daf) === 'unintegrated';
  const message = flowMessage(
    state,
    {
      type: 'success',
      workflowSessionId: session.id,
      grantIntent: {
        amount: Number(session.amount),
        frequency: session.frequency,
        fundId: daf.id,
        fundName: daf.org_name,
        supported: isSupported(daf),
      },
    },
    !unintegrated,
  );
  sendFlowPage(deps, ctx, 'connect/done.njk', {
    ...frame(deps, ctx, { connect, state, daf }),
    cancelAction: '',
    flowMessage: message,
    unintegrated,
    trackingId: state.trackingId ?? '',
    monthly: session.frequency === 'monthly',
    // A sandbox tester who opened the flow in a tab (no opener to post to) reads the id here and
    // gives it to the platform; it captures nothing without the Connect owner's API key
    // (docs/giving.md, "Try it in the sandbox"). Production never shows it, nor an unintegrated
    // DAF's page: that session is captured already.
    sandboxSessionId: deps.environment === 'sandbox' && !unintegrated ? session.id : undefined,
  });
}

/** POST /connect/:cid/cancel: the flow is forgotten and the opener told `canceled`. */
export async function cancelFlow(deps: DonorFlowDeps, ctx: Context): Promise<void> {
  const form = await readForm(ctx);
  const connect = await connectOr404(deps, ctx);
  if (!connect) return;
  const state = loadFlowState(deps, ctx, connect.id);
  if (!state) return sendEnd(deps, ctx, 400, NO_FLOW, { connect });
  verifyCsrf(ctx, deps.serverKeys, `donor-flow:${state.nonce}`, form.csrf, deps.origin);
  clearFlowState(deps, ctx);
  sendEnd(
    deps,
    ctx,
    200,
    { title: 'Your gift was canceled', text: 'Nothing was authorized, and nothing you typed was kept.' },
    { connect, origin: state.origin, reason: 'canceled' },
  );
}
