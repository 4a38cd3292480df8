import { parseArgs } from 'node:util'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ConfigError, loadConfig } from './config.ts'
import { createApiKey, listKeys, revokeKey, ROLES, type Role } from './domain/apiKeys.ts'
import { createLogger, openMigratedDatabase, startServer } from './server.ts'
import { generateOpenApiJson } from './http/openapi.ts'

const USAGE = `usage: recrawl <command> [options]   (npm run cli -- <command> …)

commands:
  start                              start the service (npm start)
  migrate                            apply pending database migrations and exit
  create-key --role <r> --name <n>   create an API key (roles: crawler, reader, admin); prints it once
  list-keys                          list API keys (never the keys themselves)
  revoke-key --id <uuid>             revoke a key
  openapi [--check]                  write openapi/openapi.json from the code (--check: fail if it differs)
  simulate [options]                 freshness benchmark against baselines and the oracle (simulate --help)

configuration comes from the environment (see README): DATABASE_URL, DATA_DIR, HOST, PORT, LOG_LEVEL, …`

export const OPENAPI_PATH = resolve(dirname(fileURLToPath(import.meta.url)), '../openapi/openapi.json')

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  if (command === 'simulate') {
    // Needs no configuration or database; loaded on demand.
    const { runSimulateCommand } = await import('./sim/cli.ts')
    return runSimulateCommand(rest)
  }
  const { values } = parseArgs({
    args: rest,
    options: { role: { type: 'string' }, name: { type: 'string' }, id: { type: 'string' }, check: { type: 'boolean' } },
    strict: true,
  })
  if (command === undefined || command === 'help' || command === '--help') {
    console.log(USAGE)
    return command === undefined ? 1 : 0
  }
  if (command === 'openapi') {
    const json = await generateOpenApiJson()
    if (values.check) {
      const committed = await readFile(OPENAPI_PATH, 'utf8').catch(() => '')
      if (committed !== json) {
        console.error(`${OPENAPI_PATH} is stale: run \`npm run cli -- openapi\` and commit the result`)
        return 1
      }
      console.log(`${OPENAPI_PATH} is up to date`)
      return 0
    }
    await mkdir(dirname(OPENAPI_PATH), { recursive: true })
    await writeFile(OPENAPI_PATH, json)
    console.log(`wrote ${OPENAPI_PATH}`)
    return 0
  }

  const config = loadConfig(process.env)
  if (command === 'start') {
    await startServer(config)
    return -1 // keeps running
  }
  const logger = createLogger(config)
  const db = await openMigratedDatabase(config, logger)
  try {
    switch (command) {
      case 'migrate':
        logger.info('database schema is up to date')
        return 0
      case 'create-key': {
        const role = values.role as Role | undefined
        if (!role || !ROLES.includes(role) || !values.name) {
          console.error('create-key needs --role (crawler | reader | admin) and --name')
          return 2
        }
        const created = await createApiKey(db.pool, { role, name: values.name })
        console.log(JSON.stringify({ id: created.id, name: created.name, role: created.role, key: created.key }))
        console.error('store the key now: only its hash is kept, it cannot be shown again')
        return 0
      }
      case 'list-keys':
        console.log(JSON.stringify(await listKeys(db.pool), null, 2))
        return 0
      case 'revoke-key':
        if (!values.id) {
          console.error('revoke-key needs --id')
          return 2
        }
        await revokeKey(db.pool, values.id)
        console.log(`revoked ${values.id}`)
        return 0
      default:
        console.error(`unknown command ${command}\n\n${USAGE}`)
        return 2
    }
  } finally {
    await db.close()
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code)
  },
  (err: unknown) => {
    if (err instanceof ConfigError) console.error(err.message)
    else console.error(err)
    process.exit(1)
  },
)
