// Bundles the console (src/) into dist/: console.js (one ES module, minified), console.css
// and index.html. dist/ is committed, so building Herald needs no npm; tools/test rebuilds it
// into a scratch folder and checks that the committed copy is what the sources make.
//
//   npm run build                 # writes dist/
//   node build.mjs --out DIR      # writes DIR instead (the freshness check)
import * as esbuild from 'esbuild';
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const at = process.argv.indexOf('--out');
const out = at >= 0 ? process.argv[at + 1] : join(here, 'dist');
mkdirSync(out, { recursive: true });

await esbuild.build({
  entryPoints: [join(here, 'src/main.js'), join(here, 'src/console.css')],
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2020'],
  legalComments: 'none',
  charset: 'utf8',
  outdir: out,
  entryNames: '[name]',
  logLevel: 'warning',
});
copyFileSync(join(here, 'src/index.html'), join(out, 'index.html'));
