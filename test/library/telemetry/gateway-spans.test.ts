/** The gateway's spans under an SDK with its default context manager (AsyncLocalStorage): a plugin user's own. */
import { gatewaySpanCases } from './gateway-spans-cases.js'

gatewaySpanCases(undefined)
