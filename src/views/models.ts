import type { Environment } from '../db/schema.js';

/**
 * What each page template is given: one interface per template, so a name misspelt in the
 * code that renders it fails the type check (the strict rendering of views/render.ts catches
 * one misspelt in the template). The features that render pages add their templates to
 * PageModels and DashboardPageModels (oidc/interactions/view-models.ts,
 * dashboard/view-models.ts), so views/ imports no feature.
 */

/** A page's passkey form (views/partials/passkey-sign-in.njk): where it posts, where it asks for options, its button; mfa/passkey-form.ts decides when a page offers it. */
export interface PasskeyForm {
  action: string;
  optionsAction: string;
  label: string;
  /** `second-factor` when the passkey follows a password on the dashboard's sign-in. */
  step?: 'second-factor';
}

/** What every page gets from sendPage (views/page.ts). */
export interface LayoutModel {
  sandbox: boolean;
  environment: Environment;
  /** The request id the page shows, for support. */
  requestId?: string | undefined;
  /** Pages that offer passkeys get their scripts; pages that submit themselves, theirs. */
  passkeyForm?: PasskeyForm | undefined;
  autoSubmit?: boolean;
}

/** What every signed-in page gets from sendDashboardPage (dashboard/page.ts). */
export interface DashboardFrame {
  requestId: string | undefined;
  environmentName: string;
  viewer: { email: string; name: string | null };
  nav: {
    section: string;
    account: string;
    security: string;
    connections: string;
    organizations: { name: string; href: string; current: boolean }[];
  };
  org:
    | {
        id: string;
        name: string;
        ein: string;
        kind: { label: string; noun: string };
        roleName: string;
        heading: boolean;
        tabs: { label: string; href: string; current: boolean }[];
      }
    | undefined;
  csrf: string;
  signOutAction: string;
  /** The dashboard layout's banners. */
  notice?: string | undefined;
  error?: string | undefined;
}

interface ErrorLink {
  href: string;
  label: string;
}

export interface ErrorView {
  title: string;
  text: string;
  description?: string | undefined;
  links?: readonly ErrorLink[] | undefined;
  requestId: string;
}
/** The pages sendPage renders directly (the hosted pages, outside the signed-in frame). */
export interface PageModels {
  'error.njk': ErrorView;
}

/** The signed-in pages sendDashboardPage renders in its frame. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled in by dashboard/view-models.ts
export interface DashboardPageModels {}

export type PageName = keyof PageModels;
export type DashboardPageName = keyof DashboardPageModels;

/** Every template a page renders, with all it is given (the layout's values included). */
export type ViewModels = { [V in PageName]: PageModels[V] & LayoutModel } & {
  [V in DashboardPageName]: DashboardPageModels[V] & DashboardFrame & LayoutModel;
};
export type ViewName = keyof ViewModels;
