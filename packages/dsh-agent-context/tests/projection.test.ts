import type { RequestProjection, SessionEvent } from '@deepseek-ai/dsh-session'
import { Session, SessionId } from '@deepseek-ai/dsh-session'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { decodeInclude, encodeInclude, pendingProjection, projectMessages, requestMessagesFromLog } from '../src/index.ts'
import { assistantMessage, userMessage } from './support.ts'

describe('encodeInclude / decodeInclude', () => {
  const caseArb = fc.uniqueArray(fc.nat({ max: 10_000 }), { maxLength: 40 }).chain(surface => fc.record({
    surface: fc.constant(surface),
    keep: fc.array(fc.boolean(), { minLength: surface.length, maxLength: surface.length }),
  }))

  it('round-trips any subsequence of a surface in any seq order, one range per run', () => {
    fc.assert(fc.property(caseArb, ({ surface, keep }) => {
      const include = surface.filter((_, i) => keep[i])
      const ranges = encodeInclude(surface, include)
      expect(decodeInclude(surface, ranges)).toEqual(include)
      const runs = keep.filter((kept, i) => kept && (i === 0 || !keep[i - 1])).length
      expect(ranges).toHaveLength(runs)
    }), { numRuns: 500 })
  })

  it('reads a range as a run in surface order, not as a seq interval', () => {
    // After replacing [4..31] with summary 45, the surface is [45, 37, 48]; the run [37, 48] must not pick up 45.
    expect(decodeInclude([45, 37, 48], [[37, 48]])).toEqual([37, 48])
    expect(encodeInclude([45, 37, 48], [37, 48])).toEqual([[37, 48]])
  })
})

function log(...steps: ((session: Session) => void)[]): Session {
  const session = Session.create(SessionId('projection-test'))
  for (const step of steps) step(session)
  return session
}

const stepStart = (turn: number, step: number) => (session: Session): void => { session.append('step/start', { turn, step }) }
const user = (text: string) => (session: Session): void => { session.append('user/message', userMessage(text), { surfaceOp: 'append' }) }
const projection = (data: RequestProjection) => (session: Session): void => { session.append('request/projection', data) }
const chunk = (turn: number, step: number) => (session: Session): void => {
  session.append('assistant/chunk', { turn, step, chunk: { type: 'finish', reason: { kind: 'stop' } } })
}
const turnStart = (turn: number) => (session: Session): void => { session.append('turn/start', { turn }) }

const select = (include: [number, number][], surfaceNodes: number, includedNodes: number): RequestProjection =>
  ({ turn: 1, step: 1, generation: 0, include, surfaceNodes, includedNodes })

describe('pendingProjection', () => {
  it('is the newest request/projection after the last step/start and assistant/chunk', () => {
    const session = log(turnStart(1), stepStart(1, 1), user('a'), user('b'),
      projection(select([[3, 3]], 2, 1)), projection(select([[2, 2]], 2, 1)))
    expect(pendingProjection(session.events)?.seq).toBe(5)
  })

  it('is consumed by the next assistant/chunk', () => {
    const session = log(turnStart(1), stepStart(1, 1), user('a'), projection(select([[2, 2]], 1, 1)), chunk(1, 1))
    expect(pendingProjection(session.events)).toBeUndefined()
  })

  it('does not outlive its step', () => {
    const session = log(turnStart(1), stepStart(1, 1), user('a'), projection(select([[2, 2]], 1, 1)), stepStart(1, 2))
    expect(pendingProjection(session.events)).toBeUndefined()
  })

  it('is absent from a log without projections', () => {
    expect(pendingProjection(log(turnStart(1), stepStart(1, 1), user('a')).events)).toBeUndefined()
  })
})

describe('projectMessages', () => {
  const threeUsers = (): Session => log(turnStart(1), stepStart(1, 1), user('a'), user('b'), user('c'))
  const eventAt = (session: Session) => (seq: number): SessionEvent => session.events[seq] as SessionEvent

  it('is the surface derivation without a projection', () => {
    const session = threeUsers()
    expect(projectMessages(session.surface, eventAt(session))).toEqual(session.deriveMessages())
  })

  it('keeps the nodes its ranges name', () => {
    const session = threeUsers()
    const [a, , c] = session.deriveMessages()
    expect(projectMessages(session.surface, eventAt(session), select([[2, 2], [4, 4]], 3, 2))).toEqual([a, c])
  })

  it('refuses a projection made under another surface generation', () => {
    const session = threeUsers()
    expect(() => projectMessages(session.surface, eventAt(session), { ...select([[2, 3]], 3, 2), generation: 1 }))
      .toThrow(/generation 1, but the request was sent under generation 0/)
  })

  it('refuses a projection whose counts disagree with its ranges', () => {
    const session = threeUsers()
    expect(() => projectMessages(session.surface, eventAt(session), select([[2, 3]], 3, 1)))
      .toThrow(/counts 1\/3 nodes, but its ranges select 2\/3/)
    expect(() => projectMessages(session.surface, eventAt(session), select([[2, 3]], 4, 2)))
      .toThrow(/counts 2\/4 nodes, but its ranges select 2\/3/)
  })

  it('selects by surface position after a replace leaves the surface out of seq order', () => {
    const session = threeUsers()
    session.append('user/message', userMessage('summary of a and b'), { surfaceOp: { op: 'replace', start: 2, end: 3 }, sourceEventSeqs: [2, 3] })
    session.append('assistant/message', { turn: 1, step: 1, message: assistantMessage('reply') }, { surfaceOp: 'append' })
    expect(session.surface.nodes).toEqual([5, 4, 6])
    const [, c, reply] = session.deriveMessages()
    const data = { ...select(encodeInclude([5, 4, 6], [4, 6]), 3, 2), generation: 1 }
    expect(projectMessages(session.surface, eventAt(session), data)).toEqual([c, reply])
  })
})

describe('requestMessagesFromLog', () => {
  it('filters the live derivation by the pending projection', () => {
    const session = log(turnStart(1), stepStart(1, 1), user('a'), user('b'), projection(select([[3, 3]], 2, 1)))
    expect(requestMessagesFromLog(session)).toEqual([session.deriveMessages()[1]])
  })

  it('is the whole derivation once the projection was consumed', () => {
    const session = log(turnStart(1), stepStart(1, 1), user('a'), user('b'), projection(select([[3, 3]], 2, 1)), chunk(1, 1))
    expect(requestMessagesFromLog(session)).toEqual(session.deriveMessages())
  })
})
