/**
 * Read a session log persisted by `@deepseek-ai/dsh-session-persistence-jsonl` 0.1.0-rc.8: a `session` header line,
 * then one storage record per line (a session event verbatim, or a packed `*-chunks` row that expands to consecutive
 * `assistant/chunk` events), as plain JSONL or as concatenated Zstandard frames. Unlike the backend's resume path,
 * which repairs a torn tail, this reader refuses any log that is not complete and current.
 * @module @dsh-context/agent-context/jsonl
 */

import { readFile } from 'node:fs/promises'
import { zstdDecompressSync } from 'node:zlib'
import type { SessionEvent, SessionHeader } from '@deepseek-ai/dsh-session'
import { decodeStorageRecord, KNOWN_SESSION_EVENT_TYPES, SESSION_FORMAT_VERSION } from '@deepseek-ai/dsh-session'

/** Why a session log was refused. */
export type SessionLogErrorCode =
  /** No file at the path. */
  | 'missing-file'
  /** The file ends inside a line or a Zstandard frame: a write did not complete. */
  | 'truncated'
  /** A complete line is not a header, a storage record or an event envelope with the next seq. */
  | 'malformed'
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
}

const ZSTD_MAGIC = 0xFD2FB528

/**
 * Byte ranges of the complete Zstandard frames (RFC 8878 §3.1.1) of a buffer, read from frame and block headers
 * without decompressing.
 * @returns the frame ranges and, when the buffer ends inside a frame, that frame's start.
 */
function zstdFrames(buffer: Buffer, path: string): { frames: [number, number][]; tornAt?: number } {
  const frames: [number, number][] = []
  let offset = 0
  while (offset < buffer.length) {
    const start = offset
    if (buffer.length - offset < 5) return { frames, tornAt: start }
    if (buffer.readUInt32LE(offset) !== ZSTD_MAGIC) {
      throw new SessionLogError('malformed', path, undefined, `byte ${offset} does not start a Zstandard frame`)
    }
    const descriptor = buffer.readUInt8(offset + 4)
    const singleSegment = (descriptor & 0x20) !== 0
    const sizeFlag = descriptor >>> 6
    const dictionaryBytes = [0, 1, 2, 4][descriptor & 3] as number
    const contentSizeBytes = sizeFlag === 0 ? (singleSegment ? 1 : 0) : 1 << sizeFlag
    offset += 5 + (singleSegment ? 0 : 1) + dictionaryBytes + contentSizeBytes
    for (let last = false; !last;) {
      if (buffer.length - offset < 3) return { frames, tornAt: start }
      const block = buffer.readUIntLE(offset, 3)
      last = (block & 1) !== 0
      offset += 3 + ((block >>> 1 & 3) === 1 ? 1 : block >>> 3)
    }
    if ((descriptor & 0x04) !== 0) offset += 4
    if (offset > buffer.length) return { frames, tornAt: start }
    frames.push([start, offset])
  }
  return { frames }
}

/** The JSONL text of a file, decompressing concatenated Zstandard frames when the file starts with one. */
function plaintext(buffer: Buffer, path: string): { text: string; tornFrameAt?: number } {
  if (buffer.length < 4 || buffer.readUInt32LE(0) !== ZSTD_MAGIC) return { text: buffer.toString('utf8') }
  const { frames, tornAt } = zstdFrames(buffer, path)
  const parts = frames.map(([start, end]) => {
    try {
      return zstdDecompressSync(buffer.subarray(start, end))
    } catch (error: unknown) {
      throw new SessionLogError('malformed', path, undefined, `the Zstandard frame at byte ${start} does not decode`, { cause: error })
    }
  })
  return { text: Buffer.concat(parts).toString('utf8'), ...tornAt === undefined ? {} : { tornFrameAt: tornAt } }
}

function parseLine(line: string, lineNo: number, path: string): unknown {
  try {
    return JSON.parse(line)
  } catch (error: unknown) {
    throw new SessionLogError('malformed', path, lineNo, 'is not JSON', { cause: error })
  }
}

function readHeader(line: string, path: string): SessionHeader {
  const parsed = parseLine(line, 1, path) as Record<string, unknown> | null
  const version = parsed?.['version']
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

function checkEvent(event: SessionEvent, expectedSeq: number, lineNo: number, path: string): void {
  const raw = event as unknown as Record<string, unknown> | null
  if (typeof raw !== 'object' || raw === null || typeof raw['type'] !== 'string' || raw['data'] === undefined
    || (raw['ignorable'] !== undefined && raw['ignorable'] !== true)) {
    throw new SessionLogError('malformed', path, lineNo, 'is not a session event envelope ({ type, seq, time, data, ... })')
  }
  if (raw['seq'] !== expectedSeq) {
    throw new SessionLogError('malformed', path, lineNo, `holds seq ${String(raw['seq'])} where seq ${expectedSeq} is next`)
  }
  if (!KNOWN_SESSION_EVENT_TYPES.has(event.type) && event.ignorable !== true) {
    throw new SessionLogError('unknown-event-type', path, lineNo, `holds event type "${event.type}" (seq ${event.seq}), unknown to this build and not marked ignorable`)
  }
}

/**
 * Read a persisted session log completely.
 * @param path - a `session.jsonl` or `session.jsonl.zstd` file.
 * @returns the header and every event.
 * @throws {SessionLogError} `missing-file`; `format-version` before any other check of the header; `truncated` when
 * the file ends inside a line or frame; `malformed`; `unknown-event-type`, like DSH's resume refusal.
 */
export async function readSessionLog(path: string): Promise<SessionLog> {
  let buffer: Buffer
  try {
    buffer = await readFile(path)
  } catch (error: unknown) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new SessionLogError('missing-file', path, undefined, 'does not exist', { cause: error })
    throw error
  }
  const { text, tornFrameAt } = plaintext(buffer, path)
  const lines = text.split('\n')
  const tail = lines.pop() as string
  if (lines.length === 0) throw new SessionLogError('truncated', path, 1, 'ends before the session header line is complete')
  const header = readHeader(lines[0] as string, path)
  if (tail !== '') throw new SessionLogError('truncated', path, lines.length + 1, 'ends inside this line: its write did not complete')
  if (tornFrameAt !== undefined) {
    throw new SessionLogError('truncated', path, lines.length + 1, `ends inside the Zstandard frame at byte ${tornFrameAt}: its write did not complete`)
  }
  const events: SessionEvent[] = []
  for (let i = 1; i < lines.length; i++) {
    const lineNo = i + 1
    const record = parseLine(lines[i] as string, lineNo, path)
    let decoded: SessionEvent[]
    try {
      decoded = decodeStorageRecord(record)
    } catch (error: unknown) {
      throw new SessionLogError('malformed', path, lineNo, 'is not a storage record', { cause: error })
    }
    for (const event of decoded) {
      checkEvent(event, events.length, lineNo, path)
      events.push(event)
    }
  }
  return { header, events }
}
