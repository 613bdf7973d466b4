/**
 * @a2a-js/sdk writes plain text with `console.*` ("Reference task … not found.", "Agent execution failed …"),
 * which would land between pino's JSON lines on stdout. The gateway process sends those calls through its logger
 * instead, so every log line parses: the text formatted as console would (util.format) becomes `msg`, an Error
 * among the arguments becomes `err`, and `source: "console"` tells them apart. Only main.ts installs it: the
 * process-wide console belongs to the process, not to a library.
 */
import { format } from 'node:util'

type Level = 'error' | 'warn' | 'info' | 'debug'

/** pino-compatible. */
export type ConsoleLogger = Record<Level, (object: object, message: string) => void>

/** console method → log level. */
const LEVELS = Object.freeze({ error: 'error', warn: 'warn', info: 'info', log: 'info', debug: 'debug' } as const)

type Method = keyof typeof LEVELS

/** Replaces `target`'s error/warn/info/log/debug with calls of the logger; returns what puts them back. */
export function routeConsoleToLogger (logger: ConsoleLogger, target: Pick<Console, Method> = console): () => void {
  const originals = new Map<Method, Console[Method]>()
  for (const method of Object.keys(LEVELS) as Method[]) {
    originals.set(method, target[method])
    const level = LEVELS[method]
    target[method] = (...args: unknown[]): void => {
      const error = args.find((arg) => arg instanceof Error)
      const text = format(...args.filter((arg) => arg !== error))
      logger[level](error === undefined ? { source: 'console' } : { source: 'console', err: error }, text)
    }
  }
  return () => {
    for (const [method, original] of originals) target[method] = original
  }
}
