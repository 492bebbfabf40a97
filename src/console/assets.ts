// The console's static files, all from the package (receivers often run without outside access):
// our CSS and JS beside this module's source, uPlot from node_modules.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RequestHandler } from 'express';

const require = createRequire(import.meta.url);
// From src/console/ and from dist/console/ alike: the package ships src/console/assets.
const OWN = fileURLToPath(new URL('../../src/console/assets/', import.meta.url));
const UPLOT = join(dirname(require.resolve('uplot/package.json')), 'dist');

// A Map, not an object literal: `constructor` or `__proto__` must name no file.
const FILES = new Map<string, { path: string; type: string }>([
  ['console.css', { path: join(OWN, 'console.css'), type: 'text/css; charset=utf-8' }],
  ['console.js', { path: join(OWN, 'console.js'), type: 'text/javascript; charset=utf-8' }],
  ['uPlot.min.css', { path: join(UPLOT, 'uPlot.min.css'), type: 'text/css; charset=utf-8' }],
  ['uPlot.iife.min.js', { path: join(UPLOT, 'uPlot.iife.min.js'), type: 'text/javascript; charset=utf-8' }],
]);

/** `GET assets/<name>`: read once, on first use. */
export function serveAssets(): RequestHandler {
  const cache = new Map<string, Buffer>();
  return (req, res, next) => {
    const file = FILES.get(String(req.params.name));
    if (file === undefined) return next();
    let body = cache.get(file.path);
    if (body === undefined) {
      body = readFileSync(file.path);
      cache.set(file.path, body);
    }
    res.type(file.type).send(body);
  };
}
