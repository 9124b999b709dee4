/**
 * Both context modes on a real patched AgentLoop with DSH's invariants and projection-aware compaction: native sends
 * DSH's whole surface; managed sends the policy's selection, every request rebuilt from the log; the history tools
 * return text a request left out; memory notes come back from the log; switching happens only at idle boundaries.
 */

import type { Agent } from '@deepseek-ai/dsh-agent'
import type { GenerateOptions } from '@deepseek-ai/dsh-llm'
import { replayRequests, projectionEvents } from '@dsh-seam/agent-context'
import { contentText, contextModeOf, lastSelection, setContextMode, tavernBindings } from '@dsh-seam/agent-tavern'
import { priceRequest, requestEnvelope } from '@dsh-seam/compaction-effective-projection'
import type { BootedLoop } from '@dsh-seam/loop-testkit'
import { describe, expect, it } from 'vitest'
import { resolveConfig } from '../../packages/agent-tavern/src/config.ts'
import { activeMemories } from '../../packages/agent-tavern/src/memory.ts'
import { policyRevision } from '../../packages/agent-tavern/src/policy.ts'
import { expectRebuiltFromLog, loopRequests, MIRA, preloadedAssets, SMALL_POLICY, tavernAgent, tavernLoop } from './support.ts'

const price = (meter: Parameters<typeof priceRequest>[0], request: GenerateOptions): number =>
  priceRequest(meter, { header: requestEnvelope(request.system, request.tools), messages: request.messages })

const PLANT = 'I press a brass key into your palm. It is stamped with the number 417.'
const PROBE = 'Mira, do you remember the brass key I pressed into your palm? What number was stamped on it?'

async function walk(loop: BootedLoop, agent: Agent, turns: number): Promise<void> {
  for (let i = 1; i <= turns; i++) await loop.say(agent, `I walk along the reed bank, counting gulls (${i}).`)
}

describe('dsh-native', () => {
  it('sends DSH’s whole surface, logs no projection, keeps the kernel in the prompt and the scene preloaded once (preloadAssets)', async () => {
    const loop = await tavernLoop()
    const agent = await tavernAgent(loop, 'native', 'dsh-native', SMALL_POLICY, { preloadAssets: true })
    await walk(loop, agent, 3)
    await loop.say(agent, 'Keep this in mind: the lantern quay closes at the third bell.')
    await walk(loop, agent, 12)
    expect(loop.errors).toEqual([])
    const sent = loopRequests(loop)
    expect(projectionEvents(agent.session.events)).toEqual([])
    expect(JSON.stringify(sent.at(-1)!.messages)).toBe(JSON.stringify(agent.session.deriveMessages().slice(0, -1)))
    expect(sent.at(-1)!.system).toContain('call tavern_history_search')
    expect(preloadedAssets(sent.at(-1)!.messages)).toBe('Current scene: the ferry dock at dawn')
    expectRebuiltFromLog(sent, agent)
  })
})

describe('agent-managed', () => {
  it('sends node 0, the preloaded assets and the recent turns within budget, labelled with the policy revision', async () => {
    const loop = await tavernLoop()
    const agent = await tavernAgent(loop, 'managed', 'agent-managed', SMALL_POLICY, { preloadAssets: true })
    await walk(loop, agent, 2)
    await loop.say(agent, '(The scene changes: the reed maze on the eastern shore.)')
    await walk(loop, agent, 20)
    expect(loop.errors).toEqual([])
    const sent = loopRequests(loop)
    const logged = projectionEvents(agent.session.events)
    expect(logged.length).toBeGreaterThan(10)
    expect(new Set(logged.map(event => event.data.revision))).toEqual(new Set([policyRevision(resolveConfig({ character: MIRA, policy: SMALL_POLICY }).policy)]))
    const last = sent.at(-1)!
    expect(last.messages.length).toBeLessThan(agent.session.deriveMessages().length - 1)
    expect(last.messages[0]).toEqual(agent.session.deriveMessages()[0])
    expect(preloadedAssets(last.messages)).toBe('Current scene: the ferry dock at dawn')
    const selection = lastSelection(agent)!
    const { budget } = selection
    expect(selection.calibratedTokens).toBeLessThanOrEqual(budget.input)
    expect(selection.tokens).toBe(price(loop.ctx.tokenMeter, last))
    for (const request of sent) expect(price(loop.ctx.tokenMeter, request)).toBeLessThanOrEqual(budget.input)
    expect(Math.max(...sent.map(request => price(loop.ctx.tokenMeter, request)))).toBeLessThan(budget.kernel + budget.recent + budget.retrieved + 2 * SMALL_POLICY.blockTokens)
    expectRebuiltFromLog(sent, agent)
  })

  it('recalls a node the projection left out: the tool returns text the request did not contain', async () => {
    const loop = await tavernLoop()
    const agent = await tavernAgent(loop, 'recall', 'agent-managed', { ...SMALL_POLICY, shares: { retrieved: 0 } })
    await walk(loop, agent, 1)
    await loop.say(agent, PLANT)
    const plant = agent.session.events.findLast(event => event.type === 'user/message' && event.data.source.kind === 'user')!
    const plantSeq = plant.seq
    await walk(loop, agent, 15)
    const before = loopRequests(loop).length
    await loop.say(agent, PROBE)
    expect(loop.errors).toEqual([])
    const [asking, answering] = loopRequests(loop).slice(before)
    expect(asking!.messages.map(message => contentText(message.content)).join('\n')).not.toContain('417')
    const replayed = replayRequests(agent.session.events).slice(before)
    expect(replayed[0]!.projection).toBeDefined()
    expect(replayed[0]!.messages.map(message => message.id)).not.toContain(plant.type === 'user/message' ? plant.data.id : undefined)
    const results = agent.session.events.filter(event => event.type === 'tool/result')
    expect(contentText(results.at(-1)!.data.message.content)).toContain(`"seq":${plantSeq}`)
    expect(contentText(results.at(-1)!.data.message.content)).toContain('stamped with the number 417')
    expect(answering!.messages.filter(m => contentText(m.content).includes('417')).map(m => m.source.kind)).toEqual(['tool'])
    const reply = agent.session.events.findLast(event => event.type === 'assistant/message')!
    expect(contentText(reply.data.message.content)).toContain('417')
    expectRebuiltFromLog(loopRequests(loop), agent)
  })

  it('reads excluded history exactly by seq and by turn range', async () => {
    const loop = await tavernLoop()
    const agent = await tavernAgent(loop, 'read', 'agent-managed')
    await loop.say(agent, PLANT)
    const plantSeq = agent.session.events.find(event => event.type === 'user/message')!.seq
    await walk(loop, agent, 15)
    await loop.say(agent, `CALL tavern_history_read {"fromSeq":${plantSeq}}`)
    const bySeq = contentText(agent.session.events.findLast(event => event.type === 'assistant/message')!.data.message.content)
    expect(bySeq).toBe(`RESULT ${JSON.stringify({ entries: [{ seq: plantSeq, turn: 1, role: 'user', text: PLANT }], truncated: false })}`)
    await loop.say(agent, 'CALL tavern_history_read {"fromTurn":1,"toTurn":2}')
    const byTurn = JSON.parse(contentText(agent.session.events.findLast(event => event.type === 'assistant/message')!.data.message.content).slice('RESULT '.length)) as { entries: { turn: number; role: string }[] }
    expect(byTurn.entries.map(entry => [entry.turn, entry.role])).toEqual([[1, 'user'], [1, 'assistant'], [2, 'user'], [2, 'assistant']])
    await loop.say(agent, 'CALL tavern_history_read {"fromSeq":1,"fromTurn":1}')
    expect(agent.session.events.findLast(event => event.type === 'tool/result')!.data.message.content[0].isError).toBe(true)
    expect(loop.errors).toEqual([])
    expectRebuiltFromLog(loopRequests(loop), agent)
  })

  it('keeps memory notes as logged tool calls: memory_search is rebuilt from the log', async () => {
    const loop = await tavernLoop()
    const agent = await tavernAgent(loop, 'memory', 'agent-managed', SMALL_POLICY, { preloadAssets: true })
    await loop.say(agent, 'Keep this in mind: the willow ford is only passable at low water.')
    await walk(loop, agent, 12)
    expect(activeMemories(agent.session.events).map(record => [record.text, record.tags, record.importance]))
      .toEqual([['the willow ford is only passable at low water', ['fact'], 0.7]])
    await loop.say(agent, 'CALL memory_search {"query":"willow ford water"}')
    const found = contentText(agent.session.events.findLast(event => event.type === 'assistant/message')!.data.message.content)
    expect(found).toMatch(/^RESULT \{"hits":\[\{"id":"call-\d+","text":"the willow ford is only passable at low water","tags":\["fact"\],"scope":"chat","importance":0.7,"confidence":1,"turn":1,/)
    expect(found).toMatch(/"truncated":false,"sourceCount":1\}$/)
    await loop.say(agent, 'CALL memory_write {"text":"too sure","importance":2}')
    expect(activeMemories(agent.session.events)).toHaveLength(1)
    expect(loop.errors).toEqual([])
  })
})

describe('switching modes', () => {
  it('switches at an idle turn boundary, records each switch in the binding, and refuses while a turn runs', async () => {
    const loop = await tavernLoop()
    const agent = await tavernAgent(loop, 'switch', 'dsh-native')
    await walk(loop, agent, 3)
    const logged = agent.session.events.length
    await setContextMode(agent, 'agent-managed')
    expect(contextModeOf(agent)).toBe('agent-managed')
    expect(tavernBindings(loop.ctx).get('switch')).toMatchObject({ architecture: 'agent-tavern', contextMode: 'agent-managed', since: logged })
    expect(agent.session.events).toHaveLength(logged)
    await walk(loop, agent, 12)
    expect(projectionEvents(agent.session.events).length).toBeGreaterThan(0)
    agent.followup(loop.user('I wave at the boathouse.'))
    await expect(setContextMode(agent, 'dsh-native')).rejects.toMatchObject({ code: 'agent-busy' })
    await agent.whenIdle()
    await setContextMode(agent, 'dsh-native')
    const count = projectionEvents(agent.session.events).length
    await walk(loop, agent, 2)
    expect(projectionEvents(agent.session.events)).toHaveLength(count)
    expect(JSON.stringify(loopRequests(loop).at(-1)!.messages)).toBe(JSON.stringify(agent.session.deriveMessages().slice(0, -1)))
    expect(tavernBindings(loop.ctx).get('switch')).toMatchObject({ architecture: 'agent-tavern', contextMode: 'dsh-native' })
    expect(loop.errors).toEqual([])
    expectRebuiltFromLog(loopRequests(loop), agent)
  })
})
