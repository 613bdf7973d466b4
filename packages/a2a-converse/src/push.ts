/** a2a-converse/push */
// For the gateway app and other integrators.
export { createPushNotifications, type AgentPush, type PushConfigStore } from './push/index.js'
export { type PushStats } from './push/push-deliverer.js'
export { SecretBox, SecretsKeyError, generateSecretsKey, parseSecretsKey } from './stores/secret-box.js'
