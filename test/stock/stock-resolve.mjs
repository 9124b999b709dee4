// `node --import` this file to run a script as an app on stock DeepSeek Harness 0.1.0-rc.8: every `@deepseek-ai/*`
// import from outside stock/ (the workspace packages included) resolves from the repository's unmodified npm set in
// stock/, never from the patched workspace set; stock DSH's own imports resolve as npm installed them.
import { register } from 'node:module'

const stock = new URL('../../stock/', import.meta.url).href
register(`data:text/javascript,${encodeURIComponent(`
const stock = ${JSON.stringify(stock)}
export async function resolve(specifier, context, next) {
  const outside = context.parentURL === undefined || !context.parentURL.startsWith(stock)
  return next(specifier, specifier.startsWith('@deepseek-ai/') && outside ? { ...context, parentURL: stock + 'package.json' } : context)
}`)}`)
