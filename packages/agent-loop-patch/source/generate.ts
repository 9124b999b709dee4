/**
 * Generate the source series' seam modules from the workspace modules, the one implementation of the seam.
 *
 * Each generated DSH file is a list of top-level statements taken verbatim (with their JSDoc) from workspace
 * modules. Its imports are recomputed: a name a statement uses resolves through its workspace module's own imports
 * and declarations to a generated file (same package: `./file.ts`; another package: the package name), to a
 * hand-written series module standing in for a workspace module ({@link BOUND}), to a declaration in the target
 * package's own sources, or to an npm package unchanged. Whatever cannot be resolved fails the run with the name.
 *
 * Usage: node generate.ts <dsh-tree>   writes every generated file into the tree (a series checkout)
 *        node generate.ts --list        prints the repo-relative paths it writes
 * @module @dsh-seam/agent-loop-patch/source/generate
 */

import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..')
export const CORE = 'packages/dsh-agent-context/src'
export const HOST = 'packages/agent-loop-patch/src'
const COMPACTION = 'packages/compaction-effective-projection'
const CORE_TESTS = 'packages/dsh-agent-context/tests'
export const SESSION = 'packages/core/session/src'
export const LOOP = 'packages/core/agent-loop/src'
export const BASIC = 'packages/compaction/compaction-basic'

/** The DSH package (name and folder) of each folder a generated file lands in. */
const PACKAGES: Record<string, { readonly name: string; readonly root: string }> = {
  [SESSION]: { name: '@deepseek-ai/dsh-session', root: 'packages/core/session' },
  'packages/core/session/tests': { name: '@deepseek-ai/dsh-session', root: 'packages/core/session' },
  [LOOP]: { name: '@deepseek-ai/dsh-agent-loop', root: 'packages/core/agent-loop' },
  'packages/core/agent-loop/tests': { name: '@deepseek-ai/dsh-agent-loop', root: 'packages/core/agent-loop' },
  [`${BASIC}/src`]: { name: '@deepseek-ai/dsh-compaction-basic', root: BASIC },
  [`${BASIC}/tests`]: { name: '@deepseek-ai/dsh-compaction-basic', root: BASIC },
}
/** Packages a package may not import (its dependants, or packages it does not depend on); a name that would need one fails the run. */
const DEPENDANTS: Record<string, readonly string[]> = {
  '@deepseek-ai/dsh-session': ['@deepseek-ai/dsh-agent', '@deepseek-ai/dsh-agent-loop', '@deepseek-ai/dsh-compaction-basic'],
  '@deepseek-ai/dsh-agent-loop': ['@deepseek-ai/dsh-compaction-basic'],
  '@deepseek-ai/dsh-compaction-basic': ['@deepseek-ai/dsh-agent-loop'],
}

/** One generated file: workspace statements, by module and (optionally) by declared name. */
export interface Target {
  readonly file: string
  /** `[module, names]`: the named declarations of the module, or all it has left (`'*'`). */
  readonly from: readonly (readonly [string, readonly string[] | '*'])[]
}

/**
 * Where each workspace statement goes. What a log says about a request lives in dsh-session: the
 * `request/projection` reader (its shape, its one decoder, the pending rule), request replay, the surface fold both
 * follow a log with, and the replay error. The host's rules over surface nodes (tool units, the turn's input, standing
 * context, the required set), the selection normalizer, the encoder and the host with its error live in
 * dsh-agent-loop, in one module where every `AgentContextError` is thrown. Projection-aware compaction (engine, pure
 * parts, specs) lives in dsh-compaction-basic and reads requests through dsh-session's replay. dsh-agent-loop and
 * dsh-compaction-basic both read dsh-session, and neither depends on the other.
 */
export const TARGETS: readonly Target[] = [
  {
    file: `${SESSION}/request-projection.ts`,
    from: [
      [`${CORE}/projection.ts`, ['pendingProjection', 'endsPendingProjection', 'pendingProjectionOf', 'LoggedSession', 'requestMessagesFromLog']],
      [`${CORE}/check.ts`, '*'],
    ],
  },
  {
    file: `${SESSION}/request-replay.ts`,
    from: [[`${CORE}/replay.ts`, ['ReplayedRequest', 'ChunkEvent', 'ProjectionEvent', 'opensRequest', 'RequestReplay']]],
  },
  { file: `${SESSION}/context-nodes.ts`, from: [[`${CORE}/nodes.ts`, ['contextNodes', 'NodesMark', 'appendedNodes']]] },
  { file: `${SESSION}/surface-fold.ts`, from: [[`${CORE}/surface.ts`, '*']] },
  { file: 'packages/core/session/tests/request-projection.spec.ts', from: [[`${CORE_TESTS}/projection.test.ts`, '*']] },
  { file: `${LOOP}/context-nodes.ts`, from: [[`${CORE}/rules.ts`, '*']] },
  { file: `${LOOP}/context-host.ts`, from: [[`${CORE}/host.ts`, '*']] },
  { file: 'packages/core/agent-loop/tests/context-support.ts', from: [[`${CORE_TESTS}/support.ts`, '*']] },
  { file: 'packages/core/agent-loop/tests/context-nodes.spec.ts', from: [[`${CORE_TESTS}/rules.test.ts`, '*']] },
  { file: 'packages/core/agent-loop/tests/context-normalize.spec.ts', from: [[`${CORE_TESTS}/normalize.test.ts`, '*']] },
  { file: `${BASIC}/src/projection-calibration.ts`, from: [[`${COMPACTION}/src/calibration.ts`, '*']] },
  { file: `${BASIC}/src/projection-config.ts`, from: [[`${COMPACTION}/src/config.ts`, '*']] },
  { file: `${BASIC}/src/projection-engine.ts`, from: [[`${COMPACTION}/src/engine.ts`, '*']] },
  { file: `${BASIC}/src/projection-region.ts`, from: [[`${COMPACTION}/src/region.ts`, '*']] },
  { file: `${BASIC}/tests/projection-calibration.spec.ts`, from: [[`${COMPACTION}/tests/calibration.test.ts`, '*']] },
  { file: `${BASIC}/tests/projection-config.spec.ts`, from: [[`${COMPACTION}/tests/config.test.ts`, '*']] },
  { file: `${BASIC}/tests/projection-region.spec.ts`, from: [[`${COMPACTION}/tests/region.test.ts`, '*']] },
]

/**
 * The seam's public API: per DSH package, the names its entry point exports from each generated file (values, then
 * types). The series' index hunks export exactly these, and the compiled patches' entry points are written from it.
 */
export const PUBLIC: Readonly<Record<string, Readonly<Record<string, { readonly values: readonly string[]; readonly types: readonly string[] }>>>> = {
  [SESSION]: {
    'request-projection.ts': { values: ['ReplayError', 'requestMessagesFromLog'], types: ['ReplayErrorCode'] },
    'request-replay.ts': { values: ['RequestReplay'], types: ['ReplayedRequest'] },
    'surface-fold.ts': { values: ['SurfaceFold'], types: [] },
  },
  [LOOP]: {
    'context-host.ts': { values: ['AgentContextError'], types: ['AgentContextErrorCode'] },
  },
}

/** Workspace modules the series replaces with a hand-written module of the same exports, per importing DSH package. */
export const BOUND: Record<string, Record<string, string>> = {
  [`${COMPACTION}/src/basic.ts`]: { '@deepseek-ai/dsh-compaction-basic': `${BASIC}/src/config.ts` },
}

/** The workspace packages whose index re-exports the modules above. */
const WORKSPACE_PACKAGES: Record<string, string> = {
  '@dsh-seam/agent-context': `${CORE}/index.ts`,
  '@dsh-seam/agent-loop-patch': `${HOST}/index.ts`,
}

class GenerateError extends Error {
  override readonly name = 'GenerateError'
}

interface Declared {
  readonly module: string
  readonly statement: ts.Statement
  readonly exported: boolean
  readonly typeOnly: boolean
}

interface Imported {
  readonly specifier: string
  readonly name: string
  readonly typeOnly: boolean
  /** A default import: `import name from 'specifier'`. */
  readonly isDefault: boolean
}

interface Module {
  readonly path: string
  readonly source: ts.SourceFile
  readonly declarations: Map<string, Declared>
  readonly imports: Map<string, Imported>
  /** Imports binding no name (`import type {} from 'x'` for declaration merging), kept verbatim. */
  readonly bare: readonly string[]
  readonly body: readonly ts.Statement[]
  readonly doc: string | undefined
}

const modules = new Map<string, Module>()

function load(path: string): Module | undefined {
  const known = modules.get(path)
  if (known !== undefined) return known
  const file = join(ROOT, path)
  if (!existsSync(file)) return undefined
  const source = ts.createSourceFile(path, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true)
  const declarations = new Map<string, Declared>()
  const imports = new Map<string, Imported>()
  const bare: string[] = []
  const body: ts.Statement[] = []
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement)) {
      const specifier = (statement.moduleSpecifier as ts.StringLiteral).text
      const clause = statement.importClause
      const bindings = clause?.namedBindings
      if (clause === undefined || (clause.name === undefined && bindings !== undefined && ts.isNamedImports(bindings) && bindings.elements.length === 0)) {
        if (specifier.startsWith('.')) throw new GenerateError(`${path}: a bare relative import is not generatable: ${statement.getText()}`)
        bare.push(statement.getText())
        continue
      }
      if (bindings !== undefined && !ts.isNamedImports(bindings)) throw new GenerateError(`${path}: namespace imports are not generatable: ${statement.getText()}`)
      if (clause.name !== undefined) {
        imports.set(clause.name.text, { specifier, name: clause.name.text, typeOnly: clause.isTypeOnly, isDefault: true })
      }
      for (const element of bindings?.elements ?? []) {
        if (element.propertyName !== undefined) throw new GenerateError(`${path}: renamed import ${element.getText()}`)
        imports.set(element.name.text, { specifier, name: element.name.text, typeOnly: clause.isTypeOnly || element.isTypeOnly, isDefault: false })
      }
      continue
    }
    if (ts.isExportDeclaration(statement)) throw new GenerateError(`${path}: re-exports are not generatable: ${statement.getText()}`)
    body.push(statement)
    const exported = ts.getModifiers(statement as ts.HasModifiers)?.some(m => m.kind === ts.SyntaxKind.ExportKeyword) ?? false
    const typeOnly = ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement)
    for (const name of declaredNames(statement)) declarations.set(name, { module: path, statement, exported, typeOnly })
  }
  const first = source.statements[0]
  const doc = first === undefined
    ? undefined
    : ts.getLeadingCommentRanges(source.text, first.getFullStart())
      ?.map(range => source.text.slice(range.pos, range.end))
      .find(comment => comment.startsWith('/**') && comment.includes('@module'))
  const module: Module = { path, source, declarations, imports, bare, body, doc }
  modules.set(path, module)
  return module
}

function declaredNames(statement: ts.Statement): string[] {
  if (ts.isVariableStatement(statement)) {
    return statement.declarationList.declarations.map(d => {
      if (!ts.isIdentifier(d.name)) throw new GenerateError(`destructuring at top level is not generatable: ${d.getText()}`)
      return d.name.text
    })
  }
  const name = (statement as { name?: ts.Node }).name
  return name !== undefined && ts.isIdentifier(name) ? [name.text] : []
}

/** Identifiers a statement reads, declared names and property keys left out (an over-approximation is harmless). */
function usedNames(statement: ts.Statement): Set<string> {
  const names = new Set<string>()
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node)) {
      const parent = node.parent
      const key = (ts.isPropertyAccessExpression(parent) && parent.name === node)
        || (ts.isQualifiedName(parent) && parent.right === node)
        || ((ts.isPropertyAssignment(parent) || ts.isPropertySignature(parent) || ts.isPropertyDeclaration(parent)
          || ts.isMethodDeclaration(parent) || ts.isMethodSignature(parent) || ts.isGetAccessor(parent)) && parent.name === node)
      if (!key) names.add(node.text)
    }
    ts.forEachChild(node, visit)
  }
  ts.forEachChild(statement, visit)
  return names
}

/** Resolve a relative or workspace-package import of `from` to a workspace module path, if it is one. */
function workspaceModule(from: string, specifier: string, name: string): string | undefined {
  if (specifier.startsWith('.')) return relative(ROOT, join(ROOT, dirname(from), specifier))
  if (WORKSPACE_PACKAGES[specifier] === undefined) {
    if (specifier.startsWith('@dsh-seam/')) throw new GenerateError(`${from}: ${name} comes from ${specifier}, which the generator does not map`)
    return undefined
  }
  const path = exportingModule(specifier, name)
  if (path === undefined) throw new GenerateError(`${from}: ${specifier} does not export ${name}`)
  return path
}

/**
 * The workspace module a mapped workspace package's index re-exports a name from ({@link WORKSPACE_PACKAGES}).
 * @param specifier - a workspace package name.
 * @param name - an exported name.
 * @returns the module's repo-relative path, or undefined when the package is not mapped or does not export the name.
 */
export function exportingModule(specifier: string, name: string): string | undefined {
  const index = WORKSPACE_PACKAGES[specifier]
  if (index === undefined) return undefined
  const source = ts.createSourceFile(index, readFileSync(join(ROOT, index), 'utf8'), ts.ScriptTarget.Latest, true)
  for (const statement of source.statements) {
    if (!ts.isExportDeclaration(statement) || statement.exportClause === undefined || !ts.isNamedExports(statement.exportClause)) continue
    if (statement.exportClause.elements.some(e => e.name.text === name)) {
      return relative(ROOT, join(ROOT, dirname(index), (statement.moduleSpecifier as ts.StringLiteral).text))
    }
  }
  return undefined
}

/**
 * The file of `folder` (in the DSH tree) that declares and exports `name`, for imports of the target's own package;
 * `index.ts` only when no other file does.
 */
function ownFile(tree: string, folder: string, name: string): string | undefined {
  const pattern = new RegExp(`^export (?:declare )?(?:abstract )?(?:async )?(?:function\\*?|class|const|let|interface|type|enum) ${name}\\b`, 'm')
  const files = readdirSync(join(tree, folder)).filter(file => file.endsWith('.ts')).sort()
  for (const file of [...files.filter(file => file !== 'index.ts'), ...files.filter(file => file === 'index.ts')]) {
    if (pattern.test(readFileSync(join(tree, folder, file), 'utf8'))) return `${folder}/${file}`
  }
  return undefined
}

interface Plan {
  readonly target: Target
  readonly statements: { readonly module: Module; readonly statement: ts.Statement }[]
}

function plan(): { plans: Plan[]; home: Map<ts.Statement, Target> } {
  const home = new Map<ts.Statement, Target>()
  const named = new Set<ts.Statement>()
  for (const target of TARGETS) {
    for (const [path, names] of target.from) {
      if (names === '*') continue
      const module = load(path)
      if (module === undefined) throw new GenerateError(`${target.file}: its source ${path} does not exist`)
      for (const name of names) {
        const declared = module.declarations.get(name)
        if (declared === undefined) throw new GenerateError(`${target.file}: ${path} declares no ${name}`)
        home.set(declared.statement, target)
        named.add(declared.statement)
      }
    }
  }
  const plans: Plan[] = []
  for (const target of TARGETS) {
    const statements: Plan['statements'] = []
    for (const [path, names] of target.from) {
      const module = load(path)
      // A '*' source that does not exist yet (a module the workspace has not split out) contributes nothing.
      if (module === undefined) continue
      for (const statement of module.body) {
        const mine = names === '*' ? !named.has(statement) : home.get(statement) === target
        if (!mine) continue
        home.set(statement, target)
        statements.push({ module, statement })
      }
    }
    plans.push({ target, statements })
  }
  return { plans, home }
}

function packageOf(file: string): { folder: string; name: string; root: string } {
  const folder = dirname(file)
  const known = PACKAGES[folder]
  if (known === undefined) throw new GenerateError(`${file}: not in a known DSH package folder`)
  return { folder, ...known }
}

function specifierFor(target: string, file: string): string {
  const mine = packageOf(target)
  const theirs = packageOf(file)
  if (theirs.root !== mine.root) return theirs.name
  const path = relative(mine.folder, file)
  return path.startsWith('.') ? path : `./${path}`
}

function render(tree: string, { target, statements }: Plan, home: Map<ts.Statement, Target>): string {
  const { folder: targetFolder, name: pkg, root } = packageOf(target.file)
  // Names of the target's own package resolve in its src/ (a test folder imports them from there).
  const folder = `${root}/src`
  const imports = new Map<string, Map<string, boolean>>()
  const defaults = new Map<string, string>()
  const need = (specifier: string, name: string, typeOnly: boolean): void => {
    if (DEPENDANTS[pkg]?.includes(specifier)) throw new GenerateError(`${target.file} would import ${name} from ${specifier}, a dependant of ${pkg}`)
    const names = imports.get(specifier) ?? new Map<string, boolean>()
    names.set(name, (names.get(name) ?? true) && typeOnly)
    imports.set(specifier, names)
  }
  const local = new Set(statements.flatMap(({ statement }) => declaredNames(statement)))
  for (const { module, statement } of statements) {
    for (const name of usedNames(statement)) {
      if (local.has(name)) continue
      const declared = module.declarations.get(name)
      if (declared !== undefined) {
        const there = home.get(declared.statement)
        if (there === undefined) throw new GenerateError(`${module.path}: ${name} has no generated file`)
        if (!declared.exported) throw new GenerateError(`${target.file}: needs ${name}, which ${module.path} does not export, from ${there.file}`)
        need(specifierFor(target.file, there.file), name, declared.typeOnly)
        continue
      }
      const imported = module.imports.get(name)
      if (imported === undefined) continue
      if (imported.isDefault) {
        if (imported.specifier.startsWith('.') || imported.specifier.startsWith('@dsh-seam/')) throw new GenerateError(`${module.path}: default import ${name} from the workspace is not generatable`)
        defaults.set(imported.specifier, name)
        continue
      }
      const path = workspaceModule(module.path, imported.specifier, name)
      if (path !== undefined) {
        const bound = BOUND[path]?.[pkg]
        if (BOUND[path] !== undefined && bound === undefined) throw new GenerateError(`${target.file}: ${path} has no hand-written stand-in for ${pkg}`)
        if (bound !== undefined) {
          need(specifierFor(target.file, bound), name, imported.typeOnly)
          continue
        }
        const origin = load(path)?.declarations.get(name)
        const there = origin === undefined ? undefined : home.get(origin.statement)
        if (origin === undefined || there === undefined) throw new GenerateError(`${module.path}: ${name} (from ${path}) has no generated file`)
        need(specifierFor(target.file, there.file), name, imported.typeOnly || origin.typeOnly)
        continue
      }
      if (imported.specifier === pkg || imported.specifier.startsWith(`${pkg}/`) || DEPENDANTS[pkg]?.includes(imported.specifier)) {
        const file = ownFile(tree, folder, name)
        if (file === undefined) throw new GenerateError(`${target.file}: ${name} (from ${imported.specifier}) is declared by no file of ${folder}`)
        need(specifierFor(target.file, file), name, imported.typeOnly)
        continue
      }
      need(imported.specifier, name, imported.typeOnly)
    }
  }
  const sources = [...new Set(statements.map(({ module }) => module.path))]
  const primary = sources[0] === undefined ? undefined : modules.get(sources[0])
  const moduleName = `${pkg}/${target.file.slice(targetFolder.length + 1).replace(/\.(spec\.)?ts$/, '')}`
  // Test files carry no module JSDoc; source modules must.
  if (primary?.doc === undefined && !target.file.includes('/tests/')) throw new GenerateError(`${target.file}: its first source has no @module JSDoc`)
  const doc = primary?.doc?.replace(/@module \S+/, `@module ${moduleName}`)
  const external = (s: string): boolean => !s.startsWith('.')
  const bare = [...new Set(statements.flatMap(({ module }) => module.bare))]
  for (const specifier of defaults.keys()) if (!imports.has(specifier)) imports.set(specifier, new Map())
  const lines = [...imports]
    .sort(([a], [b]) => Number(external(b)) - Number(external(a)) || a.localeCompare(b))
    .flatMap(([specifier, names]) => {
      const all = [...names].sort(([a], [b]) => a.localeCompare(b))
      const types = all.filter(([, typeOnly]) => typeOnly).map(([n]) => n)
      const values = all.filter(([, typeOnly]) => !typeOnly).map(([n]) => n)
      const fallback = defaults.get(specifier)
      return [
        ...fallback === undefined ? [] : [`import ${fallback} from '${specifier}'`],
        ...types.length === 0 ? [] : [`import type { ${types.join(', ')} } from '${specifier}'`],
        ...values.length === 0 ? [] : [`import { ${values.join(', ')} } from '${specifier}'`],
      ]
    })
  // The file's own doc names the DSH module: a source module's JSDoc (the leading comment of its first statement when
  // it imports nothing) is dropped, and a statement's JSDoc keeps no workspace module tag.
  const body = statements.map(({ module, statement }) => {
    const text = statement.getFullText()
    return (module.doc === undefined ? text : text.replace(module.doc, ''))
      .replace(/^\s*\n/, '').replace(/\s+$/, '').replace(/^ \* @module @dsh-seam\/\S+\n/m, '')
  })
  const head = [...lines, ...bare]
  return [
    ...doc === undefined ? [] : [doc, ''],
    ...head.length === 0 ? [] : [...head, ''],
    body.join('\n\n'),
    '',
  ].join('\n')
}

/**
 * Write every generated file into a DSH tree.
 * @param tree - a checkout of the series (its own package sources resolve imports of the target's package).
 * @returns the repo-relative paths written.
 */
export function generate(tree: string): string[] {
  const { plans, home } = plan()
  const written: string[] = []
  for (const p of plans) {
    if (p.statements.length === 0) throw new GenerateError(`${p.target.file}: no statement of ${p.target.from.map(([m]) => m).join(', ')} lands here`)
    writeFileSync(join(tree, p.target.file), render(tree, p, home))
    written.push(p.target.file)
  }
  return written
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const tree = process.argv[2]
  if (tree === '--list') {
    for (const target of TARGETS) console.log(target.file)
    process.exit(0)
  }
  if (tree === undefined || !existsSync(join(tree, 'package.json'))) {
    console.error('usage: node generate.ts <dsh-tree>')
    process.exit(2)
  }
  try {
    for (const file of generate(tree)) console.log(file)
  } catch (error: unknown) {
    if (!(error instanceof GenerateError)) throw error
    console.error(`generate: ${error.message}`)
    process.exit(1)
  }
}
