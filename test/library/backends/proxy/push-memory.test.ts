/** Push notifications for a proxied agent (test/library/backends/proxy/push-cases.ts) on STATE=memory: delivered in process. */
import t from 'tap'
import { proxyPushCases } from './push-cases.js'

proxyPushCases(t, async () => ({}))
