/**
 * Where the `dsh-seam` executable is, for programs that run it as a child process.
 * @module @dsh-seam/cli/bin
 */

import { fileURLToPath } from 'node:url'

/** Absolute path of `bin/dsh-seam.js`; it runs the built `lib/`. The same from `src/` and from `lib/`. */
export const CLI_BIN = fileURLToPath(new URL('../bin/dsh-seam.js', import.meta.url))
