-- Test helpers loaded into the embedded Neovim: global T, used from pytest via exec_lua.
local T = {}
_G.T = T

T.selects = {} -- every vim.ui.select call: {prompt, items = {names}}
T.answer = nil -- option name (or index) to pick; nil = dismiss; 'manual' = keep pending in T.pending
T.pending = nil -- {items, on_choice} of an unanswered select in manual mode
T.notifications = {}

vim.ui.select = function(items, opts, on_choice)
  local names = {}
  for _, item in ipairs(items) do
    table.insert(names, opts.format_item and opts.format_item(item) or tostring(item))
  end
  table.insert(T.selects, { prompt = opts.prompt, items = names, kind = opts.kind })
  if T.answer == 'manual' then
    T.pending = { items = items, names = names, on_choice = on_choice }
    return
  end
  if type(T.answer) == 'number' then
    return on_choice(items[T.answer], T.answer)
  end
  for i, name in ipairs(names) do
    if T.answer and name == T.answer then
      return on_choice(items[i], i)
    end
  end
  on_choice(nil, nil)
end

local notify = vim.notify
vim.notify = function(msg, level, opts)
  table.insert(T.notifications, { msg = msg, level = level })
  return notify(msg, level, opts)
end

--- Answer the pending manual select with the option named `name` (nil = dismiss).
function T.choose(name)
  local p = assert(T.pending, 'no pending select')
  T.pending = nil
  for i, n in ipairs(p.names) do
    if n == name then
      return p.on_choice(p.items[i], i)
    end
  end
  p.on_choice(nil, nil)
end

function T.wait(ms, fn)
  return vim.wait(ms, fn, 10)
end

function T.session()
  return require('acp_lsp.sessions').current()
end

function T.view()
  local s = T.session()
  return s and require('acp_lsp.chat').views[s.id]
end

function T.chat_lines()
  local view = T.view()
  return view and vim.api.nvim_buf_get_lines(view.buf, 0, -1, false) or {}
end

function T.chat_text()
  return table.concat(T.chat_lines(), '\n')
end

function T.chat_win()
  local view = T.view()
  return view and vim.fn.bufwinid(view.buf) or -1
end

function T.winbar()
  local win = T.chat_win()
  return win ~= -1 and vim.wo[win].winbar or ''
end

--- Start the plugin against the real server.
--- Permission prompts go through vim.ui.select (answered by T.answer) unless a test sets
--- T.permission_ui = 'inline' first.
function T.setup(cmd, settings)
  require('acp_lsp').setup({
    cmd = cmd,
    settings = settings or {},
    permission_ui = T.permission_ui or 'select',
  })
end

--- Start a session (focus stays where it is) and wait for its chat.
function T.new_session(agent, timeout)
  local done, err
  require('acp_lsp').new_session(agent, { focus = false }, function(s)
    done = s
  end)
  local ok = vim.wait(timeout or 30000, function()
    return done ~= nil
  end, 10)
  if not ok then
    for _, n in ipairs(T.notifications) do
      err = (err or '') .. n.msg .. '\n'
    end
    error('no session: ' .. tostring(err))
  end
  return done.id
end

--- Send a prompt to the current session.
function T.send(text)
  require('acp_lsp.actions').send(T.session(), text)
end

--- Wait until the current session's turn is over.
function T.wait_idle(timeout)
  local s = T.session()
  vim.wait(100, function()
    return s.status ~= 'idle'
  end, 5)
  return vim.wait(timeout or 15000, function()
    return s.status == 'idle'
  end, 10)
end

--- Record the on_lines events of the chat buffer: {first, last_old, last_new}.
function T.record_lines()
  T.line_events = {}
  vim.api.nvim_buf_attach(T.view().buf, false, {
    on_lines = function(_, _, _, first, last_old, last_new)
      table.insert(T.line_events, { first, last_old, last_new })
    end,
  })
end

--- Row (1-based) of the first chat line containing text.
function T.find_line(text)
  for i, line in ipairs(T.chat_lines()) do
    if line:find(text, 1, true) then
      return i
    end
  end
end

--- Buffer number of a file (-1 when there is none).
function T.bufnr(path)
  return vim.fn.bufnr(path)
end

function T.buf_lines(path)
  local buf = vim.fn.bufnr(path)
  return buf ~= -1 and vim.api.nvim_buf_get_lines(buf, 0, -1, false) or {}
end

--- Where the follow window is: {name, row}, or nil.
function T.follow()
  local win = require('acp_lsp.follow').win
  if not win or not vim.api.nvim_win_is_valid(win) then
    return nil
  end
  local buf = vim.api.nvim_win_get_buf(win)
  return { name = vim.api.nvim_buf_get_name(buf), row = vim.api.nvim_win_get_cursor(win)[1] }
end

--- Foldclosed() of a chat row, evaluated in the chat window.
function T.chat_foldclosed(row)
  return vim.api.nvim_win_call(T.chat_win(), function()
    return vim.fn.foldclosed(row)
  end)
end

--- Put the cursor of the current window somewhere.
function T.set_line(text, col)
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { text })
  vim.api.nvim_win_set_cursor(0, { 1, col or #text })
end

--- Chat and prompt windows of the current tab.
function T.chat_windows()
  local chat, input
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local buf = vim.api.nvim_win_get_buf(win)
    if vim.b[buf].acp_session_id then
      if vim.b[buf].acp_prompt then
        input = win
      else
        chat = win
      end
    end
  end
  return chat, input
end

--- Attachments of the current session's next prompt.
function T.attachments()
  local s = T.session()
  return s and require('acp_lsp.chat.prompt').attachments[s.id] or {}
end

return T
