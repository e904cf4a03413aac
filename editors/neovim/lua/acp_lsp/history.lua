--- :Acp history [search]: the sessions acp-lsp keeps across restarts (acp/listSessions over
--- its store), picked with vim.ui.select (any picker that replaces it: telescope, fzf-lua, snacks),
--- then opened read-only, resumed, renamed, deleted or exported as Markdown.
local client = require('acp_lsp.client')
local sessions = require('acp_lsp.sessions')
local protocol = require('acp_lsp.protocol')

local req = protocol.requests
local notify, fail = require('acp_lsp.log').notify, client.fail
local M = {}

M.page = 200

---@param s table an acp/listSessions entry
---@return string
function M.label(s)
  local parts = { s.title or s.sessionId, s.agent or '?' }
  if s.updatedAt then
    table.insert(parts, (tostring(s.updatedAt):gsub('T', ' '):gsub('%.%d+', ''):gsub('Z$', '')))
  end
  if s.messageCount then
    table.insert(parts, s.messageCount .. ' msgs')
  end
  table.insert(parts, s.live and 'live' or 'stored')
  return table.concat(parts, ' · ')
end

local function show(snapshot)
  local session = sessions.load_snapshot(snapshot)
  if snapshot.status == 'stored' then
    sessions.add_notice(session, 'stored session, read-only: :Acp history → Resume to continue it')
  elseif snapshot.resumedFrom == 'transcript' then
    sessions.add_notice(
      session,
      'resumed from the stored transcript: the agent could not reload this session, '
        .. 'it gets the transcript with your next prompt'
    )
  end
  require('acp_lsp.chat').open(session, { focus = true })
  return session
end

--- Open a stored session read-only (its snapshot at once) or a live one as it is.
function M.open(entry)
  client.request(req.get_session, { sessionId = entry.sessionId }, function(err, snapshot)
    if err then
      return fail('open session')(err)
    end
    show(snapshot)
  end)
end

--- Resume: the agent's own load where it has one, else a new session primed with the transcript.
function M.resume(entry)
  local params = { sessionId = entry.sessionId, agent = entry.agent, cwd = entry.cwd or vim.fn.getcwd() }
  client.request(req.load_session, params, function(err, snapshot)
    if err then
      return fail('resume session')(err)
    end
    show(snapshot)
  end)
end

function M.rename(entry)
  vim.ui.input({ prompt = 'Session title: ', default = entry.title or '' }, function(title)
    if not title or vim.trim(title) == '' then
      return
    end
    title = vim.trim(title)
    client.request(req.rename_session, { sessionId = entry.sessionId, title = title }, function(err)
      if err then
        return fail('rename')(err)
      end
      local known = sessions.by_id[entry.sessionId]
      if known then
        known.title = title
        sessions.emit(known, { type = 'header' })
      end
      notify('renamed to ' .. title)
    end)
  end)
end

function M.delete(entry)
  vim.ui.select(
    { 'Delete', 'Keep' },
    { prompt = 'Delete "' .. (entry.title or entry.sessionId) .. '"?' },
    function(choice)
      if choice ~= 'Delete' then
        return
      end
      client.request(req.delete_session, { sessionId = entry.sessionId, agent = entry.agent }, function(err)
        if err then
          return fail('delete')(err)
        end
        local known = sessions.by_id[entry.sessionId]
        if known then
          require('acp_lsp.manage').forget(known)
        end
        notify('session deleted')
      end)
    end
  )
end

--- Export as Markdown into a new buffer (the user saves it where they like).
function M.export(entry)
  client.request(
    req.export_session,
    { sessionId = entry.sessionId, format = 'markdown' },
    function(err, result)
      if err then
        return fail('export')(err)
      end
      vim.cmd('tabnew')
      local buf = vim.api.nvim_get_current_buf()
      vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(result.text or '', '\n', { plain = true }))
      vim.bo[buf].filetype = 'markdown'
      vim.bo[buf].modified = false
      pcall(vim.api.nvim_buf_set_name, buf, 'acp-session-' .. entry.sessionId:gsub('[^%w._-]', '_') .. '.md')
    end
  )
end

M.actions = {
  { 'Open (read-only)', M.open },
  { 'Resume', M.resume },
  { 'Rename…', M.rename },
  { 'Export as Markdown', M.export },
  { 'Delete…', M.delete },
}

--- What to do with one picked session.
function M.act(entry)
  vim.ui.select(M.actions, {
    prompt = M.label(entry),
    kind = 'acp_history_action',
    format_item = function(a)
      return a[1]
    end,
  }, function(choice)
    if choice then
      choice[2](entry)
    end
  end)
end

--- :Acp fork: a copy of the current session the conversation can branch off in.
function M.fork()
  local session = sessions.current()
  if not session then
    return notify('no session', vim.log.levels.WARN)
  end
  client.request(req.fork_session, { sessionId = session.id }, function(err, snapshot)
    if err then
      return fail('fork')(err)
    end
    local forked = sessions.load_snapshot(snapshot)
    sessions.add_notice(forked, 'forked from ' .. (session.title or session.id))
    require('acp_lsp.chat').open(forked, { focus = true })
  end)
end

--- :Acp logout [agent]
---@param agent string?
function M.logout(agent)
  local session = sessions.current()
  agent = agent and agent ~= '' and agent or (session and session.agent)
  if not agent then
    return notify('which agent? :Acp logout <agent>', vim.log.levels.WARN)
  end
  client.request(req.logout, { agent = agent }, function(err)
    if err then
      return fail('logout')(err)
    end
    notify('logged out of ' .. agent)
  end)
end

--- :Acp history [search]
---@param query string?
---@param opts? {agent?: string, cwd?: string}
function M.pick(query, opts)
  opts = opts or {}
  local params = { limit = M.page, agent = opts.agent, cwd = opts.cwd }
  if query and vim.trim(query) ~= '' then
    params.query = vim.trim(query)
  end
  client.request(req.list_sessions, params, function(err, result)
    if err then
      return fail('history')(err)
    end
    local items = result and result.sessions or {}
    if #items == 0 then
      return notify(params.query and ('no session matches "' .. params.query .. '"') or 'no sessions yet')
    end
    local prompt = params.query and ('Sessions matching "' .. params.query .. '"') or 'Session history'
    if result.nextCursor then
      prompt = prompt .. (' (newest %d; search to narrow)'):format(#items)
    end
    vim.ui.select(items, { prompt = prompt, kind = 'acp_history', format_item = M.label }, function(entry)
      if entry then
        M.act(entry)
      end
    end)
  end)
end

return M
