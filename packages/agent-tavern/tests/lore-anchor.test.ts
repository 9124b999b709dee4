import { describe, expect, it } from 'vitest'
import { latestReminderTurn, reminderDue, reminderMessage, reminderOf } from '../src/anchor.ts'
import { loreContext, loreTriggeredBy, searchLore } from '../src/lore.ts'
import { log } from './support.ts'

const LORE = [
  { name: 'The lighthouse', keywords: ['lighthouse'], text: 'Dark for eleven years.' },
  { name: '盐磨坊', keywords: ['盐磨坊'], text: '沼泽边一座废弃的潮汐磨坊。' },
  { name: 'Hallow Staithe', keywords: ['Hallow Staithe', 'village'], text: 'The fishing village.' },
]

describe('lore', () => {
  it('triggers the entries whose keyword a text mentions, in any script', () => {
    expect(loreTriggeredBy(LORE, '我们经过盐磨坊附近。').map(entry => entry.name)).toEqual(['盐磨坊'])
    expect(loreTriggeredBy(LORE, 'We pass the lighthouse.\n我们经过盐磨坊附近。').map(entry => entry.name)).toEqual(['The lighthouse', '盐磨坊'])
    expect(loreTriggeredBy(LORE, 'On to the staithe.')).toEqual([])
    expect(loreContext(loreTriggeredBy(LORE, '盐磨坊'))).toBe('World info:\n- 盐磨坊: 沼泽边一座废弃的潮汐磨坊。')
    expect(loreContext([])).toBe('')
  })

  it('is searchable by name, keyword and text', () => {
    expect(searchLore(LORE, 'fishing village', 5)).toEqual({ hits: [LORE[2]], truncated: false, sourceCount: 3 })
    expect(searchLore(LORE, '磨坊在哪里', 5).hits).toEqual([LORE[1]])
  })
})

describe('reminders', () => {
  const events = log([{ user: 'hello', reply: 'hi' }])

  it('gives the opening brief on the first user turn and an anchor every n turns, at step 1 only', () => {
    expect(reminderDue({ turn: 1, step: 1 }, 5, [])).toBe('opening')
    expect(reminderDue({ turn: 1, step: 2 }, 5, [])).toBeUndefined()
    expect(reminderDue({ turn: 2, step: 1 }, 5, events)).toBeUndefined()
    expect(reminderDue({ turn: 5, step: 1 }, 5, events)).toBe('anchor')
    expect(reminderDue({ turn: 10, step: 1 }, 5, events)).toBe('anchor')
    expect(reminderDue({ turn: 1, step: 1 }, 0, [])).toBeUndefined()
  })

  it('writes the real app\'s reminders (plugin dsh-tavern, tavern-opening / tavern-anchor, the turn) in either session format, and reads them and the old ids back', () => {
    const anchor = reminderMessage('anchor', 5)
    expect(anchor).toMatchObject({ id: 'agent-tavern-anchor-5', role: 'user', source: { kind: 'plugin', plugin: 'dsh-tavern', form: 'tavern-anchor', turn: 5 } })
    expect(anchor.content[0]).toMatchObject({ text: expect.stringMatching(/^<tavern-anchor>\n[\s\S]*memory_write[\s\S]*<\/tavern-anchor>$/) })
    expect(reminderMessage('opening', 1, 'v4').source).toEqual({ kind: 'plugin:dsh-tavern', form: 'tavern-opening', turn: 1 })
    expect(reminderOf(anchor)).toBe('anchor')
    expect(reminderOf(reminderMessage('opening', 1, 'v4'))).toBe('opening')
    expect(reminderOf({ source: { kind: 'plugin', plugin: '@dsh-seam/agent-tavern/anchor', form: 'instructions' } })).toBe('anchor')
    expect(reminderOf({ source: { kind: 'plugin', plugin: 'dsh-tavern', form: 'history' } as never })).toBeUndefined()
    expect(reminderOf({ source: { kind: 'user' } })).toBeUndefined()
  })

  it('guards a turn that has a reminder already, in the log or in the batch', () => {
    const reminded = [...events, { type: 'user/message', seq: events.length, time: 0, data: reminderMessage('anchor', 5) }] as typeof events
    expect(latestReminderTurn(reminded)).toBe(5)
    expect(reminderDue({ turn: 5, step: 1 }, 5, reminded)).toBeUndefined()
    expect(reminderDue({ turn: 5, step: 1 }, 5, events, [reminderMessage('anchor', 5, 'v4')])).toBeUndefined()
    expect(reminderDue({ turn: 10, step: 1 }, 5, reminded)).toBe('anchor')
  })
})
