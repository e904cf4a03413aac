--- acp/editorTool {sessionId, tool, arguments}: the editor's intelligence for agents (the
--- bridge serves it to them as MCP tools). Answers use LSP conventions with positions in the
--- acp_lsp client's offset encoding. Language questions are in editor_lsp.lua, openDiff in
--- editor_diff.lua.
local M = {}

--- What this front end answers (capabilities.experimental.acp.editorTools).
M.TOOLS = {
  'diagnostics',
  'definition',
  'references',
  'hover',
  'documentSymbols',
  'workspaceSymbols',
  'openEditors',
  'selection',
  'openDiff',
}

--- How long a tool may take: the bridge gives up after editorTools.timeoutS (10 s by default),
--- so answer a second before that with what the servers said so far.
---@return integer ms
local function budget_ms()
  local settings = require('acp_lsp.config').options.settings or {}
  local timeout = vim.tbl_get(settings, 'editorTools', 'timeoutS')
  timeout = type(timeout) == 'number' and timeout > 0 and timeout or 10
  return math.max(math.floor(timeout * 1000) - 1000, math.floor(timeout * 500))
end

local codes = vim.lsp.protocol.ErrorCodes

--- Resume the current coroutine once `start(done)` calls done(...); returns done's arguments.
---@param start fun(done: fun(...))
function M.await(start)
  local co = coroutine.running()
  local out, waiting
  start(function(...)
    if out then
      return
    end
    out = vim.F.pack_len(...)
    if waiting then
      vim.schedule(function()
        coroutine.resume(co)
      end)
    end
  end)
  if not out then
    waiting = true
    coroutine.yield()
  end
  return vim.F.unpack_len(out)
end

function M.sleep(ms)
  M.await(function(done)
    vim.defer_fn(done, ms)
  end)
end

---@param buf integer
---@return boolean
function M.is_file(buf)
  return vim.api.nvim_buf_is_valid(buf) and vim.bo[buf].buftype == '' and vim.api.nvim_buf_get_name(buf) ~= ''
end

--- The buffer of a file (loaded or not), by exact name or by the real path.
---@param fname string
---@return integer?
function M.find_buf(fname)
  local bufs = vim.api.nvim_list_bufs()
  for _, buf in ipairs(bufs) do
    if vim.api.nvim_buf_get_name(buf) == fname then
      return buf
    end
  end
  -- then by real path: a file system call per buffer, so only when the name is not found
  local real = vim.uv.fs_realpath(fname)
  for _, buf in ipairs(real and bufs or {}) do
    local name = vim.api.nvim_buf_get_name(buf)
    if name ~= '' and vim.uv.fs_realpath(name) == real then
      return buf
    end
  end
end

--- The file the user works in: the current window's, else the previous window's, else the
--- most recently used listed one (the chat may have the focus).
---@return integer?
function M.active_buf()
  local cur = vim.api.nvim_get_current_buf()
  if M.is_file(cur) then
    return cur
  end
  local prev = vim.fn.winbufnr(vim.fn.winnr('#'))
  if prev > 0 and M.is_file(prev) then
    return prev
  end
  local best, used = nil, -1
  for _, info in ipairs(vim.fn.getbufinfo({ buflisted = 1, bufloaded = 1 })) do
    if M.is_file(info.bufnr) and info.lastused > used then
      best, used = info.bufnr, info.lastused
    end
  end
  return best
end

local function uri_of(buf)
  return vim.uri_from_fname(vim.api.nvim_buf_get_name(buf))
end

---@class acp_lsp.EditorToolCall
---@field session_id string?
---@field enc string the acp_lsp client's offset encoding
---@field deadline integer vim.uv.now() by which to answer
---@field lines table<string, string[]> file lines by uri (position conversion)
---@field hidden integer? a buffer loaded for this call, unloaded after it

--- Line `row` (0-based) of a document: its buffer when loaded, else the file on disk.
local function line_of(call, uri, row)
  local lines = call.lines[uri]
  if not lines then
    local ok, fname = pcall(vim.uri_to_fname, uri)
    local buf = ok and M.find_buf(fname)
    if buf and vim.api.nvim_buf_is_loaded(buf) then
      lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    else
      local read, got = pcall(vim.fn.readfile, ok and fname or '')
      lines = read and got or {}
    end
    call.lines[uri] = lines
  end
  return lines[row + 1] or ''
end

--- A position from one encoding to another (utf-8 means byte columns).
function M.convert(call, uri, pos, from, to)
  if from == to or pos.character == 0 then
    return { line = pos.line, character = pos.character }
  end
  local line = line_of(call, uri, pos.line)
  local byte = from == 'utf-8' and math.min(pos.character, #line)
    or vim.str_byteindex(line, from, pos.character, false)
  local char = to == 'utf-8' and byte or vim.str_utfindex(line, to, byte, false)
  return { line = pos.line, character = char }
end

function M.convert_range(call, uri, range, from, to)
  return {
    start = M.convert(call, uri, range.start, from, to),
    ['end'] = M.convert(call, uri, range['end'], from, to),
  }
end

-- diagnostics, openEditors, selection: what Neovim itself knows.

local function diagnostic(call, uri, d)
  local range = M.convert_range(call, uri, {
    start = { line = d.lnum, character = d.col },
    ['end'] = { line = d.end_lnum or d.lnum, character = d.end_col or d.col },
  }, 'utf-8', call.enc)
  return {
    uri = uri,
    range = range,
    severity = d.severity,
    source = d.source,
    code = d.code,
    message = d.message,
  }
end

local tools = {}

--- Whether `path` is one of `folders` or inside one (nil folders: anywhere).
local function inside(path, folders)
  if not folders then
    return true
  end
  for _, folder in ipairs(folders) do
    if vim.fs.relpath(folder, path) then
      return true
    end
  end
  return false
end

--- The worst `limit` of `found` (diagnostics in the editor's order), kept in that order:
--- errors first, then the editor's order (as the bridge caps). One pass to count each
--- severity, one to keep: no sort of thousands.
local function worst(found, limit)
  if not limit or #found <= limit then
    return found
  end
  local counts = { 0, 0, 0, 0 }
  for _, d in ipairs(found) do
    local sev = d.severity or 1
    counts[sev] = (counts[sev] or 0) + 1
  end
  -- every diagnostic below `last` in severity is kept, and the first `room` of `last`
  local last, room = 4, limit
  for sev = 1, 4 do
    if room <= counts[sev] then
      last = sev
      break
    end
    room = room - counts[sev]
  end
  local out = {}
  for _, d in ipairs(found) do
    local sev = d.severity or 1
    if sev < last then
      out[#out + 1] = d
    elseif sev == last and room > 0 then
      out[#out + 1] = d
      room = room - 1
    end
  end
  return out
end

--- {uri?, limit?, folders?}: the diagnostics Neovim holds for a file (none when it is not
--- open: the editor has not checked it), or for every file buffer inside `folders`; at most
--- `limit` of them, the worst, with `total`: how many there were.
function tools.diagnostics(args, call)
  local found = {}
  if args.uri then
    local buf = M.find_buf(vim.uri_to_fname(args.uri))
    if not buf or not vim.api.nvim_buf_is_loaded(buf) then
      return { diagnostics = {}, note = 'the file is not open in the editor, which has not checked it' }
    end
    found = vim.diagnostic.get(buf)
  else
    local folders = type(args.folders) == 'table' and args.folders or nil
    local wanted = {}
    for _, buf in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(buf) and M.is_file(buf) then
        wanted[buf] = inside(vim.api.nvim_buf_get_name(buf), folders)
      end
    end
    -- one call for every buffer's (a call per buffer costs more than the whole cut)
    for _, d in ipairs(vim.diagnostic.get()) do
      if wanted[d.bufnr] then
        found[#found + 1] = d
      end
    end
  end
  local limit = type(args.limit) == 'number' and args.limit >= 1 and math.floor(args.limit) or nil
  -- cut before converting: a workspace may hold thousands
  local out, uris = {}, {}
  for _, d in ipairs(worst(found, limit)) do
    local buf = d.bufnr
    local uri = uris[buf]
    if not uri then
      -- once per buffer: its URI, its lines
      uri = uri_of(buf)
      uris[buf] = uri
      call.lines[uri] = call.lines[uri] or vim.api.nvim_buf_get_lines(buf, 0, -1, false)
    end
    out[#out + 1] = diagnostic(call, uri, d)
  end
  return { diagnostics = out, total = #found }
end

function tools.openEditors()
  local active = M.active_buf()
  local out = {}
  for _, info in ipairs(vim.fn.getbufinfo({ buflisted = 1, bufloaded = 1 })) do
    local buf = info.bufnr
    if M.is_file(buf) then
      table.insert(out, {
        uri = uri_of(buf),
        languageId = vim.bo[buf].filetype,
        dirty = vim.bo[buf].modified,
        active = buf == active,
      })
    end
  end
  return { editors = out }
end

--- The last visual selection of the file the user works in (the one being made, in Visual
--- mode), or null.
function tools.selection(_, call)
  local buf = M.active_buf()
  if not buf then
    return { selection = vim.NIL }
  end
  local mode = vim.fn.mode()
  local s, e, vmode
  if buf == vim.api.nvim_get_current_buf() and (mode == 'v' or mode == 'V' or mode == '\22') then
    local v, dot = vim.fn.getpos('v'), vim.fn.getpos('.')
    s, e, vmode = { v[2], v[3] - 1 }, { dot[2], dot[3] - 1 }, mode
  else
    s, e = vim.api.nvim_buf_get_mark(buf, '<'), vim.api.nvim_buf_get_mark(buf, '>')
    vmode = vim.fn.visualmode()
  end
  if s[1] == 0 or e[1] == 0 or s[1] > vim.api.nvim_buf_line_count(buf) then
    return { selection = vim.NIL }
  end
  if e[1] < s[1] or (e[1] == s[1] and e[2] < s[2]) then
    s, e = e, s
  end
  local lines = vim.api.nvim_buf_get_lines(buf, s[1] - 1, e[1], false)
  local first, last = lines[1] or '', lines[#lines] or ''
  local scol, ecol
  if vmode == 'V' then
    scol, ecol = 0, #last
  else
    scol = math.min(s[2], #first)
    ecol = math.min(e[2], math.max(#last - 1, 0))
    ecol = #last == 0 and 0 or ecol + vim.str_utf_end(last, ecol + 1) + 1 -- exclusive end
    if s[1] == e[1] and scol > ecol then -- the line got shorter since
      scol = ecol
    end
  end
  local text
  if vmode == 'V' then
    text = table.concat(lines, '\n')
  elseif vmode == '\22' then -- a block: its lines; the range spans its corners
    local region = vim.fn.getregion({ buf, s[1], s[2] + 1, 0 }, { buf, e[1], e[2] + 1, 0 }, { type = '\22' })
    text = table.concat(region, '\n')
  else
    text = table.concat(vim.api.nvim_buf_get_text(buf, s[1] - 1, scol, e[1] - 1, ecol, {}), '\n')
  end
  local uri = uri_of(buf)
  local range = M.convert_range(call, uri, {
    start = { line = s[1] - 1, character = scol },
    ['end'] = { line = e[1] - 1, character = ecol },
  }, 'utf-8', call.enc)
  return { selection = { uri = uri, range = range, text = text } }
end

for _, name in ipairs({ 'definition', 'references', 'hover', 'documentSymbols', 'workspaceSymbols' }) do
  tools[name] = function(args, call)
    return require('acp_lsp.editor_lsp')[name](args, call)
  end
end

function tools.openDiff(args, call)
  return require('acp_lsp.editor_diff').open(args, call)
end

--- The request handler; runs in the coroutine Neovim gives every server request.
function M.handle(_, params, ctx)
  local tool = params and params.tool
  local fn = tools[tool]
  if not fn then
    return nil, vim.lsp.rpc_response_error(codes.InvalidParams, 'unknown editor tool: ' .. tostring(tool))
  end
  local co, is_main = coroutine.running()
  if not co or is_main then
    return nil, vim.lsp.rpc_response_error(codes.InternalError, 'not called in a server request')
  end
  local client = ctx and vim.lsp.get_client_by_id(ctx.client_id)
  ---@type acp_lsp.EditorToolCall
  local call = {
    session_id = params.sessionId,
    enc = client and client.offset_encoding or 'utf-16',
    deadline = vim.uv.now() + budget_ms(),
    lines = {},
  }
  local args = type(params.arguments) == 'table' and params.arguments or {}
  local ok, result, why = pcall(fn, args, call)
  local hidden = call.hidden
  if hidden and vim.api.nvim_buf_is_valid(hidden) then
    if not vim.bo[hidden].modified and #vim.fn.win_findbuf(hidden) == 0 then
      vim.cmd('silent! bunload ' .. hidden) -- unloaded again, as it was (a hidden buffer stays unlisted)
    end
  end
  if not ok then
    require('acp_lsp.log').add('warn', ('editor tool %s failed: %s'):format(tool, result))
    return nil, vim.lsp.rpc_response_error(codes.InternalError, tostring(result))
  end
  if result == nil then
    return nil, vim.lsp.rpc_response_error(codes.RequestFailed, why or (tool .. ' failed'))
  end
  return result
end

--- A session stopped its turn: its open diffs are answered `reject`.
function M.on_status(params)
  if package.loaded['acp_lsp.editor_diff'] then
    require('acp_lsp.editor_diff').on_status(params)
  end
end

return M
