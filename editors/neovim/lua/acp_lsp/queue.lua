--- Prompts sent while a turn runs (acp/prompt {queue = true}): they wait on the server and run
--- when the turns before them end; the chat shows each one when it starts. Until then they are
--- listed above the prompt input ("⏳ 1. …"); `gq` in the chat or the input, or `:Acp queue`,
--- picks one to send now (the running turn is cancelled, which withdraws every queued prompt
--- on the server: the others are queued again behind it), edit (back into the input) or remove
--- ($/cancelRequest: it never reaches the agent).
local client = require('acp_lsp.client')
local protocol = require('acp_lsp.protocol')

local req = protocol.requests
local M = {}

---@class acp_lsp.QueuedPrompt
---@field text string what the user typed
---@field prompt table[] its ContentBlocks
---@field client vim.lsp.Client? the client it was sent through
---@field request_id integer? its acp/prompt request (cancelled to withdraw it)
---@field started boolean? its turn began (it shows in the chat)
---@field withdrawn boolean? removed by the user

---@type table<string, acp_lsp.QueuedPrompt[]>
M.items = {}

local ns = vim.api.nvim_create_namespace('acp_lsp.queue')

--- The prompts of a session still waiting, oldest first.
---@param session_id string
function M.waiting(session_id)
  return vim.tbl_filter(function(entry)
    return not entry.started
  end, M.items[session_id] or {})
end

--- Show the waiting prompts above the session's prompt input.
---@param session_id string
function M.show(session_id)
  local view = require('acp_lsp.chat').views[session_id]
  if not view or not vim.api.nvim_buf_is_valid(view.input) then
    return
  end
  vim.api.nvim_buf_clear_namespace(view.input, ns, 0, -1)
  local lines = {}
  for i, entry in ipairs(M.waiting(session_id)) do
    local first = entry.text:gsub('\n.*', ' …')
    table.insert(lines, { { ('⏳ %d. %s'):format(i, first), 'Comment' } })
  end
  if #lines > 0 then
    table.insert(lines, { { '   (gq: send now, edit or remove)', 'NonText' } })
    vim.api.nvim_buf_set_extmark(view.input, ns, 0, 0, { virt_lines = lines, virt_lines_above = true })
  end
end

local function drop(session_id, entry)
  local list = M.items[session_id] or {}
  for i, other in ipairs(list) do
    if other == entry then
      table.remove(list, i)
      break
    end
  end
  M.show(session_id)
end

--- Queue a prompt behind the running turn.
---@param session acp_lsp.Session
---@param text string what the user typed
---@param prompt table[] its ContentBlocks
function M.add(session, text, prompt)
  local entry = { text = text, prompt = prompt }
  M.items[session.id] = M.items[session.id] or {}
  table.insert(M.items[session.id], entry)
  M.show(session.id)
  client.with_client(function(c, err)
    if not c then
      drop(session.id, entry)
      return require('acp_lsp.log').notify('acp-lsp: ' .. tostring(err), vim.log.levels.ERROR)
    end
    local params = { sessionId = session.id, prompt = prompt, queue = true }
    local _, id = c:request(req.prompt, params, function(e)
      vim.schedule(function()
        drop(session.id, entry)
        if e and not entry.withdrawn and e.code ~= protocol.errors.request_cancelled then
          require('acp_lsp.sessions').add_notice(session, 'error: ' .. client.format_error(e))
        end
      end)
    end, 0)
    entry.client, entry.request_id = c, id
  end)
end

local BUSY = { running = true, awaiting_permission = true, cancelling = true }
local statuses = {} -- session id -> its last status
local waiters = {} -- session id -> {test, run}[]: what runs when the session's status passes

--- acp/sessionStatus: a turn that starts while prompts wait is the oldest one's (the server
--- starts the first of its line when a turn ends; send now queues the others only once the
--- prompt it sends directly runs).
---@param params table
function M.on_status(params)
  local before = statuses[params.sessionId]
  statuses[params.sessionId] = params.status
  local list = waiters[params.sessionId] or {}
  for i = #list, 1, -1 do
    if list[i].test(params.status) then
      vim.schedule(table.remove(list, i).run)
    end
  end
  if params.status ~= 'running' or (before and BUSY[before]) then
    return
  end
  local oldest = M.waiting(params.sessionId)[1]
  if oldest then
    oldest.started = true
    M.show(params.sessionId)
  end
end

local function withdraw(session_id, entry)
  entry.withdrawn = true
  if entry.client and entry.request_id then
    entry.client:cancel_request(entry.request_id)
  end
  drop(session_id, entry)
end

--- Run `run` once the session's status passes `test` (at once if it does now).
local function when(session, test, run)
  if test(session.status) then
    return run()
  end
  waiters[session.id] = waiters[session.id] or {}
  table.insert(waiters[session.id], { test = test, run = run })
end

--- Cancel the running turn and send `entry` first, the other waiting prompts behind it. Event
--- driven (no vim.wait): a callback that waited inside another wait would hold up the very
--- status updates it waits for.
local function send_now(session, entry)
  local waiting = M.waiting(session.id)
  for _, other in ipairs(waiting) do
    withdraw(session.id, other)
  end
  local requeued = false
  local function requeue() -- once its turn runs (or is over): queued sooner, they could go first
    if requeued then
      return
    end
    requeued = true
    for _, other in ipairs(waiting) do
      if other ~= entry then
        M.add(session, other.text, other.prompt)
      end
    end
  end
  client.request(req.cancel, { sessionId = session.id }, function()
    when(session, function(status)
      return not BUSY[status]
    end, function()
      -- sent directly, shown at once as any prompt sent
      require('acp_lsp.sessions').add_user_prompt(session, entry.text)
      client.request(req.prompt, { sessionId = session.id, prompt = entry.prompt }, function(e)
        requeue()
        if e and e.code ~= protocol.errors.request_cancelled then
          require('acp_lsp.sessions').add_notice(session, 'error: ' .. client.format_error(e))
        end
      end)
      when(session, function(status)
        return BUSY[status] ~= nil
      end, requeue)
    end)
  end)
end

--- gq / :Acp queue: pick a waiting prompt of the current session, then what to do with it.
function M.pick()
  local session = require('acp_lsp.sessions').current()
  local waiting = session and M.waiting(session.id) or {}
  if #waiting == 0 then
    return require('acp_lsp.log').notify('acp-lsp: no prompt is waiting its turn')
  end
  vim.ui.select(waiting, {
    prompt = 'Queued prompt',
    format_item = function(entry)
      return (entry.text:gsub('\n.*', ' …'))
    end,
  }, function(entry)
    if not entry then
      return
    end
    vim.ui.select({ 'Send now', 'Edit', 'Remove' }, { prompt = entry.text }, function(action)
      if action == 'Send now' then
        send_now(session, entry)
      elseif action == 'Edit' then
        withdraw(session.id, entry)
        local chat = require('acp_lsp.chat')
        local view = chat.view(session)
        vim.api.nvim_buf_set_lines(view.input, 0, -1, false, vim.split(entry.text, '\n', { plain = true }))
        chat.focus_input(session.id)
      elseif action == 'Remove' then
        withdraw(session.id, entry)
      end
    end)
  end)
end

return M
