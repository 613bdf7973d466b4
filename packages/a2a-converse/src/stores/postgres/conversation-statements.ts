/**
 * The SQL text of the PostgreSQL conversation store (postgres-conversation-store.ts): its reads, its writes (the new
 * conversation's insert, the locked write, the conditional write) and the row lock's statements. Tables: see
 * migrations.ts and docs/postgres.md.
 */
import type pg from 'pg'
import { SUMMARY_TEXT_LENGTH, type ConversationState, type ConversationSummary, type ConversationTurn } from '../conversation-store.js'
import { CONVERSATION_OWNERS_TABLE, CONVERSATIONS_TABLE, CONVERSATION_TASKS_TABLE } from './migrations.js'
import { CONVERSATION_CAP_SETTING } from './conversation-migrations.js'
import { insertAnswers, pruneAnswers } from './postgres-answer-log.js'

export interface LockedRow {
  state: ConversationState | null
  version: number
}

export const SELECT_STATE = `select state from ${CONVERSATIONS_TABLE} where agent_id = $1 and context_id = $2 and state is not null`
export const SELECT_EXISTS = `select 1 from ${CONVERSATIONS_TABLE} where agent_id = $1 and context_id = $2 and state is not null`
/**
 * A page of an agent's conversations, newest write first, with the listing's filters (a NULL parameter: no filter);
 * only the summary's members leave the database. The filters read the stored state (`needsPerson` is written with
 * it), so both stores filter on the same data.
 */
export const SELECT_LIST = `select context_id, state->>'ownership' as ownership, version, state->>'updatedAt' as updated_at,
    write_seq, coalesce(state->'needsPerson', '[]'::jsonb) as needs_person, state->'caller' as caller,
    (state->'turns'->-1) - 'text' - 'envelope' as last_turn, left(state->'turns'->-1->>'text', ${SUMMARY_TEXT_LENGTH}) as last_text
  from ${CONVERSATIONS_TABLE}
  where agent_id = $1 and state is not null
    and ($3::bigint is null or write_seq < $3)
    and ($4::text is null or state->>'ownership' = $4)
    and ($5::boolean is null or (jsonb_array_length(coalesce(state->'needsPerson', '[]'::jsonb)) > 0) = $5)
  order by write_seq desc limit $2`

export interface ListRow {
  context_id: string
  ownership: ConversationSummary['ownership']
  version: number
  updated_at: string
  write_seq: string
  needs_person: ConversationSummary['needsPerson']
  last_turn: ConversationTurn | null
  caller: ConversationSummary['caller'] | null
  last_text: string | null
}

export const SELECT_TASK = `select context_id from ${CONVERSATION_TASKS_TABLE} where agent_id = $1 and task_id = $2`
export const DELETE = `delete from ${CONVERSATIONS_TABLE} where agent_id = $1 and context_id = $2 returning 1`
export const LOCK = `select state, version from ${CONVERSATIONS_TABLE} where agent_id = $1 and context_id = $2 for update`
/** A row to lock for a new conversation; returns nothing when another transaction created it first. */
export const INSERT_PLACEHOLDER = `insert into ${CONVERSATIONS_TABLE} (agent_id, context_id) values ($1, $2)
  on conflict do nothing returning state, version`
/** How many conversations the owner ($2) holds of the agent ($1): its counter row (migration 0007). */
export const HELD = `select coalesce((select held from ${CONVERSATION_OWNERS_TABLE} where agent_id = $1 and owner = $2), 0) as held`
/**
 * The owner's ($7) conversations past the cap ($8) when one more ($2) was created: its least recently written ones
 * that no transaction holds (the memory store's "idle"), never the new one and never another owner's. `$held` is
 * what the owner holds besides the new one.
 */
const overflow = (held: string): string => `select agent_id, context_id from ${CONVERSATIONS_TABLE}
  where agent_id = $1 and owner = $7 and context_id <> $2 and state is not null
  order by write_seq
  limit greatest(0, ${held} + 1 - $8::int)
  for update skip locked`
const HELD_BY_OWNER = `coalesce((select held from ${CONVERSATION_OWNERS_TABLE} where agent_id = $1 and owner = $7), 0)`
/**
 * The overflow removed after a new conversation's locked write (its task index follows: cascade). The write's trigger
 * has counted the new one by then.
 */
export const EVICT_OVERFLOW = `delete from ${CONVERSATIONS_TABLE} where (agent_id, context_id) in (
  select agent_id, context_id from (${overflow(`(${HELD_BY_OWNER} - 1)`).replaceAll('$7', '$3').replaceAll('$8', '$4')}) as overflow)
  returning context_id`
/**
 * The conversation's ($1, $2) task index gains, or takes over (the last writer wins), the ids of the text[] parameter
 * `ids`; rows already right are left alone (no new row version). `from`: what the rows depend on (`conversation, `:
 * only when the conversation was written).
 */
const indexTasks = (ids: string, from = ''): string => `insert into ${CONVERSATION_TASKS_TABLE} (agent_id, task_id, context_id)
    select $1, task_id, $2 from ${from}unnest(${ids}::text[]) as task_id
    on conflict (agent_id, task_id) do update set context_id = excluded.context_id
    where ${CONVERSATION_TASKS_TABLE}.context_id <> excluded.context_id`
/**
 * A new conversation in one autocommit statement: the row at version 1, its owner ($7, or NULL) and its task index
 * rows, or nothing at all when the row exists (committed by another transaction; one still in progress is waited
 * for). The cap ($8, MAX_CONVERSATIONS_PER_CALLER) is the owner's count's to enforce (migration 0013): `setting` sets
 * it for this transaction (CONVERSATION_CAP_SETTING; the insert's rows come from `setting`, so it is set first), and
 * the count, which waits for another transaction's lock on the counter row and counts on what it committed, raises
 * CONVERSATION_CAP_REACHED past it: nothing of the statement stays, so a turn reads no count first and two new
 * conversations of one owner at the same instant cannot both pass. A conversation that exists is not inserted, so
 * not counted nor refused. The task index takes over ids as WRITE does. The conversation's answers ($9, a JSON
 * array) are logged with it; INSERT_NEW_PRUNING also prunes the agent's log ($10 cap, $11 oldest) when that is due.
 * One row: the version (NULL: nothing written). `newInsert` is its common table expressions (insertNewWith, joined-statements.ts,
 * ends them otherwise; `reserve`, a new task's reservation — a call answering its outcome — made first, the insert only
 * when it is not refused).
 */
export const newInsert = (pruning: string, reserve = ''): string => `with ${reserve === '' ? '' : `reserved as (select ${reserve} as outcome), `}setting as (
    select set_config('${CONVERSATION_CAP_SETTING}', $8::int::text, true)
  ), conversation as (
    insert into ${CONVERSATIONS_TABLE} (agent_id, context_id, state, version, created_at, updated_at, owner)
    select $1, $2, $3::jsonb, 1, $4, $5, $7 from setting${reserve === '' ? '' : ", reserved where reserved.outcome <> 'capped'"}
    on conflict do nothing
    returning version
  ), indexed as (
    ${indexTasks('$6', 'conversation, ')}
  ), answered as (
    ${insertAnswers('$1', '$2', '$9', 'conversation, ')}
  )${pruning}`
const insertNew = (pruning: string): string => `${newInsert(pruning)}
  select (select version from conversation) as version`
/**
 * New conversations of one agent ($1) and owner ($2) in one autocommit statement (new-conversation-batches.ts): each
 * row as INSERT_NEW inserts it, from arrays of one element per conversation — its context id ($4), state ($5),
 * created and updated times ($6, $7), task ids ($8, each a JSON array) and answers ($9, each a JSON array). The cap
 * ($3) as INSERT_NEW sets it: the owner's count raises CONVERSATION_CAP_REACHED past it, and then none of the rows
 * stays. The task index's ids go in sorted order, as WRITE's do. One row per conversation, in the arrays' order:
 * whether it was inserted (false: the conversation exists).
 */
export const INSERT_NEW_MANY = `with setting as (
    select set_config('${CONVERSATION_CAP_SETTING}', $3::int::text, true)
  ), given as (
    select * from unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[]) with ordinality
      as given (context_id, state, created_at, updated_at, task_ids, answers, ord)
  ), conversation as (
    insert into ${CONVERSATIONS_TABLE} (agent_id, context_id, state, version, created_at, updated_at, owner)
    select $1, given.context_id, given.state::jsonb, 1, given.created_at::timestamptz, given.updated_at::timestamptz, $2
      from setting, given order by given.ord
    on conflict do nothing
    returning context_id
  ), indexed as (
    insert into ${CONVERSATION_TASKS_TABLE} (agent_id, task_id, context_id)
    select $1, task.id, given.context_id
      from conversation join given using (context_id), jsonb_array_elements_text(given.task_ids::jsonb) as task (id)
      order by task.id
    on conflict (agent_id, task_id) do update set context_id = excluded.context_id
    where ${CONVERSATION_TASKS_TABLE}.context_id <> excluded.context_id
  ), answered as (
    ${insertAnswers('$1', 'given.context_id', 'given.answers', 'conversation join given using (context_id), ', 'given.ord, ')}
  )
  select given.context_id, conversation.context_id is not null as inserted
    from given left join conversation using (context_id) order by given.ord`
/**
 * The answer log's prune, a statement's last CTE: only in the variants used when it is due (once a minute per agent).
 * Apart so that the other turns' plans need not hold it: with its parameters NULL the planner keeps making a custom
 * plan of the whole statement on every call (the generic one counts the delete's scan of the log), which costs the
 * embedded turn more than the statement's own work once the log holds a few thousand answers.
 */
const pruning = (cap: string, oldest: string): string => `, pruned as (
    ${pruneAnswers('$1', cap, oldest)}
  )`
export const PRUNING_NEW = pruning('$10', '$11')
export const [INSERT_NEW, INSERT_NEW_PRUNING] = ['', PRUNING_NEW].map(insertNew)
/**
 * The write, in one round trip: the state; the task index loses this conversation's ids it no longer names and
 * gains (or takes over: the last writer wins) the ones it names; rows already right are left alone (no new row
 * version per update). Ids are sorted so that two transactions upserting the same ids lock them in the same order.
 * `answers`: more common table expressions (WRITE_ANSWERED).
 */
const write = (answers: string): string => `with conversation as (
    update ${CONVERSATIONS_TABLE}
       set state = $3::jsonb, version = $4, created_at = $5, updated_at = $6, owner = coalesce($8::text, owner),
           write_seq = nextval('${CONVERSATIONS_TABLE}_write_seq')
     where agent_id = $1 and context_id = $2
  ), forgotten as (
    delete from ${CONVERSATION_TASKS_TABLE}
     where agent_id = $1 and context_id = $2 and not (task_id = any ($7::text[]))
  )${answers}
  ${indexTasks('$7')}`
export const WRITE = write('')
/**
 * The write without a lock (ConversationUpdateOptions.read), in one autocommit statement: the state only when the row
 * is still at the version the caller read ($4 - 1) and was created when it was ($5: not deleted and made again since,
 * which restarts its versions); every other change only when that one was made. Returns a row
 * when it wrote. Answers ($8 or NULL) go with it; WRITE_IF_UNCHANGED_PRUNING also prunes ($9 cap, $10 oldest).
 * `unchangedWrite` is its common table expressions, which writeIfUnchangedWith (joined-statements.ts) ends otherwise.
 */
export const unchangedWrite = (pruning: string): string => `with conversation as (
    update ${CONVERSATIONS_TABLE}
       set state = $3::jsonb, version = $4, created_at = $5, updated_at = $6,
           write_seq = nextval('${CONVERSATIONS_TABLE}_write_seq')
     where agent_id = $1 and context_id = $2 and version = $4 - 1 and created_at = $5
     returning version
  ), forgotten as (
    delete from ${CONVERSATION_TASKS_TABLE}
     where exists (select 1 from conversation) and agent_id = $1 and context_id = $2 and not (task_id = any ($7::text[]))
  ), indexed as (
    ${indexTasks('$7', 'conversation, ')}
  ), answered as (
    ${insertAnswers('$1', '$2', "coalesce($8::text, '[]')", 'conversation, ')}
  )${pruning}`
export const PRUNING_UNCHANGED = pruning('$9', '$10')
export const [WRITE_IF_UNCHANGED, WRITE_IF_UNCHANGED_PRUNING] = ['', PRUNING_UNCHANGED].map((prune) => `${unchangedWrite(prune)}
  select version from conversation`)

/**
 * A write that adds answers: the same statement, which also logs them ($9); WRITE_ANSWERED_PRUNING also prunes the
 * agent's log ($10 cap, $11 oldest). One statement, so a locked write stays two queries (itself and COMMIT) in flight.
 */
const ANSWERED = `, answered as (
    ${insertAnswers('$1', '$2', '$9')}
  )`
export const WRITE_ANSWERED = write(ANSWERED)
export const WRITE_ANSWERED_PRUNING = write(ANSWERED + pruning('$10', '$11'))

/**
 * A turn's statements, prepared once per connection (`pg` sends the text only the first time on each) and from then
 * on only bound and executed: no parse and plan per call. On the embedded database, one session, that is about a
 * third of each statement's cost (docs/state.md, "Speed").
 */
export function prepared (name: string, text: string): pg.QueryConfig {
  return { name, text }
}

/** A listing's row as the summary it is. */
export function listSummary (agentId: string, row: ListRow): ConversationSummary {
  const summary: ConversationSummary = {
    agentId,
    contextId: row.context_id,
    ownership: row.ownership,
    version: row.version,
    updatedAt: row.updated_at,
    position: Number(row.write_seq),
    needsPerson: row.needs_person
  }
  if (row.caller !== null) summary.caller = row.caller
  if (row.last_turn !== null) summary.lastTurn = { role: row.last_turn.role, at: row.last_turn.at, text: row.last_text as string }
  return summary
}
