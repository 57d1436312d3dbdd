// What the donor flow's pages are given (views/models.ts; templates in views/connect/).

/** A message the page posts to the page that opened it (views/static/donor-flow.js), to that origin only. */
export interface FlowMessageView {
  origin: string;
  /** The message, as JSON. */
  json: string;
  /** Close the window once posted. */
  close: boolean;
}

/** What every step shows: for whom, how much so far, and the way out. */
export interface FlowFrameView {
  requestId?: string | undefined;
  recipientName: string;
  recipientEin: string;
  amountText?: string | undefined;
  frequencyText?: string | undefined;
  dafName?: string | undefined;
  csrf: string;
  cancelAction: string;
  flowMessage?: FlowMessageView | undefined;
}

export interface DafChoiceView {
  id: string;
  name: string;
  place: string;
  minimumText: string;
  supported: boolean;
  down: boolean;
}

interface ChooseView extends FlowFrameView {
  searchAction: string;
  query: string;
  dafs: readonly DafChoiceView[];
  more: boolean;
  action: string;
  error?: string | undefined;
}

interface AmountView extends FlowFrameView {
  minimumText: string;
  dollars: string;
  frequency: string;
  error?: string | undefined;
  action: string;
  backHref: string;
}

interface SimulatedSignInView extends FlowFrameView {
  username: string;
  error?: string | undefined;
  action: string;
}

export interface DonorFieldsView {
  firstName: string;
  lastName: string;
  email: string;
  phone: string;
  line1: string;
  line2: string;
  city: string;
  state: string;
  postalCode: string;
}

interface DonorView extends FlowFrameView {
  integrated: boolean;
  fields: DonorFieldsView;
  error?: string | undefined;
  errorField?: string | undefined;
  action: string;
  backHref: string;
}

interface ConfirmView extends FlowFrameView {
  supported: boolean;
  kind: string;
  donorText: string;
  balanceText?: string | undefined;
  problem?: string | undefined;
  action: string;
  amountHref: string;
  /** The donor's details page, when the DAF asks for them. */
  detailsHref?: string | undefined;
  chooseHref: string;
}

interface DoneView extends FlowFrameView {
  unintegrated: boolean;
  trackingId: string;
  monthly: boolean;
  /** The workflow session's id, shown in the sandbox only. */
  sandboxSessionId?: string | undefined;
}

interface FlowMessagePageView {
  requestId?: string | undefined;
  title: string;
  text: string;
  recipientName?: string | undefined;
  flowMessage?: FlowMessageView | undefined;
}

declare module '../views/models.js' {
  interface PageModels {
    'connect/choose.njk': ChooseView;
    'connect/amount.njk': AmountView;
    'connect/sign-in.njk': SimulatedSignInView;
    'connect/donor.njk': DonorView;
    'connect/confirm.njk': ConfirmView;
    'connect/done.njk': DoneView;
    'connect/message.njk': FlowMessagePageView;
  }
}
