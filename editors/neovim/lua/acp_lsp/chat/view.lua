--- The transcript buffer of a chat: rendering session events into it. Streaming text is
--- appended at the end of the buffer (nothing already there is redrawn), a long paragraph as
--- several lines (render.pieces); a changed tool call or plan re-renders only its own lines.
local sessions = require('acp_lsp.sessions')
local render = require('acp_lsp.chat.render')
local tail = require('acp_lsp.chat.tail')

local M = {}

local ns = vim.api.nvim_create_namespace('acp_lsp.chat')

---@class acp_lsp.ChatView
---@field buf integer transcript buffer
---@field input integer prompt buffer
---@field starts integer[] 0-based first row of each block
---@field sections table<integer, table[]> per block: what its rows stand for
---@field long boolean? long-line mode (chat/tail.lua)
---@field para integer? bytes of the paragraph streaming at the end (one line or several)
---@field follow table<integer, integer>? windows to move to the end: win -> row left at
---@field follow_scheduled boolean?
---@field terminals table<string, integer>? terminal id -> index of the block showing it
---@field first integer? first block in the buffer: the ones before it are behind a "show earlier" line
---@field earlier integer? blocks shown beyond M.WINDOW, asked for with "show earlier"

--- Blocks a chat shows when drawn whole (opened, resumed, reset): a session of 10,000 messages
--- would be 76,000 lines that markdown highlighting parses and keeps trees of (seconds to open,
--- ~200 MB, a stalling parse while the user types). The older ones wait behind one line at the
--- top; <CR> there shows M.MORE more. Streaming appends to what is shown, however long.
M.WINDOW = 1000
M.MORE = 1000

---@type table<string, acp_lsp.ChatView>
M.views = {}

--- A change of the chat buffer. `para`: bytes of the paragraph left streaming at the end (nil:
--- count from the last line); a long one turns long-line mode on before the change, so
--- highlighting never parses it.
local function set_text(view, para, fn)
  local buf = view.buf
  local at_end = {}
  local count = vim.api.nvim_buf_line_count(buf)
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    at_end[win] = vim.api.nvim_win_get_cursor(win)[1] >= count or (view.follow or {})[win] ~= nil
  end
  view.para = para
  tail.check_long(view)
  vim.bo[buf].modifiable = true
  local ok, err = pcall(fn)
  vim.bo[buf].modifiable = false
  local rows = {}
  for win, follow in pairs(at_end) do
    if follow and vim.api.nvim_win_is_valid(win) then
      rows[win] = vim.api.nvim_win_get_cursor(win)[1]
    end
  end
  tail.follow_end(view, rows)
  tail.check_long(view)
  if not ok then
    error(err)
  end
end

local function apply_hls(buf, first_row, rendered)
  for _, hl in ipairs(rendered.hls) do
    local row = first_row + hl[1]
    if hl[3] then
      pcall(vim.api.nvim_buf_set_extmark, buf, ns, row, hl[3], {
        end_col = hl[4],
        hl_group = hl[2],
      })
    else
      pcall(vim.api.nvim_buf_set_extmark, buf, ns, row, 0, { line_hl_group = hl[2] })
    end
  end
end

--- Bytes of the paragraph the chat ends with, when its last block is a message.
local function end_para(session)
  local block = session.blocks[#session.blocks]
  if block and block.type == 'message' then
    local text = sessions.message_text(block)
    return tail.after_newline(text) or #text
  end
end

--- Last row (exclusive) of block i: the separator line before the next block, or the end.
function M.block_end(view, i)
  local nxt = view.starts[i + 1]
  if nxt then
    return nxt - 1
  end
  return vim.api.nvim_buf_line_count(view.buf)
end

--- The "show earlier" line of a chat that hides its first `hidden` blocks.
function M.earlier_line(hidden)
  local more = math.min(hidden, M.MORE)
  return ('⋯ %d earlier item%s not shown: <CR> on this line shows %d more'):format(
    hidden,
    hidden == 1 and '' or 's',
    more
  )
end

function M.render_all(session, view)
  local lines, hls, starts, sections = {}, {}, {}, {}
  local n = #session.blocks
  local first = math.max(1, n - M.WINDOW - (view.earlier or 0) + 1)
  view.first = first
  if first > 1 then
    -- The hidden blocks all start at row 0, the "show earlier" line: block_at finds them
    -- there, and every block after keeps a dense index.
    lines[1] = M.earlier_line(first - 1)
    table.insert(hls, { 0, 'Comment' })
    for i = 1, first - 1 do
      starts[i], sections[i] = 0, {}
    end
  end
  for i = first, n do
    local block = session.blocks[i]
    if i > 1 then
      table.insert(lines, '')
    end
    starts[i] = #lines
    local r = render.block(session, block, i == #session.blocks)
    for _, hl in ipairs(r.hls) do
      table.insert(hls, { hl[1] + starts[i], hl[2], hl[3], hl[4] })
    end
    sections[i] = r.sections
    vim.list_extend(lines, r.lines)
  end
  view.starts, view.sections = starts, sections
  set_text(view, end_para(session), function()
    vim.api.nvim_buf_clear_namespace(view.buf, ns, 0, -1)
    vim.api.nvim_buf_set_lines(view.buf, 0, -1, false, lines)
    apply_hls(view.buf, 0, { hls = hls })
  end)
end

local function render_new_block(session, view, index)
  if index ~= #session.blocks or index ~= #view.starts + 1 then
    return M.render_all(session, view)
  end
  local r = render.block(session, session.blocks[index], true)
  view.sections[index] = r.sections
  set_text(view, end_para(session), function()
    local count = vim.api.nvim_buf_line_count(view.buf)
    -- The previous block is final now: drop the blank lines its text ended with.
    local prev_start = view.starts[index - 1]
    while prev_start and count - 1 > prev_start do
      local last = vim.api.nvim_buf_get_lines(view.buf, count - 1, count, false)[1]
      if last ~= '' then
        break
      end
      vim.api.nvim_buf_set_lines(view.buf, count - 1, count, false, {})
      count = count - 1
    end
    if index == 1 then
      view.starts[1] = 0
      vim.api.nvim_buf_set_lines(view.buf, 0, -1, false, r.lines)
      apply_hls(view.buf, 0, r)
    else
      view.starts[index] = count + 1
      local lines = { '' }
      vim.list_extend(lines, r.lines)
      vim.api.nvim_buf_set_lines(view.buf, count, count, false, lines)
      apply_hls(view.buf, count + 1, r)
    end
  end)
end

--- Blocks first..#blocks are new (all before are rendered): append them in one change.
local function render_tail(session, view, first)
  if first ~= #view.starts + 1 or first == 1 then
    return M.render_all(session, view)
  end
  local lines, hls, starts = {}, {}, {}
  for i = first, #session.blocks do
    table.insert(lines, '')
    starts[i] = #lines
    local r = render.block(session, session.blocks[i], i == #session.blocks)
    for _, hl in ipairs(r.hls) do
      table.insert(hls, { hl[1] + #lines, hl[2], hl[3], hl[4] })
    end
    view.sections[i] = r.sections
    vim.list_extend(lines, r.lines)
  end
  set_text(view, end_para(session), function()
    local count = vim.api.nvim_buf_line_count(view.buf)
    local prev_start = view.starts[first - 1]
    while prev_start and count - 1 > prev_start do
      local last = vim.api.nvim_buf_get_lines(view.buf, count - 1, count, false)[1]
      if last ~= '' then
        break
      end
      vim.api.nvim_buf_set_lines(view.buf, count - 1, count, false, {})
      count = count - 1
    end
    for i, s in pairs(starts) do
      view.starts[i] = count + s
    end
    vim.api.nvim_buf_set_lines(view.buf, count, count, false, lines)
    apply_hls(view.buf, count, { hls = hls })
  end)
end

local function render_block(session, view, index)
  if index < (view.first or 1) then
    return -- behind the "show earlier" line
  end
  if not view.starts[index] then
    return M.render_all(session, view)
  end
  local r = render.block(session, session.blocks[index], index == #session.blocks)
  view.sections[index] = r.sections
  local s, e = view.starts[index], M.block_end(view, index)
  set_text(view, index == #session.blocks and end_para(session) or view.para, function()
    vim.api.nvim_buf_clear_namespace(view.buf, ns, s, e)
    vim.api.nvim_buf_set_lines(view.buf, s, e, false, r.lines)
    apply_hls(view.buf, s, r)
  end)
  local delta = #r.lines - (e - s)
  for j = index + 1, #view.starts do
    view.starts[j] = view.starts[j] + delta
  end
end

--- Streaming: append text to the last block, in place.
local function render_append(session, view, index, text)
  if index ~= #view.starts or index ~= #session.blocks then
    return render_block(session, view, index)
  end
  local block = session.blocks[index]
  local len = tail.last_len(view.buf)
  local para = tail.after_newline(text) or (view.para or len) + #text
  local function append()
    set_text(view, para, function()
      local last = vim.api.nvim_buf_line_count(view.buf) - 1
      -- Long paragraphs are cut into several lines, as render.block cuts them.
      local parts = render.pieces(text, len)
      vim.api.nvim_buf_set_text(view.buf, last, len, last, len, parts)
      if block.role == 'thought' and #parts > 1 then
        for row = last + 1, last + #parts - 1 do
          vim.api.nvim_buf_set_extmark(view.buf, ns, row, 0, { line_hl_group = 'Comment' })
        end
      end
    end)
  end
  if #text < tail.BIG then
    return append()
  end
  tail.gc_paused(append)
end

local function update_winbar(session, view)
  local bar = render.winbar(session):gsub('%%', '%%%%')
  for _, win in ipairs(vim.fn.win_findbuf(view.buf)) do
    vim.wo[win][0].winbar = bar
  end
end

--- Events of one notification, applied against the session's state after all of them:
--- appends to one block are joined into one buffer change; a block created or re-rendered
--- in the batch already shows every later append to it; each changed block renders once.
local function apply_batch(session, view, events)
  local fresh, dirty, order = {}, {}, {}
  local append_index, append_parts = nil, {}
  local function flush_append()
    if append_index then
      render_append(session, view, append_index, table.concat(append_parts))
    end
    append_index, append_parts = nil, {}
  end
  for _, event in ipairs(events) do
    local t, i = event.type, event.index
    if t == 'append' then
      if not fresh[i] and not dirty[i] then
        if append_index ~= i then
          flush_append()
          append_index = i
        end
        table.insert(append_parts, event.text)
      end
    else
      flush_append()
      if t == 'reset' then
        M.render_all(session, view)
        for j = 1, #session.blocks do
          fresh[j] = true
        end
      elseif t == 'new_block' then
        if not fresh[i] then
          render_tail(session, view, i)
          for j = i, #session.blocks do
            fresh[j] = true
          end
        end
      elseif t == 'block' then
        if not fresh[i] and not dirty[i] then
          dirty[i] = true
          table.insert(order, i)
        end
      else
        M.apply(session, view, event)
      end
    end
  end
  flush_append()
  for _, i in ipairs(order) do
    if session.blocks[i] then
      render_block(session, view, i)
    end
  end
end

local function on_change(session, event)
  local view = M.views[session.id]
  if not view or not vim.api.nvim_buf_is_valid(view.buf) then
    return
  end
  if event.type == 'batch' then
    apply_batch(session, view, event.events)
  else
    M.apply(session, view, event)
  end
  tail.follow_now(view)
  update_winbar(session, view)
end

--- Whether tool call block i shows terminal id.
local function shows_terminal(session, block, id)
  if not block or block.type ~= 'tool_call' then
    return false
  end
  for _, item in ipairs((session.tool_calls[block.id] or {}).content or {}) do
    if type(item) == 'table' and item.type == 'terminal' and item.terminalId == id then
      return true
    end
  end
  return false
end

--- The block showing a terminal: remembered, so streaming output into one of 2,000 tool calls
--- does not scan them all at each chunk (scanned from the end: the newest is the likely one).
local function terminal_block(session, view, id)
  view.terminals = view.terminals or {}
  local known = view.terminals[id]
  if known and shows_terminal(session, session.blocks[known], id) then
    return known
  end
  for i = #session.blocks, 1, -1 do
    if shows_terminal(session, session.blocks[i], id) then
      view.terminals[id] = i
      return i
    end
  end
end

--- One event, applied at once.
function M.apply(session, view, event)
  local t = event.type
  if t == 'reset' then
    M.render_all(session, view)
  elseif t == 'new_block' then
    render_new_block(session, view, event.index)
  elseif t == 'block' then
    render_block(session, view, event.index)
  elseif t == 'append' then
    render_append(session, view, event.index, event.text)
  elseif t == 'terminal' then
    local i = terminal_block(session, view, event.id)
    if i then
      render_block(session, view, i)
    end
  end
end

sessions.on_change(on_change)

--- Index of the block at a 0-based row, by binary search over block starts.
---@param view acp_lsp.ChatView
---@param row integer
---@return integer?
function M.block_at(view, row)
  local lo, hi, found = 1, #view.starts, nil
  while lo <= hi do
    local mid = math.floor((lo + hi) / 2)
    if view.starts[mid] <= row then
      found, lo = mid, mid + 1
    else
      hi = mid - 1
    end
  end
  return found
end

--- What the cursor of a chat window points at: {block, tool_call_id?, path?, line?, terminal_id?}.
---@param win integer?
---@return table?
function M.item_at_cursor(win)
  win = win or vim.api.nvim_get_current_win()
  local buf = vim.api.nvim_win_get_buf(win)
  local id = vim.b[buf].acp_session_id
  local view = id and M.views[id]
  if not view or view.buf ~= buf then
    return nil
  end
  local row = vim.api.nvim_win_get_cursor(win)[1] - 1
  local index = M.block_at(view, row)
  if not index or index < (view.first or 1) then
    return nil
  end
  local session = sessions.by_id[id]
  local item = { block = index, session = session }
  local block = session and session.blocks[index]
  if block and block.type == 'tool_call' then
    item.tool_call_id = block.id
  end
  local rel = row - view.starts[index]
  -- Sections are in row order: the last one at or above the cursor row describes it.
  local section
  for _, s in ipairs(view.sections[index] or {}) do
    if s.row > rel then
      break
    end
    section = s
  end
  if section then
    item.path, item.line, item.terminal_id = section.path, section.line, section.terminal_id
    item.targets = section.targets -- a "files changed" block: what keep / reject act on
  end
  return item
end

--- foldexpr of chat windows: thoughts fold (closed by default).
function M.foldexpr()
  local buf = vim.api.nvim_get_current_buf()
  local id = vim.b[buf].acp_session_id
  local view = id and M.views[id]
  local session = id and sessions.by_id[id]
  if not view or not session then
    return '0'
  end
  local row = vim.v.lnum - 1
  local index = M.block_at(view, row)
  local block = index and index >= (view.first or 1) and session.blocks[index]
  if not block or block.type ~= 'message' or block.role ~= 'thought' then
    return '0'
  end
  if row == view.starts[index] then
    return '>1'
  end
  return row < M.block_end(view, index) and '1' or '0'
end

--- <CR> on the "show earlier" line of the current chat window: M.MORE more blocks, the
--- cursor staying on the block that was first. False when the cursor is not on that line.
---@return boolean
function M.show_earlier()
  local win = vim.api.nvim_get_current_win()
  local buf = vim.api.nvim_win_get_buf(win)
  local id = vim.b[buf].acp_session_id
  local view = id and M.views[id]
  local session = id and sessions.by_id[id]
  local first = view and view.first or 1
  if not view or view.buf ~= buf or not session or first <= 1 then
    return false
  end
  if vim.api.nvim_win_get_cursor(win)[1] - 1 >= view.starts[first] then
    return false
  end
  view.earlier = (view.earlier or 0) + M.MORE
  M.render_all(session, view)
  vim.api.nvim_win_set_cursor(win, { view.starts[first] + 1, 0 })
  return true
end

function M.foldtext()
  local n = vim.v.foldend - vim.v.foldstart
  return ('%s (%d line%s)'):format(render.THOUGHT_HEADER, n, n == 1 and '' or 's')
end

return M
