import { connect } from 'node:net'

/** Sends raw bytes to a listening app and returns everything it answers until it closes the connection. */
export function rawExchange(port: number, request: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let answer = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk) => (answer += chunk))
    socket.on('error', reject)
    socket.on('close', () => resolve(answer))
    socket.write(request)
  })
}

/** Status, headers and parsed body of a raw HTTP answer. */
export function parseRaw(answer: string): { status: number; headers: Record<string, string>; body: unknown } {
  const [head, ...rest] = answer.split('\r\n\r\n')
  const [statusLine, ...headerLines] = head!.split('\r\n')
  const headers = Object.fromEntries(
    headerLines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
  )
  return { status: Number(statusLine!.split(' ')[1]), headers, body: JSON.parse(rest.join('\r\n\r\n')) }
}
