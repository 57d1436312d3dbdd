import { z } from 'zod';
import type { OrganizationKind } from '../../db/schema.js';
import { createBatchUploadUrl } from '../../gift-processing/upload-service.js';
import { defineRoute } from '../routing/route-spec.js';

/** The lockbox provider's upload URL (docs/gift-processing.md, "Object storage"; docs/api.md, "Gift processing"). */

const LOCKBOX_PROVIDERS: readonly OrganizationKind[] = ['lockbox_provider'];

const UploadUrlRequest = z
  .object({
    location_id: z.string().regex(/^po_[0-9]{1,18}$/, 'must be a PO box location such as po_543'),
  })
  .strict();

export const mailboxRoutes = [
  defineRoute({
    operationId: 'getMailboxUploadUrl',
    method: 'post',
    path: '/v1/mailbox/upload_url',
    summary: 'Get a Batch Upload URL',
    tag: 'mailbox',
    versions: ['2026-04-01', '2026-01-15'],
    area: 'mailbox',
    access: 'write',
    credentials: 'any',
    callers: LOCKBOX_PROVIDERS,
    body: UploadUrlRequest,
    // The published answer: the URL alone (the batch's id is in it; it expires in 15 minutes).
    response: z.object({ url: z.string() }),
    errors: [400, 401, 403],
    async handler({ db, caller, body, services }) {
      const { location_id: locationId } = body as z.output<typeof UploadUrlRequest>;
      const { url } = await createBatchUploadUrl(db, services.storage, {
        providerId: caller.organizationId,
        environment: caller.environment,
        locationId,
      });
      return { url };
    },
  }),
];
