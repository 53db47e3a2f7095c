// Bundles the extension into dist/extension.js (one file, so the .vsix needs
// no node_modules). `--production` minifies; `--watch` rebuilds on change.
import * as esbuild from 'esbuild';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

const options = {
  entryPoints: ['extension/src/extension.ts'],
  bundle: true,
  outfile: 'dist/extension.js',
  platform: 'node',
  format: 'cjs',
  // VS Code 1.93 runs extensions on Node 20.
  target: 'node20',
  external: ['vscode'],
  sourcemap: !production,
  minify: production,
  // Keep class and function names readable in stack traces even when minified.
  keepNames: true,
  logLevel: 'info',
};

if (watch) {
  const ctx = await esbuild.context(options);
  await ctx.watch();
} else {
  await esbuild.build(options);
}
