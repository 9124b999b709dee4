/**
 * Render an RFC of `rfcs/` (English or its `.zh.md` twin) as the Agent Note a stack step adds to the DSH tree, in
 * DSH's documentation form: one physical line per paragraph (`verify-md-wrap`), links that resolve inside the DSH tree
 * (`verify-md-links`), and the same link targets in both languages, each in its own locale
 * (`verify-translation-pairing`).
 *
 * - A link to a sibling RFC becomes a link to its note in the same language (the `.zh.md` note from a Chinese twin,
 *   as `verify-translation-pairing` requires); a link to the RFC's own twin stays the language switcher.
 * - A link to one of DSH's own dated Agent Notes (`yyyy-mm-dd-topic.md`, a sibling of the notes in the DSH tree) stays.
 * - A link to an appendix of an RFC (`NNNN/*.md`, the workspace's supporting material) is unlinked, its text kept:
 *   DSH's note tree holds dated notes only, and each note stands alone, so appendices are neither inlined nor linked.
 *
 * Usage: node notes.ts <rfcs/NNNN-x.md | rfcs/NNNN-x.zh.md> <rfc.md>=<note.md>...   (prints the note)
 * @module @dsh-seam/agent-loop-patch/source/notes
 */

import { readFileSync } from 'node:fs'
import { basename, dirname, join, normalize } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Nodes, Root } from 'mdast'
import { fromMarkdown } from 'mdast-util-from-markdown'
import { gfmFromMarkdown } from 'mdast-util-gfm'
import { gfm } from 'micromark-extension-gfm'

class NoteError extends Error {
  override readonly name = 'NoteError'
}

const parse = (markdown: string): Root => fromMarkdown(markdown, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] })

/** Source edits by offset, applied from the end so earlier offsets stay valid. */
interface Edit { readonly start: number; readonly end: number; readonly text: string }

function apply(source: string, edits: readonly Edit[]): string {
  let out = source
  for (const edit of [...edits].sort((a, b) => b.start - a.start)) out = out.slice(0, edit.start) + edit.text + out.slice(edit.end)
  return out
}

function visit(node: Nodes, enter: (node: Nodes, quoted: number) => boolean | void, quoted = 0): void {
  if (enter(node, quoted) === false) return
  if ('children' in node) for (const child of node.children) visit(child, enter, quoted + (node.type === 'blockquote' ? 1 : 0))
}

function offsets(node: Nodes): { start: number; end: number } {
  const start = node.position?.start.offset
  const end = node.position?.end.offset
  if (start === undefined || end === undefined) throw new NoteError(`a ${node.type} node has no source position`)
  return { start, end }
}

const WIDE = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u3000-\u303f\uff00-\uffef]/u
/** Full-width punctuation, which takes no space on either side. */
const WIDE_PUNCTUATION = /[\u3000-\u303f\uff00-\uffef]/u

/**
 * Join every prose paragraph onto one line; CJK text, and full-width punctuation next to anything, joins without the
 * space a line break stood for.
 */
export function unwrap(markdown: string): string {
  const edits: Edit[] = []
  visit(parse(markdown), (node, quoted) => {
    if (node.type !== 'paragraph') return
    const { start, end } = offsets(node)
    const text = markdown.slice(start, end)
    if (!text.includes('\n')) return false
    const marker = new RegExp(`\\n[ \\t]*${'(?:>[ \\t]?)'.repeat(quoted)}[ \\t]*`, 'g')
    const joined = text.replace(marker, (_match: string, at: number) => {
      const before = text[at - 1] ?? ''
      const after = text[at + _match.length] ?? ''
      const tight = (WIDE.test(before) && WIDE.test(after)) || WIDE_PUNCTUATION.test(before) || WIDE_PUNCTUATION.test(after)
      return tight ? '' : ' '
    })
    edits.push({ start, end, text: joined })
    return false
  })
  return apply(markdown, edits)
}

/**
 * Replace each link's target by `target(url)`: a string is the new target, `null` unlinks (keeps the link text),
 * `undefined` leaves the link as it is.
 */
function relink(markdown: string, target: (url: string) => string | null | undefined): string {
  const edits: Edit[] = []
  visit(parse(markdown), node => {
    if (node.type !== 'link') return
    const next = target(node.url)
    if (next === undefined || next === node.url) return
    const { start, end } = offsets(node)
    if (next === null) {
      const first = node.children[0]
      const last = node.children.at(-1)
      const text = first === undefined || last === undefined ? '' : markdown.slice(offsets(first).start, offsets(last).end)
      edits.push({ start, end, text })
      return
    }
    const source = markdown.slice(start, end)
    const at = source.lastIndexOf(`](${node.url}`)
    if (at < 0) throw new NoteError(`link to ${node.url} is not an inline link; write it as [text](${node.url})`)
    edits.push({ start: start + at + 2, end: start + at + 2 + node.url.length, text: next })
  })
  return apply(markdown, edits)
}

/**
 * The Agent Note made from one RFC file.
 * @param file - the RFC, `NNNN-x.md` or its `NNNN-x.zh.md` twin (its directory is the RFC folder).
 * @param notes - each step's RFC (English, RFC-folder-relative) and the note file name it becomes.
 * @returns the note's Markdown.
 */
export function renderNote(file: string, notes: ReadonlyMap<string, string>): string {
  const zh = file.endsWith('.zh.md')
  const english = (path: string): string => path.replace(/\.zh\.md$/, '.md')
  const own = english(basename(file))
  const note = notes.get(own)
  if (note === undefined) throw new NoteError(`${own} is not one of the stack's RFCs (${[...notes.keys()].join(', ')})`)
  /** The DSH target of a link written in `from` (an RFC-folder-relative file). */
  const target = (from: string) => (url: string): string | null | undefined => {
    if (/^[a-z][a-z+.-]*:|^#/i.test(url)) return undefined
    const [path = '', fragment] = url.split('#', 2)
    const resolved = english(normalize(join(dirname(from), path)))
    if (resolved.startsWith('..')) throw new NoteError(`${from}: the link ${url} leaves the RFC folder; the DSH tree cannot resolve it`)
    if (resolved === own) {
      // The own twin in the other language is the language switcher; the RFC itself, in its own language, is this
      // note, whose anchors differ by language: unlinked.
      if (url.endsWith('.zh.md') !== zh) return zh ? note : note.replace(/\.md$/, '.zh.md')
      return null
    }
    const named = notes.get(resolved)
    const sibling = named === undefined || !zh ? named : named.replace(/\.md$/, '.zh.md')
    if (sibling !== undefined) return fragment === undefined ? sibling : `${sibling}#${fragment}`
    // One of DSH's own dated Agent Notes, a sibling of the stack's notes in the DSH tree: linked as written.
    if (/^\d{4}-\d{2}-\d{2}-[a-z0-9-]+(\.zh)?\.md$/.test(path)) return undefined
    // An appendix (`NNNN/*.md`) is workspace material: the note keeps the link's text only.
    if (/^\d{4}$/.test(dirname(resolved))) return null
    throw new NoteError(`${from}: the link ${url} names neither a stack RFC nor an appendix`)
  }
  const body = relink(readFileSync(file, 'utf8'), target(basename(file))).trimEnd()
  return `${unwrap(body)}\n`
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [file, ...pairs] = process.argv.slice(2)
  if (file === undefined || pairs.length === 0) {
    console.error('usage: node notes.ts <rfcs/NNNN-x.md | rfcs/NNNN-x.zh.md> <rfc.md>=<note.md>...')
    process.exit(2)
  }
  const notes = new Map(pairs.map(pair => {
    const [rfc = '', name = ''] = pair.split('=', 2)
    return [basename(rfc), basename(name)] as const
  }))
  try {
    process.stdout.write(renderNote(file, notes))
  } catch (error: unknown) {
    if (!(error instanceof NoteError)) throw error
    console.error(`notes: ${error.message}`)
    process.exit(1)
  }
}
