import crypto from 'node:crypto';
import type { GrantAddressJson, SessionDonorJson } from '../db/schema-giving.js';
import { invalid } from '../errors/domain-error.js';

/** The capture's checks and defaults that need no database (docs/giving.md, "Capturing grants"). */

/** Almoner charges no processing fee of its own, so the platform's fee may be up to the whole 5%. */
export const MAX_FEE_BASIS_POINTS = 500;
export const DEFAULT_DESIGNATION = 'Where needed most';
const NAME_MAX = 255;
const NOTE_MAX = 400;
const DESIGNATION_MAX = 100;

export interface CaptureAmounts {
  amount: number;
  applicationFeeAmount?: number;
}

/** Refuses (400) an amount or fee the session, the DAF or the 5% ceiling does not allow. */
export function checkAmounts(
  input: CaptureAmounts,
  limits: { minimum: number; authorized: number; balance: number | null },
): { amount: number; fee: number } {
  const { amount } = input;
  const fee = input.applicationFeeAmount ?? 0;
  if (!Number.isSafeInteger(amount) || amount <= 0) throw invalid('amount: must be a positive whole number of cents.');
  if (amount % 100 !== 0) throw invalid('amount: must be whole dollars (a multiple of 100 cents).');
  if (amount < limits.minimum) throw invalid(`amount: below the DAF's minimum grant of ${limits.minimum} cents.`);
  if (amount > limits.authorized) throw invalid(`amount: above the ${limits.authorized} cents the donor authorized.`);
  if (limits.balance !== null && amount > limits.balance) throw invalid("amount: above the donor's DAF balance.");
  if (!Number.isSafeInteger(fee) || fee < 0) throw invalid('applicationFeeAmount: must be a whole number of cents, 0 or more.');
  if (fee * 10_000 > amount * MAX_FEE_BASIS_POINTS) throw invalid("applicationFeeAmount: fees may not exceed 5% of the grant's amount.");
  return { amount, fee };
}

function cut(value: string | undefined, max: number): string | undefined {
  return value === undefined ? undefined : [...value].slice(0, max).join('');
}

function cutAddress(address: GrantAddressJson | undefined): GrantAddressJson | undefined {
  if (!address) return undefined;
  return Object.fromEntries(Object.entries(address).map(([k, v]) => [k, cut(v as string, NAME_MAX)])) as GrantAddressJson;
}

export interface CaptureDetails {
  donor?: SessionDonorJson;
  note?: string;
  designation?: string;
}

/**
 * The grant's donor fields, note and designation: the body's, else the session's, cut at the
 * published maximum lengths (never refused for length).
 */
export function grantDetails(body: CaptureDetails, session: { donor: SessionDonorJson; note: string | null; designation: string | null }) {
  const donor = { ...session.donor, ...Object.fromEntries(Object.entries(body.donor ?? {}).filter(([, v]) => v !== undefined)) };
  const designation = cut(body.designation ?? session.designation ?? undefined, DESIGNATION_MAX);
  return {
    first_name: cut(donor.firstName, NAME_MAX) ?? null,
    last_name: cut(donor.lastName, NAME_MAX) ?? null,
    email: cut(donor.email, NAME_MAX) ?? null,
    phone: cut(donor.phone, NAME_MAX) ?? null,
    address: cutAddress(donor.address) ?? null,
    note: cut(body.note ?? session.note ?? undefined, NOTE_MAX) ?? null,
    designation: designation && designation.trim() !== '' ? designation : DEFAULT_DESIGNATION,
  };
}

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** A grant's tracking id: 10 upper-case base32 characters (what the DAF's payment quotes). */
export function newTrackingId(): string {
  return [...crypto.randomBytes(10)].map((b) => BASE32[b % 32]).join('');
}
