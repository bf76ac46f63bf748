// Lets @modelcontextprotocol/conformance run on Node 20 (0.1.16 here, 0.2.0-alpha.12 in ../conformance_next):
// it imports `globSync` from `fs`, which Node added in 22. Load it first:
// `node --import ./node20-globsync.mjs <conformance entry> ...`.
// On Node 22 and later it does nothing. On Node 20 it registers a loader hook that hands the suite's
// own modules (and only them) `node:fs` plus a globSync that knows the one pattern the suite uses,
// "**/<file name>" (it looks for checks.json under a results folder), and plain relative paths.
import * as fs from 'node:fs';
import { register } from 'node:module';

const FS_WITH_GLOBSYNC = `
import fs from 'node:fs';
import path from 'node:path';
export * from 'node:fs';
export default fs;
export function globSync(pattern, options = {}) {
  const cwd = options.cwd ?? process.cwd();
  const anywhere = /^\\*\\*\\/([^*/]+)$/.exec(pattern);
  if (!anywhere) {
    if (/[*?[{]/.test(pattern)) throw new Error('node20-globsync: unsupported glob pattern ' + pattern);
    return fs.existsSync(path.join(cwd, pattern)) ? [pattern] : [];
  }
  if (!fs.existsSync(cwd)) return [];
  return fs.readdirSync(cwd, { recursive: true }).map(String).filter((found) => path.basename(found) === anywhere[1]);
}
`;

const HOOKS = `
const SHIM = ${JSON.stringify(`data:text/javascript,${encodeURIComponent(FS_WITH_GLOBSYNC)}`)};
export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL?.includes('/@modelcontextprotocol/conformance/')) {
    return { url: SHIM, shortCircuit: true };
  }
  return next(specifier, context);
}
`;

if (typeof fs.globSync !== 'function') {
  register(`data:text/javascript,${encodeURIComponent(HOOKS)}`);
}
