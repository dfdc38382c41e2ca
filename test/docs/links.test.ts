/**
 * Every relative link in the hand-written Markdown (README, docs/, ADRs, package and example
 * READMEs) points at a file of this repository, and every `#anchor` at a heading of the file it
 * names, as GitHub renders it. The README's performance row links into docs/benchmarks.md by
 * anchor; a heading renamed there would otherwise break the link silently. Generated Markdown
 * (docs/api, bench reports) is left to its generators.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

function markdownFiles(): string[] {
  const files = ['README.md'];
  const walk = (dir: string, skip: (path: string) => boolean) => {
    for (const name of readdirSync(join(root, dir))) {
      const path = join(dir, name);
      if (skip(path)) continue;
      if (statSync(join(root, path)).isDirectory()) walk(path, skip);
      else if (name.endsWith('.md')) files.push(path);
    }
  };
  walk('docs', (p) => p === join('docs', 'api'));
  for (const dir of ['packages', 'examples']) walk(dir, (p) => p.endsWith('node_modules') || p.endsWith('dist'));
  return files;
}

/** Markdown without fenced code blocks and inline code, where link-like text is not a link. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

/** Anchors GitHub gives the headings of a Markdown file (github-slugger's rules, duplicates numbered). */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of text.replace(/^```[\s\S]*?^```/gm, '').matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = m[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}\p{Pc}\- ]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

test('relative links in the hand-written Markdown point at files and headings that exist', () => {
  const broken: string[] = [];
  const files = markdownFiles();
  assert.ok(files.length > 20, `found only ${files.length} Markdown files`);
  for (const file of files) {
    const text = readFileSync(join(root, file), 'utf8');
    for (const m of prose(text).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, …
      const [path = '', anchor] = target.split('#');
      const resolved = path ? resolve(dirname(join(root, file)), decodeURIComponent(path)) : join(root, file);
      if (!existsSync(resolved)) {
        broken.push(`${file}: ${target} (no ${relative(root, resolved)})`);
        continue;
      }
      if (anchor && resolved.endsWith('.md') && !anchors(readFileSync(resolved, 'utf8')).has(anchor)) {
        broken.push(`${file}: ${target} (no heading #${anchor} in ${relative(root, resolved)})`);
      }
    }
  }
  assert.deepEqual(broken, []);
});

test('anchors follow GitHub: lower case, punctuation dropped, spaces to hyphens, duplicates numbered', () => {
  const a = anchors('# Issue 17: before and after\n## 2. Churn (`churn`)\n### Where goal 1 stands\n## Notes\n## Notes\n```\n# not a heading\n```\n');
  assert.deepEqual([...a], ['issue-17-before-and-after', '2-churn-churn', 'where-goal-1-stands', 'notes', 'notes-1']);
});
