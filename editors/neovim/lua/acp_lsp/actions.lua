--- What the commands and keymaps do: each action sends acp/* requests and updates the view.
local client = require('acp_lsp.client')
local sessions = require('acp_lsp.sessions')
local protocol = require('acp_lsp.protocol')

local req = protocol.requests
local M = {}

local notify, fail = require('acp_lsp.log').notify, client.fail

--- Show a snapshot's session in the chat.
---@param snapshot table
---@param opts? {focus?: boolean}
---@return acp_lsp.Session
local function open_snapshot(snapshot, opts)
  local session = sessions.load_snapshot(snapshot)
  require('acp_lsp.chat').open(session, opts)
  return session
end

--- Start a session; cb(session) once its chat is open.
---@param agent string?
---@param opts? {focus?: boolean, cwd?: string}
---@param cb? fun(session: acp_lsp.Session)
function M.new_session(agent, opts, cb)
  opts = opts or {}
  local params = { cwd = opts.cwd or vim.fn.getcwd() }
  if agent and agent ~= '' then
    params.agent = agent
  end
  client.request(req.new_session, params, function(err, snapshot)
    if err and err.code == protocol.errors.auth_required then
      return require('acp_lsp.auth').run(agent, err.data and err.data.authMethods or {}, function()
        M.new_session(agent, opts, cb)
      end)
    end
    if err then
      return fail('new session')(err)
    end
    local session = open_snapshot(snapshot, { focus = opts.focus ~= false })
    if opts.focus ~= false then
      vim.cmd('startinsert')
    end
    if cb then
      cb(session)
    end
  end)
end

--- Run fn(session) on the current session, starting one if there is none.
---@param fn fun(session: acp_lsp.Session)
local function with_session(fn)
  local session = sessions.current()
  if session and session.status ~= 'closed' and session.status ~= 'failed' then
    fn(session)
  else
    M.new_session(nil, { focus = false }, fn)
  end
end

local BUSY = { running = true, awaiting_permission = true, cancelling = true }

--- Send a prompt to a session; while its turn runs, the prompt waits its turn (queue.lua).
---@param session acp_lsp.Session
---@param text string
---@param attachments? {block: table, label: string}[]
---@return boolean sent
function M.send(session, text, attachments)
  local prompt = require('acp_lsp.chat.prompt').build_prompt(text, session.cwd, attachments)
  if BUSY[session.status] then
    require('acp_lsp.queue').add(session, text, prompt) -- shown in the chat when it starts
    return true
  end
  for _, a in ipairs(attachments or {}) do
    text = text .. '\n📎 ' .. a.label
  end
  sessions.add_user_prompt(session, text)
  client.request(req.prompt, { sessionId = session.id, prompt = prompt }, function(err)
    if err then
      local msg = client.format_error(err)
      if err.code == protocol.errors.request_cancelled then
        msg = 'cancelled'
      end
      sessions.add_notice(session, 'error: ' .. msg)
    end
  end)
  return true
end

--- :Acp prompt [text]: send text (with the range as context), or open the prompt input.
---@param text string?
---@param range? {buf: integer, first: integer, last: integer}
function M.prompt(text, range)
  with_session(function(session)
    local prompt = require('acp_lsp.chat.prompt')
    if range then
      prompt.attach_range(session.id, range.buf, range.first, range.last)
    end
    if text and text ~= '' then
      require('acp_lsp.chat').open(session)
      if M.send(session, text, prompt.attachments[session.id]) then
        prompt.attachments[session.id] = nil
      end
      prompt.refresh_winbar(session.id)
    else
      require('acp_lsp.chat').focus_input(session.id)
    end
  end)
end

function M.cancel()
  local session = sessions.current()
  if not session then
    return notify('no session', vim.log.levels.WARN)
  end
  client.request(req.cancel, { sessionId = session.id }, function(err)
    if err then
      fail('cancel')(err)
    end
  end)
end

--- :Acp sessions: pick a session of any agent; live ones open, others load.
function M.pick_session()
  client.request(req.list_sessions, {}, function(err, result)
    if err then
      return fail('sessions')(err)
    end
    local items = result and result.sessions or {}
    if #items == 0 then
      return notify('no sessions')
    end
    vim.ui.select(items, {
      prompt = 'ACP sessions',
      kind = 'acp_session',
      format_item = function(s)
        local parts = { s.agent or '?', s.title or s.sessionId }
        if s.updatedAt then
          table.insert(parts, s.updatedAt)
        end
        if s.live then
          table.insert(parts, '(live)')
        end
        return table.concat(parts, ' · ')
      end,
    }, function(choice)
      if not choice then
        return
      end
      local known = sessions.by_id[choice.sessionId]
      if known and choice.live then
        require('acp_lsp.chat').open(known, { focus = true })
        return
      end
      local method = choice.live and req.get_session or req.load_session
      local params = choice.live and { sessionId = choice.sessionId }
        or { agent = choice.agent, sessionId = choice.sessionId, cwd = vim.fn.getcwd() }
      client.request(method, params, function(e, snapshot)
        if e then
          return fail('load session')(e)
        end
        open_snapshot(snapshot, { focus = true })
      end)
    end)
  end)
end

-- Kept here for the keymaps and commands that call them as actions.
function M.follow(arg)
  require('acp_lsp.session_options').follow(arg)
end

function M.mode(mode_id)
  require('acp_lsp.session_options').mode(mode_id)
end

function M.config_option(id, value)
  require('acp_lsp.session_options').config_option(id, value)
end

---@param action 'accept'|'reject'
---@param all boolean?
function M.review(action, all)
  require('acp_lsp.review').run(action, all)
end

--- :Acp restart: start the current session's agent again (after a crash).
function M.restart_agent()
  local session = sessions.current()
  local agent = session and session.agent
  if not agent then
    return notify('no session', vim.log.levels.WARN)
  end
  client.request(req.restart_agent, { agent = agent }, function(err)
    if err then
      return fail('restart')(err)
    end
    notify(agent .. ' restarted; :Acp new starts a session')
  end)
end

--- :Acp close: stop tracking the current session and drop its chat.
function M.close_session()
  local session = sessions.current()
  if not session then
    return notify('no session', vim.log.levels.WARN)
  end
  client.request(req.close_session, { sessionId = session.id }, function(err)
    if err then
      return fail('close')(err)
    end
    require('acp_lsp.manage').forget(session)
  end)
end

--- Agent names for completion (cached after the first acp/listAgents).
M.agent_names = {}

function M.refresh_agents(cb)
  client.request(req.list_agents, {}, function(err, result)
    if not err and result then
      M.agent_names = vim.tbl_map(function(a)
        return a.name
      end, result.agents or {})
    end
    if cb then
      cb(err, result)
    end
  end)
end

--- One line of the agent picker: name, version, where it comes from, state, description.
---@param a table an acp/listAgents entry
---@return string
function M.agent_label(a)
  local flags = {}
  if a.default then
    table.insert(flags, 'default')
  end
  if a.running then
    table.insert(flags, 'running')
  end
  if a.source == 'registry' then
    table.insert(flags, 'registry')
  end
  if a.installed == false then
    table.insert(flags, 'not installed')
  end
  if a.error then
    table.insert(flags, 'failed to start')
  end
  local line = a.title or a.name
  if a.version then
    line = line .. ' ' .. a.version
  end
  line = ('%s [%s]'):format(line, a.name)
  if #flags > 0 then
    line = line .. ' (' .. table.concat(flags, ', ') .. ')'
  end
  if a.description and a.description ~= '' then
    line = line .. ' — ' .. a.description
  end
  return line
end

--- :Acp agents [all]: pick an agent and start a session with it. `all` adds the agents of
--- the ACP Registry; one that is not installed yet installs on pick ($/progress meanwhile).
---@param all boolean?
function M.pick_agent(all)
  client.request(req.list_agents, { includeRegistry = all and true or nil }, function(err, result)
    if err then
      return fail('agents')(err)
    end
    local agents = result and result.agents or {}
    if not all then
      M.agent_names = vim.tbl_map(function(a)
        return a.name
      end, agents)
    end
    vim.ui.select(agents, {
      prompt = all and 'Agent (configured and ACP Registry)' or 'Agent',
      kind = 'acp_agent',
      format_item = M.agent_label,
    }, function(choice)
      if not choice then
        return
      end
      if choice.installed == false then
        notify(('installing %s %s…'):format(choice.title or choice.name, choice.version or ''))
      end
      M.new_session(choice.name)
    end)
  end)
end

return M
