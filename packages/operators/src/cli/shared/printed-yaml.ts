/**
 * How every YAML document the CLI prints or writes is made: long lines unfolded, and every string
 * that some reader would take for something else double-quoted. kubectl (sigs.k8s.io/yaml) reads
 * YAML 1.1 — `yes`, `no`, `on`, `off`, `y`, `n` are booleans there, `1_000` a number — and also
 * takes `0o14` for 12, which YAML 1.1 does not; the `yaml` package at its default reads 1.2. A
 * namespace or name spelled so (each a valid DNS label) printed plain would come back as something
 * else, so a string is quoted when either reading of it is not that string.
 *
 * Takes the `yaml` module as an argument: the commands that print YAML only for `-o yaml` load it
 * then, not at start-up (issue 17).
 * @module
 */
import type * as YamlModule from 'yaml';

type Yaml = typeof YamlModule;

export function printYaml(yaml: Yaml, value: unknown): string {
  const doc = new yaml.Document(value, { version: '1.1' });
  yaml.visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value === 'string' && readsAsOtherThanText(yaml, node.value)) node.type = 'QUOTE_DOUBLE';
    },
  });
  return doc.toString({ lineWidth: 0 });
}

/** Numbers, booleans, nulls and timestamps are short and on one line; anything else prints as text. */
const LONGEST_NON_TEXT = 64;

/** Whether `text`, written plain, is read by YAML 1.1 or 1.2 as a number, boolean, null or timestamp. */
function readsAsOtherThanText(yaml: Yaml, text: string): boolean {
  if (text.length > LONGEST_NON_TEXT || text.includes('\n')) return false;
  for (const version of ['1.1', '1.2'] as const) {
    let read: unknown;
    try {
      // `logLevel: 'error'`: a value that starts like a directive (`%…`) or a tag (`!…`) is only
      // being tested here; the yaml package would otherwise emit a process warning for it, which
      // Node prints on the user's stderr (and the dashboard's log).
      read = yaml.parse(text, { version, logLevel: 'error' });
    } catch {
      continue; // not a plain scalar at all: the printer quotes it anyway
    }
    if (read instanceof Date || read === null || typeof read === 'number' || typeof read === 'boolean' || typeof read === 'bigint') return true;
  }
  return false;
}
