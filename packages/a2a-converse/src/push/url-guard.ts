/**
 * Which webhook URLs the gateway may POST to (A2A 1.0 §13.2: a webhook is a request the server makes on a
 * stranger's behalf). Checked twice: when a config is created (the URL as written: scheme, an address literal) and
 * when a delivery connects (every address the host name resolves to, in the lookup the connection then uses, so a
 * name that resolves elsewhere by then — DNS rebinding — is refused too).
 *
 * Refused unless the operator allows them (PUSH_ALLOWED_HOSTS: host names, addresses, CIDRs; PUSH_ALLOW_HTTP):
 * plain http, credentials in the URL, and any address outside the public unicast space as ipaddr.js classifies it
 * (loopback, private, link-local with the cloud metadata address, CGNAT, unspecified, broadcast, multicast, reserved
 * and documentation ranges, unique-local with fd00:ec2::254, site-local, discard, benchmarking, ORCHID, ...), and any
 * IPv6 address that embeds a refused IPv4 address: IPv4-mapped, IPv4-compatible, IPv4-translated (SIIT), 6to4,
 * NAT64 (64:ff9b::/96; the local-use 64:ff9b:1::/48 is refused whole: where it embeds the address is the
 * network's own choice) and Teredo (its client address). A well-kept classification rather than a hand-written
 * prefix list: the spellings of one address are many (docs/push.md).
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { BlockList, isIP } from 'node:net'
import ipaddr from 'ipaddr.js'
import { InvalidOptionError, ConverseError, ERROR_CODES } from '../core/errors.js'
import { ATTR, serverAttributes, type Attributes } from '../telemetry/attributes.js'

/** The NAT64 well-known prefix (RFC 6052), which embeds the IPv4 address in its last 32 bits. */
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96')

/** Whether an address (IPv4 or IPv6 literal, no brackets) is public unicast, whatever IPv4 address it embeds. */
export function publicAddress (address: string): boolean {
  const parsed = ipaddr.parse(address)
  return parsed.kind() === 'ipv4' ? publicV4(parsed as ipaddr.IPv4) : publicV6(parsed as ipaddr.IPv6)
}

function publicV4 (address: ipaddr.IPv4): boolean {
  return address.range() === 'unicast'
}

function publicV6 (address: ipaddr.IPv6): boolean {
  const bytes = address.toByteArray()
  /** The IPv4 address in bytes `at`..`at + 3` (Teredo's client address is stored inverted: `invert`). */
  const v4At = (at: number, invert = false): boolean =>
    publicV4(new ipaddr.IPv4(bytes.slice(at, at + 4).map((byte) => invert ? byte ^ 0xff : byte)))
  switch (address.range()) {
    // ::a.b.c.d, IPv4-compatible (RFC 4291 §2.5.5.1, deprecated): ipaddr.js calls it unicast.
    case 'unicast': return bytes.slice(0, 12).some((byte) => byte !== 0) || v4At(12)
    case 'ipv4Mapped': return v4At(12)
    case 'rfc6145': return v4At(12)
    case 'rfc6052': return address.match(NAT64_WELL_KNOWN) && v4At(12)
    case '6to4': return v4At(2)
    case 'teredo': return v4At(12, true) && v4At(4)
    default: return false
  }
}

/** What a webhook URL yields: why the policy refuses it, or where a POST goes and its span's attributes. */
export type UrlVerdict = { refusal: string } | { refusal: undefined, origin: string, path: string, attributes: Attributes }

/** URLs whose verdict a policy keeps (past it the kept ones are forgotten and judged again). */
export const VERDICTS_KEPT = 1000

/** How the connect-time check resolves a host name: every address (dns.lookup with `all: true`). */
export type Resolver = (
  host: string, options: { all: true, family: number }, callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void
) => void

export interface PushUrlPolicyOptions {
  /** PUSH_ALLOWED_HOSTS: host names (exact, any case), addresses and CIDRs that are allowed whatever they resolve to. */
  allowedHosts?: readonly string[]
  /** PUSH_ALLOW_HTTP: plain-http webhooks allowed. Default false. */
  allowHttp?: boolean
  /** How host names are resolved at connect time (default: the system's, dns.lookup). */
  resolver?: Resolver
}

/** Thrown by the connect-time lookup: the host resolved to an address the policy refuses. */
export class ForbiddenAddressError extends ConverseError {
  constructor (host: string) {
    super(ERROR_CODES.PUSH_FORBIDDEN_ADDRESS, `webhook host ${host} resolves to an address webhooks may not reach`)
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

export class PushUrlPolicy {
  readonly allowHttp: boolean
  readonly #names = new Set<string>()
  readonly #allowed = new BlockList()
  readonly #resolve: Resolver
  readonly #verdicts = new Map<string, UrlVerdict>()

  constructor (options: PushUrlPolicyOptions = {}) {
    this.allowHttp = options.allowHttp === true
    this.#resolve = options.resolver ?? (dnsLookup as Resolver)
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
    return publicAddress(address)
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
    return this.verdict(raw).refusal
  }

  /**
   * The refusal of a URL, or where a POST to it goes (its origin, its path with the query) and the POST span's server
   * attributes. It depends on the URL alone (the policy does not change): the last VERDICTS_KEPT are kept, here only
   * (the webhook poster asks for each POST), so a URL given on every turn is not parsed and classified again.
   */
  verdict (raw: string): UrlVerdict {
    let verdict = this.#verdicts.get(raw)
    if (verdict !== undefined) return verdict
    verdict = this.#judge(raw)
    if (this.#verdicts.size >= VERDICTS_KEPT) this.#verdicts.clear()
    this.#verdicts.set(raw, verdict)
    return verdict
  }

  #judge (raw: string): UrlVerdict {
    let url: URL
    try {
      url = new URL(raw)
    } catch {
      return { refusal: 'must be an absolute URL' }
    }
    const refusal = this.#refusalOf(url)
    if (refusal !== undefined) return { refusal }
    return { refusal: undefined, origin: url.origin, path: url.pathname + url.search, attributes: { [ATTR.httpMethod]: 'POST', ...serverAttributes(url) } }
  }

  #refusalOf (url: URL): string | undefined {
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
    this.#resolve(host, { all: true, family: typeof options?.family === 'number' ? options.family : 0 }, (error, addresses) => {
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
