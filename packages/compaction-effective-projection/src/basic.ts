/**
 * The basic engine's target-pressure resolution, which only the seam's dsh-compaction-basic exports. Read through the
 * namespace so this package still loads on a stock build, where the engine refuses `measure: 'projection'` before
 * any of these is reached and `measure: 'surface'` never reaches them.
 * @module @dsh-seam/compaction-effective-projection/basic
 */

import * as basic from '@deepseek-ai/dsh-compaction-basic'

export const { conversationTarget, resolveTargetPolicy, targetCompactSpec } = basic
