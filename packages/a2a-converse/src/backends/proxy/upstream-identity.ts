/**
 * Who the upstream sees calling (`upstream.identity`, docs/trust.md): what goes in the identity header of every
 * request made for a caller, per mode — `assertion`: the gateway's JWT naming the caller (auth/upstream-assertion.ts);
 * `passthrough`: the caller's own bearer JWT, as it presented it; `exchange`: that JWT exchanged at a token endpoint
 * (token-exchange.ts). The last two need a caller that authenticated with a JWT (auth/caller-credential.ts): an API
 * key is never forwarded, and a caller with none (an API key, a walk-in) is refused with -32050 before anything
 * goes upstream. `none` (the default): nothing, the upstream sees the gateway by its configured headers.
 */
import type { Dispatcher } from 'undici'
import { createAssertionMinter } from '../../auth/upstream-assertion.js'
import { callerBearerToken } from '../../auth/caller-credential.js'
import type { SigningKey } from '../../auth/signing-key.js'
import { InvalidOptionError } from '../../core/errors.js'
import { createTokenExchange, noCallerToken } from './token-exchange.js'
import type { UpstreamIdentity } from './upstream-backend.js'

export type UpstreamIdentityMode = 'none' | 'assertion' | 'passthrough' | 'exchange'

export const UPSTREAM_IDENTITY_MODES: readonly UpstreamIdentityMode[] = ['none', 'assertion', 'passthrough', 'exchange']

/** `upstream.identity` of a proxied agent. */
export interface UpstreamIdentityDefinition {
  mode: UpstreamIdentityMode
  /** The header it goes in (`authorization`: `Bearer <token>`; another: the bare token). Default `authorization`. */
  header?: string
  /** `assertion`: its `aud` (default: the upstream's `url`). `exchange`: RFC 8693's `audience`, sent when set. */
  audience?: string
  /** `assertion`: seconds, 60–300. Default 300. */
  lifetimeSec?: number
  /** `exchange`: the token endpoint's URL. */
  tokenEndpoint?: string
  /** `exchange`: the gateway's client id and secret there (HTTP Basic). */
  clientId?: string
  clientSecret?: string
  /** `exchange`: RFC 8693's `resource` and `scope`, sent when set. */
  resource?: string
  scope?: string
  /** `exchange`: what the caller's token is to the endpoint (`subject_token_type`). Default `access_token`. */
  subjectTokenType?: 'access_token' | 'jwt'
}

export interface UpstreamIdentityContext {
  agentId: string
  /** The upstream's URL (the assertion's default audience). */
  url: string
  dispatcher: Dispatcher
  timeoutMs: number
  /** What `assertion` signs with: the gateway's key and its public URL (`iss`). */
  assertions?: { key: SigningKey, issuer: string }
}

/** The identity the upstream backend sends; undefined for `none`. Throws InvalidOptionError for a mode missing its settings. */
export function upstreamIdentity (definition: UpstreamIdentityDefinition | undefined, context: UpstreamIdentityContext): UpstreamIdentity | undefined {
  if (definition === undefined || definition.mode === 'none') return undefined
  const { agentId } = context
  const header = (definition.header ?? 'authorization').toLowerCase()
  switch (definition.mode) {
    case 'assertion': {
      const { assertions } = context
      if (assertions === undefined) throw new InvalidOptionError('assertions', `must be given: agent "${agentId}" sends assertions (upstream.identity.mode "assertion")`)
      const minter = createAssertionMinter({ key: assertions.key, issuer: assertions.issuer, audience: definition.audience ?? context.url, lifetimeSec: definition.lifetimeSec })
      return { header, tokenFor: minter.tokenFor }
    }
    case 'passthrough':
      return {
        header,
        tokenFor: async (caller) => {
          const token = callerBearerToken(caller)
          if (token === undefined) throw noCallerToken(agentId)
          return token
        }
      }
    case 'exchange': {
      const { tokenEndpoint, clientId, clientSecret } = definition
      for (const [name, value] of Object.entries({ tokenEndpoint, clientId, clientSecret })) {
        if (typeof value !== 'string' || value === '') throw new InvalidOptionError(`upstream.identity.${name}`, `must be given: agent "${agentId}" exchanges tokens (upstream.identity.mode "exchange")`)
      }
      const exchange = createTokenExchange({
        agentId,
        tokenEndpoint: tokenEndpoint as string,
        clientId: clientId as string,
        clientSecret: clientSecret as string,
        audience: definition.audience,
        resource: definition.resource,
        scope: definition.scope,
        subjectTokenType: definition.subjectTokenType,
        dispatcher: context.dispatcher,
        timeoutMs: context.timeoutMs
      })
      return { header, tokenFor: exchange.tokenFor }
    }
    default:
      throw new InvalidOptionError('upstream.identity.mode', `must be one of ${UPSTREAM_IDENTITY_MODES.join(', ')}`)
  }
}
