import crypto from 'node:crypto';
import type { Context } from 'koa';
import type { WorkflowFrequency } from '../db/schema-giving.js';
import type { SessionDonorJson } from '../db/schema-giving.js';
import { pageCookie, type PageCookieDeps } from '../http/page-cookie.js';
import type { SecretBox } from '../keys/secret-box.js';

/**
 * What a donor has chosen so far in the hosted flow (docs/giving.md, "Security of the flow"). It
 * lives in one cookie of this browser only, sealed (AES-GCM under the secrets key: neither read
 * nor altered by anyone holding it), HttpOnly and SameSite=Strict; nothing of it is in a URL, so
 * a flow address or a workflow session id copied to another browser shows none of it. Opening
 * the flow (the script's popup) starts a new state and forgets the previous one.
 */
export interface FlowState {
  /** The Connect this flow is for. */
  cid: string;
  /** Where the flow's result is posted: the opener page's origin, an http(s) origin. */
  origin: string;
  /** Binds the flow's forms' CSRF tokens to this state. */
  nonce: string;
  /** When it started (ms): it lasts FLOW_LIFETIME_MS. */
  startedAt: number;
  dafId?: string;
  /** Cents, whole dollars (the form's dollars × 100). */
  amount?: number;
  frequency?: WorkflowFrequency;
  donor?: SessionDonorJson;
  donorAccountId?: string | null;
  /** The simulated DAF's sign-in: the balance it told, in cents. */
  donorBalance?: number;
  /** Set once authorized: the session the final page hands to the opener. */
  sessionId?: string;
  trackingId?: string;
}

/** How long a flow is kept (a donor reading their DAF's page takes a while). */
export const FLOW_LIFETIME_MS = 60 * 60_000;

const PURPOSE = 'donor_flow';

export interface FlowStateDeps extends PageCookieDeps {
  box: SecretBox;
}

export function newFlowState(cid: string, origin: string, prefill: Pick<FlowState, 'amount' | 'frequency'>): FlowState {
  return { cid, origin, nonce: crypto.randomBytes(18).toString('base64url'), startedAt: Date.now(), ...prefill };
}

export function saveFlowState(deps: FlowStateDeps, ctx: Context, state: FlowState): void {
  pageCookie(deps, ctx, PURPOSE, 'strict').set(deps.box.seal(JSON.stringify(state)), FLOW_LIFETIME_MS);
}

export function clearFlowState(deps: FlowStateDeps, ctx: Context): void {
  pageCookie(deps, ctx, PURPOSE, 'strict').clear();
}

/** This browser's flow for `cid`, if it has one that is still fresh; anything unreadable counts as none. */
export function loadFlowState(deps: FlowStateDeps, ctx: Context, cid: string): FlowState | undefined {
  const raw = pageCookie(deps, ctx, PURPOSE, 'strict').get();
  if (!raw?.startsWith('enc:')) return undefined;
  try {
    const state = JSON.parse(deps.box.open(raw)) as FlowState;
    if (state.cid !== cid || Date.now() - state.startedAt > FLOW_LIFETIME_MS) return undefined;
    return state;
  } catch {
    return undefined;
  }
}

/**
 * The opener's origin as the flow takes it: an http or https origin and nothing more (no
 * path, query, user or fragment), or undefined.
 */
export function parseOpenerOrigin(value: string | undefined): string | undefined {
  if (!value || value.length > 300) return undefined;
  try {
    const url = new URL(value);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
    return url.origin === value ? url.origin : undefined;
  } catch {
    return undefined;
  }
}
