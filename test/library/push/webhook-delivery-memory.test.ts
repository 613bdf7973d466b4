/** Push delivery to a real receiver (test/library/push/delivery-cases.ts) on STATE=memory: in process. */
import t from 'tap'
import { deliveryCases } from './delivery-cases.js'

deliveryCases(t, async () => ({}))
