--- Permission prompts (acp/requestPermission). Several can be pending at once. With
--- `permission_ui = 'inline'` (default) each is shown in the chat under its tool call with a
--- digit key per option, answered from the chat buffer while the editor stays usable; with
--- 'select' they are asked one after another through vim.ui.select. Each gets exactly one
--- answer, and the ones of a session that is cancelled or ends are answered `cancelled`.
local sessions = require('acp_lsp.sessions')
local config = require('acp_lsp.config')

local M = {}

---@type acp_lsp.PendingPermission[]
local queue = {}
local asking = nil ---@type acp_lsp.PendingPermission?

local CANCELLED = { outcome = { outcome = 'cancelled' } }

local function inline()
  return config.options.permission_ui ~= 'select'
end

local function describe(entry)
  local tc = entry.tool_call or {}
  local what = tc.title or tc.toolCallId or 'tool call'
  local kind = tc.kind and ('[' .. tc.kind .. '] ') or ''
  local where = {}
  for _, loc in ipairs(tc.locations or {}) do
    if loc.path then
      table.insert(where, vim.fn.fnamemodify(loc.path, ':~:.') .. (loc.line and (':' .. loc.line) or ''))
    end
  end
  local suffix = #where > 0 and (' (' .. table.concat(where, ', ') .. ')') or ''
  return ('Agent asks: %s%s%s'):format(kind, what, suffix)
end

local pump

--- Answer a pending request once; later calls are ignored.
---@param entry acp_lsp.PendingPermission
---@param result table
local function answer(entry, result)
  if entry.done then
    return
  end
  entry.done = true
  for i, e in ipairs(queue) do
    if e == entry then
      table.remove(queue, i)
      break
    end
  end
  local session = sessions.by_id[entry.session_id]
  if session then
    session.permissions[entry.tool_call_id or ''] = nil
    if entry.tool_call_id then
      sessions.touch_tool_call(session, entry.tool_call_id)
    end
    sessions.emit(session, { type = 'header' })
  end
  M.sync_keys(entry.session_id)
  -- Resume on the next tick: a synchronous vim.ui.select may answer before we yielded.
  vim.schedule(function()
    coroutine.resume(entry.co, result)
  end)
end

---@param entry acp_lsp.PendingPermission
---@param option_id string?
function M.answer(entry, option_id)
  if option_id then
    answer(entry, { outcome = { outcome = 'selected', optionId = option_id } })
  else
    answer(entry, CANCELLED)
  end
end

pump = function()
  if asking and not asking.done then
    return
  end
  asking = nil
  local entry = vim.iter(queue):find(function(e)
    return e.modal
  end)
  if not entry then
    return
  end
  asking = entry
  vim.cmd('redraw') -- show the tool call's "awaiting permission" before a modal picker
  vim.ui.select(entry.options, {
    prompt = describe(entry),
    kind = 'acp_permission',
    format_item = function(option)
      return option.name or option.optionId
    end,
  }, function(choice)
    M.answer(entry, choice and choice.optionId or nil)
    if asking == entry then
      asking = nil
    end
    vim.schedule(pump)
  end)
end

--- Handler body; must run inside the server-request coroutine.
---@param params table {sessionId, toolCall, options}
---@return table result
function M.request(params)
  local co, is_main = coroutine.running()
  if not co or is_main then
    return CANCELLED
  end
  local tool_call = params.toolCall or {}
  local session = sessions.by_id[params.sessionId]
  ---@type acp_lsp.PendingPermission
  local entry = {
    session_id = params.sessionId,
    tool_call = tool_call,
    tool_call_id = tool_call.toolCallId,
    options = params.options or {},
    co = co,
    done = false,
    -- Nowhere to show it inline (the session is unknown to this editor): ask modally.
    modal = not inline() or session == nil,
  }
  table.insert(queue, entry)
  if session then
    if not entry.modal then
      M.show_inline(session, entry)
    else
      session.permissions[entry.tool_call_id or ''] = entry
    end
    if entry.tool_call_id then
      sessions.touch_tool_call(session, entry.tool_call_id)
    end
    sessions.emit(session, { type = 'header' })
  end
  vim.schedule(pump)
  return coroutine.yield()
end

local inline_ids = 0

--- Inline mode: make sure the request has a tool call block to live in, map the keys and
--- tell the user when the chat of the session is not on screen.
---@param session acp_lsp.Session
---@param entry acp_lsp.PendingPermission
function M.show_inline(session, entry)
  if not entry.tool_call_id then
    inline_ids = inline_ids + 1
    entry.tool_call_id = 'permission-' .. inline_ids
  end
  local id = entry.tool_call_id
  session.permissions[id] = entry
  if not session.tool_calls[id] then
    session.tool_calls[id] = vim.tbl_extend('keep', vim.deepcopy(entry.tool_call), { toolCallId = id })
    local index = require('acp_lsp.transcript').add_block(session, { type = 'tool_call', id = id })
    sessions.emit(session, { type = 'new_block', index = index })
  end
  M.sync_keys(session.id)
  local view = require('acp_lsp.chat').views[session.id]
  if not view or #vim.fn.win_findbuf(view.buf) == 0 then
    require('acp_lsp.log').notify(
      describe(entry) .. ' — answer in the chat (:Acp chat)',
      vim.log.levels.WARN
    )
  end
end

--- Keys of an option: 1..9 in the order the agent sent them.
---@param entry acp_lsp.PendingPermission
---@return string[] labels "[1] Allow"
function M.option_labels(entry)
  local out = {}
  for i, o in ipairs(entry.options) do
    table.insert(out, ('[%s] %s'):format(i <= 9 and tostring(i) or '-', o.name or o.optionId))
  end
  return out
end

--- The pending request a key in a chat buffer answers: the one under the cursor, else the
--- oldest of the buffer's session.
---@param session_id string
---@return acp_lsp.PendingPermission?
function M.target(session_id)
  local item = require('acp_lsp.chat').item_at_cursor()
  local session = sessions.by_id[session_id]
  if item and item.tool_call_id and session and session.permissions[item.tool_call_id] then
    return session.permissions[item.tool_call_id]
  end
  return M.pending(session_id)[1]
end

--- Answer with the option of key `n` (1-based) from a chat buffer.
---@param session_id string
---@param n integer
function M.answer_key(session_id, n)
  local entry = M.target(session_id)
  local option = entry and entry.options[n]
  if entry and option then
    M.answer(entry, option.optionId)
  end
end

--- Move the cursor of the chat window to the next (dir 1) / previous (-1) pending prompt.
---@param session_id string
---@param dir integer
function M.jump(session_id, dir)
  local view = require('acp_lsp.chat').views[session_id]
  local session = sessions.by_id[session_id]
  if not view or not session then
    return
  end
  local rows = {}
  for i, block in ipairs(session.blocks) do
    if
      block.type == 'tool_call'
      and session.permissions[block.id]
      and i >= (view.first or 1)
      and view.starts[i]
    then
      table.insert(rows, view.starts[i] + 1)
    end
  end
  local cur = vim.api.nvim_win_get_cursor(0)[1]
  local pick
  for _, row in ipairs(rows) do
    if (dir > 0 and row > cur and not pick) or (dir < 0 and row < cur) then
      pick = row
    end
  end
  pick = pick or (dir > 0 and rows[1] or rows[#rows])
  if pick then
    vim.api.nvim_win_set_cursor(0, { pick, 0 })
  end
end

local KEYS = { '1', '2', '3', '4', '5', '6', '7', '8', '9' }

--- Digit keys exist in a chat buffer only while it has pending prompts (counts work again
--- once they are answered).
---@param session_id string
function M.sync_keys(session_id)
  local view = require('acp_lsp.chat').views[session_id]
  if not view or not vim.api.nvim_buf_is_valid(view.buf) then
    return
  end
  local buf = view.buf
  local open = #M.pending(session_id) > 0 and inline()
  if open == (vim.b[buf].acp_permission_keys == true) then
    return
  end
  vim.b[buf].acp_permission_keys = open
  for i, key in ipairs(KEYS) do
    if open then
      vim.keymap.set('n', key, function()
        M.answer_key(session_id, i)
      end, { buffer = buf, nowait = true, silent = true, desc = 'Answer the permission prompt' })
    else
      pcall(vim.keymap.del, 'n', key, { buffer = buf })
    end
  end
end

--- Pending requests of a session (or all), oldest first.
---@param session_id string?
---@return acp_lsp.PendingPermission[]
function M.pending(session_id)
  return vim.tbl_filter(function(e)
    return session_id == nil or e.session_id == session_id
  end, queue)
end

--- The server is gone: nobody waits for the answers any more.
function M.drop_all()
  for _, entry in ipairs(queue) do
    entry.done = true
    local session = sessions.by_id[entry.session_id]
    if session then
      session.permissions[entry.tool_call_id or ''] = nil
    end
  end
  queue = {}
  asking = nil
  for id in pairs(sessions.by_id) do
    M.sync_keys(id)
  end
end

--- A session stopped waiting: its open prompts are answered `cancelled`.
---@param params table acp/sessionStatus params
function M.on_status(params)
  if params.status == 'running' or params.status == 'awaiting_permission' then
    return
  end
  for _, entry in ipairs(M.pending(params.sessionId)) do
    answer(entry, CANCELLED)
  end
  if asking and asking.done then
    asking = nil
    vim.schedule(pump)
  end
end

return M
