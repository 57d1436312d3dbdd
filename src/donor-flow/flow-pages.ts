import type { Context } from 'koa';
import { formatEin } from '../accounts/ein.js';
import type { Db } from '../db/database.js';
import type { Environment } from '../db/schema.js';
import type { WorkflowFrequency } from '../db/schema-giving.js';
import { csrfToken, verifyCsrf } from '../http/csrf.js';
import { readForm } from '../http/form-body.js';
import type { ServerKeys } from '../keys/server-keys.js';
import type { SecretBox } from '../keys/secret-box.js';
import type { AttemptCounter } from '../limits/attempt-counter.js';
import type { PageModels } from '../views/models.js';
import { sendPage } from '../views/page.js';
import { loadFlowState, type FlowState } from './flow-state.js';
import { connectForFlow, dafForFlow, isSupported, type DafRow, type FlowConnect } from './service.js';
import type { DafChoiceView, FlowFrameView, FlowMessageView } from './view-models.js';

/**
 * What every page of the hosted donor flow shares (docs/giving.md, "The donor flow"): its
 * dependencies and paths, its page policy, rendering a step in the flow's frame, ending the flow
 * with a message to the opener, and finding this browser's flow (its sealed cookie,
 * flow-state.ts) for the Connect of the path. The steps are choice-pages.ts (the DAF, the
 * amount), donor-pages.ts (the simulated sign-in, the donor's details) and authorize-pages.ts
 * (confirm, authorize, the final page, cancel), opened in a popup by /connect.js.
 */

export interface DonorFlowDeps {
  db: Db;
  environment: Environment;
  origin: string;
  serverKeys: ServerKeys;
  box: SecretBox;
  counter: AttemptCounter;
}

export const flowPath = (cid: string, step?: string) => `/connect/${encodeURIComponent(cid)}${step ? `/${step}` : ''}`;

/**
 * The flow's pages may be opened as a popup from any page (no opener policy severs them), run
 * only our own script file, send nothing anywhere else, and are never framed.
 */
export const FLOW_PAGE_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export function sendFlowPage<V extends keyof PageModels & `connect/${string}`>(
  deps: DonorFlowDeps,
  ctx: Context,
  view: V,
  data: PageModels[V],
  status?: number,
): void {
  sendPage(ctx, deps.environment, view, data as never, { status });
  ctx.set('Content-Security-Policy', FLOW_PAGE_POLICY);
  ctx.set('Cross-Origin-Opener-Policy', 'unsafe-none');
}

export const FREQUENCY_TEXT: Record<WorkflowFrequency, string> = { one_time: 'one time', monthly: 'every month' };

export function dollarsText(cents: number): string {
  return `$${new Intl.NumberFormat('en-US').format(Math.floor(cents / 100))}.${String(cents % 100).padStart(2, '0')}`;
}

export function flowMessage(state: Pick<FlowState, 'origin'>, message: Record<string, unknown>, close: boolean): FlowMessageView {
  return { origin: state.origin, json: JSON.stringify({ source: 'almoner-connect', ...message }), close };
}

/** A page that ends the flow without a grant; when the opener is known, it is told why. */
export function sendEnd(
  deps: DonorFlowDeps,
  ctx: Context,
  status: number,
  words: { title: string; text: string },
  options: { connect?: FlowConnect; origin?: string; reason?: 'canceled' | 'error' } = {},
): void {
  const message =
    options.origin && options.reason
      ? flowMessage(
          { origin: options.origin },
          { type: 'exit', reason: options.reason, ...(options.reason === 'error' ? { message: words.text } : {}) },
          options.reason === 'canceled',
        )
      : undefined;
  sendFlowPage(
    deps,
    ctx,
    'connect/message.njk',
    { requestId: ctx.state.requestId, ...words, recipientName: options.connect?.recipientName, flowMessage: message },
    status,
  );
}

export const NOT_FOUND = {
  title: 'This giving link does not work',
  text: 'The nonprofit’s giving link is not known here, or it is no longer active. Go back to the nonprofit’s page and try again, or ask the nonprofit.',
};
export const NO_FLOW = {
  title: 'Start again from the nonprofit’s page',
  text: 'This window has nothing to show: it was opened in another browser, or it has expired. Go back to the nonprofit’s page and choose to give again.',
};

/** The Connect of the path, or the not-found page (404) and undefined. */
export async function connectOr404(deps: DonorFlowDeps, ctx: Context, origin?: string): Promise<FlowConnect | undefined> {
  const connect = await connectForFlow(deps.db, deps.environment, String(ctx.params.cid ?? ''));
  if (!connect) sendEnd(deps, ctx, 404, NOT_FOUND, { origin, reason: 'error' });
  return connect;
}

export interface Step {
  connect: FlowConnect;
  state: FlowState;
  daf?: DafRow;
}

/** The Connect and this browser's flow for it (and its DAF when `needDaf`), or the page that says there is none. */
export async function stepOf(deps: DonorFlowDeps, ctx: Context, needDaf: boolean): Promise<Step | undefined> {
  const connect = await connectOr404(deps, ctx);
  if (!connect) return undefined;
  const state = loadFlowState(deps, ctx, connect.id);
  if (!state || state.sessionId) {
    sendEnd(deps, ctx, 400, NO_FLOW, { connect });
    return undefined;
  }
  if (!needDaf) return { connect, state };
  const daf = state.dafId ? await dafForFlow(deps.db, deps.environment, state.dafId) : undefined;
  if (!daf) {
    ctx.status = 303;
    ctx.redirect(flowPath(connect.id));
    return undefined;
  }
  return { connect, state, daf };
}

export async function postedStep(
  deps: DonorFlowDeps,
  ctx: Context,
  needDaf: boolean,
): Promise<{ step: Step; form: Record<string, string> } | undefined> {
  const form = await readForm(ctx);
  // A step not reached yet only redirects (nothing changes), so the token is checked after.
  const step = await stepOf(deps, ctx, needDaf);
  if (!step) return undefined;
  verifyCsrf(ctx, deps.serverKeys, `donor-flow:${step.state.nonce}`, form.csrf, deps.origin);
  return { step, form };
}

export function frame(deps: DonorFlowDeps, ctx: Context, { connect, state, daf }: Step): FlowFrameView {
  return {
    requestId: ctx.state.requestId,
    recipientName: connect.recipientName,
    recipientEin: formatEin(connect.recipientEin),
    amountText: state.amount ? dollarsText(state.amount) : undefined,
    frequencyText: state.amount && state.frequency ? FREQUENCY_TEXT[state.frequency] : undefined,
    dafName: daf?.org_name,
    csrf: csrfToken(deps.serverKeys, `donor-flow:${state.nonce}`),
    cancelAction: flowPath(connect.id, 'cancel'),
  };
}

export function redirect(ctx: Context, to: string): void {
  ctx.status = 303;
  ctx.redirect(to);
}

/** Cents from the script's `amount` (cents, whole dollars), when it is one. */
export function prefillAmount(value: unknown): number | undefined {
  if (typeof value !== 'string' || !/^\d{3,11}$/.test(value)) return undefined;
  const cents = Number(value);
  return cents % 100 === 0 && cents > 0 ? cents : undefined;
}

export function frequencyOf(value: unknown): WorkflowFrequency | undefined {
  return value === 'one_time' || value === 'monthly' ? value : undefined;
}

export function dafChoice(daf: DafRow): DafChoiceView {
  return {
    id: daf.id,
    name: daf.org_name,
    place: [daf.city, daf.state].filter(Boolean).join(', '),
    minimumText: dollarsText(Number(daf.minimum_grant_amount)),
    supported: isSupported(daf),
    down: daf.institution_down,
  };
}

/** The steps after the amount need one. */
export async function stepWithAmount(
  deps: DonorFlowDeps,
  ctx: Context,
  step: Step | undefined,
): Promise<(Step & { daf: DafRow }) | undefined> {
  if (!step?.daf) return undefined;
  if (!step.state.amount || !step.state.frequency) {
    redirect(ctx, flowPath(step.connect.id, 'amount'));
    return undefined;
  }
  return { ...step, daf: step.daf };
}

/** A form the flow could not verify (CSRF): its own page, in the flow's headers. */
export function sendRefusedForm(deps: DonorFlowDeps, ctx: Context, status: number, text: string): void {
  sendEnd(deps, ctx, status, { title: 'This form could not be sent', text });
}
