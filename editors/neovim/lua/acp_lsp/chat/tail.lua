--- The end of a chat transcript under a long turn: cursors that were at the end follow it, a
--- very long line switches the chat to long-line mode, a large append runs without the garbage
--- collector.
local M = {}

--- Byte length of the buffer's last line, without reading the line (it may be megabytes).
function M.last_len(buf)
  local n = vim.api.nvim_buf_line_count(buf)
  local len = vim.api.nvim_buf_get_offset(buf, n) - vim.api.nvim_buf_get_offset(buf, n - 1)
  return math.max(0, len - 1) -- the final line's EOL (the chat is a scratch buffer)
end

--- Bytes of `text` after its last newline; nil without one.
---@param text string
---@return integer?
function M.after_newline(text)
  local nl, at = nil, text:find('\n', 1, true)
  while at do
    nl, at = at, text:find('\n', at + 1, true)
  end
  return nl and #text - nl
end

--- An append this large (bytes) is cut into lines with the garbage collector paused.
M.BIG = 64 * 1024

--- Runs fn with Lua's garbage collector paused; it resumes at its own pace afterwards. For a
--- large notification: decoding it (Neovim's LSP client) leaves megabytes of garbage, and the
--- lines cut from it would make the collector finish its cycle right inside the append, before
--- the text shows (about 1 ms of a 1 MiB answer's 2 ms here, measured).
function M.gc_paused(fn)
  if not collectgarbage('isrunning') then
    return fn() -- paused by someone else: theirs to restart
  end
  collectgarbage('stop')
  local ok, err = pcall(fn)
  collectgarbage('restart')
  if not ok then
    error(err, 0)
  end
end

--- A line this long makes wrapping with 'linebreak' and markdown highlighting cost O(line) per
--- redraw and per cursor move, and a paragraph this long (cut into lines by render.pieces) makes
--- markdown highlighting re-parse it whole at each redraw while it streams: the chat turns both
--- off for good (long-line mode).
local LONG_LINE = 20000

function M.check_long(view)
  if view.long or math.max(view.para or 0, M.last_len(view.buf)) <= LONG_LINE then
    return
  end
  view.long = true
  pcall(vim.treesitter.stop, view.buf)
  for _, win in ipairs(vim.fn.win_findbuf(view.buf)) do
    vim.wo[win][0].linebreak = false
  end
end

--- Windows (win -> row) whose cursor is still at that row go to the end of the last line
--- (with a wrapped long line, its last text is what shows).
local function move(view, rows)
  if not vim.api.nvim_buf_is_valid(view.buf) then
    return
  end
  local last, len = vim.api.nvim_buf_line_count(view.buf), M.last_len(view.buf)
  for win, row in pairs(rows) do
    if
      vim.api.nvim_win_is_valid(win)
      and vim.api.nvim_win_get_buf(win) == view.buf
      and vim.api.nvim_win_get_cursor(win)[1] == row
    then
      pcall(vim.api.nvim_win_set_cursor, win, { last, len })
    end
  end
end

--- Windows that were at the end before a change go to the new end: at the end of the
--- notification (M.follow_now), else once per loop turn, unless the user moved it meanwhile.
function M.follow_end(view, rows)
  view.follow = view.follow or {}
  for win, row in pairs(rows) do
    view.follow[win] = row
  end
  if view.follow_scheduled then
    return
  end
  view.follow_scheduled = true
  vim.schedule(function()
    view.follow_scheduled = false
    local wins = view.follow
    view.follow = {}
    move(view, wins)
  end)
end

--- After a notification's changes: the windows waiting to follow go to the end now, once,
--- while the last line is short (a deferred move costs the chat a loop turn before its text
--- shows). A long last line (a terminal's progress output, say) makes a move O(line): that
--- waits for the loop turn, so a flood of notifications moves each cursor once.
function M.follow_now(view)
  if view.follow and next(view.follow) and M.last_len(view.buf) <= LONG_LINE then
    local wins = view.follow
    view.follow = {}
    move(view, wins)
  end
end

return M
