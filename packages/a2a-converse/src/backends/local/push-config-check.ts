/**
 * A webhook URL checked against the agent's URL policy before anything runs (dispatch.ts): a refused one is a
 * PushConfigRefusedError (-32602 naming the field), a config's `url` or a SendMessage's inline config's.
 */
import type { CheckedRequest } from '../../protocol/check-request.js'
import type { AgentPush } from '../../push/push-notifications.js'
import { PushConfigRefusedError } from './dispatch-errors.js'

const INLINE_URL_FIELD = 'configuration.taskPushNotificationConfig.url'

/** Refuses (PushConfigRefusedError) a webhook URL the agent's URL policy does not allow; without push, nothing is checked. */
export function checkPushUrl (push: AgentPush | undefined, url: string, field: string): void {
  const refusal = push?.policy.refusal(url)
  if (refusal !== undefined) throw new PushConfigRefusedError(field, refusal)
}

/** The refusal of a SendMessage's inline push config, before anything runs; undefined when none or allowed. */
export function inlineConfigRefusal (push: AgentPush | undefined, request: CheckedRequest): PushConfigRefusedError | undefined {
  const configuration = (request.params as { configuration?: { taskPushNotificationConfig?: { url: string } } }).configuration
  const url = configuration?.taskPushNotificationConfig?.url
  if (url === undefined || push === undefined) return undefined
  try {
    checkPushUrl(push, url, INLINE_URL_FIELD)
  } catch (error) {
    return error as PushConfigRefusedError
  }
  return undefined
}
