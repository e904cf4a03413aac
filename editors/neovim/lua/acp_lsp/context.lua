--- Context for the next prompt of a session: files and folders, the selection, a file's
--- diagnostics, the symbol under the cursor, an image. Each becomes a ContentBlock in
--- prompt.attachments[session] with a label; the list is shown above the prompt input and
--- entries can be removed before sending.
local sessions = require('acp_lsp.sessions')
local notify = require('acp_lsp.log').notify

local M = {}

local IMAGE_TYPES =
  { png = 'image/png', jpg = 'image/jpeg', jpeg = 'image/jpeg', gif = 'image/gif', webp = 'image/webp' }
local MAX_IMAGE_BYTES = 20 * 1024 * 1024

local function prompt()
  return require('acp_lsp.chat.prompt')
end

--- Add an attachment; a second one with the same label replaces the first.
---@param session_id string
---@param label string
---@param block table
function M.add(session_id, label, block)
  local list = prompt().attachments[session_id] or {}
  prompt().attachments[session_id] = list
  for i, a in ipairs(list) do
    if a.label == label then
      table.remove(list, i)
      break
    end
  end
  table.insert(list, { label = label, block = block })
  prompt().refresh_winbar(session_id)
end

---@param session_id string
---@param index integer? nil: all
function M.remove(session_id, index)
  local list = prompt().attachments[session_id]
  if not list then
    return
  end
  if index then
    table.remove(list, index)
  else
    prompt().attachments[session_id] = nil
  end
  prompt().refresh_winbar(session_id)
end

--- Pick an attachment to remove.
---@param session_id string
function M.pick_remove(session_id)
  local list = prompt().attachments[session_id] or {}
  if #list == 0 then
    return notify('nothing attached')
  end
  local items = vim.list_extend({ { label = 'all' } }, vim.deepcopy(list))
  vim.ui.select(items, {
    prompt = 'Remove from the prompt',
    kind = 'acp_attachment',
    format_item = function(a)
      return a.label
    end,
  }, function(_, idx)
    if idx == 1 then
      M.remove(session_id)
    elseif idx then
      M.remove(session_id, idx - 1)
    end
  end)
end

--- A file or folder, as a resource_link (the agent reads it itself).
---@param session_id string
---@param path string
---@return boolean
function M.add_path(session_id, path)
  local session = sessions.by_id[session_id]
  local abs = vim.fs.normalize(vim.fn.fnamemodify(path, ':p')):gsub('/$', '')
  local stat = vim.uv.fs_stat(abs)
  if not stat then
    notify(('no such file or folder: %s'):format(path), vim.log.levels.WARN)
    return false
  end
  local rel = vim.fs.relpath and session and vim.fs.relpath(session.cwd or '', abs) or nil
  local name = rel or vim.fn.fnamemodify(abs, ':~:.')
  local dir = stat.type == 'directory'
  M.add(session_id, name .. (dir and '/' or ''), {
    type = 'resource_link',
    uri = vim.uri_from_fname(abs),
    name = name,
    mimeType = dir and 'inode/directory' or nil,
  })
  return true
end

local SEVERITY = { 'error', 'warning', 'info', 'hint' }

--- The current diagnostics of a buffer, as an embedded text resource.
---@param session_id string
---@param buf integer
function M.add_diagnostics(session_id, buf)
  local fname = vim.api.nvim_buf_get_name(buf)
  local short = vim.fn.fnamemodify(fname, ':~:.')
  local lines = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local src = d.source and (' [' .. d.source .. ']') or ''
    table.insert(
      lines,
      ('%s:%d:%d: %s: %s%s'):format(short, d.lnum + 1, d.col + 1, SEVERITY[d.severity] or '?', d.message, src)
    )
  end
  if #lines == 0 then
    return notify(('no diagnostics in %s'):format(short))
  end
  M.add(session_id, ('diagnostics %s (%d)'):format(short, #lines), {
    type = 'resource',
    resource = {
      uri = vim.uri_from_fname(fname) .. '#diagnostics',
      text = table.concat(lines, '\n'),
      mimeType = 'text/plain',
    },
  })
end

--- Innermost LSP DocumentSymbol containing a 0-based position.
local function lsp_symbol(buf, row, col)
  if #vim.lsp.get_clients({ bufnr = buf, method = 'textDocument/documentSymbol' }) == 0 then
    return nil
  end
  local params = { textDocument = vim.lsp.util.make_text_document_params(buf) }
  local results = vim.lsp.buf_request_sync(buf, 'textDocument/documentSymbol', params, 1000) or {}
  local best
  local function visit(symbols)
    for _, s in ipairs(symbols or {}) do
      local r = s.range or (s.location and s.location.range)
      if
        r
        and (r.start.line < row or (r.start.line == row and r.start.character <= col))
        and (r['end'].line > row or (r['end'].line == row and r['end'].character >= col))
      then
        best = { name = s.name, first = r.start.line, last = r['end'].line }
        visit(s.children)
      end
    end
  end
  for _, res in pairs(results) do
    if type(res.result) == 'table' then
      visit(res.result)
    end
  end
  return best
end

local TS_DEFS =
  { 'function', 'method', 'class', 'struct', 'impl', 'interface', 'module', 'enum', 'type_decl' }

--- Innermost treesitter node that looks like a definition, with its name.
local function ts_symbol(buf, row, col)
  local ok, node = pcall(vim.treesitter.get_node, { bufnr = buf, pos = { row, col } })
  if not ok then
    return nil
  end
  while node do
    local t = node:type()
    for _, k in ipairs(TS_DEFS) do
      if t:find(k, 1, true) and (t:find('definition') or t:find('declaration') or t:find('item')) then
        local name_node = node:field('name')[1]
        local name = name_node and vim.treesitter.get_node_text(name_node, buf) or t
        local sr, _, er = node:range()
        return { name = name, first = sr, last = er }
      end
    end
    node = node:parent()
  end
end

--- The symbol under the cursor (LSP documentSymbol, else treesitter) with its text.
---@param session_id string
---@param buf integer
---@param win integer
function M.add_symbol(session_id, buf, win)
  local cur = vim.api.nvim_win_get_cursor(win)
  local row, col = cur[1] - 1, cur[2]
  local sym = lsp_symbol(buf, row, col) or ts_symbol(buf, row, col)
  if not sym then
    return notify(
      'no symbol under the cursor (needs a language server or a treesitter parser)',
      vim.log.levels.WARN
    )
  end
  prompt().attach_range(session_id, buf, sym.first + 1, sym.last + 1, 'symbol ' .. sym.name)
end

--- An image file, as an ACP image block, when the agent accepts images.
---@param session_id string
---@param path string
---@return boolean
function M.add_image(session_id, path)
  local session = sessions.by_id[session_id]
  local caps = session and session.prompt_capabilities or {}
  if caps.image ~= true then
    notify(
      ('%s does not accept images (its promptCapabilities.image is not set)'):format(
        session and session.agent or 'the agent'
      ),
      vim.log.levels.WARN
    )
    return false
  end
  local abs = vim.fn.fnamemodify(path, ':p')
  local mime = IMAGE_TYPES[(abs:match('%.(%w+)$') or ''):lower()]
  if not mime then
    notify(('not an image (png, jpeg, gif, webp): %s'):format(path), vim.log.levels.WARN)
    return false
  end
  local stat = vim.uv.fs_stat(abs)
  if not stat or stat.size > MAX_IMAGE_BYTES then
    notify(
      ('cannot attach %s: %s'):format(path, stat and 'larger than 20 MB' or 'no such file'),
      vim.log.levels.WARN
    )
    return false
  end
  local f = assert(io.open(abs, 'rb'))
  local data = f:read('*a')
  f:close()
  M.add(session_id, 'image ' .. vim.fn.fnamemodify(abs, ':t'), {
    type = 'image',
    mimeType = mime,
    data = vim.base64.encode(data),
    uri = vim.uri_from_fname(abs),
  })
  return true
end

--- :Acp add {file|selection|diagnostics|symbol|image} [path]
---@param what string?
---@param arg string?
---@param range? {buf: integer, first: integer, last: integer}
function M.command(what, arg, range)
  local session = sessions.current()
  if not session then
    return notify('no session: :Acp new first', vim.log.levels.WARN)
  end
  -- The buffer the user works in, even when the command runs from the chat.
  local win = vim.api.nvim_get_current_win()
  if vim.b.acp_session_id then
    win = vim.fn.win_getid(vim.fn.winnr('#'))
  end
  local buf = vim.api.nvim_win_get_buf(win)
  if what == 'file' or what == 'folder' then
    M.add_path(session.id, arg and arg ~= '' and arg or vim.api.nvim_buf_get_name(buf))
  elseif what == 'selection' then
    if not range then
      return notify("select lines first (:'<,'>Acp add selection)", vim.log.levels.WARN)
    end
    prompt().attach_range(session.id, range.buf, range.first, range.last)
  elseif what == 'diagnostics' then
    M.add_diagnostics(session.id, buf)
  elseif what == 'symbol' then
    M.add_symbol(session.id, buf, win)
  elseif what == 'image' then
    if arg and arg ~= '' then
      return M.add_image(session.id, arg)
    end
    vim.ui.input({ prompt = 'Image file: ', completion = 'file' }, function(input)
      if input and input ~= '' then
        M.add_image(session.id, input)
      end
    end)
  else
    notify('usage: :Acp add file|folder|selection|diagnostics|symbol|image [path]', vim.log.levels.WARN)
  end
end

return M
