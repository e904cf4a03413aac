--- acp/elicitation: an agent's structured question, asked as a sequence of prompts
--- (vim.ui.select for enums and booleans, vim.ui.input for the rest). Runs in the coroutine
--- Neovim gives every server request, so the chat keeps streaming while the user answers.
local log = require('acp_lsp.log')

local M = {}

local CANCEL = { action = 'cancel' }

--- Choices of a field answered by picking, or nil when it is typed.
---@param field table
---@return {label: string, value: any}[]?
function M.choices(field)
  if field.type == 'boolean' then
    return { { label = 'Yes', value = true }, { label = 'No', value = false } }
  end
  if type(field.enum) == 'table' then
    return vim.tbl_map(function(v)
      return { label = tostring(v), value = v }
    end, field.enum)
  end
  if type(field.oneOf) == 'table' then
    return vim.tbl_map(function(o)
      return { label = o.title or tostring(o.const), value = o.const }
    end, field.oneOf)
  end
  return nil
end

--- A typed answer as the field's JSON type (nil when it does not parse).
---@param field table
---@param text string
---@return any
function M.parse(field, text)
  if field.type == 'number' or field.type == 'integer' then
    local n = tonumber(text)
    if n and field.type == 'integer' and n % 1 ~= 0 then
      return nil
    end
    return n
  end
  if field.type == 'array' then
    return vim.split(text, '%s*,%s*', { trimempty = true })
  end
  return text
end

--- Wait inside the request coroutine for a callback-style UI call.
local function await(co, start)
  start(function(value)
    vim.schedule(function()
      coroutine.resume(co, value)
    end)
  end)
  return coroutine.yield()
end

--- Handler body; must run inside the server-request coroutine.
---@param params table {sessionId?, agent, toolCallId?, request}
---@return table ACP CreateElicitationResponse
function M.request(params)
  local co, is_main = coroutine.running()
  if not co or is_main then
    return CANCEL
  end
  local request = params.request or {}
  local heading = ('%s: %s'):format(params.agent or 'agent', request.message or '')
  if request.mode == 'url' then
    local choice = await(co, function(done)
      vim.ui.select({ 'Open', 'Decline' }, { prompt = heading .. ' ' .. tostring(request.url) }, done)
    end)
    if choice == 'Open' then
      vim.ui.open(request.url)
      return { action = 'accept' }
    end
    return { action = choice == 'Decline' and 'decline' or 'cancel' }
  end
  local schema = request.requestedSchema or {}
  local required = {}
  for _, name in ipairs(schema.required or {}) do
    required[name] = true
  end
  local names = vim.tbl_keys(schema.properties or {})
  table.sort(names)
  local content = vim.empty_dict()
  for _, name in ipairs(names) do
    local field = schema.properties[name]
    local label = ('%s — %s%s'):format(heading, field.title or name, required[name] and '' or ' (optional)')
    local choices = M.choices(field)
    if choices then
      local picked = await(co, function(done)
        vim.ui.select(choices, {
          prompt = label,
          format_item = function(c)
            return c.label
          end,
        }, done)
      end)
      if not picked then
        return CANCEL
      end
      content[name] = picked.value
    else
      local text = await(co, function(done)
        vim.ui.input({ prompt = label .. ': ', default = field.default and tostring(field.default) }, done)
      end)
      if text == nil then
        return CANCEL
      end
      if text ~= '' or required[name] then
        local value = M.parse(field, text)
        if value == nil then
          log.notify(('%s: not a %s: %s'):format(name, field.type, text), vim.log.levels.WARN)
          return CANCEL
        end
        content[name] = value
      end
    end
  end
  return { action = 'accept', content = content }
end

--- acp/elicitationComplete: a URL question finished on the agent's side.
---@param params table {agent, elicitationId, sessionId?}
function M.complete(params)
  log.add('info', ('%s: elicitation %s completed'):format(params.agent, params.elicitationId))
end

return M
