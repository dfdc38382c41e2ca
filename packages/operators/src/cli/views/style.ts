/**
 * Colours for terminal output: plain ANSI SGR codes, enabled only on a TTY and never when
 * `NO_COLOR` is set (https://no-color.org) or `TERM=dumb`. `FORCE_COLOR` (non-empty, not `0`)
 * turns them on anyway, as in most Node tools. When disabled every function returns its input.
 * @module
 */

export type Color = 'green' | 'red' | 'yellow' | 'cyan' | 'bold' | 'dim';

export interface Style {
  readonly enabled: boolean;
  paint(text: string, color: Color | undefined): string;
}

const CODES: Record<Color, [number, number]> = {
  green: [32, 39],
  red: [31, 39],
  yellow: [33, 39],
  cyan: [36, 39],
  bold: [1, 22],
  dim: [2, 22],
};

/** Whether output to `stream` should carry colours. */
export function colorEnabled(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '' && env.FORCE_COLOR !== '0') return true;
  if (env.TERM === 'dumb') return false;
  return stream.isTTY === true;
}

export function createStyle(enabled: boolean): Style {
  return {
    enabled,
    paint(text, color) {
      if (!enabled || !color || text === '') return text;
      const [open, close] = CODES[color];
      return `\u001b[${open}m${text}\u001b[${close}m`;
    },
  };
}

export const plainStyle: Style = createStyle(false);

/** Removes ANSI SGR sequences (for measuring what a person sees). */
export function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\u001b\[[0-9;]*m/g, '');
}

/** The usual colour of a condition status: True green, False red, Unknown yellow. */
export function conditionColor(status: string | undefined | null, normalTrue = true): Color | undefined {
  if (status === 'True') return normalTrue ? 'green' : 'red';
  if (status === 'False') return normalTrue ? 'red' : 'green';
  if (status === 'Unknown') return 'yellow';
  return undefined;
}
