import type { ShownDate } from './dates.js';

// What the gift-processing pages are given (views/models.ts; docs/gift-processing.md, "On the dashboard").

interface ShownDeposit {
  href: string;
  amount: string;
  status: string;
  tone: string;
  sourceName: string;
  settled: ShownDate | undefined;
  created: ShownDate;
  donations: number;
}

/** A property's form on a donation or deposit: its current value shown, and what can be chosen. */
export interface PropertyField {
  id: string;
  name: string;
  type: string;
  shown: string;
  /** The control's id (unique on the page). */
  control: string;
  options: { value: string; label: string; selected: boolean }[];
  text: string;
}

export interface PropertyForms {
  /** Where the form posts; undefined when the viewer may not change values (or nothing can be set). */
  action: string | undefined;
  resourceId: string;
  fields: PropertyField[];
}

interface ShownDonation {
  id: string;
  amount: string;
  donor: string;
  memo: string;
  purpose: string;
  properties: PropertyForms;
}

interface DepositsView {
  environmentName: string;
  deposits: ShownDeposit[];
  newer: string | undefined;
  older: string | undefined;
}

interface DepositView {
  back: string;
  deposit: ShownDeposit & { id: string; description: string | null; mailItemHref: string | undefined };
  donations: ShownDonation[];
  properties: PropertyForms;
  notice: string | undefined;
  error: string | undefined;
}

interface ShownMailItem {
  href: string;
  envelopeId: string;
  received: ShownDate;
  lockbox: string;
  status: string;
  tone: string;
  donations: number;
  thumbnail: string | undefined;
}

interface MailView {
  environmentName: string;
  action: string;
  filters: { lockbox: string; status: string };
  filtered: boolean;
  lockboxes: { value: string; label: string }[];
  statuses: { value: string; label: string }[];
  items: ShownMailItem[];
  newer: string | undefined;
  older: string | undefined;
}

interface MailItemView {
  back: string;
  item: ShownMailItem & { id: string; reason: string | undefined };
  scans: {
    fileId: string;
    scanned: ShownDate;
    images: { id: string; label: string; full: string; thumb: string; width: number | null; height: number | null }[];
  }[];
  donations: ShownDonation[];
  deposit: ShownDeposit | undefined;
  notice: string | undefined;
  error: string | undefined;
}

declare module '../views/models.js' {
  interface DashboardPageModels {
    'dashboard/deposits.njk': DepositsView;
    'dashboard/deposit.njk': DepositView;
    'dashboard/mail.njk': MailView;
    'dashboard/mail-item.njk': MailItemView;
  }
}
