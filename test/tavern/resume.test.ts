/**
 * The context mode across a resume from JSONL persistence: the session's binding, kept in the app's binding file,
 * decides the mode, a session without one runs `dsh-native`, and every request before and after the resume rebuilds
 * from the log. The log holds no AgentTavern event type, so any DSH build that knows its other events resumes it.
 */

import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { GenerateOptions } from '@deepseek-ai/dsh-llm'
import type { ContextMode } from '@dsh-seam/agent-tavern'
import { AgentTavern, contextModeOf, setContextMode, tavernBindings } from '@dsh-seam/agent-tavern'
import type { BootedLoop } from '@dsh-seam/loop-testkit'
import { afterAll, describe, expect, it } from 'vitest'
import { memoryRecords } from '../../packages/agent-tavern/src/memory.ts'
import { expectRebuiltFromLog, loopRequests, MIRA, SMALL_POLICY, tavernAgent, tavernLoop } from './support.ts'

const lastText = (agent: Agent): string => {
  const reply = agent.session.events.findLast(event => event.type === 'assistant/message')!
  return reply.type === 'assistant/message' ? reply.data.message.content.flatMap(block => block.type === 'text' ? [block.text] : []).join('') : ''
}

const roots: string[] = []
afterAll(() => { for (const root of roots) rmSync(root, { recursive: true, force: true }) })

function scratchRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'agent-tavern-resume-'))
  roots.push(root)
  return root
}

async function walk(loop: BootedLoop, agent: Agent, turns: number): Promise<void> {
  for (let i = 1; i <= turns; i++) await loop.say(agent, `I row past the heron pool, humming (${i}).`)
}

/** The app's binding file: where the mode is recorded, beside the sessions. */
const bindingsFile = (root: string): string => join(root, 'tavern-bindings.json')

/** Run a fresh session with persistence and flush it. */
async function persisted(id: string, contextMode: ContextMode, turns: number): Promise<{ root: string; loop: BootedLoop; agent: Agent }> {
  const root = scratchRoot()
  const loop = await tavernLoop({ persistRoot: root })
  tavernBindings(loop.ctx, bindingsFile(root))
  const agent = await tavernAgent(loop, id, contextMode)
  await walk(loop, agent, turns)
  await loop.ctx.sessions.flush(agent.session)
  return { root, loop, agent }
}

/** Resume a persisted session in a fresh loop and mount AgentTavern with a config that asks for `contextMode`. */
async function resumed(root: string, id: string, contextMode: string): Promise<{ loop: BootedLoop; agent: Agent }> {
  const loop = await tavernLoop({ persistRoot: root })
  tavernBindings(loop.ctx, bindingsFile(root))
  const { agent } = await loop.ctx.agentLoop.resume(loop.ctx, {
    resumeSessionId: loop.dsh.session.SessionId(id),
    agentOptions: { provider: 'fake', model: 'fake-model' },
  })
  await agent.ctx.plugin(AgentTavern, { character: MIRA, contextMode, policy: SMALL_POLICY, preloadAssets: true } as never)
  return { loop, agent }
}

/** Event types in the agent's log that DSH does not know: AgentTavern writes none. */
const foreignTypes = (loop: BootedLoop, agent: Agent): string[] =>
  agent.session.events.map(event => event.type as string).filter(type => !loop.dsh.session.KNOWN_SESSION_EVENT_TYPES.has(type))

describe('resuming a session', () => {
  it('without a recorded mode runs dsh-native, whatever mode a fresh session would get', async () => {
    const { root, loop: first } = await persisted('old', 'dsh-native', 3)

    const { loop, agent: again } = await resumed(root, 'old', 'agent-managed')
    expect(contextModeOf(again)).toBe('dsh-native')
    await walk(loop, again, 1)
    expect(loop.errors).toEqual([])
    expect(foreignTypes(loop, again)).toEqual([])
    expect(JSON.stringify(loopRequests(loop).at(-1)!.messages)).toBe(JSON.stringify(again.session.deriveMessages().slice(0, -1)))
    expectRebuiltFromLog([...loopRequests(first), ...loopRequests(loop)], again)
  })
})

describe('resuming a session its binding recorded', () => {
  it('runs the recorded mode; a switch back to native survives the next resume; every request rebuilds from the log', async () => {
    const { root, loop: first } = await persisted('managed', 'agent-managed', 12)
    const sent: GenerateOptions[] = [...loopRequests(first)]

    const second = await resumed(root, 'managed', 'dsh-native')
    expect(contextModeOf(second.agent)).toBe('agent-managed')
    await walk(second.loop, second.agent, 2)
    sent.push(...loopRequests(second.loop))
    expect(second.loop.errors).toEqual([])
    expect(sent.at(-1)!.messages.length).toBeLessThan(second.agent.session.deriveMessages().length - 1)
    expectRebuiltFromLog(sent, second.agent)
    await setContextMode(second.agent, 'dsh-native')
    await second.loop.ctx.sessions.flush(second.agent.session)

    const third = await resumed(root, 'managed', 'agent-managed')
    expect(contextModeOf(third.agent)).toBe('dsh-native')
    await walk(third.loop, third.agent, 1)
    sent.push(...loopRequests(third.loop))
    expect(third.loop.errors).toEqual([])
    expect(JSON.stringify(sent.at(-1)!.messages)).toBe(JSON.stringify(third.agent.session.deriveMessages().slice(0, -1)))
    expect(JSON.parse(readFileSync(bindingsFile(root), 'utf8'))).toMatchObject({ sessionBindings: { managed: { architecture: 'agent-tavern', contextMode: 'dsh-native' } } })
    expect(foreignTypes(third.loop, third.agent)).toEqual([])
    expectRebuiltFromLog(sent, third.agent)
  })
})

describe('memory across a resume', () => {
  it('a forgotten memory stays forgotten: the resumed log folds to the same memory, search and read agree', async () => {
    const root = scratchRoot()
    const first = await tavernLoop({ persistRoot: root })
    const agent = await tavernAgent(first, 'memory-resume', 'agent-managed', SMALL_POLICY, { preloadAssets: true })
    await first.say(agent, 'CALL memory_write {"text":"the cellar key is under the third plank","tags":["fact"]}')
    const id = (agent.session.events.findLast(event => event.type === 'tool/call')!.data as { callId: string }).callId
    await first.say(agent, 'CALL memory_write {"text":"the ford floods at high water","tags":["fact"]}')
    const { revision } = memoryRecords(agent.session.events).get(id)!
    await first.say(agent, `CALL memory_forget {"id":"${id}","revision":"${revision}"}`)
    const before = memoryRecords(agent.session.events)
    await first.ctx.sessions.flush(agent.session)

    const { loop, agent: again } = await resumed(root, 'memory-resume', 'agent-managed')
    expect(memoryRecords(again.session.events)).toEqual(before)
    expect(before.get(id)?.forgottenAt).toBeGreaterThan(0)
    await loop.say(again, 'CALL memory_search {"query":"cellar key plank"}')
    expect(lastText(again)).toMatch(/^RESULT \{"hits":\[\{"id":"[^"]+","text":"the ford floods at high water",.*\}\],"truncated":false,"sourceCount":1\}$/)
    await loop.say(again, `CALL memory_read {"id":"${id}"}`)
    expect(lastText(again)).toContain('was forgotten')
    expect(loop.errors).toEqual([])
    expectRebuiltFromLog([...loopRequests(first), ...loopRequests(loop)], again)
  })
})
