/**
 * Where the `dsh-context` executable is, for programs that run it as a child process.
 * @module @dsh-context/dsh-context-cli/bin
 */

import { fileURLToPath } from 'node:url'

/** Absolute path of `bin/dsh-context.js`; it runs the built `lib/`. The same from `src/` and from `lib/`. */
export const CLI_BIN = fileURLToPath(new URL('../bin/dsh-context.js', import.meta.url))
