/**
 * Every code block of the READMEs (the root's, each package's and example's, and docs/) is checked here or run by
 * the consumer smoke test, and none is left out silently: each block is matched by exactly one rule below.
 *   - TypeScript and JavaScript snippets are type-checked against the workspace's DSH (patched) and packages, with the
 *     names the snippet assumes (an `agent`, a `ctx`) declared in front of it; documented interfaces must match the
 *     exported types both ways.
 *   - Blocks the smoke test runs (the root README's install block and boot example; docs/cli-bundles.md's steps 1 and
 *     2, which scripts/consumer-smoke/cli.sh performs) are matched against what the script reads or runs.
 *   - Every other shell block passes a command check: `npm run X` names a script, a repository path exists, a
 *     `dsh-seam` command exists, every `@dsh-seam/*` package is a public workspace package and every pinned DSH
 *     version is the workspace's.
 *   - The `dsh-seam` usage block equals the CLI's own `--help`; the YAML block is a row of AgentTavern's bundle whose
 *     config AgentTavern's schema accepts.
 * Exempt from running (their commands still pass the command check), and why: the blocks that need a DSH source
 * checkout (README "DSH source checks" and "Build DSH from source", an hour on two cores; `.ci/run` runs them when
 * `DSH_CHECKOUT` is set) or a DeepSeek API key (the live-provider lines of README and docs/cli-bundles.md), the demo
 * commands (`npm run tavern`, minutes; test/tavern/demo.test.ts runs the demo), and the seam-cli README's sample
 * `simulate` transcript (the 300-turn demo's figures; test/cli/simulate.test.ts checks the table). Exempt from the
 * type check: AgentTavern's README mounts it with a partial config, which cordis completes with the schema's defaults
 * at run time (test/tavern/support.ts mounts it so) but which its exported `Config` type, the schema's output, does
 * not admit; typing the input belongs to packages/agent-tavern/src, outside this test's change.
 */

import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { AgentTavern } from '@dsh-seam/agent-tavern'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8')

interface Block { readonly file: string; readonly index: number; readonly lang: string; readonly code: string; readonly section: string }

const DOCS = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter(name => name.endsWith('.md')).map(name => `docs/${name}`),
  ...['packages', 'examples'].flatMap(dir => readdirSync(join(ROOT, dir)).map(name => `${dir}/${name}/README.md`))].filter(path => existsSync(join(ROOT, path)))

/** The rule that checks a block: the first that matches it. */
const ruleOf = (block: Block): number => RULES.findIndex(rule => rule.matches(block))

const BLOCKS: Block[] = DOCS.flatMap(file => {
  const text = read(file)
  return [...text.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((match, index) => ({
    file, index, lang: match[1] as string, code: match[2] as string,
    section: [...text.slice(0, match.index).replace(/^```[\s\S]*?^```$/gm, '').matchAll(/^#+ (.*)$/gm)].at(-1)?.[1] ?? '',
  }))
})

const pkg = (dir: string) => JSON.parse(read(`${dir}/package.json`)) as { name: string; private?: boolean; scripts?: Record<string, string>; devDependencies?: Record<string, string> }
const PUBLIC = new Set(readdirSync(join(ROOT, 'packages')).map(name => pkg(`packages/${name}`)).filter(p => p.private !== true).map(p => p.name))
const PINS = pkg('.').devDependencies as Record<string, string>
const SCRIPTS = pkg('.').scripts as Record<string, string>
/** The dsh-seam commands, from the CLI's own usage text. */
const HELP = execFileSync(process.execPath, [join(ROOT, 'packages/seam-cli/bin/dsh-seam.js'), '--help'], { encoding: 'utf8' })
const COMMANDS = new Set([...HELP.matchAll(/dsh-seam (\w+)/g)].map(match => match[1] as string))

/** One logical line per command: continuations joined, comments dropped. */
const commandLines = (code: string): string[] => code.replace(/\\\n\s*/g, ' ').split('\n').map(line => line.replace(/(^|\s)#.*$/, '').trim()).filter(Boolean)

/** The problems of one shell block's commands. */
function commandProblems(code: string): string[] {
  const problems: string[] = []
  for (const line of commandLines(code)) {
    for (const command of line.split(/&&|\|\||\||;|\$\(|\)/).map(part => part.trim()).filter(Boolean)) {
      const words = command.replace(/^(\w+=("[^"]*"|'[^']*'|\S*)\s+)+/, '').split(/\s+/)
      const [head = '', second = '', third = ''] = words
      if (head === 'npm' && second === 'run' && SCRIPTS[third] === undefined) problems.push(`npm run ${third}: no such script`)
      if (['bash', 'sh', 'node'].includes(head) && /^(scripts|examples|packages)\//.test(second) && !existsSync(join(ROOT, second))) problems.push(`${second}: no such file`)
      const seam = words.indexOf('dsh-seam')
      if (seam >= 0 && words[seam + 1] !== undefined && !words[seam + 1]!.startsWith('-') && !COMMANDS.has(words[seam + 1]!)) problems.push(`dsh-seam ${words[seam + 1]}: no such command`)
      for (const word of words.filter(w => w.startsWith('@dsh-seam/'))) if (!PUBLIC.has(word)) problems.push(`${word}: not a public workspace package`)
      for (const [, name, version] of command.matchAll(/(@deepseek-ai\/[a-z0-9-]+)@([0-9][^\s"]*)/g)) {
        const pinned = name === '@deepseek-ai/dsh' ? PINS['@deepseek-ai/dsh-agent'] : PINS[name as string]
        if (pinned !== version) problems.push(`${name}@${version}: the workspace pins ${pinned}`)
      }
    }
  }
  return problems
}

const OUT = join(ROOT, 'out/readme-blocks')

/** What a snippet assumes, declared in front of it, per README and first line. */
const PREAMBLES: [file: string, starts: string, preamble: string, after?: string][] = [
  ['README.md', "agent.ctx.on('agent/context'", "import type { Agent } from '@deepseek-ai/dsh-agent'\nimport type {} from '@deepseek-ai/dsh-agent-loop'\ndeclare const agent: Agent\n"],
  ['packages/compaction-effective-projection/README.md', 'import ProjectionAwareCompactionEngine', "import type { Context } from '@deepseek-ai/cordis'\nimport type { Agent } from '@deepseek-ai/dsh-agent'\ndeclare const ctx: Context\ndeclare const agent: Agent\n"],
  ['packages/dsh-agent-context/README.md', 'interface RequestProjection', "import type { RequestProjection as Exported } from '@dsh-seam/agent-context'\n",
    'declare const documented: RequestProjection\ndeclare const exported: Exported\nexport const both: [Exported, RequestProjection] = [documented, exported]\n'],
  ['packages/dsh-agent-context/README.md', 'interface ReplayedRequest', "import type { Message } from '@deepseek-ai/dsh-llm'\nimport type { EpochHeader } from '@deepseek-ai/dsh-session'\nimport type { RequestProjection, ReplayedRequest as Exported } from '@dsh-seam/agent-context'\n",
    'declare const documented: ReplayedRequest\ndeclare const exported: Exported\nexport const both: [Exported, ReplayedRequest] = [documented, exported]\n'],
  ['packages/dsh-agent-context/README.md', 'import { firstRequestDivergence }', "import type { Agent } from '@deepseek-ai/dsh-agent'\nimport { createUserMessage, type GenerateOptions } from '@deepseek-ai/dsh-llm'\ndeclare function bootMyApp(): Promise<{ agent: Agent, adapter: { requests: GenerateOptions[] } }>\n"],
  ['packages/dsh-agent-context/README.md', 'import { sessionEventAt, TurnIndex }', "import type { Agent } from '@deepseek-ai/dsh-agent'\ndeclare const agent: Agent\n"],
  ['examples/context-policies/README.md', 'import { tokenBudget }', "import type { Context } from '@deepseek-ai/cordis'\nimport type { Agent } from '@deepseek-ai/dsh-agent'\nimport type {} from '@deepseek-ai/dsh-token-meter'\ndeclare const agent: Agent\ndeclare const ctx: Context\n"],
]

/** Type-checks snippets, each as a module under out/readme-blocks with its preamble; returns the diagnostics per file. */
function typeCheck(files: Map<string, string>): Map<string, string[]> {
  rmSync(OUT, { recursive: true, force: true })
  mkdirSync(OUT, { recursive: true })
  for (const [name, text] of files) writeFileSync(join(OUT, name), text)
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2023, lib: ['lib.es2024.d.ts'], module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: ['node'], strict: true, skipLibCheck: true, noEmit: true, allowImportingTsExtensions: true,
  }
  const program = ts.createProgram([...files.keys()].map(name => join(OUT, name)), options)
  const problems = new Map<string, string[]>([...files.keys()].map(name => [name, []]))
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const name = diagnostic.file?.fileName.slice(OUT.length + 1) ?? ''
    problems.get(name)?.push(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'))
  }
  return problems
}

/** How each block is checked: by the first rule that matches it; every block matches one. */
const RULES: { readonly name: string; readonly matches: (block: Block) => boolean }[] = [
  { name: 'type-checked snippet', matches: block => PREAMBLES.some(([file, starts]) => block.file === file && block.code.startsWith(starts)) },
  { name: 'run by consumer-smoke.sh: the install block', matches: block => block.file === 'README.md' && block.lang === 'sh' && block.section === 'Use it in your own DSH app' },
  { name: 'run by consumer-smoke.sh: the boot example', matches: block => block.file === 'README.md' && block.lang === 'js' && block.section === 'Use it in your own DSH app' },
  { name: 'performed by consumer-smoke/cli.sh: steps 1 and 2', matches: block => block.file === 'docs/cli-bundles.md' && /^(1|2)\. /.test(block.section.replace(/^#+\s*/, '')) },
  { name: 'the dsh-seam usage, equal to --help', matches: block => block.file === 'packages/seam-cli/README.md' && block.lang === '' && block.code.startsWith('dsh-seam inspect') },
  { name: 'AgentTavern bundle row', matches: block => block.lang === 'yaml' },
  { name: 'exempt: AgentTavern mounted with a partial config', matches: block => block.file === 'packages/agent-tavern/README.md' && block.code.startsWith('const agent = ctx.agentLoop.create') },
  { name: 'exempt: sample simulate transcript', matches: block => block.file === 'packages/seam-cli/README.md' && block.lang === '' && block.code.startsWith('$ npm run dsh-seam -- simulate') },
  { name: 'shell commands, checked', matches: block => block.lang === 'sh' },
]

describe('README code blocks', () => {
  it('every block is matched by a rule', () => {
    const unmatched = BLOCKS.filter(block => !RULES.some(rule => rule.matches(block)))
    expect(unmatched.map(block => `${block.file} #${block.index} (${block.lang || 'no language'}, section ${block.section})`)).toEqual([])
    expect(BLOCKS.length).toBeGreaterThan(20)
  })

  it('TypeScript and JavaScript snippets type-check against the workspace packages', () => {
    const snippets = BLOCKS.filter(block => ruleOf(block) === 0)
    expect(snippets.length).toBe(PREAMBLES.length)
    const files = new Map(snippets.map(block => {
      const [, , preamble, after = ''] = PREAMBLES.find(([file, starts]) => block.file === file && block.code.startsWith(starts))!
      return [`${block.file.replaceAll('/', '_')}-${block.index}.ts`, `${preamble}${block.code}${after}export {}\n`] as const
    }))
    expect(Object.fromEntries(typeCheck(files))).toEqual(Object.fromEntries([...files.keys()].map(name => [name, []])))
  }, 120_000)

  it('the root README\'s install block and boot example are what consumer-smoke.sh runs', () => {
    const smoke = read('scripts/consumer-smoke.sh')
    expect(smoke).toContain('## Use it in your own DSH app[\\s\\S]*?```sh')
    expect(smoke).toContain('## Use it in your own DSH app[\\s\\S]*?```js')
    const install = BLOCKS.find(block => ruleOf(block) === 1)!
    expect(commandLines(install.code).filter(line => line.startsWith('pnpm add '))).toHaveLength(1)
    expect(install.code.split('\n').filter(line => line.startsWith('# npm: '))).toHaveLength(1)
    expect(commandProblems(install.code.replace(/^# npm: /m, ''))).toEqual([])
  })

  it('docs/cli-bundles.md steps 1 and 2 are what consumer-smoke/cli.sh performs', () => {
    const cli = read('scripts/consumer-smoke/cli.sh').replace(/\\\n\s*/g, ' ').replace(/[ \t]+/g, ' ')
    const steps = BLOCKS.filter(block => ruleOf(block) === 3)
    expect(steps).toHaveLength(2)
    const [install, add] = steps.map(block => commandLines(block.code)) as [string[], string[]]
    expect(cli).toContain(install.find(line => line.startsWith('echo '))!.replace(/ > package.json$/, ''))
    const added = install.find(line => line.startsWith('pnpm add '))!.replace(/@0\.1\.0-rc\.8/g, '@$DSH').replace(/(@deepseek-ai\/dsh@\$DSH)/, '"$1"')
    expect(cli).toContain(added)
    expect(install.some(line => line.includes('pnpm exec dsh-seam setup && pnpm install'))).toBe(true)
    expect(cli).toContain('pnpm exec dsh-seam setup "$@"')
    expect(cli).toContain(add[0]!.replace(/^dsh /, '"$app/node_modules/.bin/dsh" '))
    for (const block of steps) expect(commandProblems(block.code)).toEqual([])
  })

  it('the dsh-seam usage block lists the commands as the CLI\'s --help does', () => {
    // A command's usage may wrap: an indented line continues the one above it.
    const commands = (text: string): string[] => text.split('\n').map(line => line.replace(/^usage:/, '      ')).reduce<string[]>((out, line) => {
      if (/^\s/.test(line) && out.length > 0 && !line.trim().startsWith('dsh-seam ')) out[out.length - 1] += ` ${line.trim()}`
      else out.push(line.trim())
      return out
    }, []).map(line => line.replace(/\s+/g, ' ')).filter(line => line.startsWith('dsh-seam '))
    const block = BLOCKS.find(b => ruleOf(b) === 4)!
    expect(commands(block.code.trim())).toEqual([...new Set(commands(HELP))])
  })

  it('the YAML block is a row of AgentTavern\'s bundle whose config AgentTavern accepts', () => {
    const yamlBlocks = BLOCKS.filter(block => ruleOf(block) === 5)
    expect(yamlBlocks.length).toBeGreaterThan(0)
    const bundle = parse(read('packages/agent-tavern/cordis.patch.yml'), { logLevel: 'error' }) as { id?: string; insert?: { id: string }[] }[]
    const rows = new Set(bundle.flatMap(entry => [entry.id, ...(entry.insert ?? []).map(row => row.id)]))
    for (const block of yamlBlocks) {
      for (const row of parse(block.code, { logLevel: 'error' }) as { id: string; config: unknown }[]) {
        expect(rows.has(row.id)).toBe(true)
        expect(() => AgentTavern.Config(row.config as never)).not.toThrow()
      }
    }
  })

  it('every other shell block names real scripts, files, commands, public packages and the pinned DSH versions', () => {
    const blocks = BLOCKS.filter(block => ruleOf(block) === RULES.length - 1)
    expect(blocks.length).toBeGreaterThan(10)
    expect(Object.fromEntries(blocks.map(block => [`${block.file} #${block.index}`, commandProblems(block.code)]))).toEqual(Object.fromEntries(blocks.map(block => [`${block.file} #${block.index}`, []])))
  })

  it('the command check catches what it is for', () => {
    expect(commandProblems('npm run no-such-script\nbash scripts/missing.sh\nnpx dsh-seam frobnicate x\npnpm add @dsh-seam/nope @deepseek-ai/dsh-llm@0.1.0-rc.9')).toEqual([
      'npm run no-such-script: no such script', 'scripts/missing.sh: no such file', 'dsh-seam frobnicate: no such command',
      '@dsh-seam/nope: not a public workspace package', '@deepseek-ai/dsh-llm@0.1.0-rc.9: the workspace pins 0.1.0-rc.8',
    ])
  })
})
