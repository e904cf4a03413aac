--- Turns one block of a session (message, tool call, plan, notice) into lines + highlights.
--- Pure: reads the session model, touches no buffer.
local sessions = require('acp_lsp.sessions')
local config = require('acp_lsp.config')

local M = {}

M.STATUS_ICON = {
  pending = '○',
  in_progress = '◐',
  completed = '✓',
  failed = '✗',
  cancelled = '⊘',
}

M.PLAN_ICON = { pending = '○', in_progress = '▸', completed = '✓' }

M.THOUGHT_HEADER = '▸ Thinking'
M.USER_HEADER = '## You'

---@class acp_lsp.Rendered
---@field lines string[]
---@field hls table[] {row, group, start col?, end col?}: no start col = the whole line
---@field sections table[] {row, tool_call_id?, path?, terminal_id?}: what a row stands for

local function split(text)
  return vim.split(text or '', '\n', { plain = true })
end

--- A paragraph longer than this shows as several buffer lines, cut after the first space once a
--- line has this many bytes: Neovim stores, wraps and redraws a line whole, so a 1 MiB
--- paragraph as one line costs O(paragraph) per append, cursor move and redraw.
M.PIECE = 2000
--- With no space by then, a line is cut at this many bytes (at a character boundary).
M.HARD = 4000

--- Buffer lines for text that continues a line already `col` bytes long: the text's own
--- lines, long ones cut (M.PIECE, M.HARD). The first element continues that line. Where each
--- cut falls depends only on the line's bytes so far, so text appended chunk by chunk is cut
--- exactly as the whole text rendered at once. Joining the pieces of a line with '' gives it
--- back (a message's text as the agent sent it stays in the session: `gy` yanks that).
---@param text string
---@param col integer? bytes already on the line the text continues
---@return string[]
function M.pieces(text, col)
  local out = {}
  for i, line in ipairs(split(text)) do
    local at, s = i == 1 and (col or 0) or 0, 1 -- bytes on the current line, start of the rest
    -- The next space found (false: none left): a search that ran past the hard cut is reused
    -- by the next cuts, so a line with few spaces is scanned once, not once per cut.
    local space = nil
    while at + #line - s + 1 >= M.PIECE do
      local from = s + math.max(0, M.PIECE - at - 1)
      if space == nil or (space and space < from) then
        space = line:find(' ', from, true) or false
      end
      local cut = space or nil
      if not cut or at + cut - s + 1 > M.HARD then
        if at + #line - s + 1 <= M.HARD then
          break
        end
        cut = s - 1 + math.max(0, M.HARD - at)
        while cut < #line and line:byte(cut + 1) >= 0x80 and line:byte(cut + 1) < 0xC0 do
          cut = cut + 1 -- not inside a UTF-8 character
        end
        if cut >= #line then
          break
        end
      end
      table.insert(out, line:sub(s, cut))
      s, at = cut + 1, 0
    end
    table.insert(out, line:sub(s))
  end
  return out
end

local function short_path(path, cwd)
  if type(path) ~= 'string' then
    return '?'
  end
  if cwd and vim.startswith(path, cwd .. '/') then
    return path:sub(#cwd + 2)
  end
  return vim.fn.fnamemodify(path, ':~:.')
end

local function with_newline(text)
  if text == '' or text:sub(-1) == '\n' then
    return text
  end
  return text .. '\n'
end

--- Unified diff lines for one diff item (oldText nil/null = a new file).
---@param old string?
---@param new string?
---@return string[]
function M.diff_lines(old, new)
  old = (type(old) == 'string') and old or ''
  new = (type(new) == 'string') and new or ''
  local diff_fn = (vim.text and vim.text.diff) or vim.diff
  local out = diff_fn(with_newline(old), with_newline(new), { result_type = 'unified', ctxlen = 3 })
  local lines = split(out --[[@as string]])
  if lines[#lines] == '' then
    table.remove(lines)
  end
  return lines
end

local function review_text(review)
  if review == nil or review == vim.NIL then
    return nil
  end
  if type(review) == 'string' then
    return review
  end
  if type(review) == 'table' then
    if review.status then
      local notes = {}
      for _, f in ipairs(type(review.files) == 'table' and review.files or {}) do
        if f.message then
          table.insert(notes, tostring(f.message))
        end
      end
      return tostring(review.status) .. (#notes > 0 and (' — ' .. table.concat(notes, '; ')) or '')
    end
    if review.state then
      return tostring(review.state)
    end
    local parts = {}
    for k, v in pairs(review) do
      if type(v) ~= 'table' then
        table.insert(parts, k .. '=' .. tostring(v))
      end
    end
    table.sort(parts)
    return table.concat(parts, ' ')
  end
  return tostring(review)
end

---@param out acp_lsp.Rendered
local function add(out, line, hl, section)
  table.insert(out.lines, line)
  local row = #out.lines - 1
  if hl then
    table.insert(out.hls, { row, hl })
  end
  if section then
    section.row = row
    table.insert(out.sections, section)
  end
  return row
end

local function render_terminal(out, session, id, tool_call_id)
  local term = session.terminals[id]
  local status = ''
  if term and term.exit_status then
    local es = term.exit_status
    status = es.signal and es.signal ~= vim.NIL and (' (signal ' .. tostring(es.signal) .. ')')
      or (' (exit ' .. tostring(es.exitCode) .. ')')
  elseif term then
    status = ' (running)'
  end
  add(out, '  $ terminal ' .. id .. status, 'Special', { tool_call_id = tool_call_id, terminal_id = id })
  if not term then
    return
  end
  local lines = split(term.output)
  if lines[#lines] == '' then
    table.remove(lines)
  end
  local keep = config.options.chat.terminal_lines or 12
  if #lines > keep or term.truncated then
    add(
      out,
      ('  │ … (%s earlier lines hidden)'):format(term.truncated and 'some' or (#lines - keep)),
      'Comment'
    )
    lines = vim.list_slice(lines, math.max(1, #lines - keep + 1))
  end
  for _, line in ipairs(lines) do
    add(out, '  │ ' .. line, nil, { tool_call_id = tool_call_id, terminal_id = id })
  end
end

---@param session acp_lsp.Session
---@param id string
---@return acp_lsp.Rendered
function M.tool_call(session, id)
  local out = { lines = {}, hls = {}, sections = {} }
  local tc = session.tool_calls[id] or { toolCallId = id }
  local status = tc.status or 'pending'
  local icon = M.STATUS_ICON[status] or '•'
  local header = ('%s %s'):format(icon, tc.title or id)
  local meta = ('  [%s · %s]'):format(tc.kind or 'other', status)
  local row = add(out, header .. meta, nil, { tool_call_id = id })
  table.insert(out.hls, { row, 'Title', 0, #header })
  table.insert(out.hls, { row, 'Comment', #header, #header + #meta })
  for _, loc in ipairs(tc.locations or {}) do
    if type(loc) == 'table' and loc.path then
      local line = loc.line and loc.line ~= vim.NIL and (':' .. loc.line) or ''
      add(out, '  ↳ ' .. short_path(loc.path, session.cwd) .. line, 'Directory', {
        tool_call_id = id,
        path = loc.path,
        line = loc.line ~= vim.NIL and loc.line or nil,
      })
    end
  end
  local pending = session.permissions[id]
  if pending and pending.modal == false then
    local labels = require('acp_lsp.permissions').option_labels(pending)
    add(out, '  ⚠ allow? ' .. table.concat(labels, '  '), 'WarningMsg', { tool_call_id = id })
    add(out, '    press the key here (]p / [p: next / previous prompt)', 'Comment', { tool_call_id = id })
  elseif pending then
    local names = {}
    for _, o in ipairs(pending.options) do
      table.insert(names, o.name or o.optionId)
    end
    add(out, '  ⚠ awaiting permission: ' .. table.concat(names, ' / '), 'WarningMsg', { tool_call_id = id })
  end
  local review_files = {}
  if type(tc.review) == 'table' and type(tc.review.files) == 'table' then
    for _, f in ipairs(tc.review.files) do
      if type(f) == 'table' and f.path then
        review_files[f.path] = f.status
      end
    end
  end
  for _, item in ipairs(type(tc.content) == 'table' and tc.content or {}) do
    local t = type(item) == 'table' and item.type or nil
    if t == 'diff' then
      local label = '  ┌ ' .. short_path(item.path, session.cwd)
      if item.oldText == nil or item.oldText == vim.NIL then
        label = label .. ' (new file)'
      end
      local file_status = review_files[item.path]
      if file_status then
        label = label .. ' · ' .. file_status
      end
      add(out, label, 'Directory', { tool_call_id = id, path = item.path })
      for _, dl in ipairs(M.diff_lines(item.oldText, item.newText)) do
        local c = dl:sub(1, 1)
        local hl = (c == '+' and 'DiffAdd') or (c == '-' and 'DiffDelete') or (c == '@' and 'DiffText') or nil
        add(out, '  ' .. dl, hl, { tool_call_id = id, path = item.path })
      end
    elseif t == 'terminal' then
      render_terminal(out, session, item.terminalId, id)
    elseif t == 'content' then
      for _, line in ipairs(split(sessions.content_text(item.content))) do
        add(out, '  ' .. line, nil, { tool_call_id = id })
      end
    elseif t then
      add(out, ('  [%s]'):format(t), 'Comment', { tool_call_id = id })
    end
  end
  local review = review_text(tc.review)
  if review then
    local hint = review == 'pending' and '  (ga accept · gr reject)' or ''
    add(out, '  review: ' .. review .. hint, 'Comment', { tool_call_id = id })
  end
  return out
end

M.CHANGE_MARK = { created = 'A', modified = 'M', deleted = 'D' }
M.CHANGES_HINT = 'ga keep · gr reject (on this line: every file)'
local REVIEW_HL = {
  pending = 'DiagnosticWarn',
  accepted = 'DiagnosticOk',
  rejected = 'Comment',
  failed = 'DiagnosticError',
}

--- Lines added and removed by the diffs a tool call reported for `path` (nil: none reported,
--- e.g. a file a shell command changed).
local function diff_counts(tc, path, counts)
  for _, item in ipairs(type(tc.content) == 'table' and tc.content or {}) do
    if type(item) == 'table' and item.type == 'diff' and item.path == path then
      local old = type(item.oldText) == 'string' and item.oldText or ''
      local new = type(item.newText) == 'string' and item.newText or ''
      local diff_fn = (vim.text and vim.text.diff) or vim.diff
      for _, h in ipairs(diff_fn(with_newline(old), with_newline(new), { result_type = 'indices' }) or {}) do
        counts.removed, counts.added = (counts.removed or 0) + h[2], (counts.added or 0) + h[4]
      end
    end
  end
end

--- The files of a "files changed" block: one entry per path, in the order first changed.
---@return table[] {path, change?, status, message?, ids: string[] (tool calls), added?, removed?}
function M.changed_files(session, block)
  local files, by_path = {}, {}
  for _, id in ipairs(block.tool_call_ids or {}) do
    local tc = session.tool_calls[id] or {}
    for _, f in ipairs(require('acp_lsp.transcript').review_files(tc)) do
      local entry = by_path[f.path]
      if not entry then
        entry = { path = f.path, change = f.change, ids = {}, statuses = {} }
        by_path[f.path] = entry
        table.insert(files, entry)
      elseif f.change == 'deleted' or (f.change == 'created' and entry.change == 'deleted') then
        entry.change = f.change == 'created' and 'modified' or 'deleted'
      end
      table.insert(entry.ids, id)
      table.insert(entry.statuses, tostring(f.status or 'pending'))
      entry.message = f.message or entry.message
      diff_counts(tc, f.path, entry)
    end
  end
  for _, entry in ipairs(files) do
    -- Still to review while any of its changes is; else how the last one ended.
    entry.status = vim.tbl_contains(entry.statuses, 'pending') and 'pending'
      or entry.statuses[#entry.statuses]
    entry.statuses = nil
  end
  return files
end

--- "N files changed": every file the turn's tool calls changed, with keys to keep / reject.
---@param session acp_lsp.Session
---@param block table {type='changes', tool_call_ids}
---@return acp_lsp.Rendered
function M.changes(session, block)
  local out = { lines = {}, hls = {}, sections = {} }
  local files = M.changed_files(session, block)
  local all = {}
  for _, id in ipairs(block.tool_call_ids or {}) do
    table.insert(all, { toolCallId = id })
  end
  local title = ('≡ %d file%s changed'):format(#files, #files == 1 and '' or 's')
  local header = title .. '  ' .. M.CHANGES_HINT
  local row = add(out, header, nil, { targets = all })
  table.insert(out.hls, { row, 'Title', 0, #title })
  table.insert(out.hls, { row, 'Comment', #title, #header })
  local width = 0
  for _, f in ipairs(files) do
    f.short = short_path(f.path, session.cwd)
    width = math.max(width, vim.fn.strdisplaywidth(f.short))
  end
  for _, f in ipairs(files) do
    local targets = {}
    for _, id in ipairs(f.ids) do
      table.insert(targets, { toolCallId = id, path = f.path })
    end
    local counts = f.added and ('+%d -%d'):format(f.added, f.removed or 0) or ''
    local left = ('  %s %s%s  '):format(
      M.CHANGE_MARK[f.change] or '~',
      f.short,
      (' '):rep(width - vim.fn.strdisplaywidth(f.short))
    )
    local kind = ('%-8s'):format(f.change or 'changed')
    local mid = ('  %-9s  '):format(counts)
    local line = left .. kind .. mid .. f.status
    if f.message then
      line = line .. ' — ' .. tostring(f.message)
    end
    row = add(out, line, nil, { path = f.path, targets = targets })
    local kind_hl = f.change == 'created' and 'Added' or f.change == 'deleted' and 'Removed' or 'Changed'
    table.insert(out.hls, { row, kind_hl, 2, 3 })
    table.insert(out.hls, { row, 'Directory', 4, 4 + #f.short })
    table.insert(out.hls, { row, kind_hl, #left, #left + #kind })
    local status_col = #left + #kind + #mid
    table.insert(out.hls, { row, REVIEW_HL[f.status] or 'Comment', status_col, #line })
  end
  return out
end

---@param session acp_lsp.Session
---@return acp_lsp.Rendered
function M.plan(session)
  local out = { lines = {}, hls = {}, sections = {} }
  add(out, 'Plan', 'Title')
  for _, entry in ipairs(session.plan or {}) do
    local icon = M.PLAN_ICON[entry.status] or '•'
    local hl = entry.status == 'completed' and 'Comment' or nil
    add(out, ('  %s %s'):format(icon, entry.content or ''), hl)
  end
  return out
end

---@param session acp_lsp.Session
---@param block table
---@param last boolean? the last block: its text may still grow, trailing newlines stay
---@return acp_lsp.Rendered
function M.block(session, block, last)
  local out = { lines = {}, hls = {}, sections = {} }
  if block.type == 'message' then
    if block.role == 'user' then
      add(out, M.USER_HEADER, 'Title')
    elseif block.role == 'thought' then
      add(out, M.THOUGHT_HEADER, 'Comment')
    end
    local lines = M.pieces(sessions.message_text(block))
    while not last and #lines > 1 and lines[#lines] == '' do
      table.remove(lines)
    end
    for _, line in ipairs(lines) do
      add(out, line, block.role == 'thought' and 'Comment' or nil)
    end
  elseif block.type == 'tool_call' then
    return M.tool_call(session, block.id)
  elseif block.type == 'plan' then
    return M.plan(session)
  elseif block.type == 'changes' then
    return M.changes(session, block)
  elseif block.type == 'notice' then
    add(out, '── ' .. block.text .. ' ──', 'WarningMsg')
  else
    add(out, '[' .. tostring(block.type) .. ']', 'Comment')
  end
  return out
end

--- Winbar text of a chat window.
---@param session acp_lsp.Session
---@return string
function M.winbar(session)
  local title = session.title or session.agent or 'agent'
  if vim.fn.strchars(title) > 32 then
    title = vim.fn.strcharpart(title, 0, 31) .. '…'
  end
  local parts = { title, session.status or '?' }
  local modes = session.modes
  if type(modes) == 'table' and modes.currentModeId then
    local name = modes.currentModeId
    for _, m in ipairs(modes.availableModes or {}) do
      if m.id == modes.currentModeId then
        name = m.name or name
      end
    end
    table.insert(parts, 'mode: ' .. name)
  end
  for _, o in ipairs(session.config_options or {}) do
    if o.category == 'model' and o.currentValue ~= nil then
      local name = tostring(o.currentValue)
      for _, item in ipairs(o.options or {}) do
        if item.value == o.currentValue then
          name = item.name or name
        end
      end
      table.insert(parts, 'model: ' .. name)
    end
  end
  if not session.follow then
    table.insert(parts, 'follow: off')
  end
  local u = session.usage
  if type(u) == 'table' and type(u.used) == 'number' then
    local usage = ('tokens: %d/%s'):format(u.used, type(u.size) == 'number' and tostring(u.size) or '?')
    if type(u.cost) == 'table' and u.cost.amount then
      usage = usage .. (' · %s %.4f'):format(u.cost.currency or '', u.cost.amount)
    end
    table.insert(parts, usage)
  end
  local n = vim.tbl_count(session.permissions)
  if n > 0 then
    table.insert(parts, ('⚠ %d permission%s'):format(n, n > 1 and 's' or ''))
  end
  return table.concat(parts, ' · ')
end

return M
