/**
 * The origin a request names — its scheme and `Host`, or `X-Forwarded-Proto` / `-Host` from a proxy the door
 * trusts — which a card's URLs are built from when no public URL is set. Those headers are the client's words, so
 * only a scheme (http, https) and a host[:port] (a host name, an IPv4 literal or a bracketed IPv6 literal, a port
 * 1-65535) pass; anything else (`javascript://…`, `evil.example/p?q=`, user info, a list) is a RequestHostError, a
 * 400 at the card routes. An optional allow-list (`publicHosts`) narrows the hosts further.
 */
import { isIP } from 'node:net'
import { ConverseError, InvalidOptionError, ERROR_CODES } from '../core/errors.js'

/** A request's scheme or host cannot go into a card's URLs (answered 400, the reason without the header's value). */
export class RequestHostError extends ConverseError {
  readonly statusCode = 400
  constructor (problem: string) {
    super(ERROR_CODES.REQUEST_HOST, problem)
  }
}

const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?'
/** RFC 1123 host name: dot-separated labels of letters, digits and inner hyphens; at most 253 characters. */
const HOST_NAME = new RegExp(`^(?=.{1,253}$)${LABEL}(?:\\.${LABEL})*$`)
/** host, [v6] or either with :port (the parts checked further below). */
const HOST_PORT = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}))?$/

/** `host` as a lower-case host[:port] fit for a URL, or why not. */
function checkedHost (host: string): { name: string, hostPort: string } | string {
  const match = HOST_PORT.exec(host.toLowerCase())
  if (match === null) return 'must be a host name or address with an optional port, and nothing else'
  const [hostPort, name, port] = match
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return 'names a port outside 1-65535'
  if (name.startsWith('[')) return isIP(name.slice(1, -1)) === 6 ? { name, hostPort } : 'names an invalid IPv6 address'
  if (isIP(name) === 4) return { name, hostPort }
  // A last label of digits only is an IPv4 address or nothing (a host name's top label is never numeric).
  if (!HOST_NAME.test(name) || /(^|\.)\d+$/.test(name)) return 'names an invalid host name'
  return { name, hostPort }
}

/**
 * The allow-list of public hosts a door takes (`publicHosts`): host names or addresses, each with an optional port
 * (then only that port), compared in lower case. Undefined: any valid host.
 */
export function publicHostList (option: string, hosts: readonly string[] | undefined): ReadonlySet<string> | undefined {
  if (hosts === undefined) return undefined
  if (!Array.isArray(hosts)) throw new InvalidOptionError(option, 'must be an array of host names (host or host:port)')
  const list = new Set<string>()
  for (const entry of hosts) {
    const checked = typeof entry === 'string' ? checkedHost(entry.trim()) : 'must be a string'
    if (typeof checked === 'string') throw new InvalidOptionError(option, `entry "${String(entry).slice(0, 64)}" ${checked}`)
    list.add(checked.hostPort)
  }
  if (list.size === 0) throw new InvalidOptionError(option, 'must name at least one host (leave it unset for any)')
  return list
}

/** `protocol://host` when both are fit for a card's URLs (and the host is on `publicHosts`, if given); else throws. */
export function requestOrigin (protocol: string, host: string | undefined, publicHosts?: ReadonlySet<string>): string {
  if (protocol !== 'http' && protocol !== 'https') throw new RequestHostError('the request\'s scheme (X-Forwarded-Proto) must be http or https')
  const checked = checkedHost(host ?? '')
  if (typeof checked === 'string') throw new RequestHostError(`the request's Host (or X-Forwarded-Host) ${checked}`)
  if (publicHosts !== undefined && !publicHosts.has(checked.hostPort) && !publicHosts.has(checked.name)) {
    throw new RequestHostError('the request\'s Host (or X-Forwarded-Host) is not a public host of this server')
  }
  return `${protocol}://${checked.hostPort}`
}

/** The 400 body of a refused request host (Fastify's error shape). */
export function requestHostErrorBody (error: RequestHostError): { statusCode: 400, error: 'Bad Request', code: string, message: string } {
  return { statusCode: 400, error: 'Bad Request', code: error.code, message: error.message }
}
