/**
 * A task turn's lease taken and its task read in one statement (issue 43: a step on a server read the task in a
 * round trip of its own right after the take). `converse_take_task_turn`, created by the migration
 * `0015_take_task_turn` (migrations.ts), runs the turn lock's take (postgres-task-turn-lock.ts: the lease row's
 * insert, or its update once expired) and, only when it took the lease, reads the task's row as the SDK's load does.
 *
 * The read is a statement of its own inside the function, not a part of the take's: a volatile function's
 * statements each see a snapshot taken when they start (READ COMMITTED), so the read sees every save committed
 * before the take got the lease — the one before it waited, on another instance, for the holder whose last save
 * deleted the row in the same commit (TurnLease). In the take's own statement the read would see the snapshot of
 * before that wait: the task as it was before the last turn.
 */
import { TASK_TABLE } from '../../peers/postgres.js'
import { TASK_TURN_LOCKS_TABLE } from './table-names.js'

export const TAKE_TASK_TURN_FUNCTION = 'converse_take_task_turn'

/** The migration's DDL. Answers one row: `taken`, then whether the task has a row, and its columns as stored. */
export function takeTaskTurnFunction (): string[] {
  return [`create function ${TAKE_TASK_TURN_FUNCTION} (p_lock_key text, p_holder text, p_lease_ms double precision,
      p_tenant text, p_owner text, p_task_id text)
    returns table (taken boolean, has_row boolean, task_context_id text, task_status text, task_artifacts text,
      task_history text, task_metadata text)
    language plpgsql as $$
    begin
      insert into ${TASK_TURN_LOCKS_TABLE} (lock_key, holder, expires_at)
          values (p_lock_key, p_holder, now() + make_interval(secs => p_lease_ms / 1000))
        on conflict (lock_key) do update set holder = excluded.holder, expires_at = excluded.expires_at
          where ${TASK_TURN_LOCKS_TABLE}.expires_at <= now();
      if not found then
        return query select false, false, null::text, null::text, null::text, null::text, null::text;
        return;
      end if;
      return query select true, true, t.context_id::text, t.status, t.artifacts, t.history, t.metadata
        from ${TASK_TABLE} t where t.tenant = p_tenant and t.owner = p_owner and t.id = p_task_id;
      if not found then
        return query select true, false, null::text, null::text, null::text, null::text, null::text;
      end if;
    end $$`]
}
