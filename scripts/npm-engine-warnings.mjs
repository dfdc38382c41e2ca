// What `npm ci` says about `engines` when the Node.js that runs npm is older than the project's:
// npm warns with a five-line EBADENGINE block per package (ours say ">=24", so on a system
// Node.js 20 a fresh clone's `npm ci` prints eight of them), although nothing will run on that
// Node.js: `npm ci` installs Node.js 24 (the `node` dev dependency) and every entry point runs on
// it. This filter drops those blocks from npm's stderr and says once, at the end, what they were
// and why they do not matter; every other line passes unchanged, in order. Plain JavaScript,
// because it runs inside scripts/bootstrap.mjs on whatever Node.js is there.

/**
 * A line filter: `push(text)` with npm's stderr as it comes, `end()` when npm has exited.
 * `write` receives the lines to show (each ending in "\n").
 */
export function engineWarningFilter(write, nodeVersion = process.version) {
  let partial = '';
  const packages = [];
  const line = (text) => {
    if (!/^npm (warn|WARN) EBADENGINE\b/.test(text)) return write(`${text}\n`);
    const named = /package: '([^']+)'/.exec(text);
    if (named && !packages.includes(named[1])) packages.push(named[1]);
  };
  return {
    push(chunk) {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const l of lines) line(l);
    },
    end() {
      if (partial) line(partial);
      partial = '';
      if (packages.length === 0) return;
      const names = packages.map((p) => p.replace(/@[^@]+$/, '')).join(', ');
      write(
        `converge: npm runs on Node.js ${nodeVersion}, so it warned (EBADENGINE) that ${packages.length} package${packages.length === 1 ? '' : 's'} ` +
          `need a newer Node.js (${names}). Expected: they run on the Node.js 24 that npm ci installs (node_modules/.bin/node), not on this one.\n`,
      );
    },
  };
}
