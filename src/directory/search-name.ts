/**
 * A name as the directory's search compares it: ASCII letters lower-cased, each run of anything
 * but an ASCII letter or digit one space, trimmed ("FOOD BANK OF THE ROCKIES, INC." → "food bank
 * of the rockies inc"). The same rule as the generated search_name column of
 * directory_organizations (migration 20261129120100), so a query and a stored name meet on equal
 * terms; ASCII only, because what PostgreSQL's lower() does to other letters depends on the
 * database's collation (the IRS's names are ASCII capitals).
 */
export function searchName(text: string): string {
  return text
    .replace(/[A-Z]+/g, (letters) => letters.toLowerCase())
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}
