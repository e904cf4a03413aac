--- The editor's copy of each session: built from a SessionSnapshot, kept current by
--- acp/sessionUpdate, acp/sessionStatus and acp/terminalOutput. Knows no buffers: views
--- subscribe with on_change(fn) and receive (session, event) pairs (events: transcript.lua).
local transcript = require('acp_lsp.transcript')

local M = {}

M.content_text = transcript.content_text
M.message_text = transcript.message_text
M.mode_from_options = transcript.mode_from_options

---@type table<string, acp_lsp.Session>
M.by_id = {}
--- Id of the session the last command acted on.
---@type string?
M.current_id = nil

local ENDED = { idle = true, failed = true, closed = true }

local listeners = {} ---@type fun(session: acp_lsp.Session, event: table)[]
--- Notifications for a session this editor has no snapshot of yet, replayed once it does.
local early = {} ---@type table<string, table[]>
local EARLY_LIMIT = 1000

---@param fn fun(session: acp_lsp.Session, event: table)
function M.on_change(fn)
  table.insert(listeners, fn)
end

local function emit(session, event)
  for _, fn in ipairs(listeners) do
    local ok, err = pcall(fn, session, event)
    if not ok then
      require('acp_lsp.log').add('error', 'view failed on ' .. event.type .. ': ' .. tostring(err))
    end
  end
end

---@param snapshot table SessionSnapshot
---@return acp_lsp.Session
local function new_session(snapshot)
  return {
    id = snapshot.sessionId,
    agent = snapshot.agent,
    cwd = snapshot.cwd,
    status = snapshot.status or 'idle',
    seq = snapshot.seq or 0,
    blocks = {},
    tool_calls = {},
    terminals = {},
    permissions = {},
    follow = true,
  }
end

--- Create or replace a session from a SessionSnapshot.
---@param snapshot table
---@return acp_lsp.Session
function M.load_snapshot(snapshot)
  local session = new_session(snapshot)
  local previous = M.by_id[session.id]
  if previous then
    session.follow = previous.follow
  end
  M.by_id[session.id] = session
  session.commands = snapshot.commands
  session.modes = snapshot.modes
  session.config_options = snapshot.configOptions
  session.title = snapshot.title
  session.prompt_capabilities = snapshot.promptCapabilities
  if snapshot.usage then
    session.usage = snapshot.usage
  end
  for id, term in pairs(snapshot.terminals or {}) do
    session.terminals[id] = {
      output = term.output or '',
      truncated = term.truncated,
      exit_status = term.exitStatus,
    }
  end
  local tools = {}
  for _, tc in ipairs(snapshot.toolCalls or {}) do
    tools[tc.toolCallId] = tc
  end
  local messages = snapshot.messages or {}
  local timeline = snapshot.timeline
  if not timeline then
    timeline = {}
    for i = 1, #messages do
      table.insert(timeline, { message = i - 1 })
    end
  end
  for _, entry in ipairs(timeline) do
    if entry.message ~= nil then
      local msg = messages[entry.message + 1]
      if msg then
        local text = {}
        for _, block in ipairs(msg.content or {}) do
          table.insert(text, transcript.content_text(block))
        end
        transcript.add_block(session, {
          type = 'message',
          role = msg.role,
          message_id = msg.messageId,
          text = table.concat(text),
        })
      end
    elseif entry.toolCall ~= nil and tools[entry.toolCall] then
      session.tool_calls[entry.toolCall] = tools[entry.toolCall]
      transcript.add_block(session, { type = 'tool_call', id = entry.toolCall })
    end
  end
  transcript.add_all_changes(session)
  local last = session.blocks[#session.blocks]
  if last and last.type == 'changes' and not ENDED[session.status] and session.status ~= 'stored' then
    -- a turn still running gets its block when it ends
    table.remove(session.blocks)
    for _, id in ipairs(last.tool_call_ids) do
      session.changes_of[id] = nil
    end
  end
  if snapshot.plan then
    session.plan = snapshot.plan.entries or snapshot.plan
    session.plan_block = transcript.add_block(session, { type = 'plan' })
  end
  M.current_id = session.id
  emit(session, { type = 'reset' })
  local queued = early[session.id]
  early[session.id] = nil
  for _, params in ipairs(queued or {}) do
    M.handle_update(params)
  end
  return session
end

--- acp/sessionUpdate: drop what the snapshot already holds (seq), apply the rest in order.
---@param params table {sessionId, seq, updates}
function M.handle_update(params)
  local session = M.by_id[params.sessionId]
  if not session then
    local queue = early[params.sessionId] or {}
    if #queue < EARLY_LIMIT then
      table.insert(queue, params)
    end
    early[params.sessionId] = queue
    return
  end
  if type(params.seq) == 'number' then
    if params.seq <= session.seq then
      return
    end
    session.seq = params.seq
  end
  -- One notification carries many updates (the server batches them): the view gets them as
  -- one `batch` event, so it can coalesce (one buffer change per block, one winbar update).
  local events = {}
  for _, update in ipairs(params.updates or {}) do
    vim.list_extend(events, transcript.apply_update(session, update))
  end
  if #events == 1 then
    emit(session, events[1])
  elseif #events > 1 then
    emit(session, { type = 'batch', events = events })
  end
end

--- acp/sessionStatus
---@param params table {sessionId, status, stopReason?, error?}
function M.handle_status(params)
  local session = M.by_id[params.sessionId]
  if not session then
    return
  end
  local was = session.status
  session.status = params.status
  if ENDED[params.status] and was ~= params.status and was ~= 'idle' then
    local changes = transcript.add_changes(session)
    if changes then
      emit(session, { type = 'new_block', index = changes })
    end
    local note
    if params.error ~= nil and params.error ~= vim.NIL then
      local e = params.error
      note = 'error: ' .. (type(e) == 'table' and (e.message or vim.inspect(e)) or tostring(e))
    elseif params.stopReason and params.stopReason ~= 'end_turn' then
      note = params.stopReason
    elseif params.status ~= 'idle' then
      note = params.status
    end
    if note then
      local index = transcript.add_block(session, { type = 'notice', text = note })
      emit(session, { type = 'new_block', index = index })
    end
  end
  emit(session, { type = 'header' })
end

--- acp/terminalOutput
---@param params table {sessionId, terminalId, data, truncated?, reset?, exitStatus?}
function M.handle_terminal_output(params)
  local session = M.by_id[params.sessionId]
  if not session then
    return
  end
  local term = session.terminals[params.terminalId] or { output = '' }
  session.terminals[params.terminalId] = term
  if params.reset then
    term.output = params.data or ''
  else
    term.output = term.output .. (params.data or '')
  end
  if params.truncated ~= nil then
    term.truncated = params.truncated
  end
  if params.exitStatus ~= nil and params.exitStatus ~= vim.NIL then
    term.exit_status = params.exitStatus
  end
  emit(session, { type = 'terminal', id = params.terminalId })
end

--- Record the prompt the user sent (the server's echo of it is not shown twice).
---@param session acp_lsp.Session
---@param text string
function M.add_user_prompt(session, text)
  session.plan_block = nil
  local block = { type = 'message', role = 'user', text = text }
  session.echo = { block = block }
  local index = transcript.add_block(session, block)
  emit(session, { type = 'new_block', index = index })
end

--- A line of feedback inside the transcript (errors of requests, review results).
---@param session acp_lsp.Session
---@param text string
function M.add_notice(session, text)
  local index = transcript.add_block(session, { type = 'notice', text = text })
  emit(session, { type = 'new_block', index = index })
end

--- Re-render the blocks of a tool call (e.g. its permission prompt opened or closed).
---@param session acp_lsp.Session
---@param tool_call_id string
function M.touch_tool_call(session, tool_call_id)
  for i = #session.blocks, 1, -1 do
    local b = session.blocks[i]
    if b.type == 'tool_call' and b.id == tool_call_id then
      emit(session, { type = 'block', index = i })
      return
    end
  end
end

---@param session acp_lsp.Session
---@param event table
function M.emit(session, event)
  emit(session, event)
end

--- The session a command acts on: the one of the current chat buffer, else the last used.
---@return acp_lsp.Session?
function M.current()
  local id = vim.b.acp_session_id or M.current_id
  return id and M.by_id[id] or nil
end

--- The server exited: every session it served is gone.
---@param code integer
function M.server_exited(code)
  for _, session in pairs(M.by_id) do
    if session.status ~= 'closed' and session.status ~= 'failed' then
      session.status = 'failed'
      M.add_notice(session, ('acp-lsp exited (code %d): :Acp new starts it again'):format(code))
      emit(session, { type = 'header' })
    end
  end
end

--- Forget everything (the server went away, or tests).
function M.reset()
  M.by_id = {}
  M.current_id = nil
  early = {}
end

return M
