import { invalid } from '../errors/domain-error.js';

/**
 * The bank's evidence an operator quotes when settling money by hand (docs/grantmaking.md, "The
 * production rail"; disbursements' too): what the row and the audit row keep.
 */
export function checkEvidence(reference: unknown): string {
  const text = typeof reference === 'string' ? reference.trim() : '';
  // eslint-disable-next-line no-control-regex
  if (text.length < 1 || text.length > 200 || /[\u0000-\u001f\u007f]/.test(text))
    throw invalid("--reference (the bank's evidence) must be 1 to 200 characters, without control characters");
  return text;
}
