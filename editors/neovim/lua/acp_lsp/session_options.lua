--- Per-session switches: follow-along, mode, config options (model, ...).
local client = require('acp_lsp.client')
local sessions = require('acp_lsp.sessions')
local protocol = require('acp_lsp.protocol')
local log = require('acp_lsp.log')

local req = protocol.requests
local notify, fail = log.notify, client.fail
local M = {}

--- :Acp follow [on|off]: switch follow-along of the current session (toggle without arg).
---@param arg string?
function M.follow(arg)
  local session = sessions.current()
  if not session then
    return notify('no session', vim.log.levels.WARN)
  end
  local enabled
  if arg == 'on' then
    enabled = true
  elseif arg == 'off' then
    enabled = false
  elseif arg == nil or arg == '' then
    enabled = not session.follow
  else
    return notify('follow expects on|off', vim.log.levels.ERROR)
  end
  client.request(req.set_follow, { sessionId = session.id, enabled = enabled }, function(err, result)
    if err then
      return fail('follow')(err)
    end
    session.follow = result and result.enabled ~= nil and result.enabled or enabled
    sessions.emit(session, { type = 'header' })
    notify('follow-along ' .. (session.follow and 'on' or 'off'))
  end)
end

--- :Acp mode [id]: set the session mode (pick from the agent's modes without an argument).
---@param mode_id string?
function M.mode(mode_id)
  local session = sessions.current()
  if not session then
    return notify('no session', vim.log.levels.WARN)
  end
  local function set(id)
    client.request(req.set_mode, { sessionId = session.id, modeId = id }, function(err)
      if err then
        return fail('mode')(err)
      end
      session.modes = session.modes or { availableModes = {} }
      session.modes.currentModeId = id
      sessions.emit(session, { type = 'header' })
    end)
  end
  if mode_id and mode_id ~= '' then
    return set(mode_id)
  end
  local modes = session.modes and session.modes.availableModes or {}
  if #modes == 0 then
    return notify('this agent offers no modes', vim.log.levels.WARN)
  end
  vim.ui.select(modes, {
    prompt = 'Mode',
    format_item = function(m)
      local current = m.id == session.modes.currentModeId and ' (current)' or ''
      return (m.name or m.id) .. current .. (m.description and (' — ' .. m.description) or '')
    end,
  }, function(choice)
    if choice then
      set(choice.id)
    end
  end)
end

--- :Acp config [id value]: set a session config option (model, ...); without arguments
--- pick the option, then its value.
---@param id string?
---@param value string?
local CATEGORY_LABELS = {
  model = 'Model',
  model_config = 'Model settings',
  thought_level = 'Thinking',
  mode = 'Mode',
}

--- A config option category as a short label (ACP categories; custom `_x` ones by name).
---@param category string?
---@return string?
function M.category_label(category)
  if type(category) ~= 'string' or category == '' then
    return nil
  end
  return CATEGORY_LABELS[category] or (category:gsub('^_', ''):gsub('_', ' '):gsub('^%l', string.upper))
end

function M.config_option(id, value)
  local session = sessions.current()
  if not session then
    return notify('no session', vim.log.levels.WARN)
  end
  local options = session.config_options or {}
  local function set(option, v)
    local params = { sessionId = session.id, configId = option.id, value = v }
    client.request(req.set_config_option, params, function(err, result)
      if err then
        return fail('config')(err)
      end
      if result and result.configOptions then
        session.config_options = result.configOptions
      end
      sessions.emit(session, { type = 'header' })
      notify(('%s: %s'):format(option.name or option.id, tostring(v)))
    end)
  end
  local function values(option)
    local out = {}
    for _, o in ipairs(option.options or {}) do
      -- Options may come grouped: {group, name, options = {...}}.
      for _, item in ipairs(o.options or { o }) do
        table.insert(out, item)
      end
    end
    return out
  end
  local function choose_value(option)
    if option.type == 'boolean' then
      return set(option, not option.currentValue)
    end
    vim.ui.select(values(option), {
      prompt = option.name or option.id,
      format_item = function(item)
        local current = item.value == option.currentValue and ' (current)' or ''
        return (item.name or item.value) .. current
      end,
    }, function(item)
      if item then
        set(option, item.value)
      end
    end)
  end
  local byid = {}
  for _, option in ipairs(options) do
    byid[option.id] = option
  end
  if id and byid[id] then
    if value == nil then
      return choose_value(byid[id])
    end
    local v = value
    if byid[id].type == 'boolean' then
      v = value == 'true' or value == 'on'
    end
    return set(byid[id], v)
  elseif id then
    return notify(('unknown config option %q'):format(id), vim.log.levels.ERROR)
  end
  local known = vim.tbl_filter(function(o)
    return o.type == 'select' or o.type == 'boolean'
  end, options)
  if #known == 0 then
    return notify('this agent offers no config options', vim.log.levels.WARN)
  end
  -- Grouped by the agent's category (model, thinking, …), in the order the agent gave within one.
  local rank = { model = 1, model_config = 2, thought_level = 3, mode = 4 }
  local order = {}
  for i, o in ipairs(known) do
    order[o] = i
  end
  table.sort(known, function(a, b)
    local ra, rb = rank[a.category] or 9, rank[b.category] or 9
    if ra ~= rb then
      return ra < rb
    end
    return order[a] < order[b]
  end)
  vim.ui.select(known, {
    prompt = 'Config option',
    format_item = function(o)
      local group = M.category_label(o.category)
      local prefix = group and ('[' .. group .. '] ') or ''
      return ('%s%s: %s'):format(prefix, o.name or o.id, tostring(o.currentValue))
    end,
  }, function(option)
    if option then
      choose_value(option)
    end
  end)
end

return M
