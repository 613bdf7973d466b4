/**
 * The A2A service with its bindings on it — what a door serves: `call` (binding-neutral, packages/a2a-converse/src/a2a/service.ts),
 * `handle` (JSON-RPC: §9 for 1.0, and 0.3 through translation when served) and `handleHttpJson` (HTTP+JSON, §11),
 * each a thin mapper over `call`.
 */
import { createA2AService, type A2AServiceOptions, type LiveA2AService } from '../a2a/service.js'
import { A2A_VERSION_HEADER, isV03, requestedVersion, type A2AVersion } from '../protocol/version.js'
import { answerHttpJson, type HttpJsonReply, type HttpJsonRequest } from './http-json/binding.js'
import { answerJsonRpc, type A2AReply, type A2AServiceRequest } from './jsonrpc/binding.js'
import { answerJsonRpcV03 } from './v0_3/jsonrpc.js'
import { answerRestV03, V03_REST_PREFIX } from './v0_3/rest.js'

export interface BoundA2AService extends LiveA2AService {
  /** The protocol versions `handle` answers (1.0 always; 0.3 when served). */
  readonly versions: readonly A2AVersion[]
  /** Answers one JSON-RPC request. Never rejects. */
  handle (request: A2AServiceRequest): Promise<A2AReply>
  /** Answers one HTTP+JSON request. Never rejects. */
  handleHttpJson (request: HttpJsonRequest): Promise<HttpJsonReply>
}

export interface BoundA2AServiceOptions extends A2AServiceOptions {
  /**
   * The protocol versions the JSON-RPC binding answers. Default both: a request without `A2A-Version` (or with
   * 0.3) is then an A2A 0.3 request, translated; with ['1.0'] it is refused with -32009 as 1.0 says.
   */
  versions?: readonly A2AVersion[]
}

export function createBoundA2AService (options: BoundA2AServiceOptions): BoundA2AService {
  const service = createA2AService(options)
  const versions = Object.freeze([...(options.versions ?? ['0.3', '1.0'])])
  const v03 = versions.includes('0.3')
  return {
    ...service,
    versions,
    handle: async (request) => {
      if (!v03) return await answerJsonRpc(service, request)
      const version = requestedVersion(request.headers['a2a-version'], request.query?.[A2A_VERSION_HEADER])
      if (isV03(version)) return await answerJsonRpcV03(service, request)
      // A version neither binding speaks: -32009 names both.
      return await answerJsonRpc(service, request, versions)
    },
    // The 0.3 routes live under /v1/ beside the 1.0 ones: the path, not A2A-Version, tells them apart.
    handleHttpJson: async (request) => v03 && request.path.startsWith(V03_REST_PREFIX)
      ? await answerRestV03(service, request)
      : await answerHttpJson(service, request)
  }
}
