import { describe, expect, it } from 'vitest'
import { bringCodeAlong, bringSitesAlong } from '../source/zh-sites.ts'

describe('bringSitesAlong', () => {
  it('gives the n-th citation of each path the line of the n-th English citation of that path', () => {
    const english = 'a `packages/x/src/types.ts:12` b `packages/y/src/index.ts:3` c `packages/x/src/types.ts:40`'
    const chinese = '甲 `packages/x/src/types.ts:10` 乙 `packages/y/src/index.ts:3` 丙 `packages/x/src/types.ts:38`'
    expect(bringSitesAlong(english, chinese)).toBe('甲 `packages/x/src/types.ts:12` 乙 `packages/y/src/index.ts:3` 丙 `packages/x/src/types.ts:40`')
  })

  it('refuses sides that cite a path a different number of times, naming the path', () => {
    expect(() => bringSitesAlong('`a.ts:1` `a.ts:2`', '`a.ts:1`')).toThrow('the English side cites a.ts 2 times, the Chinese side 1')
    expect(() => bringSitesAlong('`a.ts:1`', '`a.ts:1` `a.ts:5`')).toThrow('the Chinese side cites a.ts more often than the English side (a.ts:5)')
  })
})

describe('bringCodeAlong', () => {
  it('replaces each fenced block of the Chinese side by the English block of the same rank, prose untouched', () => {
    const english = 'Intro\n\n```ts\nconst a = 2\n```\n\nMore\n\n```yaml\nb: 3\n```\n'
    const chinese = '介绍\n\n```ts\nconst a = 1\n```\n\n更多\n\n```yaml\nb: 1\n```\n'
    expect(bringCodeAlong(english, chinese)).toBe('介绍\n\n```ts\nconst a = 2\n```\n\n更多\n\n```yaml\nb: 3\n```\n')
  })

  it('refuses sides with a different number of code blocks', () => {
    expect(() => bringCodeAlong('```ts\na\n```\n```ts\nb\n```', '```ts\na\n```')).toThrow('the English side has 2 code blocks, the Chinese side 1')
  })
})
