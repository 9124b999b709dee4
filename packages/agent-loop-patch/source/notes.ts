/**
 * Render an RFC of `rfcs/` (English or its `.zh.md` twin) as the Agent Note a stack step adds to the DSH tree, in
 * DSH's documentation form: one physical line per paragraph (`verify-md-wrap`), links that resolve inside the DSH tree
 * (`verify-md-links`), and the same link targets in both languages (`verify-translation-pairing`).
 *
 * - A link to a sibling RFC becomes a link to its note (the English note from both languages); a link to the RFC's
 *   own twin stays the language switcher.
 * - The appendices of an RFC (`NNNN/*.md`) have no place in DSH's note tree, which holds dated notes only: they are
 *   inlined after the body of RFC NNNN's note, each under an explicit `<a id="appendix-NAME">` anchor (the same in both
 *   languages), and every link to one, from any RFC, becomes that anchor. Their headings move one level down, their
 *   own language switchers go, and a link back to the RFC itself is unlinked (its own anchors differ by language).
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

/** Join every prose paragraph onto one line; CJK text joins without the space a line break stood for. */
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
      return WIDE.test(before) && WIDE.test(after) ? '' : ' '
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

/** Every heading one level deeper. */
function demote(markdown: string): string {
  const edits: Edit[] = []
  visit(parse(markdown), (node) => {
    if (node.type !== 'heading') return
    const { start, end } = offsets(node)
    const source = markdown.slice(start, end)
    if (!source.startsWith('#')) throw new NoteError(`a setext heading (${source.split('\n')[0] ?? ''}) cannot be demoted; write it as ATX`)
    if (node.depth === 6) throw new NoteError(`an H6 heading (${source}) cannot be demoted`)
    edits.push({ start, end, text: `#${source}` })
    return false
  })
  return apply(markdown, edits)
}

/** The text without its language-switcher paragraph: the paragraph that links `twin`, the file's other language. */
function dropSwitcher(markdown: string, twin: string): string {
  const edits: Edit[] = []
  visit(parse(markdown), (node) => {
    if (node.type !== 'paragraph') return
    if (node.children.some(child => child.type === 'link' && child.url === twin)) {
      const { start, end } = offsets(node)
      edits.push({ start, end: markdown.startsWith('\n\n', end) ? end + 2 : end, text: '' })
    }
    return false
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
  const folder = dirname(file)
  const zh = file.endsWith('.zh.md')
  const english = (path: string): string => path.replace(/\.zh\.md$/, '.md')
  const own = english(basename(file))
  const note = notes.get(own)
  if (note === undefined) throw new NoteError(`${own} is not one of the stack's RFCs (${[...notes.keys()].join(', ')})`)
  const appendices: string[] = []
  const anchor = (path: string): string => `appendix-${basename(path, '.md')}`
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
    const sibling = notes.get(resolved)
    if (sibling !== undefined) return fragment === undefined ? sibling : `${sibling}#${fragment}`
    if (dirname(resolved) !== '.') {
      const owner = [...notes].find(([rfc]) => rfc.startsWith(`${dirname(resolved)}-`))
      if (owner === undefined) throw new NoteError(`${from}: the appendix ${url} belongs to no stack RFC (its folder names none)`)
      if (owner[0] !== own) return `${owner[1]}#${anchor(resolved)}`
      if (!appendices.includes(resolved)) appendices.push(resolved)
      return `#${anchor(resolved)}`
    }
    throw new NoteError(`${from}: the link ${url} names neither a stack RFC nor an appendix`)
  }
  const read = (path: string): string => readFileSync(join(folder, zh ? path.replace(/\.md$/, '.zh.md') : path), 'utf8')
  const parts = [relink(read(own), target(basename(file))).trimEnd()]
  for (let i = 0; i < appendices.length; i++) {
    const appendix = appendices[i] ?? ''
    const twin = zh ? basename(appendix) : basename(appendix).replace(/\.md$/, '.zh.md')
    const body = relink(dropSwitcher(read(appendix), twin), target(appendix))
    parts.push(`<a id="${anchor(appendix)}"></a>\n\n${demote(body).trimEnd()}`)
  }
  return `${unwrap(parts.join('\n\n'))}\n`
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
