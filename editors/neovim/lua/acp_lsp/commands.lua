--- :Acp {subcommand} — dispatch and completion.
local M = {}

local function actions()
  return require('acp_lsp.actions')
end

---@type table<string, {run: fun(args: string[], cmd: table), complete?: fun(lead: string): string[], desc: string}>
M.subcommands = {
  new = {
    desc = 'new [agent] — start a session (default agent without argument)',
    run = function(args)
      actions().new_session(args[1])
    end,
    complete = function()
      local a = actions()
      if #a.agent_names == 0 and require('acp_lsp.client').get() then
        a.refresh_agents() -- asynchronous: the names are there for the next <Tab>
      end
      return a.agent_names
    end,
  },
  prompt = {
    desc = 'prompt [text] — send text (a range adds the lines as context), or open the input',
    run = function(args, cmd)
      local range
      if cmd.range > 0 then
        range = { buf = vim.api.nvim_get_current_buf(), first = cmd.line1, last = cmd.line2 }
      end
      actions().prompt(table.concat(args, ' '), range)
    end,
  },
  add = {
    desc = 'add file|folder|selection|diagnostics|symbol|image [path] — attach context to the next prompt',
    run = function(args, cmd)
      local range
      if cmd.range > 0 then
        range = { buf = vim.api.nvim_get_current_buf(), first = cmd.line1, last = cmd.line2 }
      end
      require('acp_lsp.context').command(args[1], table.concat(vim.list_slice(args, 2), ' '), range)
    end,
    complete = function()
      return { 'file', 'folder', 'selection', 'diagnostics', 'symbol', 'image' }
    end,
  },
  detach = {
    desc = 'detach [n|all] — remove an attachment of the next prompt (a picker without argument)',
    run = function(args)
      local session = require('acp_lsp.sessions').current()
      if not session then
        return
      end
      local ctx = require('acp_lsp.context')
      if args[1] == 'all' then
        ctx.remove(session.id)
      elseif tonumber(args[1]) then
        ctx.remove(session.id, tonumber(args[1]))
      else
        ctx.pick_remove(session.id)
      end
    end,
  },
  queue = {
    desc = 'queue — the prompts waiting their turn: send now, edit or remove one',
    run = function()
      require('acp_lsp.queue').pick()
    end,
  },
  cancel = {
    desc = 'cancel — cancel the running turn',
    run = function()
      actions().cancel()
    end,
  },
  sessions = {
    desc = 'sessions — pick a session to open or load',
    run = function()
      actions().pick_session()
    end,
  },
  switch = {
    desc = 'switch [split|tab] — pick an open session and show it (beside the chat, in a tab)',
    run = function(args)
      require('acp_lsp.manage').switch(args[1])
    end,
    complete = function()
      return { 'split', 'tab' }
    end,
  },
  rename = {
    desc = 'rename [title] — rename the current session',
    run = function(args)
      require('acp_lsp.manage').rename(table.concat(args, ' '))
    end,
  },
  delete = {
    desc = 'delete — delete the current session (asks first)',
    run = function()
      require('acp_lsp.manage').delete()
    end,
  },
  agents = {
    desc = 'agents [all] — pick an agent and start a session (all: with the ACP Registry)',
    run = function(args)
      actions().pick_agent(args[1] == 'all')
    end,
    complete = function()
      return { 'all' }
    end,
  },
  fork = {
    desc = 'fork — a new session that starts with a copy of the current one (agents that can fork)',
    run = function()
      require('acp_lsp.history').fork()
    end,
  },
  logout = {
    desc = "logout [agent] — log out of the agent (default: the current session's agent)",
    run = function(args)
      require('acp_lsp.history').logout(args[1])
    end,
    complete = function()
      return actions().agent_names
    end,
  },
  history = {
    desc = 'history [search] — stored sessions: open read-only, resume, rename, export, delete',
    run = function(args)
      require('acp_lsp.history').pick(table.concat(args, ' '))
    end,
  },
  follow = {
    desc = 'follow [on|off] — follow-along of the current session',
    run = function(args)
      actions().follow(args[1])
    end,
    complete = function()
      return { 'on', 'off' }
    end,
  },
  mode = {
    desc = 'mode [id] — set the session mode',
    run = function(args)
      actions().mode(args[1])
    end,
    complete = function()
      local session = require('acp_lsp.sessions').current()
      local modes = session and session.modes and session.modes.availableModes or {}
      return vim.tbl_map(function(m)
        return m.id
      end, modes)
    end,
  },
  config = {
    desc = 'config [id value] — set a session config option (model, ...)',
    run = function(args)
      actions().config_option(args[1], args[2])
    end,
    complete = function()
      local session = require('acp_lsp.sessions').current()
      return vim.tbl_map(function(o)
        return o.id
      end, session and session.config_options or {})
    end,
  },
  restart = {
    desc = 'restart — restart the agent of the current session',
    run = function()
      actions().restart_agent()
    end,
  },
  review = {
    desc = 'review accept|reject [all] — the change under the cursor, or the whole turn',
    run = function(args)
      actions().review(args[1], args[2] == 'all')
    end,
    complete = function()
      return { 'accept', 'reject', 'accept all', 'reject all' }
    end,
  },
  chat = {
    desc = 'chat — show or hide the chat of the current session',
    run = function()
      require('acp_lsp.chat').toggle()
    end,
  },
  close = {
    desc = 'close — stop tracking the current session',
    run = function()
      actions().close_session()
    end,
  },
  install = {
    desc = "install — install (again) the server at the plugin's version: uv, else a private venv",
    run = function()
      require('acp_lsp.install').run()
    end,
  },
  log = {
    desc = 'log — what the server and the agents reported',
    run = function()
      require('acp_lsp.log').open()
    end,
  },
}

---@param cmd table the nvim_create_user_command callback argument
function M.run(cmd)
  local args = vim.deepcopy(cmd.fargs)
  local name = table.remove(args, 1)
  if not name then
    local lines = { 'acp_lsp: :Acp {subcommand}' }
    for _, key in ipairs(vim.tbl_keys(M.subcommands)) do
      table.insert(lines, '  ' .. M.subcommands[key].desc)
    end
    table.sort(lines)
    vim.notify(table.concat(lines, '\n'))
    return
  end
  local sub = M.subcommands[name]
  if not sub then
    vim.notify(('acp: unknown subcommand %q'):format(name), vim.log.levels.ERROR)
    return
  end
  sub.run(args, cmd)
end

---@param lead string
---@param line string
---@return string[]
function M.complete(lead, line)
  local words = vim.split(line:gsub('^%S*%s*', '', 1), '%s+', { trimempty = false })
  if #words <= 1 then
    local names = vim.tbl_keys(M.subcommands)
    table.sort(names)
    return vim.tbl_filter(function(n)
      return vim.startswith(n, lead)
    end, names)
  end
  local sub = M.subcommands[words[1]]
  if not sub or not sub.complete then
    return {}
  end
  local prefix = table.concat(vim.list_slice(words, 2, #words - 1), ' ')
  local out = {}
  for _, c in ipairs(sub.complete(lead)) do
    local rest = prefix == '' and c or (vim.startswith(c, prefix .. ' ') and c:sub(#prefix + 2) or nil)
    if rest and not rest:find(' ') and vim.startswith(rest, lead) then
      table.insert(out, rest)
    end
  end
  return out
end

return M
