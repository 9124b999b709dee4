/**
 * `dsh-seam setup` against the real things: the patch-package conversion of every workspace patch applies, with
 * `git apply` and with `patch -p1` from an app's root, to the unmodified rc.8 package npm installed under `stock/`, and
 * gives exactly the files the pnpm patch gives applied inside the package; the DSH set covers every DSH package of the
 * stock install; the package ships the workspace's patches; and the built executable, run as a plugin author runs it:
 * `--check` exit codes, a second run that changes no byte, refusals on one line with nothing written.
 */

import { execFileSync, spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { CLI_BIN, DSH_PACKAGES, DSH_VERSION, EXIT, isDshPackage, parsePnpmPatchName, SHIPPED_PATCHES, toPatchPackage } from '@dsh-seam/cli'
import { afterAll, describe, expect, it } from 'vitest'

const PATCHES = fileURLToPath(new URL('../../patches/', import.meta.url))
const STOCK = fileURLToPath(new URL('../../stock/', import.meta.url))
const PATCH_FILES = readdirSync(PATCHES).filter(file => file.endsWith('.patch')).sort()

const root = mkdtempSync(join(tmpdir(), 'dsh-seam-setup-cli-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

/** Every file under a folder with its bytes. */
function tree(dir: string, prefix = ''): Record<string, string> {
  const files: Record<string, string> = {}
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) Object.assign(files, tree(path, `${prefix}${name}/`))
    else files[`${prefix}${name}`] = readFileSync(path).toString('base64')
  }
  return files
}

/** Run a patch tool in a folder that is not inside a git repository (so `git apply` works as a plain patch tool). */
function apply(cwd: string, command: string, args: readonly string[]): string {
  return execFileSync(command, args, { cwd, encoding: 'utf8', stdio: 'pipe', env: { ...process.env, GIT_CEILING_DIRECTORIES: dirname(cwd) } })
}

describe('the patch-package conversion on the unmodified rc.8 packages', () => {
  it.each(PATCH_FILES)('%s: git apply and patch -p1 from the app root give what the pnpm patch gives in the package', file => {
    const { name, version } = parsePnpmPatchName(file)!
    const stock = join(STOCK, 'node_modules', name)
    expect(JSON.parse(readFileSync(join(stock, 'package.json'), 'utf8'))).toMatchObject({ name, version })
    const pnpmPatch = readFileSync(join(PATCHES, file), 'utf8')
    const converted = toPatchPackage(name, pnpmPatch)
    const work = mkdtempSync(join(root, 'apply-'))
    writeFileSync(join(work, 'pnpm.patch'), pnpmPatch)
    writeFileSync(join(work, 'patch-package.patch'), converted)

    const inPackage = join(work, 'package')
    cpSync(stock, inPackage, { recursive: true })
    // Exactly, as DSH's suites on the compiled packages (scripts/dsh-suites.mjs) apply it: no fuzz, no offset.
    expect(apply(inPackage, 'patch', ['-p1', '--forward', '-i', join(work, 'pnpm.patch')])).not.toMatch(/FAILED|fuzz|offset/i)
    const expected = tree(inPackage)
    expect(expected).not.toEqual(tree(stock))

    for (const [tool, args] of [['git', ['apply', join(work, 'patch-package.patch')]], ['patch', ['-p1', '--quiet', '--forward', '-i', join(work, 'patch-package.patch')]]] as const) {
      const app = join(work, `app-${tool}`)
      cpSync(stock, join(app, 'node_modules', name), { recursive: true })
      apply(app, tool, args)
      expect(tree(join(app, 'node_modules', name))).toEqual(expected)
      expect(readdirSync(app)).toEqual(['node_modules'])
      apply(app, 'git', ['apply', '--reverse', '--check', join(work, 'patch-package.patch')])
    }
  })

  it('reads hunks by their line counts: a hunk line that looks like a header is not rewritten, /dev/null stays', () => {
    const patch = [
      'diff --git a/lib/notes.md b/lib/notes.md',
      'index 1111111..2222222 100644',
      '--- a/lib/notes.md',
      '+++ b/lib/notes.md',
      '@@ -1,3 +1,3 @@',
      ' title',
      '--- a/lib/old.md',
      '+++ b/lib/new.md',
      ' end',
      'diff --git a/lib/added.js b/lib/added.js',
      'new file mode 100644',
      'index 0000000..3333333',
      '--- /dev/null',
      '+++ b/lib/added.js',
      '@@ -0,0 +1 @@',
      '+export const added = 1',
      '',
    ].join('\n')
    const converted = toPatchPackage('@deepseek-ai/dsh-x', patch).split('\n')
    expect(converted.slice(0, 4)).toEqual([
      'diff --git a/node_modules/@deepseek-ai/dsh-x/lib/notes.md b/node_modules/@deepseek-ai/dsh-x/lib/notes.md',
      'index 1111111..2222222 100644',
      '--- a/node_modules/@deepseek-ai/dsh-x/lib/notes.md',
      '+++ b/node_modules/@deepseek-ai/dsh-x/lib/notes.md',
    ])
    expect(converted.slice(4, 9)).toEqual(patch.split('\n').slice(4, 9))
    expect(converted.slice(12, 14)).toEqual(['--- /dev/null', '+++ b/node_modules/@deepseek-ai/dsh-x/lib/added.js'])
    const app = mkdtempSync(join(root, 'synthetic-'))
    mkdirSync(join(app, 'node_modules/@deepseek-ai/dsh-x/lib'), { recursive: true })
    writeFileSync(join(app, 'node_modules/@deepseek-ai/dsh-x/lib/notes.md'), 'title\n-- a/lib/old.md\nend\n')
    writeFileSync(join(app, 'converted.patch'), converted.join('\n'))
    apply(app, 'git', ['apply', 'converted.patch'])
    expect(readFileSync(join(app, 'node_modules/@deepseek-ai/dsh-x/lib/notes.md'), 'utf8')).toBe('title\n++ b/lib/new.md\nend\n')
    expect(readFileSync(join(app, 'node_modules/@deepseek-ai/dsh-x/lib/added.js'), 'utf8')).toBe('export const added = 1\n')
  })
})

describe('the DSH set and the shipped patches', () => {
  it('lists every DSH package of the stock rc.8 install and every patched package, sorted, once', () => {
    const lock = JSON.parse(readFileSync(join(STOCK, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> }
    const stock = Object.entries(lock.packages).map(([path, { version }]) => [path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length), version] as const).filter(([name]) => isDshPackage(name))
    expect(stock.length).toBeGreaterThan(20)
    for (const [name, version] of stock) {
      expect(version).toBe(DSH_VERSION)
      expect(DSH_PACKAGES).toContain(name)
    }
    for (const file of PATCH_FILES) expect(DSH_PACKAGES).toContain(parsePnpmPatchName(file)!.name)
    expect([...DSH_PACKAGES].sort()).toEqual(DSH_PACKAGES)
    expect(new Set(DSH_PACKAGES).size).toBe(DSH_PACKAGES.length)
    expect(DSH_PACKAGES.every(isDshPackage)).toBe(true)
  })

  it('@dsh-seam/cli ships the workspace\'s patches, byte for byte, in its patches/ folder', () => {
    expect(SHIPPED_PATCHES).toBe(fileURLToPath(new URL('../../packages/seam-cli/patches', import.meta.url)))
    expect(tree(SHIPPED_PATCHES)).toEqual(tree(PATCHES))
    const manifest = JSON.parse(readFileSync(new URL('../../packages/seam-cli/package.json', import.meta.url), 'utf8')) as { files: string[]; scripts: Record<string, string> }
    expect(manifest.files).toContain('patches')
    for (const script of ['build', 'prepack']) expect(manifest.scripts[script]).toContain('node scripts/copy-patches.mjs')
  })
})

describe('the executable', () => {
  /** Run `dsh-seam` in a folder, with no invoking package manager in the environment. */
  function dshSeam(cwd: string, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
    const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('npm_')))
    return spawnSync(process.execPath, [CLI_BIN, ...args], { cwd, env, encoding: 'utf8' })
  }

  function app(manifest: string): string {
    const dir = mkdtempSync(join(root, 'app-'))
    writeFileSync(join(dir, 'package.json'), manifest)
    return dir
  }

  const FRESH = `${JSON.stringify({ name: 'app', private: true, packageManager: 'pnpm@10.34.9', dependencies: { '@deepseek-ai/dsh-agent-loop': DSH_VERSION, '@deepseek-ai/dsh-session': `^${DSH_VERSION}` } }, null, 2)}\n`

  it('--check exits 1 and writes nothing; setup writes and names the next command; then both say it is set up, and no byte changes', () => {
    const dir = app(FRESH)
    const check = dshSeam(dir, 'setup', '--check')
    expect(check).toMatchObject({ status: EXIT.outdated, stderr: '' })
    expect(check.stdout).toMatch(new RegExp(`^dsh-seam setup --check: ${dir} is not set up for pnpm 10 \\(10\\.34\\.9, packageManager pnpm@10\\.34\\.9\\): setup would write ${PATCH_FILES.length + 1} files\\nwould write package.json\\n {2}dependencies: @deepseek-ai/dsh-session \\^0\\.1\\.0-rc\\.8 -> 0\\.1\\.0-rc\\.8\\n`))
    expect(check.stdout.endsWith('run dsh-seam setup without --check to write them, then pnpm install\n')).toBe(true)
    expect(tree(dir)).toEqual({ 'package.json': Buffer.from(FRESH).toString('base64') })

    const run = dshSeam(dir, 'setup')
    expect(run).toMatchObject({ status: EXIT.ok, stderr: '' })
    expect(run.stdout.split('\n').filter(line => line.startsWith('wrote '))).toEqual(['wrote package.json', ...PATCH_FILES.map(file => `wrote patches/${file} (new)`)])
    expect(run.stdout).toContain('\n  pnpm.onlyBuiltDependencies: added koffi (the native dependency of @deepseek-ai/dsh-session-persistence-jsonl)\n')
    expect(run.stdout.endsWith('\nnext: pnpm install\n')).toBe(true)
    const written = tree(dir)

    expect(dshSeam(dir, 'setup', '--check')).toMatchObject({ status: EXIT.ok, stdout: `dsh-seam setup --check: ${dir} is set up for pnpm 10 (10.34.9, packageManager pnpm@10.34.9)\n` })
    expect(dshSeam(root, 'setup', dir)).toMatchObject({ status: EXIT.ok, stdout: `dsh-seam setup: ${dir} is already set up for pnpm 10 (10.34.9, packageManager pnpm@10.34.9): nothing written\n`, stderr: '' })
    expect(tree(dir)).toEqual(written)
  })

  it.each([
    ['a DSH package at another version', FRESH.replace(`"^${DSH_VERSION}"`, '"0.1.1-rc.2"'), `dsh-seam setup: @deepseek-ai/dsh-session is "0.1.1-rc.2" in dependencies, but the seam's patches are for @deepseek-ai/dsh-session@${DSH_VERSION} exactly; change it to ${DSH_VERSION} (or a range that admits it) and run setup again [wrong-version]\n`],
    ['a DSH package at latest', FRESH.replace(`"^${DSH_VERSION}"`, '"latest"'), /^dsh-seam setup: @deepseek-ai\/dsh-session is "latest" in dependencies, .* \[wrong-version\]\n$/],
    ['a malformed package.json', FRESH.slice(0, 40), /^dsh-seam setup: \/.*\/package.json is not JSON: .* \[malformed-package-json\]\n$/],
  ])('%s: exit 2, one line, nothing written', (_, manifest, line) => {
    const dir = app(manifest)
    const run = dshSeam(dir, 'setup')
    expect(run).toMatchObject({ status: EXIT.unreadable, stdout: '' })
    expect(run.stderr).toMatch(line)
    expect(run.stderr.split('\n')).toHaveLength(2)
    expect(readdirSync(dir)).toEqual(['package.json'])
    expect(readFileSync(join(dir, 'package.json'), 'utf8')).toBe(manifest)
  })

  it('a folder without package.json: exit 2, one line', () => {
    const dir = mkdtempSync(join(root, 'empty-'))
    expect(dshSeam(root, 'setup', dir)).toMatchObject({ status: EXIT.unreadable, stdout: '', stderr: `dsh-seam setup: cannot read ${join(dir, 'package.json')}: no such file (setup needs the app folder, the one holding its package.json) [no-package-json]\n` })
    expect(readdirSync(dir)).toEqual([])
  })
})
