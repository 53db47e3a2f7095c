/**
 * Paths in the repository for tests that read its files (methods.py, package.json).
 * Tests run from compiled output (out/test/), so the root is found by walking up.
 */

import { existsSync } from 'node:fs';
import * as path from 'node:path';

export function repoRoot(): string {
  let dir = __dirname;
  for (;;) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'extension'))) {
      return dir;
    }
    const up = path.dirname(dir);
    if (up === dir) {
      throw new Error(`no repository root above ${__dirname}`);
    }
    dir = up;
  }
}
