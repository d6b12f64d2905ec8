import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The installed package's directory. This module runs from dist/ either as itself or inside one
 * of the bundles (dist/index.js, dist/cli.cjs), one level below the root in both cases.
 */
export const PACKAGE_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
