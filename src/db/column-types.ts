import type { ColumnType } from 'kysely';

/** Column types and the column-list helper shared by the table-type files (schema*.ts). */

export type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
export type UpdatedAt = ColumnType<Date, Date | string | undefined, Date | string>;
/** A jsonb column: read as T, written as its JSON text. */
export type Json<T> = ColumnType<T, string | undefined, string>;

type Columns<T> = readonly (keyof T & string)[];
type Exhaustive<T, L extends readonly unknown[]> = Exclude<keyof T, L[number]> extends never ? L : never;

/** A table's column list, which must name every column of T (checked at compile time). */
export const columns =
  <T>() =>
  <const L extends Columns<T>>(list: Exhaustive<T, L>) =>
    list;
