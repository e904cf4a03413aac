--- The chat: one transcript buffer per session plus a prompt input below it; windows,
--- keymaps, opening and closing. Rendering is in chat/view.lua.
local sessions = require('acp_lsp.sessions')
local render = require('acp_lsp.chat.render')
local config = require('acp_lsp.config')
local view_mod = require('acp_lsp.chat.view')

local M = {}

---@type table<string, acp_lsp.ChatView>
M.views = view_mod.views
M.item_at_cursor = view_mod.item_at_cursor
M.foldexpr = view_mod.foldexpr
M.foldtext = view_mod.foldtext

local function setup_window(win, view)
  local wo = vim.wo[win][0]
  wo.foldmethod = 'expr'
  wo.foldexpr = "v:lua.require'acp_lsp.chat'.foldexpr()"
  wo.foldtext = "v:lua.require'acp_lsp.chat'.foldtext()"
  wo.foldlevel = 0
  wo.foldenable = true
  wo.wrap = true
  wo.linebreak = not view.long -- off in long-line mode (chat/view.lua)
  wo.number = false
  wo.relativenumber = false
  wo.signcolumn = 'no'
  wo.spell = false
  local session = sessions.by_id[vim.b[view.buf].acp_session_id]
  if session then
    wo.winbar = render.winbar(session):gsub('%%', '%%%%')
  end
end

local function map(buf, mode, lhs, rhs, desc)
  vim.keymap.set(mode, lhs, rhs, { buffer = buf, nowait = true, silent = true, desc = desc })
end

local function start_markdown(buf)
  pcall(vim.treesitter.language.register, 'markdown', { 'acp_chat', 'acp_prompt' })
  pcall(vim.treesitter.start, buf, 'markdown')
end

---@param session acp_lsp.Session
---@return acp_lsp.ChatView
local function create_view(session)
  local buf = vim.api.nvim_create_buf(false, true)
  local short = session.id:sub(1, 8)
  pcall(vim.api.nvim_buf_set_name, buf, ('acp://chat/%s/%s'):format(session.agent or 'agent', short))
  vim.b[buf].acp_session_id = session.id
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].filetype = 'acp_chat'
  vim.bo[buf].modifiable = false
  start_markdown(buf)

  local input = vim.api.nvim_create_buf(false, true)
  pcall(vim.api.nvim_buf_set_name, input, ('acp://prompt/%s/%s'):format(session.agent or 'agent', short))
  vim.b[input].acp_session_id = session.id
  vim.b[input].acp_prompt = true
  vim.bo[input].bufhidden = 'hide'
  vim.bo[input].filetype = 'acp_prompt'
  start_markdown(input)

  local view = { buf = buf, input = input, starts = {}, sections = {} }
  M.views[session.id] = view
  require('acp_lsp.chat.prompt').setup_buffer(input, session.id)

  local actions = require('acp_lsp.actions')
  map(buf, 'n', '<CR>', M.open_item, 'Open the file / location under the cursor, or show earlier items')
  map(buf, 'n', 'ga', function()
    actions.review('accept')
  end, 'Accept the change under the cursor')
  map(buf, 'n', 'gr', function()
    actions.review('reject')
  end, 'Reject the change under the cursor')
  map(buf, 'n', 'gA', function()
    actions.review('accept', true)
  end, 'Accept every change of the last turn')
  map(buf, 'n', 'gR', function()
    actions.review('reject', true)
  end, 'Reject every change of the last turn')
  for _, key in ipairs({ 'i', 'a', 'o' }) do
    map(buf, 'n', key, function()
      M.focus_input(session.id)
    end, 'Write a prompt')
  end
  map(buf, 'n', 'gy', M.yank_item, 'Yank the message under the cursor, as the agent sent it')
  map(buf, 'n', 'gq', function()
    require('acp_lsp.queue').pick()
  end, 'The prompts waiting their turn: send now, edit or remove one')
  map(buf, 'n', 'gz', function()
    require('acp_lsp.checkpoints').restore()
  end, 'Restore the files to before your message under the cursor')
  map(buf, 'n', 'ge', function()
    require('acp_lsp.checkpoints').edit_resend()
  end, 'Edit and resend your message under the cursor (a new session from before it)')
  map(buf, 'n', '<C-c>', actions.cancel, 'Cancel the turn')
  map(buf, 'n', ']p', function()
    require('acp_lsp.permissions').jump(session.id, 1)
  end, 'Next permission prompt')
  map(buf, 'n', '[p', function()
    require('acp_lsp.permissions').jump(session.id, -1)
  end, 'Previous permission prompt')
  map(buf, 'n', 'q', M.close, 'Close the chat')

  vim.api.nvim_create_autocmd('BufWinEnter', {
    buffer = buf,
    callback = function()
      setup_window(vim.api.nvim_get_current_win(), view)
    end,
  })
  view_mod.render_all(session, view)
  return view
end

--- The view of a session, created on first use.
---@param session acp_lsp.Session
---@return acp_lsp.ChatView
function M.view(session)
  local view = M.views[session.id]
  if view and vim.api.nvim_buf_is_valid(view.buf) and vim.api.nvim_buf_is_valid(view.input) then
    return view
  end
  return create_view(session)
end

--- Windows of the current tab that show a chat / prompt buffer.
local function chat_windows()
  local chat, input
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local buf = vim.api.nvim_win_get_buf(win)
    if vim.b[buf].acp_session_id then
      if vim.b[buf].acp_prompt then
        input = input or win
      else
        chat = chat or win
      end
    end
  end
  return chat, input
end

--- Show a session's chat (reusing the chat windows of the tab) and optionally focus its prompt.
---@param session acp_lsp.Session
---@param opts? {focus?: boolean}
function M.open(session, opts)
  opts = opts or {}
  local view = M.view(session)
  sessions.current_id = session.id
  local chat_win, input_win = chat_windows()
  local cfg = config.options.chat
  if not chat_win then
    local pos = cfg.position
    if pos == 'tab' then
      vim.cmd('tabnew')
      chat_win = vim.api.nvim_get_current_win()
      vim.api.nvim_win_set_buf(chat_win, view.buf)
    else
      local vertical = pos == 'right' or pos == 'left'
      local total = vertical and vim.o.columns or vim.o.lines
      local size = cfg.size < 1 and math.floor(total * cfg.size) or cfg.size
      local win_opts = { split = pos, win = -1 }
      win_opts[vertical and 'width' or 'height'] = math.max(size, 20)
      chat_win = vim.api.nvim_open_win(view.buf, false, win_opts)
    end
  elseif vim.api.nvim_win_get_buf(chat_win) ~= view.buf then
    vim.api.nvim_win_set_buf(chat_win, view.buf)
  end
  setup_window(chat_win, view)
  if not input_win or not vim.api.nvim_win_is_valid(input_win) then
    input_win = vim.api.nvim_open_win(view.input, false, {
      split = 'below',
      win = chat_win,
      height = cfg.prompt_height,
    })
  elseif vim.api.nvim_win_get_buf(input_win) ~= view.input then
    vim.api.nvim_win_set_buf(input_win, view.input)
  end
  require('acp_lsp.chat.prompt').setup_window(input_win, session.id)
  vim.api.nvim_win_set_cursor(chat_win, { vim.api.nvim_buf_line_count(view.buf), 0 })
  if opts.focus then
    vim.api.nvim_set_current_win(input_win)
  end
  return chat_win, input_win
end

---@param session_id string
function M.focus_input(session_id)
  local session = sessions.by_id[session_id]
  if not session then
    return
  end
  local _, input_win = M.open(session)
  vim.api.nvim_set_current_win(input_win)
  vim.cmd('startinsert!')
end

--- Close the chat windows of the current tab (the buffers and the session stay).
function M.close()
  local chat_win, input_win = chat_windows()
  for _, win in ipairs({ input_win, chat_win }) do
    if win and vim.api.nvim_win_is_valid(win) and #vim.api.nvim_tabpage_list_wins(0) > 1 then
      vim.api.nvim_win_close(win, false)
    end
  end
end

--- Toggle the chat of the current session.
function M.toggle()
  local chat_win = chat_windows()
  if chat_win then
    return M.close()
  end
  local session = sessions.current()
  if session then
    M.open(session, { focus = true })
  end
end

--- The text of the block under the cursor of a chat window: a message's text as the agent sent
--- it (long paragraphs show cut into several lines, this has them whole), else the block's lines.
---@param win integer?
---@return string?
function M.item_text(win)
  local item = view_mod.item_at_cursor(win)
  local block = item and item.session and item.session.blocks[item.block]
  if not block then
    return nil
  end
  if block.type == 'message' then
    return sessions.message_text(block)
  end
  local view = M.views[item.session.id]
  local lines =
    vim.api.nvim_buf_get_lines(view.buf, view.starts[item.block], view_mod.block_end(view, item.block), false)
  return table.concat(lines, '\n')
end

--- gy in the transcript: the block under the cursor into the register given ("+gy), else the
--- unnamed one.
function M.yank_item()
  local text = M.item_text()
  if text then
    vim.fn.setreg(vim.v.register, text)
  end
end

--- <CR> in the transcript: jump to the location / file of the line under the cursor.
function M.open_item()
  if view_mod.show_earlier() then
    return
  end
  local item = M.item_at_cursor()
  if not item then
    return
  end
  local path, line = item.path, item.line
  if not path and item.tool_call_id and item.session then
    local tc = item.session.tool_calls[item.tool_call_id] or {}
    local loc = (tc.locations or {})[1]
    if loc then
      path, line = loc.path, loc.line
    end
  end
  if not path then
    return
  end
  local uri = vim.uri_from_fname(path)
  local range = { start = { line = math.max((tonumber(line) or 1) - 1, 0), character = 0 } }
  local follow = require('acp_lsp.follow')
  if follow.show(uri, range, 'utf-8') and follow.win then
    vim.api.nvim_set_current_win(follow.win)
  end
end

return M
