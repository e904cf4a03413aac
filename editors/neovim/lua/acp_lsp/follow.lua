--- Follow-along: window/showDocument with takeFocus=false shows the location in one reused
--- "follow window" and never moves the cursor of the window the user is in. (The core
--- handler opens a new split for every file it has not shown yet.)
local M = {}

M.win = nil ---@type integer?

local function is_chat(win)
  local buf = vim.api.nvim_win_get_buf(win)
  return vim.b[buf].acp_session_id ~= nil
end

--- Windows follow-along may take over: normal, non-floating, not the chat, not current.
local function candidates()
  local cur = vim.api.nvim_get_current_win()
  local wins = {}
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local cfg = vim.api.nvim_win_get_config(win)
    local buf = vim.api.nvim_win_get_buf(win)
    if
      win ~= cur
      and cfg.relative == ''
      and not is_chat(win)
      and (vim.bo[buf].buftype == '' or vim.w[win].acp_follow)
    then
      table.insert(wins, win)
    end
  end
  return wins
end

---@param buf integer target buffer
---@return integer win
local function follow_window(buf)
  local cur = vim.api.nvim_get_current_win()
  local win = M.win
  if
    win
    and vim.api.nvim_win_is_valid(win)
    and win ~= cur
    and vim.api.nvim_win_get_tabpage(win) == vim.api.nvim_get_current_tabpage()
  then
    return win
  end
  local wins = candidates()
  -- Prefer a window that already shows the file, then the previous window, then any.
  for _, w in ipairs(wins) do
    if vim.api.nvim_win_get_buf(w) == buf then
      return w
    end
  end
  local prev = vim.fn.win_getid(vim.fn.winnr('#'))
  if vim.tbl_contains(wins, prev) then
    return prev
  end
  if wins[1] then
    return wins[1]
  end
  -- Only the user's window (and the chat): open one split, without focus: beside the
  -- chat column when the user is in the chat, else above the user's window.
  if is_chat(cur) then
    return vim.api.nvim_open_win(buf, false, { split = 'left', win = -1 })
  end
  return vim.api.nvim_open_win(buf, false, { split = 'above', win = cur })
end

--- Show a location (0-based LSP range) in the follow window.
---@param uri string
---@param range table? LSP range
---@param offset_encoding string
---@return boolean
function M.show(uri, range, offset_encoding)
  local ok, fname = pcall(vim.uri_to_fname, uri)
  if not ok or not vim.uv.fs_stat(fname) then
    return false
  end
  local buf = vim.fn.bufadd(fname)
  vim.bo[buf].buflisted = true
  local win = follow_window(buf)
  M.win = win
  vim.w[win].acp_follow = true
  if vim.api.nvim_win_get_buf(win) ~= buf then
    vim.api.nvim_win_set_buf(win, buf)
  end
  if range and range.start then
    local row = math.min(range.start.line + 1, vim.api.nvim_buf_line_count(buf))
    local col = 0
    local line = vim.api.nvim_buf_get_lines(buf, row - 1, row, false)[1] or ''
    if range.start.character and range.start.character > 0 then
      local okc, c = pcall(vim.str_byteindex, line, offset_encoding, range.start.character, false)
      col = okc and c or 0
    end
    vim.api.nvim_win_set_cursor(win, { row, math.min(col, math.max(#line - 1, 0)) })
    vim.api.nvim_win_call(win, function()
      vim.cmd('normal! zv')
      vim.cmd('normal! zz')
    end)
  end
  return true
end

--- window/showDocument handler: ours for takeFocus=false, the core one otherwise.
function M.show_document(err, params, ctx)
  if params.external or params.takeFocus then
    return vim.lsp.handlers['window/showDocument'](err, params, ctx)
  end
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  local encoding = client and client.offset_encoding or 'utf-16'
  local ok, shown = pcall(M.show, params.uri, params.selection, encoding)
  if not ok then
    require('acp_lsp.log').add('error', 'follow: ' .. tostring(shown))
  end
  return { success = ok and shown or false }
end

return M
