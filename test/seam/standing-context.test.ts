/**
 * Standing context (RFC 0001, host invariant 2): what DSH's producers show once and re-show only when it leaves the
 * surface is sent with every request whatever a listener selects: the AGENTS.md baseline and its changes
 * (`@deepseek-ai/dsh-agent-instructions`), the skill catalog and each invoked skill body (`@deepseek-ai/dsh-tool-skill`),
 * and the newest runtime-context snapshot. The real producers run on the real loop, with a keep-last-2 listener.
 */

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as agentInstructions from '@deepseek-ai/dsh-agent-instructions'
import LocalFileSystem from '@deepseek-ai/dsh-fs-local'
import type { Message } from '@deepseek-ai/dsh-llm'
import SkillRegistry from '@deepseek-ai/dsh-skill'
import * as toolSkill from '@deepseek-ai/dsh-tool-skill'
import { bootLoop, patchedDsh, textReply, toolCallReply } from '@dsh-seam/loop-testkit'
import { afterAll, describe, expect, it } from 'vitest'
import { expectRequestsRebuiltFromLog, requestsOf } from './support.ts'

const dsh = await patchedDsh()
const roots: string[] = []
afterAll(() => { for (const root of roots) rmSync(root, { recursive: true, force: true }) })

/** A project folder with an AGENTS.md and a nested one, and a loop with the real producers mounted. */
async function producers() {
  const cwd = mkdtempSync(join(tmpdir(), 'standing-'))
  roots.push(cwd)
  writeFileSync(join(cwd, 'AGENTS.md'), '# Ferry rules\nAnswer in haiku.\n')
  mkdirSync(join(cwd, 'deck'))
  writeFileSync(join(cwd, 'deck', 'AGENTS.md'), '# Deck rules\nCount the passengers.\n')
  writeFileSync(join(cwd, 'deck', 'manifest.txt'), 'twelve passengers\n')
  const loop = await bootLoop(dsh, {
    fallback: textReply('ok'),
    plugins: [[LocalFileSystem, { cwd }], [agentInstructions, { maxBytes: 32_768, dshHome: join(cwd, '.dsh-home') }], [SkillRegistry, {}], [toolSkill, {}]],
  })
  loop.ctx.skills.register({ name: 'poetry', description: 'Write poems.', content: 'Use iambic meter.', source: 'runtime' })
  const agent = loop.ctx.agentLoop.create(dsh.session.SessionId('standing'), { provider: 'fake', model: 'fake-model' }, { cwd })
  return { loop, agent, cwd }
}

const kindOf = (message: Message): string => message.source.kind

describe('standing context with the real producers and a keep-last-2 listener', () => {
  it('sends the AGENTS.md baseline, the skill catalog and an invoked skill body with every request after they appear', async () => {
    const { loop, agent } = await producers()
    agent.ctx.on('agent/context', async (_payload, next) => {
      const all = await next()
      return { include: all.include.slice(-2), revision: 'keep-last-2' }
    })
    for (let turn = 1; turn <= 14; turn++) await loop.say(agent, turn === 3 ? 'please /poetry now' : `turn ${turn}`)
    expect(loop.errors).toEqual([])
    const requests = requestsOf(loop, agent)
    expect(requests).toHaveLength(14)
    const firstWith = (kind: string): number => requests.findIndex(request => request.messages.some(m => kindOf(m) === kind))
    for (const [kind, from] of [['agent-instructions', 0], ['skill-catalog', 0], ['skill-invocation', 2]] as const) {
      expect(firstWith(kind), kind).toBe(from)
      const sentFrom = requests.slice(from).map(request => request.messages.some(m => kindOf(m) === kind))
      expect(sentFrom, `${kind} in every request from request ${from + 1}`).toEqual(sentFrom.map(() => true))
    }
    // The listener's choice still applies to everything else: the early user turns are left out.
    expect(requests.at(-1)!.messages.filter(m => kindOf(m) === 'user').map(m => m.content[0]?.type === 'text' && m.content[0].text)).toEqual(['turn 14'])
    // Each producer showed its context once: a request that keeps it shows the producer it is still on the surface.
    const shown = (kind: string) => agent.session.events.filter(e => e.type === 'user/message' && e.data.source.kind === kind).length
    expect([shown('agent-instructions'), shown('skill-catalog'), shown('skill-invocation')]).toEqual([1, 1, 1])
    expect(expectRequestsRebuiltFromLog(loop, agent)).toBe(14)
  })

  it('keeps an instructions change (a nested AGENTS.md read later) beside the baseline', async () => {
    const { loop, agent, cwd } = await producers()
    agent.ctx.on('agent/context', async (_payload, next) => ({ include: (await next()).include.slice(-1), revision: 'keep-last-1' }))
    await loop.say(agent, 'hello')
    // A tool result that touches the nested folder makes agent-instructions publish its AGENTS.md as a change.
    loop.ctx.tools.register(dsh.tools.defineContentToolFixture({
      name: 'read',
      description: 'Read a file.',
      parameters: { file_path: { type: 'string' } },
      execute: () => Promise.resolve([{ type: 'text' as const, text: 'twelve passengers' }]),
    }))
    loop.adapter.script.push(toolCallReply([{ id: 'read-1', name: 'read', args: { file_path: join(cwd, 'deck', 'manifest.txt') } }]))
    await loop.say(agent, 'read the manifest')
    for (const text of ['and then', 'and after']) await loop.say(agent, text)
    expect(loop.errors).toEqual([])
    const instructions = agent.session.events.filter(e => e.type === 'user/message' && e.data.source.kind === 'agent-instructions')
    expect(instructions.length).toBeGreaterThanOrEqual(2)
    const last = requestsOf(loop, agent).at(-1)!
    expect(last.messages.filter(m => kindOf(m) === 'agent-instructions')).toHaveLength(instructions.length)
  })
})
