import { describe, expect, it } from 'vitest'
import { reminderDue, reminderMessage, reminderOf } from '../src/anchor.ts'
import { loreContext, searchLore, triggeredLore } from '../src/lore.ts'
import { log } from './support.ts'

const LORE = [
  { name: 'The lighthouse', keywords: ['lighthouse'], text: 'Dark for eleven years.' },
  { name: '盐磨坊', keywords: ['盐磨坊'], text: '沼泽边一座废弃的潮汐磨坊。' },
  { name: 'Hallow Staithe', keywords: ['Hallow Staithe', 'village'], text: 'The fishing village.' },
]

describe('lore', () => {
  it('triggers the entries whose keyword the newest turns mention, in any script', () => {
    const events = log([
      { user: 'We pass the lighthouse.', reply: 'It is dark.' },
      { user: '我们经过盐磨坊附近。', reply: '那儿很安静。' },
      { user: 'On to the staithe.', reply: 'Nearly there.' },
    ])
    expect(triggeredLore(LORE, events, 2).map(entry => entry.name)).toEqual(['盐磨坊'])
    expect(triggeredLore(LORE, events, 3).map(entry => entry.name)).toEqual(['The lighthouse', '盐磨坊'])
    expect(triggeredLore(LORE, events, 0)).toEqual([])
    expect(loreContext(triggeredLore(LORE, events, 2))).toBe('World info:\n- 盐磨坊: 沼泽边一座废弃的潮汐磨坊。')
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

  it('writes plugin-sourced standing instructions it can recognize again', () => {
    const anchor = reminderMessage('anchor', 5)
    expect(anchor).toMatchObject({ id: 'agent-tavern-anchor-5', role: 'user', source: { kind: 'plugin', form: 'instructions' } })
    expect(anchor.content[0]).toMatchObject({ text: expect.stringMatching(/^<tavern-anchor>\n[\s\S]*memory_write[\s\S]*<\/tavern-anchor>$/) })
    expect(reminderOf(anchor)).toBe('anchor')
    expect(reminderOf(reminderMessage('opening', 1))).toBe('opening')
    expect(reminderOf({ source: { kind: 'user' } })).toBeUndefined()
  })
})
