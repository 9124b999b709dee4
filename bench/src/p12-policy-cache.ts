/**
 * P12: what the source series' example context policy (`@deepseek-ai/dsh-context-policy-demo`, step 2) costs in input
 * tokens per request, and how much of each request a provider's prefix cache can reuse, for a grid of `recent` and
 * `block` on one long scripted session through the real loop.
 *
 * The policy is the series' own file: `series.sh apply` writes the series onto a copy of the DSH checkout that
 * `DSH_CHECKOUT` names (without one the section is skipped), and its `src/index.ts` is transpiled with the workspace's
 * TypeScript and mounted, with each grid point's config, on a real AgentLoop of the patched rc.8 set booted by
 * `@dsh-seam/loop-testkit` with DSH's runtime invariants on (the patched loop carries the series' host step).
 * @module bench/p12-policy-cache
 */

import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import ts from 'typescript'
import type { GenerateOptions, Message } from '@deepseek-ai/dsh-llm'
import type { ScriptEntry } from '@dsh-seam/loop-testkit'
import { bootLoop, canonicalJson, patchedDsh, textReply, toolCallReply } from '@dsh-seam/loop-testkit'
import type { Section } from './report.ts'
import { significant } from './stats.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const SERIES = join(ROOT, 'packages/agent-loop-patch/source')
const POLICY = 'packages/examples/context-policy-demo/src/index.ts'
/** Price of a cached input token relative to an uncached one (DeepSeek's API: cache hit 0.1× a cache miss). */
const HIT_PRICE = 0.1
const RECENT = [16, 32, 64]
const BLOCK = [1, 8, 16, 32, 64]

/** The policy module as cordis mounts it. */
interface PolicyModule { readonly name: string; readonly Config: unknown; apply(ctx: unknown, config: unknown): void }

/**
 * Apply the series to a copy of the DSH checkout and load its example policy, bound to the workspace's schemastery.
 * @param out - a scratch folder.
 * @returns the module, or why it cannot be built here.
 */
async function seriesPolicy(out: string): Promise<PolicyModule | string> {
  if (!process.env['DSH_CHECKOUT']) return 'DSH_CHECKOUT is not set (the policy is the source series\' file, applied to a DeepSeek Harness checkout at tag dsh-v0.1.1-rc.2)'
  const tree = join(out, 'dsh')
  try {
    execFileSync('bash', [join(SERIES, 'series.sh'), 'apply', tree], { stdio: ['ignore', 'ignore', 'pipe'] })
  } catch (error) {
    return String((error as { stderr?: Buffer }).stderr ?? error).trim().split('\n').at(-1) ?? 'series.sh apply failed'
  }
  const { outputText } = ts.transpileModule(readFileSync(join(tree, POLICY), 'utf8'), {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false },
    fileName: 'index.ts',
  })
  const bound = outputText.replace(/from '([^']+)'/g, (_match, specifier: string) => `from '${import.meta.resolve(specifier)}'`)
  const file = join(out, 'policy.mjs')
  writeFileSync(file, bound)
  return await import(pathToFileURL(file).href) as PolicyModule
}

/** Deterministic filler of about `words` words. */
function prose(seed: number, words: number): string {
  const vocabulary = ['build', 'test', 'module', 'config', 'parser', 'cache', 'request', 'session', 'handler', 'schema', 'error', 'index']
  return Array.from({ length: words }, (_, i) => vocabulary[(seed * 7 + i * 5) % vocabulary.length]).join(' ')
}

/** The user text of turn `turn`: a question; turns not divisible by 3 ask for one or two tool calls. */
function userTurn(turn: number): string {
  const calls = turn % 3 === 0 ? 0 : turn % 3
  return `Turn ${turn} (${calls} tool calls): ${prose(turn, 40)}`
}

/**
 * A reply that is a function of the request alone: while the open turn has made fewer `read` calls than its user text
 * asks for, one more call; then a text answer of about 60 words.
 */
function reply(): ScriptEntry {
  return (request: GenerateOptions, index: number) => {
    const messages = request.messages
    const opened = messages.findLastIndex(message => message.role === 'user' && message.source.kind === 'user')
    const asked = Number(/\((\d) tool calls\)/.exec(messages[opened]?.content.map(block => block.type === 'text' ? block.text : '').join('') ?? '')?.[1] ?? 0)
    const made = messages.slice(opened).flatMap(message => message.content).filter(block => block.type === 'tool-result').length
    if (made < asked) return toolCallReply([{ id: `call-${index}`, name: 'read', args: { path: `src/file-${index}.ts` } }])
    return textReply(`Answer ${index}: ${prose(index + 3, 60)}`)
  }
}

/** One grid point's figures over every request of the session. */
interface Figures { requests: number; input: number; cached: number; moves: number }

/**
 * Run the scripted session with `policy` mounted at `config` (no policy when undefined) and price every request.
 * @returns totals over the session's requests.
 */
async function measure(policy: PolicyModule | undefined, config: Record<string, number> | undefined, turns: number): Promise<Figures> {
  const dsh = await patchedDsh()
  const loop = await bootLoop(dsh, { fallback: reply(), plugins: policy === undefined ? [] : [[policy, config]] })
  // A file-reading tool: a short call, a result of about 150 words, as a coding agent's reads are.
  loop.ctx.tools.register(dsh.tools.defineContentToolFixture({
    name: 'read',
    description: 'Read a file.',
    parameters: { path: { type: 'string' } },
    execute: (args: Record<string, unknown>) => Promise.resolve([{ type: 'text' as const, text: `${String(args.path)}: ${prose(Number(/\d+/.exec(String(args.path))?.[0] ?? 0), 150)}` }]),
  }))
  const agent = loop.create('p12')
  for (let turn = 1; turn <= turns; turn++) await loop.say(agent, userTurn(turn))
  if (loop.errors.length > 0) throw new Error(`P12: ${String(loop.errors[0]?.error)}`)
  const meter = loop.ctx.tokenMeter
  const figures: Figures = { requests: 0, input: 0, cached: 0, moves: 0 }
  let previous: { header: string; messages: string[] } | undefined
  for (const request of loop.adapter.requests) {
    const header = canonicalJson({ system: request.system, tools: request.tools })
    const messages = request.messages.map(message => canonicalJson(message))
    const price = (message: Message): number => meter.estimateMessage(message)
    const headerTokens = meter.estimateHeader({ system: request.system, tools: request.tools } as Parameters<typeof meter.estimateHeader>[0])
    const input = headerTokens + request.messages.reduce((sum, message) => sum + price(message), 0)
    let common = 0
    if (previous !== undefined && previous.header === header) {
      while (common < previous.messages.length && common < messages.length && previous.messages[common] === messages[common]) common++
    }
    const cached = previous === undefined || previous.header !== header
      ? 0
      : headerTokens + request.messages.slice(0, common).reduce((sum, message) => sum + price(message), 0)
    if (previous !== undefined && common < previous.messages.length) figures.moves++
    figures.requests++
    figures.input += input
    figures.cached += cached
    previous = { header, messages }
  }
  await loop.ctx.fiber.dispose()
  return figures
}

/**
 * @param quick - a shorter session and a smaller grid, for a smoke run.
 * @param log - progress sink.
 * @returns the P12 section.
 */
export async function benchPolicyCache(quick: boolean, log: (line: string) => void): Promise<Section> {
  const turns = quick ? 60 : 300
  const out = mkdtempSync(join(tmpdir(), 'p12-'))
  const section = {
    id: 'P12',
    title: 'The example context policy: input tokens and prefix-cache reuse per request',
    method: `The source series' example policy (\`@deepseek-ai/dsh-context-policy-demo\`, \`series.sh apply\` on a copy of the DSH checkout `
      + '`DSH_CHECKOUT` names, its `src/index.ts` transpiled) mounted with `anchors: 1` and each `recent` × `block` on a real '
      + `AgentLoop of the patched rc.8 set with DSH's invariants on; one scripted session of ${turns} user turns (about 40 words `
      + 'each; two of every three turns ask for one or two calls of a `read` tool, each result about 150 words; every answer about 60 '
      + 'words), the same replies at every grid point. For every request the adapter receives: input tokens by DSH\'s token meter '
      + '(`estimateHeader` of its system prompt and tools plus `estimateMessage` of each message), cached tokens (the header and '
      + 'the longest run of leading messages equal to the previous request\'s, when the header is equal: what a provider\'s prefix '
      + 'cache can reuse), uncached = input − cached, and a price in uncached-token units, uncached + '
      + `${HIT_PRICE} × cached (DeepSeek's API prices a cache hit at a tenth of a miss). "moves" counts requests that do not extend `
      + 'the one before. Means per request; the first row is the loop without a policy.',
    target: 'informational: the defaults are the grid point the note names',
  }
  try {
    const policy = await seriesPolicy(out)
    if (typeof policy === 'string') return { ...section, verdict: 'not measured', skipped: policy, table: { columns: [], rows: [] } }
    const row = (label: [string, string], figures: Figures): string[] => {
      const uncached = figures.input - figures.cached
      return [
        ...label,
        `${figures.requests}`,
        `${figures.moves}`,
        significant(figures.input / figures.requests),
        `${(100 * figures.cached / figures.input).toFixed(1)}%`,
        significant(uncached / figures.requests),
        significant((uncached + HIT_PRICE * figures.cached) / figures.requests),
      ]
    }
    const rows: string[][] = [row(['none', '–'], await measure(undefined, undefined, turns))]
    log('P12 no policy measured')
    for (const recent of quick ? [32] : RECENT) {
      for (const block of quick ? [1, 32] : BLOCK) {
        rows.push(row([`${recent}`, `${block}`], await measure(policy, { recent, anchors: 1, block }, turns)))
        log(`P12 recent ${recent} block ${block} measured`)
      }
    }
    return {
      ...section,
      verdict: 'measured',
      table: {
        columns: ['recent', 'block', 'requests', 'moves', 'input tokens / request', 'cached share', 'uncached tokens / request', 'price / request'],
        rows,
      },
    }
  } finally {
    rmSync(out, { recursive: true, force: true })
  }
}
