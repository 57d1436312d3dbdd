import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';

/** Opens a PDF with Mozilla's PDF.js (as a viewer would) and returns each page's text. */
export async function pdfPages(bytes: Uint8Array): Promise<{ pages: string[]; info: Record<string, unknown> }> {
  const doc = await getDocument({ data: new Uint8Array(bytes), useSystemFonts: false, isEvalSupported: false, verbosity: 0 }).promise;
  try {
    const pages: string[] = [];
    for (let n = 1; n <= doc.numPages; n += 1) {
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      pages.push(content.items.map((item) => ('str' in item ? item.str : '')).join(' '));
    }
    const { info } = await doc.getMetadata();
    return { pages, info: info as Record<string, unknown> };
  } finally {
    await doc.destroy();
  }
}
