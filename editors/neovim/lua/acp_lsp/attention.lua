--- What needs the user: while Neovim has lost focus (the terminal reported it: FocusLost), a
--- turn that ended or failed or a permission question waiting is told with vim.notify and the
--- terminal's desktop notification (OSC 777, and OSC 9 for terminals that read that one);
--- `notify_when_away = false` turns it off. The agents' notices (ACP session notices) are told
--- with vim.notify at any time, with their severity.
local M = {}

local BUSY = { running = true, awaiting_permission = true, cancelling = true }
local LEVELS = { warning = vim.log.levels.WARN, error = vim.log.levels.ERROR }
local INFO = vim.log.levels.INFO

M.away = false
local before = {} -- session id -> its last status

--- Track the terminal's focus reports (set up once by setup()).
function M.setup()
  local group = vim.api.nvim_create_augroup('acp_lsp_attention', { clear = true })
  vim.api.nvim_create_autocmd('FocusLost', {
    group = group,
    callback = function()
      M.away = true
    end,
  })
  vim.api.nvim_create_autocmd('FocusGained', {
    group = group,
    callback = function()
      M.away = false
    end,
  })
end

--- What a status change tells a user who is elsewhere (nil: nothing).
---@param label string
---@param was string?
---@param params table acp/sessionStatus params
---@return string?, integer?
function M.status_text(label, was, params)
  if params.status == 'awaiting_permission' then
    if was ~= 'awaiting_permission' then
      return label .. ' waits for your answer to a permission question', vim.log.levels.WARN
    end
    return nil
  end
  if not (was and BUSY[was]) or (params.status ~= 'idle' and params.status ~= 'failed') then
    return nil
  end
  if params.error then
    return ('%s: the turn failed: %s'):format(label, params.error.message or '?'), vim.log.levels.ERROR
  end
  if params.status == 'failed' then
    return label .. ': the agent stopped', vim.log.levels.ERROR
  end
  if params.stopReason == 'cancelled' then
    return nil
  end
  return label .. ': the turn ended', vim.log.levels.INFO
end

--- The terminal's desktop notification (a terminal that knows neither escape ignores them).
local function desktop(text)
  local clean = text:gsub('[%c;]', ' ')
  pcall(
    vim.api.nvim_chan_send,
    vim.v.stderr,
    ('\027]777;notify;acp-lsp;%s\007\027]9;%s\007'):format(clean, clean)
  )
end

---@param params table acp/sessionStatus params
function M.on_status(params)
  local was = before[params.sessionId]
  before[params.sessionId] = params.status
  if not M.away or require('acp_lsp.config').options.notify_when_away == false then
    return
  end
  local session = require('acp_lsp.sessions').by_id[params.sessionId]
  local label = ('%s (%s)'):format(
    session and session.title or 'session',
    session and session.agent or 'agent'
  )
  local text, level = M.status_text(label, was, params)
  if text then
    vim.notify('acp-lsp: ' .. text, level)
    desktop(text)
  end
end

---@param params table acp/sessionUpdate params
function M.on_update(params)
  for _, update in ipairs(params.updates or {}) do
    if update.sessionUpdate == 'notice' and type(update.title) == 'string' then
      local session = require('acp_lsp.sessions').by_id[params.sessionId]
      local text = update.title
      if type(update.description) == 'string' and update.description ~= '' then
        text = text .. ' — ' .. update.description
      end
      vim.notify(
        ('acp-lsp: %s: %s'):format(session and session.agent or 'agent', text),
        LEVELS[update.severity] or INFO
      )
    end
  end
end

return M
