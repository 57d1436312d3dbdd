import type { Context } from 'koa';
import { newFlowState, parseOpenerOrigin, saveFlowState } from './flow-state.js';
import { dafForFlow, dafKind, searchDafs, type DafRow } from './service.js';
import {
  connectOr404,
  dafChoice,
  dollarsText,
  flowPath,
  frame,
  frequencyOf,
  postedStep,
  prefillAmount,
  redirect,
  sendEnd,
  sendFlowPage,
  stepOf,
  type DonorFlowDeps,
  type Step,
} from './flow-pages.js';

/** The donor flow's first steps (docs/giving.md, "The donor flow"): the start with the DAFs, the DAF chosen, the amount and how often. */

async function showChoose(deps: DonorFlowDeps, ctx: Context, step: Step, query: string, error?: string, status?: number) {
  const { dafs, more } = await searchDafs(deps.db, deps.environment, query);
  sendFlowPage(
    deps,
    ctx,
    'connect/choose.njk',
    {
      ...frame(deps, ctx, { connect: step.connect, state: step.state }),
      searchAction: flowPath(step.connect.id),
      query,
      dafs: dafs.map(dafChoice),
      more,
      action: flowPath(step.connect.id, 'daf'),
      error,
    },
    status,
  );
}

/**
 * GET /connect/:cid. Opened by the script (`origin`, and the page's `amount` and `frequency`):
 * a new flow for this browser. Without `origin`: this browser's flow, its DAF list searched by `q`.
 */
export async function showStart(deps: DonorFlowDeps, ctx: Context): Promise<void> {
  const rawOrigin = typeof ctx.query.origin === 'string' ? ctx.query.origin : undefined;
  const origin = parseOpenerOrigin(rawOrigin);
  if (rawOrigin !== undefined) {
    const connect = await connectOr404(deps, ctx, origin);
    if (!connect) return;
    if (!origin) {
      return sendEnd(deps, ctx, 400, {
        title: 'This giving link is not complete',
        text: 'The page that opened this window did not say where it is. Go back to the nonprofit’s page and try again.',
      });
    }
    const state = newFlowState(connect.id, origin, {
      amount: prefillAmount(ctx.query.amount),
      frequency: frequencyOf(ctx.query.frequency),
    });
    saveFlowState(deps, ctx, state);
    return showChoose(deps, ctx, { connect, state }, '');
  }
  const step = await stepOf(deps, ctx, false);
  if (!step) return;
  await showChoose(deps, ctx, step, typeof ctx.query.q === 'string' ? ctx.query.q : '');
}

/** POST /connect/:cid/daf: the DAF chosen. */
export async function chooseDaf(deps: DonorFlowDeps, ctx: Context): Promise<void> {
  const posted = await postedStep(deps, ctx, false);
  if (!posted) return;
  const { step, form } = posted;
  const daf = form.daf ? await dafForFlow(deps.db, deps.environment, form.daf) : undefined;
  if (!daf || daf.institution_down) {
    const error = daf
      ? `${daf.org_name} is temporarily unavailable. Choose another DAF, or try again later.`
      : 'Choose your DAF sponsor from the list.';
    return showChoose(deps, ctx, step, '', error, 400);
  }
  const { donor, donorAccountId, donorBalance, ...rest } = step.state;
  // Another DAF: what the previous one told (balance, account) is no longer true.
  const keep = rest.dafId === daf.id ? { donor, donorAccountId, donorBalance } : {};
  saveFlowState(deps, ctx, { ...rest, ...keep, dafId: daf.id });
  redirect(ctx, flowPath(step.connect.id, 'amount'));
}

function showAmount(deps: DonorFlowDeps, ctx: Context, step: Step & { daf: DafRow }, dollars: string, frequency: string, error?: string) {
  sendFlowPage(
    deps,
    ctx,
    'connect/amount.njk',
    {
      ...frame(deps, ctx, step),
      minimumText: dollarsText(Number(step.daf.minimum_grant_amount)),
      dollars,
      frequency,
      error,
      action: flowPath(step.connect.id, 'amount'),
      backHref: flowPath(step.connect.id),
    },
    error ? 400 : undefined,
  );
}

export async function showAmountPage(deps: DonorFlowDeps, ctx: Context): Promise<void> {
  const step = await stepOf(deps, ctx, true);
  if (!step?.daf) return;
  const dollars = step.state.amount ? String(step.state.amount / 100) : '';
  showAmount(deps, ctx, { ...step, daf: step.daf }, dollars, step.state.frequency ?? 'one_time');
}

/** Whole dollars as typed ("250", "$1,000", "250.00"), in cents; undefined when not. */
export function parseDollars(input: string): number | undefined {
  const cleaned = input.replace(/[\s$,]/g, '');
  const match = /^(\d{1,9})(?:\.0{1,2})?$/.exec(cleaned);
  if (!match) return undefined;
  const cents = Number(match[1]) * 100;
  return cents > 0 ? cents : undefined;
}

/** The largest grant the flow takes: $10,000,000. */
const MAX_AMOUNT_CENTS = 1_000_000_000;

/** POST /connect/:cid/amount: whole dollars, at least the DAF's minimum; one time or monthly. */
export async function submitAmount(deps: DonorFlowDeps, ctx: Context): Promise<void> {
  const posted = await postedStep(deps, ctx, true);
  if (!posted?.step.daf) return;
  const { form } = posted;
  const step = { ...posted.step, daf: posted.step.daf };
  const frequency = frequencyOf(form.frequency);
  const typed = (form.amount ?? '').slice(0, 20);
  const cents = parseDollars(typed);
  const minimum = Number(step.daf.minimum_grant_amount);
  const error = !frequency
    ? 'Choose one time or every month.'
    : cents === undefined
      ? 'Enter the amount in whole dollars, like 250.'
      : cents < minimum
        ? `${step.daf.org_name} makes grants of at least ${dollarsText(minimum)}.`
        : cents > MAX_AMOUNT_CENTS
          ? `Enter at most ${dollarsText(MAX_AMOUNT_CENTS)}.`
          : undefined;
  if (error || !frequency || cents === undefined) return showAmount(deps, ctx, step, typed, form.frequency ?? 'one_time', error);
  saveFlowState(deps, ctx, { ...step.state, amount: cents, frequency });
  const kind = dafKind(step.daf);
  const signedIn = kind === 'simulated' && step.state.donorBalance !== undefined;
  redirect(
    ctx,
    flowPath(step.connect.id, kind === 'simulated' ? (signedIn ? 'confirm' : 'sign-in') : step.state.donor ? 'confirm' : 'donor'),
  );
}
