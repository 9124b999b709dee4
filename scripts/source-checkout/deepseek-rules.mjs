// DeepSeek's documented request rules for chat completions, which the loopback server (mock-deepseek.mjs) enforces
// so that a request the real API would refuse with 400 fails there too. Each rule, and where DeepSeek states it:
//   - Thinking mode is on unless the request says `thinking: { type: 'disabled' }` ("The thinking toggle defaults to
//     enabled", https://api-docs.deepseek.com/guides/thinking_mode). In thinking mode, an assistant message that made
//     tool calls keeps its `reasoning_content` in every later request: "for turns that do perform tool calls, the
//     reasoning_content must be fully passed back to the API in all subsequent requests. If your code does not
//     correctly pass back reasoning_content, the API will return a 400 error" (same page, "Tool Calls"). The API
//     answers "Missing `reasoning_content` field in the assistant message at message index N".
//   - Every tool call is answered, right after it: an assistant message with `tool_calls` is followed by one `tool`
//     message per `tool_call_id`, and a `tool` message answers a call of the assistant message before it. The
//     thinking-mode guide's tool-call sample appends the assistant message and then one `{ role: 'tool', tool_call_id }`
//     message per call before the next request; the API's 400 messages for the two breaches are "An assistant message
//     with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. (insufficient tool
//     messages following tool_calls message)" and "Messages with role 'tool' must be a response to a preceding
//     message with 'tool_calls'" (as DeepSeek users report them, e.g. deepseek-ai/DeepSeek-V3 and zed-industries/zed
//     issues).
//   - The conversation opens with a user message after the system messages: the API's 400 for its thinking model
//     reads "The first message (except the system message) of deepseek-reasoner must be a user message, but an
//     assistant message detected." (reported against deepseek-reasoner), and DSH's own loop opens every request
//     with user input for the same reason.
// requestError(body) returns the API's 400 message for the first rule a request breaks, or undefined.

const UNANSWERED = "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. (insufficient tool messages following tool_calls message)"

/** @param {{ thinking?: { type?: string } }} body @returns {boolean} */
export const thinkingEnabled = body => body.thinking?.type !== 'disabled'

/**
 * @param {{ messages?: Array<{ role: string, tool_calls?: Array<{ id: string }>, tool_call_id?: string, reasoning_content?: string }>, thinking?: { type?: string } }} body
 * @returns {string | undefined} the 400 message of the first rule the request breaks
 */
export function requestError(body) {
  const messages = body.messages ?? []
  if (messages.length === 0) return 'Empty input messages'
  const first = messages.findIndex(m => m.role !== 'system')
  if (first >= 0 && messages[first].role !== 'user') {
    return `The first message (except the system message) must be a user message, but an ${messages[first].role} message detected.`
  }
  let pending = new Set()
  for (const [i, m] of messages.entries()) {
    if (m.role === 'tool') {
      if (!pending.delete(m.tool_call_id)) return "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'"
      continue
    }
    if (pending.size > 0) return UNANSWERED
    const calls = m.role === 'assistant' ? m.tool_calls ?? [] : []
    if (calls.length > 0 && thinkingEnabled(body) && typeof m.reasoning_content !== 'string') {
      return `Missing \`reasoning_content\` field in the assistant message at message index ${i}. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls`
    }
    pending = new Set(calls.map(call => call.id))
  }
  return pending.size > 0 ? UNANSWERED : undefined
}
