/**
 * Which webhook URLs the gateway may POST to (A2A 1.0 §13.2: a webhook is a request the server makes on a
 * stranger's behalf). Checked twice: when a config is created (the URL as written: scheme, an address literal) and
 * when a delivery connects (every address the host name resolves to, in the lookup the connection then uses, so a
 * name that resolves elsewhere by then — DNS rebinding — is refused too).
 *
 * Refused unless the operator allows them (PUSH_ALLOWED_HOSTS: host names, addresses, CIDRs; PUSH_ALLOW_HTTP):
 * plain http, credentials in the URL, and any address that is loopback, private (RFC 1918), link-local (with the
 * cloud metadata address 169.254.169.254), CGNAT (100.64/10), unspecified, multicast, reserved, unique-local
 * (fc00::/7, with fd00:ec2::254), IPv4-mapped or NAT64 forms of those, or documentation ranges.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { BlockList, isIP } from 'node:net'
import { InvalidOptionError } from '../core/errors.js'

const FORBIDDEN_V4 = [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4]
] as const
const FORBIDDEN_V6 = [
  ['::', 128], ['::1', 128], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64],
  ['2001:db8::', 32], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8]
] as const

const forbidden = new BlockList()
for (const [net, prefix] of FORBIDDEN_V4) forbidden.addSubnet(net, prefix, 'ipv4')
for (const [net, prefix] of FORBIDDEN_V6) forbidden.addSubnet(net, prefix, 'ipv6')

export interface PushUrlPolicyOptions {
  /** PUSH_ALLOWED_HOSTS: host names (exact, any case), addresses and CIDRs that are allowed whatever they resolve to. */
  allowedHosts?: readonly string[]
  /** PUSH_ALLOW_HTTP: plain-http webhooks allowed. Default false. */
  allowHttp?: boolean
}

/** Thrown by the connect-time lookup: the host resolved to an address the policy refuses. */
export class ForbiddenAddressError extends Error {
  readonly code = 'A2A_CONVERSE_PUSH_FORBIDDEN_ADDRESS'
  constructor (host: string) {
    super(`webhook host ${host} resolves to an address webhooks may not reach`)
    this.name = 'ForbiddenAddressError'
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

export class PushUrlPolicy {
  readonly allowHttp: boolean
  readonly #names = new Set<string>()
  readonly #allowed = new BlockList()

  constructor (options: PushUrlPolicyOptions = {}) {
    this.allowHttp = options.allowHttp === true
    for (const raw of options.allowedHosts ?? []) {
      const entry = raw.trim().toLowerCase()
      if (entry === '') continue
      const [address, prefix, ...rest] = entry.split('/')
      const family = isIP(address)
      if (prefix !== undefined) {
        const bits = Number(prefix)
        const max = family === 6 ? 128 : 32
        if (family === 0 || rest.length > 0 || !/^\d+$/.test(prefix) || bits > max) {
          throw new InvalidOptionError('PUSH_ALLOWED_HOSTS', `"${raw}" is not a CIDR (address/prefix)`)
        }
        this.#allowed.addSubnet(address, bits, family === 6 ? 'ipv6' : 'ipv4')
      } else if (family !== 0) {
        this.#allowed.addAddress(address, family === 6 ? 'ipv6' : 'ipv4')
      } else {
        this.#names.add(entry.replace(/\.$/, ''))
      }
    }
  }

  /** Whether a connection may go to this address (allowed by the operator, or public). */
  addressAllowed (address: string): boolean {
    const family = isIP(address)
    if (family === 0) return false
    const type = family === 6 ? 'ipv6' : 'ipv4'
    if (this.#allowed.check(address, type)) return true
    return !forbidden.check(address, type)
  }

  /** Whether the host name is on the operator's list (then its addresses are not checked). */
  nameAllowed (host: string): boolean {
    return this.#names.has(host.toLowerCase().replace(/\.$/, ''))
  }

  /**
   * Why a webhook URL is refused as written (scheme, credentials, an address literal), or undefined when it may be
   * used. Host names are checked again at connect time (`lookup`).
   */
  refusal (raw: string): string | undefined {
    let url: URL
    try {
      url = new URL(raw)
    } catch {
      return 'must be an absolute URL'
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https URL'
    if (url.protocol === 'http:' && !this.allowHttp) return 'must be an https URL (plain http is not allowed here: PUSH_ALLOW_HTTP)'
    if (url.username !== '' || url.password !== '') return 'must not carry credentials (use authentication)'
    const host = hostOf(url)
    if (this.nameAllowed(host)) return undefined
    if (isIP(host) !== 0) return this.addressAllowed(host) ? undefined : 'must not point at a loopback, private, link-local or otherwise internal address (PUSH_ALLOWED_HOSTS)'
    if (host === 'localhost' || host.endsWith('.localhost')) return 'must not point at this host (PUSH_ALLOWED_HOSTS)'
    return undefined
  }

  /**
   * A dns.lookup for the connection (undici's `connect.lookup`): resolves every address of the host and refuses the
   * connection unless each is allowed, so the address connected to is one that was checked.
   */
  readonly lookup = (hostname: string, options: { all?: boolean, family?: number | string } | undefined, callback: LookupCallback): void => {
    const host = hostname.replace(/^\[|\]$/g, '')
    dnsLookup(host, { all: true, family: typeof options?.family === 'number' ? options.family : 0 }, (error, addresses) => {
      if (error !== null) {
        callback(error, '')
        return
      }
      if (!this.nameAllowed(host) && (addresses.length === 0 || !addresses.every((entry) => this.addressAllowed(entry.address)))) {
        callback(new ForbiddenAddressError(host), '')
        return
      }
      if (options?.all === true) callback(null, addresses)
      else callback(null, addresses[0].address, addresses[0].family)
    })
  }
}

/** A URL's host without IPv6 brackets or a final dot, lower case. */
export function hostOf (url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase()
}
