/** `value` as a LIKE pattern (default escape \) that matches it literally, followed by anything. */
export function likePrefix(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`) + '%'
}
