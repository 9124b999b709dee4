/**
 * `dsh-seam simulate` under policy modules that misbehave, run as their users would (the built executable on a log a
 * real patched loop persisted): a listener that never settles, exits the process, busy-loops, keeps a timer alive or
 * throws from a timer fails within `--listener-timeout` with one line naming the policy and the request (never exit 0
 * with nothing printed); a module's console output goes to stderr; a policy that mutates its offer cannot change what
 * another policy is offered; a throwing `probes()` names its policy.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { PolicyFigures } from '@dsh-seam/cli'
import { EXIT } from '@dsh-seam/cli'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { conversationLog, runCli } from './support.ts'

const KEEP_LAST_TURNS = fileURLToPath(import.meta.resolve('@dsh-seam/context-policies/keep-last-turns'))
const root = mkdtempSync(join(tmpdir(), 'dsh-seam-hostile-policy-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

let path: string

beforeAll(async () => {
  path = await conversationLog(join(root, 'sessions'), 'hostile', 8)
})

let modules = 0
/** A policy module named `hostile` whose listener body is `body` (it receives `{ nodes }` and `next`). */
function policy(body: string, extra = ''): string {
  const module = join(root, `policy-${++modules}.mjs`)
  writeFileSync(module, `export const name = 'hostile'\n${extra}\nexport function createListener() { return async ({ nodes }, next) => { ${body} } }\n`)
  return module
}

const REQUEST = 'listener at turn 1 step 1 \\(seq \\d+\\)'

describe('a policy that does not return a result fails on one line, naming the policy and the request', () => {
  it.each([
    ['never settles', 'return new Promise(() => {})', 'listener-timeout', `${REQUEST} did not return within 1000 ms \\(--listener-timeout\\)`],
    ['busy-loops', 'for (;;) {}', 'listener-timeout', `${REQUEST} did not return within 1000 ms`],
    ['keeps a timer alive and never settles', 'setInterval(() => {}, 10); return new Promise(() => {})', 'listener-timeout', `${REQUEST} did not return within 1000 ms`],
    ['calls process.exit(0)', 'process.exit(0)', 'policy-exited', `its worker ended \\(exit code 0\\) before ${REQUEST} returned a result`],
    ['throws from a timer and never settles', 'setTimeout(() => { throw new Error("late") }, 1); return new Promise(() => {})', 'listener-failed', `${REQUEST} failed outside the listener's result: Error: late`],
  ])('a listener that %s', (_, body, code, said) => {
    const module = policy(body)
    for (const json of [false, true]) {
      const run = runCli('simulate', path, '--policy', module, '--listener-timeout', '1000', ...json ? ['--json'] : [])
      expect(run.status).toBe(EXIT.unreadable)
      expect(run.stderr).toMatch(new RegExp(`^dsh-seam simulate: policy hostile: ${said}.* \\[${code}\\]\\n$`))
      if (json) expect(JSON.parse(run.stdout)).toMatchObject({ ok: false, error: { code, policy: 'hostile' } })
      else expect(run.stdout).toBe('')
    }
  })

  it('a module that busy-loops or exits while it loads, or whose createListener never returns', () => {
    for (const [source, code] of [
      ['for (;;) {}', 'listener-timeout'],
      ['process.exit(3)', 'policy-exited'],
      ['export const name = "slow"; export function createListener() { const end = Date.now() + 60_000; while (Date.now() < end); }', 'listener-timeout'],
    ] as const) {
      const module = join(root, `load-${++modules}.mjs`)
      writeFileSync(module, source)
      const run = runCli('simulate', path, '--policy', module, '--listener-timeout', '1000')
      expect(run.status).toBe(EXIT.unreadable)
      expect(run.stdout).toBe('')
      expect(run.stderr.split('\n'), run.stderr).toHaveLength(2)
      expect(run.stderr).toMatch(new RegExp(`^dsh-seam simulate: policy \\S+: (loading the module|createListener|its worker ended \\(exit code 3\\) before loading the module).* \\[${code}\\]\\n$`))
    }
  })

  it('a throwing or malformed probes() names its policy', () => {
    for (const [probes, said] of [
      ['() => { throw new Error("no story") }', 'probes\\(8\\) failed: Error: no story'],
      ['() => [{ turn: "x", refersTo: [] }]', 'probes returned .* at 0, not \\{ turn, refersTo: number\\[\\], fact\\?: string \\}'],
    ] as const) {
      const module = policy('return next()', `export const probes = ${probes}`)
      const run = runCli('simulate', path, '--policy', module)
      expect(run.status).toBe(EXIT.unreadable)
      expect(run.stderr).toMatch(new RegExp(`^dsh-seam simulate: policy hostile: ${said} \\[invalid-policy\\]\\n$`))
    }
  })

  it('--listener-timeout takes a whole number of milliseconds, for simulate only', () => {
    for (const args of [['simulate', path, '--policy', KEEP_LAST_TURNS, '--listener-timeout', '0'], ['simulate', path, '--policy', KEEP_LAST_TURNS, '--listener-timeout', '1.5s'], ['verify', path, '--listener-timeout', '100']]) {
      const run = runCli(...args)
      expect(run.status).toBe(EXIT.unreadable)
      expect(run.stderr).toMatch(/^dsh-seam: (--listener-timeout "[^"]+": expected a whole number of milliseconds from 1 to 2147483647|verify runs no policy: --listener-timeout is for simulate) \(run dsh-seam --help for usage\)\n$/)
    }
  })
})

describe('policies side by side', () => {
  it('a policy\'s console output goes to stderr, and stdout holds only the tables', () => {
    const module = policy('console.log("chatty", nodes.length); process.stdout.write("raw\\n"); return next()')
    const run = runCli('simulate', path, '--policy', module)
    expect(run.status).toBe(EXIT.ok)
    expect(run.stdout).not.toContain('chatty')
    expect(run.stdout).not.toContain('raw')
    expect(run.stdout.split('\n')[0]).toMatch(/^simulate /)
    expect(run.stderr).toMatch(/^(chatty \d+\nraw\n)+$/)
    const json = runCli('simulate', path, '--policy', module, '--json')
    expect(JSON.parse(json.stdout)).toMatchObject({ policies: [{ name: 'recorded' }, { name: 'hostile' }] })
  })

  it('each policy is offered its own frozen copy: one that tries to reverse or empty it changes nothing for the others', () => {
    const vandal = policy(`
      if (nodes.length < 2) return next()
      const tried = []
      for (const attempt of [() => nodes.reverse(), () => nodes.pop(), () => { nodes[0].message.content.length = 0 }, () => { nodes[0].seq = -1 }]) {
        try { attempt(); tried.push('changed') } catch { tried.push('refused') }
      }
      if (tried.includes('changed')) throw new Error('the offer is mutable: ' + tried.join(' '))
      return next()`)
    const figures = (...modules: string[]): PolicyFigures[] => {
      const run = runCli('simulate', path, ...modules.flatMap(module => ['--policy', module]), '--json')
      expect(run.stderr).toBe('')
      return (JSON.parse(run.stdout) as { policies: PolicyFigures[] }).policies
    }
    const alone = figures(KEEP_LAST_TURNS)
    const beside = figures(vandal, KEEP_LAST_TURNS)
    expect(beside[2]).toEqual(alone[1])
    expect(beside[1]).toMatchObject({ name: 'hostile', tokens: alone[0]!.tokens })
    expect(alone[1]!.tokens.sum).toBeLessThan(alone[0]!.tokens.sum)
  })
})
