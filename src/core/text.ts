/**
 * Text recrawl can store (docs/api.md "Input limits"). Postgres text and jsonb cannot hold the NUL
 * character, and jsonb refuses a lone UTF-16 surrogate (which UTF-8 cannot encode either), so a string
 * with one is refused where it enters rather than failing, or being altered, in the database.
 */

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/** Why a string cannot be stored, or null when it can. */
export function textProblem(value: string): string | null {
  if (value.includes('\u0000')) return 'contains a NUL character (\\u0000)'
  if (LONE_SURROGATE.test(value)) return 'is not well-formed Unicode (a lone surrogate)'
  return null
}

/** A string found in a JSON value that cannot be stored, with the JSON pointer to it. */
interface TextProblemAt {
  /** JSON pointer relative to the value given (`''` for the value itself). */
  pointer: string
  message: string
}

const escapePointer = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1')

/**
 * Every string of a parsed JSON value (object keys included) that cannot be stored, at most `limit`,
 * in document order. `skip` names pointers whose subtree is checked elsewhere (e.g. items of a batch
 * checked one by one). Iterative, so a deeply nested body cannot exhaust the stack.
 */
export function findTextProblems(
  value: unknown,
  options: { limit?: number; skip?: (pointer: string) => boolean } = {},
): TextProblemAt[] {
  const limit = options.limit ?? 20
  const found: TextProblemAt[] = []
  const stack: { value: unknown; pointer: string }[] = [{ value, pointer: '' }]
  while (stack.length > 0 && found.length < limit) {
    const { value: v, pointer } = stack.pop()!
    if (options.skip?.(pointer)) continue
    if (v instanceof KeyProblem) {
      found.push({ pointer, message: `key ${v.message}` })
    } else if (typeof v === 'string') {
      const problem = textProblem(v)
      if (problem !== null) found.push({ pointer, message: problem })
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], pointer: `${pointer}/${i}` })
    } else if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v as Record<string, unknown>)
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, item] = entries[i]!
        const keyProblem = textProblem(key)
        const at = `${pointer}/${escapePointer(key)}`
        // The key's problem comes before its value's: pushed last, popped first.
        stack.push({ value: item, pointer: at })
        if (keyProblem !== null) stack.push({ value: new KeyProblem(keyProblem), pointer: at })
      }
    }
  }
  return found
}

class KeyProblem {
  constructor(readonly message: string) {}
}
