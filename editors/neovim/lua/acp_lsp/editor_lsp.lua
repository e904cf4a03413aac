--- The editor tools that are language questions (definition, references, hover, symbols):
--- asked of the language servers attached to the file, never of acp-lsp itself, and their
--- answers converted from each server's position encoding to the acp_lsp client's.
local tools = require('acp_lsp.editor_tools')

local L = {}

-- A file loaded for a question gets its servers from FileType; a server that is starting
-- needs time to initialize.
local ATTACH_MS = 5000

local function servers(buf, method, uninitialized)
  local out = {}
  local acp_name = require('acp_lsp.client').NAME
  for _, c in ipairs(vim.lsp.get_clients({ bufnr = buf, _uninitialized = uninitialized })) do
    if c.name ~= acp_name and (uninitialized or c:supports_method(method, buf)) then
      table.insert(out, c)
    end
  end
  return out
end

local function names(clients)
  return table.concat(
    vim.tbl_map(function(c)
      return c.name
    end, clients),
    ', '
  )
end

--- The buffer of a document with the servers that answer `method`. A file that is not loaded
--- is loaded into a hidden (unlisted) buffer: FileType starts or attaches the servers the user
--- configured for it, exactly as when they open it; it is unloaded after the answer.
local function document(call, uri, method)
  local fname = vim.uri_to_fname(uri)
  local buf = tools.find_buf(fname)
  if not buf or not vim.api.nvim_buf_is_loaded(buf) then
    if not vim.uv.fs_stat(fname) then
      return nil, nil, 'no such file: ' .. fname
    end
    buf = vim.fn.bufadd(fname)
    vim.fn.bufload(buf)
    call.hidden = buf
    tools.sleep(0) -- servers whose root_dir is a function start on the next tick
  end
  local limit = math.min(call.deadline - 1000, vim.uv.now() + ATTACH_MS)
  while true do
    local ready = servers(buf, method)
    local all = servers(buf, method, true)
    local starting = vim.iter(all):any(function(c)
      return not c.initialized
    end)
    if #ready > 0 and not starting then
      return buf, ready
    end
    if not starting or vim.uv.now() >= limit then
      if #ready > 0 then
        return buf, ready
      end
      local short = vim.fn.fnamemodify(fname, ':~:.')
      if #all == 0 then
        return nil, nil, ('no language server is attached to %s'):format(short)
      end
      return nil,
        nil,
        ('no language server attached to %s answers %s (attached: %s)'):format(short, method, names(all))
    end
    tools.sleep(20)
  end
end

--- Send `method` to every client; the answers {client, err, result} that came back in time.
local function ask(call, clients, method, params_for, buf)
  return tools.await(function(done)
    local answers, pending, ids, finished = {}, #clients, {}, false
    local timer
    local function finish()
      if finished then
        return
      end
      finished = true
      if timer then
        timer:stop()
        timer:close()
        timer = nil
      end
      for c, id in pairs(ids) do
        pcall(c.cancel_request, c, id) -- the ones that did not answer in time
      end
      done(answers)
    end
    local function settled()
      pending = pending - 1
      if pending == 0 then
        finish()
      end
    end
    if pending == 0 then
      return finish()
    end
    for _, c in ipairs(clients) do
      local answered = false
      local ok, id = c:request(method, params_for(c), function(err, result)
        answered = true -- maybe before request() returns: in-process servers answer at once
        ids[c] = nil
        table.insert(answers, { client = c, err = err, result = result })
        settled()
      end, buf)
      if not ok then
        settled()
      elseif not answered then
        ids[c] = id
      end
    end
    if pending > 0 and not finished then
      timer = assert(vim.uv.new_timer())
      timer:start(math.max(call.deadline - vim.uv.now(), 0), 0, vim.schedule_wrap(finish))
    end
  end)
end

--- ask() on the servers of a document; the answers or nil + why.
local function ask_document(call, uri, method, extra)
  if type(uri) ~= 'string' or (extra and extra.position == nil) then -- extra: position questions
    return nil, method .. ' needs ' .. (type(uri) ~= 'string' and 'a uri' or 'a position')
  end
  local buf, clients, why = document(call, uri, method)
  if not buf then
    return nil, why
  end
  local answers = ask(call, clients, method, function(c)
    local params = vim.tbl_extend('force', { textDocument = { uri = uri } }, extra or {})
    if params.position then
      params.position = tools.convert(call, uri, params.position, call.enc, c.offset_encoding)
    end
    return params
  end, buf)
  local ok = vim.tbl_filter(function(a)
    return a.err == nil
  end, answers)
  if #ok == 0 then
    local errs = vim.tbl_map(function(a)
      return a.client.name .. ': ' .. tostring(a.err.message or a.err.code)
    end, answers)
    return nil, #errs > 0 and table.concat(errs, '; ') or ('no answer from %s in time'):format(names(clients))
  end
  return ok
end

local function locations(call, args, method, extra)
  local answers, why =
    ask_document(call, args.uri, method, vim.tbl_extend('force', { position = args.position }, extra or {}))
  if not answers then
    return nil, why
  end
  local out, seen = {}, {}
  for _, a in ipairs(answers) do
    local result = a.result
    if type(result) == 'table' and (result.uri or result.targetUri) then
      result = { result }
    end
    for _, loc in ipairs(type(result) == 'table' and result or {}) do
      local uri = loc.targetUri or loc.uri
      local range = loc.targetSelectionRange or loc.range
      if uri and range then
        range = tools.convert_range(call, uri, range, a.client.offset_encoding, call.enc)
        local key = table.concat(
          { uri, range.start.line, range.start.character, range['end'].line, range['end'].character },
          ':'
        )
        if not seen[key] then
          seen[key] = true
          table.insert(out, { uri = uri, range = range })
        end
      end
    end
  end
  return { locations = out }
end

function L.definition(args, call)
  return locations(call, args, 'textDocument/definition')
end

function L.references(args, call)
  return locations(call, args, 'textDocument/references', { context = { includeDeclaration = true } })
end

function L.hover(args, call)
  local answers, why = ask_document(call, args.uri, 'textDocument/hover', { position = args.position })
  if not answers then
    return nil, why
  end
  local parts = {}
  for _, a in ipairs(answers) do
    if type(a.result) == 'table' and a.result.contents then
      local lines = vim.lsp.util.convert_input_to_markdown_lines(a.result.contents)
      local text = vim.trim(table.concat(lines, '\n'))
      if text ~= '' then
        table.insert(parts, text)
      end
    end
  end
  return { contents = table.concat(parts, '\n\n---\n\n') }
end

--- DocumentSymbol trees flattened (containerName = the parent), SymbolInformation as is.
local function flatten(call, uri, enc, symbols, container, out)
  for _, s in ipairs(symbols or {}) do
    local range = s.range or (s.location and s.location.range)
    if range then
      table.insert(out, {
        name = s.name,
        kind = s.kind,
        range = tools.convert_range(call, uri, range, enc, call.enc),
        containerName = container or s.containerName,
      })
    end
    if s.children then
      flatten(call, uri, enc, s.children, s.name, out)
    end
  end
  return out
end

function L.documentSymbols(args, call)
  local answers, why = ask_document(call, args.uri, 'textDocument/documentSymbol')
  if not answers then
    return nil, why
  end
  local out = {}
  for _, a in ipairs(answers) do
    flatten(call, args.uri, a.client.offset_encoding, a.result, nil, out)
  end
  return { symbols = out }
end

function L.workspaceSymbols(args, call)
  local method = 'workspace/symbol'
  local acp_name = require('acp_lsp.client').NAME
  local clients = vim.tbl_filter(function(c)
    return c.name ~= acp_name and c.initialized and c:supports_method(method)
  end, vim.lsp.get_clients())
  if #clients == 0 then
    return nil, 'no running language server answers ' .. method .. ' (open a file of the project first)'
  end
  local answers = ask(call, clients, method, function()
    return { query = args.query or '' }
  end)
  local out = {}
  for _, a in ipairs(answers) do
    for _, s in ipairs(a.err == nil and type(a.result) == 'table' and a.result or {}) do
      local loc = s.location or {}
      local range = loc.range
          and tools.convert_range(call, loc.uri, loc.range, a.client.offset_encoding, call.enc)
        or { start = { line = 0, character = 0 }, ['end'] = { line = 0, character = 0 } }
      table.insert(out, {
        name = s.name,
        kind = s.kind,
        location = { uri = loc.uri, range = range },
        containerName = s.containerName,
      })
    end
  end
  return { symbols = out }
end

return L
