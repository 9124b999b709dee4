import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { addedFiles, compiledPackages, patchFile } from '../../packages/agent-loop-patch/source/compiled.ts'
import { LOOP, PUBLIC, SESSION } from '../../packages/agent-loop-patch/source/generate.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const packages = compiledPackages()
const require = createRequire(join(ROOT, 'package.json'))

/** Lines a patch adds to one file. */
function addedLines(patch: string, path: string): string[] {
  const block = patch.split(/^(?=diff --git )/m).find((b) => b.startsWith(`diff --git a/${path} `)) ?? ''
  return block.split('\n').filter((line) => line.startsWith('+') && !line.startsWith('+++')).map((line) => line.slice(1))
}

describe('the compiled patches carry the seam (drift check: `node packages/agent-loop-patch/source/compiled.ts write` rebuilds them)', () => {
  it.each(packages.map((p) => [p.name, p] as const))('%s: every copy the workspace builds, byte for byte, and no other new file', (_, pkg) => {
    const added = addedFiles(readFileSync(patchFile(pkg.name, pkg.version), 'utf8'))
    expect([...added.keys()].sort()).toEqual([...pkg.files.map((f) => f.path), ...pkg.hand].sort())
    for (const file of pkg.files) expect(added.get(file.path), file.path).toBe(file.text)
  })

  it.each(packages.map((p) => [p.name, p] as const))('%s: its entry points export every copy, and pnpm keeps them', (_, pkg) => {
    const patch = readFileSync(patchFile(pkg.name, pkg.version), 'utf8')
    for (const [entry, lines] of Object.entries(pkg.entries)) expect(addedLines(patch, entry)).toEqual(expect.arrayContaining([...lines]))
    if (pkg.packed !== undefined) expect(addedLines(patch, 'package.json').map((l) => l.trim())).toContain(`"${pkg.packed}",`)
  })

  it('no patch imports a workspace package, and the loop needs no packageExtensions', () => {
    for (const pkg of ['dsh-agent', 'dsh-agent-loop', 'dsh-compaction-basic', 'dsh-session', 'dsh-token-meter']) {
      expect(readFileSync(patchFile(`@deepseek-ai/${pkg}`, '0.1.0-rc.8'), 'utf8')).not.toMatch(/@dsh-seam\//)
    }
    expect(readFileSync(join(ROOT, 'pnpm-workspace.yaml'), 'utf8')).not.toMatch(/packageExtensions/)
  })

  it.each([['@deepseek-ai/dsh-session', SESSION], ['@deepseek-ai/dsh-agent-loop', LOOP]])('%s\'s entry adds exactly the seam\'s public names to stock\'s, each a copy\'s own value', async (name, folder) => {
    const compiled = packages.find((p) => p.name === name)!
    const entry = require.resolve(name)
    const bundle = (await import(pathToFileURL(entry).href)) as Record<string, unknown>
    const stock = (await import(pathToFileURL(join(ROOT, 'stock/node_modules', name, 'lib/index.js')).href)) as Record<string, unknown>
    const added = Object.keys(bundle).filter((key) => !(key in stock)).sort()
    const wanted = Object.values(PUBLIC[folder]!).flatMap((names) => names.values).sort()
    expect(added).toEqual(wanted)
    const copies: Record<string, unknown>[] = []
    for (const file of compiled.files.filter((f) => f.path.endsWith('.js'))) {
      copies.push((await import(pathToFileURL(join(dirname(require.resolve(`${name}/package.json`)), file.path)).href)) as Record<string, unknown>)
    }
    for (const key of added) expect(copies.some((copy) => copy[key] === bundle[key]), key).toBe(true)
  })

  it('the patched packages\' declarations export the same names, types included', () => {
    for (const [name, folder] of [['@deepseek-ai/dsh-session', SESSION], ['@deepseek-ai/dsh-agent-loop', LOOP]] as const) {
      const declared = readFileSync(join(dirname(require.resolve(`${name}/package.json`)), 'lib/types/index.d.ts'), 'utf8')
      for (const names of Object.values(PUBLIC[folder]!)) {
        for (const value of names.values) expect(declared, `${name}: ${value}`).toMatch(new RegExp(`export \\{[^}]*\\b${value}\\b`))
        for (const type of names.types) expect(declared, `${name}: ${type}`).toMatch(new RegExp(`export \\{[^}]*\\btype ${type}\\b`))
      }
    }
  })

  it('dsh-compaction-basic\'s root exports what stock\'s does; its `./projection` entry exports the engine and its config, the copies\' own values', async () => {
    const root = (await import('@deepseek-ai/dsh-compaction-basic')) as Record<string, unknown>
    const stock = (await import(pathToFileURL(join(ROOT, 'stock/node_modules/@deepseek-ai/dsh-compaction-basic/lib/index.js')).href)) as Record<string, unknown>
    expect(Object.keys(root).sort()).toEqual(Object.keys(stock).sort())
    const projection = (await import('@deepseek-ai/dsh-compaction-basic/projection')) as Record<string, unknown>
    expect(Object.keys(projection).sort()).toEqual(['ProjectionAwareCompactionEngine', 'ProjectionCompactionConfig', 'default'])
    const folder = dirname(require.resolve('@deepseek-ai/dsh-compaction-basic/package.json'))
    const engine = (await import(pathToFileURL(join(folder, 'lib/projection-engine.js')).href)) as Record<string, unknown>
    expect(projection.default).toBe(engine.ProjectionAwareCompactionEngine)
    expect(projection.ProjectionAwareCompactionEngine).toBe(engine.ProjectionAwareCompactionEngine)
    // The engine subclasses the root's own class (one module instance), so the basic engine's warn-once policy holds.
    expect(Object.getPrototypeOf(engine.ProjectionAwareCompactionEngine)).toBe(root.BasicCompactionEngine)
    const declared = readFileSync(join(folder, 'lib/types/index.d.ts'), 'utf8')
    const exported = declared.split('\n').filter((line) => line.startsWith('export ')).join('\n')
    expect(exported).not.toMatch(/conversationTarget|resolveTargetPolicy|targetCompactSpec|projection/i)
  })
})
