/**
 * `dsh-seam setup` on apps in temporary folders, with the workspace's patches: what each package manager's files hold
 * afterwards (pnpm 9 and 10: package.json's `pnpm` field; pnpm 11: pnpm-workspace.yaml; npm: patch-package), how the
 * manager is found, that a second run changes no byte, and that every refusal writes nothing.
 */

import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { DSH_PINS, DSH_VERSION } from '../src/dsh-set.ts'
import { parsePnpmPatchName } from '../src/patch-files.ts'
import type { SetupOptions, SetupPlan } from '../src/setup.ts'
import { PATCH_PACKAGE_VERSION, planSetup, SetupError, setupReport, writeSetup } from '../src/setup.ts'

/** The one home of the patches: the workspace's `patches/`. */
const PATCHES = fileURLToPath(new URL('../../../patches', import.meta.url))
const PATCH_FILES = readdirSync(PATCHES).filter(file => file.endsWith('.patch')).sort()
const PATCHED = PATCH_FILES.map(file => parsePnpmPatchName(file)!)
const OVERRIDES = Object.fromEntries(DSH_PINS)

const root = mkdtempSync(join(tmpdir(), 'dsh-seam-setup-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

/** The app of the real-install check: one dependency as a range, the others exact. */
const DEPENDENCIES = {
  '@deepseek-ai/dsh-agent': DSH_VERSION,
  '@deepseek-ai/dsh-agent-loop': DSH_VERSION,
  '@deepseek-ai/dsh-session': `^${DSH_VERSION}`,
  '@deepseek-ai/dsh-session-persistence-jsonl': DSH_VERSION,
}

let apps = 0
function app(manifest: Record<string, unknown> | string, files: Record<string, string> = {}): string {
  const dir = join(root, `app-${++apps}`)
  mkdirSync(dir)
  writeFileSync(join(dir, 'package.json'), typeof manifest === 'string' ? manifest : `${JSON.stringify({ name: 'app', private: true, ...manifest }, null, 2)}\n`)
  for (const [path, content] of Object.entries(files)) writeFileSync(join(dir, path), content)
  return dir
}

/** Every file under a folder with its bytes. */
function snapshot(dir: string, prefix = ''): Record<string, string> {
  const files: Record<string, string> = {}
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) Object.assign(files, snapshot(path, `${prefix}${name}/`))
    else files[`${prefix}${name}`] = readFileSync(path).toString('base64')
  }
  return files
}

/** Plan and write, with the workspace's patches and no environment (no invoking manager, no pnpm on PATH). */
function setup(dir: string, options: Partial<SetupOptions> = {}): SetupPlan {
  const plan = planSetup({ dir, patches: PATCHES, env: {}, ...options })
  writeSetup(plan)
  return plan
}

function json(dir: string, file = 'package.json'): Record<string, Record<string, unknown>> {
  return JSON.parse(readFileSync(join(dir, file), 'utf8')) as Record<string, Record<string, unknown>>
}

function refusal(run: () => unknown): SetupError {
  try {
    run()
  } catch (error: unknown) {
    if (error instanceof SetupError) return error
    throw error
  }
  throw new Error('setup did not refuse')
}

/** Every patched package pinned in `dependencies`, the listed range rewritten, the others added. */
function expectPinned(dir: string): void {
  const { dependencies } = json(dir)
  expect(dependencies).toEqual({
    ...Object.fromEntries(PATCHED.map(({ name }) => [name, DSH_VERSION])),
    ...Object.fromEntries(Object.keys(DEPENDENCIES).map(name => [name, DSH_VERSION])),
  })
  expect(Object.keys(dependencies!)).toEqual(Object.keys(dependencies!).sort())
}

/** The pnpm patch files in the app are the workspace's, byte for byte, and the table maps each package to its file. */
function expectPnpmPatches(dir: string, table: unknown): void {
  expect(table).toEqual(Object.fromEntries(PATCHED.map(({ file, name, version }) => [`${name}@${version}`, `patches/${file}`])))
  for (const file of PATCH_FILES) expect(readFileSync(join(dir, 'patches', file))).toEqual(readFileSync(join(PATCHES, file)))
}

describe('pnpm 9 and 10: the pnpm field of package.json', () => {
  it.each(['9.15.9', '10.34.9'])('pnpm %s: pins, overrides the DSH set, registers the patches and allows koffi', version => {
    const dir = app({ packageManager: `pnpm@${version}`, dependencies: DEPENDENCIES })
    const plan = setup(dir)
    expect(plan.manager).toMatchObject({ name: 'pnpm', major: Number(version.split('.')[0]), version, install: 'pnpm install' })
    expectPinned(dir)
    const { pnpm } = json(dir)
    expect(pnpm!['overrides']).toEqual(OVERRIDES)
    expectPnpmPatches(dir, pnpm!['patchedDependencies'])
    expect(pnpm!['onlyBuiltDependencies']).toEqual(['koffi'])
    expect(readdirSync(dir).sort()).toEqual(['package.json', 'patches'])
    expect(plan.files.map(file => file.path)).toEqual(['package.json', ...PATCH_FILES.map(file => `patches/${file}`)])
  })

  it('keeps the app\'s own settings, indentation and line endings', () => {
    const manifest = { name: 'app', dependencies: { 'left-pad': '1.3.0', '@deepseek-ai/dsh-agent-loop': DSH_VERSION }, pnpm: { overrides: { 'left-pad': '1.3.0' }, onlyBuiltDependencies: ['esbuild'] } }
    const dir = app(`${JSON.stringify(manifest, null, '\t').replace(/\n/g, '\r\n')}\r\n`)
    setup(dir, { pm: 'pnpm', env: { PATH: fakePnpm('10.34.9') } })
    const text = readFileSync(join(dir, 'package.json'), 'utf8')
    expect(text).toMatch(/^\{\r\n\t"name": "app",\r\n\t"dependencies": \{\r\n\t\t"left-pad": "1.3.0",\r\n/)
    expect(text.endsWith('}\r\n')).toBe(true)
    expect(text.replace(/\r\n/g, '')).not.toMatch(/\n/)
    const { pnpm, dependencies } = json(dir)
    expect(dependencies!['left-pad']).toBe('1.3.0')
    expect(pnpm!['overrides']).toEqual({ 'left-pad': '1.3.0', ...OVERRIDES })
    expect(pnpm!['onlyBuiltDependencies']).toEqual(['esbuild', 'koffi'])
  })
})

describe('pnpm 11: pnpm-workspace.yaml', () => {
  it('writes overrides, patchedDependencies and allowBuilds there, and nothing in package.json\'s pnpm field', () => {
    const dir = app({ packageManager: 'pnpm@11.28.11', dependencies: DEPENDENCIES })
    const plan = setup(dir)
    expect(plan.manager).toMatchObject({ name: 'pnpm', major: 11 })
    expectPinned(dir)
    expect(json(dir)['pnpm']).toBeUndefined()
    const workspace = parse(readFileSync(join(dir, 'pnpm-workspace.yaml'), 'utf8')) as Record<string, unknown>
    expect(Object.keys(workspace)).toEqual(['overrides', 'patchedDependencies', 'allowBuilds'])
    expect(workspace['overrides']).toEqual(OVERRIDES)
    expectPnpmPatches(dir, workspace['patchedDependencies'])
    expect(workspace['allowBuilds']).toEqual({ koffi: true })
  })

  it('keeps the workspace file\'s own settings and comments, and moves what pnpm 10 read from package.json', () => {
    const dir = app({ packageManager: 'pnpm@11.28.11', dependencies: DEPENDENCIES }, { 'pnpm-workspace.yaml': '# the app\nallowBuilds:\n  esbuild: true # native\noverrides:\n  left-pad: 1.3.0\n' })
    setup(dir)
    const ten = app({ packageManager: 'pnpm@10.34.9', dependencies: DEPENDENCIES })
    setup(ten)
    const { pnpm, ...manifest } = json(ten)
    writeFileSync(join(ten, 'package.json'), `${JSON.stringify({ ...manifest, packageManager: 'pnpm@11.28.11', pnpm: { ...pnpm, neverBuiltDependencies: ['fsevents'] } }, null, 2)}\n`)
    const plan = setup(ten)
    expect(plan.files[0]!.notes).toEqual([`pnpm: removed ${DSH_PINS.size + PATCHED.length + 1} seam entries pnpm 11 no longer reads from package.json (they are in pnpm-workspace.yaml)`])
    expect(json(ten)['pnpm']).toEqual({ neverBuiltDependencies: ['fsevents'] })
    const text = readFileSync(join(dir, 'pnpm-workspace.yaml'), 'utf8')
    expect(text).toMatch(/^# the app\nallowBuilds:\n {2}esbuild: true # native\n {2}koffi: true\noverrides:\n {2}"@deepseek-ai\/cordis": 4.0.1\n(.*\n)*? {2}left-pad: 1.3.0\npatchedDependencies:\n/)
    expect((parse(text) as Record<string, unknown>)['overrides']).toEqual({ 'left-pad': '1.3.0', ...OVERRIDES })
  })
})

describe('npm: patch-package', () => {
  it('adds patch-package, runs it after install, overrides the DSH set and writes the patches in its format', () => {
    const dir = app({ dependencies: DEPENDENCIES, scripts: { postinstall: 'node build.js' } }, { 'package-lock.json': '{}\n' })
    const plan = setup(dir)
    expect(plan.manager).toMatchObject({ name: 'npm', from: 'lockfile', install: 'npm install' })
    expectPinned(dir)
    const manifest = json(dir)
    expect(manifest['overrides']).toEqual(OVERRIDES)
    expect(manifest['devDependencies']).toEqual({ 'patch-package': PATCH_PACKAGE_VERSION })
    expect(manifest['scripts']).toEqual({ postinstall: 'patch-package && node build.js' })
    expect(manifest['allowScripts']).toEqual({ koffi: true })
    expect(manifest['pnpm']).toBeUndefined()
    const written = readdirSync(join(dir, 'patches')).sort()
    expect(written).toEqual(PATCHED.map(({ name }) => `${name.replace('/', '+')}+${DSH_VERSION}.patch`).sort())
    for (const { name, file } of PATCHED) {
      const converted = readFileSync(join(dir, 'patches', `${name.replace('/', '+')}+${DSH_VERSION}.patch`), 'utf8')
      const headers = converted.split('\n').filter(line => /^(diff --git|--- |\+\+\+ )/.test(line))
      expect(headers.length).toBeGreaterThanOrEqual(3)
      for (const line of headers) expect(line.replace(/^(diff --git|---|\+\+\+) /, '').split(' ').every(path => path === '/dev/null' || path.startsWith(`a/node_modules/${name}/`) || path.startsWith(`b/node_modules/${name}/`))).toBe(true)
      const original = readFileSync(join(PATCHES, file), 'utf8')
      expect(converted.replaceAll(`node_modules/${name}/`, '')).toBe(original)
    }
  })

  it('leaves a patch-package the app already has, a postinstall that runs it and an approval of koffi\'s version', () => {
    const dir = app({ dependencies: DEPENDENCIES, devDependencies: { 'patch-package': '^8.0.0' }, scripts: { postinstall: 'patch-package --error-on-fail' }, allowScripts: { 'koffi@3.3.4': true } })
    setup(dir, { pm: 'npm' })
    expect(json(dir)['devDependencies']).toEqual({ 'patch-package': '^8.0.0' })
    expect(json(dir)['scripts']).toEqual({ postinstall: 'patch-package --error-on-fail' })
    expect(json(dir)['allowScripts']).toEqual({ 'koffi@3.3.4': true })
  })
})

/** A folder holding an executable `pnpm` that prints a version (or fails), for `pnpm --version` in the app. */
function fakePnpm(version: string | undefined): string {
  const bin = mkdtempSync(join(root, 'bin-'))
  writeFileSync(join(bin, 'pnpm'), version === undefined ? '#!/bin/sh\necho "ERR_PNPM_BROKEN broken" >&2\nexit 1\n' : `#!/bin/sh\necho "${version}"\n`)
  chmodSync(join(bin, 'pnpm'), 0o755)
  return bin
}

describe('--no-patches: a stock app on the consistent DSH set', () => {
  it.each([['pnpm@10.34.9', 'pnpm.overrides'], ['pnpm@11.28.11', 'pnpm-workspace.yaml'], ['npm@11.19.1', 'overrides']])('%s: pins and allows koffi, registers and copies no patch', (packageManager) => {
    const dir = app({ packageManager, dependencies: { '@deepseek-ai/dsh': `^${DSH_VERSION}` } })
    const plan = setup(dir, { pinsOnly: true })
    expect(plan.files.map(file => file.path).filter(path => path.startsWith('patches/'))).toEqual([])
    expect(existsSync(join(dir, 'patches'))).toBe(false)
    const manifest = json(dir)
    expect(manifest['dependencies']).toEqual({ '@deepseek-ai/dsh': DSH_VERSION })
    const settings = packageManager.startsWith('npm') ? manifest : packageManager.startsWith('pnpm@11') ? parse(readFileSync(join(dir, 'pnpm-workspace.yaml'), 'utf8')) as Record<string, Record<string, unknown>> : manifest['pnpm'] as Record<string, Record<string, unknown>>
    expect(settings['overrides']).toEqual(OVERRIDES)
    expect(settings['patchedDependencies']).toBeUndefined()
    expect(JSON.stringify(settings)).toContain('koffi')
    expect(manifest['devDependencies']).toBeUndefined()
    expect(manifest['scripts']).toBeUndefined()
    expect(setup(dir, { pinsOnly: true }).files).toEqual([])
  })
})

describe('which package manager', () => {
  it('asks pnpm --version in the app when nothing gives pnpm\'s version', () => {
    const dir = app({ dependencies: DEPENDENCIES }, { 'pnpm-lock.yaml': "lockfileVersion: '9.0'\n" })
    expect(planSetup({ dir, patches: PATCHES, env: { PATH: fakePnpm('10.34.9') } }).manager).toEqual({ name: 'pnpm', major: 10, version: '10.34.9', from: 'lockfile; version from pnpm --version', install: 'pnpm install' })
    expect(planSetup({ dir, patches: PATCHES, env: { PATH: fakePnpm('11.28.11') } }).manager.major).toBe(11)
    expect(refusal(() => planSetup({ dir, patches: PATCHES, env: { PATH: fakePnpm('8.15.9') } }))).toMatchObject({ code: 'unsupported-package-manager', message: 'pnpm 8.15.9 (lockfile; version from pnpm --version): setup knows the settings of pnpm 9, 10 and 11' })
    expect(refusal(() => planSetup({ dir, patches: PATCHES, env: { PATH: fakePnpm(undefined) } }))).toMatchObject({ code: 'pnpm-version', message: expect.stringMatching(/`pnpm --version` in .* failed \(exit 1: ERR_PNPM_BROKEN broken\); set "packageManager"/) as unknown })
  })

  it('takes --pm over packageManager, packageManager over devEngines, both over the lockfile, the lockfile over the invoking manager', () => {
    const dir = app({ packageManager: 'pnpm@9.15.9+sha512.abc', devEngines: { packageManager: { name: 'npm' } }, dependencies: DEPENDENCIES }, { 'package-lock.json': '{}\n' })
    expect(planSetup({ dir, patches: PATCHES, env: {}, pm: 'npm' }).manager).toMatchObject({ name: 'npm', from: '--pm' })
    expect(planSetup({ dir, patches: PATCHES, env: {}, pm: 'pnpm' }).manager).toMatchObject({ name: 'pnpm', version: '9.15.9', from: '--pm; version from packageManager' })
    expect(planSetup({ dir, patches: PATCHES, env: {} }).manager).toMatchObject({ name: 'pnpm', version: '9.15.9', from: 'packageManager pnpm@9.15.9+sha512.abc' })
    const locked = app({ dependencies: DEPENDENCIES }, { 'package-lock.json': '{}\n' })
    expect(planSetup({ dir: locked, patches: PATCHES, env: { npm_config_user_agent: 'pnpm/10.34.9 npm/? node/v22.23.3' } }).manager.name).toBe('npm')
    const engines = app({ devEngines: { packageManager: { name: 'pnpm', version: '11.28.11', onFail: 'download' } }, dependencies: DEPENDENCIES }, { 'package-lock.json': '{}\n' })
    expect(planSetup({ dir: engines, patches: PATCHES, env: {} }).manager).toMatchObject({ name: 'pnpm', major: 11, from: 'devEngines.packageManager pnpm@11.28.11' })
    const ranged = app({ devEngines: { packageManager: [{ name: 'pnpm', version: '>=10' }] }, dependencies: DEPENDENCIES })
    expect(planSetup({ dir: ranged, patches: PATCHES, env: { PATH: fakePnpm('10.34.9') } }).manager).toMatchObject({ major: 10, from: 'devEngines.packageManager pnpm@>=10; version from pnpm --version' })
    expect(planSetup({ dir: ranged, patches: PATCHES, env: {}, pm: 'npm' }).manager.name).toBe('npm')
    const bare = app({ dependencies: DEPENDENCIES })
    expect(planSetup({ dir: bare, patches: PATCHES, env: { npm_config_user_agent: 'npm/10.9.4 node/v22.23.3 linux x64' } }).manager).toMatchObject({ name: 'npm', from: 'run by npm' })
    expect(refusal(() => planSetup({ dir: bare, patches: PATCHES, env: {} })).code).toBe('no-package-manager')
    expect(refusal(() => planSetup({ dir: app({ packageManager: 'yarn@4.9.1' }), patches: PATCHES, env: {} })).code).toBe('unsupported-package-manager')
  })
})

describe('a second run', () => {
  it.each([
    ['pnpm 9', { packageManager: 'pnpm@9.15.9' }],
    ['pnpm 10', { packageManager: 'pnpm@10.34.9' }],
    ['pnpm 11', { packageManager: 'pnpm@11.28.11' }],
    ['npm', { packageManager: 'npm@10.9.4' }],
  ])('%s: changes no byte and says the app is already set up', (_, manifest) => {
    const dir = app({ ...manifest, dependencies: DEPENDENCIES })
    const first = setup(dir)
    expect(first.files.length).toBeGreaterThan(PATCH_FILES.length)
    const before = snapshot(dir)
    const second = setup(dir)
    expect(second.files).toEqual([])
    expect(snapshot(dir)).toEqual(before)
    expect(setupReport(second, false, text => text)).toMatch(new RegExp(`^dsh-seam setup: ${dir} is already set up for ${first.manager.name} .*: nothing written\\n$`))
    expect(setupReport(second, true, text => text)).toMatch(/^dsh-seam setup --check: .* is set up for /)
  })

  it('rewrites a patch file that differs from the shipped one, and only that file', () => {
    const dir = app({ packageManager: 'pnpm@10.34.9', dependencies: DEPENDENCIES })
    setup(dir)
    const stale = join(dir, 'patches', PATCH_FILES[0]!)
    writeFileSync(stale, 'an older patch\n')
    const plan = setup(dir)
    expect(plan.files.map(file => [file.path, file.created])).toEqual([[`patches/${PATCH_FILES[0]!}`, false]])
    expect(setupReport(plan, false, text => text)).toContain(`wrote patches/${PATCH_FILES[0]!} (updated)\nnext: pnpm install\n`)
    expect(readFileSync(stale)).toEqual(readFileSync(join(PATCHES, PATCH_FILES[0]!)))
  })
})

describe('refusals write nothing', () => {
  function expectRefused(dir: string, code: string, message: RegExp | string, options: Partial<SetupOptions> = {}): void {
    const before = snapshot(dir)
    const error = refusal(() => setup(dir, options))
    expect(error.code).toBe(code)
    expect(error.message).toMatch(message)
    expect(error.message).not.toMatch(/\n/)
    expect(snapshot(dir)).toEqual(before)
  }

  it.each([
    ['0.1.1-rc.2', 'dependencies'],
    ['latest', 'dependencies'],
    ['^0.1.0', 'devDependencies'],
    ['npm:@deepseek-ai/dsh-session@0.1.0-rc.8', 'optionalDependencies'],
  ])('a DSH package at %s in %s', (spec, field) => {
    const dir = app({ packageManager: 'pnpm@10.34.9', dependencies: DEPENDENCIES, [field]: { ...field === 'dependencies' ? DEPENDENCIES : {}, '@deepseek-ai/dsh-llm': spec } })
    expectRefused(dir, 'wrong-version', `@deepseek-ai/dsh-llm is "${spec}" in ${field}, but the seam's patches are for @deepseek-ai/dsh-llm@${DSH_VERSION} exactly; change it to ${DSH_VERSION} (or a range that admits it) and run setup again`)
  })

  it('a wrong version is named before the package manager is asked about', () => {
    const dir = app({ dependencies: { ...DEPENDENCIES, '@deepseek-ai/dsh-session': '0.1.1-rc.2' } })
    expectRefused(dir, 'wrong-version', /^@deepseek-ai\/dsh-session is "0.1.1-rc.2" in dependencies, /)
  })

  it('a DSH override or peer range that excludes the release', () => {
    expectRefused(app({ packageManager: 'pnpm@10.34.9', dependencies: DEPENDENCIES, pnpm: { overrides: { '@deepseek-ai/dsh-session': '0.1.1-rc.2' } } }), 'wrong-version', /^@deepseek-ai\/dsh-session is "0.1.1-rc.2" in pnpm.overrides, /)
    expectRefused(app({ dependencies: DEPENDENCIES, overrides: { '@deepseek-ai/dsh-agent': { '.': DSH_VERSION } } }), 'wrong-version', /^@deepseek-ai\/dsh-agent is \{".":"0.1.0-rc.8"\} in overrides, /, { pm: 'npm' })
    expectRefused(app({ packageManager: 'pnpm@11.28.11', dependencies: DEPENDENCIES }, { 'pnpm-workspace.yaml': 'overrides:\n  "@deepseek-ai/dsh-llm": 0.1.1-rc.2\n' }), 'wrong-version', /^@deepseek-ai\/dsh-llm is "0.1.1-rc.2" in overrides, /)
    expectRefused(app({ packageManager: 'pnpm@10.34.9', dependencies: DEPENDENCIES, peerDependencies: { '@deepseek-ai/dsh-session': '>=0.1.1-rc.2' } }), 'wrong-version', /^@deepseek-ai\/dsh-session is ">=0.1.1-rc.2" in peerDependencies, /)
  })

  it('another patch of a patched package', () => {
    expectRefused(app({ packageManager: 'pnpm@10.34.9', dependencies: DEPENDENCIES, pnpm: { patchedDependencies: { '@deepseek-ai/dsh-session': 'patches/mine.patch' } } }), 'patch-conflict', /^package.json pnpm.patchedDependencies already patches @deepseek-ai\/dsh-session with "patches\/mine.patch" \(as "@deepseek-ai\/dsh-session"\); /)
    const npm = app({ dependencies: DEPENDENCIES })
    mkdirSync(join(npm, 'patches'))
    writeFileSync(join(npm, 'patches', '@deepseek-ai+dsh-session+0.1.0-rc.8+001+mine.patch'), '')
    expectRefused(npm, 'patch-conflict', /^patches\/@deepseek-ai\+dsh-session\+0.1.0-rc.8\+001\+mine.patch already patches @deepseek-ai\/dsh-session for patch-package; /, { pm: 'npm' })
  })

  it('a missing or malformed package.json, pnpm-workspace.yaml or field', () => {
    const empty = join(root, 'no-app')
    mkdirSync(empty)
    expectRefused(empty, 'no-package-json', `cannot read ${join(empty, 'package.json')}: no such file (setup needs the app folder, the one holding its package.json)`)
    expectRefused(app('{"name": "app",\n'), 'malformed-package-json', /^\/.*\/package.json is not JSON: /)
    expectRefused(app('["app"]\n'), 'malformed-package-json', /package.json is not a JSON object$/)
    expectRefused(app({ packageManager: 'pnpm@10.34.9', dependencies: ['@deepseek-ai/dsh-session'] }), 'malformed-package-json', 'package.json: dependencies is not an object')
    expectRefused(app({ packageManager: 'pnpm@10.34.9', pnpm: { onlyBuiltDependencies: 'koffi' } }), 'malformed-package-json', 'package.json: pnpm.onlyBuiltDependencies is not a list')
    expectRefused(app({ packageManager: 'pnpm@11.28.11' }, { 'pnpm-workspace.yaml': 'overrides: [1\n' }), 'malformed-workspace', /^pnpm-workspace.yaml: Flow sequence/)
    expectRefused(app({ packageManager: 'pnpm@11.28.11' }, { 'pnpm-workspace.yaml': 'allowBuilds:\n  - koffi\n' }), 'malformed-workspace', 'pnpm-workspace.yaml: allowBuilds is not a map')
  })

  it('no shipped patches, or a file that is not a DSH 0.1.0-rc.8 patch', () => {
    const dir = app({ packageManager: 'pnpm@10.34.9', dependencies: DEPENDENCIES })
    const none = mkdtempSync(join(root, 'patches-'))
    expectRefused(dir, 'no-patches', `no patch files in ${none}: build @dsh-seam/cli (pnpm run build) so that it copies the workspace's patches/`, { patches: none })
    const other = mkdtempSync(join(root, 'patches-'))
    writeFileSync(join(other, '@deepseek-ai__dsh-session@0.1.1-rc.2.patch'), '')
    expectRefused(dir, 'bad-patches', /dsh-session@0.1.1-rc.2.patch is not named as a pnpm patch of a DSH 0.1.0-rc.8 package/, { patches: other })
  })
})
