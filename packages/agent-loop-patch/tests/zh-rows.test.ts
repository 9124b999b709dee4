import { describe, expect, it } from 'vitest'
import { bringRowsAlong } from '../source/zh-rows.ts'

const doc = (title: string, header: [string, string], rows: readonly string[][]): string => [
  `# ${title}`, '',
  `| ${header[0]} | x |`, '| --- | --- |', ...(rows[0] ?? []), '',
  'prose between the tables', '',
  `| ${header[1]} | y |`, '| --- | --- |', ...(rows[1] ?? []), '',
].join('\n')

describe('bringRowsAlong', () => {
  it("replaces each table's data rows with the English rows, in order, keeping the Chinese headers and prose", () => {
    const en = doc('Matrix', ['Event', 'Event string'], [['| `a` | 1 |', '| `b` | 2 |', '| `c` | 3 |'], ['| `z` | 9 |']])
    const zh = doc('矩阵', ['事件', '事件字符串'], [['| `a` | 1 |'], ['| `y` | 8 |', '| `z` | 9 |']])
    const out = bringRowsAlong(en, zh)
    expect(out).toBe(doc('矩阵', ['事件', '事件字符串'], [['| `a` | 1 |', '| `b` | 2 |', '| `c` | 3 |'], ['| `z` | 9 |']]))
    expect(bringRowsAlong(en, out)).toBe(out)
  })

  it('refuses sides with different numbers of tables', () => {
    const en = doc('Matrix', ['Event', 'Event string'], [['| `a` | 1 |'], []])
    expect(() => bringRowsAlong(en, '# 矩阵\n\n| 事件 | x |\n| --- | --- |\n')).toThrow(/2 tables, the Chinese side 1/)
  })
})
