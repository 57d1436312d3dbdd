import { z } from 'zod';

/** page_limit (1–100, default 10) and page_token, as the DAF resources of the published document use them. */
export const pageParams = {
  page_limit: z.coerce.number().int().min(1).max(100).default(10),
  page_token: z.string().max(200).optional(),
};

export const metadataSchema = z
  .record(z.string().max(40), z.string().max(500))
  .refine((m) => Object.keys(m).length <= 50, 'at most 50 keys');
