// How commands print data: JSON for programs, aligned tables for people. Messages go to stderr.
import type { Issue } from '../events/index.js';
import { UsageError, type CommandIo } from './args.js';

export type Format = 'json' | 'table';

export function outputFormat(values: { json?: boolean | undefined; table?: boolean | undefined }, io: CommandIo): Format {
  if (values.json && values.table) throw new UsageError('--json and --table cannot be combined');
  if (values.json) return 'json';
  if (values.table) return 'table';
  return io.stdout.isTTY ? 'table' : 'json';
}

/** One JSON document, indented, on stdout. */
export function printJson(io: CommandIo, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export interface Column<T> {
  header: string;
  value: (row: T, index: number) => string | number | boolean | null | undefined;
  /** Numbers read best right-aligned. Default left. */
  align?: 'left' | 'right';
  /** Longer cells are cut with an ellipsis. */
  max?: number;
}

/** What a missing value looks like in a table. */
const NONE = '-';

function cell(value: string | number | boolean | null | undefined, max: number | undefined): string {
  const text = value === null || value === undefined || value === '' ? NONE : String(value).replace(/\s+/g, ' ');
  const chars = [...text];
  return max !== undefined && chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : text;
}

/** Columns separated by two spaces, padded to their widest cell; a header line first. */
export function renderTable<T>(rows: readonly T[], columns: ReadonlyArray<Column<T>>): string {
  const cells = rows.map((row, i) => columns.map((column) => cell(column.value(row, i), column.max)));
  const widths = columns.map((column, c) => Math.max([...column.header].length, ...cells.map((line) => [...line[c]!].length)));
  const format = (line: string[]) =>
    line
      .map((text, c) => {
        const pad = ' '.repeat(widths[c]! - [...text].length);
        return columns[c]!.align === 'right' ? pad + text : c === line.length - 1 ? text : text + pad;
      })
      .join('  ');
  return [format(columns.map((column) => column.header)), ...cells.map(format)].join('\n');
}

/** A stored instant (UTC ISO 8601 with milliseconds) to the minute, for tables. */
export function shortInstant(stored: string | null | undefined): string | null {
  return stored ? `${stored.slice(0, 10)} ${stored.slice(11, 16)}` : null;
}

/** A score or mean as people read it: 7.375 → 7.38, 8 → 8. */
export function shortNumber(value: number | null | undefined): string | null {
  return value === null || value === undefined ? null : String(Math.round(value * 100) / 100);
}

/** Why an event was set aside, on one line: `path: message; …`. */
export function reasonsText(reasons: readonly Issue[]): string {
  return reasons.map((r) => (r.path === '' ? r.message : `${r.path}: ${r.message}`)).join('; ');
}
