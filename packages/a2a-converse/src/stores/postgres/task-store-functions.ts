/**
 * The task store's writes as SQL functions (issue 43: a turn's trips to the database), created by the migration
 * `0012_task_store_functions` (migrations.ts) on the server and on the embedded database alike: each is one
 * statement, so one round trip, and one transaction (an autocommit statement), where the store sent an existence
 * check, BEGIN, the caller's lock, the count, the write and COMMIT one after the other.
 *
 * - `converse_reserve_task`: a new task's slot under the caller's cap (task-reservations.ts). The caller's advisory
 *   lock is taken before the count and held until the statement commits the reservation: of concurrent reservations
 *   of one caller, on any instance, at most the cap succeed.
 * - `converse_save_task`: a task save (postgres-task-store.ts). A stored task is updated unless it is finished in
 *   another state (finished stays finished: outcome `finished` and its state); a new one is counted under the
 *   caller's lock unless reserved (outcome `capped` past the cap) and inserted. With push (an agent id) and configs
 *   for the task, the stored row is locked first, and each config gets an outbox row per update — the status when it
 *   changed, each artifact new or changed (push/task-updates.ts's rule, told from the row it replaces) — in the same
 *   statement, so the same transaction, and a finished task's configs are dropped. Without configs, a stored task's
 *   save is the conditional update alone (the cheapest: no row lock before it). A row's target is the config as stored; a config not sealed with the
 *   store's current key (or sealed, for a store without one) raises CONFIG_TO_RESEAL (nothing is written): the
 *   store re-seals it and saves again.
 * - `converse_save_task_steps` (migration `0014_task_save_steps`): a blocking turn's saves of its task, deferred
 *   until its reply (deferred-task-saves.ts), written in order by `converse_save_task` in one statement: the same rows,
 *   refusals and outbox rows as one save after the other, one round trip and one commit. It stops at the first save
 *   that is not `saved` and answers that one (those before it are written, as they would have been).
 *
 * Tables are named unqualified: a call resolves them in its connection's search_path, as every statement does.
 */

export const RESERVE_TASK_FUNCTION = 'converse_reserve_task'
export const SAVE_TASK_FUNCTION = 'converse_save_task'
export const SAVE_TASK_STEPS_FUNCTION = 'converse_save_task_steps'

/** The SQLSTATE converse_save_task raises with when a config of the task must be re-sealed first. */
export const CONFIG_TO_RESEAL = 'CV001'

/**
 * The advisory-lock class of a caller's open-task count (the two-key form: its keys never meet the migrator's
 * one-key lock, nor the push configs' 230_007 and the agents' class).
 */
const CALLER_LOCK_CLASS = 230_006

/** The terminal states as the task table writes them (status_state). */
const TERMINAL_NAMES = "'TASK_STATE_COMPLETED', 'TASK_STATE_CANCELED', 'TASK_STATE_FAILED', 'TASK_STATE_REJECTED'"

export interface TaskStoreTables {
  tasks: string
  reservations: string
  pushConfigs: string
  pushOutbox: string
}

function openWorkFunction ({ tasks, reservations }: TaskStoreTables): string {
  // The caller's open tasks (the partial index's own condition) and live reservations of other tasks; expired ones
  // are dropped on the way. Called under the caller's lock.
  return `create function converse_open_work (p_caller_key text, p_task_id text) returns bigint
    language plpgsql as $$
    begin
      delete from ${reservations} where caller_key = p_caller_key and expires_at <= now();
      return (select count(*) from ${tasks} where caller_key = p_caller_key
          and (status_state is null or status_state not in (${TERMINAL_NAMES})))
        + (select count(*) from ${reservations} where caller_key = p_caller_key and task_id <> p_task_id and expires_at > now());
    end $$`
}

function reserveTaskFunction ({ tasks, reservations }: TaskStoreTables): string {
  return `create function ${RESERVE_TASK_FUNCTION} (
      p_tenant text, p_owner text, p_task_id text, p_caller_key text, p_max_open integer, p_ttl_ms integer
    ) returns text language plpgsql as $$
    begin
      if exists (select 1 from ${tasks} where tenant = p_tenant and owner = p_owner and id = p_task_id) then
        return 'held';
      end if;
      perform pg_advisory_xact_lock(${CALLER_LOCK_CLASS}, hashtext(p_caller_key));
      -- Its own earlier reservation is not counted: reserving again only renews it.
      if converse_open_work(p_caller_key, p_task_id) >= p_max_open then
        return 'capped';
      end if;
      insert into ${reservations} (caller_key, task_id, expires_at)
        values (p_caller_key, p_task_id, now() + p_ttl_ms * interval '1 millisecond')
        on conflict (caller_key, task_id) do update set expires_at = excluded.expires_at;
      return 'reserved';
    end $$`
}

function saveTaskFunction ({ tasks, reservations, pushConfigs, pushOutbox }: TaskStoreTables): string {
  return `create function ${SAVE_TASK_FUNCTION} (
      p_tenant text, p_owner text, p_id text, p_caller_key text,
      p_context_id text, p_status_last_updated bigint, p_status_state text, p_status text, p_artifacts text,
      p_history text, p_metadata text, p_protocol_version text,
      p_may_insert boolean, p_max_open integer,
      p_push_agent text, p_seal_prefix text, p_traceparent text, p_tracestate text
    ) returns table (outcome text, stored_state text, pushed boolean) language plpgsql as $$
    declare
      terminal constant text[] := array[${TERMINAL_NAMES}];
      is_open boolean := p_status_state is null or p_status_state <> all (terminal);
      was_state text;
      was_status text;
      was_artifacts text;
      live boolean;
      held boolean;
      configs integer := 0;
      copyable boolean := true;
    begin
      if p_push_agent is not null then
        select count(*), coalesce(bool_and(case when p_seal_prefix is null then left(config, 1) = '{'
            else starts_with(config, p_seal_prefix) end), true)
          into configs, copyable
          from ${pushConfigs} where tenant = p_tenant and owner = p_owner and task_id = p_id;
        if not copyable then
          raise exception 'a push config of task % is to be re-sealed', p_id using errcode = '${CONFIG_TO_RESEAL}';
        end if;
      end if;
      if configs > 0 then
        -- The updates are told from the row this save replaces: locked until the statement commits.
        select t.status_state, t.status, t.artifacts into was_state, was_status, was_artifacts
          from ${tasks} t where t.tenant = p_tenant and t.owner = p_owner and t.id = p_id for update;
        held := found;
      else
        -- No notification to tell: a stored task's save is the update alone, under the same rule.
        update ${tasks} set context_id = p_context_id, status_last_updated = p_status_last_updated,
            status_state = p_status_state, status = p_status, artifacts = p_artifacts, history = p_history,
            metadata = p_metadata, protocol_version = p_protocol_version
          where tenant = p_tenant and owner = p_owner and id = p_id
            and (status_state is null or status_state <> all (terminal) or status_state = p_status_state);
        if found then
          return query select 'saved'::text, null::text, false;
          return;
        end if;
        -- Nothing updated: a new task, or a finished one.
        select t.status_state into was_state from ${tasks} t where t.tenant = p_tenant and t.owner = p_owner and t.id = p_id;
        held := found;
      end if;
      if held then
        if was_state = any (terminal) and was_state is distinct from p_status_state then
          return query select 'finished'::text, was_state, false;
          return;
        end if;
        update ${tasks} set context_id = p_context_id, status_last_updated = p_status_last_updated,
            status_state = p_status_state, status = p_status, artifacts = p_artifacts, history = p_history,
            metadata = p_metadata, protocol_version = p_protocol_version
          where tenant = p_tenant and owner = p_owner and id = p_id;
      else
        -- The SDK's FAILED task for a turn whose reservation was refused: nothing is stored.
        if not p_may_insert then
          return query select 'refused'::text, null::text, false;
          return;
        end if;
        perform pg_advisory_xact_lock(${CALLER_LOCK_CLASS}, hashtext(p_caller_key));
        -- The task's reservation is taken (no second count); without a live one, an open task is counted.
        delete from ${reservations} where caller_key = p_caller_key and task_id = p_id returning expires_at > now() into live;
        if is_open and live is not true and converse_open_work(p_caller_key, p_id) >= p_max_open then
          return query select 'capped'::text, null::text, false;
          return;
        end if;
        -- caller_key is written with a new row only: a task stays the open work of the caller that started it. A
        -- concurrent first save of the same task is replaced under the same rule.
        insert into ${tasks} as t (tenant, owner, id, caller_key, context_id, status_last_updated, status_state, status,
            artifacts, history, metadata, protocol_version)
          values (p_tenant, p_owner, p_id, p_caller_key, p_context_id, p_status_last_updated, p_status_state, p_status,
            p_artifacts, p_history, p_metadata, p_protocol_version)
          on conflict (tenant, owner, id) do update set context_id = excluded.context_id,
            status_last_updated = excluded.status_last_updated, status_state = excluded.status_state,
            status = excluded.status, artifacts = excluded.artifacts, history = excluded.history,
            metadata = excluded.metadata, protocol_version = excluded.protocol_version
            where t.status_state is null or t.status_state <> all (terminal) or t.status_state = excluded.status_state;
        if not found then
          return query select 'finished'::text, (select status_state::text from ${tasks} where tenant = p_tenant and owner = p_owner and id = p_id), false;
          return;
        end if;
      end if;
      if configs > 0 then
        -- The updates in order (the status first), each to every config (by id): a task's notifications reach each
        -- webhook in that order. Each artifact is compared with the last one of its id in the row it replaces.
        insert into ${pushOutbox} (agent_id, tenant, owner, task_id, config_id, target, converse, event, notification_id,
            traceparent, tracestate)
          select p_push_agent, p_tenant, p_owner, p_id, c.id, c.config, c.converse, u.event, gen_random_uuid(),
              p_traceparent, p_tracestate
            from ${pushConfigs} c
            cross join (
              select 0::bigint as n, '{"statusUpdate":{"taskId":' || to_json(p_id)::text || ',"contextId":'
                  || to_json(p_context_id)::text || ',"status":' || p_status || '}}' as event
                where p_status is not null and (was_status is null or was_status::jsonb is distinct from p_status::jsonb)
              union all
              select a.n, '{"artifactUpdate":{"taskId":' || to_json(p_id)::text || ',"contextId":'
                  || to_json(p_context_id)::text || ',"artifact":' || a.artifact::text
                  || ',"append":false,"lastChunk":true}}'
                from json_array_elements(coalesce(p_artifacts, '[]')::json) with ordinality a (artifact, n)
                where (select w.artifact::jsonb from json_array_elements(coalesce(was_artifacts, '[]')::json)
                    with ordinality w (artifact, n)
                    where w.artifact ->> 'artifactId' is not distinct from a.artifact ->> 'artifactId' order by w.n desc limit 1)
                  is distinct from a.artifact::jsonb
            ) u
            where c.tenant = p_tenant and c.owner = p_owner and c.task_id = p_id
            order by c.id, u.n;
        if not is_open then
          delete from ${pushConfigs} where tenant = p_tenant and owner = p_owner and task_id = p_id;
        end if;
      end if;
      return query select 'saved'::text, null::text, configs > 0;
    end $$`
}

function saveTaskStepsFunction (): string {
  return `create function ${SAVE_TASK_STEPS_FUNCTION} (
      p_tenant text, p_owner text, p_id text, p_caller_key text,
      p_context_ids text[], p_status_last_updated bigint[], p_status_states text[], p_statuses text[], p_artifacts text[],
      p_histories text[], p_metadata text[], p_protocol_version text, p_max_open integer,
      p_push_agent text, p_seal_prefix text, p_traceparent text, p_tracestate text
    ) returns table (outcome text, stored_state text, pushed boolean) language plpgsql as $$
    declare
      step record;
      any_pushed boolean := false;
    begin
      for i in 1 .. cardinality(p_context_ids) loop
        select s.outcome, s.stored_state, s.pushed into step from ${SAVE_TASK_FUNCTION}(p_tenant, p_owner, p_id,
            p_caller_key, p_context_ids[i], p_status_last_updated[i], p_status_states[i], p_statuses[i], p_artifacts[i],
            p_histories[i], p_metadata[i], p_protocol_version, true, p_max_open, p_push_agent, p_seal_prefix,
            p_traceparent, p_tracestate) s;
        any_pushed := any_pushed or step.pushed;
        if step.outcome <> 'saved' then
          return query select step.outcome, step.stored_state, any_pushed;
          return;
        end if;
      end loop;
      return query select 'saved'::text, null::text, any_pushed;
    end $$`
}

/** The DDL of migration 0014: the steps function (it calls converse_save_task). */
export function taskSaveStepsFunctions (): string[] {
  return [saveTaskStepsFunction()]
}

/** The migration's DDL. */
export function taskStoreFunctions (tables: TaskStoreTables): string[] {
  return [openWorkFunction(tables), reserveTaskFunction(tables), saveTaskFunction(tables)]
}
