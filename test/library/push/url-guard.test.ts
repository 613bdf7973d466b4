/**
 * The webhook URL policy's address classes, edge by edge: every range it refuses (first and last address inside,
 * the neighbours outside), every IPv6 spelling that embeds a refused IPv4 address, and the connect-time check over
 * every address a name resolves to (the resolver injected, so a name can resolve to a public and a private address).
 */
import t from 'tap'
import ipaddr from 'ipaddr.js'
import type { LookupAddress } from 'node:dns'
import { PushUrlPolicy, VERDICTS_KEPT, publicAddress, type Resolver } from '../../../packages/a2a-converse/src/push/url-guard.js'

/** The ranges docs/push.md says are refused (IPv4 and IPv6), as CIDRs. */
const REFUSED = [
  '0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.0.0.0/24',
  '192.0.2.0/24', '192.31.196.0/24', '192.52.193.0/24', '192.88.99.0/24', '192.175.48.0/24', '192.168.0.0/16', '198.18.0.0/15', '198.51.100.0/24', '203.0.113.0/24',
  '224.0.0.0/4', '240.0.0.0/4',
  // ::/104: the IPv4-compatible spelling of 0.0.0.0/8, with the unspecified and loopback addresses.
  '::/104', '::/128', '::1/128', '100::/64', '2001:db8::/32', '2620:4f:8000::/48', '3fff::/20', '5f00::/16', 'fc00::/7', 'fe80::/10',
  'fec0::/10', 'ff00::/8', '64:ff9b:1::/48'
]

function toBig (address: ipaddr.IPv4 | ipaddr.IPv6): bigint {
  return address.toByteArray().reduce((sum, byte) => (sum << 8n) | BigInt(byte), 0n)
}

function fromBig (value: bigint, v4: boolean): string | undefined {
  const length = v4 ? 4 : 16
  if (value < 0n || value >= 1n << BigInt(length * 8)) return undefined
  const bytes: number[] = []
  for (let i = 0; i < length; i++) bytes.unshift(Number((value >> BigInt(i * 8)) & 0xffn))
  return ipaddr.fromByteArray(bytes).toString()
}

function refusedByTable (address: string): boolean {
  const parsed = ipaddr.parse(address)
  return REFUSED.some((cidr) => {
    const range = ipaddr.parseCIDR(cidr)
    return range[0].kind() === parsed.kind() && parsed.match(range)
  })
}

t.test('every refused range, edge by edge: first and last inside refused, the neighbours outside allowed', async (t) => {
  const policy = new PushUrlPolicy()
  for (const cidr of REFUSED) {
    const [network, bits] = ipaddr.parseCIDR(cidr)
    const v4 = network.kind() === 'ipv4'
    const first = toBig(network)
    const last = first + (1n << BigInt((v4 ? 32 : 128) - bits)) - 1n
    for (const inside of [first, last]) {
      const address = fromBig(inside, v4) as string
      t.equal(policy.addressAllowed(address), false, `${address} (in ${cidr}) refused`)
      t.match(policy.refusal(`https://${v4 ? address : `[${address}]`}/hook`), /internal address/, `${address} refused as written`)
    }
    for (const outside of [first - 1n, last + 1n]) {
      const address = fromBig(outside, v4)
      // An end of the address space, or a neighbour that is itself in another refused range (224/4 then 240/4).
      if (address === undefined || refusedByTable(address)) continue
      t.equal(policy.addressAllowed(address), true, `${address} (just outside ${cidr}) allowed`)
    }
  }
})

t.test('every IPv6 spelling of a refused IPv4 address is refused; of a public one, allowed', async (t) => {
  const policy = new PushUrlPolicy()
  // [spelling, what it embeds]
  const refused = [
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback, hex'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['::ffff:169.254.169.254', 'IPv4-mapped metadata address'],
    ['::127.0.0.1', 'IPv4-compatible loopback'],
    ['::7f00:1', 'IPv4-compatible loopback, hex'],
    ['::10.0.0.1', 'IPv4-compatible private'],
    ['::0.0.0.2', 'IPv4-compatible unspecified range'],
    ['::ffff:0:7f00:1', 'IPv4-translated (SIIT) loopback'],
    ['::ffff:0:192.168.1.1', 'IPv4-translated private'],
    ['2002:7f00:1::1', '6to4 loopback'],
    ['2002:a9fe:a9fe::', '6to4 metadata address'],
    ['2002:c0a8:101:1::1', '6to4 private'],
    ['64:ff9b::7f00:1', 'NAT64 well-known, loopback'],
    ['64:ff9b::127.0.0.1', 'NAT64 well-known, dotted'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 well-known, metadata address'],
    ['64:ff9b:1::808:808', 'NAT64 local-use (refused whole)'],
    ['64:ff9b:1:ffff::1', 'NAT64 local-use, last /48'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'Teredo, client 127.0.0.1'],
    ['2001:0:4136:e378:8000:63bf:f5ff:fffe', 'Teredo, client 10.0.0.1'],
    ['2001:0:7f00:1:8000:63bf:f7f7:f7f7', 'Teredo, server 127.0.0.1'],
    ['2001:2::1', 'benchmarking (in the IETF protocol block 2001::/23, refused but Teredo)'],
    ['2001:1ff:ffff::1', 'the IETF protocol block\'s last /32']
  ] as const
  for (const [spelling, what] of refused) {
    t.equal(policy.addressAllowed(spelling), false, `${spelling}: ${what}`)
    t.match(policy.refusal(`https://[${spelling}]/hook`), /internal address/, `${spelling} as written`)
  }
  const allowed = [
    ['::ffff:8.8.8.8', 'IPv4-mapped public'],
    ['::8.8.8.8', 'IPv4-compatible public'],
    ['::ffff:0:808:808', 'IPv4-translated public'],
    ['2002:808:808::1', '6to4 public'],
    ['64:ff9b::808:808', 'NAT64 well-known, public'],
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', 'Teredo, client 8.8.8.8'],
    ['2606:4700::1111', 'plain public']
  ] as const
  for (const [spelling, what] of allowed) t.equal(policy.addressAllowed(spelling), true, `${spelling}: ${what}`)
  t.equal(publicAddress('93.184.216.34'), true)
  t.equal(publicAddress('255.255.255.255'), false, 'broadcast')
})

t.test('connect time: a name is refused unless every address it resolves to is allowed', async (t) => {
  const answers: Record<string, LookupAddress[]> = {
    'mixed.example': [{ address: '93.184.216.34', family: 4 }, { address: '10.0.0.7', family: 4 }],
    'mixed-v6.example': [{ address: '2606:4700::1111', family: 6 }, { address: '::ffff:127.0.0.1', family: 6 }],
    'private-first.example': [{ address: '192.168.1.1', family: 4 }, { address: '93.184.216.34', family: 4 }],
    'public.example': [{ address: '93.184.216.34', family: 4 }, { address: '2606:4700::1111', family: 6 }],
    'nothing.example': []
  }
  const asked: Array<{ host: string, family: number }> = []
  const resolver: Resolver = (host, options, callback) => {
    asked.push({ host, family: options.family })
    queueMicrotask(() => callback(null, answers[host] ?? []))
  }
  const policy = new PushUrlPolicy({ resolver })
  const lookup = async (host: string, options: { all?: boolean, family?: number } = {}) =>
    await new Promise<{ error: Error | null, address: unknown }>((resolve) => policy.lookup(host, options, (error, address) => resolve({ error, address })))
  for (const host of ['mixed.example', 'mixed-v6.example', 'private-first.example', 'nothing.example']) {
    t.equal((await lookup(host, { all: true })).error?.name, 'ForbiddenAddressError', `${host}: refused`)
  }
  t.match(await lookup('public.example', { all: true }), { error: null, address: answers['public.example'] }, 'every address public: all of them')
  t.match(await lookup('public.example', { family: 4 }), { error: null, address: '93.184.216.34' })
  t.match(asked.at(-1), { host: 'public.example', family: 4 }, 'the family asked for is the resolver\'s')
})

t.test('a verdict is kept per URL, at most VERDICTS_KEPT: the same answers before, while and after they are forgotten', async (t) => {
  const policy = new PushUrlPolicy()
  const urls = ['https://10.0.0.1/hook', 'https://hooks.example/hook', 'http://hooks.example/hook']
  const first = urls.map((url) => policy.refusal(url))
  t.match(first, [/internal/, undefined, /plain http/])
  t.strictSame(urls.map((url) => policy.refusal(url)), first, 'kept')
  for (let n = 0; n < VERDICTS_KEPT; n++) t.equal(policy.refusal(`https://hooks.example/${n}`), undefined)
  t.strictSame(urls.map((url) => policy.refusal(url)), first, 'judged again once forgotten')
})
