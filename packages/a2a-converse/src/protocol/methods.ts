/** The A2A 1.0 JSON-RPC methods (§9.4, proto `service A2AService`). Anything else is -32601. */
export const A2A_METHODS = Object.freeze([
  'SendMessage',
  'SendStreamingMessage',
  'GetTask',
  'ListTasks',
  'CancelTask',
  'SubscribeToTask',
  'CreateTaskPushNotificationConfig',
  'GetTaskPushNotificationConfig',
  'ListTaskPushNotificationConfigs',
  'DeleteTaskPushNotificationConfig',
  'GetExtendedAgentCard'
] as const)

export type A2AMethod = typeof A2A_METHODS[number]

const METHODS: ReadonlySet<string> = new Set(A2A_METHODS)

/** Methods answered with an SSE stream. */
export const STREAMING_METHODS: ReadonlySet<A2AMethod> = new Set(['SendStreamingMessage', 'SubscribeToTask'])

/** Methods gated by `capabilities.pushNotifications`. */
export const PUSH_CONFIG_METHODS: ReadonlySet<A2AMethod> = new Set([
  'CreateTaskPushNotificationConfig',
  'GetTaskPushNotificationConfig',
  'ListTaskPushNotificationConfigs',
  'DeleteTaskPushNotificationConfig'
])

export function isA2AMethod (method: string): method is A2AMethod {
  return METHODS.has(method)
}
