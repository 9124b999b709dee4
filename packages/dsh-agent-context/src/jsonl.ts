/**
 * Read a session log persisted by `@deepseek-ai/dsh-session-persistence-jsonl` 0.1.0-rc.8: a `session` header line,
 * then one storage record per line (a session event verbatim, or a packed `*-chunks` row that expands to consecutive
 * `assistant/chunk` events), as plain JSONL or as concatenated Zstandard frames. Unlike the backend's resume path,
 * which repairs a torn tail, this reader refuses any log that is not complete and current, and any event whose data
 * is not what its type declares where the request rebuild reads it.
 * @module @dsh-seam/agent-context/jsonl
 */

import type { Stats } from 'node:fs'
import type { FileHandle } from 'node:fs/promises'
import { open, stat } from 'node:fs/promises'
import { constants, zstdDecompressSync } from 'node:zlib'
import type { SessionEvent, SessionHeader } from '@deepseek-ai/dsh-session'
import { decodeStorageRecord, KNOWN_SESSION_EVENT_TYPES, SESSION_FORMAT_VERSION } from '@deepseek-ai/dsh-session'

/** Why a session log was refused. */
export type SessionLogErrorCode =
  /** No file at the path. */
  | 'missing-file'
  /** The path names a directory, FIFO, socket or device, not a regular file. */
  | 'not-a-file'
  /** The file exists but cannot be read (permissions, I/O error). */
  | 'unreadable'
  /** The file has no bytes. */
  | 'empty'
  /** The file ends inside a line or a Zstandard frame whose bytes are a valid beginning: a write did not complete. */
  | 'truncated'
  /** Bytes that are not a session log: not UTF-8, not JSON, not Zstandard data that decodes. */
  | 'malformed'
  /** An event whose `data` is null, empty, or not the shape its type declares where requests are rebuilt from it. */
  | 'invalid-event'
  /** An event type unknown to this build (`KNOWN_SESSION_EVENT_TYPES`) without `ignorable: true`. */
  | 'unknown-event-type'
  /** The header's `version` is not this build's `SESSION_FORMAT_VERSION`. */
  | 'format-version'

/** A refused session log, naming the file and, where one is at fault, its 1-based line. */
export class SessionLogError extends Error {
  override readonly name = 'SessionLogError'

  /**
   * @param code - why the log was refused.
   * @param path - the file read.
   * @param line - the offending line, 1-based with the header at line 1, when one line is at fault.
   * @param detail - one sentence on what was wrong.
   * @param options - the underlying parse or decode error.
   */
  constructor(
    readonly code: SessionLogErrorCode,
    readonly path: string,
    readonly line: number | undefined,
    detail: string,
    options?: ErrorOptions,
  ) {
    super(`session log ${path}${line === undefined ? '' : ` line ${line}`}: ${detail}`, options)
  }
}

/** A persisted session: its header and its events in seq order, chunk rows expanded. */
export interface SessionLog {
  readonly header: SessionHeader
  readonly events: SessionEvent[]
  /**
   * @param seq - an event's seq.
   * @returns the 1-based line of the file that holds it (a packed chunk row holds several).
   */
  lineOf(seq: number): number
}

/** The magic number that opens every Zstandard frame, as it is stored (little-endian 0xFD2FB528). */
const ZSTD_MAGIC = Buffer.from([0x28, 0xB5, 0x2F, 0xFD])

/**
 * Most bytes one Zstandard frame of a log may expand to. DSH writes a frame per flush of whole lines, so a frame of
 * a real log stays far below it; a few kilobytes of crafted data can expand to gigabytes, so decoding stops here and
 * memory stays within the cap.
 */
const MAX_FRAME_BYTES = 256 << 20

/**
 * Decode one Zstandard frame, or the decodable prefix of a torn one (`ZSTD_e_flush`, as DSH's backend recovers a torn
 * frame), stopping at {@link MAX_FRAME_BYTES}.
 * @throws {SessionLogError} `malformed` when the frame expands beyond the cap; the decoder's own error otherwise.
 */
function decodeFrame(bytes: Buffer, path: string, start: number, torn: boolean): Buffer {
  try {
    return zstdDecompressSync(bytes, { maxOutputLength: MAX_FRAME_BYTES, ...torn ? { finishFlush: constants.ZSTD_e_flush } : {} })
  } catch (error: unknown) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_BUFFER_TOO_LARGE') throw error
    throw new SessionLogError('malformed', path, undefined, `the Zstandard frame at byte ${start} exceeds ${MAX_FRAME_BYTES >> 20} MiB when decompressed: not a frame DSH writes (decoding stopped there)`, { cause: error })
  }
}
const NEWLINE = 0x0A
const utf8 = new TextDecoder('utf-8', { fatal: true })

function fileKind(info: Stats): string {
  if (info.isDirectory()) return 'a directory'
  if (info.isFIFO()) return 'a FIFO'
  if (info.isSocket()) return 'a socket'
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device'
  return 'not a regular file'
}

/** Bytes read from a plain log at a time: memory holds one chunk and the line being assembled, not the file. */
const CHUNK_BYTES = 1 << 20

async function openRegularFile(path: string): Promise<{ handle: FileHandle; size: number }> {
  const refuse = (error: unknown): never => {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new SessionLogError('missing-file', path, undefined, 'does not exist', { cause: error })
    throw new SessionLogError('unreadable', path, undefined, `cannot be read (${code ?? String(error)})`, { cause: error })
  }
  const info = await stat(path).catch(refuse)
  if (!info.isFile()) throw new SessionLogError('not-a-file', path, undefined, `is ${fileKind(info)}, not a session log file`)
  if (info.size === 0) throw new SessionLogError('empty', path, undefined, 'is empty: it has no session header line')
  return { handle: await open(path, 'r').catch(refuse), size: info.size }
}

/** Plaintext and how many bytes of the file have been read to produce it. */
type Chunk = readonly [plaintext: Buffer, readTo: number]

/** One buffer, refilled: a chunk is valid until the next is read ({@link LineSplitter} copies what it keeps). */
async function* fileChunks(handle: FileHandle, path: string): AsyncGenerator<Chunk> {
  let readTo = 0
  const chunk = Buffer.allocUnsafe(CHUNK_BYTES)
  for (;;) {
    let bytesRead: number
    try {
      ({ bytesRead } = await handle.read(chunk, 0, CHUNK_BYTES, null))
    } catch (error: unknown) {
      throw new SessionLogError('unreadable', path, undefined, `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`, { cause: error })
    }
    if (bytesRead === 0) return
    readTo += bytesRead
    yield [chunk.subarray(0, bytesRead), readTo]
  }
}

/** A torn JSONL line is the start of one JSON object: `{`, then printable text, possibly cut inside a UTF-8 sequence. */
function looksTorn(bytes: Buffer): boolean {
  if (bytes[0] !== 0x7B) return false
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: true })
  } catch {
    // Invalid UTF-8 before the cut: not a line a writer was in the middle of.
    return false
  }
  // oxlint-disable-next-line no-control-regex -- a torn JSON line holds no raw control character
  return !/[\u0000-\u001F]/.test(text)
}

/**
 * Where the Zstandard frame at `start` ends, or `undefined` when the file ends inside it: its header and block headers
 * are read and block payloads skipped, as DSH's backend scans its log (rc.8 does not export that scan). Node's decoder
 * cannot tell this: it stops at the end of the first frame of its input, and returns a cut frame's decodable prefix
 * without an error.
 * @throws {Error} naming the byte of a bad magic number, a reserved header bit or a reserved block type.
 */
function frameEnd(buffer: Buffer, start: number): number | undefined {
  const magic = buffer.subarray(start, start + ZSTD_MAGIC.length)
  if (!magic.equals(ZSTD_MAGIC.subarray(0, magic.length))) throw new Error(`invalid frame magic at byte ${start}`)
  const descriptor = buffer[start + ZSTD_MAGIC.length]
  if (descriptor === undefined) return undefined
  if ((descriptor & 0x18) !== 0) throw new Error(`reserved frame-header bit at byte ${start + ZSTD_MAGIC.length}`)
  const singleSegment = (descriptor & 0x20) !== 0
  const contentSizeFlag = descriptor >>> 6
  const contentSizeBytes = contentSizeFlag === 0 ? Number(singleSegment) : 1 << contentSizeFlag
  const dictionaryBytes = [0, 1, 2, 4][descriptor & 3] as number
  let end = start + ZSTD_MAGIC.length + 1 + Number(!singleSegment) + dictionaryBytes + contentSizeBytes
  for (let last = false; !last;) {
    if (end + 3 > buffer.length) return undefined
    const block = buffer.readUIntLE(end, 3)
    const type = block >>> 1 & 3
    if (type === 3) throw new Error(`reserved block type at byte ${end}`)
    last = (block & 1) !== 0
    end += 3 + (type === 1 ? 1 : block >>> 3)
  }
  end += (descriptor & 0x04) === 0 ? 0 : 4
  return end <= buffer.length ? end : undefined
}

/**
 * The decoded frames of a Zstandard log (DSH writes whole lines per frame), each found by {@link frameEnd}. A torn last
 * frame is `truncated` when its bytes decode as far as they go and `malformed` otherwise; no frame expands beyond
 * {@link MAX_FRAME_BYTES}.
 */
async function* zstdChunks(buffer: Buffer, path: string): AsyncGenerator<Chunk> {
  const frames: { start: number; end: number }[] = []
  let offset = 0
  try {
    for (;;) {
      const end = offset < buffer.length ? frameEnd(buffer, offset) : undefined
      if (end === undefined) break
      frames.push({ start: offset, end })
      offset = end
    }
  } catch (error: unknown) {
    throw new SessionLogError('malformed', path, undefined, `is not Zstandard data that DSH wrote: ${(error as Error).message}`, { cause: error })
  }
  const tornStart = offset < buffer.length ? offset : undefined
  if (tornStart !== undefined) {
    try {
      decodeFrame(buffer.subarray(tornStart), path, tornStart, true)
    } catch (error: unknown) {
      if (error instanceof SessionLogError) throw error
      throw new SessionLogError('malformed', path, undefined, `the Zstandard frame at byte ${tornStart} is incomplete and its bytes do not decode: not a torn write but damaged data`, { cause: error })
    }
  }
  for (const { start, end } of frames) {
    let plaintext: Buffer
    try {
      plaintext = decodeFrame(buffer.subarray(start, end), path, start, false)
    } catch (error: unknown) {
      if (error instanceof SessionLogError) throw error
      throw new SessionLogError('malformed', path, undefined, `the Zstandard frame at byte ${start} does not decode`, { cause: error })
    }
    yield [plaintext, end]
  }
  if (tornStart !== undefined) throw new SessionLogError('truncated', path, undefined, `ends inside the Zstandard frame at byte ${tornStart}: its write did not complete`)
}

/** The plaintext of a log in chunks: read a megabyte at a time, or decoded frame by frame when it is compressed. */
async function plaintextChunks(path: string): Promise<{ chunks: AsyncIterable<Chunk>; compressed: boolean; size: number }> {
  const { handle, size } = await openRegularFile(path)
  const magic = Buffer.alloc(ZSTD_MAGIC.length)
  const { bytesRead } = await handle.read(magic, 0, magic.length, 0)
  if (!magic.subarray(0, bytesRead).equals(ZSTD_MAGIC)) {
    async function* closing(): AsyncGenerator<Chunk> {
      try {
        yield* fileChunks(handle, path)
      } finally {
        await handle.close()
      }
    }
    return { chunks: closing(), compressed: false, size }
  }
  const buffer = Buffer.allocUnsafe(size)
  try {
    await handle.read(buffer, 0, size, 0)
  } finally {
    await handle.close()
  }
  return { chunks: zstdChunks(buffer, path), compressed: true, size }
}

interface Line {
  readonly text: string
  readonly lineNo: number
}

/** Splits plaintext chunks into complete lines, each decoded as UTF-8; refuses a torn or garbage tail. */
class LineSplitter {
  private lineNo = 0
  private carry: Buffer[] = []

  constructor(private readonly path: string, private readonly compressed: boolean) {}

  * push(chunk: Buffer): Generator<Line> {
    let start = 0
    for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      const piece = chunk.subarray(start, end)
      const bytes = this.carry.length === 0 ? piece : Buffer.concat([...this.carry, piece])
      this.carry = []
      yield { text: this.decode(bytes, ++this.lineNo), lineNo: this.lineNo }
      start = end + 1
    }
    if (start < chunk.length) this.carry.push(Buffer.from(chunk.subarray(start)))
    if (this.compressed) this.end()
  }

  /** @throws {SessionLogError} when bytes without a line end remain. */
  end(): void {
    if (this.carry.length === 0) return
    const { path } = this
    const lineNo = this.lineNo + 1
    if (this.compressed) throw new SessionLogError('malformed', path, lineNo, 'ends inside a complete Zstandard frame: DSH writes whole lines per frame')
    const tail = Buffer.concat(this.carry)
    if (!looksTorn(tail)) throw new SessionLogError('malformed', path, lineNo, `is ${tail.length} bytes without a line end that are not the start of a JSON line (binary data?)`)
    throw new SessionLogError('truncated', path, lineNo, lineNo === 1 ? 'ends before the session header line is complete' : 'ends inside this line: its write did not complete')
  }

  private decode(bytes: Buffer, lineNo: number): string {
    try {
      return utf8.decode(bytes)
    } catch (error: unknown) {
      const detail = (error as NodeJS.ErrnoException).code === 'ERR_ENCODING_INVALID_ENCODED_DATA' ? 'is not UTF-8 text' : `cannot be decoded (${(error as Error).message})`
      throw new SessionLogError('malformed', this.path, lineNo, detail, { cause: error })
    }
  }
}

function parseLine({ text, lineNo }: Line, path: string): unknown {
  try {
    return JSON.parse(text)
  } catch (error: unknown) {
    throw new SessionLogError('malformed', path, lineNo, text.length === 0 ? 'is empty, not JSON' : 'is not JSON', { cause: error })
  }
}

function readHeader(line: Line, path: string): SessionHeader {
  const parsed = parseLine(line, path) as Record<string, unknown> | null
  const version = typeof parsed === 'object' ? parsed?.['version'] : undefined
  if (typeof version === 'number' && version !== SESSION_FORMAT_VERSION) {
    throw new SessionLogError('format-version', path, 1, `uses session log format v${version}; this build reads only v${SESSION_FORMAT_VERSION}`)
  }
  if (
    typeof parsed !== 'object' || parsed === null || parsed['type'] !== 'session' || typeof version !== 'number'
    || typeof parsed['id'] !== 'string' || !Number.isSafeInteger(parsed['createdAt'])
  ) {
    throw new SessionLogError('malformed', path, 1, 'is not a session header ({ type: "session", version, id, createdAt, ... })')
  }
  const { type: _tag, ...header } = parsed
  return header as unknown as SessionHeader
}

type Shape = (value: unknown) => string | undefined

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)
const isCount = (value: unknown): boolean => Number.isSafeInteger(value) && (value as number) >= 0

function counts(...keys: string[]): Shape {
  return data => {
    const wrong = keys.find(key => !isCount((data as Record<string, unknown>)[key]))
    return wrong === undefined ? undefined : `"${wrong}" is not a non-negative integer`
  }
}

function blocksProblem(content: unknown, at: string): string | undefined {
  if (!Array.isArray(content)) return `${at} is not an array of content blocks`
  for (const [i, block] of content.entries()) {
    const where = `${at}[${i}]`
    if (!isObject(block) || typeof block['type'] !== 'string') return `${where} is not a content block ({ type, ... })`
    if ((block['type'] === 'text' || block['type'] === 'reasoning') && typeof block['text'] !== 'string') return `${where}.text is not a string`
    if (block['type'] === 'tool-call' && (typeof block['name'] !== 'string' || typeof block['arguments'] !== 'string')) return `${where} is a tool call without string name and arguments`
    if (block['type'] === 'tool-result') {
      const nested = blocksProblem(block['content'], `${where}.content`)
      if (nested !== undefined) return nested
    }
  }
  return undefined
}

function message(role: string, at: string): Shape {
  return value => {
    if (!isObject(value)) return `${at} is not a message object`
    if (value['role'] !== role) return `${at}.role is not "${role}"`
    return blocksProblem(value['content'], `${at}.content`)
  }
}

function all(...shapes: Shape[]): Shape {
  return value => {
    for (const shape of shapes) {
      const problem = shape(value)
      if (problem !== undefined) return problem
    }
    return undefined
  }
}

function field(key: string, shape: Shape): Shape {
  return data => shape((data as Record<string, unknown>)[key])
}

const optional = (check: (value: unknown) => boolean, expected: string, key: string): Shape =>
  value => (value as Record<string, unknown>)[key] === undefined || check((value as Record<string, unknown>)[key]) ? undefined : `header.${key} is not ${expected}`

/**
 * What the request rebuild reads of each event type's `data` (turn and step positions, messages and their content
 * blocks as the token meter prices them, the request header). Every other known type needs only non-empty object data.
 */
const DATA_SHAPES: Readonly<Record<string, Shape>> = {
  'turn/start': counts('turn'),
  'turn/end': counts('turn'),
  'step/start': counts('turn', 'step'),
  'step/end': counts('turn', 'step'),
  'user/message': message('user', 'data'),
  'assistant/chunk': all(counts('turn', 'step'), field('chunk', chunk => isObject(chunk) && typeof chunk['type'] === 'string' ? undefined : 'chunk is not a stream chunk ({ type, ... })')),
  'assistant/message': all(counts('turn', 'step'), field('message', message('assistant', 'message'))),
  'tool/result': all(counts('turn', 'step'), field('message', message('user', 'message'))),
  'request/header': field('header', header => isObject(header)
    ? all(optional(value => typeof value === 'string', 'a string', 'system'), optional(Array.isArray, 'an array', 'tools'))(header)
    : 'header is not a request header object'),
}

/** Known types whose data DSH declares empty (`SessionEventMap['session/end-seed']` is `Record<string, never>`). */
const EMPTY_DATA_TYPES: ReadonlySet<string> = new Set(['session/end-seed'])

function checkEvent(event: SessionEvent, expectedSeq: number, lineNo: number, path: string): void {
  const raw = event as unknown as Record<string, unknown> | null
  if (!isObject(raw) || typeof raw['type'] !== 'string' || raw['data'] === undefined
    || (raw['ignorable'] !== undefined && raw['ignorable'] !== true)) {
    throw new SessionLogError('malformed', path, lineNo, 'is not a session event envelope ({ type, seq, time, data, ... })')
  }
  if (raw['seq'] !== expectedSeq) {
    throw new SessionLogError('malformed', path, lineNo, `holds seq ${JSON.stringify(raw['seq']) ?? 'undefined'} where seq ${expectedSeq} is next`)
  }
  if (!KNOWN_SESSION_EVENT_TYPES.has(event.type)) {
    if (event.ignorable === true) return
    throw new SessionLogError('unknown-event-type', path, lineNo, `holds event type ${JSON.stringify(event.type)} (seq ${event.seq}), unknown to this build and not marked ignorable`)
  }
  const { data } = raw
  const named = `holds a ${event.type} event (seq ${event.seq})`
  if (!isObject(data)) throw new SessionLogError('invalid-event', path, lineNo, `${named} whose data is ${data === null ? 'null' : Array.isArray(data) ? 'an array' : typeof data}, not an object`)
  if (Object.keys(data).length === 0 && !EMPTY_DATA_TYPES.has(event.type)) throw new SessionLogError('invalid-event', path, lineNo, `${named} whose data is empty ({})`)
  const problem = DATA_SHAPES[event.type]?.(data)
  if (problem !== undefined) throw new SessionLogError('invalid-event', path, lineNo, `${named} whose data is not what its type declares: ${problem}`)
}

/** A log read without keeping its events: the header and how many events it holds. */
export interface ScannedSessionLog {
  readonly header: SessionHeader
  readonly events: number
}

/**
 * Read a persisted session log completely, keeping every event.
 * @param path - a `session.jsonl` or `session.jsonl.zstd` file.
 * @returns the header and every event.
 */
export function readSessionLog(path: string): Promise<SessionLog>
/**
 * Read a persisted session log event by event without keeping its events: the file is read a megabyte at a time (a
 * compressed one is decoded frame by frame) and each line decoded, checked and handed to `visit` in seq order.
 * @param path - a `session.jsonl` or `session.jsonl.zstd` file.
 * @param visit - called with each event and the 1-based line that holds it (a packed chunk row holds several).
 * @param onRead - called with the bytes of the file read so far and its size, after each megabyte or frame.
 * @returns the header and the number of events.
 */
export function readSessionLog(path: string, visit: (event: SessionEvent, line: number) => void, onRead?: (bytes: number, size: number) => void): Promise<ScannedSessionLog>
/**
 * @throws {SessionLogError} `missing-file`, `not-a-file`, `unreadable`, `empty`; then in file order: `format-version`
 * before any other check of the header; `truncated` when the file ends inside a line or frame that a write was
 * cut off in; `malformed` for bytes that are not a session log; `invalid-event`; `unknown-event-type`, like DSH's
 * resume refusal. Events before the refused line have been visited.
 */
export async function readSessionLog(
  path: string,
  visit?: (event: SessionEvent, line: number) => void,
  onRead?: (bytes: number, size: number) => void,
): Promise<SessionLog | ScannedSessionLog> {
  if (visit !== undefined) return scan(path, visit, onRead)
  const events: SessionEvent[] = []
  const lineOfSeq: number[] = []
  const { header } = await scan(path, (event, line) => {
    events.push(event)
    lineOfSeq.push(line)
  })
  return { header, events, lineOf: seq => lineOfSeq[seq] ?? 0 }
}

async function scan(
  path: string,
  visit: (event: SessionEvent, line: number) => void,
  onRead?: (bytes: number, size: number) => void,
): Promise<ScannedSessionLog> {
  const { chunks, compressed, size } = await plaintextChunks(path)
  const splitter = new LineSplitter(path, compressed)
  let header: SessionHeader | undefined
  let next = 0
  for await (const [chunk, readTo] of chunks) {
    for (const line of splitter.push(chunk)) {
      if (header === undefined) {
        header = readHeader(line, path)
        continue
      }
      const record = parseLine(line, path)
      let decoded: SessionEvent[]
      try {
        decoded = decodeStorageRecord(record)
      } catch (error: unknown) {
        throw new SessionLogError('malformed', path, line.lineNo, `is not a storage record: ${(error as Error).message}`, { cause: error })
      }
      for (const event of decoded) {
        checkEvent(event, next++, line.lineNo, path)
        visit(event, line.lineNo)
      }
    }
    onRead?.(readTo, size)
  }
  splitter.end()
  if (header === undefined) throw new SessionLogError('malformed', path, undefined, 'holds no session header line')
  return { header, events: next }
}
