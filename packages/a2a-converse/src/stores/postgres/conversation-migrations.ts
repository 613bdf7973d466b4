/**
 * The migrations of the conversation tables: the conversations and their task index (with the live events' spill
 * table, created in the same first migration), then each conversation's owner and the owners' counts behind the
 * per-caller bounds (with the task reservations those bounds added), and that count's refusal past the cap. Apart
 * from the runner (migrations.ts), which only orders the histories.
 */
import type { Migration } from 'kysely'
import { sqlMigration } from './sql-migration.js'
import { CONVERSATION_OWNERS_TABLE, CONVERSATION_TASKS_TABLE, CONVERSATIONS_TABLE, TASK_EVENTS_TABLE, TASK_RESERVATIONS_TABLE } from './table-names.js'

/** The first of our history: the conversations, their tasks, and the task events spilled for other instances. */
export function createConverseTables (schema: string): Migration {
  return sqlMigration(schema, [
    `create sequence ${CONVERSATIONS_TABLE}_write_seq`,
    // state is NULL only inside the transaction that creates the conversation (the row exists to be locked).
    `create table ${CONVERSATIONS_TABLE} (
      agent_id text collate "C" not null,
      context_id text collate "C" not null,
      state jsonb,
      version integer not null default 0,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      write_seq bigint not null default nextval('${CONVERSATIONS_TABLE}_write_seq'),
      constraint ${CONVERSATIONS_TABLE}_pkey primary key (agent_id, context_id)
    )`,
    `alter sequence ${CONVERSATIONS_TABLE}_write_seq owned by ${CONVERSATIONS_TABLE}.write_seq`,
    `create index ${CONVERSATIONS_TABLE}_agent_recent_idx on ${CONVERSATIONS_TABLE} (agent_id, write_seq desc)`,
    `create table ${CONVERSATION_TASKS_TABLE} (
      agent_id text collate "C" not null,
      task_id text collate "C" not null,
      context_id text collate "C" not null,
      constraint ${CONVERSATION_TASKS_TABLE}_pkey primary key (agent_id, task_id),
      constraint ${CONVERSATION_TASKS_TABLE}_conversation_fkey foreign key (agent_id, context_id)
        references ${CONVERSATIONS_TABLE} (agent_id, context_id) on delete cascade
    )`,
    `create index ${CONVERSATION_TASKS_TABLE}_context_idx on ${CONVERSATION_TASKS_TABLE} (agent_id, context_id)`,
    `create table ${TASK_EVENTS_TABLE} (
      id bigserial primary key,
      task_id text not null,
      event text not null,
      created_at timestamptz not null default now()
    )`,
    `create index ${TASK_EVENTS_TABLE}_created_idx on ${TASK_EVENTS_TABLE} (created_at)`
  ])
}

/**
 * Per-caller bounds decided before a turn writes anything (docs/guarantees.md):
 * - each conversation records the caller key of the request that created it (`owner`, MAX_CONVERSATIONS_PER_CALLER),
 *   indexed per agent and owner in write order (the count, and the owner's least recently updated one to evict);
 * - a new task's slot under MAX_OPEN_TASKS_PER_CALLER is reserved before its turn is recorded and taken by the task's
 *   first save. Unlogged, as the turn locks: a reservation outlives its turn by seconds at most (expires_at).
 */
export function addCallerBounds (schema: string): Migration {
  return sqlMigration(schema, [
    `alter table ${CONVERSATIONS_TABLE} add column owner text collate "C"`,
    `create index ${CONVERSATIONS_TABLE}_owner_idx on ${CONVERSATIONS_TABLE} (agent_id, owner, write_seq) where owner is not null`,
    `create unlogged table ${TASK_RESERVATIONS_TABLE} (
      caller_key text collate "C" not null,
      task_id text collate "C" not null,
      expires_at timestamptz not null,
      constraint ${TASK_RESERVATIONS_TABLE}_pkey primary key (caller_key, task_id)
    )`
  ])
}

/**
 * How many conversations each owner holds per agent, kept by a trigger on every row change, so that the cap's check
 * and the overflow's size read one row instead of counting the owner's conversations (a count of up to
 * MAX_CONVERSATIONS_PER_CALLER rows on every new conversation: 1.4 ms and 4.8 ms on the embedded database at 550).
 * A row counts when it has an owner and a state (a placeholder row, state NULL, does not). The counter row is
 * locked by the change until it commits, so two new conversations of one owner count one after the other.
 */
export function countOwnedConversations (schema: string): Migration {
  return sqlMigration(schema, [
    `create table ${CONVERSATION_OWNERS_TABLE} (
      agent_id text collate "C" not null,
      owner text collate "C" not null,
      held integer not null,
      constraint ${CONVERSATION_OWNERS_TABLE}_pkey primary key (agent_id, owner)
    )`,
    `insert into ${CONVERSATION_OWNERS_TABLE} (agent_id, owner, held)
      select agent_id, owner, count(*) from ${CONVERSATIONS_TABLE} where owner is not null and state is not null
      group by agent_id, owner`,
    // The body indented as 0007 first wrote it: the server keeps a function's text as given.
    `create function ${CONVERSATION_OWNERS_TABLE}_count () returns trigger language plpgsql as $$
        declare
          was boolean := tg_op <> 'INSERT' and old.owner is not null and old.state is not null;
          is_now boolean := tg_op <> 'DELETE' and new.owner is not null and new.state is not null;
          moved boolean := was and is_now and (old.agent_id, old.owner) is distinct from (new.agent_id, new.owner);
        begin
          if was and (moved or not is_now) then
            update ${CONVERSATION_OWNERS_TABLE} set held = held - 1 where agent_id = old.agent_id and owner = old.owner;
          end if;
          if is_now and (moved or not was) then
            insert into ${CONVERSATION_OWNERS_TABLE} as counted (agent_id, owner, held) values (new.agent_id, new.owner, 1)
              on conflict (agent_id, owner) do update set held = counted.held + 1;
          end if;
          return null;
        end $$`,
    `create trigger ${CONVERSATION_OWNERS_TABLE}_count after insert or delete or update of owner, state, agent_id
      on ${CONVERSATIONS_TABLE} for each row execute function ${CONVERSATION_OWNERS_TABLE}_count()`
  ])
}

/** The setting a statement creating a conversation sets (transaction-local) to have the count refuse past it. */
export const CONVERSATION_CAP_SETTING = 'converse.conversation_cap'
/** The SQLSTATE the count raises with when an owner would hold more than that cap (nothing of the statement stays). */
export const CONVERSATION_CAP_REACHED = 'CV002'

/**
 * The count refuses past the cap when the statement asked for it (issue 43: per-caller caps race-free). The new
 * conversation's insert sets CONVERSATION_CAP_SETTING for its own transaction; its snapshot may miss a conversation
 * of the same owner another transaction is creating, but the counter row's upsert waits for that transaction's lock
 * and then counts on its committed row: past the cap, it raises CONVERSATION_CAP_REACHED and the statement is undone.
 * Without the setting (the locked path, moves, deletes, a session that set it in an earlier transaction: '') the
 * count is 0007's.
 */
export function refuseOwnedPastCap (schema: string): Migration {
  return sqlMigration(schema, [
    `create or replace function ${CONVERSATION_OWNERS_TABLE}_count () returns trigger language plpgsql as $$
        declare
          was boolean := tg_op <> 'INSERT' and old.owner is not null and old.state is not null;
          is_now boolean := tg_op <> 'DELETE' and new.owner is not null and new.state is not null;
          moved boolean := was and is_now and (old.agent_id, old.owner) is distinct from (new.agent_id, new.owner);
          held_now integer;
          cap integer;
        begin
          if was and (moved or not is_now) then
            update ${CONVERSATION_OWNERS_TABLE} set held = held - 1 where agent_id = old.agent_id and owner = old.owner;
          end if;
          if is_now and (moved or not was) then
            insert into ${CONVERSATION_OWNERS_TABLE} as counted (agent_id, owner, held) values (new.agent_id, new.owner, 1)
              on conflict (agent_id, owner) do update set held = counted.held + 1
              returning counted.held into held_now;
            cap := nullif(current_setting('${CONVERSATION_CAP_SETTING}', true), '')::integer;
            if held_now > cap then
              raise exception 'owner % of agent % holds its cap of % conversations', new.owner, new.agent_id, cap
                using errcode = '${CONVERSATION_CAP_REACHED}';
            end if;
          end if;
          return null;
        end $$`
  ])
}
