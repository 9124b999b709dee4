/**
 * What AgentTavern adds on the real patched loop: Chinese recall through the tools, memory kept as AgentTavern keeps
 * it, lore triggered by recent turns, the opening brief and anchors kept by the managed policy, a budget calibrated by
 * provider usage, and a policy that does not fit the route's window refused at mount.
 */

import type { Agent } from '@deepseek-ai/dsh-agent'
import type { GenerateOptions, StreamChunk } from '@deepseek-ai/dsh-llm'
import { AgentTavern, contentText, contextModeOf, contextModeRefusal, lastSelection, tavernBindings } from '@dsh-seam/agent-tavern'
import { projectionEvents } from '@dsh-seam/agent-context'
import { priceRequest, requestEnvelope } from '@dsh-seam/compaction-effective-projection'
import { describe, expect, it } from 'vitest'
import { reminderOf } from '../../packages/agent-tavern/src/anchor.ts'
import { expectRebuiltFromLog, loopRequests, MIRA, SMALL_POLICY, tavernAgent, tavernLoop, toolModel } from './support.ts'

const lastReply = (events: readonly { type: string; data: unknown }[]): string => {
  const reply = events.findLast(event => event.type === 'assistant/message') as { data: { message: { content: never } } }
  return contentText(reply.data.message.content)
}

describe('Chinese retrieval on the managed loop', () => {
  it('finds a Chinese fact the projection left out through tavern_history_search, and answers from the tool result', async () => {
    const loop = await tavernLoop()
    const agent = await tavernAgent(loop, 'zh-recall', 'agent-managed', { ...SMALL_POLICY, shares: { retrieved: 0 } })
    await loop.say(agent, '（场景转换：黎明时分灰色河口的渡口。）')
    await loop.say(agent, '我把一把黄铜钥匙塞进你的手心。钥匙上刻着数字417，能打开灯塔的地窖。')
    for (let i = 1; i <= 14; i++) await loop.say(agent, `我沿着芦苇岸走，数着头顶盘旋的海鸥（${i}）。`)
    const before = loopRequests(loop).length
    await loop.say(agent, '米拉，你还记得我塞进你手心的那把黄铜钥匙吗？上面刻着什么数字？')
    expect(loop.errors).toEqual([])
    const [asking] = loopRequests(loop).slice(before)
    expect(asking!.messages.map(message => contentText(message.content)).join('\n')).not.toContain('417')
    const calls = agent.session.events.filter(event => event.type === 'tool/call')
    expect(calls.at(-1)!.data.name).toBe('tavern_history_search')
    const result = contentText(agent.session.events.findLast(event => event.type === 'tool/result')!.data.message.content)
    expect(result).toContain('黄铜钥匙')
    expect(lastReply(agent.session.events)).toMatch(/^米拉沉默了好一会儿[\s\S]*417/)
    expectRebuiltFromLog(loopRequests(loop), agent)
  })
})

describe('memory tools', () => {
  it('write, search, read, update (id + revision) and forget through the loop; results carry truncated and sourceCount; a forgotten memory stays in the log', async () => {
    const loop = await tavernLoop()
    const agent = await tavernAgent(loop, 'memory-tools', 'agent-managed')
    const call = async (tool: string, args: object): Promise<unknown> => {
      await loop.say(agent, `CALL ${tool} ${JSON.stringify(args)}`)
      const text = lastReply(agent.session.events)
      expect(text.startsWith('RESULT ')).toBe(true)
      const body = text.slice('RESULT '.length)
      return body.startsWith('{') ? JSON.parse(body) : body
    }
    const { id, revision: written } = await call('memory_write', { text: '灯塔的地窖钥匙在米拉手里', tags: ['fact'], importance: 0.9, confidence: 0.6, scope: 'character' }) as { id: string; revision: string }
    await call('memory_write', { text: 'the ford floods at high water', tags: ['fact'] })
    const found = await call('memory_search', { query: '地窖钥匙在哪里' }) as { hits: { id: string; revision: string; importance: number }[] }
    expect(found).toMatchObject({
      hits: [{ id, text: '灯塔的地窖钥匙在米拉手里', scope: 'character', importance: 0.9, confidence: 0.6, truncated: false, revision: written }, { text: 'the ford floods at high water', importance: 0 }],
      truncated: false,
      sourceCount: 2,
    })
    expect(await call('memory_search', { query: 'ford', scope: 'character' })).toMatchObject({ hits: [{ id, score: 9 + 3 + 1 }], truncated: false, sourceCount: 1 })
    const { revision: updated } = await call('memory_update', { id, revision: written, text: '灯塔的地窖钥匙在旅人手里', confidence: 1 }) as { revision: string }
    expect(updated).not.toBe(written)
    expect(await call('memory_update', { id, revision: written, text: '灯塔的地窖钥匙在别人手里' })).toMatch(new RegExp(`changed: it is at revision ${updated}, not "${written}"; read it again with memory_read`))
    expect(await call('memory_read', { id })).toMatchObject({ id, text: '灯塔的地窖钥匙在旅人手里', confidence: 1, importance: 0.9, revision: updated })
    expect(await call('memory_forget', { id, revision: written })).toMatch(/changed: it is at revision/)
    expect(await call('memory_forget', { id, revision: updated })).toEqual({ id, forgotten: true })
    expect(await call('memory_search', { query: '地窖钥匙' })).toMatchObject({ hits: [{ text: 'the ford floods at high water' }], truncated: false, sourceCount: 1 })
    expect(await call('memory_read', { id })).toMatch(/was forgotten/)
    expect(await call('memory_update', { id, revision: updated, text: 'again' })).toMatch(/was forgotten/)
    expect(await call('memory_write', { text: 'bad', importance: 2 })).toMatch(/importance 2 is not between 0 and 1/)
    expect(agent.session.events.some(event => event.type === 'tool/call' && event.data.name === 'memory_forget')).toBe(true)
    expect(loop.errors).toEqual([])
    expectRebuiltFromLog(loopRequests(loop), agent)
  })
})

/** Opt in to preloading the scene, facts and triggered lore once, at activation. */
const PRELOAD = { preloadAssets: true }

const LORE = [
  { name: 'The salt mill', keywords: ['salt mill'], text: 'A ruined tide mill on the marsh edge.' },
  { name: '灯塔', keywords: ['灯塔'], text: '熄灭了十一年的灯塔。' },
]

describe('non-kernel content', () => {
  it('is fetched through tools by default: no scene, facts or lore context in any request; tavern_scene_get and memory_search return them', async () => {
    const loop = await tavernLoop()
    const agent = loop.create('through-tools')
    await agent.ctx.plugin(AgentTavern, { character: MIRA, scene: 'the ferry dock at dawn', contextMode: 'agent-managed', policy: SMALL_POLICY, lore: { entries: LORE, scanTurns: 2 } } as never)
    await loop.say(agent, 'CALL memory_write {"text":"the ford floods at high water","tags":["fact"]}')
    await loop.say(agent, 'We pass the old salt mill.')
    await loop.say(agent, 'CALL tavern_scene_get {}')
    await loop.say(agent, 'CALL memory_search {"query":"ford"}')
    expect(loop.errors).toEqual([])
    const tavernContexts = loopRequests(loop).flatMap(request => request.messages).filter(message => /Current scene:|Facts of the story:|World info:/.test(contentText(message.content)))
    expect(tavernContexts).toEqual([])
    const results = agent.session.events.filter(event => event.type === 'tool/result').map(event => contentText(event.data.message.content))
    expect(results.at(-2)).toBe('{"scene":"the ferry dock at dawn"}')
    expect(results.at(-1)).toContain('the ford floods at high water')
    expect(loopRequests(loop).at(-1)!.tools!.map(tool => tool.name)).toEqual(expect.arrayContaining(['tavern_scene_get', 'tavern_lore_search', 'memory_search']))
    expectRebuiltFromLog(loopRequests(loop), agent)
  })
})

/** The `dsh-tavern` snapshots of a request or log: the assets preloaded at activation. */
const preloads = (messages: readonly GenerateOptions['messages'][number][]): string[] =>
  messages.filter(message => message.source.kind === 'plugin' && message.source.plugin === 'dsh-tavern' && message.source.form === 'snapshot').map(message => contentText(message.content))

describe('preloadAssets: once, at activation', () => {
  it('preloads the scene and the lore the first batch triggers in one dsh-tavern snapshot, never again, which the managed policy keeps', async () => {
    const loop = await tavernLoop()
    const agent = loop.create('preload')
    await agent.ctx.plugin(AgentTavern, { character: MIRA, scene: 'the ferry dock at dawn', contextMode: 'agent-managed', policy: SMALL_POLICY, lore: { entries: LORE, scanTurns: 2 }, ...PRELOAD } as never)
    await loop.say(agent, 'We pass the old salt mill and the 灯塔 beyond it.')
    const [first] = loopRequests(loop)
    expect(preloads(first!.messages)).toEqual(['Current scene: the ferry dock at dawn\n\nWorld info:\n- The salt mill: A ruined tide mill on the marsh edge.\n- 灯塔: 熄灭了十一年的灯塔。'])
    for (let i = 1; i <= 14; i++) await loop.say(agent, `I walk along the reed bank, counting gulls (${i}).`)
    expect(lastSelection(agent)!.state.boundary).toBeGreaterThan(0)
    const logged = agent.session.events.flatMap(event => event.type === 'user/message' ? [event.data] : [])
    expect(preloads(logged)).toHaveLength(1)
    expect(preloads(loopRequests(loop).at(-1)!.messages)).toHaveLength(1)
    expect(loopRequests(loop).every(request => preloads(request.messages).length === 1)).toBe(true)
    expect(loop.errors).toEqual([])
    expectRebuiltFromLog(loopRequests(loop), agent)
  })

  it('is not retroactive: a session with turns bound later gets no preload', async () => {
    const loop = await tavernLoop()
    const agent = loop.create('preload-late')
    await loop.say(agent, 'We pass the old salt mill.')
    await agent.ctx.plugin(AgentTavern, { character: MIRA, scene: 'the ferry dock at dawn', policy: SMALL_POLICY, lore: { entries: LORE }, ...PRELOAD } as never)
    await loop.say(agent, 'We pass the old salt mill again.')
    expect(loopRequests(loop).flatMap(request => preloads(request.messages))).toEqual([])
  })
})

describe('lore', () => {
  it('is searchable with tavern_lore_search', async () => {
    const loop = await tavernLoop()
    const agent = loop.create('lore-search')
    await agent.ctx.plugin(AgentTavern, { character: MIRA, policy: SMALL_POLICY, lore: { entries: LORE } } as never)
    await loop.say(agent, 'CALL tavern_lore_search {"query":"灯塔在哪里"}')
    expect(lastReply(agent.session.events)).toBe(`RESULT ${JSON.stringify({ hits: [{ name: '灯塔', keywords: ['灯塔'], text: '熄灭了十一年的灯塔。' }], truncated: false, sourceCount: 2 })}`)
  })
})

describe('reminders', () => {
  it('appends the opening brief at turn 1 and an anchor every 5 turns; the managed policy keeps the brief and the newest anchor', async () => {
    const loop = await tavernLoop()
    const agent = await tavernAgent(loop, 'anchors', 'agent-managed')
    for (let i = 1; i <= 22; i++) await loop.say(agent, `I walk along the reed bank, counting gulls (${i}).`)
    const reminders = agent.session.events.flatMap(event => event.type === 'user/message' && reminderOf(event.data) !== undefined ? [event.data] : [])
    expect(reminders.map(message => message.id)).toEqual(['agent-tavern-opening-1', 'agent-tavern-anchor-5', 'agent-tavern-anchor-10', 'agent-tavern-anchor-15', 'agent-tavern-anchor-20'])
    expect(reminders.map(message => message.source)).toEqual([1, 5, 10, 15, 20].map(turn => ({ kind: 'plugin', plugin: 'dsh-tavern', form: turn === 1 ? 'tavern-opening' : 'tavern-anchor', turn })))
    const last = loopRequests(loop).at(-1)!
    const sentReminders = last.messages.filter(message => reminderOf(message) !== undefined).map(message => message.id)
    expect(sentReminders).toEqual(['agent-tavern-opening-1', 'agent-tavern-anchor-20'])
    expect(last.messages.length).toBeLessThan(agent.session.deriveMessages().length - 1)
    expect(loop.errors).toEqual([])
    expectRebuiltFromLog(loopRequests(loop), agent)
  })
})

describe('imported history', () => {
  it('is forgotten a message at a time: the boundary may sit on plugin-sourced user messages before the first turn', async () => {
    const loop = await tavernLoop()
    const agent = await tavernAgent(loop, 'imported', 'agent-managed')
    for (let i = 0; i < 8; i++) {
      const message = { id: `imported-${i}`, role: 'user', content: [{ type: 'text', text: `Imported line ${i}: ${'the old story of the estuary and its ferry. '.repeat(12)}` }], source: { kind: 'plugin', plugin: 'tavern-import', form: 'recall' } }
      agent.session.append('user/message', message as never, { surfaceOp: 'append' })
    }
    await loop.say(agent, 'hello')
    expect(loop.errors).toEqual([])
    const imported = loopRequests(loop)[0]!.messages.map(message => message.id).filter(id => id.startsWith('imported-'))
    expect(imported[0]).toBe('imported-0')
    expect(imported.length).toBeGreaterThan(1)
    expect(imported.length).toBeLessThan(8)
    expect(imported.slice(1)).toEqual(Array.from({ length: imported.length - 1 }, (_, i) => `imported-${8 - imported.length + 1 + i}`))
    expectRebuiltFromLog(loopRequests(loop), agent)
  })
})

describe('recall of every user-visible line', () => {
  it('finds an imported line (a plugin-sourced recall message) and an emoji-only line through tavern_history_search', async () => {
    const loop = await tavernLoop()
    const agent = await tavernAgent(loop, 'recall-sources', 'agent-managed')
    const imported = { id: 'imported-0', role: 'user', content: [{ type: 'text', text: 'Imported: the tide clock of Saltmere stopped at nine.' }], source: { kind: 'plugin', plugin: 'tavern-import', form: 'recall' } }
    agent.session.append('user/message', imported as never, { surfaceOp: 'append' })
    await loop.say(agent, '🌊🗝️🐚')
    await loop.say(agent, 'CALL tavern_history_search {"query":"tide clock Saltmere"}')
    await loop.say(agent, 'CALL tavern_history_search {"query":"🗝"}')
    expect(loop.errors).toEqual([])
    const results = agent.session.events.filter(event => event.type === 'tool/result').map(event => JSON.parse(contentText(event.data.message.content)) as { hits: { snippet: string; role: string }[]; sourceCount: number })
    expect(results[0]!.hits.map(hit => hit.snippet)).toEqual([expect.stringContaining('tide clock of Saltmere')])
    expect(results[1]!.hits.map(hit => hit.snippet)).toEqual(['🌊🗝️🐚'])
    expectRebuiltFromLog(loopRequests(loop), agent)
  })
})

describe('the route\'s context window', () => {
  it('is re-read when the route changes: the managed budget follows the new route\'s window from the next request', async () => {
    const windows: Record<string, number> = { 'fake-model': 40_000, 'small-model': 20_000 }
    const loop = await tavernLoop({ contextWindow: model => windows[model] ?? 0 })
    const agent = await tavernAgent(loop, 'route-change', 'agent-managed')
    let routed = 'fake-model'
    agent.ctx.on('agent/request', async (_payload, next) => ({ ...await next(), model: routed }))
    const budgets: number[] = []
    for (let i = 1; i <= 6; i++) {
      if (i === 4) routed = 'small-model'
      await loop.say(agent, `I walk along the reed bank, counting gulls (${i}).`)
      budgets.push(lastSelection(agent)!.budget.input)
    }
    expect(loop.errors).toEqual([])
    expect(loopRequests(loop).map(request => request.model)).toEqual(['fake-model', 'fake-model', 'fake-model', 'small-model', 'small-model', 'small-model'])
    expect(budgets).toEqual([37_600, 37_600, 37_600, 37_600, 18_800, 18_800])
    expectRebuiltFromLog(loopRequests(loop), agent)
  })
})

describe('the calibrated budget', () => {
  it('sends fewer estimated tokens when the provider reports twice the estimate, and stays within the cap in provider tokens', async () => {
    const run = async (factor: number): Promise<{ peak: number; cap: number; calibrated: number }> => {
      const pricing: { meter?: Parameters<typeof priceRequest>[0] } = {}
      const price = (request: GenerateOptions): number => priceRequest(pricing.meter!, { header: requestEnvelope(request.system, request.tools), messages: request.messages })
      const fallback = (request: GenerateOptions, index: number): StreamChunk[] => {
        const chunks = toolModel(request, index).filter(chunk => chunk.type !== 'usage')
        const usage = { type: 'usage', usage: { inputTokens: Math.round(price(request) * factor), outputTokens: 10 } } as StreamChunk
        return [...chunks.slice(0, -1), usage, ...chunks.slice(-1)]
      }
      const loop = await tavernLoop({ fallback })
      pricing.meter = loop.ctx.tokenMeter
      const agent = await tavernAgent(loop, `calibrated-${factor}`, 'agent-managed')
      for (let i = 1; i <= 24; i++) await loop.say(agent, `I walk along the reed bank, counting gulls (${i}).`)
      expect(loop.errors).toEqual([])
      expectRebuiltFromLog(loopRequests(loop), agent)
      const selection = lastSelection(agent)!
      return { peak: Math.max(...loopRequests(loop).slice(2).map(price)), cap: selection.budget.input, calibrated: selection.calibratedTokens }
    }
    const [plain, doubled] = [await run(1), await run(2)]
    expect(doubled.peak).toBeLessThan(plain.peak)
    expect(doubled.calibrated).toBeLessThanOrEqual(doubled.cap)
    expect(doubled.peak * 2).toBeLessThanOrEqual(doubled.cap)
  })
})

describe('mounting', () => {
  it.each([8_000, 32_000])('mounts dsh-native with the default config on a %i-token window: native capacity is not Tavern configuration', async contextWindow => {
    const loop = await tavernLoop({ contextWindow })
    const agent = loop.create(`native-${contextWindow}`)
    await agent.ctx.plugin(AgentTavern, { character: MIRA } as never)
    expect(contextModeOf(agent)).toBe('dsh-native')
    expect(contextModeRefusal(agent)).toBeUndefined()
    await loop.say(agent, 'hello')
    expect(loop.errors).toEqual([])
    expect(loopRequests(loop)[0]!.tools!.map(tool => tool.name)).toEqual(expect.arrayContaining(['tavern_lore_search', 'memory_read', 'memory_update', 'memory_forget']))
  })

  it('refuses agent-managed closed when the policy does not fit the route\'s window: a typed conflict with the numbers, nothing bound or logged', async () => {
    const loop = await tavernLoop({ contextWindow: 20_000 })
    const agent = loop.create('too-small')
    const reason = 'route fake/fake-model: policy blockTokens 4000 exceeds the recent budget 1200 tokens (recent share 0.06 of a 20000-token context window); lower blockTokens to at most 1200 or raise the recent share to at least 0.2'
    await expect(agent.ctx.plugin(AgentTavern, { character: MIRA, contextMode: 'agent-managed', policy: { blockTokens: 4000 } } as never))
      .rejects.toMatchObject({ code: 'architecture-conflict', reason: 'invalid-config', status: 409, httpCode: 'TAVERN_ARCHITECTURE_CONFLICT', message: expect.stringContaining(reason) })
    expect(() => contextModeOf(agent)).toThrow(/not mounted/)
    expect(tavernBindings(loop.ctx).get('too-small')).toBeUndefined()
    expect(agent.session.events).toEqual([])
    await loop.say(agent, 'hello')
    expect(loop.errors).toEqual([])
    expect(projectionEvents(agent.session.events)).toEqual([])
  })
})

/** A reminder in the real app's shape (`createAnchorMessage` / `createOpeningMessage` of LingyeSoul/dsh-tavern). */
const realReminder = (form: 'tavern-opening' | 'tavern-anchor', turn: number): object => ({
  id: `real-${form}-${turn}`,
  role: 'user',
  content: [{ type: 'text', text: `<${form}>Standing duties (turn ${turn}).</${form}>` }],
  source: { kind: 'plugin', plugin: 'dsh-tavern', form, turn },
})

/** The real app's reminder listener, as it registers itself: prepended, appending to the batch after `next()`. */
function realAppReminders(agent: Agent, every: number): void {
  agent.ctx.on('agent/pre-step', async (payload, next) => {
    const decision = await next()
    if (decision.kind !== 'enter' || payload.step !== 1 || decision.messages.length === 0) return decision
    const form = payload.turn === 1 ? 'tavern-opening' : payload.turn % every === 0 ? 'tavern-anchor' : undefined
    return form === undefined ? decision : { kind: 'enter', messages: [...decision.messages, realReminder(form, payload.turn) as never] }
  }, { prepend: true })
}

describe('the real app\'s messages', () => {
  it('keeps the real tavern-opening and the newest tavern-anchor in every managed request, and never forgets at one', async () => {
    const loop = await tavernLoop()
    const agent = loop.create('real-reminders')
    realAppReminders(agent, 7)
    await agent.ctx.plugin(AgentTavern, { character: MIRA, contextMode: 'agent-managed', policy: SMALL_POLICY, anchorEvery: 0 } as never)
    const boundaries: number[] = []
    for (let i = 1; i <= 22; i++) {
      await loop.say(agent, `I walk along the reed bank, counting gulls (${i}).`)
      boundaries.push(lastSelection(agent)!.state.boundary)
    }
    expect(boundaries.at(-1)).toBeGreaterThan(0)
    for (const boundary of boundaries) {
      const event = agent.session.events.find(found => found.seq === boundary)
      if (event?.type === 'user/message') expect(reminderOf(event.data)).toBeUndefined()
    }
    const sent = loopRequests(loop).at(-1)!.messages.filter(message => reminderOf(message) !== undefined).map(message => message.id)
    expect(sent).toEqual(['real-tavern-opening-1', 'real-tavern-anchor-21'])
    expect(loop.errors).toEqual([])
    expectRebuiltFromLog(loopRequests(loop), agent)
  })

  it('adds no reminder of its own to a turn that has one (the same-turn guard)', async () => {
    const loop = await tavernLoop()
    const agent = loop.create('same-turn')
    realAppReminders(agent, 5)
    await agent.ctx.plugin(AgentTavern, { character: MIRA, policy: SMALL_POLICY, anchorEvery: 5 } as never)
    for (let i = 1; i <= 11; i++) await loop.say(agent, `Turn ${i}.`)
    const reminders = agent.session.events.flatMap(event => event.type === 'user/message' && reminderOf(event.data) !== undefined ? [event.data.id] : [])
    expect(reminders).toEqual(['real-tavern-opening-1', 'real-tavern-anchor-5', 'real-tavern-anchor-10'])
  })

  it('reads imported history and greeting as story lines: the greeting is kept, history is forgotten a line at a time and found by the tools', async () => {
    const loop = await tavernLoop()
    const agent = await tavernAgent(loop, 'real-imports', 'agent-managed')
    const greeting = { id: 'greeting', role: 'user', content: [{ type: 'text', text: 'Mira raises her lantern: "Fare is one copper, traveller."' }], source: { kind: 'plugin', plugin: 'dsh-tavern', form: 'greeting' } }
    agent.session.append('user/message', greeting as never, { surfaceOp: 'append' })
    for (let i = 0; i < 8; i++) {
      const line = { id: `history-${i}`, role: 'user', content: [{ type: 'text', text: `Imported line ${i}: ${i === 0 ? 'the tide clock of Saltmere stopped at nine. ' : ''}${'the old story of the estuary and its ferry. '.repeat(12)}` }], source: { kind: 'plugin', plugin: 'dsh-tavern', form: 'history' } }
      agent.session.append('user/message', line as never, { surfaceOp: 'append' })
    }
    for (let i = 1; i <= 6; i++) await loop.say(agent, `I walk along the reed bank, counting gulls (${i}).`)
    await loop.say(agent, 'CALL tavern_history_search {"query":"tide clock Saltmere"}')
    expect(loop.errors).toEqual([])
    const ids = loopRequests(loop).at(-1)!.messages.map(message => message.id)
    expect(ids).toContain('greeting')
    expect(ids).not.toContain('history-1')
    expect(lastReply(agent.session.events)).toContain('tide clock of Saltmere')
    expectRebuiltFromLog(loopRequests(loop), agent)
  })
})

describe('beside the real app\'s tools', () => {
  it('tools.register: false keeps the app\'s own tools of these names: none registered, the managed listener and reminders still run', async () => {
    const loop = await tavernLoop()
    const agent = loop.create('adopt')
    await agent.ctx.plugin(AgentTavern, { character: MIRA, contextMode: 'agent-managed', policy: SMALL_POLICY, tools: { register: false } } as never)
    for (let i = 1; i <= 12; i++) await loop.say(agent, `I walk along the reed bank, counting gulls (${i}).`)
    expect(loop.errors).toEqual([])
    expect(loopRequests(loop).flatMap(request => request.tools ?? []).map(tool => tool.name)).toEqual(loopRequests(loop).map(() => 'echo'))
    expect(projectionEvents(agent.session.events).length).toBeGreaterThan(0)
    expect(agent.session.events.some(event => event.type === 'user/message' && reminderOf(event.data) === 'anchor')).toBe(true)
  })
})
