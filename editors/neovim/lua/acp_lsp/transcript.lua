--- The transcript of a session as data: messages, tool calls, plan; how each SessionUpdate
--- changes it. Pure (no buffers, no LSP): it returns the view events a change causes.
---
--- Events: {type='reset'} | {type='new_block', index} | {type='append', index, text}
---   | {type='block', index} | {type='header'} | {type='terminal', id}
local M = {}

--- Text of one ContentBlock as shown in the chat (non-text blocks get a short stand-in).
---@param block table
---@return string
function M.content_text(block)
  if type(block) ~= 'table' then
    return ''
  end
  local t = block.type
  if t == 'text' then
    return block.text or ''
  elseif t == 'resource_link' then
    return ('[@%s](%s)'):format(block.name or block.uri or '?', block.uri or '')
  elseif t == 'resource' then
    local res = block.resource or {}
    return ('[📎 %s]'):format(res.uri or '?')
  elseif t == 'image' then
    return '[image]'
  elseif t == 'audio' then
    return '[audio]'
  end
  return ('[%s]'):format(tostring(t))
end

local ROLE_OF = {
  user_message_chunk = 'user',
  agent_message_chunk = 'agent',
  agent_thought_chunk = 'thought',
}

function M.add_block(session, block)
  table.insert(session.blocks, block)
  return #session.blocks
end

--- The whole text of a message block. Streamed chunks wait in `block.rest` and are joined
--- here, when the whole text is asked for (a re-render, `gy`): joining at every chunk would
--- copy the whole message each time (2 MB for the last notification of a 1 MiB answer).
---@param block table
---@return string
function M.message_text(block)
  local rest = block.rest
  if rest then
    table.insert(rest, 1, block.text)
    block.text, block.rest = table.concat(rest), nil
  end
  return block.text
end

--- Append message text; a chunk continues the last block when role and message id agree.
local function add_chunk(session, role, content, message_id)
  local text = M.content_text(content)
  local last = session.blocks[#session.blocks]
  if
    last
    and last.type == 'message'
    and last.role == role
    and (message_id == nil or last.message_id == nil or last.message_id == message_id)
  then
    last.message_id = last.message_id or message_id
    last.rest = last.rest or {}
    table.insert(last.rest, text)
    return { type = 'append', index = #session.blocks, text = text }
  end
  local index = M.add_block(session, { type = 'message', role = role, message_id = message_id, text = text })
  return { type = 'new_block', index = index }
end

--- Store a tool call (full state, or state + contentAppend) and return its block index.
local function upsert_tool_call(session, state, content_append)
  local id = state.toolCallId
  local old = session.tool_calls[id]
  local merged
  if old and content_append then
    merged = vim.tbl_extend('force', old, state)
    merged.content = vim.list_extend(vim.deepcopy(old.content or {}), content_append)
  elseif content_append then
    merged = vim.deepcopy(state)
    merged.content = vim.deepcopy(content_append)
  else
    merged = state
    if merged.content == nil and old then
      merged.content = old.content
    end
  end
  session.tool_calls[id] = merged
  if old then
    for i = #session.blocks, 1, -1 do
      local b = session.blocks[i]
      if b.type == 'tool_call' and b.id == id then
        return i, false
      end
    end
  end
  return M.add_block(session, { type = 'tool_call', id = id }), true
end

--- v1 patch semantics for agents' raw tool_call_update (the server normally sends full state).
local function patch_tool_call(session, update)
  local old = session.tool_calls[update.toolCallId] or {}
  local merged = vim.deepcopy(old)
  for k, v in pairs(update) do
    if k ~= 'sessionUpdate' then
      merged[k] = v
    end
  end
  return merged
end

--- Whether a user_message_chunk is the server's echo of a prompt already shown locally:
--- the chunks that follow the local prompt directly, or share the message id of those.
local function is_echo(session, message_id)
  local echo = session.echo
  if not echo then
    return false
  end
  if echo.id == nil and session.blocks[#session.blocks] == echo.block then
    echo.id = message_id or false
    return true
  end
  return echo.id ~= nil and echo.id == (message_id or false)
end

--- Apply one SessionUpdate; returns the view events it causes.
---@param session acp_lsp.Session
---@param update table
---@return table[] events
function M.apply_update(session, update)
  local kind = update.sessionUpdate
  local role = ROLE_OF[kind]
  if role then
    if role == 'user' and is_echo(session, update.messageId) then
      return {}
    end
    return { add_chunk(session, role, update.content, update.messageId) }
  end
  if kind == 'tool_call' or kind == 'tool_call_update' then
    local state = update.toolCall
    if type(state) ~= 'table' then
      -- Raw ACP shape: fields at top level; an update is a patch over the stored call.
      state = patch_tool_call(session, update)
    end
    if type(state.toolCallId) ~= 'string' then
      return {}
    end
    local index, created = upsert_tool_call(session, state, update.contentAppend)
    local events = { { type = created and 'new_block' or 'block', index = index } }
    local changes = session.changes_of and session.changes_of[state.toolCallId]
    if changes then -- its review shows in a "files changed" block too
      table.insert(events, { type = 'block', index = changes })
    end
    return events
  elseif kind == 'plan' then
    session.plan = update.entries or {}
    local index = session.plan_block
    if index and session.blocks[index] then
      return { { type = 'block', index = index } }
    end
    session.plan_block = M.add_block(session, { type = 'plan' })
    return { { type = 'new_block', index = session.plan_block } }
  elseif kind == 'available_commands_update' then
    session.commands = update.availableCommands or {}
  elseif kind == 'current_mode_update' then
    session.modes = session.modes or { availableModes = {} }
    session.modes.currentModeId = update.currentModeId or update.modeId
  elseif kind == 'config_option_update' then
    session.config_options = update.configOptions
    local mode = session.modes and M.mode_from_options(session.config_options)
    if mode then
      session.modes.currentModeId = mode
    end
  elseif kind == 'session_info_update' then
    if update.title ~= nil then
      session.title = update.title ~= vim.NIL and update.title or nil
    end
  elseif kind == 'usage_update' then
    session.usage = { used = update.used, size = update.size, cost = update.cost }
  else
    return {} -- unknown variants are passed through by the server and ignored here
  end
  return { { type = 'header' } }
end

--- Files in the review of a tool call: {path, status, change?, message?}[].
---@param tc table?
---@return table[]
function M.review_files(tc)
  local review = type(tc) == 'table' and tc.review
  local out = {}
  if type(review) == 'table' and type(review.files) == 'table' then
    for _, f in ipairs(review.files) do
      if type(f) == 'table' and type(f.path) == 'string' then
        table.insert(out, f)
      end
    end
  end
  return out
end

--- Tool calls with reviewed files among blocks[first..last].
local function changed_calls(session, first, last)
  local ids = {}
  for i = first, last do
    local b = session.blocks[i]
    if b.type == 'tool_call' and #M.review_files(session.tool_calls[b.id]) > 0 then
      table.insert(ids, b.id)
    end
  end
  return ids
end

--- A session built from a snapshot: every turn that changed files gets its "files changed"
--- block back, at its end (before the next prompt).
---@param session acp_lsp.Session
function M.add_all_changes(session)
  local blocks = session.blocks
  session.blocks, session.changes_of = {}, {}
  local first = 1
  local function close_turn(last)
    local ids = changed_calls({ blocks = blocks, tool_calls = session.tool_calls }, first, last)
    if #ids > 0 then
      local index = M.add_block(session, { type = 'changes', tool_call_ids = ids })
      for _, id in ipairs(ids) do
        session.changes_of[id] = index
      end
    end
  end
  for i, b in ipairs(blocks) do
    if b.type == 'message' and b.role == 'user' and i > 1 then
      close_turn(i - 1)
      first = i
    end
    M.add_block(session, b)
  end
  close_turn(#blocks)
end

--- Close the turn that just ended with a "files changed" block when its tool calls changed
--- files (their review lists them). Returns the block's index, or nil.
---@param session acp_lsp.Session
---@return integer?
function M.add_changes(session)
  local first = 1
  for i = #session.blocks, 1, -1 do
    local b = session.blocks[i]
    if b.type == 'changes' then
      return nil -- this turn has its block already
    elseif b.type == 'message' and b.role == 'user' then
      first = i
      break
    end
  end
  local ids = changed_calls(session, first, #session.blocks)
  if #ids == 0 then
    return nil
  end
  local index = M.add_block(session, { type = 'changes', tool_call_ids = ids })
  session.changes_of = session.changes_of or {}
  for _, id in ipairs(ids) do
    session.changes_of[id] = index
  end
  return index
end

--- The current value of a config option of category `mode` (agents moving to ACP v2 report
--- modes there).
---@param options table[]?
---@return string?
function M.mode_from_options(options)
  for _, o in ipairs(options or {}) do
    if o.category == 'mode' and type(o.currentValue) == 'string' then
      return o.currentValue
    end
  end
end

return M
