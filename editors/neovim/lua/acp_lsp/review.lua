--- :Acp review: keep or undo an agent's changes (acp/reviewEdit).
local client = require('acp_lsp.client')
local sessions = require('acp_lsp.sessions')
local protocol = require('acp_lsp.protocol')
local log = require('acp_lsp.log')

local req = protocol.requests
local notify, fail = log.notify, client.fail
local M = {}

--- The latest tool call of a session with a diff of `path`.
local function tool_call_for_path(session, path)
  for i = #session.blocks, 1, -1 do
    local b = session.blocks[i]
    if b.type == 'tool_call' then
      for _, item in ipairs((session.tool_calls[b.id] or {}).content or {}) do
        if type(item) == 'table' and item.type == 'diff' and item.path == path then
          return b.id
        end
      end
    end
  end
end

--- :Acp review accept|reject [all]: the change under the cursor (chat: that tool call or
--- file; a file buffer: the latest change to it), or with `all` every change of the turn.
---@param action 'accept'|'reject'
---@param all boolean?
function M.run(action, all)
  if action ~= 'accept' and action ~= 'reject' then
    return notify('review expects accept|reject', vim.log.levels.ERROR)
  end
  local session = sessions.current()
  if not session then
    return notify('no session', vim.log.levels.WARN)
  end
  local params = { sessionId = session.id, action = action }
  if not all then
    local item = require('acp_lsp.chat').item_at_cursor()
    if item then
      if not item.tool_call_id then
        return notify('no tool call under the cursor', vim.log.levels.WARN)
      end
      params.toolCallId = item.tool_call_id
      params.path = item.path
    else
      local fname = vim.api.nvim_buf_get_name(0)
      local id = fname ~= '' and tool_call_for_path(session, fname)
      if not id then
        return notify('no agent change to ' .. vim.fn.fnamemodify(fname, ':~:.'), vim.log.levels.WARN)
      end
      params.toolCallId, params.path = id, fname
    end
  end
  client.request(req.review_edit, params, function(err, result)
    if err then
      return fail('review')(err)
    end
    local parts = {}
    for _, f in ipairs(result and result.files or {}) do
      local part = vim.fn.fnamemodify(tostring(f.path), ':~:.') .. ' ' .. tostring(f.status)
      if f.message then
        part = part .. ' (' .. tostring(f.message) .. ')'
      end
      table.insert(parts, part)
    end
    local summary = #parts > 0 and table.concat(parts, ', ') or 'nothing to review'
    sessions.add_notice(session, ('review %s: %s'):format(action, summary))
    if not (result and result.applied) then
      notify(('review %s: %s'):format(action, summary), vim.log.levels.WARN)
    end
  end)
end

return M
