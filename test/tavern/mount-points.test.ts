/**
 * One mode fact however AgentTavern is mounted: after `create`, inside `createAgent`'s `setup` and inside `resume`'s
 * `setup` (before DSH publishes the session), what `contextModeOf` reports, what the session records (its mode event
 * and its binding) and what runs (projected requests or DSH's whole surface) agree, on activation, on refusal and on
 * resume. Activation of a mode the host cannot run fails closed; session format v4 keeps the mode beside the binding.
 */

import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Context } from '@deepseek-ai/cordis'
import type { Agent } from '@deepseek-ai/dsh-agent'
import { projectionEvents } from '@dsh-seam/agent-context'
import { AgentTavern, contextModeOf, contextModeRefusal, recordedContextMode, setContextMode, tavernBindings, TavernArchitectureConflictError } from '@dsh-seam/agent-tavern'
import * as TavernHost from '@dsh-seam/agent-tavern/host'
import { ProjectionAwareCompactionEngine } from '@dsh-seam/compaction-effective-projection'
import type { BootedLoop } from '@dsh-seam/loop-testkit'
import { afterAll, describe, expect, it } from 'vitest'
import { reminderOf } from '../../packages/agent-tavern/src/anchor.ts'
import { loopRequests, MIRA, SMALL_POLICY, tavernLoop } from './support.ts'

const roots: string[] = []
afterAll(() => { for (const root of roots) rmSync(root, { recursive: true, force: true }) })
const scratch = (): string => {
  const root = mkdtempSync(join(tmpdir(), 'agent-tavern-mount-'))
  roots.push(root)
  return root
}

const config = (contextMode: string, extra: object = {}): never => ({ character: MIRA, contextMode, policy: SMALL_POLICY, ...extra }) as never
const mount = (contextMode: string, extra?: object) => async (ctx: Context): Promise<void> => { await ctx.plugin(AgentTavern, config(contextMode, extra)) }
/** The compaction row tavernLoop mounts, beside the host row. */
const withHost = (row: object): [unknown, unknown][] => [[ProjectionAwareCompactionEngine, { measure: 'projection', summary: 'reference' }], [TavernHost, row]]
/** Event types in the agent's log that DSH does not know: AgentTavern writes none (the binding records the mode). */
const foreignTypes = (loop: BootedLoop, agent: Agent): string[] =>
  agent.session.events.map(event => event.type as string).filter(type => !loop.dsh.session.KNOWN_SESSION_EVENT_TYPES.has(type))

async function walk(loop: BootedLoop, agent: Agent, turns: number): Promise<void> {
  for (let i = 1; i <= turns; i++) await loop.say(agent, `I row past the heron pool, humming (${i}).`)
}

/** What runs: does the agent project its requests (`agent-managed`) or send DSH's whole surface (`dsh-native`)? */
async function running(loop: BootedLoop, agent: Agent): Promise<'agent-managed' | 'dsh-native'> {
  const before = projectionEvents(agent.session.events).length
  await walk(loop, agent, 10)
  expect(loop.errors).toEqual([])
  return projectionEvents(agent.session.events).length > before ? 'agent-managed' : 'dsh-native'
}

/** The mode fact as each of its three witnesses tells it. */
async function witnesses(loop: BootedLoop, agent: Agent): Promise<unknown> {
  return { reported: contextModeOf(agent), recorded: recordedContextMode(agent), bound: tavernBindings(loop.ctx).get(String(agent.id))?.contextMode, runs: await running(loop, agent) }
}
const agreeing = (mode: string): unknown => ({ reported: mode, recorded: mode, bound: mode, runs: mode })

describe('one mode fact at every mount point', () => {
  it('mounted after create', async () => {
    const loop = await tavernLoop()
    const agent = loop.create('after-create')
    await agent.ctx.plugin(AgentTavern, config('agent-managed'))
    expect(await witnesses(loop, agent)).toEqual(agreeing('agent-managed'))
  })

  it('mounted in createAgent\'s setup, before the session is published', async () => {
    const loop = await tavernLoop()
    const { agent } = await loop.ctx.agentLoop.createAgent(loop.ctx, { sessionId: loop.dsh.session.SessionId('in-setup'), agentOptions: { provider: 'fake', model: 'fake-model' }, setup: mount('agent-managed') })
    expect(foreignTypes(loop, agent)).toEqual([])
    expect(await witnesses(loop, agent)).toEqual(agreeing('agent-managed'))
  })

  it('mounted in resume\'s setup: a managed session resumed where its window is now too small runs, records and reports dsh-native, and a switch back is refused', async () => {
    const root = scratch()
    const bindingsFile = join(root, 'tavern', 'bindings.json')
    const first = await tavernLoop({ persistRoot: root })
    tavernBindings(first.ctx, bindingsFile)
    const { agent: original } = await first.ctx.agentLoop.createAgent(first.ctx, { sessionId: first.dsh.session.SessionId('shrunk'), agentOptions: { provider: 'fake', model: 'fake-model' }, setup: mount('agent-managed') })
    await walk(first, original, 3)
    await first.ctx.sessions.flush(original.session)

    const loop = await tavernLoop({ persistRoot: root, contextWindow: 8_000 })
    tavernBindings(loop.ctx, bindingsFile)
    const warnings: string[] = []
    loop.ctx.logger.exporter({ levels: { default: 3 }, export: message => message.type === 'warn' && warnings.push(String(message.args[0])) })
    const { agent } = await loop.ctx.agentLoop.resume(loop.ctx, { resumeSessionId: loop.dsh.session.SessionId('shrunk'), agentOptions: { provider: 'fake', model: 'fake-model' }, setup: mount('agent-managed') })
    expect(contextModeRefusal(agent)).toMatchObject({ requested: 'agent-managed', code: 'invalid-config' })
    expect(JSON.parse(readFileSync(bindingsFile, 'utf8'))).toMatchObject({ sessionBindings: { shrunk: { architecture: 'agent-tavern', contextMode: 'dsh-native' } } })
    expect(foreignTypes(loop, agent)).toEqual([])
    expect(warnings).toEqual([expect.stringMatching(/blockTokens 600 exceeds the recent budget 480 tokens.*; it runs dsh-native$/)])
    await expect(setContextMode(agent, 'agent-managed')).rejects.toBeInstanceOf(TavernArchitectureConflictError)
    expect(await witnesses(loop, agent)).toEqual(agreeing('dsh-native'))
    expect(JSON.stringify(loopRequests(loop).at(-1)!.messages)).toBe(JSON.stringify(agent.session.deriveMessages().slice(0, -1)))
  })
})

describe('activation fails closed', () => {
  it('in createAgent\'s setup: a typed 409 conflict, no agent, no binding, no session event', async () => {
    const loop = await tavernLoop({ contextWindow: 8_000 })
    const appended: string[] = []
    loop.ctx.on('session/event', (_session, event) => { appended.push(event.type) })
    const created = loop.ctx.agentLoop.createAgent(loop.ctx, { sessionId: loop.dsh.session.SessionId('refused'), agentOptions: { provider: 'fake', model: 'fake-model' }, setup: mount('agent-managed') })
    await expect(created).rejects.toMatchObject({ name: 'AgentTavernError', code: 'architecture-conflict', reason: 'invalid-config', status: 409, httpCode: 'TAVERN_ARCHITECTURE_CONFLICT' })
    expect(loop.ctx.agents.get(loop.dsh.session.SessionId('refused'))).toBeUndefined()
    expect(tavernBindings(loop.ctx).get('refused')).toBeUndefined()
    expect(appended).toEqual([])
    expect(loop.adapter.requests).toEqual([])
  })

  it('on a switch and on a default-mode change: refused, nothing recorded, the mode kept', async () => {
    const dsh = (await tavernLoop()).dsh
    const loop = await tavernLoop({ plugins: [[dsh.compactionBasic.default]] })
    const agent = loop.create('kept')
    await agent.ctx.plugin(AgentTavern, config('dsh-native'))
    const events = agent.session.events.length
    await expect(setContextMode(agent, 'agent-managed')).rejects.toMatchObject({ code: 'architecture-conflict', reason: 'mode-unavailable', missing: ['projection-aware-compaction'] })
    expect(() => tavernBindings(loop.ctx).setDefaultContextMode(loop.ctx, 'agent-managed')).toThrow(TavernArchitectureConflictError)
    expect(tavernBindings(loop.ctx).defaultContextMode).toBe('dsh-native')
    expect(agent.session.events).toHaveLength(events)
    expect(await witnesses(loop, agent)).toEqual(agreeing('dsh-native'))
  })
})

describe('the host row serves bound sessions only', () => {
  it('mounts on sessions bound agent-tavern, leaves st and group bindings and unbound agents alone, and binds new top-level sessions when asked', async () => {
    const loop = await tavernLoop({ plugins: withHost({ character: MIRA, contextMode: 'agent-managed', policy: SMALL_POLICY }) })
    const bindings = tavernBindings(loop.ctx)
    bindings.set('st-chat', { architecture: 'st', contextMode: 'dsh-native', since: 0 })
    bindings.set('group-chat', { architecture: 'agent-tavern', contextMode: 'dsh-native', since: 0, group: true })
    const [plain, st, group] = [loop.create('plain'), loop.create('st-chat'), loop.create('group-chat')]
    for (const agent of [plain, st, group]) {
      await loop.say(agent, 'hello')
      expect(() => contextModeOf(agent)).toThrow(/not mounted/)
      expect(loop.adapter.requests.at(-1)!.tools!.map(tool => tool.name)).not.toContain('tavern_history_search')
    }
    expect(bindings.get('plain')).toBeUndefined()

    const binding = await tavernLoop({ plugins: withHost({ character: MIRA, contextMode: 'agent-managed', policy: SMALL_POLICY, bindNewSessions: true }) })
    const fresh = binding.create('fresh')
    await binding.say(fresh, 'hello')
    expect(contextModeOf(fresh)).toBe('agent-managed')
    expect(tavernBindings(binding.ctx).get('fresh')).toMatchObject({ architecture: 'agent-tavern', contextMode: 'agent-managed' })
  })

  it('binds a new session whose log has events before its first turn, as the dsh CLI appends its permission and sandbox records', async () => {
    const loop = await tavernLoop({ plugins: withHost({ character: MIRA, contextMode: 'agent-managed', policy: SMALL_POLICY, bindNewSessions: true }) })
    const { agent } = await loop.ctx.agentLoop.createAgent(loop.ctx, {
      sessionId: loop.dsh.session.SessionId('cli-like'),
      agentOptions: { provider: 'fake', model: 'fake-model' },
      setup: (ctx: Context) => { (ctx.agent!.session.append as (type: string, data: unknown) => unknown)('cli/sandbox-mode', { mode: 'workspace-write' }) },
    })
    expect(agent.session.seq).toBeGreaterThan(0)
    await loop.say(agent, 'hello')
    expect(await witnesses(loop, agent)).toEqual(agreeing('agent-managed'))
  })
})

describe('session format v4 on rc.8', () => {
  it('writes plugin:dsh-tavern source kinds and no plugin event type; the mode lives in the binding file and survives a resume', async () => {
    const root = scratch()
    const bindingsFile = join(root, 'tavern', 'bindings.json')
    const row = { character: MIRA, contextMode: 'agent-managed', policy: SMALL_POLICY, sessionFormat: 'v4', bindNewSessions: true, bindingsFile }
    const first = await tavernLoop({ persistRoot: root, plugins: withHost(row) })
    const agent = first.create('v4')
    await walk(first, agent, 6)
    expect(contextModeOf(agent)).toBe('agent-managed')
    expect(projectionEvents(agent.session.events).length).toBeGreaterThan(0)
    expect(foreignTypes(first, agent)).toEqual([])
    const reminders = agent.session.events.flatMap(event => event.type === 'user/message' && reminderOf(event.data) !== undefined ? [event.data.source] : [])
    expect(reminders).toEqual([{ kind: 'plugin:dsh-tavern', form: 'tavern-opening', turn: 1 }, { kind: 'plugin:dsh-tavern', form: 'tavern-anchor', turn: 5 }])
    expect(JSON.parse(readFileSync(bindingsFile, 'utf8'))).toMatchObject({ sessionBindings: { v4: { architecture: 'agent-tavern', contextMode: 'agent-managed' } } })
    await first.ctx.sessions.flush(agent.session)

    const second = await tavernLoop({ persistRoot: root, plugins: withHost({ ...row, contextMode: 'dsh-native' }) })
    const { agent: again } = await second.ctx.agentLoop.resume(second.ctx, { resumeSessionId: second.dsh.session.SessionId('v4'), agentOptions: { provider: 'fake', model: 'fake-model' } })
    await walk(second, again, 1)
    expect(contextModeOf(again)).toBe('agent-managed')
    expect(recordedContextMode(again)).toBe('agent-managed')
    await setContextMode(again, 'dsh-native')
    expect(foreignTypes(second, again)).toEqual([])
    expect(JSON.parse(readFileSync(bindingsFile, 'utf8'))).toMatchObject({ sessionBindings: { v4: { contextMode: 'dsh-native' } } })
  })
})
