--- :Acp review: keep or undo an agent's changes (acp/reviewEdit).
local client = require('acp_lsp.client')
local sessions = require('acp_lsp.sessions')
local protocol = require('acp_lsp.protocol')
local log = require('acp_lsp.log')

local req = protocol.requests
local notify, fail = log.notify, client.fail
local M = {}

--- The latest tool call of a session that changed `path` (a diff, or a file in its review:
--- a change seen on disk).
local function tool_call_for_path(session, path)
  local transcript = require('acp_lsp.transcript')
  for i = #session.blocks, 1, -1 do
    local b = session.blocks[i]
    if b.type == 'tool_call' then
      local tc = session.tool_calls[b.id] or {}
      for _, item in ipairs(tc.content or {}) do
        if type(item) == 'table' and item.type == 'diff' and item.path == path then
          return b.id
        end
      end
      for _, f in ipairs(transcript.review_files(tc)) do
        if f.path == path then
          return b.id
        end
      end
    end
  end
end

--- The acp/reviewEdit params the cursor stands for (nil + a message when none).
local function cursor_params(session)
  local item = require('acp_lsp.chat').item_at_cursor()
  if item then
    if item.targets then -- a "files changed" block: a file of it, or (its title) all of them
      return item.targets
    end
    if not item.tool_call_id then
      return nil, 'no tool call under the cursor'
    end
    return { { toolCallId = item.tool_call_id, path = item.path } }
  end
  local fname = vim.api.nvim_buf_get_name(0)
  local id = fname ~= '' and tool_call_for_path(session, fname)
  if not id then
    return nil, 'no agent change to ' .. vim.fn.fnamemodify(fname, ':~:.')
  end
  return { { toolCallId = id, path = fname } }
end

--- :Acp review accept|reject [all]: the change under the cursor (chat: that tool call or
--- file, or a file / the title of a "files changed" block; a file buffer: the latest change
--- to it), or with `all` every change of the last turn.
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
  local targets = { {} }
  if not all then
    local why
    targets, why = cursor_params(session)
    if not targets then
      return notify(why, vim.log.levels.WARN)
    end
  end
  -- One request per tool call, one after the other (a reject undoes the latest change to a
  -- file first); one summary once every answer is in.
  local order = {}
  for i = #targets, 1, -1 do
    table.insert(order, action == 'reject' and targets[i] or targets[#targets - i + 1])
  end
  local parts, applied = {}, true
  local function step(i)
    if i > #order then
      local summary = #parts > 0 and table.concat(parts, ', ') or 'nothing to review'
      sessions.add_notice(session, ('review %s: %s'):format(action, summary))
      if not applied then
        notify(('review %s: %s'):format(action, summary), vim.log.levels.WARN)
      end
      return
    end
    local params = vim.tbl_extend('force', { sessionId = session.id, action = action }, order[i])
    client.request(req.review_edit, params, function(err, result)
      if err then
        applied = false
        fail('review')(err)
      else
        for _, f in ipairs(result and result.files or {}) do
          local part = vim.fn.fnamemodify(tostring(f.path), ':~:.') .. ' ' .. tostring(f.status)
          if f.message then
            part = part .. ' (' .. tostring(f.message) .. ')'
          end
          table.insert(parts, part)
        end
        applied = applied and (result and result.applied) == true
      end
      step(i + 1)
    end)
  end
  step(1)
end

return M
