#!/usr/bin/env node
// Bundle the plugins the managed-mode run inserts into a DSH checkout's headless profile, with the checkout's own
// bundler (rolldown, through its tsdown): tavern-host (AgentTavern), AgentTavern's compaction curator and the scripted
// user. Every @deepseek-ai/* import stays external and resolves, through <out>/node_modules symlinks, to the
// checkout's workspace packages: the plugins share the CLI's module instances (one dsh-session, one cordis).
// Usage: bundle-plugins.mjs <checkout> <out-dir>
import { execFileSync } from 'node:child_process'
import { mkdirSync, realpathSync, rmSync, symlinkSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const [checkout, out] = process.argv.slice(2).map(p => p && resolve(p))
if (checkout === undefined || out === undefined) {
  console.error('usage: bundle-plugins.mjs <checkout> <out-dir>')
  process.exit(2)
}
const here = dirname(fileURLToPath(import.meta.url))
const root = resolve(here, '../..')
const tsdown = realpathSync(join(checkout, 'node_modules/tsdown'))
const { rolldown } = await import(pathToFileURL(createRequire(join(tsdown, 'package.json')).resolve('rolldown')).href)

rmSync(out, { recursive: true, force: true })
const build = await rolldown({
  input: { 'agent-tavern-host': join(here, 'tavern-host.mjs'), 'agent-tavern-compaction': join(here, 'tavern-compaction.mjs'), 'scripted-user': join(here, '../consumer-smoke/scripted-user/index.mjs') },
  platform: 'node',
  external: id => /^@deepseek-ai\//.test(id),
  // The workspace packages are side-effect free: the bundle holds only the modules whose bindings it uses.
  treeshake: { moduleSideEffects: id => !id.startsWith(`${root}/packages/`) },
})
const { output } = await build.write({ dir: out, format: 'esm', entryFileNames: '[name].mjs', chunkFileNames: '[name]-[hash].mjs' })
await build.close()

const packageOf = id => id.split('/').slice(0, 2).join('/')
const externals = [...new Set(output.flatMap(chunk => [...(chunk.imports ?? []), ...(chunk.dynamicImports ?? [])]).filter(id => id.startsWith('@deepseek-ai/')).map(packageOf))].sort()
const projects = JSON.parse(execFileSync('pnpm', ['ls', '-r', '--depth', '-1', '--json'], { cwd: checkout, encoding: 'utf8' }))
const dirOf = new Map(projects.map(p => [p.name, p.path]))
for (const name of externals) {
  const target = dirOf.get(name)
  if (target === undefined) throw new Error(`bundle-plugins: the plugins import ${name}, which is not a workspace package of ${checkout}`)
  mkdirSync(join(out, 'node_modules/@deepseek-ai'), { recursive: true })
  symlinkSync(target, join(out, 'node_modules', name))
}
console.log(`bundle-plugins: ${output.filter(c => c.type === 'chunk').map(c => c.fileName).join(', ')} -> ${out}; linked ${externals.join(', ')}`)
