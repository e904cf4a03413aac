--- An agent's change under review, shown in the file's own buffer as gitsigns and mini.diff
--- show git's: the lines a hunk added highlighted (DiffAdd, with a ▎ sign), the lines it
--- removed as virtual lines where they were (DiffDelete). In that buffer, while it has pending
--- hunks: ]h / [h go to the next / previous hunk, gha keeps the hunk under the cursor and ghr
--- rejects it (acp/reviewEdit with `hunk`: only its lines are undone, the rest and the user's
--- own edits stay). The hunks shown for a file are those of the latest tool call that changed
--- it: their line numbers are those of the text that call left.
local client = require('acp_lsp.client')
local protocol = require('acp_lsp.protocol')

local req = protocol.requests
local M = {}
local ns = vim.api.nvim_create_namespace('acp_lsp.hunks')
local MAX_VIRT_LINES = 40

---@class acp_lsp.ShownHunk
---@field session_id string
---@field tool_call_id string
---@field path string as the agent reported it (what acp/reviewEdit names)
---@field hunk table its review JSON ({index, newStart, newLines, oldText?, status})
---@field mark integer the extmark placed for it

---@type table<integer, acp_lsp.ShownHunk[]>
M.shown = {}

local function absolute(path, cwd)
  if path:sub(1, 1) ~= '/' and cwd then
    path = cwd .. '/' .. path
  end
  return vim.fs.normalize(path)
end

--- Real path -> the pending hunks of the latest tool call (in each session's order) that
--- changed the file.
local function pending()
  local out = {}
  for _, session in pairs(require('acp_lsp.sessions').by_id) do
    for _, block in ipairs(session.blocks or {}) do
      local tc = block.type == 'tool_call' and session.tool_calls[block.id]
      for _, file in ipairs(tc and tc.review and tc.review.files or {}) do
        local open = {}
        for _, hunk in ipairs(file.hunks or {}) do
          if hunk.status == 'pending' then
            table.insert(open, hunk)
          end
        end
        local key = vim.uv.fs_realpath(absolute(file.path, session.cwd)) or absolute(file.path, session.cwd)
        out[key] = #open > 0
            and { session_id = session.id, tool_call_id = block.id, path = file.path, hunks = open }
          or nil
      end
    end
  end
  return out
end

local function removed_lines(hunk)
  if hunk.oldText == nil then
    local n = hunk.oldLines or 0
    return n > 0 and { { { ('- %d lines removed'):format(n), 'DiffDelete' } } } or {}
  end
  local out = {}
  if hunk.oldText == '' then
    return out
  end
  for _, line in ipairs(vim.split((hunk.oldText:gsub('\n$', '')), '\n', { plain = true })) do
    if #out >= MAX_VIRT_LINES then
      table.insert(out, { { '- …', 'DiffDelete' } })
      break
    end
    table.insert(out, { { '- ' .. line, 'DiffDelete' } })
  end
  return out
end

local function place(buf, hunk)
  local count = vim.api.nvim_buf_line_count(buf)
  local removed = removed_lines(hunk)
  local opts = { sign_text = '▎', sign_hl_group = hunk.newLines > 0 and 'DiffAdd' or 'DiffDelete' }
  local row
  if hunk.newLines > 0 then
    row = math.min(hunk.newStart - 1, count - 1)
    opts.end_row = math.min(row + hunk.newLines - 1, count - 1) -- inclusive: every line of it
    opts.line_hl_group = 'DiffAdd'
    if #removed > 0 then
      opts.virt_lines, opts.virt_lines_above = removed, true
    end
  else -- lines removed only: shown after the line before them (above the first, at the top)
    row = math.max(0, math.min(hunk.newStart - 1, count - 1))
    opts.virt_lines, opts.virt_lines_above = removed, hunk.newStart == 0
  end
  return vim.api.nvim_buf_set_extmark(buf, ns, row, 0, opts)
end

local function map_keys(buf)
  if vim.b[buf].acp_hunk_keys then
    return
  end
  vim.b[buf].acp_hunk_keys = true
  local function map(lhs, fn, desc)
    vim.keymap.set('n', lhs, fn, { buffer = buf, silent = true, desc = desc })
  end
  map(']h', function()
    M.jump(1)
  end, "Next hunk of the agent's change")
  map('[h', function()
    M.jump(-1)
  end, "Previous hunk of the agent's change")
  map('gha', function()
    M.decide('accept')
  end, "Keep the agent's hunk under the cursor")
  map('ghr', function()
    M.decide('reject')
  end, "Reject the agent's hunk under the cursor")
end

--- Show the pending hunks in every loaded buffer (clearing those decided).
function M.refresh()
  local open = pending()
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_is_loaded(buf) and vim.api.nvim_buf_get_name(buf) or ''
    local found = name ~= '' and open[vim.uv.fs_realpath(name) or name]
    if M.shown[buf] or found then
      vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
      M.shown[buf] = nil
    end
    if found then
      local shown = {}
      for _, hunk in ipairs(found.hunks) do
        local ok, mark = pcall(place, buf, hunk)
        if ok then
          table.insert(shown, {
            session_id = found.session_id,
            tool_call_id = found.tool_call_id,
            path = found.path,
            hunk = hunk,
            mark = mark,
          })
        end
      end
      M.shown[buf] = shown
      map_keys(buf)
    end
  end
end

local pending_refresh = false
--- Refresh once the current batch of updates is handled.
function M.schedule()
  if not pending_refresh then
    pending_refresh = true
    vim.schedule(function()
      pending_refresh = false
      M.refresh()
    end)
  end
end

---@param params table acp/sessionUpdate params
function M.on_update(params)
  for _, update in ipairs(params.updates or {}) do
    local tc = update.sessionUpdate == 'tool_call' and update.toolCall
    if tc and tc.review ~= nil then
      return M.schedule()
    end
  end
end

--- The rows [first, last] (0-based) of a shown hunk now (its mark moves with edits).
local function rows(buf, shown)
  local mark = vim.api.nvim_buf_get_extmark_by_id(buf, ns, shown.mark, { details = true })
  if not mark[1] then
    return nil
  end
  local last = mark[3].end_row or mark[1]
  return mark[1], last
end

--- ]h / [h: the cursor to the next (1) or previous (-1) hunk of this buffer.
function M.jump(dir)
  local buf = vim.api.nvim_get_current_buf()
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  local starts = {}
  for _, shown in ipairs(M.shown[buf] or {}) do
    local first = rows(buf, shown)
    if first then
      table.insert(starts, first)
    end
  end
  table.sort(starts)
  local target
  for i = dir > 0 and 1 or #starts, dir > 0 and #starts or 1, dir do
    if (dir > 0 and starts[i] > row) or (dir < 0 and starts[i] < row) then
      target = starts[i]
      break
    end
  end
  if target then
    vim.api.nvim_win_set_cursor(0, { target + 1, 0 })
  end
end

--- The shown hunk under the cursor of the current window, if any.
function M.at_cursor()
  local buf = vim.api.nvim_get_current_buf()
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  for _, shown in ipairs(M.shown[buf] or {}) do
    local first, last = rows(buf, shown)
    if first and row >= first and row <= last then
      return shown
    end
  end
end

--- gha / ghr: keep or reject the hunk under the cursor.
---@param action 'accept'|'reject'
function M.decide(action)
  local shown = M.at_cursor()
  if not shown then
    return require('acp_lsp.log').notify('acp-lsp: no hunk of an agent change under the cursor')
  end
  local params = {
    sessionId = shown.session_id,
    action = action,
    toolCallId = shown.tool_call_id,
    path = shown.path,
    hunk = shown.hunk.index,
  }
  client.request(req.review_edit, params, function(err, result)
    if err then
      return client.fail('review')(err)
    end
    local file = result and result.files and result.files[1]
    local message = file and file.message and (' (' .. file.message .. ')') or ''
    require('acp_lsp.log').notify(
      ('acp-lsp: hunk %s%s'):format(action == 'accept' and 'kept' or 'rejected', message)
    )
    M.schedule()
  end)
end

--- Refresh when a buffer is opened or shown again.
function M.setup()
  local group = vim.api.nvim_create_augroup('acp_lsp_hunks', { clear = true })
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufWinEnter' }, { group = group, callback = M.schedule })
end

return M
