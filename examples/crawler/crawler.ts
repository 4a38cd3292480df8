/**
 * An example crawler for recrawl: `npx tsx examples/crawler/crawler.ts --url http://127.0.0.1:8080 --key <crawler key>`.
 * See examples/crawler/README.md. SIGINT or SIGTERM end it: fetches in flight are abandoned and every
 * unfetched page of its lease is given back; a second signal exits at once.
 */
import { hostname } from 'node:os'
import { parseArgs } from 'node:util'
import { createRecrawlClient } from '@recrawl/client'
import { Crawler, DEFAULT_CRAWLER_OPTIONS } from './worker.ts'

const USAGE = `usage: npx tsx examples/crawler/crawler.ts --url <service> [options]

Takes leases of due pages from recrawl, fetches them (conditional requests, sha256 of the normalised
main text), reports every fetch and gives back what it did not fetch.

options:
  --url <url>                   the recrawl service (required), e.g. http://127.0.0.1:8080
  --key <key>                   a crawler API key (default: $RECRAWL_API_KEY; none while the service has no keys)
  --worker <name>               shown on leased pages (default: example-<hostname>-<pid>)
  --hosts <a,b>                 only pages of these hosts
  --concurrency <n>             most fetches at once, over different hosts (default ${DEFAULT_CRAWLER_OPTIONS.concurrency})
  --lease-size <n>              most pages per lease (default ${DEFAULT_CRAWLER_OPTIONS.leaseSize})
  --lease-seconds <s>           lease lifetime (default ${DEFAULT_CRAWLER_OPTIONS.leaseSeconds})
  --heartbeat-seconds <s>       heartbeat period while a lease has pages left (default: lease-seconds / 3)
  --host-delay-ms <ms>          least time between two requests to one host (default ${DEFAULT_CRAWLER_OPTIONS.hostDelayMs})
  --fetch-timeout-seconds <s>   a fetch is abandoned after this long (default ${DEFAULT_CRAWLER_OPTIONS.fetchTimeoutMs / 1000})
  --user-agent <text>           (default ${DEFAULT_CRAWLER_OPTIONS.userAgent})
  --rounds <n>                  stop after n leases
  --until-idle                  stop at the first empty lease
  --poll-seconds <s>            wait when the service has nothing to hand out, or after a service error (default 10);
                                after a short lease the crawler waits the lease's retryAfterSeconds instead
  -h, --help`

function positive(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback
  const n = Number(value)
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, not ${value}`)
  return n
}

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      url: { type: 'string' },
      key: { type: 'string' },
      worker: { type: 'string' },
      hosts: { type: 'string' },
      concurrency: { type: 'string' },
      'lease-size': { type: 'string' },
      'lease-seconds': { type: 'string' },
      'heartbeat-seconds': { type: 'string' },
      'host-delay-ms': { type: 'string' },
      'fetch-timeout-seconds': { type: 'string' },
      'user-agent': { type: 'string' },
      rounds: { type: 'string' },
      'until-idle': { type: 'boolean' },
      'poll-seconds': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  if (values.help) {
    console.log(USAGE)
    return 0
  }
  if (!values.url) throw new Error('--url is required')
  const apiKey = values.key ?? process.env.RECRAWL_API_KEY
  const log = (line: string) => console.error(`${new Date().toISOString()} ${line}`)
  const leaseSeconds = positive('lease-seconds', values['lease-seconds'], DEFAULT_CRAWLER_OPTIONS.leaseSeconds)
  const crawler = new Crawler({
    ...DEFAULT_CRAWLER_OPTIONS,
    api: createRecrawlClient({ baseUrl: values.url, ...(apiKey ? { apiKey } : {}) }),
    worker: values.worker ?? `example-${hostname()}-${process.pid}`,
    ...(values.hosts
      ? {
          hosts: values.hosts
            .split(',')
            .map((h) => h.trim())
            .filter(Boolean),
        }
      : {}),
    concurrency: Math.round(positive('concurrency', values.concurrency, DEFAULT_CRAWLER_OPTIONS.concurrency)),
    leaseSize: Math.round(positive('lease-size', values['lease-size'], DEFAULT_CRAWLER_OPTIONS.leaseSize)),
    leaseSeconds,
    heartbeatSeconds: positive('heartbeat-seconds', values['heartbeat-seconds'], leaseSeconds / 3),
    hostDelayMs:
      values['host-delay-ms'] === '0'
        ? 0
        : positive('host-delay-ms', values['host-delay-ms'], DEFAULT_CRAWLER_OPTIONS.hostDelayMs),
    fetchTimeoutMs:
      positive(
        'fetch-timeout-seconds',
        values['fetch-timeout-seconds'],
        DEFAULT_CRAWLER_OPTIONS.fetchTimeoutMs / 1000,
      ) * 1000,
    userAgent: values['user-agent'] ?? DEFAULT_CRAWLER_OPTIONS.userAgent,
    log,
  })

  let signals = 0
  const onSignal = (signal: NodeJS.Signals) => {
    if (++signals > 1) process.exit(130)
    log(`${signal}: stopping; unfetched pages go back to the pool`)
    crawler.stop()
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)

  log(`crawling for ${values.url} as ${crawler.worker}`)
  const totals = await crawler.run({
    ...(values.rounds === undefined ? {} : { rounds: Math.round(positive('rounds', values.rounds, 1)) }),
    untilIdle: values['until-idle'] ?? false,
    pollSeconds: positive('poll-seconds', values['poll-seconds'], 10),
  })
  log(
    `done: ${totals.leased} leased, ${totals.reported} reported (${totals.rejected} rejected), ${totals.released} given back, by status ${JSON.stringify(totals.statuses)}`,
  )
  return 0
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`crawler: ${err instanceof Error ? err.message : String(err)}`)
    process.exit(1)
  },
)
