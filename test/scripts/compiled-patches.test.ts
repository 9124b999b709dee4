import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { addedFiles, compiledPackages, patchFile } from '../../packages/agent-loop-patch/source/compiled.ts'

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
    expect([...added.keys()].sort()).toEqual(pkg.files.map((f) => f.path).sort())
    for (const file of pkg.files) expect(added.get(file.path), file.path).toBe(file.text)
  })

  it.each(packages.map((p) => [p.name, p] as const))('%s: its entry points export every copy, and pnpm keeps them', (_, pkg) => {
    const patch = readFileSync(patchFile(pkg.name, pkg.version), 'utf8')
    for (const [entry, lines] of Object.entries(pkg.entries)) expect(addedLines(patch, entry)).toEqual(expect.arrayContaining([...lines]))
    if (pkg.packed !== undefined) expect(addedLines(patch, 'package.json').map((l) => l.trim())).toContain(`"${pkg.packed}",`)
  })

  it('no patch imports a workspace package, and the loop needs no packageExtensions', () => {
    for (const pkg of ['dsh-agent', 'dsh-agent-loop', 'dsh-compaction-basic', 'dsh-session', 'dsh-session-persistence-jsonl', 'dsh-token-meter']) {
      expect(readFileSync(patchFile(`@deepseek-ai/${pkg}`, '0.1.0-rc.8'), 'utf8')).not.toMatch(/@dsh-seam\//)
    }
    expect(readFileSync(join(ROOT, 'pnpm-workspace.yaml'), 'utf8')).not.toMatch(/packageExtensions/)
  })

  it('the patched dsh-session exports each copy\'s every export as itself (no name shadowed or ambiguous)', async () => {
    const session = packages.find((p) => p.name === '@deepseek-ai/dsh-session')!
    const entry = require.resolve('@deepseek-ai/dsh-session')
    const bundle = (await import(pathToFileURL(entry).href)) as Record<string, unknown>
    let names = 0
    for (const file of session.files.filter((f) => f.path.endsWith('.js'))) {
      const copy = (await import(pathToFileURL(join(dirname(entry), '..', file.path)).href)) as Record<string, unknown>
      for (const [name, value] of Object.entries(copy)) {
        expect(bundle[name], `${file.path}: ${name}`).toBe(value)
        names++
      }
    }
    expect(names, 'the copies export the seam: requestMessagesFromLog, decodeProjection, NodeIndex, ...').toBeGreaterThan(15)
    for (const name of ['requestMessagesFromLog', 'decodeProjection', 'NodeIndex', 'ReplayError']) expect(bundle[name], name).toBeDefined()
    expect(bundle.AgentContextError, 'the host\'s error is the loop\'s').toBeUndefined()
  })

  it('the patched dsh-agent-loop exports the error its host throws, and the host throws that class', async () => {
    const entry = require.resolve('@deepseek-ai/dsh-agent-loop')
    const bundle = (await import(pathToFileURL(entry).href)) as Record<string, unknown>
    const normalize = (await import(pathToFileURL(join(dirname(entry), 'context-normalize.js')).href)) as Record<string, unknown>
    expect(typeof bundle.AgentContextError).toBe('function')
    expect(bundle.AgentContextError).toBe(normalize.AgentContextError)
    expect(Object.keys(bundle).filter((name) => name in normalize)).toEqual(['AgentContextError'])
  })
})
