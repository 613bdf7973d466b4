// tap's coverage map (package.json "tap"."coverage-map"): which source files each test file's coverage counts.
// With a PostgreSQL server (TEST_DATABASE_URL) every file a test loads counts, as tap does by default. Without one,
// the modules whose every branch needs a server (a pg pool, LISTEN/NOTIFY, connection loss, leases shared between
// instances, migrations against a server's catalog) are run by the embedded database's tests but not counted: the
// 100 % gate holds for everything else, and for them on every machine with a server (CI runs both). The same for
// the Redis rate-limit windows without a Redis server (TEST_REDIS_URL): an unreachable Redis is tested everywhere,
// a reachable one only with a server.
import { readdirSync } from 'node:fs'
import { join } from 'node:path'

export const SERVER_ONLY = [
  'src/gateway/postgres-state.ts',
  // Cut out of postgres-state.ts (issue 42), server-only as it was: the push peers and an unsealed store need a server.
  'src/gateway/database-stores.ts',
  'src/gateway/embedded-state.ts',
  'src/gateway/push-secrets-reseal.ts',
  'packages/a2a-converse/src/stores/postgres/connection-errors.ts',
  'packages/a2a-converse/src/stores/postgres/conversation-connections.ts',
  'packages/a2a-converse/src/stores/postgres/conversation-statements.ts',
  'packages/a2a-converse/src/stores/postgres/conversation-writes.ts',
  'packages/a2a-converse/src/stores/postgres/listen-connection.ts',
  'packages/a2a-converse/src/stores/postgres/migrations.ts',
  'packages/a2a-converse/src/stores/postgres/postgres-conversation-store.ts',
  'packages/a2a-converse/src/stores/postgres/postgres-database.ts',
  'packages/a2a-converse/src/stores/postgres/notify-queue.ts',
  'packages/a2a-converse/src/stores/postgres/postgres-task-event-hub.ts',
  'packages/a2a-converse/src/stores/postgres/postgres-task-store.ts',
  'packages/a2a-converse/src/stores/postgres/postgres-task-turn-lock.ts',
  'packages/a2a-converse/src/stores/postgres/postgres-upstream-ownership-store.ts',
  'packages/a2a-converse/src/stores/postgres/task-event-notifications.ts'
]

export const REDIS_ONLY = [
  'src/gateway/redis-windows.ts'
]

function sources (folder) {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.(ts|js)$/.test(entry.name) && !entry.name.endsWith('.d.ts'))
    .map((entry) => join(entry.parentPath, entry.name).replaceAll('\\', '/'))
}

const uncounted = [
  ...(process.env.TEST_DATABASE_URL === undefined ? SERVER_ONLY : []),
  ...(process.env.TEST_REDIS_URL === undefined ? REDIS_ONLY : [])
]
const counted = uncounted.length > 0
  ? ['packages/a2a-converse/src', 'src', 'plugins', 'examples', 'scripts', 'web', 'bench'].flatMap(sources).filter((file) => !uncounted.includes(file))
  : []

export default function coverageMap () {
  return counted
}
