/**
 * The Node.js version Converge needs, said the same way everywhere: bin/converge.js checks it in
 * plain JavaScript (it must run on any Node.js), and `main.ts` checks it again for a Node.js that
 * can strip TypeScript types but is older than 24 (22.18+, 23.6+), which would otherwise fail
 * later on an API it lacks. Node.js 20 cannot load `main.ts` at all (ERR_UNKNOWN_FILE_EXTENSION,
 * before any of our code runs); the README's troubleshooting section says what that means.
 * @module
 */

export const MIN_NODE_MAJOR = 24;

/** The message for a Node.js older than 24 (`version` as `process.versions.node`), or undefined. */
export function nodeVersionProblem(version: string = process.versions.node): string | undefined {
  const major = Number(version.split('.')[0]);
  if (major >= MIN_NODE_MAJOR) return undefined;
  return (
    `Converge needs Node.js >= ${MIN_NODE_MAJOR} (this is v${version}). ` +
    'In the repository, `npm start` and `npm test` install it and run on it (node_modules/.bin/node); elsewhere install Node.js 24 LTS.\n'
  );
}
