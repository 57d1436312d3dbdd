import type { Context } from 'koa';
import { canonicalEmail, hasUnsafeCharacters } from '../accounts/email-address.js';
import type { GrantAddressJson } from '../db/schema-giving.js';
import { saveFlowState } from './flow-state.js';
import { dafKind, donorAccountIdFor, redeemFlowCode, SIMULATED_BALANCE_CENTS, type DafRow } from './service.js';
import type { DonorFieldsView } from './view-models.js';
import {
  flowPath,
  frame,
  postedStep,
  redirect,
  sendFlowPage,
  stepOf,
  stepWithAmount,
  type DonorFlowDeps,
  type Step,
} from './flow-pages.js';

/** The donor flow's steps by the DAF's kind (docs/giving.md, "The donor flow"): the sandbox's simulated sign-in, or the donor's details with a code from an integrated DAF. */

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
