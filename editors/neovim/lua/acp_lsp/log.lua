--- A bounded in-memory log of what the server and the plugin reported (`:Acp log`).
local M = {}

local LIMIT = 2000
local entries = {} ---@type string[]
local first = 1

local LEVELS = { [1] = 'error', [2] = 'warn', [3] = 'info', [4] = 'log', [5] = 'debug' }

--- Add a line; `level` is a name or an LSP MessageType number.
---@param level string|integer
---@param message string
function M.add(level, message)
  if type(level) == 'number' then
    level = LEVELS[level] or tostring(level)
  end
  local stamp = os.date('%H:%M:%S')
  for _, line in ipairs(vim.split(tostring(message), '\n', { plain = true })) do
    table.insert(entries, ('%s %-5s %s'):format(stamp, level, line))
  end
  if #entries - first + 1 > LIMIT then
    local keep = vim.list_slice(entries, #entries - LIMIT + 1)
    entries, first = keep, 1
  end
end

--- Tell the user (and keep it in the log).
---@param msg string
---@param level integer? vim.log.levels
function M.notify(msg, level)
  level = level or vim.log.levels.INFO
  M.add(level >= vim.log.levels.ERROR and 'error' or level >= vim.log.levels.WARN and 'warn' or 'info', msg)
  vim.notify('acp: ' .. msg, level)
end

---@return string[]
function M.lines()
  return vim.list_slice(entries, first)
end

--- Open (or refresh) the log in a scratch buffer.
function M.open()
  local name = 'acp://log'
  local buf = vim.fn.bufnr(name)
  if buf == -1 then
    buf = vim.api.nvim_create_buf(true, true)
    vim.api.nvim_buf_set_name(buf, name)
    vim.bo[buf].filetype = 'acp_log'
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, M.lines())
  vim.bo[buf].modifiable = false
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    vim.cmd('botright split')
    vim.api.nvim_win_set_buf(0, buf)
    win = vim.api.nvim_get_current_win()
  end
  vim.api.nvim_win_set_cursor(win, { math.max(1, vim.api.nvim_buf_line_count(buf)), 0 })
end

return M
