/**
 * The seam's modules as the compiled npm patches carry them, so that no patched DSH package imports a workspace
 * package.
 *
 * Every workspace module the source series places in dsh-session, dsh-agent-loop or dsh-compaction-basic
 * ({@link TARGETS}) is copied from its built `lib/` output (JavaScript and declarations) under the file name the series
 * gives it, with its imports pointed inside DSH: a workspace module to its copy (a sibling file in the same package,
 * else dsh-session, whose entry exports what another package's copy imports), a workspace package's name to the copy
 * of the module exporting it, and a name of the copy's own package to the compiled file of the unmodified npm package
 * that exports it (the session's and the loop's bundles re-export their copies, so importing the bundle from a copy
 * would be a cycle). A workspace module the series replaces by a hand-written one ({@link BOUND}) is not copied: the
 * patch's hand-written hunks carry that module. The patched packages' entry points export the public names
 * ({@link PUBLIC}), so the seam's API is the series' own; compaction-basic's copies are reached through its
 * `./projection` entry, a hand-written hunk as in the series.
 *
 * Usage: node compiled.ts write   rebuilds the dsh-session, dsh-agent-loop and dsh-compaction-basic patches in patches/ from the built
 *                                 workspace (`pnpm -r build` first) with `pnpm patch` and `pnpm patch-commit`
 *        node compiled.ts fill <package> <dir>   refreshes the copies in a folder `pnpm patch` prepared, for a
 *                                 hand-written hunk edited there before `pnpm patch-commit <dir>`
 * The drift check is test/scripts/compiled-patches.test.ts.
 * @module @dsh-seam/agent-loop-patch/source/compiled
 */

import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join, posix } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { BASIC, BOUND, exportingModule, LOOP, PUBLIC, SESSION, TARGETS } from './generate.ts'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..')
const VERSION = '0.1.0-rc.8'

/** Where the copies of one DSH package go, and the lines its entry points gain per copy. */
interface Place {
  readonly name: string
  /** The folder of the JavaScript copies. */
  readonly lib: string
  /** The folder of the declaration copies, when the package gets them. */
  readonly types?: string
  /** A `files` pattern the package.json must list for pnpm to keep the copies (pnpm patches only packed files). */
  readonly packed?: string
  /** The line each entry point gains for a copy, or none. */
  readonly entries: Readonly<Record<string, (copy: Placed) => string | undefined>>
  /** Files the patch's hand-written hunks add, which a refill keeps. */
  readonly hand?: readonly string[]
}

/**
 * The entry-point line exporting the public names ({@link PUBLIC}) a copy's workspace module declares, or none.
 * @param folder - the DSH source folder of the copy's package.
 * @param copy - the copy.
 * @param kind - the entry point's kind.
 * @param from - the copy as the entry point imports it.
 * @returns the line, if the copy declares a public name.
 */
function publicLine(folder: string, copy: Placed, kind: '.js' | '.d.ts', from: string): string | undefined {
  const target = TARGETS.find((t) => t.from.some(([source]) => source === copy.source))
  const names = target === undefined ? undefined : PUBLIC[folder]?.[posix.basename(target.file)]
  if (names === undefined) return undefined
  const text = readFileSync(join(ROOT, copy.source), 'utf8')
  const declared = (name: string): boolean => new RegExp(`^export (declare )?(abstract )?(class|function|const|interface|type) ${name}\\b`, 'm').test(text)
  const values = names.values.filter(declared)
  const types = names.types.filter(declared)
  if (values.length + types.length === 0) return undefined
  if (kind === '.js') return values.length === 0 ? undefined : `export { ${values.join(', ')} } from "${from}";`
  return `export { ${[...values, ...types.map((name) => `type ${name}`)].join(', ')} } from '${from}';`
}

const PLACES: Readonly<Record<string, Place>> = {
  // The session's API gains the public names of its copies, as the series' index exports them.
  [SESSION]: {
    name: '@deepseek-ai/dsh-session',
    lib: 'lib/types',
    types: 'lib/types',
    entries: {
      'lib/index.js': (copy) => publicLine(SESSION, copy, '.js', `./types/${copy.file}.js`),
      'lib/types/index.d.ts': (copy) => publicLine(SESSION, copy, '.d.ts', `./${copy.file}.js`),
    },
  },
  // The loop's API gains its error only.
  [LOOP]: {
    name: '@deepseek-ai/dsh-agent-loop',
    lib: 'lib',
    types: 'lib/types',
    packed: 'lib/context-*.js',
    entries: {
      'lib/index.js': (copy) => publicLine(LOOP, copy, '.js', `./${copy.file}.js`),
      'lib/types/index.d.ts': (copy) => publicLine(LOOP, copy, '.d.ts', `./${copy.file}.js`),
    },
  },
  // Compaction's root gains nothing: the projection-aware engine is its `./projection` entry.
  [`${BASIC}/src`]: {
    name: '@deepseek-ai/dsh-compaction-basic',
    lib: 'lib',
    types: 'lib/types',
    packed: 'lib/projection*.js',
    entries: {},
    hand: ['lib/config.js', 'lib/projection.js', 'lib/types/projection.d.ts'],
  },
}

/** Type-only names a dsh-session copy's declarations import from dsh-agent; the patched dsh-session declares them. */
const DECLARED_BY_SESSION: ReadonlySet<string> = new Set(['ContextNode'])

class CompileError extends Error {
  override readonly name = 'CompileError'
}

/** One file a patch adds, by its path in the package. */
export interface CompiledFile {
  readonly path: string
  readonly text: string
}

/** What the patch of one DSH package carries from the workspace. */
export interface CompiledPackage {
  readonly name: string
  readonly version: string
  readonly files: readonly CompiledFile[]
  /** The `files` pattern the patched package.json adds for them, if its own patterns do not cover them. */
  readonly packed: string | undefined
  /** Lines each entry point gains (one per copy, in copy order). */
  readonly entries: Readonly<Record<string, readonly string[]>>
  /** Files the patch's hand-written hunks add. */
  readonly hand: readonly string[]
}

interface Placed {
  readonly source: string
  readonly place: Place
  readonly file: string
  /** A module the patch's hand-written hunks carry ({@link BOUND}): imported by the copies, not copied. */
  readonly bound: boolean
}

/** Every placed workspace module with the copy's base name: a series file of several modules names the later ones `<file>-<module>`. */
function placements(): Map<string, Placed> {
  const placed = new Map<string, Placed>()
  const put = (source: string, folder: string, file: string, bound: boolean) => {
    const place = PLACES[folder]
    if (place !== undefined) placed.set(source, { source, place, file, bound })
  }
  for (const target of TARGETS) {
    const folder = posix.dirname(target.file)
    const file = posix.basename(target.file, '.ts')
    target.from.forEach(([source], i) => put(source, folder, i === 0 ? file : `${file}-${posix.basename(source, '.ts')}`, false))
  }
  for (const [source, byPackage] of Object.entries(BOUND)) {
    for (const [name, file] of Object.entries(byPackage)) {
      const folder = posix.dirname(file)
      if (PLACES[folder]?.name === name) put(source, folder, posix.basename(file, '.ts'), true)
    }
  }
  return placed
}

function stockFolder(name: string): string {
  return join(ROOT, 'stock/node_modules', name)
}

/**
 * The compiled file of the unmodified npm package (under `lib`) that exports each name; its root bundle only when the
 * patch adds no line to the entry points (a bundle that re-exports the copies cannot be imported by one).
 */
function exportersOf(place: Place): Map<string, string> {
  const exporters = new Map<string, string>()
  const folder = join(stockFolder(place.name), place.lib)
  const files = readdirSync(folder).filter((f) => f.endsWith('.js') && f !== 'index.js').sort()
  const reexports = Object.keys(place.entries).length > 0
  for (const file of reexports ? files : [...files, 'index.js']) {
    const text = readFileSync(join(folder, file), 'utf8')
    const declared = [...text.matchAll(/^export (?:async )?(?:function\*?|class|const|let|var) ([\w$]+)/gm)].map((m) => m[1]!)
    const listed = [...text.matchAll(/^export \{([^}]*)\}/gm)].flatMap((m) => m[1]!.split(',').map((e) => e.trim().split(/\s+as\s+/).at(-1)!))
    for (const name of [...declared, ...listed]) if (name !== '' && !exporters.has(name)) exporters.set(name, file)
  }
  return exporters
}

function libOf(source: string, ext: '.js' | '.d.ts'): string {
  return join(ROOT, source.replace('/src/', '/lib/').replace(/\.ts$/, ext))
}

/** The copy's text: imports pointed inside DSH, its module tag renamed, no source map reference. */
function relink(copy: Placed, kind: '.js' | '.d.ts', placed: Map<string, Placed>, exporters: Map<string, string>): string {
  const path = libOf(copy.source, kind)
  const text = readFileSync(path, 'utf8')
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, kind === '.js' ? ts.ScriptKind.JS : ts.ScriptKind.TS)
  const edits: { start: number; end: number; text: string }[] = []
  const fail = (message: string): never => {
    throw new CompileError(`${copy.source} (${kind}): ${message}`)
  }
  for (const statement of file.statements) {
    if (!ts.isImportDeclaration(statement) && !ts.isExportDeclaration(statement)) continue
    const literal = statement.moduleSpecifier
    if (literal === undefined || !ts.isStringLiteral(literal)) continue
    const specifier = literal.text
    const quote = (to: string) => edits.push({ start: literal.getStart(), end: literal.getEnd(), text: `'${to}'` })
    if (specifier.startsWith('.')) {
      const source = posix.join(posix.dirname(copy.source), specifier).replace(/\.js$/, '.ts')
      const sibling = placed.get(source) ?? fail(`imports ${specifier}, which lands in no patched DSH package`)
      if (sibling.place === copy.place) quote(`./${sibling.file}.js`)
      else if (sibling.place === PLACES[SESSION]) quote(sibling.place.name)
      else fail(`imports ${specifier}, which lands in ${sibling.place.name}, a dependant of ${copy.place.name}`)
    } else if (specifier.startsWith('@dsh-seam/')) {
      const bindings = ts.isImportDeclaration(statement) ? statement.importClause?.namedBindings : undefined
      if (bindings === undefined || !ts.isNamedImports(bindings)) fail(`imports ${specifier} other than by name`)
      const typeOnly = ts.isImportDeclaration(statement) && statement.importClause?.isTypeOnly === true
      const bySpecifier = new Map<string, string[]>()
      for (const element of (bindings as ts.NamedImports).elements) {
        const source = exportingModule(specifier, (element.propertyName ?? element.name).text) ?? fail(`imports ${element.name.text} from ${specifier}, which does not export it`)
        const home = placed.get(source) ?? fail(`imports ${element.name.text} from ${source}, which lands in no patched DSH package`)
        const to = home.place === copy.place ? `./${home.file}.js` : home.place.name
        bySpecifier.set(to, [...(bySpecifier.get(to) ?? []), element.getText()])
      }
      const lines = [...bySpecifier].map(([to, names]) => `import ${typeOnly ? 'type ' : ''}{ ${names.join(', ')} } from '${to}';`)
      edits.push({ start: statement.getStart(), end: statement.getEnd(), text: lines.join('\n') })
    } else if (specifier === copy.place.name || specifier.startsWith(`${copy.place.name}/`)) {
      if (kind === '.d.ts') {
        quote('./index.js')
        continue
      }
      const bindings = ts.isImportDeclaration(statement) ? statement.importClause?.namedBindings : undefined
      if (bindings === undefined || !ts.isNamedImports(bindings)) fail(`imports ${specifier} other than by name`)
      const byFile = new Map<string, string[]>()
      for (const element of (bindings as ts.NamedImports).elements) {
        const name = (element.propertyName ?? element.name).text
        const from = exporters.get(name) ?? fail(`imports ${name} from ${specifier}, which no compiled file of it exports`)
        byFile.set(from, [...(byFile.get(from) ?? []), element.getText()])
      }
      const lines = [...byFile].map(([from, names]) => `import { ${names.join(', ')} } from './${basename(from)}';`)
      edits.push({ start: statement.getStart(), end: statement.getEnd(), text: lines.join('\n') })
    } else if (specifier === '@deepseek-ai/dsh-agent' && copy.place.name === '@deepseek-ai/dsh-session') {
      const bindings = ts.isImportDeclaration(statement) ? statement.importClause?.namedBindings : undefined
      const names = bindings !== undefined && ts.isNamedImports(bindings) ? bindings.elements.map((e) => e.name.text) : []
      if (kind === '.js' || names.length === 0 || !names.every((n) => DECLARED_BY_SESSION.has(n))) {
        fail(`imports ${names.join(', ') || 'a value'} from dsh-agent, which dsh-session does not depend on`)
      }
      quote('./types.js')
    }
  }
  let out = text
  for (const edit of edits.sort((a, b) => b.start - a.start)) out = out.slice(0, edit.start) + edit.text + out.slice(edit.end)
  return out
    .replace(/^\/\/# sourceMappingURL=.*\n?/m, '')
    .replace(/@module @dsh-seam\/\S+/, `@module ${copy.place.name}/${copy.file}`)
}

/**
 * The files each patched DSH package carries from the workspace, and the entry-point lines that export them.
 * @returns one entry per DSH package that receives copies, in {@link PLACES} order.
 */
export function compiledPackages(): CompiledPackage[] {
  const placed = placements()
  return Object.values(PLACES).map((place) => {
    const exporters = exportersOf(place)
    const copies = [...placed.values()].filter((p) => p.place === place && !p.bound)
    const files: CompiledFile[] = []
    for (const copy of copies) {
      files.push({ path: `${place.lib}/${copy.file}.js`, text: relink(copy, '.js', placed, exporters) })
      if (place.types !== undefined) files.push({ path: `${place.types}/${copy.file}.d.ts`, text: relink(copy, '.d.ts', placed, exporters) })
    }
    const entries = Object.fromEntries(Object.entries(place.entries).map(([entry, line]) => [
      entry,
      copies.flatMap((c) => line(c) ?? []),
    ]))
    return { name: place.name, version: VERSION, files, packed: place.packed, entries, hand: place.hand ?? [] }
  })
}

/** The patch file pnpm keeps for a package. */
export function patchFile(name: string, version: string): string {
  return join(ROOT, 'patches', `${name.replace('/', '__')}@${version}.patch`)
}

/** The files a patch adds (`new file`), with their contents. */
export function addedFiles(patch: string): Map<string, string> {
  const added = new Map<string, string>()
  for (const block of patch.split(/^(?=diff --git )/m)) {
    if (!/^new file mode /m.test(block)) continue
    const path = /^\+\+\+ b\/(.+)$/m.exec(block)?.[1]
    if (path === undefined) throw new CompileError(`a new file in the patch has no +++ line`)
    const body = block.slice(block.indexOf('\n@@') + 1).split('\n').slice(1)
    const lines: string[] = []
    let newline = true
    for (const line of body) {
      if (line.startsWith('+')) lines.push(line.slice(1))
      else if (line.startsWith('\\ No newline')) newline = false
    }
    added.set(path, lines.join('\n') + (newline ? '\n' : ''))
  }
  return added
}

/**
 * Write a package's copies into a folder `pnpm patch` prepared, replacing the copies the previous patch added, and
 * its entry points' export lines.
 */
export function fill(pkg: CompiledPackage, dir: string): void {
  const previous = [...addedFiles(readFileSync(patchFile(pkg.name, pkg.version), 'utf8')).keys()].filter((path) => !pkg.hand.includes(path))
  for (const path of previous) if (existsSync(join(dir, path))) unlinkSync(join(dir, path))
  for (const file of pkg.files) writeFileSync(join(dir, file.path), file.text)
  if (pkg.packed !== undefined) {
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { files: string[] }
    if (!manifest.files.includes(pkg.packed)) {
      manifest.files.splice(manifest.files.findIndex((f) => f.startsWith('lib/types')), 0, pkg.packed)
      writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`)
    }
  }
  const stale = previous.map((p) => `/${posix.basename(p).replace(/\.(d\.ts|js)$/, '')}.js`)
  for (const [entry, wanted] of Object.entries(pkg.entries)) {
    const text = readFileSync(join(dir, entry), 'utf8')
    const lines = text.split('\n')
    const kept = lines.filter((line) => !wanted.includes(line) && !(line.startsWith('export ') && stale.some((file) => line.includes(file))))
    while (kept.at(-1) === '') kept.pop()
    const map = kept.at(-1)?.startsWith('//# sourceMappingURL=') === true ? [kept.pop()!] : []
    writeFileSync(join(dir, entry), [...kept, ...wanted, ...map, ...text.endsWith('\n') ? [''] : []].join('\n'))
  }
}

/** Rebuild one package's patch with pnpm's own tooling: a copy pnpm prepares (the current patch applied), filled, committed. */
function rewrite(pkg: CompiledPackage): void {
  const dir = mkdtempSync(join(tmpdir(), 'compiled-patch-'))
  rmSync(dir, { recursive: true })
  execFileSync('pnpm', ['patch', `${pkg.name}@${pkg.version}`, '--edit-dir', dir], { cwd: ROOT, stdio: 'inherit' })
  fill(pkg, dir)
  execFileSync('pnpm', ['patch-commit', dir], { cwd: ROOT, stdio: 'inherit' })
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [command, name, dir] = process.argv.slice(2)
  try {
    if (command === 'write' && name === undefined) for (const pkg of compiledPackages()) rewrite(pkg)
    else if (command === 'fill' && name !== undefined && dir !== undefined) {
      const pkg = compiledPackages().find((p) => p.name === name) ?? fail(`${name} receives no compiled copies`)
      fill(pkg, dir)
    } else {
      console.error('usage: node compiled.ts write | fill <package> <pnpm-patch-dir>')
      process.exit(2)
    }
  } catch (error: unknown) {
    if (!(error instanceof CompileError)) throw error
    console.error(`compiled: ${error.message}`)
    process.exit(1)
  }
}

function fail(message: string): never {
  throw new CompileError(message)
}
