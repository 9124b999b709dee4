/**
 * P1-src: what the source series' step costs without an `agent/context` listener, against the stock step's
 * `session.deriveMessages()`, on one real stock session at 1,000 and 10,000 surface nodes.
 *
 * The series' code is the series itself: `series.sh apply` writes step 1 onto a copy of the DSH checkout that
 * `DSH_CHECKOUT` names (tag dsh-v0.1.1-rc.2, the series' base; without one the row is skipped), and the seam's files
 * it adds (the host and the generated session modules) are transpiled with the workspace's TypeScript and bound to
 * the unmodified npm rc.8 packages under `stock/` (dsh-agent's dispatch is stock's: the series does not change it).
 * Type checking of those files is DSH's build in scripts/source-checkout.sh; this bench times them.
 * @module bench/p1-src
 */

import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import ts from 'typescript'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { Message } from '@deepseek-ai/dsh-llm'
import type { DshModules } from '@dsh-seam/loop-testkit'
import { bootLoop, conversationReply, conversationTurn, stockDsh } from '@dsh-seam/loop-testkit'
import type { Section } from './report.ts'
import { verdict } from './report.ts'
import { collectGarbage, median, significant } from './stats.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const SERIES = join(ROOT, 'packages/agent-loop-patch/source')
const STOCK_MODULES = join(ROOT, 'stock/node_modules')
const TARGET = 1.1
const MIN_EVENTS_PER_NODE = 5

/** The series' host entry, as the patched `ReactLoopAgent.step()` calls it. */
type SeriesHost = (agent: Agent, request: { turn: number; step: number; system: string; tools: readonly never[]; signal: AbortSignal }) => Promise<Message[]>
/** What the series adds that the step calls. */
interface Series {
  readonly host: SeriesHost
}

/** The entry file of an npm package under `stock/`, from its `exports["."]` (or `exports["./<subpath>"]`). */
function stockEntry(name: string, subpath = '.'): string {
  const dir = join(STOCK_MODULES, name)
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { exports?: Record<string, unknown>; main?: string }
  const root = pkg.exports?.[subpath]
  const entry = typeof root === 'string' ? root : (root as { default?: string; import?: string } | undefined)?.default ?? (root as { import?: string } | undefined)?.import ?? pkg.main
  if (entry === undefined) throw new Error(`P1-src: stock ${name} has no entry`)
  return pathToFileURL(join(dir, entry)).href
}

/**
 * Apply step 1 of the series to a copy of the DSH checkout and transpile the seam's files into `out`, their imports bound to
 * the stock npm packages plus the transpiled files.
 * @returns the series' host entry, or why it cannot be built here.
 */
async function seriesModules(out: string): Promise<Series | string> {
  if (!process.env['DSH_CHECKOUT']) return 'DSH_CHECKOUT is not set (the row times the source series, which applies to a DeepSeek Harness checkout at tag dsh-v0.1.1-rc.2)'
  const tree = join(out, 'dsh')
  try {
    execFileSync('bash', [join(SERIES, 'series.sh'), 'apply', tree, '--steps', '1'], { stdio: ['ignore', 'ignore', 'pipe'] })
  } catch (error) {
    return String((error as { stderr?: Buffer }).stderr ?? error).trim().split('\n').at(-1) ?? 'series.sh apply failed'
  }
  const generated = execFileSync('node', [join(SERIES, 'generate.ts'), '--list'], { encoding: 'utf8' }).split('\n')
  const files = generated.filter(file => /^packages\/core\/(session|agent-loop)\/src\//.test(file))
  const js = (file: string): string => join(out, 'js', file.replace(/\.ts$/, '.js'))
  const shims = {
    '@deepseek-ai/dsh-session': join(out, 'js/session.js'),
  }
  mkdirSync(join(out, 'js'), { recursive: true })
  writeFileSync(join(out, 'js/package.json'), '{ "type": "module" }\n')
  const sessionFiles = files.filter(file => file.startsWith('packages/core/session/'))
  writeFileSync(shims['@deepseek-ai/dsh-session'], [
    `export * from '${stockEntry('@deepseek-ai/dsh-session')}'`,
    ...sessionFiles.map(file => `export * from '${pathToFileURL(js(file)).href}'`),
  ].join('\n'))
  for (const file of files) {
    const { outputText } = ts.transpileModule(readFileSync(join(tree, file), 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false },
      fileName: basename(file),
    })
    const bound = outputText.replace(/from '([^']+)'/g, (_match, specifier: string) => {
      if (specifier.startsWith('.')) {
        const sibling = join(dirname(file), specifier)
        if (files.includes(sibling)) return `from '${pathToFileURL(js(sibling)).href}'`
        // A module of the checkout's own package that the series does not change: the stock package exports it, at
        // its own subpath when it has one (dsh-session's `./surface`), else at the root.
        const pkg = file.startsWith('packages/core/session/') ? '@deepseek-ai/dsh-session' : '@deepseek-ai/dsh-agent-loop'
        const own = `./${basename(sibling, '.ts')}`
        const exported = (JSON.parse(readFileSync(join(STOCK_MODULES, pkg, 'package.json'), 'utf8')) as { exports?: Record<string, unknown> }).exports ?? {}
        return `from '${stockEntry(pkg, own in exported ? own : '.')}'`
      }
      if (specifier.startsWith('node:')) return `from '${specifier}'`
      const shim = shims[specifier as keyof typeof shims]
      if (shim !== undefined && !(file.startsWith('packages/core/session/') && specifier === '@deepseek-ai/dsh-session')) return `from '${pathToFileURL(shim).href}'`
      return `from '${stockEntry(specifier)}'`
    })
    mkdirSync(dirname(js(file)), { recursive: true })
    writeFileSync(js(file), bound)
  }
  const host = await import(pathToFileURL(js('packages/core/agent-loop/src/context-host.ts')).href) as { projectRequestMessages: SeriesHost }
  return { host: host.projectRequestMessages }
}

/**
 * Milliseconds per call of `call` and of `other`, alternating call by call (the first to go alternating), each call
 * timed alone, as P10 times each request: the medians, and the means with every garbage collection pause a side's
 * calls ran into.
 */
async function lockstep(call: () => unknown, other: () => unknown, calls: number): Promise<{ median: [number, number]; mean: [number, number] }> {
  const samples: [number[], number[]] = [[], []]
  collectGarbage()
  for (let i = 0; i < calls; i++) {
    for (const side of i % 2 === 0 ? [0, 1] as const : [1, 0] as const) {
      const run = side === 0 ? call : other
      const start = performance.now()
      await run()
      samples[side].push(performance.now() - start)
    }
  }
  const mean = (values: readonly number[]): number => values.reduce((sum, value) => sum + value, 0) / values.length
  return { median: [median(samples[0]), median(samples[1])], mean: [mean(samples[0]), mean(samples[1])] }
}

/** Grow the stock agent's session with the scripted conversation until it has `nodes` surface nodes. */
async function growTo(loop: Awaited<ReturnType<typeof bootLoop>>, agent: Agent, nodes: number, turn: { n: number }): Promise<void> {
  while (agent.session.surface.nodes.length < nodes) await loop.say(agent, conversationTurn(++turn.n))
  if (loop.errors.length > 0) throw new Error(`P1-src recording failed: ${String(loop.errors[0]?.error)}`)
}

/**
 * @param quick - one smaller size and fewer calls, for a smoke run.
 * @param log - progress sink.
 * @returns the P1-src section.
 */
export async function benchSeriesOverhead(quick: boolean, log: (line: string) => void): Promise<Section> {
  const out = mkdtempSync(join(tmpdir(), 'p1-src-'))
  const section = {
    id: 'P1-src',
    title: 'No-listener overhead of the source series\' step',
    method: 'Step 1 of the source series (`series.sh apply --steps 1` on a copy of the DSH checkout `DSH_CHECKOUT` names); its seam files (the host '
      + 'and the generated dsh-session modules) transpiled with the workspace\'s TypeScript and bound to the unmodified '
      + 'npm rc.8 packages. One real stock AgentLoop session grows by the scripted conversation (every third turn calls '
      + '`echo`) to each size; with no `agent/context` listener, calls of the series\' step selection (its `agent.ts`: '
      + '`await projectRequestMessages(...)`, which looks up the agent\'s `agent/context` listeners, finds none and '
      + 'returns `session.deriveMessages()`) alternate call by call '
      + 'with the stock step\'s `session.deriveMessages()` on that session (the first to go alternating), 20,000 calls '
      + 'each, every call timed alone. Before every call of either side one log-only event is appended, as a step '
      + 'appends its `step/start` and user messages, so nothing read of the log is cached from the call before; '
      + 'medians per call, as P10 takes medians per request.',
    target: `series/stock time per step ≤ ${TARGET} at 1,000 and 10,000 surface nodes with ≥ ${MIN_EVENTS_PER_NODE} events per node`,
  }
  try {
    const series = await seriesModules(out)
    if (typeof series === 'string') return { ...section, verdict: 'not measured', skipped: series, table: { columns: [], rows: [] } }
    const dsh: DshModules = await stockDsh()
    const loop = await bootLoop(dsh, { invariants: false, fallback: conversationReply() })
    const agent = loop.create('p1-src')
    const request = { turn: 1, step: 1, system: '', tools: [] as const, signal: new AbortController().signal }
    // Each call appends one log-only event first, as a step does (step/start, the step's user messages), so nothing
    // either side reads of the log is cached from the call before.
    const append = (): void => {
      agent.session.append('agent/inbox/spliced', { target: 'next-turn', start: 0, removedCount: 0, inserted: [] })
    }
    const step = (): Promise<Message[]> => {
      append()
      return series.host(agent, request)
    }
    const stockStep = (): Message[] => {
      append()
      return agent.session.deriveMessages()
    }
    const sizes = quick ? [1_000] : [1_000, 10_000]
    const rows: string[][] = []
    const ratios: number[] = []
    const differences: string[] = []
    const means: string[] = []
    const density: number[] = []
    const turn = { n: 0 }
    for (const nodes of sizes) {
      await growTo(loop, agent, nodes, turn)
      const { session } = agent
      const perNode = session.events.length / session.surface.nodes.length
      density.push(perNode)
      const same = JSON.stringify(await step()) === JSON.stringify(session.deriveMessages())
      if (!same) throw new Error('P1-src: the series\' step does not send what deriveMessages() derives')
      const timed = await lockstep(step, stockStep, quick ? 2_000 : 20_000)
      const [seriesMs, stock] = timed.median
      ratios.push(seriesMs / stock)
      means.push(`${significant(timed.mean[1] * 1000)} and ${significant(timed.mean[0] * 1000)} µs (${significant(timed.mean[0] / timed.mean[1])}) at ${session.surface.nodes.length} nodes`)
      differences.push(`${significant((seriesMs - stock) * 1e6)} ns at ${session.surface.nodes.length} nodes`)
      rows.push([
        `${session.surface.nodes.length}`,
        `${session.events.length}`,
        perNode.toFixed(1),
        significant(stock * 1000),
        significant(seriesMs * 1000),
        significant(seriesMs / stock),
      ])
      log(`P1-src ${nodes} nodes: series ${significant(seriesMs * 1000)} µs, stock ${significant(stock * 1000)} µs`)
    }
    await (loop.ctx as unknown as { fiber: { dispose(): Promise<unknown> } }).fiber.dispose()
    const worst = Math.max(...ratios)
    const dense = Math.min(...density) >= MIN_EVENTS_PER_NODE
    return {
      ...section,
      verdict: verdict(worst <= TARGET && dense, `worst ratio ${significant(worst)}, ${Math.min(...density).toFixed(1)} events per node`),
      table: {
        columns: ['surface nodes', 'log events', 'events per node', 'stock deriveMessages() µs', 'series step µs', 'series/stock'],
        rows,
      },
      notes: [
        'Without a listener for the agent, the series\' step looks `agent/context` up through cordis\' '
          + '`events.dispatch` (its payload gets the offer only once a listener is found), finds none and returns '
          + '`session.deriveMessages()`: no offer, no read of the log, no `agent/context-selected`, which follows the '
          + 'waterfall only. Both sides append before each call and read the same session.',
        `Series minus stock per step: ${differences.join('; ')}.`,
        `Means per call, stock and series, with the garbage collection pauses each side ran into: ${means.join('; ')}.`,
      ],
    }
  } finally {
    rmSync(out, { recursive: true, force: true })
  }
}
