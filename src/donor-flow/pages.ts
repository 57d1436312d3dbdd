import type { Context } from 'koa';
import { canonicalEmail, hasUnsafeCharacters } from '../accounts/email-address.js';
import { formatEin } from '../accounts/ein.js';
import type { Db } from '../db/database.js';
import type { Environment } from '../db/schema.js';
import type { GrantAddressJson, WorkflowFrequency } from '../db/schema-giving.js';
import { csrfToken, verifyCsrf } from '../http/csrf.js';
import { readForm } from '../http/form-body.js';
import type { ServerKeys } from '../keys/server-keys.js';
import type { SecretBox } from '../keys/secret-box.js';
import type { AttemptCounter } from '../limits/attempt-counter.js';
import type { PageModels } from '../views/models.js';
import { sendPage } from '../views/page.js';
import { clearFlowState, loadFlowState, newFlowState, parseOpenerOrigin, saveFlowState, type FlowState } from './flow-state.js';
import {
  authorize,
  authorizedSession,
  connectForFlow,
  dafForFlow,
  dafKind,
  donorAccountIdFor,
  isSupported,
  redeemFlowCode,
  searchDafs,
  SIMULATED_BALANCE_CENTS,
  type DafRow,
  type FlowConnect,
} from './service.js';
import type { DafChoiceView, DonorFieldsView, FlowFrameView, FlowMessageView } from './view-models.js';

/**
 * The hosted donor flow (docs/giving.md, "The donor flow"), on the dashboard host of each
 * environment, opened in a popup by /connect.js: choose a DAF, the amount and how often, then by
 * the DAF's kind the simulated sign-in or the donor's details (with a code from an integrated
 * DAF), confirm and authorize. Its state is this browser's sealed cookie (flow-state.ts).
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

function sendFlowPage<V extends keyof PageModels & `connect/${string}`>(
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

const FREQUENCY_TEXT: Record<WorkflowFrequency, string> = { one_time: 'one time', monthly: 'every month' };

function dollarsText(cents: number): string {
  return `$${new Intl.NumberFormat('en-US').format(Math.floor(cents / 100))}.${String(cents % 100).padStart(2, '0')}`;
}

function flowMessage(state: Pick<FlowState, 'origin'>, message: Record<string, unknown>, close: boolean): FlowMessageView {
  return { origin: state.origin, json: JSON.stringify({ source: 'almoner-connect', ...message }), close };
}

/** A page that ends the flow without a grant; when the opener is known, it is told why. */
function sendEnd(
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

const NOT_FOUND = {
  title: 'This giving link does not work',
  text: 'The nonprofit’s giving link is not known here, or it is no longer active. Go back to the nonprofit’s page and try again, or ask the nonprofit.',
};
const NO_FLOW = {
  title: 'Start again from the nonprofit’s page',
  text: 'This window has nothing to show: it was opened in another browser, or it has expired. Go back to the nonprofit’s page and choose to give again.',
};

/** The Connect of the path, or the not-found page (404) and undefined. */
async function connectOr404(deps: DonorFlowDeps, ctx: Context, origin?: string): Promise<FlowConnect | undefined> {
  const connect = await connectForFlow(deps.db, deps.environment, String(ctx.params.cid ?? ''));
  if (!connect) sendEnd(deps, ctx, 404, NOT_FOUND, { origin, reason: 'error' });
  return connect;
}

interface Step {
  connect: FlowConnect;
  state: FlowState;
  daf?: DafRow;
}

/** The Connect and this browser's flow for it (and its DAF when `needDaf`), or the page that says there is none. */
async function stepOf(deps: DonorFlowDeps, ctx: Context, needDaf: boolean): Promise<Step | undefined> {
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

async function postedStep(
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

function frame(deps: DonorFlowDeps, ctx: Context, { connect, state, daf }: Step): FlowFrameView {
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

function redirect(ctx: Context, to: string): void {
  ctx.status = 303;
  ctx.redirect(to);
}

/** Cents from the script's `amount` (cents, whole dollars), when it is one. */
function prefillAmount(value: unknown): number | undefined {
  if (typeof value !== 'string' || !/^\d{3,11}$/.test(value)) return undefined;
  const cents = Number(value);
  return cents % 100 === 0 && cents > 0 ? cents : undefined;
}

function frequencyOf(value: unknown): WorkflowFrequency | undefined {
  return value === 'one_time' || value === 'monthly' ? value : undefined;
}

function dafChoice(daf: DafRow): DafChoiceView {
  return {
    id: daf.id,
    name: daf.org_name,
    place: [daf.city, daf.state].filter(Boolean).join(', '),
    minimumText: dollarsText(Number(daf.minimum_grant_amount)),
    supported: isSupported(daf),
    down: daf.institution_down,
  };
}

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

/** The steps after the amount need one. */
async function stepWithAmount(deps: DonorFlowDeps, ctx: Context, step: Step | undefined): Promise<(Step & { daf: DafRow }) | undefined> {
  if (!step?.daf) return undefined;
  if (!step.state.amount || !step.state.frequency) {
    redirect(ctx, flowPath(step.connect.id, 'amount'));
    return undefined;
  }
  return { ...step, daf: step.daf };
}

function showSignIn(deps: DonorFlowDeps, ctx: Context, step: Step, username: string, error?: string) {
  sendFlowPage(
    deps,
    ctx,
    'connect/sign-in.njk',
    { ...frame(deps, ctx, step), username, error, action: flowPath(step.connect.id, 'sign-in') },
    error ? 400 : undefined,
  );
}

/** GET /connect/:cid/sign-in: the sandbox's simulated DAF sign-in. */
export async function showSignInPage(deps: DonorFlowDeps, ctx: Context): Promise<void> {
  const step = await stepWithAmount(deps, ctx, await stepOf(deps, ctx, true));
  if (!step) return;
  if (dafKind(step.daf) !== 'simulated') return redirect(ctx, flowPath(step.connect.id, 'donor'));
  showSignIn(deps, ctx, step, '');
}

/** POST /connect/:cid/sign-in: any username and password; the simulated DAF tells a balance of $25,000.00. */
export async function submitSignIn(deps: DonorFlowDeps, ctx: Context): Promise<void> {
  const posted = await postedStep(deps, ctx, true);
  const step = await stepWithAmount(deps, ctx, posted?.step);
  if (!posted || !step) return;
  if (dafKind(step.daf) !== 'simulated') return redirect(ctx, flowPath(step.connect.id, 'donor'));
  const username = (posted.form.username ?? '').trim().slice(0, 200);
  if (!username || !posted.form.password)
    return showSignIn(deps, ctx, step, username, 'Enter a username and a password (any will do here).');
  saveFlowState(deps, ctx, { ...step.state, donorBalance: SIMULATED_BALANCE_CENTS, donorAccountId: null });
  redirect(ctx, flowPath(step.connect.id, 'confirm'));
}

function fieldsOf(source: Record<string, string | undefined>): DonorFieldsView {
  const take = (name: string) => (source[name] ?? '').trim().slice(0, 200);
  return {
    firstName: take('firstName'),
    lastName: take('lastName'),
    email: take('email'),
    phone: take('phone'),
    line1: take('line1'),
    line2: take('line2'),
    city: take('city'),
    state: take('state'),
    postalCode: take('postalCode'),
  };
}

function showDonor(
  deps: DonorFlowDeps,
  ctx: Context,
  step: Step & { daf: DafRow },
  fields: DonorFieldsView,
  error?: { text: string; field?: string; status?: number },
) {
  sendFlowPage(
    deps,
    ctx,
    'connect/donor.njk',
    {
      ...frame(deps, ctx, step),
      integrated: dafKind(step.daf) === 'integrated',
      fields,
      error: error?.text,
      errorField: error?.field,
      action: flowPath(step.connect.id, 'donor'),
      backHref: flowPath(step.connect.id, 'amount'),
    },
    error ? (error.status ?? 400) : undefined,
  );
}

/** GET /connect/:cid/donor: the donor's details (an integrated or unintegrated DAF). */
export async function showDonorPage(deps: DonorFlowDeps, ctx: Context): Promise<void> {
  const step = await stepWithAmount(deps, ctx, await stepOf(deps, ctx, true));
  if (!step) return;
  if (dafKind(step.daf) === 'simulated') return redirect(ctx, flowPath(step.connect.id, 'sign-in'));
  const { address, ...donor } = step.state.donor ?? {};
  showDonor(deps, ctx, step, fieldsOf({ ...donor, ...address }));
}

const EMAIL_SHAPE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * POST /connect/:cid/donor. An integrated DAF: the donor's account at its fund provider is
 * found by e-mail, after an optional code from the DAF approves it (under its limits). An
 * unintegrated DAF: name and e-mail, phone and mailing address if given.
 */
export async function submitDonor(deps: DonorFlowDeps, ctx: Context): Promise<void> {
  const posted = await postedStep(deps, ctx, true);
  const step = await stepWithAmount(deps, ctx, posted?.step);
  if (!posted || !step) return;
  const kind = dafKind(step.daf);
  if (kind === 'simulated') return redirect(ctx, flowPath(step.connect.id, 'sign-in'));
  const fields = fieldsOf(posted.form);
  if (kind === 'integrated') Object.assign(fields, { phone: '', line1: '', line2: '', city: '', state: '', postalCode: '' });
  const missing = !fields.firstName ? 'firstName' : !fields.lastName ? 'lastName' : !fields.email ? 'email' : undefined;
  if (missing) return showDonor(deps, ctx, step, fields, { text: 'Enter your first name, last name and e-mail address.', field: missing });
  const email = canonicalEmail(fields.email);
  if (hasUnsafeCharacters(email) || !EMAIL_SHAPE.test(email) || email.length > 254)
    return showDonor(deps, ctx, step, fields, { text: 'Enter your e-mail address, like name@example.com.', field: 'email' });
  let donorAccountId: string | null = null;
  if (kind === 'integrated') {
    const fundProviderId = step.daf.fund_provider_id!;
    const code = (posted.form.code ?? '').trim().slice(0, 64);
    if (code) {
      const outcome = await redeemFlowCode(
        { db: deps.db, keys: deps.serverKeys, counter: deps.counter },
        {
          environment: deps.environment,
          connectId: step.connect.id,
          fundProviderId,
          callerAddress: ctx.state.clientIp ?? '',
          code,
          email,
        },
      );
      if (!outcome.allowed) {
        ctx.set('Retry-After', String(outcome.retryAfterSeconds));
        return showDonor(deps, ctx, step, fields, {
          text: `Too many codes were tried. Wait ${Math.ceil(outcome.retryAfterSeconds / 60)} minutes and try again, or leave the code empty.`,
          field: 'code',
          status: 429,
        });
      }
      if (outcome.problem) return showDonor(deps, ctx, step, fields, { text: outcome.problem, field: 'code' });
    }
    donorAccountId = await donorAccountIdFor(deps.db, deps.environment, fundProviderId, email);
  }
  const address: GrantAddressJson = {};
  if (fields.line1) address.line1 = fields.line1;
  if (fields.line2) address.line2 = fields.line2;
  if (fields.city) address.city = fields.city;
  if (fields.state) address.state = fields.state;
  if (fields.postalCode) address.postalCode = fields.postalCode;
  const donor = {
    firstName: fields.firstName,
    lastName: fields.lastName,
    email,
    ...(fields.phone ? { phone: fields.phone } : {}),
    ...(Object.keys(address).length ? { address } : {}),
  };
  saveFlowState(deps, ctx, { ...step.state, donor, donorAccountId });
  redirect(ctx, flowPath(step.connect.id, 'confirm'));
}

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

/** A form the flow could not verify (CSRF): its own page, in the flow's headers. */
export function sendRefusedForm(deps: DonorFlowDeps, ctx: Context, status: number, text: string): void {
  sendEnd(deps, ctx, status, { title: 'This form could not be sent', text });
}
