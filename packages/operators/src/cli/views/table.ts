/**
 * A kubectl-style table: upper-case headers, columns separated by three spaces, left-aligned,
 * the last column not padded. Colours are applied after padding, so alignment never depends on
 * them. Cells longer than their column's `maxWidth` are cut with `…`; in a cell, a newline (with
 * the blanks around it) and a tab become one space. Widths count code points, as kubectl does. Pure.
 * @module
 */
import type { Color, Style } from './style.ts';
import { plainStyle } from './style.ts';

export interface Cell {
  readonly text: string;
  readonly color?: Color | undefined;
}

export interface Column {
  readonly header: string;
  /** Longer cells are cut to this many characters (ending in `…`). */
  readonly maxWidth?: number;
}

export type CellInput = Cell | string | number;

const GAP = '   ';

export function cell(text: string | number, color?: Color): Cell {
  return { text: String(text), color };
}

export function truncate(text: string, max: number | undefined): string {
  if (max === undefined || max < 1) return text;
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

function width(text: string): number {
  return [...text].length;
}

/** Renders the table as lines joined by `\n`, without a trailing newline. */
export function renderTable(columns: readonly (Column | string)[], rows: readonly (readonly CellInput[])[], style: Style = plainStyle): string {
  const cols: Column[] = columns.map((c) => (typeof c === 'string' ? { header: c } : c));
  const normalized: Cell[][] = rows.map((row) =>
    cols.map((col, i) => {
      const raw = row[i];
      const c: Cell = raw === undefined ? { text: '' } : typeof raw === 'object' ? raw : { text: String(raw) };
      // One line per row, and a tab is one space: a terminal moves a tab to its next tab stop, a
      // width no count here can know, so a tab in a cell (terminalText keeps tabs) would push the
      // rest of its row off the columns.
      return { text: truncate(c.text.replace(/\s*\n\s*/g, ' ').replace(/\t/g, ' '), col.maxWidth), color: c.color };
    }),
  );
  const widths = cols.map((col, i) => Math.max(width(col.header), ...normalized.map((r) => width(r[i]!.text))));
  const line = (cells: Cell[]) =>
    cells
      .map((c, i) => {
        const padded = i === cells.length - 1 ? c.text : c.text + ' '.repeat(widths[i]! - width(c.text));
        if (!c.color) return padded;
        // paint the text only, not its padding
        return style.paint(c.text, c.color) + padded.slice(c.text.length);
      })
      .join(GAP)
      .trimEnd();
  return [line(cols.map((c) => ({ text: c.header.toUpperCase() }))), ...normalized.map(line)].join('\n');
}
