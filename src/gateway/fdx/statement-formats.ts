import type { ParameterizedContext } from 'koa';
import type { Readable } from 'node:stream';
import { fdxProblem } from './problems.js';
import { renderBai2 } from './statement-bai2.js';
import type { StatementContent } from './statement-content.js';
import { renderCsv } from './statement-csv.js';
import { renderPdf } from './statement-pdf.js';

/** The statement formats, chosen by Accept; the first is the default (no Accept, or * / *). */
export const STATEMENT_FORMATS = [
  { mediaType: 'application/pdf', extension: 'pdf', render: renderPdf },
  { mediaType: 'text/csv', extension: 'csv', render: renderCsv },
  { mediaType: 'application/vnd.bai2', extension: 'bai', render: renderBai2 },
] as const satisfies readonly { mediaType: string; extension: string; render: (content: StatementContent) => Readable }[];
export type StatementFormat = (typeof STATEMENT_FORMATS)[number];

/** Content negotiation with q-values and wildcards (Koa's accepts); nothing acceptable is 406, FDX code 1203. */
export function chooseFormat(ctx: ParameterizedContext): StatementFormat {
  const chosen = ctx.accepts(STATEMENT_FORMATS.map((f) => f.mediaType));
  const format = STATEMENT_FORMATS.find((f) => f.mediaType === chosen);
  if (!format) {
    throw fdxProblem(
      1203,
      `Statements are available as ${STATEMENT_FORMATS.map((f) => f.mediaType).join(', ')}; the Accept header allows none of them.`,
    );
  }
  return format;
}
