/**
 * The gateway's spans under an SDK with no context manager, as the gateway app registers it
 * (src/gateway/tracing-sdk.ts): the same trees, every parent the one the gateway passes explicitly.
 */
import { gatewaySpanCases } from './gateway-spans-cases.js'

gatewaySpanCases(null)
