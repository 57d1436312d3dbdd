/** Employer Identification Numbers: accepted as 12-3456789 or 123456789, stored as 9 digits. */

export function parseEin(input: string): string | undefined {
  const match = /^(\d{2})-?(\d{7})$/.exec(input.trim());
  return match ? `${match[1]}${match[2]}` : undefined;
}

export function formatEin(digits: string): string {
  return `${digits.slice(0, 2)}-${digits.slice(2)}`;
}
