--- Several sessions side by side: switch, open in a split / tab, rename, delete, and the
--- statusline component that shows what runs in the background.
local client = require('acp_lsp.client')
local sessions = require('acp_lsp.sessions')
local protocol = require('acp_lsp.protocol')

local req = protocol.requests
local notify, fail = require('acp_lsp.log').notify, client.fail

local M = {}

local BUSY = { running = true, awaiting_permission = true, cancelling = true }

--- Open sessions, most recently used first (the current one first).
---@return acp_lsp.Session[]
function M.list()
  local out = vim.tbl_values(sessions.by_id)
  table.sort(out, function(a, b)
    if a.id == sessions.current_id or b.id == sessions.current_id then
      return a.id == sessions.current_id
    end
    return (a.used or 0) > (b.used or 0)
  end)
  return out
end

---@param s acp_lsp.Session
---@return string
function M.label(s)
  local n = vim.tbl_count(s.permissions)
  local perm = n > 0 and (' ⚠ ' .. n) or ''
  return ('%s · %s · %s%s'):format(s.title or s.id:sub(1, 8), s.agent or '?', s.status or '?', perm)
end

--- Pick one of the open sessions; cb(session).
---@param prompt string
---@param cb fun(session: acp_lsp.Session)
function M.pick(prompt, cb)
  local list = M.list()
  if #list == 0 then
    return notify('no open session: :Acp new')
  end
  vim.ui.select(list, { prompt = prompt, kind = 'acp_open_session', format_item = M.label }, function(s)
    if s then
      cb(s)
    end
  end)
end

--- Show a session in the chat windows of this tab (or, with `how`, beside them).
---@param session acp_lsp.Session
---@param how? 'split'|'tab'
function M.show(session, how)
  session.used = vim.uv.now()
  local chat = require('acp_lsp.chat')
  if how == 'tab' then
    vim.cmd('tabnew')
    local scratch = vim.api.nvim_get_current_buf()
    chat.open(session, { focus = true })
    vim.api.nvim_set_current_win(vim.fn.win_findbuf(chat.view(session).buf)[1])
    if #vim.api.nvim_tabpage_list_wins(0) > 2 then
      pcall(vim.api.nvim_buf_delete, scratch, {})
    end
  elseif how == 'split' then
    local view = chat.view(session)
    local tab = vim.api.nvim_get_current_tabpage()
    local other
    for _, v in pairs(chat.views) do
      for _, w in ipairs(vim.fn.win_findbuf(v.buf)) do
        if vim.api.nvim_win_get_tabpage(w) == tab then
          other = w
        end
      end
    end
    if not other then
      return chat.open(session, { focus = true })
    end
    local win = vim.api.nvim_open_win(view.buf, true, { split = 'right', win = other })
    local height = require('acp_lsp.config').options.chat.prompt_height
    vim.api.nvim_open_win(view.input, false, { split = 'below', win = win, height = height })
    sessions.current_id = session.id
  else
    chat.open(session, { focus = true })
  end
end

--- :Acp switch [split|tab]
---@param how? string
function M.switch(how)
  M.pick('Switch to session', function(s)
    M.show(s, how == 'split' and 'split' or how == 'tab' and 'tab' or nil)
  end)
end

--- :Acp rename [title]: the session's title, kept by the server (acp/renameSession).
---@param title string?
function M.rename(title)
  local session = sessions.current()
  if not session then
    return notify('no session', vim.log.levels.WARN)
  end
  local function apply(t)
    if not t or vim.trim(t) == '' then
      return
    end
    t = vim.trim(t)
    if not req.rename_session then
      return notify('this acp-lsp has no acp/renameSession', vim.log.levels.WARN)
    end
    client.request(req.rename_session, { sessionId = session.id, title = t }, function(err)
      if err then
        return fail('rename')(err)
      end
      session.title = t
      sessions.emit(session, { type = 'header' })
    end)
  end
  if title and title ~= '' then
    return apply(title)
  end
  vim.ui.input({ prompt = 'Session title: ', default = session.title or '' }, apply)
end

--- Forget a session's chat buffers and state in this editor.
---@param session acp_lsp.Session
function M.forget(session)
  local chat = require('acp_lsp.chat')
  local view = chat.views[session.id]
  chat.views[session.id] = nil
  sessions.by_id[session.id] = nil
  require('acp_lsp.chat.prompt').attachments[session.id] = nil
  if sessions.current_id == session.id then
    sessions.current_id = nil
  end
  if view then
    for _, buf in ipairs({ view.buf, view.input }) do
      if vim.api.nvim_buf_is_valid(buf) then
        -- A window showing the chat keeps its place with an empty buffer when it is the last.
        for _, win in ipairs(vim.fn.win_findbuf(buf)) do
          if #vim.api.nvim_tabpage_list_wins(vim.api.nvim_win_get_tabpage(win)) > 1 then
            vim.api.nvim_win_close(win, true)
          end
        end
        vim.api.nvim_buf_delete(buf, { force = true })
      end
    end
  end
  vim.cmd('redrawstatus!')
end

--- :Acp delete: close the session and delete what the server keeps of it (asks first).
---@param session_id string?
function M.delete(session_id)
  local session = session_id and sessions.by_id[session_id] or sessions.current()
  if not session then
    return notify('no session', vim.log.levels.WARN)
  end
  vim.ui.select(
    { 'Delete', 'Keep' },
    { prompt = 'Delete session "' .. M.label(session) .. '"?' },
    function(choice)
      if choice ~= 'Delete' then
        return
      end
      client.request(req.delete_session, { sessionId = session.id }, function(err)
        if err and err.code == protocol.errors.not_supported then
          -- The agent keeps its sessions itself: at least the editor-side session goes.
          return client.request(req.close_session, { sessionId = session.id }, function(e)
            if e then
              return fail('close')(e)
            end
            M.forget(session)
            notify(('session closed; %s cannot delete its stored copy'):format(session.agent or 'the agent'))
          end)
        end
        if err then
          return fail('delete')(err)
        end
        M.forget(session)
        notify('session deleted')
      end)
    end
  )
end

--- Statusline component: sessions that work in the background and open permission prompts,
--- e.g. "ACP ● 2 running ⚠ 1". Empty when nothing is open.
---@return string
function M.statusline()
  local running, waiting, total = 0, 0, 0
  for _, s in pairs(sessions.by_id) do
    if s.status ~= 'closed' then
      total = total + 1
    end
    if BUSY[s.status] then
      running = running + 1
    end
    waiting = waiting + vim.tbl_count(s.permissions)
  end
  if total == 0 then
    return ''
  end
  local parts = { 'ACP' }
  if running > 0 then
    table.insert(parts, ('● %d running'):format(running))
  else
    table.insert(parts, ('%d idle'):format(total))
  end
  if waiting > 0 then
    table.insert(parts, ('⚠ %d'):format(waiting))
  end
  return table.concat(parts, ' ')
end

M.DEFAULT_STATUSLINE = "%<%f %h%m%r%=%{v:lua.require'acp_lsp'.statusline()}  %-14.(%l,%c%V%) %P"

return M
