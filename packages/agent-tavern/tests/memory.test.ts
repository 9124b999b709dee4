import { describe, expect, it } from 'vitest'
import { activeMemories, declaredImportance, memoryRecords, memoryScore, searchMemory } from '../src/memory.ts'
import { log } from './support.ts'

const DAY = 86_400_000

describe('memory folded from the log', () => {
  const turns = (revisions: { key?: string; scene?: string } = {}): Parameters<typeof log>[0] => [
    { user: 'A brass key.', reply: 'Kept.', time: 0, write: { args: '{"text":"the key opens the cellar","tags":["fact"],"importance":0.9,"confidence":0.8}' } },
    { user: 'Never mind.', reply: 'No.', time: DAY, write: { args: '{"text":"never written","importance":2}', error: true } },
    { user: 'A scene.', reply: 'Seen.', time: 2 * DAY, calls: [{ name: 'memory_write', args: { text: 'dawn at the dock', tags: ['scene'], scope: 'character', expiresAt: new Date(10 * DAY).toISOString() } }] },
    { user: 'Stale.', reply: 'Refused.', time: 2 * DAY, calls: [{ name: 'memory_update', args: { id: 'call-1', revision: 'stale', text: 'overwritten' } }] },
    { user: 'Correct it.', reply: 'Done.', time: 3 * DAY, calls: [{ name: 'memory_update', args: { id: 'call-1', revision: revisions.key, text: 'the key opens the lighthouse cellar', confidence: 1 } }] },
    { user: 'Forget the scene.', reply: 'Gone.', time: 4 * DAY, calls: [{ name: 'memory_forget', args: { id: 'call-3', revision: revisions.scene } }, { name: 'memory_update', args: { id: 'call-3', revision: revisions.scene, text: 'too late' } }] },
  ]
  const written = memoryRecords(log(turns()))
  const events = log(turns({ key: written.get('call-1')!.revision, scene: written.get('call-3')!.revision }))

  it('derives a revision from the record, as AgentTavern\'s MemoryStore does, and applies only changes naming the current one', () => {
    const records = memoryRecords(events)
    expect(written.get('call-1')!.revision).toMatch(/^[0-9a-f]{16}$/)
    expect(records.get('call-1')!.revision).not.toBe(written.get('call-1')!.revision)
    expect(records.get('call-1')!.text).not.toBe('overwritten')
    const unrevised = memoryRecords(log(turns({ scene: written.get('call-3')!.revision })))
    expect(unrevised.get('call-1')).toEqual(written.get('call-1'))
  })

  it('keeps a record per successful write, with defaults, updated in place and forgotten softly', () => {
    const records = memoryRecords(events)
    expect([...records.keys()]).toEqual(['call-1', 'call-3'])
    expect(records.get('call-1')).toEqual({
      id: 'call-1', text: 'the key opens the lighthouse cellar', tags: ['fact'], scope: 'chat', importance: 0.9, confidence: 1,
      createdAt: 0, updatedAt: 3 * DAY, turn: 1, revision: expect.stringMatching(/^[0-9a-f]{16}$/),
    })
    expect(records.get('call-3')).toMatchObject({ text: 'dawn at the dock', scope: 'character', importance: 0, confidence: 1, expiresAt: 10 * DAY, forgottenAt: 4 * DAY })
    expect(activeMemories(events).map(record => record.id)).toEqual(['call-1'])
  })

  it('replays to the same memory from any prefix of the log', () => {
    for (let end = 0; end <= events.length; end++) {
      expect(memoryRecords(events.slice(0, end))).toEqual(memoryRecords(structuredClone(events.slice(0, end))))
    }
    const beforeForget = events.findIndex(event => event.type === 'tool/call' && event.data.name === 'memory_forget')
    expect(memoryRecords(events.slice(0, beforeForget)).get('call-3')?.forgottenAt).toBeUndefined()
  })

  it('scores lexical * 100 + importance * 10 + confidence * 5 + 1 / (1 + age in days)', () => {
    const record = memoryRecords(events).get('call-1')!
    expect(memoryScore(0.5, record, 3 * DAY)).toBeCloseTo(50 + 9 + 5 + 1)
    expect(memoryScore(0.5, record, 4 * DAY)).toBeCloseTo(50 + 9 + 5 + 0.5)
  })

  it('searches active records in scope, keeps those matching no term (as the real store does), reports truncation and the count searched', () => {
    const records = memoryRecords(events).values()
    const found = searchMemory(records, { query: 'lighthouse key', limit: 5, maxChars: 1000, now: 4 * DAY })
    expect(found).toEqual({ hits: [{ record: expect.objectContaining({ id: 'call-1' }), score: 100 + 9 + 5 + 0.5, truncated: false }], truncated: false, sourceCount: 1 })
    expect(searchMemory(memoryRecords(events).values(), { query: 'gulls', limit: 5, maxChars: 1000, now: 4 * DAY }).hits).toEqual([{ record: expect.objectContaining({ id: 'call-1' }), score: 9 + 5 + 0.5, truncated: false }])
    const cut = searchMemory(memoryRecords(events).values(), { query: 'cellar', limit: 5, maxChars: 10, now: 4 * DAY })
    expect(cut.truncated).toBe(true)
    expect(cut.hits[0]).toMatchObject({ truncated: true, record: { text: 'the key op…' } })
    expect(searchMemory(memoryRecords(events).values(), { query: 'cellar', limit: 5, maxChars: 100, now: 4 * DAY, scope: 'global' }).sourceCount).toBe(0)
    const beforeForget = memoryRecords(events.slice(0, -8))
    expect(searchMemory(beforeForget.values(), { query: 'dock', limit: 5, maxChars: 100, now: 3 * DAY }).hits.map(hit => hit.record.id)).toEqual(['call-3', 'call-1'])
    expect(searchMemory(beforeForget.values(), { query: 'dock', limit: 5, maxChars: 100, now: 11 * DAY }).hits.map(hit => hit.record.id)).toEqual(['call-1'])
  })

  it('finds Chinese memories by bigrams', () => {
    const zh = memoryRecords(log([{ user: '记住', reply: '好', calls: [{ name: 'memory_write', args: { text: '她把黄铜钥匙藏在了灯塔下面' } }] }]))
    expect(searchMemory(zh.values(), { query: '黄铜钥匙在哪里', limit: 5, maxChars: 100, now: 0 }).hits).toHaveLength(1)
  })

  it('reads the importance a message declares for the policy', () => {
    const calls = events.flatMap(event => event.type === 'assistant/message' ? [event.data.message] : [])
    expect(calls.map(declaredImportance)).toEqual([0.9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
  })
})
