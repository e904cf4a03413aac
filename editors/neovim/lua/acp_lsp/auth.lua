--- Agent login (`auth_required`): pick a method, run it, retry.
local client = require('acp_lsp.client')
local protocol = require('acp_lsp.protocol')
local log = require('acp_lsp.log')

local req = protocol.requests
local notify, fail = log.notify, client.fail
local M = {}

--- The agent needs a login: pick one of its methods, run it, then `retry`. A terminal-type
--- method runs in a terminal split; the user retries after logging in there.
---@param agent string?
---@param methods table[] ACP AuthMethod objects
---@param retry fun()
function M.run(agent, methods, retry)
  if #methods == 0 then
    return notify('the agent requires authentication but offers no method', vim.log.levels.ERROR)
  end
  vim.ui.select(methods, {
    prompt = ('%s needs you to log in'):format(agent or 'the agent'),
    kind = 'acp_auth',
    format_item = function(m)
      return (m.name or m.id) .. (m.description and (' — ' .. m.description) or '')
    end,
  }, function(method)
    if not method then
      return
    end
    local params = { agent = agent, methodId = method.id }
    client.request(req.authenticate, params, function(err, result)
      if err then
        return fail('authenticate')(err)
      end
      if result and result.envVars then
        return notify(result.message or 'set the variables in the agent env', vim.log.levels.WARN)
      end
      local term = result and result.terminal
      if not term then
        return retry()
      end
      vim.cmd('botright new')
      local argv = vim.list_extend({ term.command }, term.args or {})
      local env = type(term.env) == 'table' and next(term.env) and term.env or nil
      vim.fn.jobstart(argv, { term = true, env = env })
      vim.cmd('startinsert')
      notify('log in in the terminal, then run :Acp new again')
    end)
  end)
end

return M
