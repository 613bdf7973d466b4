/**
 * a2a-converse/service: the framework-free A2A service every door is built on — one binding-neutral call (method,
 * params, service parameters, caller) to a value, a stream of StreamResponse objects or an A2A error — with its
 * bindings (JSON-RPC: `handle`, and HTTP+JSON), the backend interface, the local @a2a-js/sdk backend, the task
 * writer and the Node stream writer. For writing a door (or a backend) of your own; loads the SDK, no web framework.
 */
export {
  type A2AService as A2ACallService, type A2AServiceOptions, type A2ACall, type DoorRequest, type A2AResult, type StreamItem, type ServiceParameters
} from './a2a/service.js'
export { createBoundA2AService as createA2AService, type BoundA2AService as A2AService } from './bindings/index.js'
export { answerJsonRpc, type A2AReply, type RequestBody } from './bindings/jsonrpc/binding.js'
export {
  answerHttpJson, HTTP_JSON_PATH, type HttpJsonRequest, type HttpJsonReply
} from './bindings/http-json/binding.js'
export { restErrorBody, type RestErrorBody } from './bindings/http-json/errors.js'
export type { A2ABackend, BackendContext, Caller, ServiceLogger } from './protocol/backend.js'
export {
  createAuthenticator, AuthenticationError, AuthenticationUnavailableError,
  type ApiKeyCredential, type Authenticator, type AuthenticatorOptions, type JwtOptions
} from './auth/authenticator.js'
export { cardSecurity, type CardSecurity } from './auth/card-security.js'
// Signed cards (docs/signing.md): the key the doors' `cardSigning` option takes, and the JWKS it publishes.
export {
  createSigningKey, SigningKeyError, SIGNING_ALGORITHMS,
  type SigningKey, type SigningKeyOptions, type SigningAlgorithm, type PublishedJwk
} from './auth/signing-key.js'
export { JWKS_PATH } from './auth/card-signer.js'
export { localBackend, A2AReplyError, type LocalBackendOptions } from './backends/local/local-backend.js'
export { createTaskWriter, type TaskWriter } from './events/task-writer.js'
export { writeStream } from './http/node-stream-writer.js'
export type { JsonRpcError } from './protocol/errors.js'
// What an endpoint agent's `turnLock` option takes (one turn at a time per task).
export {
  MemoryTaskTurnLock, TaskBusyError, DEFAULT_TURN_WAIT_TIMEOUT_MS,
  type TaskTurnLock, type TaskTurnKey, type MemoryTaskTurnLockOptions
} from './stores/task-turn-lock.js'
// Proxy mode: another A2A 1.0 agent as a backend, and envelopes from an HTTP service (both load undici).
export { upstreamBackend, type UpstreamBackendOptions } from './backends/proxy/upstream-backend.js'
export { upstreamCardSource, type UpstreamCardSource } from './backends/proxy/upstream-card.js'
export { UpstreamCardError, type UpstreamCard } from './backends/proxy/upstream-card-parse.js'
export { startUpstreamAgent, type UpstreamAgent, type UpstreamAgentOptions } from './backends/proxy/upstream-agent.js'
export { UpstreamErrorCode, UpstreamError } from './backends/proxy/upstream-errors.js'
export {
  httpEnvelopeProvider, perAgentEnvelopeProvider, EnvelopeServiceError,
  type HttpEnvelopeProvider, type HttpEnvelopeProviderOptions
} from './core/http-envelope-provider.js'
// For the gateway app and other integrators.
export { MIN_API_KEY_LENGTH, isCallerId } from './auth/authenticator.js'
export { ownedUpstreamBackend } from './backends/proxy/owned-upstream-backend.js'
export { relayedPushBackend, type RelayedPushBackend } from './backends/proxy/relayed-push-backend.js'
export { takeoverBackend } from './backends/proxy/takeover-backend.js'
export { type UpstreamDefinition, type UpstreamIdentityDefinition } from './backends/proxy/upstream-agent.js'
export { type UpstreamCardKeys } from './backends/proxy/upstream-card-keys.js'
export { UPSTREAM_ERROR_DETAILS } from './backends/proxy/upstream-errors.js'
export { RateLimitedError } from './http/rate-limited-error.js'
export { publicHostList } from './http/request-origin.js'
export { JsonRpcErrorCode } from './protocol/errors.js'
export { A2A_METHODS } from './protocol/methods.js'
export { A2A_VERSIONS, type A2AVersion } from './protocol/version.js'
export { endHttpServerSpan, startHttpServerSpan } from './telemetry/http-server-spans.js'
// What a door's `observer` option is told (metrics of one's own: docs/observability.md).
export { type CallObserver, type CallRecord } from './telemetry/observer.js'
export type { AnswerSummary } from './telemetry/attributes.js'
export { type Context } from './telemetry/tracing.js'
