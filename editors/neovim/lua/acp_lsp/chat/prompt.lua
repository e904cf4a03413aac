--- The prompt input: send with <CR> (normal) or <C-s> (insert), complete `/commands`
--- (from available_commands_update) and `@files`, attach the visual selection.
local sessions = require('acp_lsp.sessions')

local M = {}

--- Context waiting to go with the next prompt of a session: ContentBlocks + labels.
---@type table<string, {block: table, label: string}[]>
M.attachments = {}

local MAX_FILES = 5000
local SKIP_DIRS = { ['.git'] = true, node_modules = true, ['.venv'] = true, __pycache__ = true }

--- Files under a directory, relative, breadth-first and bounded.
---@param root string
---@return string[]
function M.list_files(root)
  local files = {}
  for name, kind in
    vim.fs.dir(root, {
      depth = 8,
      skip = function(dir)
        return not SKIP_DIRS[vim.fs.basename(dir)]
      end,
    })
  do
    if kind == 'file' or kind == 'directory' then
      table.insert(files, kind == 'directory' and (name .. '/') or name)
      if #files >= MAX_FILES then
        break
      end
    end
  end
  table.sort(files)
  return files
end

local function session_of(buf)
  local id = vim.b[buf or 0].acp_session_id
  return id and sessions.by_id[id] or nil
end

--- omnifunc of the prompt buffer.
---@param findstart integer
---@param base string
---@return integer|table
function M.omnifunc(findstart, base)
  local line = vim.api.nvim_get_current_line()
  local col = vim.api.nvim_win_get_cursor(0)[2]
  if findstart == 1 then
    local before = line:sub(1, col)
    local start = before:find('[/@][^%s]*$')
    if not start then
      return -3
    end
    return start - 1
  end
  local session = session_of(0)
  local items = {}
  if vim.startswith(base, '/') then
    for _, cmd in ipairs(session and session.commands or {}) do
      local word = '/' .. cmd.name
      if vim.startswith(word, base) then
        local hint = cmd.input and cmd.input.hint and (' ' .. cmd.input.hint) or ''
        table.insert(items, {
          word = word,
          abbr = word .. hint,
          menu = cmd.description,
          info = cmd.description,
        })
      end
    end
  elseif vim.startswith(base, '@') then
    local root = session and session.cwd or vim.fn.getcwd()
    local needle = base:sub(2):lower()
    for _, file in ipairs(M.list_files(root)) do
      if needle == '' or file:lower():find(needle, 1, true) then
        table.insert(items, { word = '@' .. file, menu = '[file]' })
      end
    end
  end
  return items
end

--- A resource_link for an `@path` mention of an existing file or directory.
---@param path string as written (relative to cwd or absolute)
---@param cwd string?
---@return table?
local function mention_link(path, cwd)
  local abs = vim.startswith(path, '/') and path or ((cwd or vim.fn.getcwd()) .. '/' .. path)
  abs = vim.fs.normalize(abs)
  local stat = vim.uv.fs_stat(abs)
  if not stat then
    return nil
  end
  return {
    type = 'resource_link',
    uri = vim.uri_from_fname(abs),
    name = path,
    mimeType = stat.type == 'directory' and 'inode/directory' or nil,
  }
end

--- Build the ContentBlocks of a prompt: its text, `@file` mentions as resource_link, and
--- attached context (e.g. a selection) as embedded resources.
---@param text string
---@param cwd string?
---@param attachments {block: table, label: string}[]?
---@return table[]
function M.build_prompt(text, cwd, attachments)
  local blocks = { { type = 'text', text = text } }
  local seen = {}
  for token in text:gmatch('%S+') do
    local path = token:match('^@(.+)$')
    path = path and path:gsub('[,.;:!?)]+$', '')
    local link = path and path ~= '' and mention_link(path, cwd)
    if link and not seen[link.uri] then
      seen[link.uri] = true
      table.insert(blocks, link)
    end
  end
  for _, a in ipairs(attachments or {}) do
    table.insert(blocks, a.block)
  end
  return blocks
end

--- Attach lines of a buffer as an embedded resource to the next prompt.
---@param session_id string
---@param buf integer
---@param first integer 1-based
---@param last integer 1-based, inclusive
---@param what string? label prefix (e.g. "symbol name")
function M.attach_range(session_id, buf, first, last, what)
  local fname = vim.api.nvim_buf_get_name(buf)
  local lines = vim.api.nvim_buf_get_lines(buf, first - 1, last, false)
  local uri = fname ~= '' and vim.uri_from_fname(fname) or ('untitled:' .. buf)
  local ft = vim.bo[buf].filetype
  local list = M.attachments[session_id] or {}
  M.attachments[session_id] = list
  table.insert(list, {
    label = (what and (what .. ' ') or '')
      .. ('%s:%d-%d'):format(vim.fn.fnamemodify(fname, ':~:.'), first, last),
    block = {
      type = 'resource',
      resource = {
        uri = ('%s#L%d:%d'):format(uri, first, last),
        text = table.concat(lines, '\n'),
        mimeType = ft ~= '' and ('text/x-' .. ft) or 'text/plain',
      },
    },
  })
  M.refresh_winbar(session_id)
end

---@param session_id string
function M.refresh_winbar(session_id)
  local view = require('acp_lsp.chat').views[session_id]
  if not view then
    return
  end
  local wins = vim.fn.win_findbuf(view.input)
  for _, win in ipairs(wins) do
    M.setup_window(win, session_id)
  end
  if #wins == 0 then
    M.show_attachments(
      view.input,
      vim.tbl_map(function(a)
        return a.label
      end, M.attachments[session_id] or {})
    )
  end
end

--- Send what the prompt buffer holds.
---@param buf integer?
function M.submit(buf)
  buf = buf or vim.api.nvim_get_current_buf()
  local session = session_of(buf)
  if not session then
    return
  end
  local text = vim.trim(table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n'))
  if text == '' then
    return
  end
  if require('acp_lsp.actions').send(session, text, M.attachments[session.id]) then
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, {})
    M.attachments[session.id] = nil
    M.refresh_winbar(session.id)
  end
end

---@param buf integer
---@param session_id string
function M.setup_buffer(buf, session_id)
  vim.bo[buf].omnifunc = "v:lua.require'acp_lsp.chat.prompt'.omnifunc"
  local function map(mode, lhs, rhs, desc)
    vim.keymap.set(mode, lhs, rhs, { buffer = buf, silent = true, desc = desc })
  end
  map('n', '<CR>', function()
    M.submit(buf)
  end, 'Send the prompt')
  map('i', '<C-s>', function()
    vim.cmd('stopinsert')
    M.submit(buf)
  end, 'Send the prompt')
  map('n', '<C-c>', function()
    require('acp_lsp.actions').cancel()
  end, 'Cancel the turn')
  map('n', 'q', function()
    require('acp_lsp.chat').close()
  end, 'Close the chat')
  map('n', 'gq', function()
    require('acp_lsp.queue').pick()
  end, 'The prompts waiting their turn: send now, edit or remove one')
  map('n', 'X', function()
    require('acp_lsp.context').pick_remove(session_id)
  end, 'Remove an attachment')
  -- Completion opens by itself on `/` at the start of the prompt and on `@` after a space.
  vim.api.nvim_create_autocmd('InsertCharPre', {
    buffer = buf,
    callback = function()
      local char = vim.v.char
      if char ~= '/' and char ~= '@' then
        return
      end
      local col = vim.api.nvim_win_get_cursor(0)[2]
      local row = vim.api.nvim_win_get_cursor(0)[1]
      local before = vim.api.nvim_get_current_line():sub(1, col)
      local at_start = char == '/' and row == 1 and before == ''
      local after_space = char == '@' and (before == '' or before:match('%s$') ~= nil)
      if at_start or after_space then
        vim.schedule(function()
          if vim.fn.mode() == 'i' and vim.fn.pumvisible() == 0 then
            vim.api.nvim_feedkeys(vim.keycode('<C-x><C-o>'), 'n', false)
          end
        end)
      end
    end,
  })
  vim.b[buf].acp_session_id = session_id
end

---@param win integer
---@param session_id string
function M.setup_window(win, session_id)
  local wo = vim.wo[win][0]
  wo.wrap = true
  wo.number = false
  wo.relativenumber = false
  wo.signcolumn = 'no'
  local labels = {}
  for _, a in ipairs(M.attachments[session_id] or {}) do
    table.insert(labels, a.label)
  end
  local bar = 'Prompt: <CR> send · / commands · @ files'
  if #labels > 0 then
    bar = bar .. ' · 📎 ' .. #labels .. ' attached (X removes)'
  end
  wo.winbar = bar:gsub('%%', '%%%%')
  M.show_attachments(vim.api.nvim_win_get_buf(win), labels)
end

local ns = vim.api.nvim_create_namespace('acp_lsp.attachments')

--- The attachment list as virtual lines above the prompt text.
---@param buf integer
---@param labels string[]
function M.show_attachments(buf, labels)
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  if #labels == 0 then
    return
  end
  local virt = {}
  for i, label in ipairs(labels) do
    table.insert(virt, { { ('📎 %d. %s'):format(i, label), 'Comment' } })
  end
  vim.api.nvim_buf_set_extmark(buf, ns, 0, 0, { virt_lines = virt, virt_lines_above = true })
end

return M
