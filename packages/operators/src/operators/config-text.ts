/**
 * The text of the operator's config file as data: YAML 1.2, so JSON too. Pure.
 *
 * Guarantees:
 * - A file that is not YAML gives one problem, `not YAML or JSON: line L, column C: …`.
 * - A tag or directive YAML 1.2 does not define (`!url`, `%FOO`) is a problem of the file too,
 *   `line L, column C: unresolved tag !url …`, never a process warning: the `yaml` package would
 *   warn on stderr, outside the operator's log, and read the tagged value as if the tag were not
 *   there. The file is the platform team's; what the operator cannot read as written is refused,
 *   like a misspelt key. The core tags (`!!str`, `!!int`, …) and `%YAML` stay fine.
 * - Nothing here is printed or thrown: the caller puts the problems in its own error.
 * @module
 */
import { LineCounter, parseDocument } from 'yaml';
import type { YAMLError } from 'yaml';

export type ConfigText = { ok: true; value: unknown } | { ok: false; problems: string[] };

const UNKNOWN_SYNTAX = '(the operator reads YAML 1.2 and JSON: no custom tags or directives)';

export function readConfigText(text: string): ConfigText {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  const at = (e: YAMLError) => {
    const { line, col } = lineCounter.linePos(e.pos[0]);
    return `line ${line}, column ${col}`;
  };
  const error = doc.errors[0];
  if (error) return { ok: false, problems: [`not YAML or JSON: ${at(error)}: ${error.message}`] };
  if (doc.warnings.length > 0) {
    return { ok: false, problems: doc.warnings.map((w) => `${at(w)}: ${lowerFirst(w.message).replace(/^unresolved tag: /, 'unresolved tag ')} ${UNKNOWN_SYNTAX}`) };
  }
  return { ok: true, value: doc.toJS() };
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
