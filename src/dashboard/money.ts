/** Amounts as the dashboard shows them: cents as dollars (`$1,234.50`), by integer arithmetic. */
const GROUPED = new Intl.NumberFormat('en-US');

export function dollars(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}$${GROUPED.format(Math.floor(abs / 100))}.${String(abs % 100).padStart(2, '0')}`;
}

/** A disbursement's status in words (docs/grantmaking.md, "Disbursements"). */
export const DISBURSEMENT_STATUS_LABELS: Readonly<Record<string, string>> = {
  pending_approval: 'Pending approval',
  awaiting_balance: 'Waiting for funds',
  submitted: 'Submitted',
  completed: 'Completed',
  failed: 'Failed',
  canceled: 'Canceled',
  awaiting_verification: 'Awaiting verification',
  rejected: 'Rejected',
  validating_organization: 'Validating the organization',
  awaiting_account_claim: 'Awaiting account claim',
  stopped: 'Stopped',
};

/** The tag class of a status: done, trouble, or on its way. */
export function statusTone(status: string): 'ok' | 'bad' | 'warn' | '' {
  if (status === 'completed') return 'ok';
  if (status === 'failed' || status === 'rejected') return 'bad';
  if (status === 'pending_approval' || status === 'awaiting_balance') return 'warn';
  return '';
}
