/**
 * Bring the reviewed Chinese side of a generated catalog along with its regenerated English side where the two must
 * agree: its fenced code blocks are the English ones, in order (DSH's bilingual-pair gate compares them), and the n-th
 * `path.ts:line` reference to a path takes the line of the n-th English reference to that path. DSH's
 * `docs/persistence-catalog.zh.md` is kept this way.
 *
 * Usage: node zh-sites.ts <doc.md> <doc.zh.md>   (rewrites doc.zh.md)
 * @module @dsh-seam/agent-loop-patch/source/zh-sites
 */

import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const SITE = /([\w./-]+\.ts):(\d+)/g
const FENCE = /^```[^\n]*\n[\s\S]*?^```$/gm

/**
 * The Chinese text with each fenced code block replaced by the English block of the same rank.
 * @param english - the regenerated English document.
 * @param chinese - its reviewed Chinese counterpart.
 * @returns the Chinese document with the English code blocks.
 * @throws {Error} when the two sides have a different number of code blocks.
 */
export function bringCodeAlong(english: string, chinese: string): string {
  const blocks = english.match(FENCE) ?? []
  const count = (chinese.match(FENCE) ?? []).length
  if (count !== blocks.length) throw new Error(`the English side has ${blocks.length} code blocks, the Chinese side ${count}: translate the new section first`)
  let n = 0
  return chinese.replaceAll(FENCE, () => blocks[n++] as string)
}

/**
 * The Chinese text with each declaration site's line taken from the English text.
 * @param english - the regenerated English document.
 * @param chinese - its reviewed Chinese counterpart.
 * @returns the Chinese document with the English lines.
 * @throws {Error} when a path is cited a different number of times on the two sides.
 */
export function bringSitesAlong(english: string, chinese: string): string {
  const lines = new Map<string, string[]>()
  for (const [, path, line] of english.matchAll(SITE)) lines.set(path as string, [...lines.get(path as string) ?? [], line as string])
  const used = new Map<string, number>()
  const out = chinese.replaceAll(SITE, (site, path: string) => {
    const n = used.get(path) ?? 0
    used.set(path, n + 1)
    const line = lines.get(path)?.[n]
    if (line === undefined) throw new Error(`the Chinese side cites ${path} more often than the English side (${site})`)
    return `${path}:${line}`
  })
  for (const [path, cited] of lines) {
    if ((used.get(path) ?? 0) !== cited.length) throw new Error(`the English side cites ${path} ${cited.length} times, the Chinese side ${used.get(path) ?? 0}`)
  }
  return out
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [en, zh] = process.argv.slice(2)
  if (en === undefined || zh === undefined) {
    console.error('usage: node zh-sites.ts <doc.md> <doc.zh.md>')
    process.exit(2)
  }
  const english = readFileSync(en, 'utf8')
  writeFileSync(zh, bringSitesAlong(english, bringCodeAlong(english, readFileSync(zh, 'utf8'))))
}
