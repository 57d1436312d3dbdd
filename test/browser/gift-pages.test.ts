import fs from 'node:fs';
import type { Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { signIn, useChromium } from '../helpers/chromium.js';
import { appStorage, checkTiff, envelopeTiff, giftStaff, seedMailItem, seedProperty } from '../helpers/gift-dashboard.js';
import { screenshotTarget } from '../helpers/screenshots.js';
import { useOAuthServer } from '../helpers/use-oauth-server.js';

/**
 * The Mail pages in Chromium (docs/gift-processing.md, "On the dashboard"): a nonprofit's
 * member opens the mail list and an envelope at phone and desktop widths, and the scans' images
 * really render (loaded, decoded, and not blank in the screenshot); the status filter works
 * from the page, by keyboard, with its labels.
 */

const { testDatabase: t, server } = useOAuthServer({ staff: 0 });
const chromium = useChromium();

async function signedIn(user: { email: string; password: string }): Promise<Page> {
  const page = await chromium.context.newPage();
  await page.goto(`${server.urls.sandboxDashboard}/sign-in?next=/account`);
  await signIn(page, user);
  await page.waitForURL((url) => url.pathname === '/account');
  return page;
}

interface ShownImage {
  src: string;
  complete: boolean;
  naturalWidth: number;
  box: { x: number; y: number; width: number; height: number };
}

/** Every <img> matching `selector` once all are done loading: whether each decoded, and its box in the page's coordinates. */
async function renderedImages(page: Page, selector: string): Promise<ShownImage[]> {
  const all = `[...document.querySelectorAll(${JSON.stringify(selector)})]`;
  await page.waitForFunction(`${all}.every((img) => img.complete)`, undefined, { timeout: 15_000 });
  return page.evaluate(`${all}.map((img) => {
    const box = img.getBoundingClientRect();
    return {
      src: img.currentSrc,
      complete: img.complete,
      naturalWidth: img.naturalWidth,
      box: { x: box.x + window.scrollX, y: box.y + window.scrollY, width: box.width, height: box.height },
    };
  })`);
}

/** The share of the box's pixels in the PNG that are not white (or near it), and whether any are strongly red. */
function inkIn(png: PNG, box: { x: number; y: number; width: number; height: number }) {
  let ink = 0;
  let red = 0;
  let total = 0;
  const x0 = Math.max(0, Math.floor(box.x) + 2);
  const y0 = Math.max(0, Math.floor(box.y) + 2);
  const x1 = Math.min(png.width, Math.floor(box.x + box.width) - 2);
  const y1 = Math.min(png.height, Math.floor(box.y + box.height) - 2);
  for (let y = y0; y < y1; y += 1) {
    for (let x = x0; x < x1; x += 1) {
      const i = (png.width * y + x) * 4;
      const [r, g, b] = [png.data[i]!, png.data[i + 1]!, png.data[i + 2]!];
      total += 1;
      if (r < 235 || g < 235 || b < 235) ink += 1;
      if (r > 150 && g < 80 && b < 80) red += 1;
    }
  }
  return { ink: total ? ink / total : 0, red, total };
}

/** The whole page's screenshot, kept as saveScreenshot keeps them (screenshots.ts), decoded. */
async function screenshotOf(page: Page, name: string): Promise<PNG> {
  const target = screenshotTarget(name);
  await page.screenshot({ path: target, fullPage: true });
  return PNG.sync.read(fs.readFileSync(target));
}

async function expectImagesShown(page: Page, selector: string, count: number, name: string) {
  const images = await renderedImages(page, selector);
  expect(images).toHaveLength(count);
  // Nothing is wider than the window: the images shrink to fit a phone.
  const viewport = page.viewportSize()!.width;
  for (const image of images) expect(image.box.x + image.box.width, `${name}: ${image.src}`).toBeLessThanOrEqual(viewport);
  const png = await screenshotOf(page, name);
  let red = 0;
  for (const image of images) {
    expect({ src: image.src, complete: image.complete, loaded: image.naturalWidth > 0 }).toEqual({
      src: image.src,
      complete: true,
      loaded: true,
    });
    expect(image.box.width).toBeGreaterThan(20);
    const seen = inkIn(png, image.box);
    expect(seen.total).toBeGreaterThan(100);
    // A check is pale green with dark text: nearly all of its box is coloured.
    expect(seen.ink, `${name}: ${image.src}`).toBeGreaterThan(0.5);
    red += seen.red;
  }
  // The checks' amounts are printed in red: some of it shows.
  expect(red).toBeGreaterThan(0);
}

async function setting() {
  const s = await giftStaff(t.db);
  await t.db.updateTable('organizations').set({ name: 'Riverside Food Bank' }).where('id', '=', s.nonprofit.id).execute();
  const storage = appStorage(server.config.data_dir);
  const base = { nonprofitId: s.nonprofit.id, providerId: s.provider.id, lockbox: s.lockbox };
  const older = await seedMailItem(t.db, storage, {
    ...base,
    createdAt: new Date(Date.now() - 3_600_000),
    status: 'needs_review',
    reviewLine: 5,
    reviewReason: 'amount: "1OO.00" is not an amount',
    images: [{ label: 'check_front', tiff: await checkTiff('$1OO.00', 'Grace Hopper') }],
  });
  const item = await seedMailItem(t.db, storage, {
    ...base,
    images: [
      { label: 'check_front', tiff: await checkTiff('$250.00', 'Ada Lovelace') },
      { label: 'check_back', tiff: await checkTiff('For deposit only', 'Endorsement') },
      { label: 'envelope', tiff: await envelopeTiff() },
    ],
    donations: [{ amount: 25_000, donor: 'Ada Lovelace', memo: 'Winter coats' }],
    deposit: {},
  });
  return { ...s, item, older };
}

describe('the Mail pages in Chromium', () => {
  it('show the mail list and an envelope’s scans at 390 and 1280 px, every image loaded and visibly drawn', async () => {
    const s = await setting();
    const page = await signedIn(s.users.member);
    for (const width of [390, 1280]) {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(`${server.urls.sandboxDashboard}/orgs/${s.ein}/mail`);
      await expect(page.getByRole('heading', { name: 'Sandbox mail' }).count()).resolves.toBe(1);
      await expectImagesShown(page, 'img.scan-thumb', 2, `gift-mail-list-${width}.png`);

      await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'First scanned image of envelope' }).first().click()]);
      expect(new URL(page.url()).pathname).toBe(`/orgs/${s.ein}/mail/${s.item.id}`);
      await expect(page.locator('#mail-status').textContent()).resolves.toBe('Processed');
      await expect(page.getByRole('row', { name: /Ada Lovelace/ }).textContent()).resolves.toMatch(/\$250\.00.*Winter coats/s);
      await expect(page.getByRole('img', { name: /^Check, front/ }).count()).resolves.toBe(1);
      await expect(page.getByRole('img', { name: /^Envelope/ }).count()).resolves.toBe(1);
      await expectImagesShown(page, 'img.scan-image', 3, `gift-mail-item-${width}.png`);
    }
  });

  it('filters by status from the page, by keyboard, and shows why an envelope needs review', async () => {
    const s = await setting();
    const page = await signedIn(s.users.read_only);
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${server.urls.sandboxDashboard}/orgs/${s.ein}/mail`);
    const filter = page.getByRole('search', { name: 'Filter the mail' });
    await expect(filter.getByLabel('Lockbox').count()).resolves.toBe(1);
    await filter.getByLabel('Lockbox').focus();
    await page.keyboard.press('Tab');
    await expect(page.evaluate('document.activeElement.id')).resolves.toBe('status');
    await filter.getByLabel('Status').selectOption({ label: 'Needs review' });
    await page.keyboard.press('Tab');
    await expect(page.evaluate('document.activeElement.textContent')).resolves.toBe('Filter');
    await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
    expect(new URL(page.url()).searchParams.get('status')).toBe('needs_review');
    const rows = page.locator('table.mail-items tbody tr');
    await expect(rows.count()).resolves.toBe(1);
    await expect(rows.first().textContent()).resolves.toContain('Needs review');
    await expect(filter.getByLabel('Status').inputValue()).resolves.toBe('needs_review');
    // Bookmarkable: the same URL opened again shows the same rows.
    await page.goto(page.url());
    await expect(page.locator('table.mail-items tbody tr').count()).resolves.toBe(1);

    await Promise.all([page.waitForNavigation(), rows.first().getByRole('link').first().click()]);
    await expect(page.locator('#mail-reason').textContent()).resolves.toBe(
      'Line 5 of the batch\'s index: amount: "1OO.00" is not an amount',
    );
    await expectImagesShown(page, 'img.scan-image', 1, 'gift-mail-review-1280.png');
  });

  it('sets a property of a donation from the envelope’s page by its labelled form, at phone width', async () => {
    const s = await setting();
    const campaign = await seedProperty(t.db, {
      nonprofitId: s.nonprofit.id,
      name: 'Campaign',
      resourceType: 'donation',
      type: 'enum',
      options: ['Spring appeal', 'Year end'],
    });
    const page = await signedIn(s.users.member);
    await page.setViewportSize({ width: 390, height: 900 });
    await page.goto(`${server.urls.sandboxDashboard}/orgs/${s.ein}/mail/${s.item.id}`);
    const row = page.getByRole('row', { name: /Ada Lovelace/ });
    await row.getByText('Properties', { exact: true }).click();
    await row.getByLabel('New value of Campaign').selectOption({ label: 'Year end' });
    await Promise.all([page.waitForNavigation(), row.getByRole('button', { name: 'Set' }).click()]);
    await expect(page.getByRole('status').textContent()).resolves.toBe('Campaign is set.');
    await expect(page.getByRole('row', { name: /Ada Lovelace/ }).textContent()).resolves.toContain('Year end');
    const stored = await t.db
      .selectFrom('property_assignments')
      .select('value')
      .where('property_id', '=', campaign.id)
      .executeTakeFirstOrThrow();
    expect(stored.value).toEqual({ type: 'enum', enum_value_id: campaign.optionIds[1] });
    await screenshotOf(page, 'gift-mail-property-390.png');
  });
});
