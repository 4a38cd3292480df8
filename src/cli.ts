#!/usr/bin/env node
/**
 * `recrawl <command>`: the service and its operations. Every argument is parsed and checked before
 * anything is opened; results go to stdout, logs and messages to stderr; errors are one line.
 * Exit codes: 0 done, 1 failed, 2 wrong usage (nothing was touched).
 */
import { readFileSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseOptions, UsageError, type OptionsConfig } from './args.ts'
import { ConfigError, loadConfig, type Config } from './config.ts'
import { createApiKey, isApiKeyId, listKeys, revokeKey, ROLES, type Role } from './domain/apiKeys.ts'
import { NotFoundError } from './core/errors.ts'
import type { Database } from './store/db.ts'

const OPENAPI_PATH = resolve(dirname(fileURLToPath(import.meta.url)), '../openapi/openapi.json')
/** The client package's generated types: regenerated only from a source checkout (not from dist/). */
const CLIENT_SCHEMA_PATH = fileURLToPath(import.meta.url).endsWith('.ts')
  ? resolve(dirname(fileURLToPath(import.meta.url)), '../packages/client/src/generated/schema.ts')
  : null
const PACKAGE_JSON = new URL('../package.json', import.meta.url)

/** How the operator ran us, for the commands we suggest. */
const SELF = process.env.npm_lifecycle_event === 'cli' ? 'npm run cli --' : 'recrawl'

const ENVIRONMENT = `configuration comes from the environment: DATABASE_URL (unset: the embedded database in DATA_DIR,
default ./data), HOST, PORT, LOG_LEVEL, … (see the README)`

type Values = Record<string, string | boolean | (string | boolean)[] | undefined>

interface Command {
  summary: string
  usage: string
  options: OptionsConfig
  /** Checks the parsed options (throws UsageError) and returns the work; nothing is opened before. */
  prepare(values: Values): () => Promise<number>
}

const COMMANDS: Record<string, Command> = {
  start: {
    summary: 'start the service (npm start)',
    usage: `usage: ${SELF} start

Starts the HTTP service on HOST:PORT and applies pending migrations first. Logs are JSON lines on stderr.
With the embedded database the service owns DATA_DIR; commands such as create-key reach the database
through the running service. SIGINT or SIGTERM close it gracefully.`,
    options: {},
    prepare: () => async () => {
      const { startServer } = await import('./server.ts')
      await startServer(loadCommandConfig(true))
      return -1 // keeps running
    },
  },
  migrate: {
    summary: 'apply pending database migrations and exit',
    usage: `usage: ${SELF} migrate

Applies the pending migrations (migrations/*.sql) and prints what it applied. Safe while the service
runs, on Postgres and on the embedded database.`,
    options: {},
    prepare: () => async () =>
      withDatabase(async (_db, applied) => {
        console.log(applied.length === 0 ? 'database schema is up to date' : `applied migrations ${applied.join(', ')}`)
        return 0
      }),
  },
  'create-key': {
    summary: 'create an API key and print it once',
    usage: `usage: ${SELF} create-key --role <crawler|reader|admin> --name <name>

Creates an API key and prints {"id","name","role","key"} as one JSON line on stdout (e.g. pipe it to
jq -r .key). Only the key's SHA-256 is stored: the key cannot be shown again. The key works at once,
also while the service runs.

While no key exists, a service listening on loopback accepts requests without a key. The first key
ends that: from then on every API request needs a key, so create an admin key first.

options:
  --role <role>   crawler: report crawls and take leases; reader: read everything; admin: everything
  --name <name>   a label shown by list-keys`,
    options: { role: { type: 'string' }, name: { type: 'string' } },
    prepare(values) {
      const role = values.role
      if (typeof role !== 'string' || !ROLES.includes(role as Role)) {
        throw new UsageError(
          role === undefined
            ? 'missing --role (crawler, reader or admin)'
            : `unknown role '${role}': use crawler, reader or admin`,
        )
      }
      const name = typeof values.name === 'string' ? values.name.trim() : ''
      if (name === '') throw new UsageError('missing --name (a label for the key)')
      return () =>
        withDatabase(async (db) => {
          const created = await createApiKey(db, { role: role as Role, name })
          console.log(JSON.stringify({ id: created.id, name: created.name, role: created.role, key: created.key }))
          console.error('store the key now: only its hash is kept, it cannot be shown again')
          if (created.first && created.role !== 'admin') {
            console.error(
              `warning: this is the first API key, so open loopback access has ended: every API request now needs a key, and ` +
                `this ${created.role} key cannot read settings, pages or the dashboard's data. To keep admin access, create an ` +
                `admin key: ${SELF} create-key --role admin --name <name>`,
            )
          } else if (created.first) {
            console.error('this is the first API key: every API request now needs a key, also on loopback')
          }
          return 0
        })
    },
  },
  'list-keys': {
    summary: 'list API keys (never the keys themselves)',
    usage: `usage: ${SELF} list-keys

Prints a JSON array on stdout: id, name, role, createdAt and revokedAt (null while active) of every key.`,
    options: {},
    prepare: () => () =>
      withDatabase(async (db) => {
        console.log(JSON.stringify(await listKeys(db), null, 2))
        return 0
      }),
  },
  'revoke-key': {
    summary: 'revoke an API key',
    usage: `usage: ${SELF} revoke-key --id <uuid>

Revokes the key with this id (list-keys shows the ids); it is refused at once, also by a running
service. Prints {"id","revoked":true,"activeKeys":n} on stdout.

options:
  --id <uuid>   the key's id`,
    options: { id: { type: 'string' } },
    prepare(values) {
      const id = values.id
      if (typeof id !== 'string' || id === '') throw new UsageError('missing --id')
      if (!isApiKeyId(id)) throw new UsageError(`--id must be a key id, a UUID as list-keys shows; got '${id}'`)
      return () =>
        withDatabase(async (db) => {
          const { activeKeys } = await revokeKey(db, id)
          console.log(JSON.stringify({ id, revoked: true, activeKeys }))
          if (activeKeys === 0) {
            console.error(
              'no active key is left: a service listening on loopback accepts requests without a key again; one listening beyond loopback refuses every request',
            )
          }
          return 0
        })
    },
  },
  openapi: {
    summary: 'write openapi/openapi.json and the client types from the code',
    usage: `usage: ${SELF} openapi [--check]

Writes openapi/openapi.json as the code describes the API (needs no database), and from a source
checkout also packages/client/src/generated/schema.ts, the types of the client package
@recrawl/client (openapi-typescript).
In a source checkout \`npm run generate\` runs this command (\`npm run generate -- --check\` checks).

options:
  --check   write nothing; exit 1 if a committed file differs from the code`,
    options: { check: { type: 'boolean' } },
    prepare: (values) => async () => {
      const { generateOpenApiJson } = await import('./http/openapi.ts')
      const outputs: { path: string; content: string }[] = [
        { path: OPENAPI_PATH, content: await generateOpenApiJson() },
      ]
      if (CLIENT_SCHEMA_PATH) {
        const { generateClientSchema } = await import('./client/generate.ts')
        outputs.push({ path: CLIENT_SCHEMA_PATH, content: await generateClientSchema() })
      }
      if (values.check) {
        for (const { path, content } of outputs) {
          const committed = await readFile(path, 'utf8').catch(() => '')
          if (committed !== content) {
            const command = CLIENT_SCHEMA_PATH ? 'npm run generate' : `${SELF} openapi`
            throw new Error(`${path} is stale: run \`${command}\` and commit the result`)
          }
          console.log(`${path} is up to date`)
        }
        return 0
      }
      for (const { path, content } of outputs) {
        await mkdir(dirname(path), { recursive: true })
        await writeFile(path, content)
        console.log(`wrote ${path}`)
      }
      return 0
    },
  },
}

/** `simulate` parses its own options (src/sim/cli.ts); it needs no configuration or database. */
const SIMULATE_SUMMARY = 'freshness benchmark of the scheduling policies (simulate --help)'

function usage(): string {
  const names = [...Object.keys(COMMANDS), 'simulate']
  const width = Math.max(...names.map((n) => n.length)) + 2
  const line = (name: string, summary: string) => `  ${name.padEnd(width)}${summary}`
  return `usage: ${SELF} <command> [options]

commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => line(name, c.summary))
  .join('\n')}
${line('simulate', SIMULATE_SUMMARY)}

options:
  -h, --help   show this help; after a command, that command's help
  --version    print the version

${ENVIRONMENT}`
}

function version(): string {
  return (JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { version: string }).version
}

/** The configuration; commands other than start log only warnings unless LOG_LEVEL says otherwise. */
function loadCommandConfig(service: boolean): Config {
  const config = loadConfig(process.env)
  return service || process.env.LOG_LEVEL ? config : { ...config, logLevel: 'warn' }
}

async function withDatabase(work: (db: Database, appliedMigrations: string[]) => Promise<number>): Promise<number> {
  const config = loadCommandConfig(false)
  const [{ createLogger }, { openMigratedDatabase }] = await Promise.all([
    import('./ops/logger.ts'),
    import('./store/open.ts'),
  ])
  const logger = createLogger(config)
  const applied: string[] = []
  let db: Database
  try {
    db = await openMigratedDatabase(config, logger, 'command', (version) => applied.push(version))
  } catch (err) {
    const where = config.databaseUrl ? ` at ${redactedUrl(config.databaseUrl)}` : ''
    throw new Error(`cannot open the database${where}: ${oneLine(err)}`, { cause: err })
  }
  try {
    return await work(db, applied)
  } finally {
    await db.close()
  }
}

function redactedUrl(databaseUrl: string): string {
  const url = new URL(databaseUrl)
  if (url.password) url.password = '***'
  return url.toString()
}

function oneLine(err: unknown): string {
  const text = err instanceof Error ? err.message || err.name : String(err)
  return text.replace(/\s*\n\s*/g, '; ')
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv
  if (name === undefined) {
    console.error(usage())
    return 2
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    const topic = name === 'help' ? rest[0] : undefined
    if (topic === undefined) console.log(usage())
    else if (topic === 'simulate') return runSimulate(['--help'])
    else if (COMMANDS[topic]) console.log(COMMANDS[topic].usage)
    else return usageFailure(`unknown command '${topic}'`, usage())
    return 0
  }
  if (name === '--version') {
    console.log(version())
    return 0
  }
  if (name === 'simulate') return runSimulate(rest)
  const command = COMMANDS[name]
  if (!command)
    return usageFailure(name.startsWith('-') ? `unknown option ${name}` : `unknown command '${name}'`, usage())

  let work: () => Promise<number>
  try {
    const values: Values = parseOptions(rest, command.options)
    if (values.help) {
      console.log(command.usage)
      return 0
    }
    work = command.prepare(values)
  } catch (err) {
    if (err instanceof UsageError) return usageFailure(`${name}: ${err.message}`, command.usage)
    throw err
  }
  try {
    return await work()
  } catch (err) {
    throw new CommandError(name, err)
  }
}

/** A command failed at run time: reported as one line naming the command, exit code 1. */
class CommandError extends Error {
  constructor(
    readonly command: string,
    readonly failure: unknown,
  ) {
    super(oneLine(failure))
  }
}

async function runSimulate(args: string[]): Promise<number> {
  const { runSimulateCommand } = await import('./sim/cli.ts')
  return runSimulateCommand(args)
}

function usageFailure(problem: string, text: string): number {
  console.error(`recrawl: ${problem}\n\n${text}`)
  return 2
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code)
  },
  (err: unknown) => {
    const cause = err instanceof CommandError ? err.failure : err
    const prefix = err instanceof CommandError ? `recrawl ${err.command}` : 'recrawl'
    if (cause instanceof ConfigError) console.error(`${prefix}: invalid configuration: ${cause.problems.join('; ')}`)
    else if (cause instanceof NotFoundError) console.error(`${prefix}: ${cause.message}`)
    else console.error(`${prefix}: ${oneLine(cause)}`)
    process.exit(1)
  },
)
