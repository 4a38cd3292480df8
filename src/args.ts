import { parseArgs, type ParseArgsConfig } from 'node:util'

/**
 * Command-line options, parsed the same way by every command: strict (an unknown option or a stray
 * argument is a usage error), and `-h`/`--help` everywhere.
 */
export type OptionsConfig = NonNullable<ParseArgsConfig['options']>

/** Wrong usage: the caller prints it with the command's usage and exits with 2, having touched nothing. */
export class UsageError extends Error {}

const HELP = { help: { type: 'boolean', short: 'h' } } as const

export function parseOptions<const O extends OptionsConfig>(args: string[], options: O) {
  try {
    return parseArgs({ args, options: { ...options, ...HELP }, strict: true, allowPositionals: false }).values
  } catch (err) {
    throw new UsageError(parseProblem(err))
  }
}

/** node:util explains how to pass a positional that starts with '-'; say only what is wrong. */
function parseProblem(err: unknown): string {
  const code = (err as { code?: string }).code
  const message = err instanceof Error ? err.message : String(err)
  const quoted = /'([^']+)'/.exec(message)?.[1]
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `unknown option ${quoted ?? message}`
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') return `unexpected argument ${quoted ?? message}`
  return message.replace(/\.$/, '')
}
