--- acp/documentsSynced: an agent changed files on disk (its own edit, a shell command) and the
--- server brought their open buffers to the new disk text, the user's unsaved edits merged on
--- top (a versioned workspace/applyEdit, undoable). Neovim still holds the file's old time, so
--- `:w` would answer "WARNING: The file has been changed since reading it!!!" and `:checktime`
--- W11/W12. This makes Neovim take the new disk state as read, the buffer's text kept.
---
--- How: Neovim stores a file's time as "read" (what `:w` compares) only when it reads the file
--- into the buffer or writes it (a `:checktime` that finds it changed updates another time,
--- which `:w` does not look at). So the buffer is reloaded, as 'autoread' reloads a clean
--- buffer: first the buffer goes back to its text before the server's edit (joined to that
--- edit's undo block: a step that changes nothing), then `:checktime` reloads the file (an
--- undo step of its own, as 'undoreload' makes it), then the user's unsaved edits go back on
--- top, joined to the reload's step. One `u` then undoes the agent's change and keeps the
--- user's edits, as the server's edit did. The file is read once: the reload is the only read
--- ('autoread' is off for the buffer meanwhile), and a versioned edit Neovim already applied
--- by its own reload is refused by the core handler.
local log = require('acp_lsp.log')

local M = {}

--- Text of buffers just before the server's last edit of them: {tick = changedtick after
--- the edit, lines}. The edit's own undo block leads back there.
---@type table<integer, {tick: integer, lines: string[]}>
local before_edit = {}

--- workspace/applyEdit is about to change these buffers: remember their text.
---@param bufs integer[]
---@return table<integer, string[]>
function M.snapshot(bufs)
  local out = {}
  for _, buf in ipairs(bufs) do
    if vim.api.nvim_buf_is_loaded(buf) then
      out[buf] = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    end
  end
  return out
end

--- The edit landed: keep the texts of the buffers it changed.
---@param snapshots table<integer, string[]>
---@param ticks table<integer, integer> changedtick of each buffer before the edit
function M.edited(snapshots, ticks)
  for buf in pairs(before_edit) do -- texts of buffers gone since
    if not vim.api.nvim_buf_is_loaded(buf) then
      before_edit[buf] = nil
    end
  end
  for buf, lines in pairs(snapshots) do
    if vim.api.nvim_buf_is_valid(buf) and vim.b[buf].changedtick ~= ticks[buf] then
      before_edit[buf] = { tick = vim.b[buf].changedtick, lines = lines }
    end
  end
end

--- The loaded buffer of a file uri, or nil (none is created).
---@param uri string
---@return integer?
local function loaded_buffer(uri)
  local ok, fname = pcall(vim.uri_to_fname, uri)
  if not ok then
    return nil
  end
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.api.nvim_buf_get_name(buf) == fname then
      return buf
    end
  end
end

--- Replace the hunks where `from` differs from `to` (the buffer holds `from`), last first.
---@param buf integer
---@param from string[]
---@param to string[]
local function patch(buf, from, to)
  if vim.deep_equal(from, to) then
    return
  end
  pcall(vim.cmd.undojoin) -- E790 right after an undo: then a step of its own
  local a, b = table.concat(from, '\n') .. '\n', table.concat(to, '\n') .. '\n'
  local diff_fn = vim.text and vim.text.diff or vim.diff
  local hunks = diff_fn(a, b, { result_type = 'indices' }) --[[@as integer[][] ]]
  for i = #hunks, 1, -1 do
    local sa, ca, sb, cb = unpack(hunks[i])
    local start = ca == 0 and sa or sa - 1 -- an insertion goes after line sa
    vim.api.nvim_buf_set_lines(buf, start, start + ca, false, vim.list_slice(to, sb, sb + cb - 1))
  end
end

--- `:checktime` of the current buffer that reloads it if the file changed since Neovim last
--- looked. Returns whether it reloaded.
---@param buf integer
---@return boolean
local function reload(buf)
  local autoread = vim.api.nvim_get_option_value('autoread', { scope = 'local', buf = buf })
  vim.bo[buf].autoread = false -- the choice is ours (FileChangedShell), not 'autoread''s
  local reloaded = false
  local id = vim.api.nvim_create_autocmd('FileChangedShell', {
    buffer = buf,
    once = true,
    desc = 'acp-lsp: take the file the agent changed as read',
    callback = function()
      reloaded = vim.v.fcs_reason ~= 'deleted'
      vim.v.fcs_choice = reloaded and 'reload' or ''
    end,
  })
  local ok, err = pcall(vim.cmd, 'silent checktime ' .. buf)
  pcall(vim.api.nvim_del_autocmd, id)
  if autoread == nil then
    vim.cmd('setlocal autoread<')
  else
    vim.bo[buf].autoread = autoread
  end
  if not ok then
    log.add('warn', ('documentsSynced: checktime %s: %s'):format(vim.api.nvim_buf_get_name(buf), err))
  end
  return reloaded
end

--- Take the file's current disk state as read by `buf`, keeping the buffer's text. Returns
--- whether the buffer now equals the file (it is then unmodified).
---@param buf integer
---@return boolean
function M.mark_read(buf)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local before = before_edit[buf]
  before_edit[buf] = nil
  -- Only while nothing changed the buffer since the server's edit.
  local base = before and before.tick == vim.b[buf].changedtick and before.lines or lines
  local views = {}
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    views[win] = vim.api.nvim_win_call(win, vim.fn.winsaveview)
    -- A reload fixes only the current window's cursor: another one left past the new last
    -- line breaks the next change (E315). Each view comes back at the end.
    vim.api.nvim_win_set_cursor(win, { 1, 0 })
  end
  vim.api.nvim_buf_call(buf, function()
    local modified = vim.bo[buf].modified
    patch(buf, lines, base)
    vim.bo[buf].modified = false
    if reload(buf) then
      patch(buf, vim.api.nvim_buf_get_lines(buf, 0, -1, false), lines)
    else
      -- Nothing read (Neovim had seen this disk state already): the text as it was.
      patch(buf, base, lines)
      local ok, disk = pcall(vim.fn.readfile, vim.api.nvim_buf_get_name(buf))
      vim.bo[buf].modified = modified and not (ok and vim.deep_equal(disk, lines))
    end
  end)
  for win, view in pairs(views) do
    if vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_call(win, function()
        vim.fn.winrestview(view)
      end)
    end
  end
  return not vim.bo[buf].modified
end

--- The server's warnings of a conflict (window/showMessage) waiting for their
--- acp/documentsSynced entry, by file name: {lines, show = the fallback timer}.
---@type table<string, {lines: string, timer: uv.uv_timer_t}>
local conflicts = {}
M.CONFLICT_WAIT_MS = 3000

--- window/showMessage: the server's warning that an agent's change on disk conflicts with
--- unsaved edits (acp_lsp/editor/disk_sync.py) is told once, by acp/documentsSynced with
--- Neovim's wording; `show` runs only when that does not come within CONFLICT_WAIT_MS.
--- Returns whether the message was such a warning.
---@param message string
---@param show fun()
---@return boolean
function M.server_warning(message, show)
  local file, lines =
    message:match('^acp%-lsp: .- changed (.-) on disk where you have unsaved edits %(lines ([^)]*)%)')
  if not file then
    return false
  end
  local old = conflicts[file]
  if old then
    old.timer:stop()
    old.timer:close()
  end
  local timer = assert(vim.uv.new_timer())
  conflicts[file] = { lines = lines, timer = timer }
  timer:start(
    M.CONFLICT_WAIT_MS,
    0,
    vim.schedule_wrap(function()
      if conflicts[file] and conflicts[file].timer == timer then
        conflicts[file] = nil
        timer:close()
        show()
      end
    end)
  )
  return true
end

--- The lines of a conflict the server warned about (its warning is then not shown).
---@param file string base name
---@return string?
local function take_conflict(file)
  local pending = conflicts[file]
  if not pending then
    return nil
  end
  conflicts[file] = nil
  pending.timer:stop()
  pending.timer:close()
  return pending.lines
end

--- acp/documentsSynced {sessionId, documents: [{uri, version, matchesDisk?, conflict?}]}
---@param params table
function M.synced(params)
  for _, doc in ipairs(params and params.documents or {}) do
    local buf = type(doc.uri) == 'string' and loaded_buffer(doc.uri)
    if buf then
      local name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(buf), ':~:.')
      if doc.conflict == true then
        local lines = take_conflict(vim.fn.fnamemodify(name, ':t'))
        log.notify(
          (
            '%s changed on disk where you have unsaved edits that conflict%s: your buffer was kept. '
            .. ':w would overwrite the change (:e! takes the disk text, :Acp review shows it)'
          ):format(name, lines and (' (lines ' .. lines .. ')') or ''),
          vim.log.levels.WARN
        )
      else
        local equal = M.mark_read(buf)
        log.add(
          'info',
          ('synced %s with the disk (%s)'):format(name, equal and 'unmodified' or 'unsaved edits kept')
        )
      end
    end
  end
end

return M
