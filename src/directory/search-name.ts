/**
 * A name as the directory's search compares it: lower case, each run of anything but a letter or
 * a digit one space, trimmed ("FOOD BANK OF THE ROCKIES, INC." → "food bank of the rockies inc").
 * The same rule as the generated search_name column of directory_organizations (migration
 * 20261129120100), so a query and a stored name meet on equal terms.
 */
export function searchName(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}
