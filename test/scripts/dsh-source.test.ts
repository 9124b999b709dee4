import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

const SCRIPT = fileURLToPath(new URL('../../scripts/dsh-source.mjs', import.meta.url))
const work = mkdtempSync(join(tmpdir(), 'dsh-source-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

let made = 0
/** A folder shaped like a DSH checkout's root: the manifest the rule reads, a source file, an installed dependency. */
function tree(version = '0.1.0-rc.8', name = '@deepseek-ai/dsh-root'): string {
  const dir = join(work, `tree-${made++}`)
  mkdirSync(join(dir, 'packages/core/session/src'), { recursive: true })
  mkdirSync(join(dir, 'node_modules/left-pad'), { recursive: true })
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, version, private: true }))
  writeFileSync(join(dir, 'packages/core/session/src/index.ts'), 'export const session = 1\n')
  writeFileSync(join(dir, 'node_modules/left-pad/index.js'), '')
  return dir
}

function gitClone(version?: string): string {
  const dir = tree(version)
  rmSync(join(dir, 'node_modules'), { recursive: true })
  const git = (...args: string[]) => execFileSync('git', ['-C', dir, ...args], { stdio: 'ignore' })
  git('init', '-q')
  git('add', '-A')
  git('-c', 'user.name=t', '-c', 'user.email=t@t.invalid', 'commit', '-qm', 'rc.8')
  return dir
}

function tarball(prefix: string): string {
  const dir = gitClone()
  const file = join(work, `archive-${made++}.tar.gz`)
  execFileSync('git', ['-C', dir, 'archive', '--format=tar.gz', ...prefix ? [`--prefix=${prefix}`] : [], '-o', file, 'HEAD'])
  return file
}

/** Every file under `dir` with its size and mode: what "never modified" compares. */
function listing(dir: string): string[] {
  return readdirSync(dir, { recursive: true }).map(String).sort().map((file) => {
    const stat = statSync(join(dir, file))
    return `${file} ${stat.isFile() ? stat.size : 'dir'} ${stat.mode} ${stat.mtimeMs}`
  })
}

function cli(args: string[], env: Record<string, string | undefined> = {}) {
  const result = spawnSync(process.execPath, [SCRIPT, ...args], { encoding: 'utf8', env: { ...process.env, DSH_CHECKOUT: undefined, ...env } })
  return { status: result.status, stdout: result.stdout.trim(), stderr: result.stderr.trim() }
}

function expectRefusal(result: ReturnType<typeof cli>, pattern: RegExp) {
  expect(result.status).toBe(2)
  expect(result.stdout).toBe('')
  expect(result.stderr.split('\n')).toHaveLength(1)
  expect(result.stderr).toMatch(/^dsh-source: /)
  expect(result.stderr).toMatch(pattern)
}

describe('dsh-source: one way to name DSH\'s source', () => {
  it.each([
    ['a plain folder', () => tree()],
    ['a git clone', () => gitClone()],
    ['a git archive tarball with a top-level folder', () => tarball('deepseek-harness-0.1.0-rc.8/')],
    ['a git archive tarball without one', () => tarball('')],
  ])('reads the version of %s and copies it whole, without node_modules or .git', (_kind, make) => {
    const checkout = make()
    expect(cli(['version', checkout])).toEqual({ status: 0, stdout: '0.1.0-rc.8', stderr: '' })
    const dest = join(work, `copy-${made++}`)
    expect(cli(['export', '--need', '0.1.0-rc.8', checkout, dest]).stdout).toBe('0.1.0-rc.8')
    expect(readdirSync(dest, { recursive: true }).map(String).sort()).toEqual(
      ['package.json', 'packages', 'packages/core', 'packages/core/session', 'packages/core/session/src', 'packages/core/session/src/index.ts'])
    expect(readFileSync(join(dest, 'packages/core/session/src/index.ts'), 'utf8')).toBe('export const session = 1\n')
  })

  it('accepts the newest official tag too, and names the checkout from DSH_CHECKOUT when no argument is given', () => {
    const checkout = tree('0.1.1-rc.2')
    expect(cli(['version'], { DSH_CHECKOUT: checkout }).stdout).toBe('0.1.1-rc.2')
    const dest = join(work, `copy-${made++}`)
    expect(cli(['export', dest], { DSH_CHECKOUT: checkout })).toMatchObject({ status: 0, stdout: '0.1.1-rc.2' })
  })

  it('checks a checkout and prints its absolute path, for scripts that run again from another folder', () => {
    const checkout = tree()
    const result = spawnSync(process.execPath, [SCRIPT, 'path', '--need', '0.1.0-rc.8', basename(checkout)], { cwd: work, encoding: 'utf8', env: { ...process.env, DSH_CHECKOUT: undefined } })
    expect(result.stdout.trim()).toBe(checkout)
    expectRefusal(cli(['path', '--need', '0.1.0-rc.8', tree('0.1.1-rc.2')]), /this needs 0\.1\.0-rc\.8 \(tag dsh-v0\.1\.0-rc\.8\)$/)
    expectRefusal(cli(['path', '--need', '0.1.0-rc.8']), /no DSH checkout: pass one or set DSH_CHECKOUT \(a clone of deepseek-ai\/deepseek-harness at tag dsh-v0\.1\.0-rc\.8,/)
  })

  it('never modifies the checkout it copies', () => {
    const folder = tree()
    const clone = gitClone()
    const before = [listing(folder), listing(clone)]
    cli(['export', folder, join(work, `copy-${made++}`)])
    cli(['export', clone, join(work, `copy-${made++}`)])
    expect([listing(folder), listing(clone)]).toEqual(before)
  })

  it('exports a clone\'s HEAD and says so when the work tree has uncommitted changes', () => {
    const clone = gitClone()
    writeFileSync(join(clone, 'packages/core/session/src/index.ts'), 'export const session = 2\n')
    const dest = join(work, `copy-${made++}`)
    const result = cli(['export', clone, dest])
    expect(result.status).toBe(0)
    expect(result.stderr).toMatch(/has uncommitted changes; its HEAD is exported without them/)
    expect(readFileSync(join(dest, 'packages/core/session/src/index.ts'), 'utf8')).toBe('export const session = 1\n')
  })

  it('refuses any other version with one line naming the supported tags, before copying anything', () => {
    const dest = join(work, `copy-${made++}`)
    expectRefusal(cli(['export', tree('0.2.0-rc.2'), dest]), /is DeepSeek Harness 0\.2\.0-rc\.2; supported: dsh-v0\.1\.0-rc\.8 or dsh-v0\.1\.1-rc\.2$/)
    expect(() => statSync(dest)).toThrow()
  })

  it('refuses a supported version that is not the one the caller needs', () => {
    expectRefusal(cli(['version', '--need', '0.1.0-rc.8', tree('0.1.1-rc.2')]), /is DeepSeek Harness 0\.1\.1-rc\.2; this needs 0\.1\.0-rc\.8 \(tag dsh-v0\.1\.0-rc\.8\)$/)
    expectRefusal(cli(['version', '--need', '9.9.9', tree()]), /--need 9\.9\.9: not a supported version/)
  })

  it.each([
    ['a missing path', () => join(work, 'nowhere'), /does not exist$/],
    ['a folder without a manifest', () => mkdtempSync(join(work, 'empty-')), /has no package\.json; not a DeepSeek Harness checkout$/],
    ['another project', () => tree('0.1.0-rc.8', 'my-app'), /its root package\.json is 'my-app', not @deepseek-ai\/dsh-root/],
    ['a file that is no tarball', () => { const file = join(work, `junk-${made++}.tar.gz`); writeFileSync(file, 'not a tarball'); return file }, /neither a folder nor a readable tarball$/],
    ['a manifest that is not JSON', () => { const dir = tree(); writeFileSync(join(dir, 'package.json'), '{'); return dir }, /its root package\.json is not JSON$/],
  ])('refuses %s with one line', (_kind, make, pattern) => {
    expectRefusal(cli(['version', make()]), pattern)
  })

  it('refuses to copy into a folder that is not empty, and to run without a checkout', () => {
    const dest = mkdtempSync(join(work, 'full-'))
    writeFileSync(join(dest, 'keep.txt'), 'mine')
    expectRefusal(cli(['export', tree(), dest]), /is not empty; pass a new folder$/)
    expect(readFileSync(join(dest, 'keep.txt'), 'utf8')).toBe('mine')
    expectRefusal(cli(['version']), /no DSH checkout: pass one or set DSH_CHECKOUT/)
    expectRefusal(cli(['frobnicate']), /usage:/)
  })
})
