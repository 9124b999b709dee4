import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Nodes } from 'mdast'
import { fromMarkdown } from 'mdast-util-from-markdown'
import { gfmFromMarkdown } from 'mdast-util-gfm'
import { gfm } from 'micromark-extension-gfm'
import { describe, expect, it } from 'vitest'
import { renderNote, unwrap } from '../source/notes.ts'

const parse = (markdown: string): Nodes => fromMarkdown(markdown, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] })

function collect(tree: Nodes, type: Nodes['type']): Nodes[] {
  const out: Nodes[] = []
  const walk = (node: Nodes): void => {
    if (node.type === type) out.push(node)
    if ('children' in node) for (const child of node.children) walk(child)
  }
  walk(tree)
  return out
}

const links = (markdown: string): string[] => collect(parse(markdown), 'link').map(node => (node as { url: string }).url)
const multiLineParagraphs = (markdown: string): number => collect(parse(markdown), 'paragraph')
  .filter(node => (node.position?.end.line ?? 0) > (node.position?.start.line ?? 0)).length

const NOTES = new Map([
  ['0001-seam.md', '2026-11-29-seam.md'],
  ['0002-intent.md', '2026-11-29-intent.md'],
])

function rfcFolder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'notes-'))
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), text)
  }
  return dir
}

describe('unwrap', () => {
  it('joins each prose paragraph, list item and quote onto one line and leaves code and tables alone', () => {
    const source = [
      'A paragraph that was', 'wrapped at a column.', '',
      '- a list item', '  that continues', '- one line', '',
      '> a quote', '> that continues', '',
      '```ts', 'const a = 1', 'const b = 2', '```', '',
      '| a | b |', '| - | - |', '| 1 | 2 |', '',
    ].join('\n')
    const out = unwrap(source)
    expect(out).toContain('A paragraph that was wrapped at a column.')
    expect(out).toContain('- a list item that continues')
    expect(out).toContain('> a quote that continues')
    expect(out).toContain('```ts\nconst a = 1\nconst b = 2\n```')
    expect(out).toContain('| a | b |\n| - | - |\n| 1 | 2 |')
    expect(multiLineParagraphs(out)).toBe(0)
  })

  it('joins CJK lines without the space a line break stood for, and mixed lines with one', () => {
    expect(unwrap('第一行的文字\n第二行。\n')).toBe('第一行的文字第二行。\n')
    expect(unwrap('中文 `code`\nand English\n')).toBe('中文 `code` and English\n')
    expect(unwrap('同一套规则，\n`dsh-compaction-basic` 也读取它们；\nstale 计数\n')).toBe('同一套规则，`dsh-compaction-basic` 也读取它们；stale 计数\n')
  })
})

describe('renderNote', () => {
  const folder = rfcFolder({
    '0001-seam.md': [
      '# Agent Note: seam', '', 'Status: proposed', '', 'English | [中文](0001-seam.zh.md)', '',
      'See [the intent note](0002-intent.md) and the', '[alternatives](0001/alternatives.md).', '',
    ].join('\n'),
    '0001-seam.zh.md': [
      '# Agent Note: 接缝', '', 'Status: proposed', '', '[English](0001-seam.md) | 中文', '',
      '见[意图](0002-intent.zh.md)与', '[替代方案](0001/alternatives.zh.md)。', '',
    ].join('\n'),
    '0001/alternatives.md': '# Appendix A: alternatives\n\nEnglish | [中文](alternatives.zh.md)\n\nThe [note](../0001-seam.md) argues.\n\n## One\n\nText.\n',
    '0001/alternatives.zh.md': '# 附录 A：替代方案\n\n[English](alternatives.md) | 中文\n\n[note](../0001-seam.zh.md) 论证。\n\n## 其一\n\n文字。\n',
    '0002-intent.md': '# Agent Note: intent\n\nSee [alternatives](0001/alternatives.md).\n',
    '0002-intent.zh.md': '# Agent Note: 意图\n\n见[替代方案](0001/alternatives.zh.md)。\n',
    '0003-stray.md': 'Out of the [repository](../README.md).\n',
    '0004-dated.md': 'As [the version note](2026-08-10-session-log-version-mechanism.md) deferred.\n',
  })
  const en = renderNote(join(folder, '0001-seam.md'), NOTES)
  const zh = renderNote(join(folder, '0001-seam.zh.md'), NOTES)

  it('maps sibling RFCs to their notes in the same language and keeps the switcher pointing at the twin', () => {
    expect(links(en)).toEqual(['2026-11-29-seam.zh.md', '2026-11-29-intent.md'])
    expect(links(zh)).toEqual(['2026-11-29-seam.md', '2026-11-29-intent.zh.md'])
  })

  it("neither inlines nor links an RFC's appendices: a link to one keeps its text only", () => {
    expect(en).toContain('See [the intent note](2026-11-29-intent.md) and the alternatives.')
    expect(zh).toContain('见[意图](2026-11-29-intent.zh.md)与替代方案。')
    for (const note of [en, zh]) {
      expect(note).not.toContain('<a id=')
      expect(note).not.toContain('The note argues')
      expect(note).not.toContain('note 论证')
    }
    expect(multiLineParagraphs(en)).toBe(0)
  })

  it("unlinks another RFC's appendix too", () => {
    const intent = renderNote(join(folder, '0002-intent.md'), NOTES)
    expect(links(intent)).toEqual([])
    expect(intent).toContain('See alternatives.')
  })

  it("keeps a link to one of DSH's own dated notes, a sibling of the notes in the DSH tree", () => {
    const dated = renderNote(join(folder, '0004-dated.md'), new Map([...NOTES, ['0004-dated.md', '2026-11-29-dated.md']]))
    expect(links(dated)).toEqual(['2026-08-10-session-log-version-mechanism.md'])
  })

  it('refuses a link the DSH tree cannot resolve, and a file that is not a stack RFC', () => {
    expect(() => renderNote(join(folder, '0003-stray.md'), new Map([...NOTES, ['0003-stray.md', 'x.md']])))
      .toThrow(/leaves the RFC folder/)
    expect(() => renderNote(join(folder, '0003-stray.md'), NOTES)).toThrow(/not one of the stack's RFCs/)
  })
})

describe("the project's RFCs as DSH notes", () => {
  const rfcs = join(dirname(fileURLToPath(import.meta.url)), '../../../rfcs')
  const stack = new Map(readdirSync(rfcs).filter(f => /^\d{4}-.*(?<!\.zh)\.md$/.test(f)).map(f => [f, `2026-11-29-${f.slice(5)}`]))

  it.each([...stack.keys()])('%s renders in one line per paragraph with the same link targets in both languages', rfc => {
    const en = renderNote(join(rfcs, rfc), stack)
    const zh = renderNote(join(rfcs, rfc.replace(/\.md$/, '.zh.md')), stack)
    const note = stack.get(rfc) ?? ''
    expect(multiLineParagraphs(en) + multiLineParagraphs(zh)).toBe(0)
    const english = (urls: string[]): string[] => urls.map(url => url.replace(/\.zh\.md(#|$)/, '.md$1'))
    expect(links(en).filter(url => url !== note.replace(/\.md$/, '.zh.md'))).toEqual(english(links(zh).filter(url => url !== note)))
    expect(links(zh).filter(url => url !== note && !url.startsWith('#')).every(url => url.includes('.zh.md'))).toBe(true)
    expect(readFileSync(join(rfcs, rfc), 'utf8')).toMatch(/^# Agent Note: /)
    expect(links(en).concat(links(zh)).filter(url => /(^|\/)\d{4}\//.test(url))).toEqual([])
  })
})
