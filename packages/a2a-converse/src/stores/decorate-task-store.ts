/**
 * The one way the library wraps a task store: a decoration replaces some of its members (or adds one, such as
 * `onSaved`); every other member — a capability the store declares (save signals, reservations) or a method of its
 * own — is the store's, called on the store itself. Tracing, save signals, push notifications and the store-failure
 * wording are decorations (traced-task-store.ts, task-save-signals.ts, push/push-notifications.ts,
 * stores/postgres/task-store-failures.ts).
 */
import type { TaskStore } from '@a2a-js/sdk/server'

export function decorateTaskStore<S extends TaskStore, D extends Partial<TaskStore>> (store: S, decoration: D): S & D {
  return new Proxy(store, {
    get (target, property) {
      if (Object.hasOwn(decoration, property)) return decoration[property as keyof D]
      const value: unknown = Reflect.get(target, property, target)
      // Methods run on the store itself (its private fields are not the proxy's).
      return typeof value === 'function' ? value.bind(target) : value
    },
    has (target, property) {
      return Object.hasOwn(decoration, property) || Reflect.has(target, property)
    }
  }) as S & D
}
