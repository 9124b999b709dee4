#!/usr/bin/env node
// Copies the seam's patch files from their one home, the workspace's patches/, into this package's patches/ (ignored
// by git, listed in `files`): `dsh-seam setup` installs them from there. Run by `build` and `prepack`; a copy that
// already matches is left alone, and a patch no longer in the workspace is removed from the copy.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const from = fileURLToPath(new URL('../../../patches/', import.meta.url))
const to = fileURLToPath(new URL('../patches/', import.meta.url))
const patches = readdirSync(from).filter(file => file.endsWith('.patch')).sort()
if (patches.length === 0) throw new Error(`copy-patches: no .patch files in ${from}`)
mkdirSync(to, { recursive: true })
for (const file of readdirSync(to)) if (!patches.includes(file)) rmSync(join(to, file), { recursive: true, force: true })
let copied = 0
for (const file of patches) {
  const content = readFileSync(join(from, file))
  if (existsSync(join(to, file)) && readFileSync(join(to, file)).equals(content)) continue
  writeFileSync(join(to, file), content)
  copied++
}
if (copied > 0) process.stderr.write(`copy-patches: ${copied} of ${patches.length} patch files copied into ${to}\n`)
