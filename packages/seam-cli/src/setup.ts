/**
 * `dsh-seam setup`: install the seam's patches into a DSH app. It pins the DSH set to the patched release, copies the
 * patch files into the app's `patches/` and registers them the way the app's package manager reads them (pnpm 9 and
 * 10: the `pnpm` field of `package.json`; pnpm 11: `pnpm-workspace.yaml`; npm: patch-package). {@link planSetup}
 * reads and checks everything and writes nothing; {@link writeSetup} writes the plan.
 * @module @dsh-seam/cli/setup
 */

import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { satisfies, valid, validRange } from 'semver'
import type { Document, Pair, YAMLMap } from 'yaml'
import { isMap, isScalar, parseDocument } from 'yaml'
import { DSH_PINS, DSH_VERSION, isDshPackage } from './dsh-set.ts'
import type { PnpmPatch } from './patch-files.ts'
import { parsePnpmPatchName, PatchFormatError, patchPackageFile, toPatchPackage } from './patch-files.ts'

/** The patch files this package ships (pnpm's format), copied from the workspace's `patches/` by `build` and `prepack`. */
export const SHIPPED_PATCHES = fileURLToPath(new URL('../patches', import.meta.url))

/** The patch-package release `setup` adds to an npm app (exact). */
export const PATCH_PACKAGE_VERSION = '8.0.1'

/** The native dependency of `@deepseek-ai/dsh-session-persistence-jsonl` whose install script pnpm 10+ must be allowed to run. */
const NATIVE_BUILD = 'koffi'

/** Why `setup` refused, before writing anything. */
export type SetupErrorCode =
  /** The folder has no `package.json`. */
  | 'no-package-json'
  /** `package.json` is not a JSON object, or a field setup edits has the wrong shape. */
  | 'malformed-package-json'
  /** A DSH package is pinned to a version (or tag) other than {@link DSH_VERSION}. */
  | 'wrong-version'
  /** Neither `--pm`, `packageManager`, a lockfile nor the invoking package manager says which one the app uses. */
  | 'no-package-manager'
  /** Yarn, Bun, or a pnpm major other than 9, 10 and 11. */
  | 'unsupported-package-manager'
  /** `pnpm --version` failed in the folder. */
  | 'pnpm-version'
  /** `pnpm-workspace.yaml` is not YAML, or a setting setup edits is not a map. */
  | 'malformed-workspace'
  /** The app already registers another patch for a package the seam patches. */
  | 'patch-conflict'
  /** The shipped patch folder is missing or empty (the package was not built). */
  | 'no-patches'
  /** A shipped patch file is not a patch of a DSH {@link DSH_VERSION} package. */
  | 'bad-patches'
  /** A file could not be written. */
  | 'write-failed'

/** `setup` refused; the message is one line naming what is wrong. */
export class SetupError extends Error {
  override readonly name = 'SetupError'

  constructor(readonly code: SetupErrorCode, message: string, options?: ErrorOptions) {
    super(message, options)
  }
}

/** The package manager `setup` writes settings for, and how it was told. */
export interface PackageManager {
  readonly name: 'pnpm' | 'npm'
  /** pnpm's major version (9, 10 or 11). */
  readonly major?: number
  /** The full version, when known. */
  readonly version?: string
  /** Where the name and version came from: `--pm`, `packageManager`, a lockfile, `pnpm --version`, ... */
  readonly from: string
  /** The command to run after setup. */
  readonly install: string
}

/** What {@link planSetup} reads. */
export interface SetupOptions {
  /** The app: the folder holding its `package.json`. */
  readonly dir: string
  /** The package manager, when the app does not say (`--pm`); it wins over what the app says. */
  readonly pm?: 'pnpm' | 'npm'
  /** The folder of pnpm-format patch files to install (default {@link SHIPPED_PATCHES}). */
  readonly patches?: string
  /** The environment `pnpm --version` runs in, and whose `npm_config_user_agent` names the invoking manager. */
  readonly env?: NodeJS.ProcessEnv
  /** Pin the DSH set and allow koffi's build, without the seam's patches: a stock app on consistent versions (`--no-patches`). */
  readonly pinsOnly?: boolean
}

/** A file setup would write: only files whose bytes change are planned. */
export interface PlannedFile {
  /** Relative to the app, with `/`. */
  readonly path: string
  readonly content: string
  readonly created: boolean
  /** What changes in it, one line each. */
  readonly notes: readonly string[]
}

/** What setup would write into an app; no file in it means the app is already set up. */
export interface SetupPlan {
  /** The app, absolute. */
  readonly dir: string
  readonly manager: PackageManager
  readonly files: readonly PlannedFile[]
}

type Json = Record<string, unknown>

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function sorted(keys: readonly string[]): boolean {
  return keys.every((key, i) => i === 0 || (keys[i - 1] as string) < key)
}

function byKey<T>(key: (item: T) => string): (a: T, b: T) => number {
  return (a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0)
}

/** A string-keyed map of `package.json` (an object) or of `pnpm-workspace.yaml` (a YAML map): what setup edits. */
interface Table {
  /** Where it is, for messages: `pnpm.overrides`. */
  readonly label: string
  keys(): string[]
  get(key: string): unknown
  /** Set a key; a new key keeps a sorted table sorted, otherwise it goes last. */
  set(key: string, value: unknown): void
}

function jsonTable(owner: Json, field: string, label: string, file: string): Table {
  const existing = owner[field]
  if (existing !== undefined && !isObject(existing)) throw new SetupError('malformed-package-json', `${file}: ${label} is not an object`)
  let table = existing
  return {
    label,
    keys: () => Object.keys(table ?? {}),
    get: key => table?.[key],
    set: (key, value) => {
      table ??= owner[field] = {}
      const wasSorted = sorted(Object.keys(table))
      const added = !(key in table)
      table[key] = value
      if (added && wasSorted) owner[field] = table = Object.fromEntries(Object.entries(table).sort(byKey(([name]) => name)))
    },
  }
}

function pairKey(pair: Pair): string {
  return String(isScalar(pair.key) ? pair.key.value : pair.key)
}

function yamlTable(doc: Document, field: string): Table {
  const existing: unknown = doc.get(field)
  if (existing !== undefined && existing !== null && !isMap(existing)) throw new SetupError('malformed-workspace', `pnpm-workspace.yaml: ${field} is not a map`)
  let map: YAMLMap | undefined = isMap(existing) ? existing : undefined
  return {
    label: field,
    keys: () => (map?.items ?? []).map(pairKey),
    get: key => map?.get(key),
    set: (key, value) => {
      if (map === undefined) {
        map = doc.createNode({})
        doc.set(field, map)
      }
      const keys = map.items.map(pairKey)
      map.set(key, value)
      if (!keys.includes(key) && sorted(keys)) map.items.sort(byKey(pairKey))
    },
  }
}

/** @returns whether a dependency spec is a semver range that admits {@link DSH_VERSION}. */
/** The version setup pins a package to: its {@link DSH_PINS} entry, or {@link DSH_VERSION} for any other DSH package. */
function pinOf(name: string): string {
  return DSH_PINS.get(name) ?? DSH_VERSION
}

function isPinned(name: string): boolean {
  return DSH_PINS.has(name) || isDshPackage(name)
}

function admits(spec: unknown, version = DSH_VERSION): boolean {
  return typeof spec === 'string' && validRange(spec) !== null && satisfies(version, spec, { includePrerelease: true })
}

function refuseVersion(where: string, name: string, spec: unknown): never {
  const shown = typeof spec === 'string' ? `"${spec}"` : JSON.stringify(spec)
  const version = pinOf(name)
  throw new SetupError('wrong-version', `${name} is ${shown} in ${where}, but the seam's patches are for ${name}@${version} exactly; change it to ${version} (or a range that admits it) and run setup again`)
}

/**
 * Pin every DSH key of a table (and every companion, {@link DSH_PINS}) to its version: a range that admits it is
 * rewritten, anything else is refused.
 * @param names - keys that must be present (added when missing).
 * @returns the notes.
 */
function pinTable(table: Table, names: readonly string[]): string[] {
  const notes: string[] = []
  const added: string[] = []
  for (const name of new Set([...table.keys().filter(isPinned), ...names])) {
    const spec = table.get(name)
    const version = pinOf(name)
    if (spec === version) continue
    if (spec === undefined) added.push(name)
    else if (!admits(spec, version)) refuseVersion(table.label, name, spec)
    else notes.push(`${table.label}: ${name} ${spec as string} -> ${version}`)
    table.set(name, version)
  }
  const which = added.length === DSH_PINS.size ? `the whole DSH ${DSH_VERSION} set and its companions` : added.join(', ')
  if (added.length > 0) notes.push(`${table.label}: added ${added.length} (${which})`)
  return notes
}

const DEPENDENCY_FIELDS = ['dependencies', 'devDependencies', 'optionalDependencies'] as const

/** Pin the DSH dependencies the app lists and add the patched packages it does not list to `dependencies`. */
function pinDependencies(pkg: Json, patched: readonly string[]): string[] {
  const notes: string[] = []
  const listed = new Set<string>()
  for (const field of DEPENDENCY_FIELDS) {
    const table = jsonTable(pkg, field, field, 'package.json')
    for (const name of table.keys()) if (isDshPackage(name)) listed.add(name)
    notes.push(...pinTable(table, []))
  }
  const peers = jsonTable(pkg, 'peerDependencies', 'peerDependencies', 'package.json')
  for (const name of peers.keys().filter(isDshPackage)) if (!admits(peers.get(name))) refuseVersion('peerDependencies', name, peers.get(name))
  const missing = patched.filter(name => !listed.has(name))
  if (missing.length > 0) notes.push(...pinTable(jsonTable(pkg, 'dependencies', 'dependencies', 'package.json'), missing))
  return notes
}

/** The package name of a `patchedDependencies` key: `@scope/name@version` or `@scope/name`. */
function patchedName(key: string): string {
  const at = key.indexOf('@', 1)
  return at < 0 ? key : key.slice(0, at)
}

/** Register each patch in a pnpm `patchedDependencies` table; another patch of a package the seam patches is refused. */
function registerPnpmPatches(table: Table, patches: readonly PnpmPatch[], where: string): string[] {
  const ours = new Map(patches.map(patch => [`${patch.name}@${patch.version}`, `patches/${patch.file}`]))
  const names = new Set(patches.map(patch => patch.name))
  for (const key of table.keys()) {
    if (!names.has(patchedName(key)) || ours.get(key) === table.get(key)) continue
    throw new SetupError('patch-conflict', `${where} ${table.label} already patches ${patchedName(key)} with ${JSON.stringify(table.get(key))} (as ${JSON.stringify(key)}); the seam patches it with ${ours.get(`${patchedName(key)}@${DSH_VERSION}`) ?? 'its own patch'}: remove that entry (or merge the patches) and run setup again`)
  }
  const added = [...ours].filter(([key, file]) => table.get(key) !== file)
  for (const [key, file] of added) table.set(key, file)
  return added.length === 0 ? [] : [`${table.label}: added ${added.length} seam patch${added.length === 1 ? '' : 'es'} (${added.map(([key]) => patchedName(key).replace('@deepseek-ai/', '')).join(', ')})`]
}

function allowNativeBuildList(table: Json, field: string, label: string): string[] {
  const list = table[field] ?? []
  if (!Array.isArray(list)) throw new SetupError('malformed-package-json', `package.json: ${label} is not a list`)
  if (list.includes(NATIVE_BUILD)) return []
  table[field] = [...list, NATIVE_BUILD]
  return [`${label}: added ${NATIVE_BUILD} (the native dependency of @deepseek-ai/dsh-session-persistence-jsonl)`]
}

/** Allow koffi's install script in a map of package (or `package@version`) to `true`/`false`: pnpm 11's `allowBuilds`, npm's `allowScripts`. */
function allowNativeBuildMap(table: Table): string[] {
  if (table.keys().some(key => (key === NATIVE_BUILD || key.startsWith(`${NATIVE_BUILD}@`)) && table.get(key) === true)) return []
  const before = table.get(NATIVE_BUILD)
  table.set(NATIVE_BUILD, true)
  return [`${table.label}: ${NATIVE_BUILD}: ${before === undefined ? '' : `${JSON.stringify(before)} -> `}true (the native dependency of @deepseek-ai/dsh-session-persistence-jsonl)`]
}

interface Edit {
  readonly pkg: Json
  readonly notes: string[]
  /** Files besides `package.json`, by path. */
  readonly files: Map<string, { content: string; notes: string[] }>
}

/** pnpm 9 and 10 read `overrides`, `patchedDependencies` and `onlyBuiltDependencies` in `package.json`'s `pnpm` field. */
function pnpmPackageJson(edit: Edit, patches: readonly PnpmPatch[]): void {
  const pnpm = edit.pkg['pnpm'] ?? {}
  if (!isObject(pnpm)) throw new SetupError('malformed-package-json', 'package.json: pnpm is not an object')
  edit.notes.push(...pinTable(jsonTable(pnpm, 'overrides', 'pnpm.overrides', 'package.json'), [...DSH_PINS.keys()]))
  edit.notes.push(...registerPnpmPatches(jsonTable(pnpm, 'patchedDependencies', 'pnpm.patchedDependencies', 'package.json'), patches, 'package.json'))
  edit.notes.push(...allowNativeBuildList(pnpm, 'onlyBuiltDependencies', 'pnpm.onlyBuiltDependencies'))
  if (Object.keys(pnpm).length > 0) edit.pkg['pnpm'] = pnpm
}

/** What setup writes for pnpm 9 and 10 that pnpm 11 no longer reads from `package.json` (it fails `pnpm run` on them). */
function dropPnpmField(edit: Edit, patches: readonly PnpmPatch[]): void {
  const pnpm = edit.pkg['pnpm']
  if (!isObject(pnpm)) return
  const ours: Record<string, (key: string, value: unknown) => boolean> = {
    overrides: (key, value) => isPinned(key) && value === pinOf(key),
    patchedDependencies: (key, value) => patches.some(patch => key === `${patch.name}@${patch.version}` && value === `patches/${patch.file}`),
  }
  let dropped = 0
  for (const [field, isOurs] of Object.entries(ours)) {
    const table = pnpm[field]
    if (!isObject(table)) continue
    for (const [key, value] of Object.entries(table)) if (isOurs(key, value)) {
      delete table[key]
      dropped++
    }
    if (Object.keys(table).length === 0) delete pnpm[field]
  }
  const builds = pnpm['onlyBuiltDependencies']
  if (Array.isArray(builds) && builds.includes(NATIVE_BUILD)) {
    dropped++
    if (builds.length === 1) delete pnpm['onlyBuiltDependencies']
    else pnpm['onlyBuiltDependencies'] = builds.filter(name => name !== NATIVE_BUILD)
  }
  if (Object.keys(pnpm).length === 0) delete edit.pkg['pnpm']
  if (dropped > 0) edit.notes.push(`pnpm: removed ${dropped} seam entries pnpm 11 no longer reads from package.json (they are in pnpm-workspace.yaml)`)
}

/** pnpm 11 reads `overrides`, `patchedDependencies` and `allowBuilds` in `pnpm-workspace.yaml` only. */
function pnpmWorkspace(dir: string, edit: Edit, patches: readonly PnpmPatch[]): void {
  const path = join(dir, 'pnpm-workspace.yaml')
  const text = existsSync(path) ? readFileSync(path, 'utf8') : ''
  const doc = parseDocument(text)
  if (doc.errors.length > 0) throw new SetupError('malformed-workspace', `pnpm-workspace.yaml: ${(doc.errors[0] as Error).message.split('\n')[0] as string}`)
  if (doc.contents !== null && !isMap(doc.contents)) throw new SetupError('malformed-workspace', 'pnpm-workspace.yaml is not a map of settings')
  const notes = [
    ...pinTable(yamlTable(doc, 'overrides'), [...DSH_PINS.keys()]),
    ...registerPnpmPatches(yamlTable(doc, 'patchedDependencies'), patches, 'pnpm-workspace.yaml'),
  ]
  notes.push(...allowNativeBuildMap(yamlTable(doc, 'allowBuilds')))
  if (notes.length > 0) edit.files.set('pnpm-workspace.yaml', { content: doc.toString(), notes })
  dropPnpmField(edit, patches)
}

/**
 * npm has no patch mechanism: patch-package applies the converted patches after every install (the app's own
 * `postinstall`). npm 11's `allowScripts` lets koffi's install script run without a warning (older npm ignores it).
 */
function npmPackageJson(edit: Edit, patched: boolean): void {
  const { pkg, notes } = edit
  notes.push(...pinTable(jsonTable(pkg, 'overrides', 'overrides', 'package.json'), [...DSH_PINS.keys()]))
  notes.push(...allowNativeBuildMap(jsonTable(pkg, 'allowScripts', 'allowScripts', 'package.json')))
  if (!patched) return
  const dependencies = jsonTable(pkg, 'dependencies', 'dependencies', 'package.json')
  const devDependencies = jsonTable(pkg, 'devDependencies', 'devDependencies', 'package.json')
  if (dependencies.get('patch-package') === undefined && devDependencies.get('patch-package') === undefined) {
    devDependencies.set('patch-package', PATCH_PACKAGE_VERSION)
    notes.push(`devDependencies: added patch-package ${PATCH_PACKAGE_VERSION}`)
  }
  const scripts = jsonTable(pkg, 'scripts', 'scripts', 'package.json')
  const postinstall = scripts.get('postinstall')
  if (postinstall !== undefined && typeof postinstall !== 'string') throw new SetupError('malformed-package-json', 'package.json: scripts.postinstall is not a string')
  if (postinstall === undefined || !/\bpatch-package\b/.test(postinstall)) {
    scripts.set('postinstall', postinstall === undefined ? 'patch-package' : `patch-package && ${postinstall}`)
    notes.push(`scripts.postinstall: ${postinstall === undefined ? '' : `${JSON.stringify(postinstall)} -> `}"${String(scripts.get('postinstall'))}"`)
  }
}

/** @returns the shipped patches, each checked to be a patch of a DSH {@link DSH_VERSION} package. */
function readPatches(folder: string): { readonly patch: PnpmPatch; readonly text: string }[] {
  let files: string[]
  try {
    files = readdirSync(folder).filter(file => file.endsWith('.patch')).sort()
  } catch {
    files = []
  }
  if (files.length === 0) throw new SetupError('no-patches', `no patch files in ${folder}: build @dsh-seam/cli (pnpm run build) so that it copies the workspace's patches/`)
  return files.map(file => {
    const patch = parsePnpmPatchName(file)
    if (patch === undefined || !isDshPackage(patch.name) || patch.version !== DSH_VERSION) throw new SetupError('bad-patches', `${join(folder, file)} is not named as a pnpm patch of a DSH ${DSH_VERSION} package (@deepseek-ai__dsh-<name>@${DSH_VERSION}.patch)`)
    return { patch, text: readFileSync(join(folder, file), 'utf8') }
  })
}

function readPackageJson(dir: string): { readonly text: string; readonly pkg: Json } {
  const path = join(dir, 'package.json')
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error: unknown) {
    const code = (error as NodeJS.ErrnoException).code
    throw new SetupError('no-package-json', `cannot read ${path}: ${code === 'ENOENT' ? 'no such file (setup needs the app folder, the one holding its package.json)' : String(code ?? error)}`)
  }
  let pkg: unknown
  try {
    pkg = JSON.parse(text)
  } catch (error: unknown) {
    throw new SetupError('malformed-package-json', `${path} is not JSON: ${(error as Error).message.split('\n')[0] as string}`)
  }
  if (!isObject(pkg)) throw new SetupError('malformed-package-json', `${path} is not a JSON object`)
  return { text, pkg }
}

/** @returns the file in `package.json`'s own format: its indent, line ending and final newline. */
function formatLike(original: string, value: Json): string {
  const indent = /^([ \t]+)"/m.exec(original)?.[1] ?? '  '
  const text = JSON.stringify(value, null, indent)
  const eol = original.includes('\r\n') ? '\r\n' : '\n'
  return `${text.replace(/\n/g, eol)}${original === '' || /\r?\n$/.test(original) ? eol : ''}`
}

function pnpmVersion(dir: string, env: NodeJS.ProcessEnv): string {
  const run = spawnSync('pnpm', ['--version'], { cwd: dir, env, encoding: 'utf8', timeout: 120_000, shell: process.platform === 'win32' })
  const version = (run.stdout ?? '').split(/\r?\n/).map(line => line.trim()).filter(line => /^\d+\.\d+\.\d+/.test(line)).at(-1)
  if (run.error === undefined && run.status === 0 && version !== undefined) return version
  const why = run.error !== undefined ? (run.error as NodeJS.ErrnoException).code ?? run.error.message : `exit ${String(run.status)}: ${(run.stderr || run.stdout || '').trim().split('\n')[0] ?? ''}`
  throw new SetupError('pnpm-version', `cannot tell pnpm's version: \`pnpm --version\` in ${dir} failed (${why}); set "packageManager": "pnpm@<version>" in package.json, or install pnpm`)
}

const LOCKFILES: readonly (readonly [string, string])[] = [['pnpm-lock.yaml', 'pnpm'], ['package-lock.json', 'npm'], ['npm-shrinkwrap.json', 'npm'], ['yarn.lock', 'yarn'], ['bun.lock', 'bun'], ['bun.lockb', 'bun']]

/** The package manager `package.json` declares: `packageManager` (`pnpm@10.34.9+sha512...`), else `devEngines.packageManager`. */
function declaredManager(pkg: Json): { readonly name: string; readonly version?: string; readonly key: string; readonly from: string } | undefined {
  const field = pkg['packageManager']
  const pinned = typeof field === 'string' ? /^([\w-]+)@([^+\s]+)/.exec(field) : null
  if (pinned !== null) return { name: pinned[1] as string, version: pinned[2] as string, key: 'packageManager', from: `packageManager ${String(field)}` }
  const engines = isObject(pkg['devEngines']) ? pkg['devEngines']['packageManager'] : undefined
  const engine: unknown = Array.isArray(engines) ? engines[0] : engines
  if (!isObject(engine) || typeof engine['name'] !== 'string') return undefined
  const version = typeof engine['version'] === 'string' ? engine['version'] : undefined
  return { name: engine['name'], ...version === undefined ? {} : { version }, key: 'devEngines.packageManager', from: `devEngines.packageManager ${engine['name']}${version === undefined ? '' : `@${version}`}` }
}

/**
 * Which package manager the app uses: `--pm`, else what `package.json` declares (`packageManager`, then
 * `devEngines.packageManager`), else its lockfile, else the manager running setup (`npm_config_user_agent`);
 * pnpm's version from the declaration when it is an exact version, else `pnpm --version` in the folder.
 */
function detectManager(dir: string, pkg: Json, pm: 'pnpm' | 'npm' | undefined, env: NodeJS.ProcessEnv): PackageManager {
  const declared = declaredManager(pkg)
  let name: string | undefined = pm
  let from = '--pm'
  if (name === undefined && declared !== undefined) [name, from] = [declared.name, declared.from]
  if (name === undefined) {
    const locks = [...new Set(LOCKFILES.filter(([file]) => existsSync(join(dir, file))).map(([, manager]) => manager))]
    if (locks.length > 1) throw new SetupError('no-package-manager', `${dir} has lockfiles of ${locks.join(' and ')}: pass --pm pnpm or --pm npm`)
    if (locks.length === 1) [name, from] = [locks[0], 'lockfile']
  }
  if (name === undefined) {
    const agent = /^([\w-]+)\//.exec(env['npm_config_user_agent'] ?? '')?.[1]
    if (agent !== undefined) [name, from] = [agent, `run by ${agent}`]
  }
  if (name === undefined) throw new SetupError('no-package-manager', `cannot tell the package manager of ${dir}: no packageManager or devEngines.packageManager in package.json, no lockfile; pass --pm pnpm or --pm npm`)
  if (name === 'npm') return { name, from, install: 'npm install' }
  if (name !== 'pnpm') throw new SetupError('unsupported-package-manager', `${dir} uses ${name} (${from}): setup supports pnpm 9, 10 and 11 and npm; pass --pm pnpm or --pm npm to choose one`)
  const pinned = declared?.name === 'pnpm' && declared.version !== undefined ? valid(declared.version) ?? undefined : undefined
  const version = pinned ?? pnpmVersion(dir, env)
  if (pinned === undefined) from = `${from}; version from pnpm --version`
  else if (from === '--pm') from = `${from}; version from ${declared?.key ?? ''}`
  const major = Number(version.split('.')[0])
  if (major < 9 || major > 11) throw new SetupError('unsupported-package-manager', `pnpm ${version} (${from}): setup knows the settings of pnpm 9, 10 and 11`)
  return { name: 'pnpm', major, version, from, install: 'pnpm install' }
}

/**
 * Work out what setup would write into an app; nothing is written. Every check (package.json, versions, package
 * manager, conflicts, patch files) happens here.
 * @param options - the app and how to read it.
 * @returns the plan: the files whose content changes.
 * @throws SetupError for any refusal.
 */
export function planSetup(options: SetupOptions): SetupPlan {
  const dir = resolve(options.dir)
  const { text, pkg: original } = readPackageJson(dir)
  const patches = options.pinsOnly === true ? [] : readPatches(options.patches ?? SHIPPED_PATCHES)
  const edit: Edit = { pkg: structuredClone(original), notes: [], files: new Map() }
  edit.notes.push(...pinDependencies(edit.pkg, patches.map(({ patch }) => patch.name)))
  const manager = detectManager(dir, original, options.pm, options.env ?? process.env)
  if (manager.name === 'npm') npmPackageJson(edit, patches.length > 0)
  else if ((manager.major as number) >= 11) pnpmWorkspace(dir, edit, patches.map(({ patch }) => patch))
  else pnpmPackageJson(edit, patches.map(({ patch }) => patch))
  const planned: PlannedFile[] = []
  if (edit.notes.length > 0) planned.push({ path: 'package.json', content: formatLike(text, edit.pkg), created: false, notes: edit.notes })
  for (const [path, { content, notes }] of edit.files) planned.push({ path, content, created: !existsSync(join(dir, path)), notes })
  const existing = existsSync(join(dir, 'patches')) ? readdirSync(join(dir, 'patches')) : []
  for (const { patch, text: source } of patches) {
    const file = manager.name === 'npm' ? patchPackageFile(patch.name, patch.version) : patch.file
    if (manager.name === 'npm') {
      const other = existing.find(name => name !== file && name.startsWith(`${patch.name.replace('/', '+')}+`) && name.endsWith('.patch'))
      if (other !== undefined) throw new SetupError('patch-conflict', `patches/${other} already patches ${patch.name} for patch-package; the seam patches it with patches/${file}: remove that file (or merge the patches) and run setup again`)
    }
    let content: string
    try {
      content = manager.name === 'npm' ? toPatchPackage(patch.name, source) : source
    } catch (error: unknown) {
      if (error instanceof PatchFormatError) throw new SetupError('bad-patches', error.message)
      throw error
    }
    const path = `patches/${file}`
    const present = existing.includes(file) ? readFileSync(join(dir, path), 'utf8') : undefined
    if (present !== content) planned.push({ path, content, created: present === undefined, notes: [] })
  }
  return { dir, manager, files: planned }
}

/**
 * Write a plan's files.
 * @param plan - from {@link planSetup}.
 * @throws SetupError (`write-failed`) when a file cannot be written.
 */
export function writeSetup(plan: SetupPlan): void {
  for (const file of plan.files) {
    const path = join(plan.dir, file.path)
    try {
      mkdirSync(dirname(path), { recursive: true })
      writeFileSync(path, file.content)
    } catch (error: unknown) {
      throw new SetupError('write-failed', `cannot write ${path}: ${String((error as NodeJS.ErrnoException).code ?? error)}`)
    }
  }
}

/** @returns the manager as setup names it: `pnpm 10 (10.34.9, packageManager pnpm@10.34.9)`. */
function managerLabel(manager: PackageManager): string {
  return manager.name === 'npm' ? `npm (${manager.from})` : `pnpm ${String(manager.major)} (${String(manager.version)}, ${manager.from})`
}

/**
 * @param plan - a plan.
 * @param check - whether this is `--check` (nothing was written).
 * @param show - how a path or note is shown (escaped for a terminal).
 * @returns what setup prints: each file written (or that would be) with what changes in it, then the next command.
 */
export function setupReport(plan: SetupPlan, check: boolean, show: (text: string) => string): string {
  const command = check ? 'dsh-seam setup --check' : 'dsh-seam setup'
  const target = `${show(plan.dir)} ${plan.files.length === 0 ? 'is' : 'is not'}${plan.files.length === 0 && !check ? ' already' : ''} set up for ${show(managerLabel(plan.manager))}`
  if (plan.files.length === 0) return `${command}: ${target}${check ? '' : ': nothing written'}\n`
  const lines = [check ? `${command}: ${target}: setup would write ${plan.files.length} file${plan.files.length === 1 ? '' : 's'}` : `${command}: ${show(plan.dir)} for ${show(managerLabel(plan.manager))}`]
  for (const file of plan.files) {
    lines.push(`${check ? 'would write' : 'wrote'} ${show(file.path)}${file.created ? ' (new)' : file.path.startsWith('patches/') ? ' (updated)' : ''}`)
    for (const note of file.notes) lines.push(`  ${show(note)}`)
  }
  lines.push(check ? `run dsh-seam setup without --check to write them, then ${plan.manager.install}` : `next: ${plan.manager.install}`)
  return `${lines.join('\n')}\n`
}
