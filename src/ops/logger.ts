import pino, { type Logger } from 'pino'
import type { Config } from '../config.ts'

/**
 * Logs go to stderr, always: stdout carries only what a command prints as its result. Written like
 * pino's default stdout stream (asynchronous, flushed when the process exits).
 */
export function createLogger(config: Pick<Config, 'logLevel'>): Logger {
  return pino({ level: config.logLevel, base: { service: 'recrawl' } }, pino.destination({ dest: 2 }))
}
