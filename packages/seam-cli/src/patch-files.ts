/**
 * The seam's patch files by name, and their conversion from pnpm's format (`patches/@scope__name@version.patch`, paths
 * relative to the package: `a/lib/index.js`) to patch-package's (`patches/@scope+name+version.patch`, paths relative
 * to the app: `a/node_modules/@scope/name/lib/index.js`), for apps installed with npm.
 * @module @dsh-seam/cli/patch-files
 */

/** A patch file in pnpm's format, named for the package and version it patches. */
export interface PnpmPatch {
  /** The file name, `@deepseek-ai__dsh-session@0.1.0-rc.8.patch`. */
  readonly file: string
  /** `@deepseek-ai/dsh-session`. */
  readonly name: string
  readonly version: string
}

/** pnpm's patch file name: `@scope__name@version.patch` (what `pnpm patch-commit` writes). */
const PNPM_NAME = /^(@[^/_+@]+)__([^/+@]+)@([^/@]+)\.patch$/

/**
 * @param file - a file name.
 * @returns the package and version a pnpm patch file of that name patches, or `undefined` for another name.
 */
export function parsePnpmPatchName(file: string): PnpmPatch | undefined {
  const match = PNPM_NAME.exec(file)
  if (match === null) return undefined
  return { file, name: `${match[1] as string}/${match[2] as string}`, version: match[3] as string }
}

/**
 * @param name - a scoped package name, `@deepseek-ai/dsh-session`.
 * @param version - its version.
 * @returns patch-package's file name for it, `@deepseek-ai+dsh-session+0.1.0-rc.8.patch`.
 */
export function patchPackageFile(name: string, version: string): string {
  return `${name.replace('/', '+')}+${version}.patch`
}

/** A patch that cannot be converted (a binary diff, a header this converter does not know). */
export class PatchFormatError extends Error {
  override readonly name = 'PatchFormatError'
}

/** Header lines naming a path: the prefix before it, the path (`a/…`, `b/…` or a bare path for rename/copy). */
const PATH_HEADER = /^(--- |\+\+\+ |rename from |rename to |copy from |copy to )(.*)$/
const DIFF_GIT = /^diff --git a\/(\S+) b\/(\S+)$/
const HUNK = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/

/**
 * Convert a pnpm patch of one package (git's diff format, paths relative to the package root) to patch-package's:
 * every path in a file header gains `node_modules/<name>/`; hunks are copied byte for byte (a hunk line that looks
 * like a header, such as a removed line `-- a/x`, is not touched: hunks are read by their line counts).
 * @param name - the package the patch applies to.
 * @param patch - the pnpm patch.
 * @returns the patch-package patch.
 * @throws PatchFormatError on a binary diff or a header line naming a path this converter cannot read.
 */
export function toPatchPackage(name: string, patch: string): string {
  const root = `node_modules/${name}/`
  const lines = patch.split('\n')
  let oldLeft = 0
  let newLeft = 0
  const out = lines.map((line, index) => {
    if (oldLeft > 0 || newLeft > 0) {
      if (line.startsWith('\\')) return line
      if (line.startsWith('-')) oldLeft--
      else if (line.startsWith('+')) newLeft--
      else if (line.startsWith(' ') || line === '') {
        oldLeft--
        newLeft--
      } else throw new PatchFormatError(`line ${index + 1} of the ${name} patch is inside a hunk but is not a hunk line`)
      return line
    }
    const hunk = HUNK.exec(line)
    if (hunk !== null) {
      oldLeft = Number(hunk[1] ?? 1)
      newLeft = Number(hunk[2] ?? 1)
      return line
    }
    if (line.startsWith('diff --git ')) {
      const paths = DIFF_GIT.exec(line)
      if (paths === null) throw new PatchFormatError(`line ${index + 1} of the ${name} patch: cannot read the paths of ${JSON.stringify(line)}`)
      return `diff --git a/${root}${paths[1] as string} b/${root}${paths[2] as string}`
    }
    if (line.startsWith('GIT binary patch') || line.startsWith('Binary files ')) throw new PatchFormatError(`line ${index + 1} of the ${name} patch is a binary diff`)
    const header = PATH_HEADER.exec(line)
    if (header === null) return line
    const [, prefix, path] = header as unknown as [string, string, string]
    if (path === '/dev/null') return line
    const side = /^[ab]\//.exec(path)?.[0]
    if (prefix.startsWith('---') || prefix.startsWith('+++')) {
      if (side === undefined) throw new PatchFormatError(`line ${index + 1} of the ${name} patch: ${JSON.stringify(line)} names no a/ or b/ path`)
      return `${prefix}${side}${root}${path.slice(2)}`
    }
    return `${prefix}${root}${path}`
  })
  if (oldLeft > 0 || newLeft > 0) throw new PatchFormatError(`the ${name} patch ends inside a hunk`)
  return out.join('\n')
}
