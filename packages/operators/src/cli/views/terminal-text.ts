/**
 * Text from the cluster made safe to print on a terminal. Names, messages, reasons, Event notes
 * and a vendor's words reach `converge status`, `explain` and `dev` from anyone who can write an
 * object, its status or an Event; printed raw, an escape sequence among them would drive the
 * reader's terminal (set its title, write its clipboard through OSC 52, hide or repaint lines),
 * and a bidi override would show text in another order than it reads.
 *
 * Guarantees: `terminalText` leaves no C0 control but tab and newline, no DEL, no C1 control and
 * no bidi embedding, override or isolate; each one becomes visible text (`\u001b`), as kubectl
 * shows ESC as `^[`. Text without them comes back unchanged, and so does already-safe text (it
 * is idempotent). `terminalSafe` does it for every string in a plain value (arrays and plain
 * objects are copied; anything else is kept as it is).
 *
 * Only the text views use it: `-o json` and `-o yaml` stay exact, their encoders escape.
 * @module
 */

// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** `text` with every terminal control and bidi control shown as `\uXXXX`. */
export function terminalText(text: string): string {
  return text.replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** `value` with `terminalText` applied to every string in it (arrays and plain objects copied). */
export function terminalSafe<T>(value: T): T {
  return safe(value) as T;
}

function safe(value: unknown): unknown {
  if (typeof value === 'string') return terminalText(value);
  if (Array.isArray(value)) return value.map(safe);
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = safe(v);
    return out;
  }
  return value;
}
