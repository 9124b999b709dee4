import type { RequestProjection, SessionEvent } from '@deepseek-ai/dsh-session'
import { Session, SessionId } from '@deepseek-ai/dsh-session'
import { describe, expect, it } from 'vitest'
import { createUserMessage } from '@deepseek-ai/dsh-llm'
import { isRequestProjection } from '../src/check.ts'
import { pendingProjection, requestMessagesFromLog } from '../src/projection.ts'

function log(...steps: ((session: Session) => void)[]): Session {
  const session = Session.create(SessionId('projection-test'))
  for (const step of steps) step(session)
  return session
}

const stepStart = (turn: number, step: number) => (session: Session): void => { session.append('step/start', { turn, step }) }
const user = (text: string) => (session: Session): void => {
  session.append('user/message', createUserMessage({ content: [{ type: 'text', text }], source: { kind: 'user' } }), { surfaceOp: 'append' })
}
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

describe('isRequestProjection', () => {
  it('accepts the event\'s shape and refuses counts that are no non-negative integers, runs that are no pairs and a revision that is no string', () => {
    const data = select([[1, 4]], 3, 3)
    expect(isRequestProjection(data)).toBe(true)
    expect(isRequestProjection({ ...data, revision: 'r', stale: 1 })).toBe(true)
    for (const bad of [{ ...data, surfaceNodes: -1 }, { ...data, includedNodes: 1.5 }, { ...data, turn: '1' }, { ...data, include: [[1, 2, 3]] }, { ...data, include: [1] }, { ...data, revision: 7 }, { ...data, stale: -2 }, null, []]) {
      expect(isRequestProjection(bad)).toBe(false)
    }
  })
})

describe('requestMessagesFromLog', () => {
  const threeUsers = (): Session => log(turnStart(1), stepStart(1, 1), user('a'), user('b'), user('c'))

  it('filters the live derivation by the pending projection', () => {
    const session = log(turnStart(1), user('earlier'), stepStart(1, 1), user('b'), projection(select([[1, 1], [3, 3]], 2, 2)))
    expect(requestMessagesFromLog(session)).toEqual(session.deriveMessages())
    const later = log(turnStart(1), user('a'), turnStart(2), stepStart(2, 1), user('b'), projection({ ...select([[4, 4]], 2, 1), turn: 2 }))
    expect(requestMessagesFromLog(later)).toEqual([later.deriveMessages()[1]])
  })

  it('decodes a projection that leaves out what today\'s host requires, as written', () => {
    const session = threeUsers()
    const written = { type: 'request/projection', seq: 5, time: 0, data: select([[4, 4]], 3, 1) } as SessionEvent
    const log = { events: [...session.events, written], surface: session.surface, deriveMessages: () => session.deriveMessages() }
    expect(requestMessagesFromLog(log)).toEqual(session.deriveMessages().slice(2))
  })

  it('refuses a projection made under another surface generation or for another step', () => {
    const session = threeUsers()
    const withPending = (data: RequestProjection) => ({ events: [...session.events, { type: 'request/projection', seq: 5, time: 0, data } as SessionEvent], surface: session.surface, deriveMessages: () => session.deriveMessages() })
    expect(() => requestMessagesFromLog(withPending({ ...select([[2, 4]], 3, 3), generation: 1 })))
      .toThrow(/generation 1, but the request was sent under generation 0/)
    expect(() => requestMessagesFromLog(withPending({ ...select([[2, 4]], 3, 3), step: 2 })))
      .toThrow(/turn 1 step 2, but the request is turn 1 step 1/)
    expect(() => requestMessagesFromLog(withPending(select([[2, 4]], 3, 2)))).toThrow(expect.objectContaining({ code: 'projection-counts' }))
    expect(() => requestMessagesFromLog(withPending(select([[1, 4]], 3, 3)))).toThrow(expect.objectContaining({ code: 'foreign-seq' }))
    expect(() => requestMessagesFromLog(withPending(select([[2, 9]], 3, 3))))
      .toThrow(/run \[2, 9\] names seq 9, which is not a message-bearing node/)
    expect(() => requestMessagesFromLog(withPending(select([[3, 4], [2, 2]], 3, 3)))).toThrow(expect.objectContaining({ code: 'unordered-ranges' }))
  })

  it('is the whole derivation once the projection was consumed', () => {
    const session = log(turnStart(1), stepStart(1, 1), user('a'), user('b'), projection(select([[3, 3]], 2, 1)), chunk(1, 1))
    expect(requestMessagesFromLog(session)).toEqual(session.deriveMessages())
  })
})
