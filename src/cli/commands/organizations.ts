import path from 'node:path';
import { requireString, type Command } from './command.js';

/** The organizations directory (docs/directory.md): grantmakers' payees, from the IRS EO BMF. */
export const organizationsImport: Command = {
  path: ['organizations', 'import'],
  summary:
    'import an IRS EO BMF CSV file into the organizations directory (all of it or, on a bad line, none); re-importing changes only what changed',
  usage: 'organizations import <file.csv>',
  options: { file: { type: 'string' } },
  positionals: ['file'],
  async run(ctx) {
    const { importBmfFile } = await import('../../directory/import-service.js');
    // Resolved from where the command was typed, as any command-line tool's path (config/invocation-directory.ts).
    const file = path.resolve(ctx.cwd, requireString(ctx.values, 'file'));
    const counts = await importBmfFile(await ctx.db(), file);
    const changed = counts.inserted + counts.updated;
    return {
      json: { file, ...counts },
      text: `${file}: read ${counts.read}, inserted ${counts.inserted}, updated ${counts.updated}, unchanged ${counts.unchanged}${
        changed === 0 ? ' (nothing changed)' : ''
      }`,
    };
  },
};

function verificationCommand(decision: 'approve' | 'reject'): Command {
  return {
    path: ['verification-requests', decision],
    summary:
      decision === 'approve'
        ? "approve a grantmaker's verification request: the organization is listed in the directory under the request's organization id (audited)"
        : "reject a grantmaker's verification request (audited)",
    usage: `verification-requests ${decision} --id <vr_…>`,
    options: { id: { type: 'string' } },
    async run(ctx) {
      const { decideVerification } = await import('../../directory/verification-service.js');
      const row = await decideVerification(await ctx.db(), requireString(ctx.values, 'id'), decision);
      return {
        json: { id: row.id, status: row.status, ein: row.ein, organization_id: row.organization_id },
        text: `verification request ${row.id} (EIN ${row.ein}) is ${row.status}${
          row.status === 'verified' ? `; organization ${row.organization_id} is listed in the directory` : ''
        }`,
      };
    },
  };
}

/** The operator's decisions on verification requests (docs/directory.md, "Verification requests"). */
export const verificationRequestsApprove = verificationCommand('approve');
export const verificationRequestsReject = verificationCommand('reject');
