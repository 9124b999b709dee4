/**
 * Bring the reviewed Chinese side of a generated table document along with its regenerated English side: the data
 * rows of each table (every line after a table's header and separator) are the English rows verbatim; the Chinese
 * headers and prose stay. DSH's `docs/event-producer-consumer.zh.md` is kept this way (its rows are generator output).
 *
 * Usage: node zh-rows.ts <doc.md> <doc.zh.md>   (rewrites doc.zh.md)
 * @module @dsh-seam/agent-loop-patch/source/zh-rows
 */

import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** Line ranges `[start, end)` of the tables of a Markdown text: runs of lines that start with `|`. */
function tables(lines: readonly string[]): [number, number][] {
  const out: [number, number][] = []
  for (let i = 0; i < lines.length; i++) {
    if (!(lines[i] ?? '').startsWith('|')) continue
    let end = i
    while ((lines[end] ?? '').startsWith('|')) end++
    out.push([i, end])
    i = end
  }
  return out
}

/**
 * The Chinese text with every table's data rows replaced by the English table's, in order.
 * @param english - the regenerated English document.
 * @param chinese - its reviewed Chinese counterpart.
 * @returns the Chinese document with the English rows.
 * @throws {Error} when the two documents do not have the same number of tables.
 */
export function bringRowsAlong(english: string, chinese: string): string {
  const en = english.split('\n')
  const zh = chinese.split('\n')
  const enTables = tables(en)
  const zhTables = tables(zh)
  if (enTables.length !== zhTables.length) {
    throw new Error(`the English side has ${enTables.length} tables, the Chinese side ${zhTables.length}: translate the new table first`)
  }
  for (let t = zhTables.length - 1; t >= 0; t--) {
    const [zhStart, zhEnd] = zhTables[t] as [number, number]
    const [enStart, enEnd] = enTables[t] as [number, number]
    zh.splice(zhStart + 2, zhEnd - zhStart - 2, ...en.slice(enStart + 2, enEnd))
  }
  return zh.join('\n')
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [en, zh] = process.argv.slice(2)
  if (en === undefined || zh === undefined) {
    console.error('usage: node zh-rows.ts <doc.md> <doc.zh.md>')
    process.exit(2)
  }
  writeFileSync(zh, bringRowsAlong(readFileSync(en, 'utf8'), readFileSync(zh, 'utf8')))
}
