/**
 * `inspectCapabilities` and mode enabling on stock rc.8, on the patched build with stock compaction, and on the
 * patched build with projection-aware compaction: `agent-managed` is refused with a typed error naming what is
 * missing (nothing recorded, nothing sent), and `dsh-native` always runs.
 */

import type { Agent } from '@deepseek-ai/dsh-agent'
import { AgentTavern, contextModeOf, inspectCapabilities, setContextMode, tavernBindings } from '@dsh-seam/agent-tavern'
import { ProjectionAwareCompactionEngine } from '@dsh-seam/compaction-effective-projection'
import type { BootedLoop } from '@dsh-seam/loop-testkit'
import { bootLoop, patchedDsh, stockDsh, textReply } from '@dsh-seam/loop-testkit'
import { describe, expect, it } from 'vitest'
import { MIRA, tavernAgent, tavernLoop } from './support.ts'

const mount = async (loop: BootedLoop, id: string, contextMode: string): Promise<Agent> => {
  const agent = loop.create(id)
  await agent.ctx.plugin(AgentTavern, { character: MIRA, contextMode } as never)
  return agent
}

describe('on stock rc.8', () => {
  it('reports agent-managed unavailable, missing the seam and projection-aware compaction; native available', async () => {
    const dsh = await stockDsh()
    const loop = await bootLoop(dsh, { plugins: [[dsh.compactionBasic.default]] })
    const report = inspectCapabilities(loop.ctx)
    expect(report.native).toEqual({ available: true, missing: [], reasons: [] })
    expect(report.managed.available).toBe(false)
    expect(report.managed.missing).toEqual(['agent/context', 'projection-aware-compaction'])
    expect(report.managed.reasons).toHaveLength(2)
  })

  it('refuses activating agent-managed closed: a typed conflict naming what is missing, nothing bound, no event, nothing sent; native still mounts', async () => {
    const dsh = await stockDsh()
    const loop = await bootLoop(dsh, { plugins: [[dsh.compactionBasic.default]], fallback: textReply('Aye.') })
    const agent = loop.create('stock-managed')
    await expect(agent.ctx.plugin(AgentTavern, { character: MIRA, contextMode: 'agent-managed' } as never)).rejects.toMatchObject({
      code: 'architecture-conflict', reason: 'mode-unavailable', status: 409, httpCode: 'TAVERN_ARCHITECTURE_CONFLICT', missing: ['agent/context', 'projection-aware-compaction'],
      message: expect.stringContaining(inspectCapabilities(agent.ctx).managed.reasons[0]!),
    })
    expect(agent.session.events).toEqual([])
    expect(tavernBindings(loop.ctx).get('stock-managed')).toBeUndefined()
    expect(loop.adapter.requests).toEqual([])
    await agent.ctx.plugin(AgentTavern, { character: MIRA } as never)
    expect(contextModeOf(agent)).toBe('dsh-native')
    await loop.say(agent, 'first')
    expect(loop.errors).toEqual([])
    expect(agent.session.events.filter(event => !dsh.session.KNOWN_SESSION_EVENT_TYPES.has(event.type))).toEqual([])
  })

  it('setContextMode validates its input with the same typed error as the config', async () => {
    const dsh = await stockDsh()
    const loop = await bootLoop(dsh, { plugins: [[dsh.compactionBasic.default]] })
    const agent = loop.create('stock-validate')
    await agent.ctx.plugin(AgentTavern, { character: MIRA } as never)
    await expect(setContextMode(agent, 'super-managed' as never)).rejects.toMatchObject({ name: 'AgentTavernError', code: 'invalid-config', message: expect.stringContaining('"super-managed"') })
    await expect(loop.create('stock-config').ctx.plugin(AgentTavern, { character: MIRA, contextMode: 'super-managed' } as never)).rejects.toMatchObject({ name: 'AgentTavernError', code: 'invalid-config' })
    expect(tavernBindings(loop.ctx).get(String(agent.id))).toMatchObject({ architecture: 'agent-tavern', contextMode: 'dsh-native' })
    expect(contextModeOf(agent)).toBe('dsh-native')
  })

  it('runs dsh-native: the plugin mounts, the whole surface is sent, the tools are offered', async () => {
    const dsh = await stockDsh()
    const loop = await bootLoop(dsh, { plugins: [[dsh.compactionBasic.default]], fallback: textReply('Aye.') })
    const agent = loop.create('stock-native')
    await agent.ctx.plugin(AgentTavern, { character: MIRA } as never)
    expect(contextModeOf(agent)).toBe('dsh-native')
    await loop.say(agent, 'first')
    await loop.say(agent, 'second')
    expect(loop.errors).toEqual([])
    const [, second] = loop.adapter.requests
    expect(JSON.stringify(second!.messages)).toBe(JSON.stringify(agent.session.deriveMessages().slice(0, -1)))
    expect(second!.tools!.map(tool => tool.name)).toEqual(expect.arrayContaining(['tavern_history_search', 'tavern_history_read', 'memory_write', 'memory_search']))
    expect(second!.system).toContain('You are Mira. The ferrywoman of the Grey Estuary.')
    await expect(setContextMode(agent, 'agent-managed')).rejects.toMatchObject({ code: 'architecture-conflict', reason: 'mode-unavailable' })
    expect(tavernBindings(loop.ctx).get(String(agent.id))).toMatchObject({ architecture: 'agent-tavern', contextMode: 'dsh-native' })
  })
})

describe('on the patched build', () => {
  it('with stock compaction: agent-managed is missing only projection-aware compaction, and stays off', async () => {
    const dsh = await patchedDsh()
    const loop = await bootLoop(dsh, { plugins: [[dsh.compactionBasic.default]] })
    expect(inspectCapabilities(loop.ctx).managed).toMatchObject({ available: false, missing: ['projection-aware-compaction'] })
    await expect(mount(loop, 'patched-basic', 'agent-managed')).rejects.toMatchObject({ code: 'architecture-conflict', reason: 'mode-unavailable', missing: ['projection-aware-compaction'] })
  })

  it('with projection-aware compaction measuring the surface: the agreed flag is 0, so agent-managed is refused', async () => {
    const loop = await bootLoop(await patchedDsh(), { plugins: [[ProjectionAwareCompactionEngine, { measure: 'surface' }]] })
    expect(inspectCapabilities(loop.ctx).managed.missing).toEqual(['projection-aware-compaction'])
  })

  it('with projection-aware compaction: both modes are available and agent-managed is enabled and recorded', async () => {
    const loop = await tavernLoop()
    expect(inspectCapabilities(loop.ctx)).toEqual({
      presetId: 'agent-tavern',
      native: { available: true, missing: [], reasons: [] },
      managed: { available: true, missing: [], reasons: [] },
      checkedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    })
    const agent = await tavernAgent(loop, 'patched-managed', 'agent-managed')
    expect(contextModeOf(agent)).toBe('agent-managed')
    expect(tavernBindings(loop.ctx).get(String(agent.id))).toMatchObject({ architecture: 'agent-tavern', contextMode: 'agent-managed', since: 0 })
  })

  it('probes the native prerequisites through the services they add: a bare app has none, so neither mode runs', async () => {
    const dsh = await patchedDsh()
    const bare = inspectCapabilities(new dsh.cordis.Context())
    expect(bare.native).toMatchObject({ available: false, missing: ['preset', 'scoped-prompt', 'tools', 'durable-events'] })
    expect(bare.managed).toMatchObject({ available: false, missing: ['preset', 'scoped-prompt', 'tools', 'durable-events', 'agent/context', 'projection-aware-compaction'] })
    expect(bare.managed.reasons).toHaveLength(6)
    const agent = (await tavernLoop()).create('probe')
    expect(inspectCapabilities(agent.ctx).managed).toEqual({ available: true, missing: [], reasons: [] })
  })

  it('refuses a mount off an agent context', async () => {
    const loop = await tavernLoop()
    await expect(loop.ctx.plugin(AgentTavern, { character: MIRA } as never)).rejects.toMatchObject({ code: 'no-agent' })
  })
})
